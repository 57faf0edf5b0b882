"""The logic probe (Section 6: "logic probes"): does the agent avoid the bridge when the
source/sink rule of Remark B.1 locates it, more often than when the rule cannot?

`logic_probe` plays many episodes and tabulates, separately for bridge decisions
(`bridge_rule.bridge_decision`) where the rule can locate the bridge and where it cannot, how
often the agent avoids it. If the agent reasons with the rule it should avoid the bridge more
often when the rule applies.
"""

import dataclasses

from keras_simplicial.agents.analysis.bridge_rule import (
    NEVER_FACED,
    PROBE_ROWS,
    bridge_decision,
    bridge_of,
)
from keras_simplicial.agents.analysis.evaluation import wilson_interval
from keras_simplicial.agents.analysis.results import Result, cell, markdown_table
from keras_simplicial.agents.rollout import play_episodes
from keras_simplicial.envs import BRIDGE_BOX_WORLD_ID


@dataclasses.dataclass
class ProbeResult(Result):
    """Counts of the logic probe: per row of `PROBE_ROWS`, episodes, bridge avoided, won."""

    episodes: int
    bridge_episodes: int
    rows: dict  # row -> {"episodes", "avoided", "won"}
    include_held: bool

    def to_markdown(self):
        """The probe as a table: per row, episodes, bridge avoided (rate, 95% interval) and
        won."""
        lines = [
            f"Logic probe: {self.bridge_episodes} bridge episodes of {self.episodes} played "
            f"(source/sink rule on the visible board"
            f"{' plus held keys' if self.include_held else ''}, at the first moment the "
            "bridge could be opened)",
            "",
        ]
        rows = []
        for row in PROBE_ROWS:
            entry = self.rows[row]
            if row == NEVER_FACED:
                rows.append([row, entry["episodes"], "-", "-", "-", entry["won"]])
                continue
            low, high = wilson_interval(entry["avoided"], entry["episodes"])
            rate = cell(self.avoidance_rate(row)) if entry["episodes"] else "-"
            rows.append(
                [
                    row,
                    entry["episodes"],
                    entry["avoided"],
                    rate,
                    f"[{low:.3f}, {high:.3f}]",
                    entry["won"],
                ]
            )
        header = ["", "episodes", "avoided", "rate", "95% interval", "won"]
        return "\n".join(lines) + "\n" + markdown_table(header, rows)

    def avoidance_rate(self, row):
        entry = self.rows[row]
        return entry["avoided"] / entry["episodes"] if entry["episodes"] else float("nan")

    def to_dict(self):
        table = {}
        for row in PROBE_ROWS:
            entry = dict(self.rows[row])
            if row != NEVER_FACED:
                low, high = wilson_interval(entry["avoided"], entry["episodes"])
                entry["avoidance_rate"] = (
                    round(entry["avoided"] / entry["episodes"], 4) if entry["episodes"] else None
                )
                entry["avoidance_ci95"] = [round(low, 4), round(high, 4)]
            table[row] = entry
        return {
            "episodes": self.episodes,
            "bridge_episodes": self.bridge_episodes,
            "include_held": self.include_held,
            "rows": table,
        }


def logic_probe(
    agent,
    env_id=BRIDGE_BOX_WORLD_ID,
    env_config=None,
    episodes=200,
    seed=0,
    num_envs=16,
    greedy=False,
    max_steps=None,
    include_held=True,
):
    """Plays `episodes` episodes (boards of seeds seed, seed+1, ...); tabulates bridge avoidance.

    Only bridge episodes count; each is put in one row of `PROBE_ROWS` by its `bridge_decision`.
    `num_envs` boards are played in lockstep so that the agent evaluates a batch at a time.
    """
    rows = {row: {"episodes": 0, "avoided": 0, "won": 0} for row in PROBE_ROWS}
    bridge_episodes = 0
    histories = {}  # bridge episode -> (puzzle, opened and held before each decision)
    for step in play_episodes(
        agent.logits,
        env_id,
        env_config,
        episodes=episodes,
        num_envs=num_envs,
        seed=seed,
        greedy=greedy,
        max_steps=max_steps,
        mask_blocked_moves=agent.mask_blocked_moves,
    ):
        core = step.core
        for board, episode, first, ended in zip(step.boards, step.episodes, step.first, step.ended):
            if first:
                puzzle = core.puzzle(board)
                if bridge_of(puzzle) is None:
                    continue
                histories[episode] = (puzzle, [()], [()])
            elif episode not in histories:
                continue
            puzzle, opened, held = histories[episode]
            if not ended:
                opened.append(tuple(core.opened_sequence(board)))
                held.append(core.held_keys(board))
                continue
            del histories[episode]
            bridge_episodes += 1
            decision = bridge_decision(
                puzzle, opened, held, core.opened_sequence(board), include_held
            )
            row = rows[NEVER_FACED if decision is None else decision.verdict]
            row["episodes"] += 1
            row["avoided"] += int(decision is not None and not decision.opened_bridge)
            row["won"] += int(bool(core.is_success[board]))
    return ProbeResult(int(episodes), bridge_episodes, rows, bool(include_held))
