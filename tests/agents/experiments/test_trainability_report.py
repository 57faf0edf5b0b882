"""studies/trainability/report.py's bridge-medium pilot section: the training win rate per puzzle
type, the length-2 evaluation and pilot-plan.md's go/no-go rule, on a copy of a committed run."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "studies" / "trainability" / "report.py"
COMMITTED = ROOT / "studies" / "trainability" / "results" / "bridge-small" / "relational-seed3"


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("trainability_report", REPORT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(agent, length_2=None):
    evaluations = {} if length_2 is None else {"best_greedy_length2": length_2}
    return {"agent": agent, "seed": 1, "steps": 1, "evaluations": evaluations, "recent_by_type": {}}


def test_the_pilot_goes_when_one_best_checkpoint_reaches_0_9_on_length_2(report):
    assert report.pilot_decision([]) is None
    assert report.pilot_decision([run("relational", 0.91)]) == "go"  # the other still running
    assert report.pilot_decision([run("relational", 0.89), run("simplicial")]) is None
    assert report.pilot_decision([run("relational", 0.89), run("simplicial", 0.9)]) == "go"
    assert report.pilot_decision([run("relational", 0.89), run("simplicial", 0.2)]) == "no-go"


def test_the_pilot_table_reads_a_runs_puzzle_types_and_its_length_2_evaluation(report, tmp_path):
    folder = tmp_path / "relational-seed1"
    shutil.copytree(COMMITTED, folder, ignore=shutil.ignore_patterns("checkpoints", "exported"))
    evaluation = json.loads((folder / "evaluation_best_greedy.json").read_text())
    evaluation["overall"]["win_rate"] = 0.5
    (folder / "evaluation_best_greedy_length2.json").write_text(json.dumps(evaluation))

    (found,) = report.rl_runs(tmp_path)
    assert set(found["recent_by_type"]) == {"1_0_0", "1_1_2"}
    assert 0.8 < found["recent_by_type"]["1_1_2"] < found["recent_by_type"]["1_0_0"] <= 1.0
    lines = report.pilot_lines([found])
    assert lines[0].startswith("| run | steps | (1,0,0) | (1,1,2) |")
    assert "| relational seed 3 | 3,004,800 of 20,000,000 |" in lines[2]
    assert lines[2].endswith("| 0.862, 0.941 | 0.853, 0.901 | 0.500 |")
    assert lines[-1].startswith("**Decision**: open")
    assert report.draw_pilot_curves(tmp_path, tmp_path / "curves.png").stat().st_size > 0


def test_the_comparison_script_asks_the_page_for_the_pilots_decision(
    report, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(report, "PILOT", tmp_path)
    assert report.main(["--pilot-decision"]) == 0
    assert capsys.readouterr().out == "open\n"
    for name, decision in (("run-bridge-medium-comparison.sh", "go"), ("run-ladder.sh", "no-go")):
        script = (REPORT.parent / name).read_text()
        assert "report.py --pilot-decision" in script and f'"$decision" != {decision} ]' in script
