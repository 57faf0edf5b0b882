"""Registration, spaces, gymnasium's env checker, infos and rendering."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import keras_simplicial.envs as envs
from keras_simplicial.envs import PALETTE, BoxWorldEnv, BoxWorldVectorEnv

IDS = ["BridgeBoxWorld-v0", "BoxWorld-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    check_env(env.unwrapped, skip_render_check=False)


@pytest.mark.parametrize(
    "env_id, shape", [("BridgeBoxWorld-v0", (7, 10, 3)), ("BoxWorld-v0", (9, 10, 3))]
)
def test_make_and_make_vec(env_id, shape):
    env = gym.make(env_id)
    assert env.observation_space == gym.spaces.Box(0, 255, shape, np.uint8)
    assert env.action_space == gym.spaces.Discrete(4)
    obs, info = env.reset(seed=3)
    assert obs.shape == shape and obs.dtype == np.uint8
    assert set(info) >= {"puzzle_type", "solvable", "is_success", "solution_length", "ended_by"}
    assert info["ended_by"] is None
    vec = gym.make_vec(env_id, num_envs=5, vectorization_mode="vector_entry_point")
    assert isinstance(vec, BoxWorldVectorEnv)
    assert vec.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = vec.reset(seed=3)
    assert obs.shape == (5,) + shape
    assert info["puzzle_type"].shape == (5, 3) and info["_puzzle_type"].all()
    obs, reward, terminated, truncated, info = vec.step(vec.action_space.sample())
    assert reward.shape == terminated.shape == truncated.shape == (5,)
    assert {"solvable", "_solvable", "is_success", "_is_success", "solution_length"} <= set(info)
    assert info["ended_by"].shape == (5,) and set(info["ended_by"]) <= {-1, 0, 1, 2, 3}


def test_make_vec_passes_kwargs():
    vec = gym.make_vec(
        "BridgeBoxWorld-v0",
        num_envs=2,
        vectorization_mode="vector_entry_point",
        max_solution_length=1,
        max_steps=5,
    )
    vec.reset(seed=0)
    assert vec.config.mode == "bridge" and vec.config.max_solution_length == 1
    truncated = np.zeros(2, bool)
    for _ in range(5):
        *_, truncated, _ = vec.step(np.zeros(2, int))
    assert truncated.all()  # always pushing left against the wall from (0, 0)


def test_defaults_match_the_paper():
    env = BoxWorldEnv()
    c = env.config
    assert (c.mode, c.rows, c.cols, c.min_solution_length, c.max_solution_length) == (
        "bridge",
        7,
        9,
        1,
        3,
    )
    assert (c.bridge_probability, c.num_colours, c.max_steps, c.random_start) == (
        0.5,
        20,
        None,
        False,
    )
    assert c.key_positions == tuple((r, q) for r in (1, 3, 5) for q in (1, 4, 7))
    s = BoxWorldEnv(mode="standard").config
    assert (
        s.rows,
        s.cols,
        s.min_solution_length,
        s.max_solution_length,
        s.min_distractors,
        s.max_distractors,
    ) == (9, 9, 1, 5, 0, 4)
    obs, _ = env.reset(seed=0)
    assert tuple(obs[0, 0]) == (127, 127, 127)  # player at (0, 0)
    assert (obs[:, -1] == (10, 10, 10)).all()  # empty inventory
    assert tuple(obs[6, 0]) == (199, 199, 199)


def test_palette_is_the_papers_hsv_circle():
    import colorsys

    assert PALETTE.shape == (20, 3) and PALETTE.dtype == np.uint8
    for k in (0, 7, 19):
        expected = np.rint(np.asarray(colorsys.hsv_to_rgb(18 * k / 360, 0.7, 0.8)) * 255)
        assert tuple(PALETTE[k]) == tuple(expected.astype(int))
    assert len({tuple(p) for p in PALETTE}) == 20


def test_rendering_shapes_and_modes():
    env = BoxWorldEnv(render_mode="rgb_array", tile_size=8)
    obs, _ = env.reset(seed=1)
    frame = env.render()
    assert frame.shape == (56, 80, 3) and frame.dtype == np.uint8
    assert (frame[8:16, 16:24] == obs[1, 2]).all()  # crisp nearest-neighbour tile
    text = BoxWorldEnv(render_mode="ansi")
    text.reset(seed=1)
    out = text.render()
    assert out.count("\n") == 7 + 1 and "inventory" in out and "\x1b[48;2;127;127;127m" in out
    vec = BoxWorldVectorEnv(2, render_mode="rgb_array", tile_size=4)
    vec.reset(seed=0)
    assert [f.shape for f in vec.render()] == [(28, 40, 3)] * 2
    assert BoxWorldEnv().render() is None


def test_public_api_names():
    for name in (
        "BoxWorldEnv",
        "BoxWorldVectorEnv",
        "BoxWorldCore",
        "BoxWorldConfig",
        "PALETTE",
        "solve",
        "proof_tree",
        "source_sink",
        "Puzzle",
        "Sequent",
        "ENV_IDS",
    ):
        assert hasattr(envs, name), name
    assert envs.ENV_IDS == ("BridgeBoxWorld-v0", "BoxWorld-v0")
