"""Key colours permuted: a state of the same environment with the same optimal actions."""

import dataclasses

import numpy as np
import pytest

from keras_simplicial.agents.imitation.colour_permutation import key_palette, permute_key_colours
from keras_simplicial.agents.training.presets import PRESETS
from keras_simplicial.envs import make_vector_env
from keras_simplicial.envs.step_oracle import StepOracle, optimal_action_mask

ENV_ID = PRESETS["bridge-medium"]["env"]
ENV_CONFIG = PRESETS["bridge-medium"]["env_config"]


class FixedRenaming:
    """Stands in for the generator: every state gets `renaming` (palette index -> new index)."""

    def __init__(self, renaming):
        self.renaming = np.asarray(renaming)

    def permuted(self, rows, axis):
        return np.tile(self.renaming, (len(rows), 1))


def test_a_renamed_state_is_the_renamed_puzzle_s_state_with_the_same_optimal_moves():
    boards = np.arange(6)
    original = make_vector_env(ENV_ID, len(boards), ENV_CONFIG, copy=False).core
    renamed = make_vector_env(ENV_ID, len(boards), ENV_CONFIG, copy=False).core
    palette = key_palette(ENV_ID, ENV_CONFIG)
    assert len(palette) == original.gem == 20
    puzzles = original.sampler.sample(
        np.random.default_rng(3).random((6, original.sampler.block_size))
    )
    renaming = np.random.default_rng(4).permutation(len(palette))
    # The Gem (index num_colours) and the padding (-1) keep their values.
    lookup = np.concatenate([renaming, [original.gem, -1]]).astype(np.int16)
    renamed_puzzles = dataclasses.replace(
        puzzles, **{name: lookup[getattr(puzzles, name)] for name in ("lock", "lock2", "key")}
    )
    original.load(boards, puzzles)
    renamed.load(boards, renamed_puzzles)
    oracles = [StepOracle(original, int(b)) for b in boards]
    renamed_oracles = [StepOracle(renamed, int(b)) for b in boards]
    held_keys = 0
    for _ in range(8):  # along the oracle's path: keys enter and leave the inventory
        np.testing.assert_array_equal(
            permute_key_colours(original.obs, palette, FixedRenaming(renaming)), renamed.obs
        )
        optimal = optimal_action_mask(original, boards, oracles)
        np.testing.assert_array_equal(
            optimal, optimal_action_mask(renamed, boards, renamed_oracles)
        )
        actions = np.argmax(optimal, axis=1)
        original.step(actions, autoreset=False)
        renamed.step(actions, autoreset=False)
        held_keys += int((original.inventory >= 0).sum())
    assert held_keys > 0


def test_each_state_gets_its_own_permutation_and_every_other_pixel_stays():
    core = make_vector_env(ENV_ID, 64, ENV_CONFIG, copy=False).core
    core.reset_boards()
    palette = key_palette(ENV_ID, ENV_CONFIG)
    states = core.obs.copy()
    permuted = permute_key_colours(states, palette, np.random.default_rng(0))
    assert permuted.shape == states.shape and permuted.dtype == np.uint8
    np.testing.assert_array_equal(states, core.obs)  # a new array; the input is left as it was
    codes = {tuple(colour) for colour in palette}
    changed = 0
    for before, after in zip(states.reshape(64, -1, 3), permuted.reshape(64, -1, 3)):
        is_key = np.array([tuple(p) in codes for p in before])
        np.testing.assert_array_equal(before[~is_key], after[~is_key])
        assert all(tuple(p) in codes for p in after[is_key])
        pairs = {(tuple(b), tuple(a)) for b, a in zip(before[is_key], after[is_key])}
        assert len({b for b, _ in pairs}) == len({a for _, a in pairs}) == len(pairs)  # a bijection
        changed += any(b != a for b, a in pairs)
    assert changed >= 60  # a fixed point of every colour a state shows is rare
    again = permute_key_colours(states, palette, np.random.default_rng(0))
    np.testing.assert_array_equal(permuted, again)
    assert not np.array_equal(
        permuted[0], permute_key_colours(states[:1], palette, np.random.default_rng(1))[0]
    )


def test_bad_shapes_and_a_palette_with_repeated_colours_are_refused():
    palette = key_palette(ENV_ID, ENV_CONFIG)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"observations must be \[N, rows, cols \+ 1, 3\]"):
        permute_key_colours(np.zeros((7, 7, 3), np.uint8), palette, rng)
    with pytest.raises(ValueError, match=r"palette must be \[K, 3\]"):
        permute_key_colours(np.zeros((1, 7, 7, 3), np.uint8), palette[:, :2], rng)
    with pytest.raises(ValueError, match="distinct colours"):
        permute_key_colours(np.zeros((1, 7, 7, 3), np.uint8), palette[[0, 0, 1]], rng)
