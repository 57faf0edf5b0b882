"""The step-optimal oracle: every shortest action at any state of a board.

    oracle = StepOracle(core, index)          # after the board's episode started
    oracle.steps_to_gem(core, index)          # fewest steps from the board's current state
    oracle.optimal_actions(core, index)       # bool [4]: the actions on some shortest path

A state of a BoxWorld episode is the player's cell and the set of objects opened so far (the
inventory follows from that set). The oracle builds, once per episode, the graph of every such
state over the objects on the solution paths: the Gem box, the boxes of the top and bottom paths
and their loose keys (bridge BoxWorld), or the Gem's path (standard BoxWorld). A wrong box, the
bridge or a distractor, is a wall to it: opening one ends the episode without the Gem. The number
of steps to the Gem comes from value iteration over that graph, d(s) = 1 + min_a d(next(s, a)),
and an action is optimal at s when d(next(s, a)) = d(s) - 1. So the oracle is shortest in steps
over every order in which the boxes can be opened, and returns all tied actions; the plan-level
player of `.oracle` (fewest boxes, top path first) stays where proof trees need it.

On bridge-medium (7 x 6, five objects on the solution paths) the graph has 42 x 2^5 states and is
built in about a millisecond; a state's answer is then a table look-up.
"""

from __future__ import annotations

import numpy as np

from .core import BoxWorldCore
from .sampling import KEY_TILE, LOCK_TILE, LOOSE_KEY

#: `steps_to_gem` of a state from which the Gem cannot be reached.
UNREACHABLE = np.iinfo(np.int32).max


class StepOracle:
    """The steps to the Gem from every state of board ``index``'s current episode.

    Attributes:
        slots: [K] the slots of the objects on the solution paths; bit k of a state's ``mask``
            says whether ``slots[k]`` is opened.
        steps: [2**K, cells] int32: fewest steps to the Gem from (mask, cell), `UNREACHABLE` where
            the Gem cannot be reached from there; defined for every (mask, cell), also those no
            play reaches (a mask no play opens, a cell a box stands on).
        successor: [2**K, cells, 4] int64: the flat state (mask * cells + cell) each action leads
            to; ``2**K * cells`` for the action that takes the Gem.
    """

    def __init__(self, core: BoxWorldCore, index: int):
        self.num_cells = cells = core.num_cells
        valid, fatal = core.valid[index], core.fatal[index]
        self.slots = slots = np.flatnonzero(valid & ~fatal)
        num_masks = 1 << len(slots)
        masks = np.arange(num_masks)
        opened = (masks[:, None] >> np.arange(len(slots))[None, :]) & 1  # [masks, K]
        # The inventory of each mask: the keys taken out of opened objects less the keys their
        # locks consumed (colours as palette indices; the Gem is core.gem).
        held = np.zeros((num_masks, core.gem + 1), np.int64)
        locks = [
            [int(c) for c in (core.lock[index, s], core.lock2[index, s]) if c >= 0] for s in slots
        ]
        for k, slot in enumerate(slots):
            held[:, int(core.key[index, slot])] += opened[:, k]
            for colour in locks[k]:
                held[:, colour] -= opened[:, k]
        openable = np.ones((num_masks, len(slots)), bool)
        for k in range(len(slots)):
            for colour in set(locks[k]):
                openable[:, k] &= held[:, colour] >= locks[k].count(colour)
        # What stands on each cell before anything is opened: the object (k, or -1 for floor and
        # -2 for a tile of a wrong box) and the tile's role.
        owner = np.full(cells, -1, np.int64)
        role = np.zeros(cells, np.int64)
        object_roles = (
            lambda slot: LOOSE_KEY if core.lock[index, slot] < 0 else KEY_TILE,
            lambda slot: LOCK_TILE,
            lambda slot: KEY_TILE,
            lambda slot: LOCK_TILE,
        )
        slot_to_k = {int(slot): k for k, slot in enumerate(slots)}
        for slot in np.flatnonzero(valid):
            for tile, cell in enumerate(core.cells[index, slot]):
                if cell >= 0:
                    owner[cell] = slot_to_k.get(int(slot), -2)
                    role[cell] = object_roles[tile](slot)
        gem_k = next(k for k, slot in enumerate(slots) if core.key[index, slot] == core.gem)
        # Successors, all states at once: [masks, cells, 4].
        here = np.arange(cells)
        target = core._destination.reshape(cells, 4)[None, :, :]
        k = owner[target]  # [1, cells, 4]
        k_safe = np.maximum(k, 0)
        is_open = opened[:, k_safe[0]].astype(bool)  # [masks, cells, 4]
        can_open = openable[:, k_safe[0]]
        tile = role[target]
        mask = masks[:, None, None]
        floor = (k == -1) | ((k >= 0) & is_open)
        takes = (k >= 0) & ~is_open & ((tile == LOOSE_KEY) | ((tile == LOCK_TILE) & can_open))
        next_mask = np.where(takes, mask | (1 << k_safe), mask)
        next_cell = np.where(floor | takes, target, here[None, :, None])
        successor = next_mask * cells + next_cell
        goal = num_masks * cells
        successor = np.where(takes & (k == gem_k), goal, successor)
        self.successor = successor.astype(np.int64)
        steps = self._value_iteration(num_masks * cells)
        self.steps = steps.reshape(num_masks, cells)
        self._steps_and_gem = np.append(steps, 0)  # indexed by `successor`

    def _value_iteration(self, num_states: int) -> np.ndarray:
        """d(s) = 1 + min_a d(next(s, a)), d(Gem) = 0, iterated to its fixed point."""
        flat = self.successor.reshape(num_states, 4)
        steps = np.full(num_states + 1, UNREACHABLE, np.int64)
        steps[num_states] = 0
        while True:
            best = steps[flat].min(axis=1)
            updated = np.where(best < UNREACHABLE, best + 1, UNREACHABLE)
            if np.array_equal(updated, steps[:num_states]):
                return updated.astype(np.int32)
            steps[:num_states] = updated

    # -- a board's state -------------------------------------------------------------------------
    def state(self, core: BoxWorldCore, index: int) -> tuple:
        """(mask, cell) of board ``index``'s current state (the board this oracle was built on)."""
        opened = core.open_order[index, self.slots] >= 0
        mask = int(np.dot(opened, 1 << np.arange(len(self.slots))))
        return mask, int(core.pos[index])

    def steps_to_gem(self, core: BoxWorldCore, index: int) -> int:
        """Fewest steps from board ``index``'s current state to the Gem (`UNREACHABLE` after a
        wrong box)."""
        if self._lost(core, index):
            return UNREACHABLE
        mask, cell = self.state(core, index)
        return int(self.steps[mask, cell])

    def optimal_actions(self, core: BoxWorldCore, index: int) -> np.ndarray:
        """bool [4]: the actions that start a shortest way to the Gem from board ``index``'s
        current state (all False once the Gem is out of reach)."""
        if self._lost(core, index):
            return np.zeros(4, bool)
        return self.optimal_at(*self.state(core, index))

    def optimal_at(self, mask: int, cell: int) -> np.ndarray:
        """bool [4]: the optimal actions at state (mask, cell)."""
        steps = self.steps[mask, cell]
        if steps == UNREACHABLE:
            return np.zeros(4, bool)
        return self._steps_and_gem[self.successor[mask, cell]] == steps - 1

    def _lost(self, core: BoxWorldCore, index: int) -> bool:
        wrong = core.valid[index] & core.fatal[index]
        return bool((core.open_order[index, wrong] >= 0).any())


def optimal_action_mask(core: BoxWorldCore, boards, oracles) -> np.ndarray:
    """bool [len(boards), 4]: `StepOracle.optimal_actions` of each board, with ``oracles[b]``
    built on board ``boards[b]``'s current episode."""
    return np.stack([oracles[i].optimal_actions(core, int(b)) for i, b in enumerate(boards)])


__all__ = ["StepOracle", "UNREACHABLE", "optimal_action_mask"]
