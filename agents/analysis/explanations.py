"""Proofs from behaviour (Appendix B): one played episode read as logic.

`explain_episode(record)` reads one played episode as logic: the axioms Gamma, the proof tree whose
computational content is the agent's behaviour (the boxes it opened, cut against each other), the
outcome, and for a bridge episode what the source/sink rule (`bridge_rule.py`) concludes versus
what the agent did.
"""

import dataclasses

from keras_simplicial.agents.analysis.bridge_rule import RULE_LOCATES, bridge_decision, bridge_of


@dataclasses.dataclass
class Explanation:
    """One episode read as logic (see `explain_episode`)."""

    record: object
    proof_tree: object
    outcome: str
    bridge: object  # the bridge Box, or None
    rule_at_start: object  # SourceSink of the whole board at the start
    decision: object  # BridgeDecision, or None


def explain_episode(record, include_held=True):
    """The proof tree of `record`'s behaviour, its outcome and the source/sink rule's view."""
    from keras_simplicial.envs.logic import source_sink

    final_opened = record.opened[-1]
    return Explanation(
        record=record,
        proof_tree=record.proof_tree(),
        outcome=record.outcome(),
        bridge=bridge_of(record.puzzle),
        rule_at_start=source_sink(record.puzzle.boxes),
        decision=bridge_decision(
            record.puzzle, record.opened[:-1], record.held[:-1], final_opened, include_held
        ),
    )


def _box_text(box, style):
    where = f" at tile {box.position}" if box.position is not None else " (held key)"
    return f"{box.sequent.format(style)}{where}"


def format_explanation(explanation, style="unicode"):
    """The explanation as text: Gamma, the proof tree, the outcome, the rule versus behaviour."""
    record = explanation.record
    puzzle = record.puzzle
    steps = dict(record.opened_steps)
    lines = [
        f"{record.kind} agent, {record.env_id} seed {record.seed} "
        f"({'greedy' if record.greedy else 'sampled'} actions), puzzle type "
        f"{tuple(puzzle.puzzle_type)}, {record.length} steps",
        "",
        "Axioms Gamma |- G:",
        "  " + puzzle.format_gamma(style),
        "",
        "Boxes opened (step: sequent):",
    ]
    for slot, _ in record.opened_steps:
        box = puzzle.box(slot)
        mark = (
            "   <- bridge"
            if explanation.bridge is not None and slot == explanation.bridge.slot
            else ("   <- distractor" if box.fatal else "")
        )
        lines.append(f"  {steps[slot]:>4}: {_box_text(box, style)}{mark}")
    if not record.opened_steps:
        lines.append("  (none)")
    lines += ["", "Proof tree of the behaviour (Appendix B; 'cut' lines are the sequents proved):"]
    tree = explanation.proof_tree.format(style)
    lines += ["  " + line for line in tree.splitlines()] if tree else ["  (no box opened)"]
    proved = "proves the Gem" if explanation.proof_tree.proves_gem else "does not prove the Gem"
    lines += ["", f"Outcome: {explanation.outcome}; the proof {proved}."]
    if explanation.bridge is None:
        lines.append("No bridge in this episode: the source/sink rule does not apply.")
        return "\n".join(lines)

    rule = explanation.rule_at_start
    lines += [
        "",
        "Source/sink rule (Remark B.1) on the first board:",
        "  sources (same lock, distinct keys): "
        + (
            "; ".join(
                f"{a.sequent.format(style)} & {b.sequent.format(style)}" for a, b in rule.sources
            )
            or "none"
        ),
        "  sinks (same key, distinct locks):   "
        + (
            "; ".join(
                f"{a.sequent.format(style)} & {b.sequent.format(style)}" for a, b in rule.sinks
            )
            or "none"
        ),
    ]
    if rule.bridge is not None:
        correct = "correct" if rule.bridge.slot == explanation.bridge.slot else "wrong"
        lines.append(f"  conclusion: the bridge is {_box_text(rule.bridge, style)} ({correct})")
    else:
        lines.append("  conclusion: no box is common to every source and sink: bridge not located")
    lines.append(f"  the actual bridge: {_box_text(explanation.bridge, style)}")
    decision = explanation.decision
    if decision is None:
        lines.append(
            "The agent never held the bridge's lock colour while the bridge was closed, "
            "so it never faced the choice."
        )
    else:
        from keras_simplicial.envs.logic import tensor

        held = tensor(record.held[decision.step], style) or "nothing"
        lines.append(
            f"At decision {decision.step} the agent could first open the bridge "
            f"(holding {held}); on the board it saw then, the {decision.verdict}."
        )
        if decision.opened_bridge:
            lines.append(
                f"The agent opened the bridge at step {steps[explanation.bridge.slot]}"
                f" -- against the rule's conclusion."
                if decision.verdict == RULE_LOCATES
                else f"The agent opened the bridge at step {steps[explanation.bridge.slot]}."
            )
        else:
            ending = " until the step limit" if explanation.outcome == "step limit" else ""
            lines.append(
                f"The agent did not open the bridge{ending}"
                + (
                    ", as the rule concludes."
                    if decision.verdict == RULE_LOCATES
                    else ", though the rule could not locate it then."
                )
            )
    return "\n".join(lines)
