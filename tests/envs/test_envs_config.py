"""Invalid arguments raise ValueError naming the argument and the accepted values."""

import gymnasium as gym
import numpy as np
import pytest

from keras_simplicial.envs import (
    EPISODE_STEP_LIMIT,
    BoxWorldEnv,
    BoxWorldVectorEnv,
    episode_step_limit,
    make_vector_env,
)

CASES = [
    (dict(mode="tetris"), "mode must be one of"),
    (dict(rows=2), "rows must be an int >= 3"),
    (dict(cols="9"), "cols must be an int"),
    (dict(min_solution_length=0), "min_solution_length must be an int >= 1"),
    (dict(min_solution_length=3, max_solution_length=2), "min_solution_length .* <= max_solution"),
    (dict(max_solution_length=4), "too many objects .* max_solution_length"),
    (dict(bridge_probability=1.5), r"bridge_probability must be a float in \[0, 1\]"),
    (dict(max_distractors=2), "max_distractors must be 0 in mode='bridge'"),
    (dict(mode="standard", bridge_probability=0.5), "bridge_probability must be 0"),
    (dict(mode="standard", max_distractors=9), "too many objects .* max_distractors"),
    (dict(mode="standard", min_distractors=3, max_distractors=1), "min_distractors"),
    (dict(mode="standard", distractor_length=0), "distractor_length must be an int >= 1"),
    (dict(num_colours=5), "num_colours=5 is too small"),
    (dict(num_colours=0), "num_colours must be an int"),
    (dict(max_steps=0), "max_steps must be an int >= 1"),
    (dict(random_start="yes"), "random_start must be a bool"),
    (dict(blocked_move_reward=0.5), r"blocked_move_reward must be a float in \[-10, 0\]"),
    (dict(blocked_move_reward=float("nan")), "blocked_move_reward must be a float"),
    (dict(blocked_move_reward="-1"), "blocked_move_reward must be a float"),
    (dict(rows=4, cols=9), "no place for the Gem box"),
    (dict(render_mode="human"), "render_mode must be None or one of"),
    (dict(tile_size=0), "tile_size must be an int >= 1"),
    (dict(colours=5), r"unknown BoxWorld argument\(s\) \['colours'\]; accepted: .*'num_colours'"),
]


@pytest.mark.parametrize("kwargs, message", CASES)
def test_invalid_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BoxWorldEnv(**kwargs)
    with pytest.raises(ValueError, match=message):
        BoxWorldVectorEnv(2, **kwargs)


def test_valid_edge_cases_construct():
    BoxWorldEnv(max_solution_length=3, bridge_probability=1.0)
    BoxWorldEnv(bridge_probability=np.float32(0.5))  # a float, as blocked_move_reward takes it
    BoxWorldEnv(mode="standard", max_solution_length=5, max_distractors=6)  # 12 objects fit
    BoxWorldEnv(max_solution_length=4, rows=9)  # 10 objects on 4x3
    with pytest.raises(ValueError, match="num_envs|num_boards"):
        BoxWorldVectorEnv(0)
    vec = BoxWorldVectorEnv(2)
    with pytest.raises(ValueError, match="seed"):
        vec.reset(seed=[1, 2, 3])
    for seed in (True, 1.5):
        with pytest.raises(ValueError, match="seed must be None, an int or a list"):
            vec.reset(seed=seed)


def test_single_and_vector_env_take_the_same_arguments():
    arguments = dict(
        mode="standard",
        rows=5,
        cols=6,
        max_solution_length=2,
        max_distractors=1,
        num_colours=7,
        max_steps=9,
        random_start=True,
        blocked_move_reward=-0.5,
    )
    assert BoxWorldEnv(**arguments).config == BoxWorldVectorEnv(3, **arguments).config
    easy = {"rows": 3, "cols": 6, "max_solution_length": 1, "max_distractors": 0}
    assert (
        gym.make("BoxWorld-v0", **easy).unwrapped.config
        == make_vector_env("BoxWorld-v0", 2, easy).config
    )


def test_make_vector_env_names_the_ids():
    with pytest.raises(ValueError, match="env must be one of .*BridgeBoxWorld-v0"):
        make_vector_env("CartPole-v1", 2)


def test_episode_step_limit_prefers_the_caller_then_the_env():
    assert episode_step_limit({"max_steps": 30}, max_steps=7) == 7
    assert episode_step_limit({"max_steps": 30}) == 30
    assert episode_step_limit({}) == episode_step_limit(None) == EPISODE_STEP_LIMIT == 500
