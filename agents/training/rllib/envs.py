"""BoxWorld for RLlib: the env ids registered with RLlib's env creator, and the batched core as an
RLlib `VectorEnv` (old API stack).

RLlib's default path builds `num_envs_per_env_runner` separate gymnasium envs (`make_env`, what
`register_envs` registers) and steps them one by one in Python; `BoxWorldRLlibVectorEnv` holds all
of a runner's boards in one `BoxWorldVectorEnv` (one numpy core). RLlib's own sampler can drive
it (it resets finished boards with `reset_at`), and `BatchedEnvRunner` (`batched_env_runner.py`)
steps its core directly.
"""

import gymnasium
import numpy as np
import tensorflow  # noqa: F401  (before RLlib: see agents/__init__.py)
from gymnasium.utils import seeding
from ray.rllib.env.vector_env import VectorEnv
from ray.tune.registry import register_env

from keras_simplicial.envs import ENV_IDS, make_vector_env


def make_env(env_config):
    """RLlib env creator: a gymnasium env of `keras_simplicial.envs` built from `env_config`.

    `env_config["env_id"]` names the registered id; every other key is a constructor argument.
    """
    kwargs = dict(env_config)
    env_id = kwargs.pop("env_id")
    return gymnasium.make(env_id, **kwargs)


def register_envs():
    """Makes every id of `ENV_IDS` known to RLlib (the creator runs inside each env runner)."""
    for env_id in ENV_IDS:
        register_env(
            env_id,
            lambda env_config, env_id=env_id: make_env({**dict(env_config), "env_id": env_id}),
        )


def validate_env_config(env_id, env_config):
    """Builds the env once in this process so that bad arguments fail here, with their message."""
    if env_id not in ENV_IDS:
        raise ValueError(f"env must be one of {ENV_IDS}, got {env_id!r}.")
    env = gymnasium.make(env_id, **dict(env_config or {}))
    env.close()


class BoxWorldRLlibVectorEnv(VectorEnv):
    """`num_envs` boards of `env_id` stepped as one batch, without autoreset.

    A board whose episode ended stays as it ended until `reset_at` (RLlib's sampler calls it
    before the board's next step). Observations are uint8 `(rows, cols + 1, 3)`; infos are the
    single env's (`puzzle_type`, `solvable`, `is_success`, `solution_length`).
    """

    def __init__(self, env_id, num_envs, env_config=None):
        self.vector_env = make_vector_env(env_id, num_envs, env_config, copy=False)
        self.core = self.vector_env.core
        super().__init__(
            self.vector_env.single_observation_space,
            self.vector_env.single_action_space,
            self.core.num_boards,
        )

    def vector_reset(self, *, seeds=None, options=None):
        seeds = [None] * self.num_envs if seeds is None else list(seeds)
        for index, seed in enumerate(seeds):
            if seed is not None:
                self.core.seed(index, seeding.np_random(seed)[0])
        self.core.reset_boards()
        return list(self.core.obs.copy()), [self._info(i) for i in range(self.num_envs)]

    def reset_at(self, index=None, *, seed=None, options=None):
        index = 0 if index is None else int(index)
        if seed is not None:
            self.core.seed(index, seeding.np_random(seed)[0])
        self.core.reset_boards([index])
        return self.core.obs[index].copy(), self._info(index)

    def restart_at(self, index=None):
        self.reset_at(index)

    def vector_step(self, actions):
        reward, terminated, truncated, _ = self.core.step(np.asarray(actions), autoreset=False)
        return (
            list(self.core.obs.copy()),
            reward.tolist(),
            terminated.tolist(),
            truncated.tolist(),
            [self._info(i) for i in range(self.num_envs)],
        )

    def get_sub_environments(self):
        return []

    def _info(self, index):
        core = self.core
        return {
            "puzzle_type": tuple(int(v) for v in core.puzzle_type[index]),
            "solvable": bool(core.solvable[index]),
            "is_success": bool(core.is_success[index]),
            "solution_length": int(core.solution_length[index]),
            "ended_by": core.outcome(index),
        }
