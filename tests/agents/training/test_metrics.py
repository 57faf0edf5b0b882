"""The metrics of an episode and of an iteration's row, and the progress line made from them."""

import time

from keras_simplicial.agents.training.metrics import (
    ended_by_from_result,
    episode_metrics,
    metrics_row,
)
from keras_simplicial.agents.training.progress import describe


def test_an_episode_reports_its_win_and_why_it_ended_overall_and_per_type():
    metrics = episode_metrics(False, (2, 1, 3), "opened_bridge")
    assert metrics["win"] == 0.0 and metrics["win/type_2_1_3"] == 0.0
    assert (
        metrics["ended/opened_bridge"] == 1.0 and metrics["ended/opened_bridge/type_2_1_3"] == 1.0
    )
    assert metrics["ended/won"] == metrics["ended/out_of_steps"] == 0.0
    assert episode_metrics(True) == {"win": 1.0}  # an env that says neither


def test_a_row_has_the_shares_of_each_ending_and_the_wall_clock_rate():
    result = {
        "training_iteration": 3,
        "num_env_steps_sampled_lifetime": 12_000,
        "num_env_steps_sampled_throughput_per_sec": 4_000.0,
        "env_runners": {
            "episodes_this_iter": 10,
            "custom_metrics": {
                "win_mean": 0.5,
                "win/type_1_1_2_mean": 0.25,
                "ended/won_mean": 0.5,
                "ended/opened_bridge_mean": 0.5,
                "ended/opened_bridge/type_1_1_2_mean": 0.75,
                "ended/out_of_steps/type_1_0_0_mean": float("nan"),
            },
        },
    }
    assert ended_by_from_result(result) == {
        "ended/opened_bridge": 0.5,
        "ended/opened_bridge/1_1_2": 0.75,
        "ended/won": 0.5,
    }
    row = metrics_row(result, time.time() - 10, since=(2_000, time.time() - 5.0))
    assert row["frames_per_s"] == 4_000.0
    assert 1_900 < row["wall_frames_per_s"] < 2_001  # 10,000 steps in about 5 s
    assert row["ended/opened_bridge/1_1_2"] == 0.75 and row["win_rate/1_1_2"] == 0.25
    assert metrics_row(result, 0.0)["wall_frames_per_s"] == ""
    # The progress line leads with the wall-clock rate and counts the time left by it.
    line = describe(12_000, 22_000, row, 10.0)
    assert f"{row['wall_frames_per_s']:,.0f} steps/s (sampling 4,000)" in line
    assert "0:05 left" in line
