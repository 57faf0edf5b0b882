"""Where the agent model's signal dies: both agents, with the defaults and with `entity_norm`, on
the held-keys board at Adam's 3e-4, every site measured along training (plan.md, section 4).

    .venv/bin/python studies/trainability/diagnose.py   # writes results/diagnosis.json

Each model is seed 1's run of the screen (the same states, initial weights and batches), trained
for `--updates` updates and measured every `--every` by
`keras_simplicial.agents.imitation.held_keys_diagnosis.flat_start_diagnosis`, which reads every
site through `keras_simplicial.agents.model.trainability`.
"""

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

STUDY = Path(__file__).resolve().parent
DIAGNOSED = ("defaults", "entity_norm")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=1_500)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--out", default=str(STUDY / "results" / "diagnosis.json"))
    parser.add_argument("--data", default=str(STUDY.parent / "held-keys" / "data"))
    args = parser.parse_args(argv)
    if args.updates < 1 or args.every < 1:
        parser.error("--updates and --every must be positive integers.")

    from keras_simplicial.agents.imitation.held_keys_diagnosis import flat_start_diagnosis
    from keras_simplicial.agents.imitation.trainability_study import (
        MODELS,
        SCREEN_SEED,
        budget_run,
    )
    from keras_simplicial.agents.provenance import provenance

    records = []
    for candidate in DIAGNOSED:
        for agent in MODELS:
            run = budget_run(agent, candidate, 3e-4, SCREEN_SEED)
            rows = flat_start_diagnosis(
                run, data_dir=args.data, updates=args.updates, every=args.every
            )
            records.append(
                {
                    "agent": agent,
                    "candidate": candidate,
                    "run": run.name,
                    "rows": rows,
                    "provenance": provenance(),
                }
            )
            print(json.dumps({k: records[-1][k] for k in ("agent", "candidate")}), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
