"""The held-keys probe: two keys held either way, the Gem's pair or not, colour pairs held out."""

import inspect
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from keras_simplicial.agents.imitation.held_keys import (  # noqa: E402
    SPLITS,
    TEST_SEED,
    _Probe,
    held_keys_curve,
    held_keys_states,
    held_out_pairs,
)
from keras_simplicial.agents.imitation.plateau import PlateauSchedule  # noqa: E402
from keras_simplicial.envs import make_vector_env  # noqa: E402
from keras_simplicial.envs.palette import EMPTY_SLOT_RGB  # noqa: E402

MEDIUM = {"rows": 7, "cols": 6, "max_solution_length": 2}
# XLA compiled the model in each training test (about half of each one's time on a slow machine);
# these check the probe, not the compiler (the compiled model: tests/agents/model).
NO_XLA = {"jit_compile": False}


def gem_colours_of(observation, colour_rgb):
    """The colours of the Gem box's two lock tiles, read off the board (the white-keyed box)."""
    gem = make_vector_env("BridgeBoxWorld-v0", 1, MEDIUM).core.colour_rgb[-1]
    board = observation[:, :-1]
    rows, cols = np.nonzero((board == gem).all(axis=-1))
    locks = [tuple(board[r, c + 1]) for r, c in zip(rows, cols)]
    return {int(np.flatnonzero((colour_rgb == lock).all(axis=1))[0]) for lock in locks}


@pytest.mark.parametrize("split", list(SPLITS))
def test_every_state_holds_two_keys_and_is_labelled_by_the_gem_locks(split):
    pairs = held_out_pairs(20, 0.2, seed=0)
    observations, labels = held_keys_states(
        "BridgeBoxWorld-v0", MEDIUM, 60, held_out=pairs, split=split, seed=0
    )
    test = split == "held-out-pairs"
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


def test_the_splits_are_different_boards():
    pairs = held_out_pairs(20, 0.2, seed=0)
    train, seen = (
        held_keys_states("BridgeBoxWorld-v0", MEDIUM, 40, held_out=pairs, split=s, seed=0)[0]
        for s in ("train", "seen-pairs")
    )
    boards = {o[:, :-1].tobytes() for o in train}
    assert not boards & {o[:, :-1].tobytes() for o in seen}
    with pytest.raises(ValueError, match="split must be one of"):
        held_keys_states("BridgeBoxWorld-v0", MEDIUM, 4, held_out=pairs, split="test", seed=0)


def test_the_probe_memorises_a_small_training_set_to_a_plateau():
    """The probe can succeed: on 64 states a fresh model fits its training set (the check that
    the first version, a fixed 3,000 updates, failed at any size)."""
    from keras_simplicial.agents.training.run_arguments import RunArguments

    pairs = held_out_pairs(20, 0.2, seed=0)
    x, y = held_keys_states("BridgeBoxWorld-v0", MEDIUM, 64, held_out=pairs, split="train", seed=0)
    arguments = RunArguments(env="BridgeBoxWorld-v0", agent="relational", model_overrides=NO_XLA)
    probe = _Probe(arguments, x.shape[1:], PlateauSchedule(max_updates=3000), seed=[0, 64])
    fit = probe.fit_to_plateau(x, y)
    assert probe.accuracy(x, y) >= 0.95 and fit["train_loss"] < 0.2, fit


def test_the_plateau_rule_halves_and_stops():
    """A model that cannot learn (labels at random) stops by the halvings, not the cap."""
    from keras_simplicial.agents.training.run_arguments import RunArguments

    pairs = held_out_pairs(20, 0.2, seed=0)
    x, _ = held_keys_states("BridgeBoxWorld-v0", MEDIUM, 32, held_out=pairs, split="train", seed=0)
    y = np.full(len(x), 0.5, np.float32)  # the best loss is log 2, reached at once
    arguments = RunArguments(env="BridgeBoxWorld-v0", agent="relational", model_overrides=NO_XLA)
    schedule = PlateauSchedule(max_updates=10_000, check_every=5, patience=2, halvings=2)
    fit = _Probe(arguments, x.shape[1:], schedule, seed=[0, 1]).fit_to_plateau(x, y)
    assert fit["halvings"] == 2 and fit["updates"] < 10_000, fit
    with pytest.raises(ValueError, match="patience must be a positive integer"):
        PlateauSchedule(patience=0)
    with pytest.raises(ValueError, match="halvings must be a positive integer"):
        PlateauSchedule(halvings=0)


def test_a_curve_trains_a_model_per_size():
    schedule = PlateauSchedule(max_updates=3, check_every=1)
    curve = held_keys_curve(
        "relational",
        "BridgeBoxWorld-v0",
        MEDIUM,
        sizes=(8, 16),
        test_size=16,
        schedule=schedule,
        model_overrides=NO_XLA,
    )
    assert [point["size"] for point in curve.points] == [8, 16]
    for point in curve.points:
        assert point["updates"] <= 3 and point["starts"] == 1  # no flat_loss: one start
        for name in ("train_accuracy", "seen_pairs_accuracy", "test_accuracy"):
            assert 0.0 <= point[name] <= 1.0
        assert point["fitted"] == (point["train_accuracy"] >= 0.95)
    assert "held-keys probe" in curve.to_markdown()
    assert curve.to_dict()["schedule"]["max_updates"] == 3
    assert (
        "| examples | starts | updates | left log 2 at | train loss | train |"
        in curve.to_markdown()
    )
    with pytest.raises(ValueError, match="needs bridge BoxWorld"):
        held_keys_curve("relational", "BoxWorld-v0", {}, sizes=(8,), test_size=4)
    with pytest.raises(ValueError, match="sizes must be integers >= 2"):
        held_keys_curve("relational", "BridgeBoxWorld-v0", MEDIUM, sizes=())


def test_the_command_prints_and_saves_the_curve(tmp_path, capsys):
    import json

    import keras_simplicial_cli as cli

    output = tmp_path / "curve.json"
    argv = ["held-keys", "--sizes", "8", "--max-updates", "2", "--output", str(output)]
    argv += ["--flat-updates", "1", "--starts", "2", "--test-size", "16"]
    argv += ["--model-config", json.dumps(NO_XLA)]
    assert cli.main(argv) == 0
    assert "held-keys probe" in capsys.readouterr().out
    saved = json.loads(output.read_text())
    assert saved["points"][0]["size"] == 8 and saved["points"][0]["starts"] <= 2
    assert saved["schedule"]["flat_updates"] == 1 and saved["schedule"]["starts"] == 2
    # Without --test-size the command tests as many states as held_keys_curve does.
    from keras_simplicial.agents.commands import inspection

    default = inspect.signature(held_keys_curve).parameters["test_size"].default
    assert inspection.HELD_KEYS_TEST_SIZE == default
