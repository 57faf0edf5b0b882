"""Why the pilot's models stayed at the constant prediction: each model of the pilot, on its own
states, looked at from its flat start (keras_simplicial.agents.imitation.held_keys_diagnosis).

    .venv/bin/python studies/held-keys/diagnose.py   # writes results/diagnosis.json and .md

Same seed, training set, learning rate and initial weights as the pilot's runs of the rung
(run.py), so update 0 here is update 0 there; the curve goes on for `--updates`.
"""

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from keras_simplicial.agents.imitation.held_keys_study import planned_runs  # noqa: E402

STUDY = Path(__file__).resolve().parent
RESULTS, DATA = STUDY / "results", STUDY / "data"  # as run.py's

COLUMNS = (
    ("updates", "updates", "{:,}"),
    ("loss", "loss", "{:.4f}"),
    ("logit_std", "logit s.d. over states", "{:.4f}"),
    ("pooled_std", "pooled features s.d.", "{:.4f}"),
    ("dead_mlp_4", "dead units, last MLP layer", "{:.2f}"),
    ("grad_norm/front_end", "gradient: front end", "{:.2e}"),
    ("grad_norm/one_simplicial", "1-simplicial", "{:.2e}"),
    ("grad_norm/simplicial_query_key", "2-simplicial query/key", "{:.2e}"),
    ("grad_norm/mlp_heads", "MLP and heads", "{:.2e}"),
)


def markdown(records):
    lines = []
    for record in records:
        lines += [f"### {record['model']}, rung {record['rung']}", ""]
        lines.append("| " + " | ".join(title for _, title, _ in COLUMNS) + " |")
        lines.append("|" + "---|" * len(COLUMNS))
        for row in record["rows"]:
            cells = [form.format(row[key]) if key in row else "-" for key, _, form in COLUMNS]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rungs", nargs="+", default=["board", "gem-locks-only"])
    parser.add_argument("--updates", type=int, default=1_500)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--out", default=str(RESULTS / "diagnosis"))
    args = parser.parse_args(argv)

    from keras_simplicial.agents.imitation.held_keys_diagnosis import flat_start_diagnosis

    records = []
    for run in planned_runs(comparison=False):
        if run.rung not in args.rungs:
            continue
        rows = flat_start_diagnosis(run, data_dir=DATA, updates=args.updates, every=args.every)
        records.append({"model": run.model, "rung": run.rung, "run": run.name, "rows": rows})
        print(json.dumps(records[-1]["rows"][-1]), flush=True)
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown(records), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
