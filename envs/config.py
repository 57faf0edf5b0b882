"""Validated parameters of a (bridge) BoxWorld, with the paper's defaults (Sections 3 and 6).

Everything the paper varies is a field here. ``BoxWorldConfig.create`` fills the defaults of the
chosen ``mode`` and rejects impossible combinations with a ``ValueError`` that names the argument
and the accepted values, so nothing can fail later in the middle of an episode.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np

MODES = ("bridge", "standard")

#: Defaults per mode. Bridge BoxWorld (Section 5): 7 x 9 board, solution length 1..3, a bridge in
#: half of the episodes. Standard BoxWorld (Section 5, after Zambaldi et al.): 9 x 9 board, solution
#: length 1..5, 0..4 distractors of branch length 1.
DEFAULTS = {
    "bridge": dict(
        rows=7,
        cols=9,
        min_solution_length=1,
        max_solution_length=3,
        bridge_probability=0.5,
        min_distractors=0,
        max_distractors=0,
        distractor_length=1,
    ),
    "standard": dict(
        rows=9,
        cols=9,
        min_solution_length=1,
        max_solution_length=5,
        bridge_probability=0.0,
        min_distractors=0,
        max_distractors=4,
        distractor_length=1,
    ),
}
#: Defaults shared by both modes: the 20-colour palette, no step limit, a fixed start (the paper
#: does not say where the player starts; ours is tile (0, 0)) and the paper's rewards (no cost for
#: a move the board blocks).
COMMON_DEFAULTS = dict(num_colours=20, max_steps=None, random_start=False, blocked_move_reward=0.0)
#: Every argument of a BoxWorld besides ``mode``: those of the single and the vector env, whose
#: constructors pass them on here.
ARGUMENTS = (*DEFAULTS["bridge"], *COMMON_DEFAULTS)

#: The rewards of Section 3: a key obtained, the Gem, opening a box that loses the Gem (a
#: distractor or the bridge). The Gem's also bounds the cost of a blocked move.
REWARD_KEY = 1.0
REWARD_GEM = 10.0
REWARD_FATAL = -1.0

#: The step limit of an episode played outside training (evaluation, analysis) when neither the
#: caller nor the env's ``max_steps`` gives one: the paper's env has none, and an untrained policy
#: may never finish.
EPISODE_STEP_LIMIT = 500


def episode_step_limit(env_config: Optional[dict] = None, max_steps: Optional[int] = None) -> int:
    """``max_steps`` if given, else ``env_config``'s, else `EPISODE_STEP_LIMIT`."""
    return int(max_steps or (env_config or {}).get("max_steps") or EPISODE_STEP_LIMIT)


def _int(name: str, value, low: int, high: Optional[int] = None) -> int:
    accepted = f"an int >= {low}" if high is None else f"an int in [{low}, {high}]"
    if isinstance(value, bool) or not isinstance(value, int) and not _is_np_int(value):
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {accepted}, got {value}")
    return value


def _is_np_int(value) -> bool:
    return isinstance(value, np.integer)


@dataclasses.dataclass(frozen=True)
class BoxWorldConfig:
    """The parameters of one BoxWorld family; build it with `create()`.

    Key tiles sit only on the grid of *key positions* ``(r, c)`` with ``r`` in ``1, 3, 5, ...``
    (``r <= rows - 2``) and ``c`` in ``1, 4, 7, ...`` (``c <= cols - 2``), 0-indexed, the lock one
    to the right: on the 7 x 9 board the paper's ``(y, x) = (2i, 3j - 1)`` for ``i, j`` in
    ``1..3``, 1-indexed (Section 5). In bridge mode the Gem box
    is anchored at a key position outside the last key row and column, its second white tile below.
    """

    mode: str
    rows: int
    cols: int
    min_solution_length: int
    max_solution_length: int
    bridge_probability: float
    min_distractors: int
    max_distractors: int
    distractor_length: int
    num_colours: int
    max_steps: Optional[int]
    random_start: bool
    blocked_move_reward: float

    @classmethod
    def create(cls, mode: str = "bridge", **arguments) -> "BoxWorldConfig":
        """Fill the defaults of ``mode`` and validate every argument (raises ``ValueError``).

        ``arguments``: any of `ARGUMENTS` (``None`` for a per-mode one means its default).
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        unknown = sorted(set(arguments) - set(ARGUMENTS))
        if unknown:
            raise ValueError(
                f"unknown BoxWorld argument(s) {unknown}; accepted: {['mode', *ARGUMENTS]}"
            )
        values = {**DEFAULTS[mode], **COMMON_DEFAULTS}
        values.update(
            (name, value)
            for name, value in arguments.items()
            if value is not None or name not in DEFAULTS[mode]
        )
        num_colours, max_steps, random_start = (
            values["num_colours"],
            values["max_steps"],
            values["random_start"],
        )
        rows = _int("rows", values["rows"], 3)
        cols = _int("cols", values["cols"], 3)
        lo = _int("min_solution_length", values["min_solution_length"], 1)
        hi = _int("max_solution_length", values["max_solution_length"], 1)
        if lo > hi:
            raise ValueError(f"min_solution_length ({lo}) must be <= max_solution_length ({hi})")
        p = values["bridge_probability"]
        if (
            isinstance(p, bool)
            or not isinstance(p, (int, float, np.floating))
            or not 0.0 <= p <= 1.0
            or math.isnan(p)
        ):
            raise ValueError(f"bridge_probability must be a float in [0, 1], got {p!r}")
        dmin = _int("min_distractors", values["min_distractors"], 0)
        dmax = _int("max_distractors", values["max_distractors"], 0)
        if dmin > dmax:
            raise ValueError(f"min_distractors ({dmin}) must be <= max_distractors ({dmax})")
        dlen = _int("distractor_length", values["distractor_length"], 1)
        num_colours = _int("num_colours", num_colours, 1, 255)
        if max_steps is not None:
            max_steps = _int("max_steps", max_steps, 1)
        if not isinstance(random_start, (bool,)) and not _is_np_bool(random_start):
            raise ValueError(f"random_start must be a bool, got {random_start!r}")
        blocked = values["blocked_move_reward"]
        if (
            isinstance(blocked, bool)
            or not isinstance(blocked, (int, float, np.floating))
            or not -REWARD_GEM <= blocked <= 0.0
        ):
            raise ValueError(
                f"blocked_move_reward must be a float in [-{REWARD_GEM:g}, 0] (0: the paper's "
                f"rewards), got {blocked!r}"
            )
        if mode == "bridge" and dmax > 0:
            raise ValueError(
                "min_distractors/max_distractors must be 0 in mode='bridge' (bridge "
                "BoxWorld has bridges instead of distractors, Section 3.2); use "
                "mode='standard' for distractors"
            )
        if mode == "standard" and p > 0:
            raise ValueError(
                "bridge_probability must be 0 in mode='standard' (bridges exist only "
                "in mode='bridge')"
            )
        config = cls(
            mode,
            rows,
            cols,
            lo,
            hi,
            float(p),
            dmin,
            dmax,
            dlen,
            num_colours,
            max_steps,
            bool(random_start),
            float(blocked),
        )
        config._check_capacity()
        return config

    # -- derived geometry -------------------------------------------------------------------
    @property
    def key_rows(self) -> tuple:
        return tuple(range(1, self.rows - 1, 2))

    @property
    def key_cols(self) -> tuple:
        return tuple(range(1, self.cols - 1, 3))

    @property
    def key_positions(self) -> tuple:
        """Key-tile positions ``(row, col)``, row-major; the lock is at ``col + 1``."""
        return tuple((r, c) for r in self.key_rows for c in self.key_cols)

    @property
    def gem_positions(self) -> tuple:
        """Where the Gem box's (top) key tile may go."""
        if self.mode == "standard":
            return self.key_positions
        return tuple((r, c) for r in self.key_rows[:-1] for c in self.key_cols[:-1])

    @property
    def max_objects(self) -> int:
        """Most objects (loose keys, boxes, Gem box) in one puzzle."""
        if self.mode == "bridge":
            return 2 * self.max_solution_length + 1 + (self.bridge_probability > 0)
        return 1 + self.max_solution_length + self.max_distractors * self.distractor_length

    @property
    def colours_needed(self) -> int:
        if self.mode == "bridge":
            return 2 * self.max_solution_length
        return self.max_solution_length + self.max_distractors * self.distractor_length

    def _check_capacity(self) -> None:
        where = (
            f"rows={self.rows}, cols={self.cols} (key positions {len(self.key_positions)}"
            f", Gem positions {len(self.gem_positions)})"
        )
        if not self.gem_positions:
            raise ValueError(
                f"the board has no place for the Gem box: {where}; mode='bridge' "
                "needs rows >= 5 and cols >= 6"
            )
        if self.max_objects > len(self.key_positions):
            what = (
                "2 * max_solution_length + 1 + (bridge_probability > 0)"
                if self.mode == "bridge"
                else "1 + max_solution_length + max_distractors * distractor_length"
            )
            raise ValueError(
                f"too many objects for the board: {what} = {self.max_objects} > "
                f"{len(self.key_positions)} key positions of {where}; lower "
                "max_solution_length/max_distractors or enlarge rows/cols"
            )
        if self.colours_needed > self.num_colours:
            what = (
                "2 * max_solution_length"
                if self.mode == "bridge"
                else "max_solution_length + max_distractors * distractor_length"
            )
            raise ValueError(
                f"num_colours={self.num_colours} is too small: the puzzles need {what}"
                f" = {self.colours_needed} distinct colours"
            )

    def to_kwargs(self) -> dict:
        return dataclasses.asdict(self)


def _is_np_bool(value) -> bool:
    return isinstance(value, np.bool_)
