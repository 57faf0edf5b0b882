"""Every command and Python example of the README works as written (run with tiny sizes).

The commands are taken from the README itself: its bash blocks, and the `keras-simplicial ...` and
`python -m ...` commands in its text. Each one parses; the slow test runs them all, in order, in
an empty directory, with arguments appended that shrink them (fewer steps, episodes and boards):
the last value of an option wins, so the README's own arguments are the ones exercised otherwise.
"""

import contextlib
import glob
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import keras_simplicial_cli as cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PLACEHOLDER = re.compile(r"(?<![\w-])(?!IMPALA\b)[A-Z][A-Z_]*\b")


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def readme_commands():
    """The shell commands of the README, in order (comments dropped, continuations joined)."""
    commands = []
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip()
            if line:
                commands.append(" ".join(line.split()))
    for span in re.findall(r"`((?:keras-simplicial|python -m|echo) [^`]+)`", README):
        # Spans with placeholders (`keras-simplicial policy-map RUN --seed S`) describe commands.
        if not PLACEHOLDER.search(span):
            commands.append(" ".join(span.split()))
    return commands


def keras_simplicial_commands():
    """(README line, argv) of each `keras-simplicial` command; `...` elides arguments."""
    found = []
    for line in readme_commands():
        if line.startswith("keras-simplicial ") and " ... " not in line:
            found.append((line, shlex.split(line)[1:]))
    return found


def test_the_readme_has_the_commands_this_test_runs():
    commands = readme_commands()
    assert commands[:2] == ["make train", "make test"]  # the first screen's two commands
    names = {argv[0] for _, argv in keras_simplicial_commands()}
    assert names >= {
        "train",
        "evaluate",
        "plot",
        "visualize",
        "explain",
        "probe",
        "plot-types",
        "policy-map",
        "play",
    }


@pytest.mark.parametrize(
    "line, argv",
    keras_simplicial_commands(),
    ids=[line[:60] for line, _ in keras_simplicial_commands()],
)
def test_each_command_parses(line, argv):
    cli.build_parser().parse_args(argv)


def test_make_train_runs_a_command_that_parses():
    dry_run = subprocess.run(
        ["make", "-n", "train"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    (line,) = [
        line
        for line in dry_run.replace("\\\n", " ").splitlines()
        if "keras-simplicial train" in line
    ]
    cli.build_parser().parse_args(shlex.split(line.split("keras-simplicial", 1)[1]))


# Appended to each README command in the slow test: tiny sizes, the README's arguments otherwise.
TINY_RUN = [
    "--stop-timesteps",
    "240",
    "--num-envs-per-env-runner",
    "8",
    "--evaluate",
    "8",
    "--checkpoint-every",
    "1",
    "--progress",
    "none",
    "--env-config",
    json.dumps({"max_solution_length": 1, "max_steps": 20}),
    "--config",
    json.dumps(
        {"train_batch_size": 80, "rollout_fragment_length": 10, "min_time_s_per_iteration": 0}
    ),
    "--model-config",
    json.dumps({"jit_compile": False}),
]
# Long episodes for the step the README draws: no bridge, nothing fatal, three boxes to open.
LONG_EPISODE = [
    "--env-config",
    json.dumps({"max_solution_length": 3, "bridge_probability": 0.0, "max_steps": 20}),
]
TINY = {
    "train": TINY_RUN,
    "train --resume": ["--stop-timesteps", "400", "--progress", "none"],
    "evaluate": ["--episodes", "16", "--num-envs", "8"],
    "visualize": ["--max-steps", "20", *LONG_EPISODE],
    "explain": ["--max-steps", "20"],
    "probe": ["--episodes", "8", "--num-envs", "4", "--max-steps", "20"],
    "imitate": ["--episodes", "20", "--epochs", "1", "--games", "8"],
}


@pytest.mark.slow
def test_every_readme_command_and_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for line, argv in keras_simplicial_commands():
        command = "train --resume" if argv[:2] == ["train", "--resume"] else argv[0]
        argv = [*argv, *TINY.get(command, [])]
        _create_what_the_command_reads(argv)
        argv = [match for word in argv for match in (sorted(glob.glob(word)) or [word])]
        if command == "play":
            monkeypatch.setattr(sys, "stdin", io.StringIO("l l j q"))
        assert cli.main(argv) == 0, (line, capsys.readouterr().err)
        capsys.readouterr()
    for line in readme_commands():
        if "python -m" in line:
            # With the environment's Python first on PATH, as after `source .venv/bin/activate`.
            environment = {
                **os.environ,
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            }
            result = subprocess.run(
                line,
                shell=True,
                input="q",
                capture_output=True,
                text=True,
                timeout=300,
                env=environment,
            )
            assert result.returncode == 0 and "episodes" in result.stdout, (line, result.stderr)

    namespace = {}
    for block in blocks("python"):
        # Tiny sizes: no rollout worker processes for the IMPALA example.
        code = block.replace("num_env_runners=4", "num_env_runners=0")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "README.md", "exec"), namespace)
    namespace["algo"].stop()
    import ray

    ray.shutdown()


def _create_what_the_command_reads(argv):
    """Runs and reports the README names without making them first: copies of the first run."""
    first_run = Path("runs/s1")
    for word in argv:
        if (
            word.startswith("runs/")
            and "*" not in word
            and not Path(word).exists()
            and first_run.exists()
            and argv[0] != "train"
        ):
            shutil.copytree(first_run, word)
        if word.startswith("runs/") and "*" in word and not glob.glob(word):
            shutil.copytree(first_run, word.replace("*", "1"))
        if word.endswith(".json") and not Path(word).exists() and Path("a.json").exists():
            shutil.copy("a.json", word)
