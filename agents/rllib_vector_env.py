"""The batched BoxWorld core as an RLlib `VectorEnv` (old API stack): one call steps every board.

RLlib's default path builds `num_envs_per_env_runner` separate gymnasium envs and steps them one
by one in Python; this `VectorEnv` holds all of a runner's boards in one `BoxWorldVectorEnv`
(one numpy core). RLlib's own sampler can drive it (it resets finished boards with `reset_at`),
and `BatchedEnvRunner` (`batched_env_runner.py`) steps its core directly.
"""

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from ray.rllib.env.vector_env import VectorEnv

import keras_simplicial.envs  # noqa: F401  (registers the env ids)
from keras_simplicial.envs import BoxWorldVectorEnv


def make_boxworld_vector_env(env_id, num_envs, env_config=None):
    """A `BoxWorldVectorEnv` of `num_envs` boards of the registered `env_id`."""
    if env_id not in keras_simplicial.envs.ENV_IDS:
        raise ValueError(f"env must be one of {keras_simplicial.envs.ENV_IDS}, got {env_id!r}.")
    kwargs = {**gymnasium.spec(env_id).kwargs, **dict(env_config or {})}
    return BoxWorldVectorEnv(int(num_envs), copy=False, **kwargs)


class BoxWorldRLlibVectorEnv(VectorEnv):
    """`num_envs` boards of `env_id` stepped as one batch, without autoreset.

    A board whose episode ended stays as it ended until `reset_at` (RLlib's sampler calls it
    before the board's next step). Observations are uint8 `(rows, cols + 1, 3)`; infos are the
    single env's (`puzzle_type`, `solvable`, `is_success`, `solution_length`).
    """

    def __init__(self, env_id, num_envs, env_config=None):
        self.vector_env = make_boxworld_vector_env(env_id, num_envs, env_config)
        self.core = self.vector_env.core
        super().__init__(self.vector_env.single_observation_space,
                         self.vector_env.single_action_space, self.core.n)

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
        return (list(self.core.obs.copy()), reward.tolist(), terminated.tolist(),
                truncated.tolist(), [self._info(i) for i in range(self.num_envs)])

    def get_sub_environments(self):
        return []

    def _info(self, index):
        core = self.core
        return {"puzzle_type": tuple(int(v) for v in core.puzzle_type[index]),
                "solvable": bool(core.solvable[index]),
                "is_success": bool(core.is_success[index]),
                "solution_length": int(core.solution_length[index])}
