"""Learning per environment step, previous default vs new default sampler, same seeds.

    .venv/bin/python studies/easy-recipe/sampler_parity.py [--seeds 1 2 3] [--stop-timesteps 300000]
        [--agent relational] [--out benchmarks/runs]

Trains `--agent` on the `easy` preset with each seed twice, as learning sweeps of the package
(`keras_simplicial.agents.experiments.learning`: runs resume and evaluations are cached): with the
previous default (RLlib's sampler over 32 gymnasium envs in one remote env runner) in
`<out>/parity-old`, and with the new default (the batched sampler of 64 boards in the driver) in
`<out>/parity-new`. Then draws both groups on one axis (mean and standard deviation over seeds,
one faint line per seed) in `<out>/sampler_parity.png` and prints, per seed, the training win
rate averaged over the last 50,000 steps of each run. Both train the model the recorded runs
trained (studies/easy-recipe/README.md): `pre-front-end`, the presets' model before the front end.
"""

import argparse
import statistics
import sys
from pathlib import Path

CONFIGS = {
    "previous default (rllib sampler, 1 runner x 32 envs)": (
        "parity-old",
        {"sampler": "rllib", "num_env_runners": 1, "num_envs_per_env_runner": 32},
    ),
    "new default (batched sampler, 64 boards in the driver)": ("parity-new", {}),
}


def late_win_rate(run_dir, last_steps=50_000):
    from keras_simplicial.agents.training.curve import TrainingCurve

    curve = TrainingCurve.read(run_dir)
    late = curve.win_rates[curve.steps >= curve.steps[-1] - last_steps]
    return statistics.mean(late.tolist())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="relational", choices=("relational", "simplicial"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--stop-timesteps", type=int, default=300_000)
    parser.add_argument("--eval-episodes", type=int, default=500)
    parser.add_argument("--out", default="benchmarks/runs")
    args = parser.parse_args(argv)

    from keras_simplicial.agents.analysis.training_curves import plot_training_curves
    from keras_simplicial.agents.experiments.learning import SweepOptions, learning_sweep
    from keras_simplicial.agents.model.model_config import PRE_FRONT_END_MODEL
    from keras_simplicial.agents.training.run_arguments import RunArguments

    run_dirs, groups = [], []
    for label, (folder, layout) in CONFIGS.items():
        learning_sweep(
            SweepOptions(
                agents=(args.agent,),
                seeds=tuple(args.seeds),
                stop_timesteps=args.stop_timesteps,
                eval_episodes=args.eval_episodes,
                out=str(Path(args.out) / folder),
                arguments=RunArguments.from_preset(
                    "easy", model_overrides=PRE_FRONT_END_MODEL, **layout
                ),
            )
        )
        for seed in args.seeds:
            run_dirs.append(Path(args.out) / folder / f"{args.agent}-seed{seed}")
            groups.append(label)
    path = Path(args.out) / "sampler_parity.png"
    plot_training_curves(run_dirs, path, seed_lines=True, groups=groups)
    print("\n| seed | " + " | ".join(CONFIGS) + " |")
    print("|---" * (len(CONFIGS) + 1) + "|")
    for seed in args.seeds:
        cells = [
            f"{late_win_rate(Path(args.out) / folder / f'{args.agent}-seed{seed}'):.3f}"
            for folder, _ in CONFIGS.values()
        ]
        print(f"| {seed} | " + " | ".join(cells) + " |")
    print(f"\n(training win rate over the last 50,000 of {args.stop_timesteps:,} steps)")
    print(f"Wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
