"""What the trainability study's front end costs in training: the Keras engine's frames/s with each
front-end candidate against the remedy it builds on, both agents, in one invocation.

    .venv/bin/python benchmarks/front_end_cost.py [--presets bridge-small bridge-medium]
        [--agents relational simplicial] [--seconds 15] [--markdown FILE] [--json FILE]

For each (preset, agent) and each candidate of studies/trainability/front-end-plan.md that changes
the model's cost (the remedy, `conv_64`, `conv_128`; `centre_pixels` alone costs nothing), with
the preset's own recipe, 64 boards and seed 1, `experiments.engine_throughput.engine_figures`
measures the engine's frames/s (acting and learning for `--seconds` after a compiling iteration)
and the bare model's per-frame limit (one learner step and one acting forward pass, each the
median of `--repeats`). Each figure is also given as a ratio to the remedy's on the same preset and
agent, measured in the same invocation. Keep the machine otherwise idle while it runs; its wall
time is about presets x agents x 3 x (`--seconds` + 30 s).
"""

import argparse
import sys

MEASURED = ("remedy", "remedy+centre_pixels+conv_64", "remedy+centre_pixels+conv_128")


def markdown(results, backend):
    lines = [
        f"| preset | agent | candidate | frames/s ({backend}) | / remedy | learner step (ms) | "
        "acting pass (ms) | model limit frames/s | limit / remedy's |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['preset']} | {r['agent']} | {r['candidate']} | {r['frames_per_s']:,.0f} | "
            f"{r['frames_over_remedy']:.2f} | {r['learn_ms']:.1f} | {r['act_ms']:.1f} | "
            f"{r['limit_frames_per_s']:,.0f} | {r['limit_over_remedy']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    from keras_simplicial.agents.experiments.benchmark_files import add_output_arguments
    from keras_simplicial.agents.experiments.engine_throughput import (
        add_engine_arguments,
        benchmark_arguments,
        engine_benchmark,
        engine_figures,
    )
    from keras_simplicial.agents.imitation.trainability_study import candidate_config
    from keras_simplicial.agents.model.model_config import with_architecture_defaults

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_engine_arguments(parser, presets=["bridge-small", "bridge-medium"], seconds=15.0)
    parser.add_argument("--repeats", type=int, default=10)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be > 0 and --repeats a positive integer.")

    def measure(preset, agent):
        results, remedy = [], None
        for candidate in MEASURED:
            # The study's candidates change the architecture's defaults, not a preset's model.
            model = with_architecture_defaults(candidate_config(candidate))
            arguments = benchmark_arguments(preset, agent, model)
            figures = engine_figures(arguments, args.seconds, args.repeats)
            remedy = remedy or figures
            results.append(
                {
                    **figures,
                    "candidate": candidate,
                    "frames_over_remedy": figures["frames_per_s"] / remedy["frames_per_s"],
                    "limit_over_remedy": (
                        figures["limit_frames_per_s"] / remedy["limit_frames_per_s"]
                    ),
                }
            )
        return results

    engine_benchmark(args, measure, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
