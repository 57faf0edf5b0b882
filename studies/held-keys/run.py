"""The held-keys probe at its learning budget: the pilot, the ladder of easier probes, the second
pilot and the comparison, trained in turns and resumable (studies/held-keys/).

    .venv/bin/python studies/held-keys/run.py --dry-run   # the runs, their state
    .venv/bin/python studies/held-keys/run.py             # train them in turns, resuming
    .venv/bin/python studies/held-keys/report.py          # then the page

Every run is a `BudgetRun` of keras_simplicial.agents.imitation.held_keys_budget, fixed below and
in pilot-plan.md, ladder-plan.md, second-pilot-plan.md and comparison-plan.md (each written and
committed before its runs): its folder results/<run name>/ holds run.json (the curve, the
endpoint, the provenance) and checkpoint/ (the exact resumable state). The runs go seed by seed;
within a seed they take turns of `--turn` updates each, so that a campaign stopped at any time
has given every unfinished run of the seed about as many updates; run the script again and every
run continues exactly.
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

STUDY = Path(__file__).resolve().parent
RESULTS = STUDY / "results"
DATA = STUDY / "data"

# ---------------------------------------------------------- fixed by pilot-plan.md (section 2)
SEED = 1  # not 0, the seed of the earlier probe's runs (benchmarks/results/held-keys/)
TRAIN_SIZE = 32_000
TEST_SIZE = 1_000
EVAL_EVERY = 500
MODELS = (("relational", None), ("simplicial", "zeros"), ("simplicial", "ones"))
# The rung, its cap of updates: the probe itself, then the ladder's two easier views.
RUNGS = (("board", 8_000), ("locks-marked", 3_000), ("gem-locks-only", 3_000))
# ---------------------------------------------------------- fixed by ladder-plan.md (section 3)
# The second stage: the rung, the learning rate, the cap of updates.
SECOND_STAGE = (
    ("colours-one-hot", 3e-4, 4_000),
    ("gem-locks-only", 1e-3, 4_000),
    ("gem-locks-only", 3e-5, 4_000),
)
# ------------------------------------------------------ fixed by second-pilot-plan.md (section 2)
# The third stage: the board at the learning rate that left the flat start.
THIRD_STAGE = (
    ("board", 3e-5, 20_000),
    ("locks-marked", 3e-5, 8_000),
    ("gem-locks-only", 1e-5, 8_000),
)
# ------------------------------------------------------- fixed by comparison-plan.md (section 2)
# The comparison: every model on the board at this rate and cap, on seeds the pilots never used.
COMPARISON_SEEDS = (2, 3, 4, 5, 6)
COMPARISON_RATE = 3e-5
COMPARISON_CAP = 20_000


def planned_runs(comparison=True):
    """Every run of the plans: the pilot, the ladder's stages, the second pilot and (unless
    `comparison` is false) the comparison of comparison-plan.md."""
    from keras_simplicial.agents.imitation.held_keys_budget import BudgetRun

    stages = [(rung, 3e-4, cap) for rung, cap in RUNGS] + [*SECOND_STAGE, *THIRD_STAGE]
    runs = [
        BudgetRun(
            agent=agent,
            gain=gain,
            rung=rung,
            train_size=TRAIN_SIZE,
            max_updates=cap,
            learning_rate=learning_rate,
            eval_every=EVAL_EVERY,
            test_size=TEST_SIZE,
            seed=SEED,
        )
        for rung, learning_rate, cap in stages
        for agent, gain in MODELS
    ]
    if comparison:
        runs += [
            BudgetRun(
                agent=agent,
                gain=gain,
                rung="board",
                train_size=TRAIN_SIZE,
                max_updates=COMPARISON_CAP,
                learning_rate=COMPARISON_RATE,
                eval_every=EVAL_EVERY,
                test_size=TEST_SIZE,
                seed=seed,
            )
            for seed in COMPARISON_SEEDS
            for agent, gain in MODELS
        ]
    return runs


def state_of(run, out):
    """(updates done, finished) of a run from its record, (0, False) before its first turn."""
    import json

    path = Path(out) / run.name / "run.json"
    if not path.exists():
        return 0, False
    record = json.loads(path.read_text(encoding="utf-8"))
    return record["curve"][-1]["updates"], record["finished"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(RESULTS), help="folder of the runs' folders")
    parser.add_argument("--data", default=str(DATA), help="folder caching the drawn states")
    parser.add_argument("--turn", type=int, default=EVAL_EVERY, help="updates per run per turn")
    parser.add_argument("--threads", type=int, default=None, help="TensorFlow threads")
    parser.add_argument("--dry-run", action="store_true", help="print the runs, train nothing")
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=None,
        help="train only the runs of these seeds (two processes can then share the runs)",
    )
    parser.add_argument(
        "--no-comparison",
        action="store_true",
        help="leave out the comparison's runs (it runs only on the second pilot's go)",
    )
    args = parser.parse_args(argv)
    if args.turn < 1 or (args.threads is not None and args.threads < 1):
        parser.error("--turn and --threads must be positive integers.")
    runs = planned_runs(comparison=not args.no_comparison)
    for run in runs:
        updates, done = state_of(run, args.out)
        status = "finished" if done else f"{updates:,} of {run.max_updates:,} updates"
        print(f"{run.name}: {status}")
    if args.dry_run:
        return 0
    if args.threads is not None:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    from keras_simplicial.agents.imitation.held_keys_budget import BudgetTrainer

    # Seed by seed (a campaign cut short leaves whole seeds): every unfinished run of the seed
    # built once (its model compiled once), then turns until all of them finish.
    pending = [
        run
        for run in runs
        if not state_of(run, args.out)[1] and (args.seeds is None or run.seed in args.seeds)
    ]
    for seed in sorted({run.seed for run in pending}):
        trainers = [
            BudgetTrainer(run, Path(args.out) / run.name, data_dir=args.data)
            for run in pending
            if run.seed == seed
        ]
        while trainers:
            for trainer in trainers:
                started = time.perf_counter()
                record = trainer.train(args.turn)
                row = record["curve"][-1]
                print(
                    f"{time.strftime('%H:%M:%S')} {trainer.run.name}: {row['updates']:,} "
                    f"updates, train loss {row['train_loss']:.4f}, held-out pairs "
                    f"{row['held_out_pairs_accuracy']:.3f}"
                    f"{' (finished)' if trainer.finished else ''}, turn "
                    f"{time.perf_counter() - started:.0f} s",
                    flush=True,
                )
            trainers = [trainer for trainer in trainers if not trainer.finished]
    return 0


if __name__ == "__main__":
    sys.exit(main())
