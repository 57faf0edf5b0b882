"""Episodes labelled with the step-optimal oracle's moves, and their replay from seeds and moves."""

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

from keras_simplicial.agents.imitation.labelled_play import (
    LabelledEpisodes,
    learner_moves,
    oracle_moves,
    play_labelled,
    replay,
)
from keras_simplicial.envs.step_oracle import StepOracle

MEDIUM = {"rows": 7, "cols": 6, "max_solution_length": 2}


def test_the_oracle_wins_every_board_in_the_fewest_steps():
    seeds = 100 + np.arange(12)
    played = play_labelled(
        oracle_moves(np.random.default_rng(0)),
        "BridgeBoxWorld-v0",
        MEDIUM,
        seeds,
        horizon=100,
        num_boards=5,
    )
    env = gym.make("BridgeBoxWorld-v0", **MEDIUM).unwrapped
    offsets = np.concatenate([[0], np.cumsum(played.lengths)])
    for episode, seed in enumerate(seeds):
        observation, _ = env.reset(seed=int(seed))
        assert played.lengths[episode] == StepOracle(env.core, 0).steps_to_gem(env.core, 0)
        for t in range(offsets[episode], offsets[episode + 1]):
            np.testing.assert_array_equal(played.observations[t], observation)
            assert played.labels[t, played.actions[t]]  # the oracle took one of its labels
            observation, _, terminated, _, info = env.step(int(played.actions[t]))
        assert terminated and info["is_success"]
    assert len(played) == played.lengths.sum() == len(played.labels)


def test_a_replay_gives_the_same_states_and_labels():
    rng = np.random.default_rng(1)
    played = play_labelled(
        learner_moves(lambda obs: rng.normal(size=(len(obs), 4)), greedy=False, rng=rng),
        "BridgeBoxWorld-v0",
        MEDIUM,
        np.arange(9),
        horizon=30,
        player="sampled",
        round_index=3,
        num_boards=4,
    )
    assert played.lengths.max() == 30 and (played.rounds == 3).all()
    again = replay(
        LabelledEpisodes(
            played.seeds, played.players, played.rounds, played.lengths, played.actions
        ),
        "BridgeBoxWorld-v0",
        MEDIUM,
        num_boards=3,
    )
    np.testing.assert_array_equal(again.observations, played.observations)
    np.testing.assert_array_equal(again.labels, played.labels)


def test_saved_episodes_load_with_their_states(tmp_path):
    played = play_labelled(
        oracle_moves(np.random.default_rng(2)), "BridgeBoxWorld-v0", MEDIUM, [5, 6], horizon=50
    )
    played.save(tmp_path / "episodes.npz")
    loaded = LabelledEpisodes.load(tmp_path / "episodes.npz", "BridgeBoxWorld-v0", MEDIUM)
    np.testing.assert_array_equal(loaded.observations, played.observations)
    np.testing.assert_array_equal(loaded.actions, played.actions)
    both = played.extend(loaded)
    assert len(both) == 2 * len(played) and list(both.seeds) == [5, 6, 5, 6]


def test_a_greedy_learner_stops_at_its_first_repeated_state():
    always_left = lambda obs: np.tile([1.0, 0.0, 0.0, 0.0], (len(obs), 1))  # noqa: E731
    played = play_labelled(
        learner_moves(always_left, greedy=True, rng=None),
        "BridgeBoxWorld-v0",
        MEDIUM,
        [0, 1, 2],
        horizon=100,
        player="greedy",
        end_at_repeat=True,
    )
    # The player starts in the top-left corner: its first move, into the edge, repeats the state.
    assert list(played.lengths) == [1, 1, 1] and (played.actions == 0).all()
    with pytest.raises(ValueError, match="player must be one of"):
        play_labelled(None, "BridgeBoxWorld-v0", MEDIUM, [0], horizon=5, player="human")


def test_a_selection_is_whole_episodes_and_replays_as_itself():
    played = play_labelled(
        oracle_moves(np.random.default_rng(3)), "BridgeBoxWorld-v0", MEDIUM, [7, 8, 9], horizon=50
    )
    chosen = played.select([2, 0])
    assert list(chosen.seeds) == [9, 7] and list(chosen.lengths) == [
        played.lengths[2],
        played.lengths[0],
    ]
    again = replay(
        dataclasses.replace(chosen, observations=None, labels=None), "BridgeBoxWorld-v0", MEDIUM
    )
    np.testing.assert_array_equal(again.observations, chosen.observations)
    np.testing.assert_array_equal(again.labels, chosen.labels)
    assert len(played.select([])) == 0
