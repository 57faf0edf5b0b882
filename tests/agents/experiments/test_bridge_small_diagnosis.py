"""studies/bridge-small-every-run/bridge_small_diagnosis.py: the (1,1,2) plateau of a run, read
from its files."""

import csv
import json

import pytest

from keras_simplicial.agents.experiments import bridge_small_diagnosis as script


def write_run(path, rows, best_greedy=None):
    path.mkdir()
    (path / "run.json").write_text(json.dumps({"agent": "simplicial", "seed": 4}))
    rows = [{"training_iteration": i, **row} for i, row in enumerate(rows, 1)]
    with open(path / "metrics.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    if best_greedy is not None:
        (path / "evaluation_best_greedy.json").write_text(
            json.dumps(
                {
                    "overall": {"win_rate": best_greedy},
                    "per_puzzle_type": {"(1, 1, 2)": {"win_rate": 0.6, "loops": {"cycle": 0.3}}},
                }
            )
        )


def test_the_plateau_is_where_type_100_is_learnt_and_the_bridge_type_not(tmp_path):
    rows = [
        {"timesteps": 1000, "win_rate/1_0_0": 0.2, "win_rate/1_1_2": 0.1, "entropy": 1.3},
        {"timesteps": 3000, "win_rate/1_0_0": 0.95, "win_rate/1_1_2": 0.5, "entropy": 0.4},
        {"timesteps": 4000, "win_rate/1_0_0": 0.99, "win_rate/1_1_2": 0.6, "entropy": 0.2},
        {"timesteps": 7000, "win_rate/1_0_0": 1.0, "win_rate/1_1_2": 0.95, "entropy": 0.05},
    ]
    write_run(tmp_path / "run", rows, best_greedy=0.83)
    diagnosis = script.diagnose(tmp_path / "run", boards=0)
    assert diagnosis["plateau_steps"] == 2000 + 1000
    assert diagnosis["plateau_medians"]["entropy"] == pytest.approx(0.3)
    assert diagnosis["plateau_medians"]["grad_gnorm"] is None  # not logged: no number
    assert diagnosis["succeeded"] is False  # 0.83 < 0.95
    assert diagnosis["position_spread"] is None
    table = script.markdown([diagnosis])
    assert "| simplicial seed 4 (" in table and "| 0.83 | 0.6 | 0.3 | 3,000 |" in table


def test_late_in_the_run_is_the_medians_from_a_step_on(tmp_path):
    """A converged run wins every episode by short paths with little entropy left."""
    rows = [
        {"timesteps": t, "win_rate": w, "entropy": e, "episode_len_mean": n}
        for t, w, e, n in [(1000, 0.5, 1.0, 30), (5000, 0.98, 0.2, 11), (6000, 1.0, 0.1, 9)]
    ]
    write_run(tmp_path / "run", rows)
    late = script.diagnose(tmp_path / "run", boards=0, late_from=5000)["late_medians"]
    assert late == {
        "win_rate": pytest.approx(0.99),
        "entropy": pytest.approx(0.15),
        "episode_len_mean": pytest.approx(10),
    }
    assert script.diagnose(tmp_path / "run", boards=0, late_from=9000)["late_medians"] == {
        column: None for column in script.LATE_COLUMNS
    }
    with pytest.raises(SystemExit):
        script.main([str(tmp_path / "run"), "--late-from", "-1"])


def test_a_run_without_its_best_evaluation_has_no_outcome(tmp_path):
    rows = [{"timesteps": 1000, "win_rate/1_0_0": 0.2, "win_rate/1_1_2": 0.1}]
    write_run(tmp_path / "run", rows)
    diagnosis = script.diagnose(tmp_path / "run", boards=0)
    assert diagnosis["outcome"] is None and diagnosis["succeeded"] is None
    assert diagnosis["plateau_steps"] == 0
