"""Frames/s of both agents on both of RLlib's API stacks, measured back to back in one invocation.

    .venv/bin/python benchmarks/stack_throughput.py [--preset easy] [--seconds 90]
        [--warmup-s 30] [--agents relational simplicial] [--model-config pre-front-end]
        [--markdown FILE]

Each (stack, agent) trains `keras-simplicial train --preset PRESET --api-stack STACK` for
`--seconds` in its own process (Keras chooses its backend once per process: TensorFlow for the old
stack, PyTorch for the new), in a temporary run directory, with the recipe of the stack parity
sweep (`stack_parity.PARITY_CONFIG`), `--model-config`'s model (by default the model of the
committed figures) and each stack's default layout (the driver samples 64
boards; on the old stack beside its learner thread, on the new one in turn with its learner).
From the run's metrics.csv, over the rows after `--warmup-s` (XLA or PyTorch warming up, Ray
starting): the median of RLlib's sampling rate (`frames_per_s`) and of the steps the run really
trained per second, checkpoints and their greedy checks included (`wall_frames_per_s`). The
reference is the old stack's figure of the same agent in the same invocation: the ratio is new
over old. Keep the machine otherwise idle while it runs (about 4 x (`--seconds` + 30 s)).
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from stack_parity import PARITY_CONFIG

from keras_simplicial.agents.training.run_directory import RunDirectory

STACKS = ("old", "new")
AGENTS = ("relational", "simplicial")


def measure(stack, agent, preset, model_config, seconds, warmup_s, workdir):
    """(median sampling frames/s, median wall frames/s) of one training run after `warmup_s`."""
    out = Path(workdir) / f"{stack}-{agent}"
    command = [
        sys.executable,
        "-m",
        "keras_simplicial_cli",
        "train",
        "--preset",
        preset,
        "--agent",
        agent,
        "--api-stack",
        stack,
        "--config",
        json.dumps(PARITY_CONFIG),
        "--model-config",
        json.dumps(model_config),
        "--seed",
        "1",
        "--stop-seconds",
        str(seconds),
        "--stop-timesteps",
        "100000000",
        "--progress",
        "none",
        "--out",
        str(out),
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    rows = [row for row in RunDirectory(out).read_metrics() if float(row["time_s"]) >= warmup_s]
    if not rows:
        raise RuntimeError(
            f"{stack}/{agent}: no metrics row after {warmup_s} s; give more --seconds."
        )

    def median(column):
        values = [float(row[column]) for row in rows if row.get(column) not in ("", None)]
        return statistics.median(values) if values else float("nan")

    return median("frames_per_s"), median("wall_frames_per_s")


def main(argv=None):
    from keras_simplicial.agents.experiments.benchmark_files import (
        add_model_argument,
        add_output_arguments,
        write_outputs,
    )

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="easy")
    parser.add_argument("--agents", nargs="+", default=list(AGENTS), choices=AGENTS)
    parser.add_argument("--seconds", type=int, default=90)
    parser.add_argument("--warmup-s", type=float, default=30.0)
    add_model_argument(parser)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    if args.seconds <= args.warmup_s:
        parser.error(f"--seconds ({args.seconds}) must exceed --warmup-s ({args.warmup_s}).")

    measured = {}
    with tempfile.TemporaryDirectory(prefix="stack-throughput-") as workdir:
        for agent in args.agents:
            for stack in STACKS:
                print(f"{agent} on the {stack} stack ...", flush=True)
                measured[stack, agent] = measure(
                    stack,
                    agent,
                    args.preset,
                    args.model_config,
                    args.seconds,
                    args.warmup_s,
                    workdir,
                )
    lines = [
        f"| agent ({args.preset}) | old stack: sampling / trained frames/s | new stack: sampling /"
        " trained frames/s | new / old (trained) |",
        "|---|---|---|---|",
    ]
    for agent in args.agents:
        (old_sampling, old_wall), (new_sampling, new_wall) = (
            measured["old", agent],
            measured["new", agent],
        )
        lines.append(
            f"| {agent} | {old_sampling:,.0f} / {old_wall:,.0f} | {new_sampling:,.0f} / "
            f"{new_wall:,.0f} | {new_wall / old_wall:.2f} |"
        )
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    results = [
        {"agent": agent, "stack": stack, "sampling_frames_per_s": sampling,
         "trained_frames_per_s": trained}
        for (stack, agent), (sampling, trained) in measured.items()
    ]  # fmt: skip
    record = {
        "preset": args.preset,
        "model_config": args.model_config,
        "seconds": args.seconds,
        "warmup_s": args.warmup_s,
    }
    write_outputs(args, text, {**record, "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
