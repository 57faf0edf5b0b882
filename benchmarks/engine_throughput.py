"""Frames/s of the Keras engine against RLlib's old stack, and of each against the limit the bare
model sets, for both agents on the presets, in one invocation.

    .venv/bin/python benchmarks/engine_throughput.py [--presets easy bridge-small paper]
        [--agents relational simplicial] [--seconds 30] [--warmup-s 20] [--markdown FILE]

For each (preset, agent), with the preset's own recipe and 64 boards, seed 1:

- the Keras engine (`--engine keras`, Keras on this process's backend: TensorFlow unless
  KERAS_BACKEND says otherwise), in this process (`experiments.engine_throughput.engine_figures`):
  one act and learn to compile, then acting and learning for `--seconds`; its frames/s is the
  environment steps over that wall time;
- RLlib's old stack (`--engine rllib-old`), in its own process (`keras-simplicial train`, no
  checkpoint and no greedy check inside the window): the median of its metrics.csv's
  `wall_frames_per_s` over the rows after `--warmup-s`;
- the per-frame limit of the bare model (`engine_figures`): a frame costs `num_epochs` learner
  steps' share of a train batch (forward, backward and the optimizer, on `train_batch_size`
  steps) and one acting forward pass's share of the 64 boards, both timed on the engine's own
  compiled functions on fixed inputs (median of `--repeats`): limit = 1 / (num_epochs * t_learn /
  train_batch_size + t_act / 64). Each engine's figure is also given as a fraction of it.

The ratio engine / old stack compares two figures of the same invocation. Keep the machine
otherwise idle while it runs; its wall time is about (presets x agents) x (2 x `--seconds` + 60 s).
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def old_stack_frames_per_s(preset, agent, model_config, seconds, warmup_s, workdir):
    """The median `wall_frames_per_s` of an old-stack run of `model_config` after `warmup_s`."""
    from keras_simplicial.agents.experiments.engine_throughput import BENCHMARK_BOARDS
    from keras_simplicial.agents.training.run_directory import RunDirectory

    out = Path(workdir) / f"rllib-old-{preset}-{agent}"
    command = [
        sys.executable, "-m", "keras_simplicial_cli", "train", "--preset", preset, "--agent",
        agent, "--engine", "rllib-old", "--model-config", json.dumps(model_config),
        "--num-envs", str(BENCHMARK_BOARDS), "--seed", "1",
        "--stop-seconds", str(seconds + warmup_s), "--stop-timesteps", "1000000000",
        "--checkpoint-every", "1000000", "--check-episodes", "0", "--progress", "none",
        "--out", str(out),
    ]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    rows = RunDirectory(out).read_metrics()
    # The first row after the warm-up spans part of it: the rows after that.
    kept = [row for row in rows if float(row["time_s"]) > warmup_s][1:]
    values = [float(row["wall_frames_per_s"]) for row in kept if row["wall_frames_per_s"]]
    if not values:
        raise RuntimeError(f"{out}: no metrics row after the {warmup_s} s warm-up.")
    return statistics.median(values)


def markdown(results, backend):
    lines = [
        f"| preset | agent | Keras engine ({backend}) frames/s | old stack frames/s | "
        "engine / old stack | model limit frames/s | engine / limit | old stack / limit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['preset']} | {r['agent']} | {r['engine']:,.0f} | {r['old_stack']:,.0f} | "
            f"{r['engine'] / r['old_stack']:.2f} | {r['limit']:,.0f} | "
            f"{r['engine'] / r['limit']:.2f} | {r['old_stack'] / r['limit']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    from keras_simplicial.agents.experiments.benchmark_files import (
        add_model_argument,
        add_output_arguments,
    )
    from keras_simplicial.agents.experiments.engine_throughput import (
        add_engine_arguments,
        benchmark_arguments,
        engine_benchmark,
        engine_figures,
    )

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_engine_arguments(parser, presets=["easy", "bridge-small", "paper"], seconds=30.0)
    parser.add_argument("--warmup-s", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=10)
    add_model_argument(parser)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.warmup_s < 0 or args.repeats < 1:
        parser.error(
            f"--seconds must be > 0, --warmup-s >= 0 and --repeats a positive integer, got "
            f"{args.seconds}, {args.warmup_s} and {args.repeats}."
        )

    with tempfile.TemporaryDirectory() as workdir:

        def measure(preset, agent):
            arguments = benchmark_arguments(preset, agent, args.model_config)
            figures = engine_figures(arguments, args.seconds, args.repeats)
            old = old_stack_frames_per_s(
                preset, agent, args.model_config, args.seconds, args.warmup_s, workdir
            )
            return [
                {**figures, "engine": figures["frames_per_s"], "old_stack": old,
                 "limit": figures["limit_frames_per_s"]}
            ]  # fmt: skip

        engine_benchmark(args, measure, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
