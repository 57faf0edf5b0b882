"""An oracle player: walks the shortest plan of `.logic.solve()` on a board.

Used by the tests (a plan must actually win when walked) and by ``play``'s hint (the ``?``
key). The walk is a breadth-first search over floor cells, so it never picks up a loose key or
tries a lock it did not aim for.
"""

from __future__ import annotations

import collections
from typing import Optional

from .core import ACTION_DELTAS, BoxWorldCore
from .sampling import FLOOR


def target_cells(core: BoxWorldCore, index: int, slot: int) -> list:
    """Cells to step onto to open object ``slot``: a loose key's tile, else its lock tile(s)."""
    cells = core.cells[index, slot]
    if core.lock[index, slot] < 0:
        return [int(cells[0])]
    return [int(cells[1])] + ([int(cells[3])] if cells[3] >= 0 else [])


def path_to(core: BoxWorldCore, index: int, slot: int) -> Optional[list]:
    """Shortest action sequence from the player to object ``slot`` over floor, or ``None``."""
    rows, cols = core.config.rows, core.config.cols
    goals = set(target_cells(core, index, slot))
    start = int(core.pos[index])
    previous = {start: None}
    queue = collections.deque([start])
    while queue:
        cell = queue.popleft()
        if cell in goals:
            actions = []
            while previous[cell] is not None:
                cell, action = previous[cell]
                actions.append(action)
            return actions[::-1]
        r, c = divmod(cell, cols)
        for action, (dr, dc) in enumerate(ACTION_DELTAS):
            rr, cc = r + dr, c + dc
            nxt = rr * cols + cc
            if not (0 <= rr < rows and 0 <= cc < cols) or nxt in previous:
                continue
            if nxt in goals or core.cell_role[index, nxt] == FLOOR:
                previous[nxt] = (cell, action)
                queue.append(nxt)
    return None


def plan_actions(env) -> Optional[list]:
    """The actions that walk the current shortest plan of a ``BoxWorldEnv`` (unwrapped), or ``None``
    if the Gem is unobtainable or a target cannot be reached. Does not step ``env``."""
    plan = env.plan()
    if plan is None:
        return None
    core = env.core
    saved = core.pos.copy()
    roles = core.cell_role.copy()
    actions = []
    try:
        for slot in plan:
            walk = path_to(core, 0, slot)
            if walk is None:
                return None
            actions.extend(walk)
            # Pretend the object is gone and the player stands on its tile for the next leg.
            core.pos[0] = target_cells(core, 0, slot)[0]
            cells = core.cells[0, slot]
            core.cell_role[0, cells[cells >= 0]] = FLOOR
        return actions
    finally:
        core.pos[:] = saved
        core.cell_role[:] = roles


def greedy_action(env) -> Optional[int]:
    """The first action of the walked plan (a hint), or ``None``."""
    actions = plan_actions(env)
    return int(actions[0]) if actions else None


__all__ = ["greedy_action", "path_to", "plan_actions", "target_cells"]
