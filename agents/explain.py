"""Proofs from behaviour (Appendix B) and a logic probe of the source/sink rule (Remark B.1).

`explain_episode(record)` reads one played episode as logic: the axioms Gamma, the proof tree whose
computational content is the agent's behaviour (the boxes it opened, cut against each other), the
outcome, and for a bridge episode what the source/sink rule concludes versus what the agent did.

The rule is applied to what the agent sees at a moment of the episode (`visible_axioms`): the boxes
still on the board, and the keys in the inventory as loose-key axioms |- C (a held key is, for the
rest of the proof, exactly a loose key). At the start of a bridge episode the rule always locates
the bridge; once keys are collected, the box that made the sink (or the source) may be gone -- the
footnote to the episode-horizon remark of Section 5 ("not a reliable strategy ... for an agent
without memory").

The *bridge decision* of an episode is the first moment the agent holds the bridge's lock colour
while the bridge is still closed: from then on one step can open it. The logic probe
(`logic_probe`, Section 6: "logic probes") plays many episodes and tabulates, separately for
decisions where the rule can locate the bridge and where it cannot, how often the agent avoids it.
If the agent reasons with the rule it should avoid the bridge more often when the rule applies.
"""

import collections
import dataclasses

import numpy as np

from keras_simplicial.agents.episode import choose_actions, make_env, DEFAULT_MAX_STEPS
from keras_simplicial.agents.evaluate import wilson_interval

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

    step: int                  # decision index (the agent has taken `step` actions)
    verdict: str               # RULE_LOCATES / RULE_CANNOT / RULE_MISLEADS
    source_sink: object        # the SourceSink of the rule at that decision
    opened_bridge: bool        # did the agent open the bridge (then or later)?


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


# -- one episode ---------------------------------------------------------------------------------
@dataclasses.dataclass
class Explanation:
    """One episode read as logic (see `explain_episode`)."""

    record: object
    proof_tree: object
    outcome: str
    bridge: object                 # the bridge Box, or None
    rule_at_start: object          # SourceSink of the whole board at the start
    decision: object               # BridgeDecision, or None


def explain_episode(record, include_held=True):
    """The proof tree of `record`'s behaviour, its outcome and the source/sink rule's view."""
    from keras_simplicial.envs.logic import source_sink

    final_opened = record.opened[-1]
    return Explanation(
        record=record, proof_tree=record.proof_tree(), outcome=record.outcome(),
        bridge=bridge_of(record.puzzle), rule_at_start=source_sink(record.puzzle.boxes),
        decision=bridge_decision(record.puzzle, record.opened[:-1], record.held[:-1],
                                 final_opened, include_held))


def _box_text(box, style):
    where = f" at tile {box.position}" if box.position is not None else " (held key)"
    return f"{box.sequent.format(style)}{where}"


def format_explanation(explanation, style="unicode"):
    """The explanation as text: Gamma, the proof tree, the outcome, the rule versus behaviour."""
    record = explanation.record
    puzzle = record.puzzle
    steps = dict(record.opened_steps)
    lines = [f"{record.kind} agent, {record.env_id} seed {record.seed} "
             f"({'greedy' if record.greedy else 'sampled'} actions), puzzle type "
             f"{tuple(puzzle.puzzle_type)}, {record.length} steps",
             "", "Axioms Gamma |- G:", "  " + puzzle.format_gamma(style), "",
             "Boxes opened (step: sequent):"]
    for slot, _ in record.opened_steps:
        box = puzzle.box(slot)
        mark = "   <- bridge" if explanation.bridge is not None and slot == \
            explanation.bridge.slot else ("   <- distractor" if box.fatal else "")
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
    lines += ["", "Source/sink rule (Remark B.1) on the first board:",
              f"  sources (same lock, distinct keys): "
              + ("; ".join(f"{a.sequent.format(style)} & {b.sequent.format(style)}"
                           for a, b in rule.sources) or "none"),
              f"  sinks (same key, distinct locks):   "
              + ("; ".join(f"{a.sequent.format(style)} & {b.sequent.format(style)}"
                           for a, b in rule.sinks) or "none")]
    if rule.bridge is not None:
        correct = "correct" if rule.bridge.slot == explanation.bridge.slot else "wrong"
        lines.append(f"  conclusion: the bridge is {_box_text(rule.bridge, style)} ({correct})")
    else:
        lines.append("  conclusion: no box is common to every source and sink: bridge not located")
    lines.append(f"  the actual bridge: {_box_text(explanation.bridge, style)}")
    decision = explanation.decision
    if decision is None:
        lines.append("The agent never held the bridge's lock colour while the bridge was closed, "
                     "so it never faced the choice.")
    else:
        from keras_simplicial.envs.logic import tensor

        held = tensor(record.held[decision.step], style) or "nothing"
        lines.append(f"At decision {decision.step} the agent could first open the bridge "
                     f"(holding {held}); on the board it saw then, the {decision.verdict}.")
        if decision.opened_bridge:
            lines.append(f"The agent opened the bridge at step {steps[explanation.bridge.slot]}"
                         f" -- against the rule's conclusion."
                         if decision.verdict == RULE_LOCATES else
                         f"The agent opened the bridge at step {steps[explanation.bridge.slot]}.")
        else:
            ending = (" until the step limit" if explanation.outcome == "step limit" else "")
            lines.append(f"The agent did not open the bridge{ending}"
                         + (", as the rule concludes." if decision.verdict == RULE_LOCATES
                            else ", though the rule could not locate it then."))
    return "\n".join(lines)


# -- the logic probe ---------------------------------------------------------------------------
@dataclasses.dataclass
class ProbeResult:
    """Counts of the logic probe: per row of `PROBE_ROWS`, episodes, bridge avoided, won."""

    episodes: int
    bridge_episodes: int
    rows: dict                     # row -> {"episodes", "avoided", "won"}
    include_held: bool

    def avoidance_rate(self, row):
        entry = self.rows[row]
        return entry["avoided"] / entry["episodes"] if entry["episodes"] else float("nan")

    def to_json(self):
        table = {}
        for row in PROBE_ROWS:
            entry = dict(self.rows[row])
            if row != NEVER_FACED:
                low, high = wilson_interval(entry["avoided"], entry["episodes"])
                entry["avoidance_rate"] = (round(entry["avoided"] / entry["episodes"], 4)
                                           if entry["episodes"] else None)
                entry["avoidance_ci95"] = [round(low, 4), round(high, 4)]
            table[row] = entry
        return {"episodes": self.episodes, "bridge_episodes": self.bridge_episodes,
                "include_held": self.include_held, "rows": table}


def logic_probe(agent, env_id="BridgeBoxWorld-v0", env_config=None, episodes=200, seed=0,
                num_envs=16, greedy=False, max_steps=None, include_held=True):
    """Plays `episodes` episodes (boards of seeds seed, seed+1, ...); tabulates bridge avoidance.

    Only bridge episodes count; each is put in one row of `PROBE_ROWS` by its `bridge_decision`.
    `num_envs` boards are played in lockstep so that the agent evaluates a batch at a time.
    """
    config = dict(env_config or {})
    limit = int(max_steps or config.get("max_steps") or DEFAULT_MAX_STEPS)
    config["max_steps"] = limit
    if int(episodes) < 1:
        raise ValueError(f"episodes must be a positive integer, got {episodes!r}.")
    rows = {row: {"episodes": 0, "avoided": 0, "won": 0} for row in PROBE_ROWS}
    rng = np.random.default_rng(seed)
    envs = [make_env(env_id, config) for _ in range(max(1, min(int(num_envs), int(episodes))))]
    next_seed = int(seed)
    started = 0
    bridge_episodes = 0
    live = {}                       # env index -> (observation, puzzle, opened/held histories)

    def start(index):
        nonlocal next_seed, started
        observation, _ = envs[index].reset(seed=next_seed)
        next_seed += 1
        started += 1
        base = envs[index].unwrapped
        live[index] = [observation, base.puzzle(), [()], [()]]

    for index in range(len(envs)):
        start(index)
    while live:
        order = sorted(live)
        logits = agent.logits(np.stack([live[i][0] for i in order]))
        actions, _ = choose_actions(logits, greedy, rng)
        for index, action in zip(order, actions):
            env = envs[index]
            observation, _, terminated, truncated, info = env.step(int(action))
            state = live[index]
            base = env.unwrapped
            state[0] = observation
            if not (terminated or truncated):
                state[2].append(tuple(base.opened()))
                state[3].append(base.held_keys())
                continue
            puzzle = state[1]
            if bridge_of(puzzle) is not None:
                bridge_episodes += 1
                decision = bridge_decision(puzzle, state[2], state[3], base.opened(),
                                           include_held)
                row = rows[NEVER_FACED if decision is None else decision.verdict]
                row["episodes"] += 1
                row["avoided"] += int(decision is not None and not decision.opened_bridge)
                row["won"] += int(bool(info["is_success"]))
            del live[index]
            if started < int(episodes):
                start(index)
    for env in envs:
        env.close()
    return ProbeResult(int(episodes), bridge_episodes, rows, bool(include_held))


def format_probe_table(result):
    """The probe as a table: per row, episodes, bridge avoided (rate, 95% interval) and won."""
    lines = [f"Logic probe: {result.bridge_episodes} bridge episodes of {result.episodes} played "
             f"(source/sink rule on the visible board"
             f"{' plus held keys' if result.include_held else ''}, at the first moment the "
             f"bridge could be opened)",
             f"{'':<28}{'episodes':>9}{'avoided':>9}{'rate':>8}   95% interval{'won':>8}"]
    for row in PROBE_ROWS:
        entry = result.rows[row]
        if row == NEVER_FACED:
            lines.append(f"{row:<28}{entry['episodes']:>9}{'-':>9}{'-':>8}   {'-':<12}"
                         f"{entry['won']:>8}")
            continue
        low, high = wilson_interval(entry["avoided"], entry["episodes"])
        rate = f"{entry['avoided'] / entry['episodes']:.3f}" if entry["episodes"] else "-"
        lines.append(f"{row:<28}{entry['episodes']:>9}{entry['avoided']:>9}{rate:>8}   "
                     f"[{low:.3f}, {high:.3f}]{entry['won']:>8}")
    return "\n".join(lines)
