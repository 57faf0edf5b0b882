"""Should the Keras engine act in a second thread while it learns? Its frames/s taking turns (as
it runs) against overlapped, for both agents on the presets, in one invocation.

    .venv/bin/python benchmarks/engine_overlap.py [--presets easy bridge-small paper]
        [--agents relational simplicial] [--seconds 15] [--rounds 2] [--markdown FILE]

For each (preset, agent), with the preset's own recipe and 64 boards, seed 1, Keras on this
process's backend (TensorFlow unless KERAS_BACKEND says otherwise):
`experiments.engine_throughput.overlap_figures` compiles one engine, then alternates `--rounds`
windows of `--seconds` taking turns (act one unroll, then learn on it) and overlapped (a second
thread acts the next unroll while the learner trains on the last). The ratio compares two figures
of the same engine, measured back to back. Keep the machine otherwise idle; the wall time is about
(presets x agents) x (2 x rounds x seconds + 30 s).
"""

import argparse
import sys


def markdown(results, backend):
    lines = [
        f"| preset | agent | taking turns frames/s ({backend}) | overlapped frames/s | "
        "overlapped / taking turns | each round (turns / overlapped) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        rounds = "; ".join(
            f"{x['turns_frames_per_s']:,.0f} / {x['overlap_frames_per_s']:,.0f}"
            for x in r["rounds"]
        )
        lines.append(
            f"| {r['preset']} | {r['agent']} | {r['turns_frames_per_s']:,.0f} | "
            f"{r['overlap_frames_per_s']:,.0f} | {r['overlap_over_turns']:.2f} | {rounds} |"
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
        overlap_figures,
    )

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_engine_arguments(parser, presets=["easy", "bridge-small", "paper"], seconds=15.0)
    parser.add_argument("--rounds", type=int, default=2)
    add_model_argument(parser)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1:
        parser.error(
            f"--seconds must be positive and --rounds at least 1, got {args.seconds} and "
            f"{args.rounds}."
        )

    def measure(preset, agent):
        arguments = benchmark_arguments(preset, agent, args.model_config)
        return [overlap_figures(arguments, args.seconds, args.rounds)]

    engine_benchmark(args, measure, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
