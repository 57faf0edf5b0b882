"""The inventory probe: a policy blind to the inventory shows no change, one that reads it does,
and the states at the Gem box are those where one of its two keys is held."""

import numpy as np
import pytest

import keras_simplicial.envs  # noqa: F401  (registers the ids)
from keras_simplicial.agents.analysis.inventory_probe import (
    _first_empty,
    _held_states,
    _with_inventory,
    inventory_probe,
)
from keras_simplicial.envs import make_vector_env
from keras_simplicial.envs.palette import EMPTY_SLOT_RGB

MEDIUM = {"rows": 7, "cols": 6, "min_solution_length": 1, "max_solution_length": 2}
RNG = np.random.default_rng(0)
BOARD = RNG.normal(size=(7 * 6 * 3, 4)) * 0.05  # nearly uniform: the walk finds keys
INVENTORY = RNG.normal(size=(7 * 3, 4))


def board_only(observations):
    """A fixed function of the board that never looks at the inventory column."""
    board = observations[:, :, :-1].reshape(len(observations), -1) / 255.0
    return board @ BOARD


def reads_inventory(observations):
    inventory = observations[:, :, -1].reshape(len(observations), -1) / 255.0
    return board_only(observations) + inventory @ INVENTORY


def probe(policy):
    return inventory_probe(
        policy, "BridgeBoxWorld-v0", {**MEDIUM, "max_steps": 150}, episodes=24, num_envs=8
    )


def test_a_policy_blind_to_the_inventory_does_not_change():
    result = probe(board_only)
    assert result.states > 100 and result.gem_box_states > 0
    no_change = {"total_variation": 0.0, "greedy_changed": 0.0}
    assert result.emptied == no_change and result.recoloured == no_change
    walks = result.walks_into_gem_box
    assert walks["as_seen"] == walks["emptied"] == walks["both_keys"]
    assert "distinct states holding a key" in result.to_markdown()


def test_a_policy_that_reads_the_inventory_changes():
    result = probe(reads_inventory)
    assert result.emptied["total_variation"] > 0.01 and result.emptied["greedy_changed"] > 0
    assert result.recoloured["total_variation"] > 0.01
    assert result.walks_into_gem_box["as_seen"] != result.walks_into_gem_box["both_keys"]
    assert result.to_dict()["states"] == result.states


def test_the_gem_box_states_hold_one_of_its_keys_and_both_keys_adds_the_other():
    config = {**MEDIUM, "max_steps": 150}
    colour_rgb = make_vector_env("BridgeBoxWorld-v0", 1, config).core.colour_rgb
    states = _held_states(
        board_only, 10_000, env_id="BridgeBoxWorld-v0", env_config=config, episodes=24, num_envs=8
    )
    distinct = {state.observation.tobytes() for state in states}
    assert len(distinct) == len(states)
    at_gem = [state for state in states if state.gem_push >= 0]
    assert at_gem
    for state in states:
        for slot, colour in state.held.items():
            assert tuple(state.observation[slot, -1]) == tuple(colour_rgb[colour])
        assert not set(state.free_colours) & set(state.held.values())
    for state in at_gem:
        assert state.missing >= 0 and state.missing not in state.held.values()
        both = _with_inventory(
            state.observation, {**state.held, _first_empty(state): state.missing}, colour_rgb
        )
        shown = {tuple(rgb) for rgb in both[:, -1]} - {EMPTY_SLOT_RGB}
        assert tuple(colour_rgb[state.missing]) in shown
        assert len(shown) == len(set(state.held.values())) + 1


def test_no_key_held_is_named():
    with pytest.raises(ValueError, match="no state with a key held"):
        inventory_probe(board_only, "BridgeBoxWorld-v0", {**MEDIUM, "max_steps": 1}, episodes=2)
