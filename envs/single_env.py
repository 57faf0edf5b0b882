"""``BoxWorldEnv``: one board of (bridge) BoxWorld as a ``gymnasium.Env`` (a view of the core)."""
from __future__ import annotations

from typing import Optional

import gymnasium as gym
import numpy as np

from .config import BoxWorldConfig
from .core import BoxWorldCore
from .logic import ProofTree, Puzzle
from .rendering import DEFAULT_TILE_SIZE, ansi, upscale

RENDER_MODES = ("rgb_array", "ansi")


def check_render_mode(render_mode) -> Optional[str]:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")
    return render_mode


class BoxWorldEnv(gym.Env):
    """(Bridge) BoxWorld of Section 4: one board, observations ``(rows, cols + 1, 3)`` uint8.

    Args:
        mode: ``"bridge"`` (two-lock Gem, bridges; Section 4.2) or ``"standard"`` (distractors).
        rows, cols: board size without the inventory column (defaults 7 x 9 bridge, 9 x 9 standard).
        min_solution_length, max_solution_length: range of the solution length (1..3 / 1..5).
        bridge_probability: probability of a bridge (bridge mode, default 0.5).
        min_distractors, max_distractors, distractor_length: distractor branches (standard mode,
            default 0..4 branches of length 1).
        num_colours: size of the HSV palette the key colours are drawn from (default 20).
        max_steps: truncate after this many steps (default ``None``: no limit, as in the paper).
        random_start: start on a random free tile instead of (0, 0).
        render_mode: ``None``, ``"rgb_array"`` or ``"ansi"``; tile_size: pixels per tile.

    ``info``: ``puzzle_type`` (a, b, c), ``solvable``, ``is_success``, ``solution_length``.
    Logic of the episode: :meth:`puzzle`, :meth:`opened`, :meth:`held_keys`, :meth:`plan`,
    :meth:`proof_tree`.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 8}

    def __init__(self, mode: str = "bridge", rows: Optional[int] = None, cols: Optional[int] = None,
                 min_solution_length: Optional[int] = None,
                 max_solution_length: Optional[int] = None,
                 bridge_probability: Optional[float] = None, min_distractors: Optional[int] = None,
                 max_distractors: Optional[int] = None, distractor_length: Optional[int] = None,
                 num_colours: int = 20, max_steps: Optional[int] = None,
                 random_start: bool = False, render_mode: Optional[str] = None,
                 tile_size: int = DEFAULT_TILE_SIZE):
        self.config = BoxWorldConfig.create(
            mode, rows, cols, min_solution_length, max_solution_length, bridge_probability,
            min_distractors, max_distractors, distractor_length, num_colours, max_steps,
            random_start)
        self.render_mode = check_render_mode(render_mode)
        upscale(np.zeros((1, 1, 3), np.uint8), tile_size)         # validates tile_size
        self.tile_size = tile_size
        self.core = BoxWorldCore(1, self.config)
        self.observation_space = gym.spaces.Box(
            0, 255, (self.config.rows, self.config.cols + 1, 3), np.uint8)
        self.action_space = gym.spaces.Discrete(4)
        self._episode_return = 0.0
        self._last_reward = 0.0

    # -- gymnasium API ------------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        self.core.seed(0, self.np_random)
        self.core.reset_boards([0])
        self._episode_return = self._last_reward = 0.0
        return self.core.obs[0].copy(), self._info()

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action must be one of 0 (left), 1 (up), 2 (right), 3 (down); "
                             f"got {action!r}")
        reward, terminated, truncated, _ = self.core.step(np.asarray([action]), autoreset=False)
        self._last_reward = float(reward[0])
        self._episode_return += self._last_reward
        return (self.core.obs[0].copy(), self._last_reward, bool(terminated[0]),
                bool(truncated[0]), self._info())

    def render(self):
        if self.render_mode == "rgb_array":
            return upscale(self.core.obs[0], self.tile_size)
        if self.render_mode == "ansi":
            return ansi(self.core.obs[0], self.status())
        return None

    def _info(self) -> dict:
        core = self.core
        return {"puzzle_type": tuple(int(v) for v in core.puzzle_type[0]),
                "solvable": bool(core.solvable[0]),
                "is_success": bool(core.is_success[0]),
                "solution_length": int(core.solution_length[0])}

    # -- the logic of the episode ------------------------------------------------------------
    def puzzle(self) -> Puzzle:
        """The current episode's axioms Gamma (all objects, opened or not)."""
        return self.core.puzzle(0)

    def opened(self) -> list:
        """Slots of the objects opened (loose keys picked up included) this episode, in order."""
        return self.core.opened_sequence(0)

    def opened_steps(self) -> list:
        """``(slot, step)`` for every opening this episode: the episode step it happened on."""
        return [(s, int(self.core.open_step[0, s])) for s in self.opened()]

    def held_keys(self) -> tuple:
        """The inventory, top to bottom (colours; ``logic.GEM`` for the Gem)."""
        return self.core.held_keys(0)

    def plan(self) -> Optional[tuple]:
        """A shortest plan (slots to open) for the Gem from the current state, or ``None``."""
        return self.puzzle().solve(self.opened(), self.held_keys())

    def proof_tree(self) -> ProofTree:
        """The proof tree (Appendix B) of this episode's trajectory so far."""
        return self.puzzle().proof_tree(self.opened())

    def status(self) -> str:
        inventory = " ".join(str(k) for k in self.held_keys()) or "-"
        return (f"type {tuple(int(v) for v in self.core.puzzle_type[0])}  "
                f"step {int(self.core.steps[0])}  reward {self._last_reward:+g}  "
                f"return {self._episode_return:+g}  inventory [{inventory}]")
