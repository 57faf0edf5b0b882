"""The held-keys probe at its learning budget: the pilot, the ladder of easier probes, the second
pilot and the comparison, trained in turns and resumable (studies/held-keys/).

    .venv/bin/python studies/held-keys/run.py --dry-run   # the runs, their state
    .venv/bin/python studies/held-keys/run.py             # train them in turns, resuming
    .venv/bin/python studies/held-keys/report.py          # then the page

Every run is a `BudgetRun` of keras_simplicial.agents.imitation.held_keys_budget, fixed in
keras_simplicial.agents.imitation.held_keys_study by pilot-plan.md, ladder-plan.md,
second-pilot-plan.md and comparison-plan.md (each written and committed before its runs): its
folder results/<run name>/ holds run.json (the curve, the endpoint, the provenance) and
checkpoint/ (the exact resumable state). The runs go seed by seed; within a seed they take turns
of `--turn` updates each, so that a campaign stopped at any time has given every unfinished run
of the seed about as many updates; run the script again and every run continues exactly.
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from keras_simplicial.agents.imitation.held_keys_study import EVAL_EVERY, planned_runs  # noqa: E402

STUDY = Path(__file__).resolve().parent
RESULTS = STUDY / "results"
DATA = STUDY / "data"


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
