"""Puzzle sampling: type frequencies and the layout of Sections 5 and 6, solvability."""

import collections

import numpy as np
import pytest

from keras_simplicial.envs import BoxWorldEnv, BoxWorldVectorEnv, solve
from keras_simplicial.envs.config import BoxWorldConfig
from keras_simplicial.envs.palette import GEM_RGB

#: 0.999 quantile of the chi-square distribution with 16 degrees of freedom (17 cells).
CHI2_16_999 = 39.252


def expected_type_probabilities():
    """No bridge 1/2 (each (a, 0, 0) 1/6); a bridge: a uniform, b uniform on 1..a, c on a+1..2a."""
    p = {(a, 0, 0): 1 / 6 for a in (1, 2, 3)}
    for a in (1, 2, 3):
        for b in range(1, a + 1):
            for c in range(a + 1, 2 * a + 1):
                p[(a, b, c)] = 0.5 * (1 / 3) / (a * a)
    return p


def chi_square(counts, probabilities, n):
    return sum((counts.get(k, 0) - n * p) ** 2 / (n * p) for k, p in probabilities.items())


def test_puzzle_type_frequencies_match_section_6_2():
    n = 20000
    vec = BoxWorldVectorEnv(n)
    _, info = vec.reset(seed=2024)
    counts = collections.Counter(map(tuple, info["puzzle_type"].tolist()))
    p = expected_type_probabilities()
    assert len(p) == 17 and abs(sum(p.values()) - 1) < 1e-12
    assert set(counts) == set(p)  # 14 bridge types and 3 without a bridge
    assert p[(1, 1, 2)] == pytest.approx(1 / 6) and p[(2, 1, 3)] == pytest.approx(1 / 24)
    assert p[(3, 2, 5)] == pytest.approx(1 / 54)
    assert chi_square(counts, p, n) < CHI2_16_999
    no_bridge = sum(v for k, v in counts.items() if k[1] == 0) / n
    assert abs(no_bridge - 0.5) < 4 * np.sqrt(0.25 / n)
    # The test has power: the same counts are rejected against uniform types.
    uniform = {k: 1 / 17 for k in p}
    assert chi_square(counts, uniform, n) > CHI2_16_999
    assert (info["solution_length"] == info["puzzle_type"][:, 0]).all()


def test_layout_follows_section_6():
    vec = BoxWorldVectorEnv(500)
    obs, _ = vec.reset(seed=7)
    core, config = vec.core, vec.config
    key_cells = {r * 9 + c for r, c in config.key_positions}
    for i in range(500):
        puzzle = core.puzzle(i)
        occupied = []
        for box in puzzle.boxes:
            cells = [int(x) for x in core.cells[i, box.slot] if x >= 0]
            occupied += cells
            assert cells[0] in key_cells
            if box.is_gem:
                r, c = box.position
                assert r in (1, 3) and c in (1, 4)  # not the last key row or column
                assert cells == [r * 9 + c, r * 9 + c + 1, (r + 1) * 9 + c, (r + 1) * 9 + c + 1]
                assert tuple(obs[i, r, c]) == tuple(obs[i, r + 1, c]) == GEM_RGB
            elif box.locks:
                assert cells[1] == cells[0] + 1
        assert len(occupied) == len(set(occupied))
        floor = (obs[i, :, :-1] == (199, 199, 199)).all(-1).sum()
        assert floor + len(occupied) + 1 == 63
        colours = [c for b in puzzle.boxes for c in b.locks + (b.key,) if c >= 0]
        a = puzzle.solution_length
        bridge = puzzle.puzzle_type[1] > 0
        # 2a distinct colours; the bridge repeats one lock and one key colour.
        assert len(set(colours)) == 2 * a
        assert len(puzzle.boxes) == 2 * a + 1 + bridge


@pytest.mark.parametrize("mode", ["bridge", "standard"])
def test_every_fresh_puzzle_is_solvable(mode):
    vec = BoxWorldVectorEnv(1500, mode=mode)
    _, info = vec.reset(seed=11)
    assert info["solvable"].all()
    lengths = collections.Counter()
    for i in range(1500):
        puzzle = vec.core.puzzle(i)
        plan = puzzle.solve()
        assert plan is not None, i
        # Each solution path: its loose key and a - 1 boxes; then the Gem box.
        paths = 2 if mode == "bridge" else 1
        assert len(plan) == paths * puzzle.solution_length + 1
        lengths[puzzle.solution_length] += 1
    top = 3 if mode == "bridge" else 5
    assert set(lengths) == set(range(1, top + 1))


def test_standard_distractors_and_branch_length():
    vec = BoxWorldVectorEnv(
        400,
        mode="standard",
        max_solution_length=3,
        min_distractors=2,
        max_distractors=2,
        distractor_length=2,
    )
    vec.reset(seed=3)
    for i in range(400):
        puzzle = vec.core.puzzle(i)
        fatal = [b for b in puzzle.boxes if b.fatal]
        assert len(fatal) == 4
        path_keys = {b.key for b in puzzle.boxes if not b.fatal}
        heads = [b for b in fatal if b.locks[0] in path_keys]
        assert len(heads) == 2  # each branch hangs off the solution path
        plan = puzzle.solve()
        for head in heads:
            # Walk the solution path up to the head's lock key: then opening the head (Section
            # 4.1) makes the Gem unobtainable, while not opening it keeps it obtainable.
            keys = [puzzle.box(s).key for s in plan]
            prefix = plan[: keys.index(head.locks[0]) + 1]
            assert solve(puzzle.remaining(prefix), head.locks) is not None
            assert solve(puzzle.remaining(prefix + (head.slot,)), [head.key]) is None


def test_board_size_is_a_parameter():
    env = BoxWorldEnv(rows=11, cols=12, max_solution_length=4, render_mode="rgb_array")
    obs, info = env.reset(seed=0)
    assert obs.shape == (11, 13, 3) and env.observation_space.shape == (11, 13, 3)
    assert env.puzzle().solve() is not None
    assert BoxWorldConfig.create("bridge", rows=11, cols=12).key_cols == (1, 4, 7, 10)
