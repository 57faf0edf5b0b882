"""studies/engine-parity/report.py, run as its page shows it, on copies of committed runs: the
verdict of seeds 1-5, the second addendum's tests and reading, the bridge-small addendum's flag."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
STUDY = ROOT / "studies" / "engine-parity"
REPORT = STUDY / "report.py"
OLD = ROOT / "benchmarks" / "results" / "stack-parity-rerun" / "old"


def report(tmp_path, more_seeds, bridge_small):
    page = tmp_path / "README.md"
    shutil.copy(STUDY / "README.md", page)
    subprocess.run(
        [
            sys.executable,
            str(REPORT),
            "--page",
            str(page),
            "--figure",
            str(tmp_path / "figures" / "curves.png"),
            "--verdict",
            str(tmp_path / "verdict.json"),
            "--more-seeds",
            str(more_seeds),
            "--bridge-small",
            str(bridge_small),
        ],  # fmt: skip
        check=True,
        capture_output=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        timeout=300,
    )
    return page.read_text(encoding="utf-8")


def test_the_second_addendum_and_the_bridge_small_flag(tmp_path):
    # Seed 6 of the second addendum: copies of seed 3's runs (the stalled Keras run and the old
    # stack's late one) and of seed 1's.
    more = tmp_path / "relational-seeds"
    shutil.copytree(
        STUDY / "results" / "keras" / "relational-seed3", more / "keras/relational-seed6"
    )
    shutil.copytree(OLD / "relational-seed1", more / "rllib-old" / "relational-seed6")
    # Bridge-small: both relational seeds are copies of the committed seed 1; simplicial has one.
    bridge = tmp_path / "bridge-small"
    committed = STUDY / "results" / "bridge-small"
    for seed in (1, 2):
        shutil.copytree(committed / "relational-seed1", bridge / f"relational-seed{seed}")
    shutil.copytree(committed / "simplicial-seed1", bridge / "simplicial-seed1")

    text = report(tmp_path, more, bridge)
    # Seeds 1-5 keep the pre-registered rule's verdict.
    assert "| relational | 405,760, 204,160, 571,520, 184,320, 177,920 |" in text
    assert "**the old stack learns better** |" in text
    # The second addendum: interim, 6 seeds, two stalls of the Keras engine against none.
    assert "## Addendum 2: the relational agent on seeds 1-15, both engines (interim)" in text
    assert "still to run: 7, 8, 9, 10, 11, 12, 13, 14, 15." in text
    assert "| 6 | 405,760 | 1.000 | 1.000 | never | 0.515 | 0.568 |" in text
    assert "the old stack 0 of 6, the Keras engine 2 of 6" in text
    # Fisher: both stalls of 2 in the Keras engine's 6 of 12 runs: C(6,2) / C(12,2) = 15 / 66.
    assert "(the Keras engine stalls more): p = 0.227." in text
    assert "**interim: no reading until every seed of 6-15 has finished on both engines**" in text
    record = json.loads((tmp_path / "relational-seeds.json").read_text())
    assert record["stalls"] == {"old": 0, "keras": 2} and record["missing_seeds"][0] == 7
    assert 0 < record["p_keras_later_standard_error"] < 0.002
    # Bridge-small: the relational agent's two runs succeed and are earlier than stage E's.
    assert "## Bridge-small (addendum): 3 of 4 runs" in text
    assert "| Keras engine, relational seed 2 | 689,920 | 0.971 / 0.996 |" in text
    assert "| stage E (old stack), simplicial, 8 runs | 754,560-1,383,040 |" in text
    assert "- relational: **no flag** (no claim of equality: 2 runs;" in text
    assert "- simplicial: no reading yet: seed 2 still to run." in text
