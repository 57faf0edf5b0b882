"""Milliseconds of the Keras engine's learner step and acting pass on each Keras backend: which
backend the engine should run on this machine.

    .venv/bin/python benchmarks/learner_step_backends.py [--preset easy]
        [--agents relational simplicial] [--backends tensorflow jax torch] [--repeats 20]
        [--torch-threads 0 1] [--model-config pre-front-end] [--markdown FILE] [--json FILE]

For each backend, in a process of its own (Keras chooses its backend once per process), and each
agent: the engine (`KerasIMPALA`) on the preset's recipe with `--model-config`'s model (by
default the model of the committed figures), 64 boards, seed 1, compiled as a run
compiles it (XLA on TensorFlow, `jax.jit` on JAX, eager on PyTorch: `TorchLearnerStep`), PyTorch
once with each of `--torch-threads` intra-op threads (0: its default, one per core, whose threads
wait on each other where other processes hold the cores). After one act and learn,
`experiments.engine_throughput.model_step_seconds` times one learner step on one train batch
(forward, backward and the optimizer) and one acting forward pass of the 64 boards (medians of
`--repeats`). The model limit is the frames/s those allow (as `benchmarks/engine_throughput.py`
computes it): 1 / (num_epochs x t_learn / train_batch_size + t_act / 64). Keep the machine
otherwise idle; compare backends within one invocation.
"""

import argparse
import json
import os
import subprocess
import sys

from keras_simplicial.agents.experiments.benchmark_files import (
    add_model_argument,
    add_output_arguments,
    write_outputs,
)

BOARDS = 64


def measure(preset, agents, model_config, repeats, torch_threads=0):
    """The figures of this process's backend, one dict per agent of `model_config` (merged over
    the preset's model); on PyTorch with `torch_threads` threads (0: PyTorch's default, one per
    core)."""
    import keras

    backend = keras.backend.backend()
    if backend == "torch":
        import torch

        if torch_threads:
            torch.set_num_threads(torch_threads)
        threads = torch.get_num_threads()
        backend = f"torch ({threads} thread{'s' if threads > 1 else ''})"

    from keras_simplicial.agents.experiments.engine_throughput import model_step_seconds
    from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA
    from keras_simplicial.agents.training.run_arguments import RunArguments

    figures = []
    for agent in agents:
        arguments = RunArguments.from_preset(
            preset, agent, engine="keras", seed=1, num_envs_per_env_runner=BOARDS,
            model_overrides=model_config, overrides={"min_time_s_per_iteration": 0},
        )  # fmt: skip
        engine = KerasIMPALA(arguments)
        batch = engine.act()
        engine.learn(batch)
        learn_s, act_s = model_step_seconds(engine, batch, repeats)
        size, epochs = int(engine.settings["train_batch_size"]), int(engine.settings["num_epochs"])
        figures.append(
            {
                "backend": backend,
                "agent": agent,
                "train_batch_size": size,
                "learn_ms": 1e3 * learn_s,
                "act_ms": 1e3 * act_s,
                "limit_frames_per_s": 1.0 / (epochs * learn_s / size + act_s / BOARDS),
            }
        )
        engine.env.close()
    return figures


def markdown(results):
    lines = [
        "| agent | backend | learner step ms (one train batch) | acting pass ms (64 boards) | "
        "model limit frames/s |",
        "|---|---|---|---|---|",
    ]
    for r in sorted(results, key=lambda r: r["agent"]):
        lines.append(
            f"| {r['agent']} | {r['backend']} | {r['learn_ms']:,.0f} | {r['act_ms']:,.1f} | "
            f"{r['limit_frames_per_s']:,.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="easy")
    parser.add_argument("--agents", nargs="+", default=["relational", "simplicial"])
    parser.add_argument("--backends", nargs="+", default=["tensorflow", "jax", "torch"])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--torch-threads", nargs="+", type=int, default=[0, 1],
        help="PyTorch's intra-op threads, one measurement each (0: its default, one per core)",
    )  # fmt: skip
    add_model_argument(parser)
    add_output_arguments(parser)
    parser.add_argument("--this-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.this_process:
        figures = measure(
            args.preset, args.agents, args.model_config, args.repeats, args.torch_threads[0]
        )
        print(json.dumps(figures))
        return 0

    runs = [
        (backend, threads)
        for backend in args.backends
        for threads in (args.torch_threads if backend == "torch" else [0])
    ]
    results = []
    for backend, threads in runs:
        environment = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
        command = [
            sys.executable, __file__, "--this-process", "--preset", args.preset,
            "--agents", *args.agents, "--repeats", str(args.repeats),
            "--torch-threads", str(threads), "--model-config", json.dumps(args.model_config),
        ]  # fmt: skip
        done = subprocess.run(command, env=environment, check=True, capture_output=True, text=True)
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        for figure in figures:
            print(json.dumps(figure), flush=True)
        results += figures
    text = markdown(results)
    print(text)
    record = {
        "preset": args.preset,
        "model_config": args.model_config,
        "boards": BOARDS,
        "repeats": args.repeats,
        "results": results,
    }
    write_outputs(args, text, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
