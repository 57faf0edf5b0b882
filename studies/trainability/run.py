"""The trainability screen and its confirmation, trained run by run and resumable
(studies/trainability/plan.md).

    .venv/bin/python studies/trainability/run.py --dry-run   # the runs, their state
    .venv/bin/python studies/trainability/run.py             # the screen, then the confirmation
    .venv/bin/python studies/trainability/report.py          # then the page

Every run is a `BudgetRun` of keras_simplicial.agents.imitation.held_keys_budget, fixed in
keras_simplicial.agents.imitation.trainability_study by plan.md: its folder results/<run name>/
holds run.json (the curve, the endpoint, the provenance) and checkpoint/ (the exact resumable
state, not committed). The confirmation's runs are planned from the screen's records by plan.md's
rule (`trainability_study.chosen_for_confirmation`), so they start once the screen has finished.
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from keras_simplicial.agents.imitation.trainability_study import (  # noqa: E402
    load_records,
    planned,
)

RESULTS = Path(__file__).resolve().parent / "results"
DATA = Path(__file__).resolve().parent.parent / "held-keys" / "data"  # the probe's cached states


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(RESULTS), help="folder of the runs' folders")
    parser.add_argument("--data", default=str(DATA), help="folder caching the drawn states")
    parser.add_argument("--dry-run", action="store_true", help="print the runs, train nothing")
    args = parser.parse_args(argv)

    from keras_simplicial.agents.imitation.held_keys_budget import BudgetTrainer

    while True:
        records = load_records(args.out)
        runs = planned(records)
        pending = [(c, run) for c, run in runs if not _finished(records, run)]
        for candidate, run in runs:
            record = records.get(run.name)
            status = "finished" if _finished(records, run) else "pending"
            if record is not None and status == "pending":
                status = f"{record['curve'][-1]['updates']:,} of {run.max_updates:,} updates"
            print(f"{candidate:>26}  {run.name}: {status}")
        if args.dry_run or not pending:
            return 0
        candidate, run = pending[0]
        started = time.perf_counter()
        record = BudgetTrainer(run, Path(args.out) / run.name, data_dir=args.data).train()
        endpoint = record["endpoint"]
        reached = f"0.9 at {endpoint['updates']:,}" if endpoint["reached"] else "censored"
        print(
            f"{time.strftime('%H:%M:%S')} {run.name}: {reached}, "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )


def _finished(records, run):
    record = records.get(run.name)
    return record is not None and record["finished"]


if __name__ == "__main__":
    sys.exit(main())
