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


def check_rendering(render_mode, tile_size) -> tuple:
    """``(render_mode, tile_size)`` validated (``ValueError`` naming the argument otherwise)."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None or one of {RENDER_MODES}, got {render_mode!r}")
    upscale(np.zeros((1, 1, 3), np.uint8), tile_size)  # validates tile_size
    return render_mode, tile_size


class BoxWorldEnv(gym.Env):
    """(Bridge) BoxWorld of Section 3 of the paper: one board, seen from above, with an inventory.

    ## Description

    The board is a grid of floor tiles holding the player, loose keys and boxes. A box is a key
    tile with one lock tile to its right; opening the lock with a key of its colour consumes that
    key and gives the box's key. The goal is the Gem. In bridge BoxWorld (``mode="bridge"``) the
    Gem box has two locks, opened with two keys held at once, each at the end of its own path of
    boxes; in half of the puzzles a *bridge* box takes a key of one path and gives a key of the
    other, and opening it makes the Gem unobtainable (Section 3.2). In standard BoxWorld
    (``mode="standard"``) the Gem box has one lock at the end of one path, and *distractor*
    branches lead nowhere. Every reset draws a new puzzle.

    ## Action Space

    ``Discrete(4)``: 0 left, 1 up, 2 right, 3 down. Moving off the board, into a box's key tile or
    into a lock whose colour is not held leaves the player where it is.

    ## Observation Space

    ``Box(0, 255, (rows, cols + 1, 3), uint8)``: one RGB pixel per tile of the board, plus an
    inventory column on the right with the keys held: a loose key takes the top free slot, and
    the key of an opened box the slot of the key it used up (the Gem the upper of its two).
    Floor (199, 199, 199), player (127, 127, 127), empty inventory slot (10, 10, 10), the Gem
    white; key colours come from an HSV palette of ``num_colours`` colours shuffled every episode.

    ## Rewards

    +1 each time a key is obtained (picked up, or taken from an opened box), +10 for the Gem, -1
    for opening a distractor or the bridge. No step cost; a move the board blocks (into an edge, a
    box's key tile, or a lock without its keys: the player stays) costs ``blocked_move_reward``
    (0 in the paper).

    ## Starting State

    A puzzle drawn from the arguments below; the player on tile (0, 0) (``random_start=False``;
    the paper does not say where its player starts) or on a random free tile.

    ## Episode End

    Terminated on the Gem (won) or on opening a distractor or the bridge (the Gem is then
    unobtainable). Truncated after ``max_steps`` steps if given (the paper has no limit).

    ## Information

    ``info``: ``puzzle_type`` (a, b, c) of Section 6 ((a, 0, 0) without a bridge), ``solvable``
    (the solver's answer: is the Gem still obtainable?), ``is_success`` (the Gem was obtained on
    this step),
    ``solution_length`` and ``ended_by``: on the step that ends the episode, why it ended (one of
    ``OUTCOMES``: ``"won"``, ``"opened_bridge"``, ``"opened_wrong_box"`` (a distractor, or a box
    after which the Gem was unobtainable, then the step limit), ``"out_of_steps"``), else
    ``None``. The logic of the episode: `puzzle()`, `opened()`,
    `held_keys()`, `plan()`, `proof_tree()`.

    ## Arguments

    - ``mode``: ``"bridge"`` (default) or ``"standard"``.
    - ``rows``, ``cols``: board size without the inventory column (7 x 9 bridge, 9 x 9 standard).
    - ``min_solution_length``, ``max_solution_length``: the solution length, uniform (1..3
      bridge, 1..5 standard).
    - ``bridge_probability``: probability of a bridge (0.5 bridge; must be 0 in standard mode).
    - ``min_distractors``, ``max_distractors``, ``distractor_length``: distractor branches
      (standard mode: 0..4 branches of 1 box; the first two must be 0 in bridge mode).
    - ``num_colours``: size of the key palette (20).
    - ``max_steps``: truncate after this many steps (``None``: no limit).
    - ``random_start``: start on a random free tile instead of (0, 0) (``False``).
    - ``blocked_move_reward``: the reward of a move the board blocks, in [-10, 0] (``0.0``, the
      paper's rewards).
    - ``render_mode``: ``None``, ``"rgb_array"`` (tiles of ``tile_size`` pixels, default 16) or
      ``"ansi"``.

    The BoxWorld arguments (all but ``render_mode`` and ``tile_size``) are those of
    `.config.BoxWorldConfig`; an impossible combination raises a ``ValueError`` naming
    the arguments.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 8}

    def __init__(
        self,
        mode: str = "bridge",
        *,
        render_mode: Optional[str] = None,
        tile_size: int = DEFAULT_TILE_SIZE,
        **arguments,
    ):
        self.config = BoxWorldConfig.create(mode, **arguments)
        self.render_mode, self.tile_size = check_rendering(render_mode, tile_size)
        self.core = BoxWorldCore(1, self.config)
        self.observation_space = gym.spaces.Box(
            0, 255, (self.config.rows, self.config.cols + 1, 3), np.uint8
        )
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
            raise ValueError(
                f"action must be one of 0 (left), 1 (up), 2 (right), 3 (down); got {action!r}"
            )
        reward, terminated, truncated, _ = self.core.step(np.asarray([action]), autoreset=False)
        self._last_reward = float(reward[0])
        self._episode_return += self._last_reward
        return (
            self.core.obs[0].copy(),
            self._last_reward,
            bool(terminated[0]),
            bool(truncated[0]),
            self._info(),
        )

    def render(self):
        if self.render_mode == "rgb_array":
            return upscale(self.core.obs[0], self.tile_size)
        if self.render_mode == "ansi":
            return ansi(self.core.obs[0], self.status())
        return None

    def _info(self) -> dict:
        core = self.core
        return {
            "puzzle_type": tuple(int(v) for v in core.puzzle_type[0]),
            "solvable": bool(core.solvable[0]),
            "is_success": bool(core.is_success[0]),
            "solution_length": int(core.solution_length[0]),
            "ended_by": core.outcome(0),
        }

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
        return (
            f"type {tuple(int(v) for v in self.core.puzzle_type[0])}  "
            f"step {int(self.core.steps[0])}  reward {self._last_reward:+g}  "
            f"return {self._episode_return:+g}  inventory [{inventory}]"
        )
