"""play_episodes: which boards are played, the step limit, the resets and the actions."""

import gymnasium as gym
import numpy as np
import pytest

import keras_simplicial.envs  # noqa: F401  (registers the ids)
from keras_simplicial.agents.rollout import choose_actions, episode_outcomes, play_episodes
from keras_simplicial.envs.oracle import path_to, plan_actions
from keras_simplicial.envs.palette import PLAYER_RGB

EASY = {"rows": 3, "cols": 6, "max_solution_length": 1, "max_distractors": 0, "max_steps": 30}


def uniform(observations):
    return np.zeros((len(observations), 4))


def episodes_played(num_envs, **kwargs):
    """{episode k: (puzzle type, first observation, actions, rewards, won, length)}."""
    played = {}
    for step in play_episodes(
        uniform, "BoxWorld-v0", EASY, episodes=12, num_envs=num_envs, seed=5, **kwargs
    ):
        for i, (board, k) in enumerate(zip(step.boards, step.episodes.tolist())):
            if step.first[i]:
                played[k] = {"first": step.observations[i], "actions": [], "rewards": []}
            played[k]["actions"].append(int(step.actions[i]))
            played[k]["rewards"].append(float(step.rewards[i]))
            if step.ended[i]:
                core = step.core
                played[k].update(
                    won=bool(core.is_success[board]),
                    length=int(core.steps[board]),
                    type=tuple(core.puzzle_type[board]),
                )
    return played


def test_episode_k_is_the_board_of_seed_plus_k_and_replays_in_the_single_env():
    played = episodes_played(num_envs=4)
    assert sorted(played) == list(range(12))
    for k, episode in played.items():
        env = gym.make("BoxWorld-v0", **EASY)
        observation, info = env.reset(seed=5 + k)
        np.testing.assert_array_equal(episode["first"], observation)
        assert episode["type"] == tuple(info["puzzle_type"])
        for t, action in enumerate(episode["actions"]):
            _, reward, terminated, truncated, info = env.step(action)
            assert reward == episode["rewards"][t]
            assert (terminated or truncated) == (t == len(episode["actions"]) - 1)
        assert info["is_success"] == episode["won"]
        assert episode["length"] == len(episode["actions"]) <= EASY["max_steps"]


def test_greedy_results_do_not_depend_on_the_number_of_boards():
    def prefer_right(observations):
        return np.tile([0.0, 0.5, 1.0, 0.2], (len(observations), 1))

    def outcomes(num_envs):
        results = {}
        for step in play_episodes(
            prefer_right,
            "BridgeBoxWorld-v0",
            {"max_solution_length": 1},
            episodes=10,
            num_envs=num_envs,
            seed=0,
            greedy=True,
        ):
            assert (step.actions == 2).all()
            for board, k in zip(step.boards[step.ended], step.episodes[step.ended]):
                results[k] = (int(step.core.steps[board]), bool(step.core.is_success[board]))
        return results

    assert outcomes(1) == outcomes(3) == outcomes(10)
    # Without a max_steps of the env (the paper's), episodes stop at the default limit of 500.
    assert max(length for length, _ in outcomes(10).values()) == 500


def test_the_step_limit_of_the_caller_wins():
    lengths = [
        int(step.core.steps[step.boards[step.ended]].max(initial=0))
        for step in play_episodes(uniform, "BoxWorld-v0", EASY, episodes=8, max_steps=3)
    ]
    assert max(lengths) == 3


def test_sampled_actions_follow_the_policy_and_the_seed():
    rng = np.random.default_rng(0)
    logits = np.log(np.tile([0.1, 0.2, 0.3, 0.4], (20000, 1)))
    actions, probabilities = choose_actions(logits, greedy=False, rng=rng)
    np.testing.assert_allclose(probabilities[0], [0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(
        np.bincount(actions, minlength=4) / 20000, [0.1, 0.2, 0.3, 0.4], atol=0.01
    )
    once, again = episodes_played(num_envs=3), episodes_played(num_envs=3)
    assert [e["actions"] for e in once.values()] == [e["actions"] for e in again.values()]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="episodes must be a positive integer"):
        next(play_episodes(uniform, "BoxWorld-v0", EASY, episodes=0))
    with pytest.raises(ValueError, match="env must be one of"):
        next(play_episodes(uniform, "CartPole-v1", episodes=1))


def test_greedy_episodes_that_cycle_end_as_the_step_limit_would_end_them():
    medium = {"rows": 7, "cols": 6, "max_solution_length": 2, "max_steps": 200}
    projection = np.random.default_rng(3).normal(size=(7 * 7 * 3, 4))

    def memoryless(observations):  # a fixed function of the board, like a trained agent
        return observations.reshape(len(observations), -1).astype(np.float64) @ projection

    def play(end_cycles):
        results, steps = {}, 0
        for step in play_episodes(
            memoryless,
            "BridgeBoxWorld-v0",
            medium,
            episodes=40,
            num_envs=8,
            greedy=True,
            end_cycles=end_cycles,
        ):
            steps += len(step.boards)
            for board, k in zip(step.boards[step.ended], step.episodes[step.ended]):
                core = step.core
                results[int(k)] = (bool(core.is_success[board]), int(core.steps[board]))
                results[int(k)] += (core.outcome(board),)
        return results, steps

    (played_out, steps_played_out), (cut, steps_cut) = play(False), play(True)
    assert cut == played_out and len(cut) == 40
    ran_out = [k for k, (_, _, why) in cut.items() if why == "out_of_steps"]
    assert ran_out and all(cut[k][1] == 200 for k in ran_out)
    assert steps_cut < steps_played_out / 2
    with pytest.raises(ValueError, match="end_cycles=True needs greedy=True"):
        next(play_episodes(uniform, "BoxWorld-v0", EASY, episodes=1, end_cycles=True))


MEDIUM = {"rows": 7, "cols": 6, "min_solution_length": 1, "max_solution_length": 2}


def scripted(actions):
    """A greedy policy that plays `actions`, then repeats the last one (one board)."""
    played = []

    def policy(observations):
        action = actions[min(len(played), len(actions) - 1)]
        played.append(action)
        return np.eye(4)[[action]] * 10.0

    return policy


def one_gem_key_then_the_gem_box(seed):
    """Actions of the shortest plan of board `seed` up to the first of the Gem's two keys, then
    the walk to the Gem box: its lock stops the player."""
    env = gym.make("BridgeBoxWorld-v0", **MEDIUM).unwrapped
    env.reset(seed=seed)
    core = env.core
    gem_box = int(np.flatnonzero(core.lock2[0] >= 0)[0])
    gem_keys = {int(core.lock[0, gem_box]), int(core.lock2[0, gem_box])}
    actions = []
    for action in plan_actions(env):
        if gem_keys & set(core.inventory[0].tolist()):
            break
        actions.append(action)
        env.step(action)
    return actions + path_to(core, 0, gem_box)


def test_greedy_loops_are_named_by_what_they_repeat():
    def loop_of(actions, seed=0):
        steps = list(
            play_episodes(
                scripted(actions),
                "BridgeBoxWorld-v0",
                MEDIUM,
                episodes=1,
                num_envs=1,
                seed=seed,
                greedy=True,
                end_cycles=True,
            )
        )
        assert all(loop is None for step in steps[:-1] for loop in step.loops)
        return steps[-1].loops[0], steps[-1].truncated[0]

    assert loop_of([1]) == ("edge", True)  # up from the top row
    assert loop_of([3, 1]) == ("cycle", True)  # down and up again
    for seed in range(3):
        assert loop_of(one_gem_key_then_the_gem_box(seed), seed) == ("gem_box_one_key", True)
    outcomes = episode_outcomes(scripted([1]), "BridgeBoxWorld-v0", MEDIUM, 1, greedy=True)
    assert outcomes[0].loop == "edge" and outcomes[0].ended_by == "out_of_steps"
    sampled = episode_outcomes(uniform, "BridgeBoxWorld-v0", {**MEDIUM, "max_steps": 20}, 2)
    assert [outcome.loop for outcome in sampled] == [None, None]


def test_masking_blocked_moves_chooses_among_the_moves_the_board_allows():
    def always_up(observations):  # up, then left: both walls on the top-left tile
        return np.tile([1.0, 5.0, -1.0, -2.0], (len(observations), 1))

    masked = list(
        play_episodes(
            always_up,
            "BridgeBoxWorld-v0",
            MEDIUM,
            episodes=4,
            num_envs=2,
            seed=0,
            greedy=True,
            end_cycles=True,
            mask_blocked_moves=True,
        )
    )
    for step in masked:
        np.testing.assert_allclose(step.probabilities.sum(axis=1), 1.0)
    # Unmasked, "up" walks into the top edge and stays; masked, it never pushes into anything.
    loops = [loop for step in masked for loop in step.loops if loop is not None]
    assert loops and "edge" not in loops and set(loops) <= {"cycle"}
    plain = episode_outcomes(always_up, "BridgeBoxWorld-v0", MEDIUM, 4, greedy=True)
    assert [outcome.loop for outcome in plain] == ["edge"] * 4
    # Every episode starts on the top-left tile: left and up have probability 0 there.
    first = masked[0]
    assert first.first.all() and (first.observations[:, 0, 0] == PLAYER_RGB).all()
    assert (first.probabilities[:, :2] == 0).all() and (first.actions == 2).all()
