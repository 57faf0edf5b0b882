"""Where does a policy's greedy play leave the shortest way to the Gem? Its moves on its own states,
judged by the step-optimal oracle.

    result = learner_errors(agent.logits, "BridgeBoxWorld-v0", env_config, episodes=1000)
    print(result.to_markdown())

A model can be right on nearly every state of the oracle's play and still lose many episodes:
the states it drives itself into are not the oracle's, and one wrong move of a memoryless greedy
policy can start a loop it never leaves. This plays `episodes` fresh boards greedily (episode k
is the board of `reset(seed=seed + k)`), each ended at its first repeated observation as
`keras-simplicial evaluate --greedy` ends it (so the same seed and env config play the same
episodes and win the same ones). Before each move the state is judged by
`keras_simplicial.envs.step_oracle.StepOracle` (the labels DAgger trains on) and the move is
classed (`KINDS`):

- ``optimal``: one of the oracle's moves (a shortest way to the Gem goes on with it);
- ``detour``: another move after which the Gem can still be reached, farther away;
- ``fatal``: a move after which it cannot (a wrong box or the bridge opened);
- ``blocked``: a move that changes nothing (a wall, a box without its key): greedy play
  repeats it, and the episode is lost there.

The *stage* of a state is how many objects of the solution paths (boxes and loose keys, the
oracle's `slots`) are opened before it. Reported: the moves of each kind per stage and per
puzzle type, and for each lost episode its first wrong move (stage and kind, and the oracle's
steps to the Gem before it); every lost episode has one, since optimal moves alone reach the Gem
without repeating a state.
"""

import dataclasses
from collections import Counter

import numpy as np

from keras_simplicial.agents.analysis.evaluation import puzzle_type_label
from keras_simplicial.agents.analysis.results import Result, cell, markdown_table
from keras_simplicial.agents.provenance import provenance
from keras_simplicial.agents.rollout import play_episodes
from keras_simplicial.envs.step_oracle import UNREACHABLE, StepOracle

#: How a move relates to the oracle's shortest ways (see the module's docstring).
KINDS = ("optimal", "detour", "fatal", "blocked")
WRONG = KINDS[1:]


@dataclasses.dataclass
class LearnerErrors(Result):
    """The moves of a policy's greedy play, judged by the step-optimal oracle.

    by_stage and by_type map a stage ("0", "1", ...) or a puzzle type ("(2, 1, 3)") to
    {"moves", "accuracy" (optimal moves / moves), and each of `KINDS`: its share of the moves};
    by_type's entries also hold "episodes", "wins" and "win_rate". first_errors counts the lost
    episodes by their first wrong move, "stage/kind" -> episodes; first_error_steps_to_gem is the
    median of the oracle's steps to the Gem at those moves (None without a lost episode).
    """

    env: str
    env_config: dict
    episodes: int
    seed: int
    wins: int
    moves: int
    accuracy: float
    kinds: dict
    by_stage: dict
    by_type: dict
    lost: int
    first_errors: dict
    first_error_steps_to_gem: float
    won_with_wrong_moves: int
    code: dict  # the code that measured it (`provenance()`: commit and source hash)

    @property
    def win_rate(self):
        return self.wins / self.episodes

    def to_markdown(self):
        lines = [
            f"Greedy play on {self.episodes:,} fresh boards of {self.env} (seeds {self.seed} on, "
            f"env config {self.env_config or '{}'}): won {self.win_rate:.3f}; "
            f"{self.moves:,} moves, {self.accuracy:.3f} of them one of the step-optimal oracle's.",
            "",
            "Moves by stage (objects of the solution paths opened before the move), as shares:",
            "",
            markdown_table(
                ["stage", "moves", *KINDS],
                [
                    [stage, f"{entry['moves']:,}", *(cell(entry[kind]) for kind in KINDS)]
                    for stage, entry in self.by_stage.items()
                ],
            ),
            "",
            "By puzzle type:",
            "",
            markdown_table(
                ["type", "episodes", "win rate", "moves", *KINDS],
                [
                    [
                        label,
                        entry["episodes"],
                        cell(entry["win_rate"]),
                        f"{entry['moves']:,}",
                        *(cell(entry[kind]) for kind in KINDS),
                    ]
                    for label, entry in self.by_type.items()
                ],
            ),
            "",
            f"The first wrong move of each of the {self.lost} lost episodes (median steps to the "
            f"Gem before it: {cell(self.first_error_steps_to_gem, 1)}), as shares of them:",
            "",
            markdown_table(
                ["stage", *WRONG],
                [
                    [
                        stage,
                        *(
                            cell(self.first_errors.get(f"{stage}/{kind}", 0) / self.lost)
                            if self.lost
                            else "-"
                            for kind in WRONG
                        ),
                    ]
                    for stage in self.by_stage
                ],
            ),
            "",
            f"Won episodes with a wrong move on the way: {self.won_with_wrong_moves} of "
            f"{self.wins}.",
        ]
        return "\n".join(lines)


class _Judge:
    """`play_episodes`'s `observe`: before each move, the oracle's judgement of each board's state
    (its optimal moves, its stage, its steps to the Gem), and the oracle of each episode."""

    def __init__(self):
        self.oracles = {}
        self.before = {}

    def __call__(self, core, boards):
        for board in boards:
            board = int(board)
            if core.steps[board] == 0:  # a new episode: its board's oracle
                self.oracles[board] = StepOracle(core, board)
            oracle = self.oracles[board]
            mask, _ = oracle.state(core, board)
            self.before[board] = (
                oracle.optimal_actions(core, board),
                bin(mask).count("1"),
                oracle.steps_to_gem(core, board),
            )


def _shares(counts):
    moves = sum(counts.values())
    return {
        "moves": moves,
        "accuracy": counts["optimal"] / moves if moves else None,
        **{kind: counts[kind] / moves if moves else None for kind in KINDS},
    }


def learner_errors(
    logits, env_id, env_config, *, episodes=1000, seed=0, num_envs=32, mask_blocked_moves=False
):
    """Plays `episodes` boards greedily with `logits` (observations [B, R, C+1, 3] uint8 ->
    logits [B, 4], or a tuple that starts with them) and judges every move against the
    step-optimal oracle (the module's docstring); returns `LearnerErrors`.
    `mask_blocked_moves`: as `rollout.play_episodes`."""
    judge = _Judge()
    kinds, by_stage, by_type = Counter(), {}, {}
    moves_of = {}  # episode -> [(stage, kind, steps to the Gem before the move)]
    outcomes = {}  # episode -> (puzzle type, won)
    for step in play_episodes(
        logits,
        env_id,
        env_config,
        episodes=episodes,
        num_envs=num_envs,
        seed=seed,
        greedy=True,
        end_cycles=True,
        mask_blocked_moves=mask_blocked_moves,
        observe=judge,
    ):
        core = step.core
        for i, board in enumerate(step.boards):
            board, episode = int(board), int(step.episodes[i])
            puzzle_type = puzzle_type_label(core.puzzle_type[board])
            won = bool(step.ended[i] and core.is_success[board])
            if step.ended[i]:
                outcomes[episode] = (puzzle_type, won)
            optimal, stage, steps_before = judge.before[board]
            if steps_before == UNREACHABLE:  # the Gem was lost before: nothing left to judge
                continue
            if optimal[step.actions[i]]:
                kind = "optimal"
            elif step.loops[i] is not None and step.loops[i] != "cycle":
                kind = "blocked"  # the board did not change: greedy play repeats the move
            elif judge.oracles[board].steps_to_gem(core, board) == UNREACHABLE:
                kind = "fatal"
            else:
                kind = "detour"
            kinds[kind] += 1
            by_stage.setdefault(stage, Counter())[kind] += 1
            by_type.setdefault(puzzle_type, Counter())[kind] += 1
            moves_of.setdefault(episode, []).append((stage, kind, steps_before))
    return _result(env_id, env_config, episodes, seed, kinds, by_stage, by_type, moves_of, outcomes)


def _result(env_id, env_config, episodes, seed, kinds, by_stage, by_type, moves_of, outcomes):
    first_errors, first_steps, won_with_wrong = Counter(), [], 0
    games = {}
    for episode, (puzzle_type, won) in outcomes.items():
        games.setdefault(puzzle_type, []).append(won)
        wrong = [move for move in moves_of.get(episode, []) if move[1] != "optimal"]
        if won:
            won_with_wrong += bool(wrong)
        elif wrong:
            stage, kind, steps_before = wrong[0]
            first_errors[f"{stage}/{kind}"] += 1
            first_steps.append(steps_before)
    moves = sum(kinds.values())
    types = {}
    for label in sorted(by_type):
        won = games.get(label, [])
        types[label] = {
            "episodes": len(won),
            "wins": sum(won),
            "win_rate": sum(won) / len(won) if won else None,
            **_shares(by_type[label]),
        }
    wins = sum(won for _, won in outcomes.values())
    return LearnerErrors(
        env=env_id,
        env_config=dict(env_config or {}),
        episodes=int(episodes),
        seed=int(seed),
        wins=int(wins),
        moves=moves,
        accuracy=kinds["optimal"] / moves if moves else 0.0,
        kinds={kind: kinds[kind] for kind in KINDS},
        by_stage={str(stage): _shares(by_stage[stage]) for stage in sorted(by_stage)},
        by_type=types,
        lost=len(outcomes) - int(wins),
        first_errors=dict(sorted(first_errors.items())),
        first_error_steps_to_gem=float(np.median(first_steps)) if first_steps else None,
        won_with_wrong_moves=won_with_wrong,
        code=provenance(),
    )
