"""Vectorised puzzle sampling (Sections 3 and 6 of the paper).

A puzzle is drawn from a fixed-size block of uniforms per board, so that many boards can be drawn
at once with array operations while each board keeps its own ``np.random.Generator`` (a board's
puzzle depends only on its own generator, which makes the single and the vector environment agree
for the same seeds).

Objects live in *slots* with a fixed meaning per mode; unused slots are marked invalid.

Bridge mode, with ``A = max_solution_length`` and the puzzle's solution length ``a``. Keys are
indexed as in Section 6 by their distance from the Gem: ``T[1..a]`` on the top path (``T[1]``
opens the Gem's top lock, ``T[a]`` is the loose key), ``B[1..a]`` on the bottom path (indices
``a + 1 .. 2a`` of the puzzle type)::

    slot 0              Gem box      T[1] (x) B[1] |- G
    slot 1              loose key    |- T[a]
    slot 1 + k          box          T[k + 1] |- T[k]          (valid for k < a)
    slot A + 1          loose key    |- B[a]
    slot A + 1 + k      box          B[k + 1] |- B[k]          (valid for k < a)
    slot 2A + 1         bridge       T[b] |- B[c - a]          (valid when there is a bridge)

Standard mode, path keys ``P[1..L]`` (``P[L]`` loose) and distractor branches ``d`` of
``distractor_length`` boxes, the first one locked by a path key ``P[i_d]``::

    slot 0              Gem box      P[1] |- G
    slot 1              loose key    |- P[L]
    slot 1 + k          box          P[k + 1] |- P[k]          (valid for k < L)
    slot A + 1 + d*l+s  distractor   P[i_d] |- Q[d,0], then Q[d,s-1] |- Q[d,s]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .config import BoxWorldConfig

#: Roles of a board cell.
FLOOR, LOOSE_KEY, KEY_TILE, LOCK_TILE = 0, 1, 2, 3


@dataclasses.dataclass
class PuzzleBatch:
    """Puzzles of ``n`` boards as arrays. Colours are palette indices; ``gem`` (= num_colours)
    is the Gem; ``-1`` pads missing locks and cells. Cells are flat indices ``row * cols + col``.
    """

    lock: np.ndarray  # (n, M) int16: first lock colour (-1 for a loose key)
    lock2: np.ndarray  # (n, M) int16: second lock colour of the bridge-mode Gem box, else -1
    key: np.ndarray  # (n, M) int16: colour of the key inside (gem for the Gem box)
    valid: np.ndarray  # (n, M) bool
    fatal: np.ndarray  # (n, M) bool: distractors and the bridge
    cells: np.ndarray  # (n, M, 4) int32: key tile, lock tile, second key tile, second lock
    start: np.ndarray  # (n,) int32: player cell
    solution_length: np.ndarray  # (n,) int16
    puzzle_type: np.ndarray  # (n, 3) int16: (a, b, c) with b = c = 0 without a bridge

    @property
    def n(self) -> int:
        return self.lock.shape[0]


class PuzzleSampler:
    """Turns a ``(n, block_size)`` array of uniforms in [0, 1) into a `PuzzleBatch`."""

    def __init__(self, config: BoxWorldConfig):
        self.config = c = config
        self.A = c.max_solution_length
        self.D = c.max_distractors
        self.num_slots = (
            (2 * self.A + 2) if c.mode == "bridge" else (1 + self.A + self.D * c.distractor_length)
        )
        positions = np.asarray(c.key_positions, dtype=np.int64)
        self.key_cell = positions[:, 0] * c.cols + positions[:, 1]
        self.gem_grid_index = np.asarray([c.key_positions.index(p) for p in c.gem_positions])
        G = len(self.key_cell)
        # Column offsets of the uniform block.
        self._col_attach = 4
        self._col_pos = self._col_attach + self.D
        self._col_anchor = self._col_pos + G
        self._col_colour = self._col_anchor + 1
        self._col_start = self._col_colour + c.num_colours
        self.block_size = self._col_start + 1

    # ------------------------------------------------------------------------------------------
    def sample(self, u: np.ndarray) -> PuzzleBatch:
        c = self.config
        n = u.shape[0]
        if u.shape != (n, self.block_size):
            raise ValueError(f"u must have shape (n, {self.block_size}), got {u.shape}")
        span = c.max_solution_length - c.min_solution_length + 1
        L = c.min_solution_length + np.minimum((u[:, 0] * span).astype(np.int64), span - 1)
        colours = np.argsort(u[:, self._col_colour : self._col_colour + c.num_colours], axis=1)
        if c.mode == "bridge":
            lock, lock2, key, valid, fatal, ptype = self._bridge_slots(u, L, colours)
        else:
            lock, lock2, key, valid, fatal, ptype = self._standard_slots(u, L, colours)
        cells = self._place(u, valid)
        start = self._start(u, cells)
        return PuzzleBatch(
            lock.astype(np.int16),
            lock2.astype(np.int16),
            key.astype(np.int16),
            valid,
            fatal,
            cells,
            start,
            L.astype(np.int16),
            ptype.astype(np.int16),
        )

    @staticmethod
    def _pick(u: np.ndarray, count: np.ndarray) -> np.ndarray:
        """``floor(u * count)`` clipped to ``count - 1``: uniform on ``0 .. count - 1``."""
        return np.minimum((u * count).astype(np.int64), np.maximum(count - 1, 0))

    def _empty_slots(self, n):
        """Per-slot arrays of ``n`` puzzles: lock, second lock, key (-1 = none), valid, fatal."""
        shape = (n, self.num_slots)
        return (
            np.full(shape, -1, np.int64),
            np.full(shape, -1, np.int64),
            np.full(shape, -1, np.int64),
            np.zeros(shape, bool),
            np.zeros(shape, bool),
        )

    def _bridge_slots(self, u, L, colours):
        c, A, n = self.config, self.A, u.shape[0]
        gem = c.num_colours
        ar = np.arange(n)
        lock, lock2, key, valid, fatal = self._empty_slots(n)
        T = colours[:, :A]  # T[:, i - 1] is key index i of the top path
        B = colours[:, A : 2 * A]  # B[:, i - 1] is key index a + i (bottom path)
        lock[:, 0], lock2[:, 0], key[:, 0], valid[:, 0] = T[:, 0], B[:, 0], gem, True
        for base, path in ((1, T), (A + 1, B)):
            key[:, base] = path[ar, L - 1]
            valid[:, base] = True
            for k in range(1, A):
                lock[:, base + k] = path[:, k]
                key[:, base + k] = path[:, k - 1]
                valid[:, base + k] = k < L
        has_bridge = u[:, 1] < c.bridge_probability
        b = 1 + self._pick(u[:, 2], L)
        target = 1 + self._pick(u[:, 3], L)  # c - a
        lock[:, 2 * A + 1] = T[ar, b - 1]
        key[:, 2 * A + 1] = B[ar, target - 1]
        valid[:, 2 * A + 1] = has_bridge
        fatal[:, 2 * A + 1] = has_bridge
        ptype = np.stack([L, np.where(has_bridge, b, 0), np.where(has_bridge, L + target, 0)], 1)
        return lock, lock2, key, valid, fatal, ptype

    def _standard_slots(self, u, L, colours):
        c, A, D, n = self.config, self.A, self.D, u.shape[0]
        gem, length = c.num_colours, c.distractor_length
        ar = np.arange(n)
        lock, lock2, key, valid, fatal = self._empty_slots(n)
        P = colours[:, :A]
        lock[:, 0], key[:, 0], valid[:, 0] = P[:, 0], gem, True
        key[:, 1], valid[:, 1] = P[ar, L - 1], True
        for k in range(1, A):
            lock[:, 1 + k], key[:, 1 + k], valid[:, 1 + k] = P[:, k], P[:, k - 1], k < L
        span = c.max_distractors - c.min_distractors + 1
        num_d = c.min_distractors + self._pick(u[:, 1], np.full(n, span))
        for d in range(D):
            attach = self._pick(u[:, self._col_attach + d], L)  # index i_d - 1
            for s in range(length):
                slot = 1 + A + d * length + s
                q = colours[:, A + d * length + s]
                lock[:, slot] = P[ar, attach] if s == 0 else colours[:, A + d * length + s - 1]
                key[:, slot] = q
                valid[:, slot] = d < num_d
                fatal[:, slot] = d < num_d
        ptype = np.stack([L, np.zeros(n, np.int64), np.zeros(n, np.int64)], 1)
        return lock, lock2, key, valid, fatal, ptype

    def _place(self, u, valid):
        """Assign key positions: the Gem box first (bridge mode: restricted anchors), the other
        valid slots in slot order to a random permutation of the remaining key positions."""
        c, n = self.config, u.shape[0]
        ar = np.arange(n)
        cols = c.cols
        G = len(self.key_cell)
        order_keys = u[:, self._col_pos : self._col_pos + G].copy()
        cells = np.full((n, self.num_slots, 4), -1, np.int32)
        first = 0
        if c.mode == "bridge":
            g = self.gem_grid_index[
                self._pick(u[:, self._col_anchor], np.full(n, len(self.gem_grid_index)))
            ]
            order_keys[ar, g] = 2.0  # never handed to another slot
            top = self.key_cell[g]
            cells[:, 0] = np.stack([top, top + 1, top + cols, top + cols + 1], 1)
            first = 1
        perm = np.argsort(order_keys, axis=1)
        rest = valid[:, first:]
        rank = np.cumsum(rest, axis=1) - 1
        grid = np.take_along_axis(perm, np.maximum(rank, 0), axis=1)
        keycell = np.where(rest, self.key_cell[grid], -1)
        cells[:, first:, 0] = keycell
        is_box = rest & (np.arange(self.num_slots)[first:] != 1)
        if c.mode == "bridge":
            is_box &= np.arange(first, self.num_slots) != self.A + 1
        cells[:, first:, 1] = np.where(is_box, keycell + 1, -1)
        return cells

    def _start(self, u, cells):
        c, n = self.config, u.shape[0]
        S = c.rows * c.cols
        if not c.random_start:
            return np.zeros(n, np.int32)
        occupied = np.zeros((n, S + 1), bool)
        flat = cells.reshape(n, -1)
        occupied[np.arange(n)[:, None], np.where(flat >= 0, flat, S)] = True
        free = ~occupied[:, :S]
        k = self._pick(u[:, self._col_start], free.sum(1))
        return np.argmax(np.cumsum(free, axis=1) > k[:, None], axis=1).astype(np.int32)
