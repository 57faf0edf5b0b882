"""``BoxWorldVectorEnv``: many boards as a native ``gymnasium.vector.VectorEnv`` (the batched core).

Autoreset follows gymnasium's ``AutoresetMode.NEXT_STEP``: the step that ends an episode returns
its last observation and info (puzzle type, ``is_success`` of the finished episode, ``ended_by``:
an index of ``OUTCOMES``, -1 while the episode plays); the next call
to `step()` resets that board, ignoring its action. Board ``i`` of ``reset(seed=s)`` plays the
same episodes as ``BoxWorldEnv().reset(seed=s + i)`` followed by seedless resets.
"""

from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .config import BoxWorldConfig
from .core import BoxWorldCore
from .rendering import DEFAULT_TILE_SIZE, ansi, upscale
from .single_env import RENDER_MODES, check_rendering

INFO_KEYS = ("puzzle_type", "solvable", "is_success", "solution_length", "ended_by")


class BoxWorldVectorEnv(VectorEnv):
    """``num_envs`` boards of (bridge) BoxWorld stepped as one batch.

    The other arguments are those of `.single_env.BoxWorldEnv`, and so are the spaces of
    one board, the rewards and the episode ends. ``copy`` (default True): return a copy of the
    observation buffer; ``False`` returns the persistent buffer itself, which the next step
    overwrites.
    Info arrays: ``puzzle_type`` ``(n, 3)``, ``solvable``, ``is_success``, ``solution_length``
    and ``ended_by`` ``(n,)``, each with its ``_key`` mask (all True).
    """

    metadata = {
        "render_modes": list(RENDER_MODES),
        "render_fps": 8,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        mode: str = "bridge",
        *,
        render_mode: Optional[str] = None,
        tile_size: int = DEFAULT_TILE_SIZE,
        copy: bool = True,
        **arguments,
    ):
        self.config = BoxWorldConfig.create(mode, **arguments)
        self.core = BoxWorldCore(num_envs, self.config)
        self.num_envs = self.core.num_boards
        self.render_mode, self.tile_size = check_rendering(render_mode, tile_size)
        self.copy = bool(copy)
        self.single_observation_space = gym.spaces.Box(
            0, 255, (self.config.rows, self.config.cols + 1, 3), np.uint8
        )
        self.single_action_space = gym.spaces.Discrete(4)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._mask = np.ones(self.num_envs, bool)

    def reset(self, *, seed=None, options: Optional[dict] = None):
        """Reset every board. ``seed``: ``None`` (continue each board's generator), an int ``s``
        (board ``i`` gets ``s + i``) or a list of ``num_envs`` ints/``None``."""
        if seed is None:
            seeds = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            if isinstance(seed, bool) or not hasattr(seed, "__iter__"):
                raise ValueError(
                    f"seed must be None, an int or a list of num_envs={self.num_envs} seeds, "
                    f"got {seed!r}"
                )
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(
                    f"seed must be None, an int or a list of num_envs={self.num_envs}"
                    f" seeds, got {len(seeds)} seeds"
                )
        super().reset(seed=seed if isinstance(seed, (int, np.integer)) else None)
        for i, s in enumerate(seeds):
            if s is not None or self.core.rngs[i] is None:
                self.core.seed(i, seeding.np_random(s)[0])
        self.core.reset_boards()
        return self._observation(), self._info()

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        reward, terminated, truncated, _ = self.core.step(actions)
        return self._observation(), reward, terminated, truncated, self._info()

    def render(self):
        obs = self.core.obs
        if self.render_mode == "rgb_array":
            return tuple(upscale(o, self.tile_size) for o in obs)
        if self.render_mode == "ansi":
            return tuple(ansi(o) for o in obs)
        return None

    def _observation(self) -> np.ndarray:
        return self.core.obs.copy() if self.copy else self.core.obs

    def _info(self) -> dict:
        core, mask = self.core, self._mask
        return {
            "puzzle_type": core.puzzle_type.astype(np.int64),
            "_puzzle_type": mask,
            "solvable": core.solvable.copy(),
            "_solvable": mask,
            "is_success": core.is_success.copy(),
            "_is_success": mask,
            "solution_length": core.solution_length.astype(np.int64),
            "_solution_length": mask,
            "ended_by": core.ended_by.astype(np.int64),
            "_ended_by": mask,
        }
