"""The held-keys table of studies/bridge-medium-dagger/README.md is the committed probe
results', cell by cell (benchmarks/results/held-keys/<agent>-seed0.json and -seed0-long.json)."""

import json
import re
from pathlib import Path

import pytest

from keras_simplicial.agents.analysis.results import cell
from keras_simplicial.agents.imitation.held_keys import HeldKeysCurve

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "benchmarks" / "results" / "held-keys"
PAGE = ROOT / "studies" / "bridge-medium-dagger" / "README.md"


ROW = re.compile(r"\s*\| ([\d,]+(?:, one start of [\d,]+ updates)?) \| (.+) \| (.+) \|$")


def documented_rows():
    """{examples label: [relational cell, simplicial cell]} of the page's held-keys table."""
    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match and "/" in match.group(2):
            rows[match.group(1)] = [match.group(2), match.group(3)]
    return rows


def accuracies(point):
    return " / ".join(
        cell(point[name]) for name in ("train_accuracy", "seen_pairs_accuracy", "test_accuracy")
    )


@pytest.mark.parametrize("column, agent", [(0, "relational"), (1, "simplicial")])
def test_the_documented_held_keys_table_is_the_committed_results(column, agent):
    rows = documented_rows()
    curve = json.loads((RESULTS / f"{agent}-seed0.json").read_text())
    long = json.loads((RESULTS / f"{agent}-seed0-long.json").read_text())
    HeldKeysCurve(**curve).to_markdown()  # the files are the probe's own results
    for point in curve["points"]:
        documented = rows[f"{point['size']:,}"][column]
        assert documented.startswith(accuracies(point)), (point["size"], documented)
        assert f"({point['starts']}" in documented
    (point,) = long["points"]
    assert long["schedule"]["flat_updates"] == long["schedule"]["max_updates"] == 12_000
    documented = rows[f"{point['size']:,}, one start of 12,000 updates"][column]
    assert documented.startswith(accuracies(point)) and point["left_flat_start"] is None
