"""Rules, rewards, seeding, and the agreement of the single and the vector environment."""

import copy

import gymnasium as gym
import numpy as np
import pytest

from keras_simplicial.envs import GEM, BoxWorldEnv, BoxWorldVectorEnv
from keras_simplicial.envs.logic import Box
from keras_simplicial.envs.oracle import path_to
from keras_simplicial.envs.palette import EMPTY_SLOT_RGB, FLOOR_RGB, GEM_RGB, PALETTE, PLAYER_RGB

LEFT, UP, RIGHT, DOWN = 0, 1, 2, 3


def test_rules_on_a_hand_made_bridge_board(hand_made, step_core):
    # Loose keys 3 at (1, 0)... no: key positions are free here; Gem locked by 3 and 5 at (3, 4).
    core = hand_made(
        [
            ((), 3, (1, 1), False),  # loose key |- C3
            ((3,), 5, (1, 4), False),  # box C3 |- C5, lock at (1, 5)
            ((), 7, (5, 1), False),  # loose key |- C7
            ((7, 5), "gem", (3, 4), False),
        ]
    )  # C7 (x) C5 |- G
    obs = core.obs[0]
    assert tuple(obs[1, 1]) == tuple(PALETTE[3]) and tuple(obs[1, 5]) == tuple(PALETTE[3])
    assert tuple(obs[3, 4]) == tuple(obs[4, 4]) == GEM_RGB
    assert tuple(obs[3, 5]) == tuple(PALETTE[7]) and tuple(obs[4, 5]) == tuple(PALETTE[5])
    assert step_core(core, LEFT, UP) == [(0.0, False)] * 2  # walls of the board
    assert core.player_position(0) == (0, 0)
    assert step_core(core, RIGHT, DOWN) == [(0.0, False), (1.0, False)]  # pick up C3
    assert core.held_keys(0) == (3,) and tuple(obs[0, -1]) == tuple(PALETTE[3])
    assert tuple(obs[1, 1]) == PLAYER_RGB and tuple(obs[0, 1]) == FLOOR_RGB
    # Walk to (0, 4) and down onto the key tile (1, 4): a wall.
    step_core(core, UP, RIGHT, RIGHT, RIGHT)
    assert step_core(core, DOWN) == [(0.0, False)] and core.player_position(0) == (0, 4)
    # Onto the lock (1, 5) holding C3: C3 is replaced by C5 in the same slot.
    assert step_core(core, RIGHT, DOWN) == [(0.0, False), (1.0, False)]
    assert core.player_position(0) == (1, 5) and core.held_keys(0) == (5,)
    assert tuple(obs[1, 4]) == FLOOR_RGB and tuple(obs[0, -1]) == tuple(PALETTE[5])
    # The Gem's lock (3, 5) without C7 is a wall.
    assert step_core(core, DOWN, DOWN) == [(0.0, False)] * 2
    assert core.player_position(0) == (2, 5)
    # Fetch C7 at (5, 1): path over floor, then back to the Gem's lower lock (4, 5).
    for a in path_to(core, 0, 2):
        step_core(core, a)
    assert core.held_keys(0) == (5, 7) and tuple(obs[1, -1]) == tuple(PALETTE[7])
    walk = path_to(core, 0, 3)
    results = step_core(core, *walk)
    assert results[-1] == (10.0, True) and core.is_success[0] and core.solvable[0]
    assert core.outcome(0) == "won"
    assert core.held_keys(0) == (GEM,) and tuple(obs[0, -1]) == GEM_RGB
    assert tuple(obs[1, -1]) == EMPTY_SLOT_RGB
    assert core.opened_sequence(0) == [0, 1, 2, 3]


def test_opening_a_distractor_ends_the_episode(hand_made, step_core):
    core = hand_made(
        [((), 2, (1, 1), False), ((2,), 4, (1, 4), True), ((2,), "gem", (3, 1), False)],
        mode="standard",
    )
    step_core(core, RIGHT, DOWN)
    results = step_core(core, *path_to(core, 0, 1))
    assert results[-1] == (-1.0, True)
    assert not core.solvable[0] and not core.is_success[0]
    assert core.outcome(0) == "opened_wrong_box"  # a distractor


def test_why_an_episode_ended_after_the_step_limit(hand_made, step_core):
    # Two loose keys; the Gem box wants C2 and C4, but the box C2 |- C6 also takes C2: opening it
    # loses the Gem without ending the episode, which then runs out of steps.
    objects = [
        ((), 2, (1, 1), False),
        ((), 4, (5, 1), False),
        ((2,), 6, (1, 4), False),
        ((2, 4), "gem", (3, 1), False),
    ]
    core = hand_made(objects, max_steps=30)
    assert core.outcome(0) is None
    step_core(core, RIGHT, DOWN)  # picks up C2
    step_core(core, *path_to(core, 0, 2))  # opens C2 |- C6
    assert not core.solvable[0] and core.outcome(0) is None
    while not core.needs_reset[0]:
        step_core(core, LEFT)
    assert core.outcome(0) == "opened_wrong_box"
    core = hand_made(objects, max_steps=5)
    step_core(core, *[LEFT] * 5)
    assert core.needs_reset[0] and core.outcome(0) == "out_of_steps"
    # A caller's own limit (`truncate`) ends it the same way; a reset forgets why.
    core = hand_made(objects)
    core.truncate([0])
    assert core.needs_reset[0] and core.outcome(0) == "out_of_steps"
    core.reset_boards([0])
    assert core.outcome(0) is None


def _bridge_walk(env):
    """Actions that open the bridge of a bridge episode (plan for its lock, walked)."""
    puzzle = env.puzzle()
    bridge = next(b for b in puzzle.boxes if b.fatal)
    boxes = [
        Box(b.slot, b.locks, GEM if b is bridge else b.key, b.position)
        for b in puzzle.boxes
        if not b.is_gem
    ]
    from keras_simplicial.envs import solve

    return solve(boxes), bridge


def test_opening_the_bridge_ends_with_minus_one_and_unsolvable():
    env = BoxWorldEnv(bridge_probability=1.0)
    checked = 0
    for seed in range(30):
        _, info = env.reset(seed=seed)
        assert info["puzzle_type"][1] >= 1 and info["solvable"]
        plan, bridge = _bridge_walk(env)
        for slot in plan:
            for a in path_to(env.core, 0, slot):
                obs, reward, terminated, truncated, info = env.step(a)
        assert (reward, terminated, truncated) == (-1.0, True, False)
        assert info["solvable"] is False and info["is_success"] is False
        assert info["ended_by"] == "opened_bridge"
        assert env.opened()[-1] == bridge.slot
        assert env.plan() is None  # the solver agrees: Gem unobtainable
        checked += 1
    assert checked == 30


def test_reset_seed_is_reproducible_and_seeds_differ():
    a, b = BoxWorldEnv(), BoxWorldEnv()
    oa, ia = a.reset(seed=42)
    ob, ib = b.reset(seed=42)
    assert (oa == ob).all() and ia == ib
    np.random.seed(0)  # no global state is used
    actions = np.random.default_rng(1).integers(0, 4, 300)
    for act in actions:
        ra, rb = a.step(int(act)), b.step(int(act))
        assert (ra[0] == rb[0]).all() and ra[1:] == rb[1:]
    distinct = {BoxWorldEnv().reset(seed=s)[0].tobytes() for s in range(20)}
    assert len(distinct) == 20


def test_single_and_vector_trajectories_are_identical():
    kwargs = dict(max_solution_length=1, max_steps=40)
    n, seed, horizon = 3, 10, 400
    vec = BoxWorldVectorEnv(n, **kwargs)
    singles = [BoxWorldEnv(**kwargs) for _ in range(n)]
    vobs, vinfo = vec.reset(seed=seed)
    sobs = [e.reset(seed=seed + i) for i, e in enumerate(singles)]
    for i in range(n):
        assert (vobs[i] == sobs[i][0]).all()
        assert tuple(vinfo["puzzle_type"][i]) == sobs[i][1]["puzzle_type"]
    actions = np.random.default_rng(0).integers(0, 4, (horizon, n))
    done = [False] * n
    episodes = 0
    for t in range(horizon):
        vobs, vrew, vterm, vtrunc, vinfo = vec.step(actions[t])
        for i, env in enumerate(singles):
            if done[i]:  # NEXT_STEP autoreset: the action is ignored
                obs, info = env.reset()
                reward, terminated, truncated = 0.0, False, False
                episodes += 1
            else:
                obs, reward, terminated, truncated, info = env.step(int(actions[t, i]))
            assert (vobs[i] == obs).all(), (t, i)
            assert (vrew[i], vterm[i], vtrunc[i]) == (reward, terminated, truncated), (t, i)
            for key in ("solvable", "is_success", "solution_length"):
                assert vinfo[key][i] == info[key], (t, i, key)
            assert tuple(vinfo["puzzle_type"][i]) == info["puzzle_type"]
            done[i] = terminated or truncated
    assert episodes >= 10


def test_terminal_step_info_reports_the_finished_episode():
    vec = BoxWorldVectorEnv(1, max_solution_length=1, bridge_probability=0.0)
    vec.reset(seed=5)
    env = BoxWorldEnv(max_solution_length=1, bridge_probability=0.0)
    env.reset(seed=5)
    from keras_simplicial.envs.oracle import plan_actions

    actions = plan_actions(env)
    for a in actions:
        obs, reward, terminated, truncated, info = vec.step(np.asarray([a]))
    assert terminated[0] and reward[0] == 10.0 and info["is_success"][0]
    finished = tuple(info["puzzle_type"][0])
    assert finished == (1, 0, 0)
    obs, reward, terminated, truncated, info = vec.step(np.asarray([0]))
    assert reward[0] == 0 and not terminated[0] and not info["is_success"][0]
    assert tuple(obs[0, 0, 0]) == PLAYER_RGB and (obs[0, :, -1] == EMPTY_SLOT_RGB).all()


def test_random_start_puts_the_player_on_free_floor():
    env = BoxWorldEnv(random_start=True)
    starts = set()
    for seed in range(40):
        obs, _ = env.reset(seed=seed)
        r, c = env.core.player_position(0)
        assert tuple(obs[r, c]) == PLAYER_RGB
        assert (obs[:, :-1] == PLAYER_RGB).all(-1).sum() == 1
        starts.add((r, c))
    assert len(starts) > 10


def test_max_steps_truncates():
    env = BoxWorldEnv(max_steps=3)
    env.reset(seed=0)
    flags = [env.step(0)[3] for _ in range(3)]
    assert flags == [False, False, True]


@pytest.mark.parametrize("bad", [5, -1, 1.5, "up"])
def test_invalid_actions_raise(bad):
    env = BoxWorldEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(bad)


def test_obstacle_names_what_stops_a_move(hand_made, step_core):
    core = hand_made(
        [
            ((), 3, (1, 1), False),  # loose key |- C3
            ((3,), 5, (1, 4), False),  # box C3 |- C5, lock at (1, 5)
            ((), 7, (5, 1), False),  # loose key |- C7
            ((7, 5), "gem", (3, 4), False),  # C7 (x) C5 |- G, locks at (3, 5) and (4, 5)
        ]
    )
    assert core.obstacle(0, LEFT) == "edge" and core.obstacle(0, RIGHT) is None
    step_core(core, RIGHT)  # (0, 1): the loose key C3 below goes through (picked up)
    assert core.obstacle(0, DOWN) is None
    step_core(core, RIGHT, RIGHT, RIGHT)  # (0, 4), above the box's key tile
    assert core.obstacle(0, DOWN) == "key_tile"
    step_core(core, RIGHT)  # (0, 5), above the lock C3: nothing held yet
    assert core.held_keys(0) == () and core.obstacle(0, DOWN) == "closed_lock"
    step_core(core, LEFT, LEFT, LEFT, LEFT, DOWN)  # pick up C3 at (1, 1)
    for action in path_to(core, 0, 1):  # open C3 |- C5: the lock goes through
        assert core.obstacle(0, action) is None
        step_core(core, action)
    assert core.held_keys(0) == (5,) and core.player_position(0) == (1, 5)
    step_core(core, DOWN)  # (2, 5), above the Gem's lock (3, 5) holding C5 of C7 (x) C5
    assert core.obstacle(0, DOWN) == "gem_box_one_key"
    assert step_core(core, DOWN) == [(0.0, False)] and core.player_position(0) == (2, 5)
    for action in path_to(core, 0, 2):  # fetch C7
        step_core(core, action)
    walk = path_to(core, 0, 3)
    step_core(core, *walk[:-1])
    assert core.obstacle(0, walk[-1]) is None  # both keys held: the Gem box opens


def test_obstacle_of_the_gem_box_with_neither_key_and_of_the_bridge(hand_made, step_core):
    core = hand_made(
        [
            ((), 3, (5, 1), False),  # loose key |- C3
            ((7, 5), "gem", (0, 1), False),  # C7 (x) C5 |- G
            ((9,), 5, (3, 3), True),  # the bridge C9 |- C5, lock at (3, 4)
        ]
    )
    assert core.obstacle(0, RIGHT) == "key_tile"  # the Gem's white tile (0, 1)
    step_core(core, DOWN, DOWN, RIGHT, RIGHT, RIGHT, UP, UP)  # round the box to (0, 3)
    assert core.player_position(0) == (0, 3)
    assert core.obstacle(0, LEFT) == "closed_lock"  # its lock (0, 2), no key held
    step_core(core, RIGHT, DOWN, DOWN)  # (2, 4), above the bridge's lock
    assert core.obstacle(0, DOWN) == "closed_wrong_box"


def test_allowed_moves_are_the_moves_without_an_obstacle():
    """`allowed_moves` of all boards at once agrees with `obstacle` board by board, and exactly
    the moves it allows move the player, on random play in both modes."""
    from keras_simplicial.envs.config import BoxWorldConfig
    from keras_simplicial.envs.core import BoxWorldCore

    rng = np.random.default_rng(0)
    for mode in ("bridge", "standard"):
        core = BoxWorldCore(32, BoxWorldConfig.create(mode, max_steps=40))
        for board in range(core.num_boards):
            core.seed(board, np.random.default_rng(board))
        core.reset_boards()
        checked = blocked = 0
        for _ in range(150):
            allowed = core.allowed_moves()
            assert allowed.shape == (32, 4) and allowed.dtype == bool
            walled_in = np.zeros(core.num_boards, bool)
            for board in range(core.num_boards):
                free = [core.obstacle(board, a) is None for a in range(4)]
                walled_in[board] = not any(free)
                expected = free if any(free) else [True] * 4
                assert allowed[board].tolist() == expected, (mode, board)
                blocked += 4 - sum(free)
            assert core.allowed_moves([3, 1]).tolist() == allowed[[3, 1]].tolist()
            actions = rng.integers(0, 4, core.num_boards)
            before = core.pos.copy()
            _, terminated, truncated, _ = core.step(actions, autoreset=False)
            chosen = allowed[np.arange(32), actions]
            moved = core.pos != before
            assert (moved == chosen)[~walled_in].all()
            core.reset_boards(np.flatnonzero(terminated | truncated))
            checked += core.num_boards
        assert blocked > checked // 4  # the boards did block moves


def test_a_board_that_blocks_every_move_allows_them_all(hand_made):
    core = hand_made(
        [
            ((3,), 5, (0, 1), False),  # box C3 |- C5: key tile (0, 1), lock (0, 2)
            ((7,), 9, (1, 0), False),  # box C7 |- C9: key tile (1, 0), lock (1, 1)
        ]
    )
    assert [core.obstacle(0, a) for a in range(4)] == ["edge", "edge", "key_tile", "key_tile"]
    assert core.allowed_moves().tolist() == [[True] * 4]


def test_blocked_move_reward_costs_only_the_moves_the_board_blocks(hand_made, step_core):
    objects = [
        ((), 3, (1, 1), False),  # loose key |- C3
        ((3,), 5, (1, 4), False),  # box C3 |- C5, lock at (1, 5)
        ((), 7, (3, 1), False),  # loose key |- C7
        ((7, 5), "gem", (3, 4), False),  # C7 (x) C5 |- G
    ]
    paper = hand_made(objects)
    assert step_core(paper, LEFT) == [(0.0, False)]  # the edge: no cost in the paper
    core = hand_made(objects, blocked_move_reward=-0.5)
    assert step_core(core, LEFT, UP) == [(-0.5, False), (-0.5, False)]  # the edges
    assert core.player_position(0) == (0, 0)
    assert step_core(core, RIGHT) == [(0.0, False)]  # floor
    assert step_core(core, DOWN) == [(1.0, False)]  # the loose key C3 is picked up
    assert step_core(core, UP, RIGHT, RIGHT, RIGHT) == [(0.0, False)] * 4  # (0, 4)
    assert core.obstacle(0, DOWN) == "key_tile"
    assert step_core(core, DOWN) == [(-0.5, False)]
    step_core(core, RIGHT)  # (0, 5), above the lock C3, holding C3
    assert step_core(core, DOWN) == [(1.0, False)]  # the box opens: C5
    assert step_core(core, DOWN) == [(0.0, False)]  # (2, 5)
    assert core.obstacle(0, DOWN) == "gem_box_one_key"
    assert step_core(core, DOWN) == [(-0.5, False)]


def test_blocked_move_reward_reaches_the_vector_env_and_not_a_reset_step():
    vec = BoxWorldVectorEnv(2, max_steps=1, blocked_move_reward=-0.25)
    vec.reset(seed=0)
    _, reward, _, truncated, _ = vec.step(np.asarray([LEFT, UP]))  # both start at (0, 0)
    assert reward.tolist() == [-0.25, -0.25] and truncated.all()
    _, reward, _, _, _ = vec.step(np.asarray([LEFT, UP]))  # the autoreset step: no move, no cost
    assert reward.tolist() == [0.0, 0.0]


def test_a_deep_copy_of_the_core_steps_on_its_own():
    env = gym.make("BridgeBoxWorld-v0", max_solution_length=1).unwrapped
    env.reset(seed=0)
    before = env.core.obs.copy()
    clone = copy.deepcopy(env.core)
    clone.step(np.asarray([RIGHT]), autoreset=False)
    assert (clone.obs != before).any() and clone.pos[0] == 1
    np.testing.assert_array_equal(env.core.obs, before)
    assert env.core.pos[0] == 0
