"""The trainability study's RL campaigns (agents/experiments/trainability_rl.py): the training win
rate per puzzle type, the length-2 evaluation and pilot-plan.md's go/no-go rule, on a copy of a
committed run; and the decision its scripts ask report.py for before they run."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from keras_simplicial.agents.experiments.trainability_rl import (
    pilot_decision,
    pilot_lines,
    rl_runs,
)

ROOT = Path(__file__).resolve().parents[3]
STUDY = ROOT / "studies" / "trainability"
COMMITTED = STUDY / "results" / "bridge-small" / "relational-seed3"


def run(agent, length_2=None):
    evaluations = {} if length_2 is None else {"best_greedy_length2": length_2}
    return {"agent": agent, "seed": 1, "steps": 1, "evaluations": evaluations, "recent_by_type": {}}


def test_the_pilot_goes_when_one_best_checkpoint_reaches_0_9_on_length_2():
    assert pilot_decision([]) is None
    assert pilot_decision([run("relational", 0.91)]) == "go"  # the other still running
    assert pilot_decision([run("relational", 0.89), run("simplicial")]) is None
    assert pilot_decision([run("relational", 0.89), run("simplicial", 0.9)]) == "go"
    assert pilot_decision([run("relational", 0.89), run("simplicial", 0.2)]) == "no-go"


def test_the_pilot_table_reads_a_runs_puzzle_types_and_its_length_2_evaluation(tmp_path):
    folder = tmp_path / "relational-seed1"
    shutil.copytree(COMMITTED, folder, ignore=shutil.ignore_patterns("checkpoints", "exported"))
    evaluation = json.loads((folder / "evaluation_best_greedy.json").read_text())
    evaluation["overall"]["win_rate"] = 0.5
    (folder / "evaluation_best_greedy_length2.json").write_text(json.dumps(evaluation))

    (found,) = rl_runs(tmp_path)
    by_type = found["recent_by_type"]
    assert list(by_type) == [(1, 0, 0), (1, 1, 2)]
    assert 0.8 < by_type[(1, 1, 2)] < by_type[(1, 0, 0)] <= 1.0
    lines = pilot_lines([found])
    assert lines[0].startswith("| run | steps | (1,0,0) | (1,1,2) |")
    assert "| relational seed 3 | 3,004,800 of 20,000,000 |" in lines[2]
    assert lines[2].endswith("| 0.862, 0.941 | 0.853, 0.901 | 0.500 |")
    assert lines[-1].startswith("**Decision**: open")


def test_the_pilots_outcomes_run_only_on_their_decision():
    result = subprocess.run(
        [sys.executable, str(STUDY / "report.py"), "--pilot-decision"],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    expected = pilot_decision(rl_runs(STUDY / "results" / "bridge-medium-pilot")) or "open"
    assert result.stdout == expected + "\n"
    for name, decision in (("run-bridge-medium-comparison.sh", "go"), ("run-ladder.sh", "no-go")):
        script = (STUDY / name).read_text()
        assert "report.py --pilot-decision" in script and f'"$decision" != {decision} ]' in script
