"""Python code and `keras-simplicial` commands run in a fresh interpreter, for the tests: Keras
chooses its backend once per process (this one's is TensorFlow), and a module missing from a
machine can only be missing from a process that has not imported it yet.

    done = run_python(SCRIPT, str(tmp_path), backend="torch")
    done = run_cli(*tiny_train_command("--engine", "keras", config={...}), cwd=tmp_path,
                   backend="jax", without=("tensorflow", "ray"))
"""

import json
import os
import subprocess
import sys

# The `RunArguments` fields of a Keras-engine run small enough to compile and train in seconds,
# in this process or a fresh one: 8 boards, unrolls of 10, batches of 40 steps, no XLA.
TINY_RUN = {
    "num_envs_per_env_runner": 8,
    "overrides": {"train_batch_size": 40, "min_time_s_per_iteration": 0},
    "model_overrides": {"jit_compile": False},
}

# The finders of the interpreter, asked in turn but for the modules named: for those
# `importlib.util.find_spec` returns None and an import raises ModuleNotFoundError, and they stay
# out of `sys.modules` (Keras and PyTorch probe both).
WITHOUT = """
class Without:
    def __init__(self, finders):
        self.finders = finders
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {names!r}:
            return None
        for finder in self.finders:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                return spec
        return None
    def invalidate_caches(self):
        for finder in self.finders:
            if hasattr(finder, "invalidate_caches"):
                finder.invalidate_caches()
sys.meta_path[:] = [Without(list(sys.meta_path))]
"""


def run_python(code, *args, backend=None, without=(), cwd=None, timeout=600):
    """Runs `code` (as `python -c`, with `args` in `sys.argv[1:]`) in a fresh interpreter, Keras
    on `backend` (None: KERAS_BACKEND unset, Keras's default or the command's own choice), where
    the modules `without` are not installed (`WITHOUT`), as on a machine that lacks them.
    Returns the `CompletedProcess` (text)."""
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    environment.pop("KERAS_BACKEND", None)
    if backend:
        environment["KERAS_BACKEND"] = backend
    preamble = "import sys\n"
    if without:
        preamble += WITHOUT.format(names=tuple(without))
    return subprocess.run(
        [sys.executable, "-c", preamble + code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        cwd=cwd,
    )


def run_cli(*args, **options):
    """Runs `keras-simplicial ARGS` as `run_python` runs code (the same `options`)."""
    command = "from keras_simplicial_cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return run_python(command, *args, **options)


def tiny_train_command(*engine, config, out="run"):
    """The arguments of a `train` that takes seconds: the easy preset's relational agent on 8
    boards, seed 1, the `--config` overrides `config`, a checkpoint every 2 iterations checked
    by 4 greedy episodes, plain progress, into `out` (the last two arguments); `engine`: the
    flags that choose the engine (and any others)."""
    return [
        "train", "--preset", "easy", "--agent", "relational", *engine, "--num-envs", "8",
        "--config", json.dumps(config), "--checkpoint-every", "2", "--check-episodes", "4",
        "--progress", "plain", "--seed", "1", "--out", out,
    ]  # fmt: skip
