"""The metrics of an episode, RLlib's results as an `Iteration`, an iteration's row, and the
progress line made from them."""

import time

import pytest

from keras_simplicial.agents.training.iteration import Iteration
from keras_simplicial.agents.training.metric_rows import episode_metrics, metrics_row
from keras_simplicial.agents.training.progress import describe
from keras_simplicial.agents.training.rllib.results import old_stack_iteration


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
    iteration = old_stack_iteration(result)
    assert iteration.ended_by() == {
        "ended/opened_bridge": 0.5,
        "ended/opened_bridge/1_1_2": 0.75,
        "ended/won": 0.5,
    }
    assert iteration.win_rate == 0.5 and iteration.win_rates_by_type() == {(1, 1, 2): 0.25}
    row = metrics_row(iteration, time.time() - 10, since=(2_000, time.time() - 5.0))
    assert row["frames_per_s"] == 4_000.0
    assert 1_900 < row["wall_frames_per_s"] < 2_001  # 10,000 steps in about 5 s
    assert row["ended/opened_bridge/1_1_2"] == 0.75 and row["win_rate/1_1_2"] == 0.25
    assert metrics_row(iteration, 0.0)["wall_frames_per_s"] == ""
    # The progress line leads with the wall-clock rate and counts the time left by it.
    line = describe(12_000, 22_000, row, 10.0)
    assert f"{row['wall_frames_per_s']:,.0f} steps/s (sampling 4,000)" in line
    assert "0:05 left" in line


ROW_COLUMNS = [
    "training_iteration",
    "timesteps",
    "time_s",
    "frames_per_s",
    "wall_frames_per_s",
    "episodes",
    "episode_return_mean",
    "episode_len_mean",
    "win_rate",
    "policy_loss",
    "vf_loss",
    "entropy",
    "vf_explained_var",
    "grad_gnorm",
    "lr",
]


def test_both_rllib_stacks_give_the_iteration_the_keras_engine_gives():
    old = {
        "training_iteration": 2,
        "num_env_steps_sampled_lifetime": 6_400,
        "num_env_steps_sampled_throughput_per_sec": 900.0,
        "env_runners": {
            "episodes_this_iter": 12,
            "episode_return_mean": 0.4,
            "episode_len_mean": 17.0,
            "custom_metrics": {"win_mean": 0.4, "win/type_1_0_0_mean": 0.4},
        },
        "info": {
            "learner": {
                "default_policy": {
                    "learner_stats": {
                        "policy_loss": 1.5,
                        "vf_loss": 0.5,
                        "entropy": 1.3,
                        "vf_explained_var": 0.1,
                        "cur_lr": 4e-4,
                    },
                    "grad_gnorm": 2.0,
                    "grad_norm/mlp": 1.0,
                }
            }
        },
    }
    new = {
        "training_iteration": 2,
        "num_env_steps_sampled_lifetime": 6_400,
        "env_runners": {
            "num_episodes": 12,
            "episode_return_mean": 0.4,
            "episode_len_mean": 17.0,
            "num_env_steps_sampled_lifetime_throughput": {"throughput_since_last_reduce": 900.0},
            "custom_metrics": {"win": 0.4, "win/type_1_0_0": 0.4},
        },
        "learners": {
            "default_policy": {
                "mean_pi_loss": 1.5,
                "mean_vf_loss": 0.5,
                "entropy": 1.3,
                "default_optimizer_learning_rate": 4e-4,
                "gradients_default_optimizer_global_norm": 2.0,
                "grad_norm/mlp": 1.0,
            }
        },
    }
    keras = Iteration(
        number=2,
        timesteps=6_400,
        frames_per_s=900.0,
        episodes=12,
        episode_return_mean=0.4,
        episode_len_mean=17.0,
        episode_means={"win": 0.4, "win/type_1_0_0": 0.4},
        learner={
            "policy_loss": 1.5,
            "vf_loss": 0.5,
            "entropy": 1.3,
            "vf_explained_var": 0.1,
            "lr": 4e-4,
            "grad_gnorm": 2.0,
            "grad_norm/mlp": 1.0,
        },
    )
    pytest.importorskip("ray")
    from keras_simplicial.agents.training.rllib.results import new_stack_iteration

    rows = [metrics_row(i, 0.0) for i in (old_stack_iteration(old), new_stack_iteration(new))]
    expected = metrics_row(keras, 0.0)
    assert list(expected)[: len(ROW_COLUMNS)] == ROW_COLUMNS  # metrics.csv keeps its columns
    for row in rows:
        row["time_s"] = expected["time_s"]
    assert rows[0] == expected
    # The new stack keeps its V-trace targets inside the loss: no explained variance.
    assert rows[1] == {**expected, "vf_explained_var": ""}
