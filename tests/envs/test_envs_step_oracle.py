"""The step-optimal oracle against a brute-force search over the environment's own states."""

import collections
import copy

import gymnasium as gym
import numpy as np
import pytest

from keras_simplicial.envs.oracle import plan_actions
from keras_simplicial.envs.step_oracle import UNREACHABLE, StepOracle, optimal_action_mask


def brute_force(core):
    """Every state the one-board ``core`` reaches by stepping (copies of) it, keyed by its
    observation, with the fewest steps to the Gem (`UNREACHABLE` after a wrong box) and each
    action's successor: a breadth-first search forward, then backward from the wins."""
    start = core.obs.tobytes()
    cores, successors = {start: core}, {}
    queue = collections.deque([start])
    while queue:
        key = queue.popleft()
        successors[key] = []
        for action in range(4):
            after = copy.deepcopy(cores[key])
            _, terminated, _, _ = after.step(np.asarray([action]), autoreset=False)
            if terminated[0]:
                successors[key].append("won" if after.is_success[0] else "lost")
                continue
            child = after.obs.tobytes()
            successors[key].append(child)
            if child not in cores:
                cores[child] = after
                queue.append(child)
    steps = {key: UNREACHABLE for key in cores} | {"won": 0, "lost": UNREACHABLE}
    changed = True
    while changed:
        changed = False
        for key, children in successors.items():
            best = min(steps[child] for child in children)
            if best < UNREACHABLE and best + 1 < steps[key]:
                steps[key], changed = best + 1, True
    return cores, successors, steps


def check_against_brute_force(core):
    oracle = StepOracle(core, 0)
    cores, successors, steps = brute_force(core)
    assert len(cores) > 10
    for key, state in cores.items():
        assert oracle.steps_to_gem(state, 0) == steps[key]
        expected = [steps[child] == steps[key] - 1 for child in successors[key]]
        if steps[key] == UNREACHABLE:
            expected = [False] * 4
        np.testing.assert_array_equal(oracle.optimal_actions(state, 0), expected)
    return oracle, steps[core.obs.tobytes()]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_agrees_with_brute_force_on_bridge_boards(seed):
    env = gym.make(
        "BridgeBoxWorld-v0", rows=7, cols=6, max_solution_length=2, bridge_probability=1.0
    ).unwrapped
    env.reset(seed=seed)
    oracle, shortest = check_against_brute_force(env.core)
    assert 0 < shortest < UNREACHABLE
    assert len(oracle.slots) == 1 + 2 * int(env.core.solution_length[0])  # Gem box and two paths


def test_agrees_with_brute_force_on_a_standard_board_with_distractors():
    env = gym.make(
        "BoxWorld-v0", rows=7, cols=6, max_solution_length=2, min_distractors=2, max_distractors=2
    ).unwrapped
    env.reset(seed=5)
    check_against_brute_force(env.core)


def test_is_never_longer_than_the_plan_level_player():
    env = gym.make("BridgeBoxWorld-v0", rows=7, cols=6, max_solution_length=2).unwrapped
    shorter = 0
    for seed in range(40):
        env.reset(seed=seed)
        oracle = StepOracle(env.core, 0)
        walked = len(plan_actions(env))
        assert oracle.steps_to_gem(env.core, 0) <= walked
        shorter += oracle.steps_to_gem(env.core, 0) < walked
    assert shorter > 0  # the plan-level player does the top path first, whatever its length


def test_walking_optimal_actions_wins_in_steps_to_gem():
    env = gym.make("BridgeBoxWorld-v0", rows=7, cols=6, max_solution_length=2).unwrapped
    rng = np.random.default_rng(0)
    for seed in range(20):
        env.reset(seed=seed)
        oracle = StepOracle(env.core, 0)
        expected = oracle.steps_to_gem(env.core, 0)
        for step in range(expected):
            actions = np.flatnonzero(oracle.optimal_actions(env.core, 0))
            assert actions.size >= 1
            _, reward, terminated, _, info = env.step(int(rng.choice(actions)))
            assert oracle.steps_to_gem(env.core, 0) == expected - step - 1 or terminated
        assert terminated and info["is_success"]


def test_never_opens_a_wrong_box_and_is_lost_after_one(hand_made):
    # Loose keys of colours 0 and 1, the Gem box locked by both, and the bridge (locked by 0,
    # fatal) whose lock at (2, 2) is on the short way from the first key to the second.
    core = hand_made(
        [
            ((0, 1), "gem", (1, 4), False),
            ((), 0, (0, 1), False),
            ((), 1, (4, 1), False),
            ((0,), 2, (2, 1), True),
        ],
        start=(0, 0),
        rows=5,
        cols=6,
        max_solution_length=1,
    )
    oracle = StepOracle(core, 0)
    assert list(oracle.slots) == [0, 1, 2]
    core.step(np.asarray([2]), autoreset=False)  # right: takes the key of colour 0
    assert core.held_keys(0) == (0,)
    assert oracle.steps_to_gem(core, 0) < UNREACHABLE
    core.step(np.asarray([3]), autoreset=False)  # down: (1, 1)
    core.step(np.asarray([3]), autoreset=False)  # down into the bridge's key tile (2, 1): a wall
    core.step(np.asarray([2]), autoreset=False)  # right: (1, 2)
    assert not oracle.optimal_actions(core, 0)[3]  # (2, 2) is the bridge's lock: never
    _, terminated, _, _ = core.step(np.asarray([3]), autoreset=False)
    assert terminated[0] and not core.is_success[0]
    assert oracle.steps_to_gem(core, 0) == UNREACHABLE
    assert not oracle.optimal_actions(core, 0).any()


def test_optimal_action_mask_stacks_the_boards():
    env = gym.make("BridgeBoxWorld-v0", rows=7, cols=6, max_solution_length=2).unwrapped
    env.reset(seed=3)
    oracle = StepOracle(env.core, 0)
    mask = optimal_action_mask(env.core, [0], [oracle])
    assert mask.shape == (1, 4) and mask[0].any()
    np.testing.assert_array_equal(mask[0], oracle.optimal_actions(env.core, 0))
