"""The batched world model: many BoxWorld boards stepped at once with numpy (Section 4).

:class:`BoxWorldCore` owns the whole state of ``num_boards`` boards as arrays and a persistent
observation buffer that is updated in place, only where tiles change. A step is a handful of array
operations over all boards; the rare events (picking up a key, trying a lock) are handled on the
subset of boards where they happen, still without a Python loop over boards. The single
environment is the core with one board; the vector environment is the core with many.

Rules (design notes, section 4): walking onto a loose key picks it up (+1); a box's key tile is a
wall; a lock is a wall unless its colour is held, in which case one such key is consumed, the box's
key replaces it in the inventory (+1) and both tiles become floor; the Gem box needs both lock
colours at once (+10, episode ends); opening a distractor or the bridge ends the episode with -1.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .config import BoxWorldConfig
from .logic import GEM, Box, Puzzle
from .palette import EMPTY_SLOT_RGB, FLOOR_RGB, GEM_RGB, PLAYER_RGB, make_palette
from .sampling import FLOOR, KEY_TILE, LOCK_TILE, LOOSE_KEY, PuzzleBatch, PuzzleSampler

#: Actions of Discrete(4), and their (row, col) moves.
LEFT, UP, RIGHT, DOWN = 0, 1, 2, 3
ACTION_DELTAS = ((0, -1), (-1, 0), (0, 1), (1, 0))

REWARD_KEY = 1.0
REWARD_GEM = 10.0
REWARD_FATAL = -1.0


class BoxWorldCore:
    """State and dynamics of ``num_boards`` boards of one :class:`BoxWorldConfig`.

    Colours are palette indices ``0 .. num_colours - 1``; ``self.gem == num_colours`` is the Gem.
    Cells are flat indices ``row * cols + col``. Each board has its own ``np.random.Generator`` in
    ``self.rngs`` (seed them with :meth:`seed`).
    """

    def __init__(self, num_boards: int, config: BoxWorldConfig):
        if isinstance(num_boards, bool) or not isinstance(num_boards, (int, np.integer)) \
                or num_boards < 1:
            raise ValueError(f"num_boards must be an int >= 1, got {num_boards!r}")
        self.config = c = config
        self.n = n = int(num_boards)
        self.sampler = PuzzleSampler(config)
        self.gem = c.num_colours
        rows, cols = c.rows, c.cols
        self.num_cells = S = rows * cols
        M = self.sampler.num_slots
        # Static tables.
        r, q = np.divmod(np.arange(S), cols)
        self.obs_cell = (r * (cols + 1) + q).astype(np.int64)           # board cell -> obs pixel
        self.inventory_cell = np.arange(rows) * (cols + 1) + cols        # slot -> obs pixel
        move = np.empty((S, 4), np.int64)
        for a, (dr, dc) in enumerate(ACTION_DELTAS):
            rr, cc = r + dr, q + dc
            inside = (rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols)
            move[:, a] = np.where(inside, rr * cols + cc, np.arange(S))
        self._move = move.ravel()
        self.colour_rgb = np.concatenate([make_palette(c.num_colours),
                                          np.asarray([GEM_RGB], np.uint8)])
        self._floor = np.asarray(FLOOR_RGB, np.uint8)
        self._player = np.asarray(PLAYER_RGB, np.uint8)
        self._empty = np.asarray(EMPTY_SLOT_RGB, np.uint8)
        self._arange = np.arange(n)
        self._cell_base = self._arange * S
        # Observation buffer, updated in place.
        self.obs = np.zeros((n, rows, cols + 1, 3), np.uint8)
        self._obs_flat = self.obs.reshape(n, rows * (cols + 1), 3)
        # Puzzle state.
        self.lock = np.full((n, M), -1, np.int16)
        self.lock2 = np.full((n, M), -1, np.int16)
        self.key = np.full((n, M), -1, np.int16)
        self.valid = np.zeros((n, M), bool)
        self.fatal = np.zeros((n, M), bool)
        self.cells = np.full((n, M, 4), -1, np.int32)
        self.cell_role = np.zeros((n, S), np.int8)
        self.cell_obj = np.full((n, S), -1, np.int16)
        self._role_flat = self.cell_role.reshape(-1)
        self._obj_flat = self.cell_obj.reshape(-1)
        self.solution_length = np.zeros(n, np.int16)
        self.puzzle_type = np.zeros((n, 3), np.int16)
        # Episode state.
        self.pos = np.zeros(n, np.int64)
        self.held = np.zeros((n, c.num_colours + 1), np.int16)   # multiset of held keys
        self.inventory = np.full((n, rows), -1, np.int16)       # displayed slots, -1 empty
        self.steps = np.zeros(n, np.int64)
        self.solvable = np.ones(n, bool)
        self.is_success = np.zeros(n, bool)       # the Gem was obtained on the last step
        self.needs_reset = np.ones(n, bool)
        self.open_order = np.full((n, M), -1, np.int16)   # k-th object opened (0-based), or -1
        self.open_step = np.full((n, M), -1, np.int64)    # episode step at which it was opened
        self.num_opened = np.zeros(n, np.int16)
        self.rngs: list = [None] * n

    # -- seeding and resets ----------------------------------------------------------------
    def seed(self, index: int, rng: np.random.Generator) -> None:
        """Give board ``index`` its own generator (it draws every later puzzle of that board)."""
        self.rngs[index] = rng

    def reset_boards(self, indices: Optional[Sequence[int]] = None) -> np.ndarray:
        """Draw new puzzles for ``indices`` (default: all boards) from their generators."""
        idx = self._arange if indices is None else np.asarray(indices, np.int64).reshape(-1)
        if idx.size == 0:
            return idx
        K = self.sampler.block_size
        u = np.empty((idx.size, K))
        for row, i in enumerate(idx):
            rng = self.rngs[i]
            if rng is None:
                rng = self.rngs[i] = np.random.default_rng()
            u[row] = rng.random(K)
        self.load(idx, self.sampler.sample(u))
        return idx

    def load(self, idx: np.ndarray, batch: PuzzleBatch) -> None:
        """Install the puzzles of ``batch`` on boards ``idx`` and start their episodes."""
        for name in ("lock", "lock2", "key", "valid", "fatal", "cells", "solution_length",
                     "puzzle_type"):
            getattr(self, name)[idx] = getattr(batch, name)
        # Cell roles: key tile (or loose key), lock, second key tile, second lock.
        roles = np.empty(batch.cells.shape, np.int8)
        roles[..., 0] = np.where(batch.lock < 0, LOOSE_KEY, KEY_TILE)
        roles[..., 1] = LOCK_TILE
        roles[..., 2] = KEY_TILE
        roles[..., 3] = LOCK_TILE
        colour = np.stack([batch.key, batch.lock, batch.key, batch.lock2], axis=-1)
        i, m, j = np.nonzero(batch.cells >= 0)
        boards, cells = idx[i], batch.cells[i, m, j]
        self.cell_role[idx] = FLOOR
        self.cell_obj[idx] = -1
        self.cell_role[boards, cells] = roles[i, m, j]
        self.cell_obj[boards, cells] = m
        obs = self._obs_flat
        obs[idx] = self._floor
        obs[boards, self.obs_cell[cells]] = self.colour_rgb[colour[i, m, j]]
        obs[idx[:, None], self.inventory_cell[None, :]] = self._empty
        self.pos[idx] = batch.start
        obs[idx, self.obs_cell[batch.start]] = self._player
        self.held[idx] = 0
        self.inventory[idx] = -1
        self.steps[idx] = 0
        self.solvable[idx] = True
        self.is_success[idx] = False
        self.needs_reset[idx] = False
        self.open_order[idx] = -1
        self.open_step[idx] = -1
        self.num_opened[idx] = 0

    # -- dynamics --------------------------------------------------------------------------
    def step(self, actions: np.ndarray, autoreset: bool = True):
        """Step every board; returns ``(reward, terminated, truncated, reset_mask)``.

        With ``autoreset`` (gymnasium's NEXT_STEP mode) a board whose episode ended on the previous
        step is reset instead of stepped: its action is ignored, reward 0, and ``reset_mask`` marks it.
        """
        a = np.asarray(actions, np.int64).reshape(-1)
        if a.shape[0] != self.n:
            raise ValueError(f"actions must have shape ({self.n},), got {np.shape(actions)}")
        if a.min() < 0 or a.max() > 3:
            raise ValueError(f"actions must be in {{0, 1, 2, 3}}, got {a}")
        resets = np.flatnonzero(self.needs_reset) if autoreset else np.empty(0, np.int64)
        self.reset_boards(resets)
        pos = self.pos
        target = self._move[pos * 4 + a]
        target[resets] = pos[resets]
        role = self._role_flat[self._cell_base + target]
        free = role == FLOOR
        new_pos = np.where(free, target, pos)
        reward = np.zeros(self.n, np.float32)
        terminated = np.zeros(self.n, bool)
        self.is_success[:] = False
        self.steps += 1
        events = np.flatnonzero(~free)
        if events.size:
            self._events(events, target[events], role[events], new_pos, reward, terminated)
        obs = self._obs_flat
        obs[self._arange, self.obs_cell[pos]] = self._floor
        obs[self._arange, self.obs_cell[new_pos]] = self._player
        self.pos = new_pos
        self.steps[resets] = 0
        if self.config.max_steps is None:
            truncated = np.zeros(self.n, bool)
        else:
            truncated = (self.steps >= self.config.max_steps) & ~terminated
        self.needs_reset = terminated | truncated
        reset_mask = np.zeros(self.n, bool)
        reset_mask[resets] = True
        return reward, terminated, truncated, reset_mask

    def _events(self, b, target, role, new_pos, reward, terminated) -> None:
        """Boards ``b`` walked into a non-floor cell ``target``: pick up or try a lock."""
        obj = self._obj_flat[b * self.num_cells + target].astype(np.int64)
        pick = role == LOOSE_KEY
        if pick.any():
            bp, op = b[pick], obj[pick]
            self._give(bp, self.key[bp, op].astype(np.int64), self._first_empty(bp))
            self._clear(bp, op)
            new_pos[bp] = target[pick]
            reward[bp] = REWARD_KEY
        trying = role == LOCK_TILE
        if not trying.any():
            return
        bl, ol, tl = b[trying], obj[trying], target[trying]
        l1 = self.lock[bl, ol].astype(np.int64)
        l2 = self.lock2[bl, ol].astype(np.int64)
        opens = (self.held[bl, l1] > 0) & ((l2 < 0) | (self.held[bl, np.maximum(l2, 0)] > 0))
        if not opens.any():
            return
        bl, ol, tl, l1, l2 = bl[opens], ol[opens], tl[opens], l1[opens], l2[opens]
        slot = self._take(bl, l1)
        two = l2 >= 0
        if two.any():
            slot2 = self._take(bl[two], l2[two])
            first = np.minimum(slot[two], slot2)       # the Gem goes to the upper freed slot
            self._obs_flat[bl[two], self.inventory_cell[np.maximum(slot[two], slot2)]] = \
                self._empty
            slot[two] = first
        key = self.key[bl, ol].astype(np.int64)
        self._give(bl, key, slot)
        self._clear(bl, ol)
        new_pos[bl] = tl
        gem = key == self.gem
        fatal = self.fatal[bl, ol]
        reward[bl] = np.where(gem, REWARD_GEM, np.where(fatal, REWARD_FATAL, REWARD_KEY))
        terminated[bl] = gem | fatal
        self.is_success[bl[gem]] = True
        # Opening a box is the only move that can lose the Gem; ask the solver (rare events, so
        # a Python call per board that opened a box does not show in the step rate).
        for board in bl[~gem]:
            self.solvable[board] = self.gem_obtainable(int(board))

    def _first_empty(self, b: np.ndarray) -> np.ndarray:
        return np.argmax(self.inventory[b] < 0, axis=1)

    def _take(self, b: np.ndarray, colour: np.ndarray) -> np.ndarray:
        """Consume one key of ``colour`` on each board ``b``; returns the freed inventory slot."""
        self.held[b, colour] -= 1
        slot = np.argmax(self.inventory[b] == colour[:, None], axis=1)
        self.inventory[b, slot] = -1
        return slot

    def _give(self, b: np.ndarray, colour: np.ndarray, slot: np.ndarray) -> None:
        self.held[b, colour] += 1
        self.inventory[b, slot] = colour
        self._obs_flat[b, self.inventory_cell[slot]] = self.colour_rgb[colour]

    def _clear(self, b: np.ndarray, obj: np.ndarray) -> None:
        """Object ``obj`` of board ``b`` is opened: its tiles become floor; record the opening."""
        cells = self.cells[b, obj]                     # (k, 4)
        i, j = np.nonzero(cells >= 0)
        boards, flat = b[i], cells[i, j]
        self.cell_role[boards, flat] = FLOOR
        self.cell_obj[boards, flat] = -1
        self._obs_flat[boards, self.obs_cell[flat]] = self._floor
        self.open_order[b, obj] = self.num_opened[b]
        self.open_step[b, obj] = self.steps[b]
        self.num_opened[b] += 1

    # -- views -----------------------------------------------------------------------------
    def player_position(self, index: int) -> tuple:
        """``(row, col)`` of the player on board ``index``."""
        return tuple(int(v) for v in divmod(int(self.pos[index]), self.config.cols))

    def opened_sequence(self, index: int) -> list:
        """Slots opened on board ``index`` this episode, in order (loose keys included)."""
        order = self.open_order[index]
        done = np.flatnonzero(order >= 0)
        return [int(s) for s in done[np.argsort(order[done])]]

    def _colour(self, colour: int) -> int:
        return GEM if colour == self.gem else int(colour)

    def puzzle(self, index: int) -> Puzzle:
        """The axioms of board ``index``'s current episode as a :class:`~.logic.Puzzle` (all its
        objects, opened or not; slots as in :mod:`.sampling`)."""
        boxes = []
        cols = self.config.cols
        for slot in np.flatnonzero(self.valid[index]):
            locks = tuple(self._colour(c) for c in (self.lock[index, slot], self.lock2[index, slot])
                          if c >= 0)
            cell = int(self.cells[index, slot, 0])
            boxes.append(Box(int(slot), locks, self._colour(self.key[index, slot]),
                             divmod(cell, cols), bool(self.fatal[index, slot])))
        return Puzzle(tuple(boxes), tuple(int(v) for v in self.puzzle_type[index]),
                      int(self.solution_length[index]), self.config.mode)

    def gem_obtainable(self, index: int) -> bool:
        """Whether the Gem is still obtainable on board ``index``: the solver of :mod:`.logic` over
        the boxes not yet opened and the keys held."""
        return self.puzzle(index).solve(self.opened_sequence(index),
                                        self.held_keys(index)) is not None

    def held_keys(self, index: int) -> tuple:
        """The keys held on board ``index``, in inventory order (logic colours, Gem = ``GEM``)."""
        return tuple(self._colour(c) for c in self.inventory[index] if c >= 0)
