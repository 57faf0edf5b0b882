"""What a Match3 secondary at length 16 would cost here: seconds per epoch of each Match3 model at
the campaign's length (N = 8, M = 23) and at N = 16, back to back in one process, and what a
campaign of the same shape (4 models x 8 seeds x the campaign's 40 epochs) would take at N = 16.

    .venv/bin/python studies/simplicial-attention-tasks/length_cost.py   # about 5 minutes

Both lengths are timed in the same invocation, so their ratio holds whatever else the machine
runs; the campaign's own runs give the absolute seconds at N = 8. At N = 16 the modulus is 197,
which puts about half of the positions of a uniform draw in a triple (136 unordered pairs j <= k
per position: 1 - (1 - 1/197)^136 = 0.50), as M = 23 did at N = 8 with its 36 pairs (0.80).
Seed 100 (a pilot seed, not one of the campaign's 1-8), 3 epochs per model (the median skips the
first, which compiles), the campaign's training otherwise (`run.train_run`). Writes
results/length-16-cost.json; trains nothing that enters a comparison.
"""

import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as campaign  # noqa: E402  (this folder's run.py: the campaign's models and training)

LENGTHS = {"match3": (8, 23), "match3-16": (16, 197)}
SEED, EPOCHS, SEEDS, CAMPAIGN_EPOCHS = 100, 3, 8, 40  # the median of 3 skips the compiling one
MATCH3_MODELS = ("dot-product", "simplicial-pairs", "simplicial-virtual", "trilinear-pairs")


def main():
    campaign.TASKS["match3-16"] = {
        "generator": "match3",
        "length": LENGTHS["match3-16"][0],
        "modulus": LENGTHS["match3-16"][1],
        "balanced": True,
    }
    rows = []
    for model in MATCH3_MODELS:
        row = {"model": model}
        for task in LENGTHS:
            record = campaign.train_run(
                task, model, SEED, EPOCHS, campaign.TRAIN_SIZE, campaign.TEST_SIZE
            )
            row[task] = record["seconds_per_epoch"]  # the median over its epochs
            print(f"{model} {task}: {row[task]:.1f} s per epoch", flush=True)
        row["ratio"] = row["match3-16"] / row["match3"]
        rows.append(row)
    # The campaign's own seconds per epoch at N = 8, scaled by each model's measured ratio.
    committed = {}
    for model in MATCH3_MODELS:
        records = [
            json.loads(path.read_text(encoding="utf-8"))
            for path in campaign.RESULTS.glob(f"match3--{model}--seed*.json")
        ]
        committed[model] = statistics.median(r["seconds_per_epoch"] for r in records)
    hours = (
        sum(SEEDS * CAMPAIGN_EPOCHS * committed[row["model"]] * row["ratio"] for row in rows) / 3600
    )
    result = {
        "lengths": LENGTHS,
        "seed": SEED,
        "epochs_timed": EPOCHS,
        "rows": rows,
        "campaign_seconds_per_epoch_at_8": committed,
        "hours_at_16_for_4_models_x_8_seeds_x_40_epochs": hours,
    }
    out = campaign.RESULTS / "length-16-cost.json"
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for row in rows:
        print(
            f"| {row['model']} | {row['match3']:.1f} | {row['match3-16']:.1f} | "
            f"{row['ratio']:.1f} |"
        )
    print(f"a campaign at N = 16 (4 models x 8 seeds x 40 epochs): about {hours:.1f} hours")
    return 0


if __name__ == "__main__":
    sys.exit(main())
