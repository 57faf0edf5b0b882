"""The supervised check: the oracle's demonstrations, and an agent model that learns them."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from keras_simplicial.agents.analysis.imitation import demonstrations, imitation_check  # noqa: E402

MEDIUM = {"rows": 7, "cols": 6, "max_solution_length": 2}
EASY = {"rows": 3, "cols": 6, "max_solution_length": 1, "max_distractors": 0, "max_steps": 30}


def test_the_demonstrations_win_every_board_when_replayed():
    observations, actions = demonstrations("BridgeBoxWorld-v0", MEDIUM, 20, seed=7)
    assert observations.shape[1:] == (7, 7, 3) and len(observations) == len(actions)
    env = gym.make("BridgeBoxWorld-v0", **MEDIUM)
    replayed, wins = 0, 0
    for k in range(20):
        observation, _ = env.reset(seed=7 + k)
        terminated = False
        while not terminated:
            np.testing.assert_array_equal(observation, observations[replayed])
            observation, _, terminated, _, info = env.step(int(actions[replayed]))
            replayed += 1
        wins += info["ended_by"] == "won"
    assert replayed == len(actions) and wins == 20


def test_an_agent_model_learns_the_demonstrations_and_plays_them():
    result = imitation_check(
        "relational", "BoxWorld-v0", EASY, episodes=40, epochs=40, batch_size=32, games=16
    )
    assert result.train_accuracy > 0.9, result.to_markdown()
    assert 0.0 <= result.held_out_accuracy <= 1.0
    assert result.games["overall"]["episodes"] == 16
    assert set(result.games["overall"]["ended_by"]) == {
        "won",
        "opened_bridge",
        "opened_wrong_box",
        "out_of_steps",
    }
    assert "greedy games (16 fresh boards)" in result.to_markdown()
    assert result.to_dict()["games"] == result.games
    with pytest.raises(ValueError, match="epochs must be a positive integer"):
        imitation_check("relational", "BoxWorld-v0", EASY, epochs=0)
