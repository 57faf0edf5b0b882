"""Where the agent model's signal dies: both agents, with the defaults and with `entity_norm`, on
the held-keys board at Adam's 3e-4, every site measured along training (plan.md, section 4); and
the front end at initialisation (front-end-plan.md, section 3).

    .venv/bin/python studies/trainability/diagnose.py              # results/diagnosis.json
    .venv/bin/python studies/trainability/diagnose.py --front-end  # results/front-end-init.json

Each model is seed 1's run of the screen (the same states, initial weights and batches), trained
for `--updates` updates and measured every `--every` by
`keras_simplicial.agents.imitation.held_keys_diagnosis.flat_start_diagnosis`, which reads every
site through `keras_simplicial.agents.model.trainability`. With `--front-end`, each model of the
front end's seeds, with the remedy and with the remedy and `centre_pixels`, is measured once, at
initialisation: the dead share and `state_sd` of each convolution.
"""

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

STUDY = Path(__file__).resolve().parent
DIAGNOSED = ("defaults", "entity_norm")
FRONT_END_DIAGNOSED = ("remedy", "remedy+centre_pixels")
FRONT_END_STATISTICS = ("conv_1/dead", "conv_1/state_sd", "conv_2/dead", "conv_2/state_sd")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=1_500)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument(
        "--out",
        default=None,
        help="default: results/diagnosis.json, or results/front-end-init.json with --front-end",
    )
    parser.add_argument("--data", default=str(STUDY.parent / "held-keys" / "data"))
    parser.add_argument(
        "--front-end",
        action="store_true",
        help="measure the front end's seeds at initialisation instead",
    )
    args = parser.parse_args(argv)
    if args.updates < 1 or args.every < 1:
        parser.error("--updates and --every must be positive integers.")
    name = "front-end-init.json" if args.front_end else "diagnosis.json"
    out = Path(args.out or STUDY / "results" / name)
    records = front_end_at_initialisation(args.data) if args.front_end else along_training(args)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


def along_training(args):
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
    return records


def front_end_at_initialisation(data):
    from keras_simplicial.agents.imitation.held_keys_diagnosis import flat_start_diagnosis
    from keras_simplicial.agents.imitation.trainability_study import (
        FRONT_END_RATE,
        FRONT_END_SEEDS,
        MODELS,
        budget_run,
    )
    from keras_simplicial.agents.provenance import provenance

    records = []
    for candidate in FRONT_END_DIAGNOSED:
        for seed in FRONT_END_SEEDS:
            for agent in MODELS:
                run = budget_run(agent, candidate, FRONT_END_RATE, seed)
                start = flat_start_diagnosis(run, data_dir=data, updates=1, every=1)[0]
                records.append(
                    {
                        "agent": agent,
                        "candidate": candidate,
                        "seed": seed,
                        "run": run.name,
                        **{key: start[key] for key in FRONT_END_STATISTICS},
                        "provenance": provenance(),
                    }
                )
                print(json.dumps(records[-1], default=str)[:200], flush=True)
    return records


if __name__ == "__main__":
    sys.exit(main())
