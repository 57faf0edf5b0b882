"""Shared helpers for the environment tests."""

import numpy as np
import pytest

from keras_simplicial.envs import BoxWorldConfig, BoxWorldCore
from keras_simplicial.envs.sampling import PuzzleBatch


def hand_made_core(objects, start=(0, 0), mode="bridge", **kwargs):
    """A one-board core holding exactly ``objects``: tuples (locks, key, (row, col), fatal) with
    ``key = "gem"`` for the Gem box (bridge mode: two locks, tiles stacked vertically)."""
    config = BoxWorldConfig.create(mode, **kwargs)
    core = BoxWorldCore(1, config)
    M, cols = core.sampler.num_slots, config.cols
    batch = PuzzleBatch(
        lock=np.full((1, M), -1, np.int16),
        lock2=np.full((1, M), -1, np.int16),
        key=np.full((1, M), -1, np.int16),
        valid=np.zeros((1, M), bool),
        fatal=np.zeros((1, M), bool),
        cells=np.full((1, M, 4), -1, np.int32),
        start=np.asarray([start[0] * cols + start[1]], np.int32),
        solution_length=np.ones(1, np.int16),
        puzzle_type=np.asarray([[1, 0, 0]], np.int16),
    )
    for slot, (locks, key, (r, c), fatal) in enumerate(objects):
        cell = r * cols + c
        batch.valid[0, slot] = True
        batch.fatal[0, slot] = fatal
        batch.key[0, slot] = config.num_colours if key == "gem" else key
        if locks:
            batch.lock[0, slot] = locks[0]
            batch.cells[0, slot, :2] = (cell, cell + 1)
        else:
            batch.cells[0, slot, 0] = cell
        if len(locks) == 2:
            batch.lock2[0, slot] = locks[1]
            batch.cells[0, slot, 2:] = (cell + cols, cell + cols + 1)
    core.load(np.asarray([0]), batch)
    return core


def step(core, *actions):
    """Step a one-board core without autoreset; returns the list of (reward, terminated)."""
    out = []
    for a in actions:
        reward, terminated, _, _ = core.step(np.asarray([a]), autoreset=False)
        out.append((float(reward[0]), bool(terminated[0])))
    return out


@pytest.fixture
def hand_made():
    return hand_made_core


@pytest.fixture
def step_core():
    return step
