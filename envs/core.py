"""The batched world model: many BoxWorld boards stepped at once with numpy (Section 3).

`BoxWorldCore` owns the whole state of ``num_boards`` boards as arrays and a persistent
observation buffer that is updated in place, only where tiles change. A step is a handful of array
operations over all boards; the rare events (picking up a key, trying a lock) are handled on the
subset of boards where they happen, still without a Python loop over boards. The single
environment is the core with one board; the vector environment is the core with many.

Rules, those of the paper's original implementation: walking onto a loose key picks it up (+1); a
box's key tile is a wall; a lock is a wall unless its colour is held, in which case one such key is
consumed, the box's key replaces it in the inventory (+1) and both tiles become floor; the Gem box
needs both lock colours at once (+10, episode ends); opening a distractor or the bridge ends the
episode with -1.
"""

from __future__ import annotations

import copy
from typing import Optional, Sequence

import numpy as np

from .config import REWARD_FATAL, REWARD_GEM, REWARD_KEY, BoxWorldConfig
from .logic import GEM, Box, Puzzle
from .palette import EMPTY_SLOT_RGB, FLOOR_RGB, GEM_RGB, PLAYER_RGB, make_palette
from .sampling import FLOOR, KEY_TILE, LOCK_TILE, LOOSE_KEY, PuzzleBatch, PuzzleSampler

#: Actions of Discrete(4), their names and their (row, col) moves.
LEFT, UP, RIGHT, DOWN = 0, 1, 2, 3
ACTION_NAMES = ("left", "up", "right", "down")
ACTION_DELTAS = ((0, -1), (-1, 0), (0, 1), (1, 0))

#: Why an episode ended (``BoxWorldCore.ended_by``, by index): the Gem was obtained; the bridge
#: was opened (bridge BoxWorld); another wrong box was opened (a distractor of standard BoxWorld,
#: or a box after which the Gem was no longer obtainable, the episode then running out of steps);
#: the step limit came with the Gem still obtainable. ``NOT_ENDED`` while an episode is playing.
OUTCOMES = ("won", "opened_bridge", "opened_wrong_box", "out_of_steps")
WON, OPENED_BRIDGE, OPENED_WRONG_BOX, OUT_OF_STEPS = range(len(OUTCOMES))
NOT_ENDED = -1

#: What stops a move (``BoxWorldCore.obstacle``): the edge of the board; a box's key tile (a wall);
#: the lock of a wrong box (the bridge, or a distractor) whose colour is not held; another lock
#: whose colour is not held (a box on a solution path, or the Gem box with none of its colours
#: held); the Gem box with one of its two lock colours held (X1 ⊗ X2 ⊸ Gem with X1 alone).
OBSTACLES = ("edge", "key_tile", "closed_wrong_box", "closed_lock", "gem_box_one_key")


class BoxWorldCore:
    """State and dynamics of ``num_boards`` boards of one `BoxWorldConfig`.

    Colours are palette indices ``0 .. num_colours - 1``; ``self.gem == num_colours`` is the Gem.
    Cells are flat indices ``row * cols + col``. Each board has its own ``np.random.Generator`` in
    ``self.rngs`` (seed them with `seed()`).
    """

    def __init__(self, num_boards: int, config: BoxWorldConfig):
        if (
            isinstance(num_boards, bool)
            or not isinstance(num_boards, (int, np.integer))
            or num_boards < 1
        ):
            raise ValueError(f"num_boards must be an int >= 1, got {num_boards!r}")
        self.config = config
        self.num_boards = num_boards = int(num_boards)
        self.sampler = PuzzleSampler(config)
        self.gem = config.num_colours
        rows, cols = config.rows, config.cols
        self.num_cells = num_cells = rows * cols
        num_slots = self.sampler.num_slots
        # Static tables.
        cell_row, cell_col = np.divmod(np.arange(num_cells), cols)
        self.obs_cell = (cell_row * (cols + 1) + cell_col).astype(np.int64)  # board cell -> pixel
        self.inventory_cell = np.arange(rows) * (cols + 1) + cols  # inventory slot -> pixel
        # The cell each action leads to from each cell (the same cell at the edge of the board),
        # flat: destination[cell * 4 + action].
        destination = np.empty((num_cells, 4), np.int64)
        for action, (d_row, d_col) in enumerate(ACTION_DELTAS):
            row, col = cell_row + d_row, cell_col + d_col
            inside = (row >= 0) & (row < rows) & (col >= 0) & (col < cols)
            destination[:, action] = np.where(inside, row * cols + col, np.arange(num_cells))
        self._destination = destination.ravel()
        self.colour_rgb = np.concatenate(
            [make_palette(config.num_colours), np.asarray([GEM_RGB], np.uint8)]
        )
        self._floor = np.asarray(FLOOR_RGB, np.uint8)
        self._player = np.asarray(PLAYER_RGB, np.uint8)
        self._empty = np.asarray(EMPTY_SLOT_RGB, np.uint8)
        self._all_boards = np.arange(num_boards)
        self._first_cell = self._all_boards * num_cells  # board -> its first flat cell
        # Observation buffer, updated in place.
        self.obs = np.zeros((num_boards, rows, cols + 1, 3), np.uint8)
        self._obs_flat = self._flat_view(self.obs)
        # Puzzle state, per board and slot (the fields of a `PuzzleBatch`).
        self.lock = np.full((num_boards, num_slots), -1, np.int16)
        self.lock2 = np.full((num_boards, num_slots), -1, np.int16)
        self.key = np.full((num_boards, num_slots), -1, np.int16)
        self.valid = np.zeros((num_boards, num_slots), bool)
        self.fatal = np.zeros((num_boards, num_slots), bool)
        self.cells = np.full((num_boards, num_slots, 4), -1, np.int32)
        self.cell_role = np.zeros((num_boards, num_cells), np.int8)
        self.cell_obj = np.full((num_boards, num_cells), -1, np.int16)
        self._role_flat = self.cell_role.reshape(-1)
        self._obj_flat = self.cell_obj.reshape(-1)
        self.solution_length = np.zeros(num_boards, np.int16)
        self.puzzle_type = np.zeros((num_boards, 3), np.int16)
        # Episode state.
        self.pos = np.zeros(num_boards, np.int64)  # the player's cell
        self.held = np.zeros((num_boards, config.num_colours + 1), np.int16)  # multiset of keys
        self.inventory = np.full((num_boards, rows), -1, np.int16)  # displayed slots, -1 empty
        self.steps = np.zeros(num_boards, np.int64)
        self.solvable = np.ones(num_boards, bool)
        self.is_success = np.zeros(num_boards, bool)  # the Gem was obtained on the last step
        self.needs_reset = np.ones(num_boards, bool)
        self.ended_by = np.full(num_boards, NOT_ENDED, np.int8)  # an index of OUTCOMES
        self.open_order = np.full((num_boards, num_slots), -1, np.int16)  # k-th opened, or -1
        self.open_step = np.full((num_boards, num_slots), -1, np.int64)  # step it was opened
        self.num_opened = np.zeros(num_boards, np.int16)
        self.rngs: list = [None] * num_boards

    def _flat_view(self, obs: np.ndarray) -> np.ndarray:
        return obs.reshape(self.num_boards, -1, 3)

    #: Attributes that are views of other attributes (see `__deepcopy__`).
    _VIEWS = ("_obs_flat", "_role_flat", "_obj_flat")

    def __deepcopy__(self, memo):
        """A copy that steps on its own (for search, e.g. a brute-force planner): numpy's deepcopy
        copies each array apart, so the flat views the dynamics write through are made anew."""
        clone = object.__new__(type(self))
        memo[id(self)] = clone
        for name, value in self.__dict__.items():
            if name not in self._VIEWS:
                setattr(clone, name, copy.deepcopy(value, memo))
        clone._obs_flat = clone._flat_view(clone.obs)
        clone._role_flat = clone.cell_role.reshape(-1)
        clone._obj_flat = clone.cell_obj.reshape(-1)
        return clone

    # -- seeding and resets ----------------------------------------------------------------
    def seed(self, index: int, rng: np.random.Generator) -> None:
        """Give board ``index`` its own generator (it draws every later puzzle of that board)."""
        self.rngs[index] = rng

    def reset_boards(self, indices: Optional[Sequence[int]] = None) -> np.ndarray:
        """Draw new puzzles for ``indices`` (default: all boards) from their generators."""
        boards = self._all_boards if indices is None else np.asarray(indices, np.int64).reshape(-1)
        if boards.size == 0:
            return boards
        uniforms = np.empty((boards.size, self.sampler.block_size))
        for row, board in enumerate(boards):
            rng = self.rngs[board]
            if rng is None:
                rng = self.rngs[board] = np.random.default_rng()
            uniforms[row] = rng.random(self.sampler.block_size)
        self.load(boards, self.sampler.sample(uniforms))
        return boards

    def load(self, boards: np.ndarray, batch: PuzzleBatch) -> None:
        """Install the puzzles of ``batch`` on ``boards`` and start their episodes."""
        for name in (
            "lock",
            "lock2",
            "key",
            "valid",
            "fatal",
            "cells",
            "solution_length",
            "puzzle_type",
        ):
            getattr(self, name)[boards] = getattr(batch, name)
        # Each object's tiles: key tile (or loose key), lock, second key tile, second lock.
        roles = np.empty(batch.cells.shape, np.int8)
        roles[..., 0] = np.where(batch.lock < 0, LOOSE_KEY, KEY_TILE)
        roles[..., 1] = LOCK_TILE
        roles[..., 2] = KEY_TILE
        roles[..., 3] = LOCK_TILE
        colour = np.stack([batch.key, batch.lock, batch.key, batch.lock2], axis=-1)
        row, slot, tile = np.nonzero(batch.cells >= 0)
        tile_board, tile_cell = boards[row], batch.cells[row, slot, tile]
        self.cell_role[boards] = FLOOR
        self.cell_obj[boards] = -1
        self.cell_role[tile_board, tile_cell] = roles[row, slot, tile]
        self.cell_obj[tile_board, tile_cell] = slot
        obs = self._obs_flat
        obs[boards] = self._floor
        obs[tile_board, self.obs_cell[tile_cell]] = self.colour_rgb[colour[row, slot, tile]]
        obs[boards[:, None], self.inventory_cell[None, :]] = self._empty
        self.pos[boards] = batch.start
        obs[boards, self.obs_cell[batch.start]] = self._player
        self.held[boards] = 0
        self.inventory[boards] = -1
        self.steps[boards] = 0
        self.solvable[boards] = True
        self.is_success[boards] = False
        self.needs_reset[boards] = False
        self.ended_by[boards] = NOT_ENDED
        self.open_order[boards] = -1
        self.open_step[boards] = -1
        self.num_opened[boards] = 0

    # -- dynamics --------------------------------------------------------------------------
    def step(self, actions: np.ndarray, autoreset: bool = True):
        """Step every board; returns ``(reward, terminated, truncated, reset_mask)``.

        With ``autoreset`` (gymnasium's NEXT_STEP mode) a board whose episode ended on the previous
        step is reset instead of stepped: its action is ignored, reward 0, and ``reset_mask`` marks
        it.
        """
        actions = np.asarray(actions, np.int64).reshape(-1)
        if actions.shape[0] != self.num_boards:
            raise ValueError(
                f"actions must have shape ({self.num_boards},), got {np.shape(actions)}"
            )
        if actions.min() < 0 or actions.max() > 3:
            raise ValueError(f"actions must be in {{0, 1, 2, 3}}, got {actions}")
        resets = np.flatnonzero(self.needs_reset) if autoreset else np.empty(0, np.int64)
        self.reset_boards(resets)
        position = self.pos
        target = self._destination[position * 4 + actions]
        target[resets] = position[resets]
        role = self._role_flat[self._first_cell + target]
        free = role == FLOOR
        new_position = np.where(free, target, position)
        reward = np.zeros(self.num_boards, np.float32)
        terminated = np.zeros(self.num_boards, bool)
        self.is_success[:] = False
        self.steps += 1
        blocked = np.flatnonzero(~free)
        if blocked.size:
            self._events(blocked, target[blocked], role[blocked], new_position, reward, terminated)
        if self.config.blocked_move_reward:
            # A move the board blocks leaves the player where it was (every other move, a key
            # picked up or a box opened included, takes it to the target tile).
            stays = new_position == position
            stays[resets] = False
            reward[stays] += self.config.blocked_move_reward
        obs = self._obs_flat
        obs[self._all_boards, self.obs_cell[position]] = self._floor
        obs[self._all_boards, self.obs_cell[new_position]] = self._player
        self.pos = new_position
        self.steps[resets] = 0
        if self.config.max_steps is None:
            truncated = np.zeros(self.num_boards, bool)
        else:
            truncated = (self.steps >= self.config.max_steps) & ~terminated
            self._end_without_box(np.flatnonzero(truncated))
        self.needs_reset = terminated | truncated
        reset_mask = np.zeros(self.num_boards, bool)
        reset_mask[resets] = True
        return reward, terminated, truncated, reset_mask

    def _events(self, boards, target, role, new_position, reward, terminated) -> None:
        """``boards`` walked into a non-floor cell ``target``: pick up a key or try a lock."""
        slots = self._obj_flat[boards * self.num_cells + target].astype(np.int64)
        picks_up = role == LOOSE_KEY
        if picks_up.any():
            key_boards, key_slots = boards[picks_up], slots[picks_up]
            self._give(
                key_boards,
                self.key[key_boards, key_slots].astype(np.int64),
                self._first_empty(key_boards),
            )
            self._clear(key_boards, key_slots)
            new_position[key_boards] = target[picks_up]
            reward[key_boards] = REWARD_KEY
        tries_lock = role == LOCK_TILE
        if not tries_lock.any():
            return
        boards, slots, lock_cell = boards[tries_lock], slots[tries_lock], target[tries_lock]
        first_lock = self.lock[boards, slots].astype(np.int64)
        second_lock = self.lock2[boards, slots].astype(np.int64)  # -1: a one-lock box
        opens = (self.held[boards, first_lock] > 0) & (
            (second_lock < 0) | (self.held[boards, np.maximum(second_lock, 0)] > 0)
        )
        if not opens.any():
            return
        boards, slots, lock_cell = boards[opens], slots[opens], lock_cell[opens]
        first_lock, second_lock = first_lock[opens], second_lock[opens]
        freed = self._take(boards, first_lock)
        two_locks = second_lock >= 0
        if two_locks.any():
            freed_second = self._take(boards[two_locks], second_lock[two_locks])
            upper = np.minimum(freed[two_locks], freed_second)  # the Gem goes to the upper slot
            lower = np.maximum(freed[two_locks], freed_second)
            self._obs_flat[boards[two_locks], self.inventory_cell[lower]] = self._empty
            freed[two_locks] = upper
        key = self.key[boards, slots].astype(np.int64)
        self._give(boards, key, freed)
        self._clear(boards, slots)
        new_position[boards] = lock_cell
        gem = key == self.gem
        fatal = self.fatal[boards, slots]
        reward[boards] = np.where(gem, REWARD_GEM, np.where(fatal, REWARD_FATAL, REWARD_KEY))
        terminated[boards] = gem | fatal
        self.is_success[boards[gem]] = True
        self.ended_by[boards[gem]] = WON
        self.ended_by[boards[fatal & ~gem]] = (
            OPENED_BRIDGE if self.config.mode == "bridge" else OPENED_WRONG_BOX
        )
        # Opening a box is the only move that can lose the Gem; ask the solver (rare events, so
        # a Python call per board that opened a box does not show in the step rate).
        for board in boards[~gem]:
            self.solvable[board] = self.gem_obtainable(int(board))

    def truncate(self, boards) -> None:
        """Ends the episodes of ``boards`` without a box (e.g. a caller's step limit): they are
        reset at the next autoreset step, ended by ``OUT_OF_STEPS`` or, where the Gem is no longer
        obtainable, ``OPENED_WRONG_BOX``."""
        boards = np.asarray(boards, np.int64).reshape(-1)
        self._end_without_box(boards)
        self.needs_reset[boards] = True

    def _end_without_box(self, boards: np.ndarray) -> None:
        self.ended_by[boards] = np.where(self.solvable[boards], OUT_OF_STEPS, OPENED_WRONG_BOX)

    def _first_empty(self, boards: np.ndarray) -> np.ndarray:
        return np.argmax(self.inventory[boards] < 0, axis=1)

    def _take(self, boards: np.ndarray, colour: np.ndarray) -> np.ndarray:
        """Consume one key of ``colour`` on each of ``boards``; returns the freed inventory slot."""
        self.held[boards, colour] -= 1
        slot = np.argmax(self.inventory[boards] == colour[:, None], axis=1)
        self.inventory[boards, slot] = -1
        return slot

    def _give(self, boards: np.ndarray, colour: np.ndarray, slot: np.ndarray) -> None:
        self.held[boards, colour] += 1
        self.inventory[boards, slot] = colour
        self._obs_flat[boards, self.inventory_cell[slot]] = self.colour_rgb[colour]

    def _clear(self, boards: np.ndarray, slots: np.ndarray) -> None:
        """Object ``slots`` of ``boards`` is opened: its tiles become floor; record the opening."""
        cells = self.cells[boards, slots]  # (k, 4)
        row, tile = np.nonzero(cells >= 0)
        tile_board, tile_cell = boards[row], cells[row, tile]
        self.cell_role[tile_board, tile_cell] = FLOOR
        self.cell_obj[tile_board, tile_cell] = -1
        self._obs_flat[tile_board, self.obs_cell[tile_cell]] = self._floor
        self.open_order[boards, slots] = self.num_opened[boards]
        self.open_step[boards, slots] = self.steps[boards]
        self.num_opened[boards] += 1

    # -- views -----------------------------------------------------------------------------
    def player_position(self, index: int) -> tuple:
        """``(row, col)`` of the player on board ``index``."""
        return tuple(int(v) for v in divmod(int(self.pos[index]), self.config.cols))

    def obstacle(self, index: int, action: int) -> Optional[str]:
        """What stops the player of board ``index`` moving with ``action`` (one of
        ``OBSTACLES``), or ``None`` where the move goes through (floor, a loose key, a lock that
        opens)."""
        position = int(self.pos[index])
        target = int(self._destination[position * 4 + int(action)])
        if target == position:
            return "edge"
        role = int(self.cell_role[index, target])
        if role in (FLOOR, LOOSE_KEY):
            return None
        if role == KEY_TILE:
            return "key_tile"
        slot = int(self.cell_obj[index, target])
        locks = [int(c) for c in (self.lock[index, slot], self.lock2[index, slot]) if c >= 0]
        held = sum(int(self.held[index, colour] > 0) for colour in locks)
        if held == len(locks):
            return None
        if len(locks) == 2 and held == 1:
            return "gem_box_one_key"
        return "closed_wrong_box" if self.fatal[index, slot] else "closed_lock"

    def allowed_moves(self, boards: Optional[Sequence[int]] = None) -> np.ndarray:
        """Which moves of ``boards`` (default: all) the board lets through, ``bool [b, 4]``: those
        with no `obstacle` (floor, a loose key, a lock whose colours are all held, a wrong box's
        included). A board that blocks all four moves has every move allowed: a policy restricted
        to the allowed moves always has one, and any of them leaves the board as it is."""
        boards = self._all_boards if boards is None else np.asarray(boards, np.int64).reshape(-1)
        position = self.pos[boards][:, None]
        target = self._destination[position * 4 + np.arange(4)]
        role = self.cell_role[boards[:, None], target]
        slot = np.maximum(self.cell_obj[boards[:, None], target], 0)  # -1 (no box) reads slot 0
        opens = np.ones(target.shape, bool)
        for lock in (self.lock, self.lock2):
            colour = lock[boards[:, None], slot]
            held = self.held[boards[:, None], np.maximum(colour, 0)] > 0
            opens &= (colour < 0) | held
        allowed = (target != position) & (
            (role == FLOOR) | (role == LOOSE_KEY) | ((role == LOCK_TILE) & opens)
        )
        allowed[~allowed.any(axis=1)] = True
        return allowed

    def outcome(self, index: int) -> Optional[str]:
        """Why board ``index``'s episode ended (one of ``OUTCOMES``), or ``None`` while it plays."""
        ended_by = int(self.ended_by[index])
        return None if ended_by == NOT_ENDED else OUTCOMES[ended_by]

    def opened_sequence(self, index: int) -> list:
        """Slots opened on board ``index`` this episode, in order (loose keys included)."""
        order = self.open_order[index]
        done = np.flatnonzero(order >= 0)
        return [int(s) for s in done[np.argsort(order[done])]]

    def _colour(self, colour: int) -> int:
        return GEM if colour == self.gem else int(colour)

    def puzzle(self, index: int) -> Puzzle:
        """The axioms of board ``index``'s current episode as a `.logic.Puzzle` (all its
        objects, opened or not; slots as in :mod:`.sampling`)."""
        boxes = []
        cols = self.config.cols
        for slot in np.flatnonzero(self.valid[index]):
            locks = tuple(
                self._colour(c) for c in (self.lock[index, slot], self.lock2[index, slot]) if c >= 0
            )
            cell = int(self.cells[index, slot, 0])
            boxes.append(
                Box(
                    int(slot),
                    locks,
                    self._colour(self.key[index, slot]),
                    divmod(cell, cols),
                    bool(self.fatal[index, slot]),
                )
            )
        return Puzzle(
            tuple(boxes),
            tuple(int(v) for v in self.puzzle_type[index]),
            int(self.solution_length[index]),
            self.config.mode,
        )

    def gem_obtainable(self, index: int) -> bool:
        """Whether the Gem is still obtainable on board ``index``: the solver of :mod:`.logic` over
        the boxes not yet opened and the keys held."""
        return (
            self.puzzle(index).solve(self.opened_sequence(index), self.held_keys(index)) is not None
        )

    def held_keys(self, index: int) -> tuple:
        """The keys held on board ``index``, in inventory order (logic colours, Gem = ``GEM``)."""
        return tuple(self._colour(c) for c in self.inventory[index] if c >= 0)
