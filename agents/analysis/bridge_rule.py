"""The source/sink rule of Remark B.1 applied to what an agent sees, and the bridge decision.

The rule is applied to what the agent sees at a moment of the episode (`visible_axioms`): the boxes
still on the board, and the keys in the inventory as loose-key axioms |- C (a held key is, for the
rest of the proof, exactly a loose key). At the start of a bridge episode the rule always locates
the bridge; once keys are collected, the box that made the sink (or the source) may be gone -- the
footnote to the episode-horizon remark of Section 5 ("not a reliable strategy ... for an agent
without memory").

The *bridge decision* of an episode is the first moment the agent holds the bridge's lock colour
while the bridge is still closed: from then on one step can open it.
"""

import collections
import dataclasses

RULE_LOCATES = "rule locates the bridge"
RULE_CANNOT = "rule cannot locate it"
RULE_MISLEADS = "rule points at another box"
NEVER_FACED = "bridge never openable"
PROBE_ROWS = (RULE_LOCATES, RULE_CANNOT, RULE_MISLEADS, NEVER_FACED)


def visible_axioms(puzzle, opened=(), held=(), include_held=True):
    """The boxes still on the board, plus (with `include_held`) one axiom |- C per held key C.

    Held keys get negative slots (-1, -2, ...), so they never collide with a box of the puzzle.
    """
    from keras_simplicial.envs.logic import GEM, Box

    boxes = list(puzzle.remaining(opened))
    if include_held:
        boxes += [Box(-(k + 1), (), colour) for k, colour in enumerate(held) if colour != GEM]
    return boxes


def bridge_of(puzzle):
    """The bridge box of a bridge puzzle, or None (no bridge, or standard BoxWorld)."""
    if puzzle.mode != "bridge" or puzzle.puzzle_type[1] == 0:
        return None
    fatal = [box for box in puzzle.boxes if box.fatal]
    return fatal[0] if fatal else None


def can_open(box, held):
    """Whether the keys `held` open `box` (its lock colours, with multiplicity)."""
    needed = collections.Counter(box.locks)
    have = collections.Counter(held)
    return all(have[colour] >= count for colour, count in needed.items())


def rule_verdict(puzzle, opened=(), held=(), include_held=True):
    """(verdict, SourceSink) of the source/sink rule on what is visible after `opened`."""
    from keras_simplicial.envs.logic import source_sink

    result = source_sink(visible_axioms(puzzle, opened, held, include_held))
    bridge = bridge_of(puzzle)
    if result.bridge is None:
        return RULE_CANNOT, result
    if bridge is not None and result.bridge.slot == bridge.slot:
        return RULE_LOCATES, result
    return RULE_MISLEADS, result


@dataclasses.dataclass(frozen=True)
class BridgeDecision:
    """The first decision at which the bridge could be opened, and what followed."""

    step: int  # decision index (the agent has taken `step` actions)
    verdict: str  # RULE_LOCATES / RULE_CANNOT / RULE_MISLEADS
    source_sink: object  # the SourceSink of the rule at that decision
    opened_bridge: bool  # did the agent open the bridge (then or later)?


def bridge_decision(puzzle, opened_history, held_history, final_opened, include_held=True):
    """The `BridgeDecision` of an episode, or None if the bridge was never openable.

    `opened_history[t]` and `held_history[t]` are the opened slots and held keys before decision t.
    """
    bridge = bridge_of(puzzle)
    if bridge is None:
        return None
    for step, (opened, held) in enumerate(zip(opened_history, held_history)):
        if bridge.slot in opened:
            break
        if can_open(bridge, held):
            verdict, result = rule_verdict(puzzle, opened, held, include_held)
            return BridgeDecision(step, verdict, result, bridge.slot in final_opened)
    return None
