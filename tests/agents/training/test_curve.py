"""The one rule by which every curve, table and report reads a run's metrics.csv."""

import pytest

from keras_simplicial.agents.training.curve import SMOOTHING_EPISODES, TrainingCurve, counted_rows
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory


def row(iteration, time_s, episodes, win_rate, fps=1000.0):
    return {
        "training_iteration": str(iteration),
        "timesteps": str(1000 * iteration),
        "time_s": str(time_s),
        "episodes": str(episodes),
        "frames_per_s": str(fps),
        "win_rate": "" if win_rate is None else str(win_rate),
    }


def test_a_win_rate_counts_once_the_smoothing_window_is_full_in_its_process():
    assert SMOOTHING_EPISODES == 200
    rows = [
        row(1, 10, 150, 1.0),  # 150 episodes: one lucky window
        row(2, 20, 60, 0.4),  # 210: counts
        row(3, 30, 0, None),  # no win rate: never counts
        row(4, 40, 10, 0.5),
        row(5, 5, 120, 0.9),  # time_s fell: a resumed process, its window starts empty
        row(6, 15, 100, 0.6),  # 220 in this process
    ]
    assert [r["training_iteration"] for r in counted_rows(rows)] == ["2", "4", "6"]


def test_training_curve_reads_steps_rates_speed_and_sittings(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    RunArguments(env="BridgeBoxWorld-v0", agent="simplicial").write(run.run_file)
    header = "training_iteration,timesteps,time_s,episodes,frames_per_s,win_rate"
    lines = [
        header,
        "1,1000,10.0,100,100.0,1.0",
        "2,2000,20.0,150,2000.0,0.25",
        "3,3000,30.0,200,3000.0,0.5",
        "4,4000,8.0,300,4000.0,0.75",
    ]
    run.metrics_file.write_text("\n".join(lines) + "\n")

    curve = TrainingCurve.read(run.root)
    assert curve.agent == "simplicial" and curve.timesteps == 4000
    assert curve.steps.tolist() == [2000, 3000, 4000]
    assert curve.win_rates.tolist() == [0.25, 0.5, 0.75]
    # The median of the counted rows leaves the warming-up first iteration out.
    assert curve.frames_per_s == 3000.0
    assert curve.first_reaching(0.5) == 3000 and curve.first_reaching(0.9) is None
    assert curve.sittings() == (pytest.approx(38.0), 2)
