"""The held-keys probe: two keys held either way, the Gem's pair or not, colour pairs held out."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from keras_simplicial.agents.imitation.held_keys import (  # noqa: E402
    TEST_SEED,
    held_keys_curve,
    held_keys_states,
    held_out_pairs,
)
from keras_simplicial.envs import make_vector_env  # noqa: E402
from keras_simplicial.envs.palette import EMPTY_SLOT_RGB  # noqa: E402

MEDIUM = {"rows": 7, "cols": 6, "max_solution_length": 2}


def gem_colours_of(observation, colour_rgb):
    """The colours of the Gem box's two lock tiles, read off the board (the white-keyed box)."""
    gem = make_vector_env("BridgeBoxWorld-v0", 1, MEDIUM).core.colour_rgb[-1]
    board = observation[:, :-1]
    rows, cols = np.nonzero((board == gem).all(axis=-1))
    locks = [tuple(board[r, c + 1]) for r, c in zip(rows, cols)]
    return {int(np.flatnonzero((colour_rgb == lock).all(axis=1))[0]) for lock in locks}


@pytest.mark.parametrize("test", [False, True])
def test_every_state_holds_two_keys_and_is_labelled_by_the_gem_locks(test):
    pairs = held_out_pairs(20, 0.2, seed=0)
    observations, labels = held_keys_states(
        "BridgeBoxWorld-v0", MEDIUM, 60, held_out=pairs, test=test, seed=0
    )
    colour_rgb = make_vector_env("BridgeBoxWorld-v0", 1, MEDIUM).core.colour_rgb
    assert labels.mean() == 0.5
    for observation, label in zip(observations, labels):
        inventory = observation[:, -1]
        shown = inventory[~(inventory == EMPTY_SLOT_RGB).all(axis=1)]
        held = {int(np.flatnonzero((colour_rgb == c).all(axis=1))[0]) for c in shown}
        assert len(shown) == 2
        gem = gem_colours_of(observation, colour_rgb)
        assert len(gem) == 2 and (tuple(sorted(gem)) in pairs) == test
        assert len(held & gem) == (2 if label else 1)


def test_held_out_pairs_are_a_share_of_all_pairs():
    pairs = held_out_pairs(20, 0.2, seed=1)
    assert len(pairs) == 38 and all(a < b < 20 for a, b in pairs)
    assert pairs == held_out_pairs(20, 0.2, seed=1) != held_out_pairs(20, 0.2, seed=2)
    assert TEST_SEED > 1_000_000


def test_a_curve_trains_a_model_per_size():
    curve = held_keys_curve(
        "relational", "BridgeBoxWorld-v0", MEDIUM, sizes=(8, 16), test_size=16, updates=3
    )
    assert [point["size"] for point in curve.points] == [8, 16]
    assert all(0.0 <= point["test_accuracy"] <= 1.0 for point in curve.points)
    assert "held-keys probe" in curve.to_markdown() and curve.to_dict()["updates"] == 3
    assert "| examples | train | held-out | seconds |" in curve.to_markdown()
    with pytest.raises(ValueError, match="needs bridge BoxWorld"):
        held_keys_curve("relational", "BoxWorld-v0", {}, sizes=(8,), test_size=4, updates=1)
    with pytest.raises(ValueError, match="sizes must be integers >= 2"):
        held_keys_curve("relational", "BridgeBoxWorld-v0", MEDIUM, sizes=())


def test_the_command_prints_and_saves_the_curve(tmp_path, capsys):
    import json

    import keras_simplicial_cli as cli

    output = tmp_path / "curve.json"
    argv = ["held-keys", "--sizes", "8", "--updates", "2", "--output", str(output)]
    assert cli.main(argv) == 0
    assert "held-keys probe" in capsys.readouterr().out
    assert json.loads(output.read_text())["points"][0]["size"] == 8
