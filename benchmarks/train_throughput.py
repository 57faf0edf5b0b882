"""IMPALA training throughput and where its time goes: presets x samplers x agents, one run.

    .venv/bin/python benchmarks/train_throughput.py [--presets easy paper] [--seconds 40]
        [--layouts ...] [--agents relational simplicial] [--model-config pre-front-end]
        [--markdown FILE]
    .venv/bin/python benchmarks/train_throughput.py --training-loop --presets bridge-medium

`--training-loop` measures what a run of `keras-simplicial train` gets: `train()` itself, with its
checkpoints and their greedy checks, as wall-clock steps per second beside RLlib's sampling rate.

Each configuration trains `--model-config`'s model (by default the model of the committed figures)
with the preset's IMPALA settings on the embedded local Ray (the learner
in the driver), warms up (XLA compilation, tracing, the first batches), then counts the
environment steps sampled and trained over `--seconds`. Layouts (`LAYOUTS`): the previous default
(RLlib's sampler over 32 gymnasium envs in one remote env runner), the batched sampler in one
remote runner of 64 boards, and the new default (the batched sampler of 64 boards in the driver,
no remote runner), so old and new are measured side by side in one run.

The profile comes from the timers of the run itself: the env runner's per-step timers
(`sampler_perf`: env stepping, observation processing, model forward, action processing; per step
of all boards), the learner thread's (`timing_breakdown`: gradient step, batch load) and the
driver's (`timers`: fetching samples, weight sync), all converted to milliseconds per 1,000
environment frames. The env runner and the learner run in parallel on the two cores, so the
slower of the two sets the pace. The reference for the model's own cost is the bare
forward+backward of the same agent model under XLA at the preset's train batch, measured in the
same process (`bare model`), and the training rate as a fraction of it.
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from keras_simplicial.agents.experiments.throughput import (  # noqa: E402
    measure_layout,
)

# The fields of `RunArguments` that make each layout measured side by side.
LAYOUTS = {
    name: dict(zip(("sampler", "num_env_runners", "num_envs_per_env_runner"), layout))
    for name, layout in {
        "previous default": ("rllib", 1, 32),
        "batched, 1 runner": ("batched", 1, 64),
        "new default": ("batched", 0, 64),
    }.items()
}


def measure(preset_name, agent, model_config, layout, seconds, warmup_s):
    """Frames/s sampled and trained, and the per-1,000-frame profile of one configuration."""
    from keras_simplicial.agents.training.run_arguments import RunArguments

    arguments = RunArguments.from_preset(
        preset_name, agent, model_overrides=model_config, **LAYOUTS[layout]
    )
    return measure_layout(arguments, seconds, warmup_s)


def measure_training_loop(preset_name, agent, model_config, seconds, warmup_s, check_episodes):
    """Steps/s of `train()` itself, what `keras-simplicial train --preset` runs: wall clock over
    the measured rows of metrics.csv (checkpoints every 10 iterations and their greedy checks
    of `check_episodes` episodes included) and RLlib's sampling rate of the same rows."""
    import tempfile

    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.run_directory import RunDirectory
    from keras_simplicial.agents.training.train import train

    with tempfile.TemporaryDirectory() as out:
        train(
            RunArguments.from_preset(preset_name, agent, seed=0, model_overrides=model_config),
            out=out,
            stop_timesteps=10**12,
            stop_seconds=warmup_s + seconds,
            check_episodes=check_episodes,
            progress="none",
        )
        rows = RunDirectory(out).read_metrics()
    warm = [row for row in rows if float(row["time_s"]) >= warmup_s]
    first, last = warm[0], warm[-1]
    wall = (int(last["timesteps"]) - int(first["timesteps"])) / (
        float(last["time_s"]) - float(first["time_s"])
    )
    sampling = statistics.median(float(row["frames_per_s"]) for row in warm[1:])
    return {"wall_fps": wall, "sampling_fps": sampling, "rows": len(warm)}


def loop_markdown(preset, results):
    """The table of `--training-loop`: wall-clock and sampling rates per agent, and ratios."""
    lines = [
        f"| {preset} | steps/s, wall clock (checks included) | frames/s, RLlib's sampling "
        "| wall / sampling |",
        "|---|---|---|---|",
    ]
    for agent, entry in results.items():
        lines.append(
            f"| {agent} | {entry['wall_fps']:,.0f} | {entry['sampling_fps']:,.0f} "
            f"| {entry['wall_fps'] / entry['sampling_fps']:.2f} |"
        )
    if {"relational", "simplicial"} <= set(results):
        ratio = results["simplicial"]["wall_fps"] / results["relational"]["wall_fps"]
        lines += ["", f"- wall clock: simplicial / relational = {ratio:.3f}"]
    return "\n".join(lines)


def bare_model_ms_per_1000(preset_name, agent, model_config, repeats=10):
    """Forward+backward of the agent model (`model_config` over the preset's) under XLA at the
    preset's train batch, per 1,000."""
    import numpy as np
    import tensorflow as tf

    from keras_simplicial.agents.model.architecture import build_agent_model
    from keras_simplicial.agents.model.model_config import split_model_config
    from keras_simplicial.agents.training.presets import PAPER_IMPALA_HYPERPARAMETERS, PRESETS
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.envs import make_vector_env

    preset = PRESETS[preset_name]
    batch = int(
        preset["overrides"].get(
            "train_batch_size", PAPER_IMPALA_HYPERPARAMETERS["train_batch_size"]
        )
    )
    env = make_vector_env(preset["env"], batch, preset["env_config"], copy=False)
    env.reset(seed=0)
    observations = tf.constant(env.core.obs.astype(np.float32))
    arguments = RunArguments.from_preset(preset_name, agent, model_overrides=model_config)
    architecture, _ = split_model_config(arguments.model_overrides)
    model = build_agent_model(agent, observations.shape[1:], 4, **architecture)

    @tf.function(jit_compile=True)
    def step(obs):
        with tf.GradientTape() as tape:
            logits, value = model(obs)
            loss = tf.reduce_sum(tf.nn.log_softmax(logits)) + tf.reduce_sum(value**2)
        return tape.gradient(loss, model.trainable_variables)

    step(observations)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        tf.nest.map_structure(lambda g: g.numpy(), step(observations))
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000.0 * 1000.0 / batch


def markdown(report):
    lines = []
    for preset, entry in report["presets"].items():
        lines.append(
            f"**{preset}** preset (bare model fwd+bwd under XLA, ms per 1,000 samples: "
            + ", ".join(f"{a} {ms:.1f}" for a, ms in entry["bare_ms"].items())
            + ")"
        )
        lines.append("")
        configs = entry["configs"]
        header = " | ".join(f"{c['agent']}, {c['layout']}" for c in configs)
        lines.append(f"| ms per 1,000 frames | {header} |")
        lines.append("|---" * (len(configs) + 1) + "|")
        for name in configs[0]["profile"]:
            lines.append(
                f"| {name} | " + " | ".join(f"{c['profile'][name]:.1f}" for c in configs) + " |"
            )
        lines.append(
            "| **wall clock (1000 / trained frames/s)** | "
            + " | ".join(f"**{1e6 / c['trained_fps']:.1f}**" for c in configs)
            + " |"
        )
        lines.append(
            "| trained frames/s | " + " | ".join(f"{c['trained_fps']:,.0f}" for c in configs) + " |"
        )
        lines.append(
            "| fraction of the bare model's fwd+bwd rate | "
            + " | ".join(
                f"{c['trained_fps'] * entry['bare_ms'][c['agent']] / 1e6:.2f}" for c in configs
            )
            + " |"
        )
        lines.append("")
        for line in entry["ratios"]:
            lines.append(f"- {line}")
        lines.append("")
    return "\n".join(lines)


def ratios(configs):
    """Each layout against the previous default per agent; simplicial/relational per layout."""
    by = {(c["agent"], c["layout"]): c["trained_fps"] for c in configs}
    lines = []
    for agent in ("relational", "simplicial"):
        old = by.get((agent, "previous default"))
        for layout in LAYOUTS:
            if old and layout != "previous default" and (agent, layout) in by:
                lines.append(
                    f"{agent}: {layout} / previous default = {by[(agent, layout)] / old:.2f}x"
                )
    for layout in LAYOUTS:
        if ("relational", layout) in by and ("simplicial", layout) in by:
            lines.append(
                f"{layout}: simplicial / relational = "
                f"{by[('simplicial', layout)] / by[('relational', layout)]:.3f}"
            )
    return lines


def main(argv=None):
    from keras_simplicial.agents.experiments.benchmark_files import (
        add_model_argument,
        add_output_arguments,
    )

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--presets",
        nargs="+",
        default=["easy", "paper"],
        choices=("easy", "paper", "bridge-small", "bridge-medium"),
    )
    parser.add_argument(
        "--training-loop",
        action="store_true",
        help="measure `train()` itself (checkpoints and greedy checks included) per agent, "
        "wall clock against RLlib's sampling rate, instead of the layouts' profile",
    )
    parser.add_argument(
        "--check-episodes",
        type=int,
        default=128,
        help="greedy episodes per checkpoint check in --training-loop (train's default)",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["relational", "simplicial"],
        choices=("relational", "simplicial"),
    )
    parser.add_argument(
        "--layouts",
        nargs="+",
        default=list(LAYOUTS),
        choices=tuple(LAYOUTS),
        help="sampler, env runners and boards per runner of each measurement",
    )
    parser.add_argument("--seconds", type=float, default=40.0, help="measured time per config")
    parser.add_argument("--warmup", type=float, default=25.0, help="warm-up time per config")
    add_model_argument(parser)
    add_output_arguments(parser, table="tables")
    args = parser.parse_args(argv)

    from keras_simplicial.agents.training.rllib.trainer import start_ray

    start_ray(num_env_runners=1)
    report = {"args": vars(args), "cpus": os.cpu_count(), "presets": {}}
    if args.training_loop:
        texts = []
        for preset in args.presets:
            results = {}
            for agent in args.agents:
                results[agent] = measure_training_loop(
                    preset, agent, args.model_config, args.seconds, args.warmup,
                    args.check_episodes,
                )  # fmt: skip
                print(f"{preset:<13} {agent:<10} {results[agent]}", flush=True)
            report["presets"][preset] = results
            texts.append(loop_markdown(preset, results))
        return write_report(args, report, "\n\n".join(texts))
    for preset in args.presets:
        bare = {
            agent: bare_model_ms_per_1000(preset, agent, args.model_config) for agent in args.agents
        }
        configs = []
        for layout in args.layouts:
            for agent in args.agents:
                result = measure(
                    preset, agent, args.model_config, layout, args.seconds, args.warmup
                )
                configs.append({"agent": agent, "layout": layout, **result})
                print(
                    f"{preset:<6} {agent:<10} {layout:<18} sampled "
                    f"{result['sampled_fps']:8.0f}  trained {result['trained_fps']:8.0f} "
                    "frames/s",
                    flush=True,
                )
        report["presets"][preset] = {"bare_ms": bare, "configs": configs, "ratios": ratios(configs)}
    return write_report(args, report, markdown(report))


def write_report(args, report, text):
    """Prints the tables and writes them (`--markdown`) and the numbers (`--json`)."""
    from keras_simplicial.agents.experiments.benchmark_files import write_outputs

    print("\n" + text)
    write_outputs(args, text, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
