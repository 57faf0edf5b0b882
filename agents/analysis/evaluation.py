"""Win rates of a trained agent per puzzle type, with confidence intervals.

    report = evaluate_checkpoint("runs/demo/checkpoints/iter_000120", episodes=1000)
    print(report.to_markdown())         # report.to_dict() is what evaluation.json holds

The policy is loaded from the checkpoint alone (no Ray cluster), and plays `episodes` episodes on
the run's environment (`rollout.play_episodes`: episode k is the board of `reset(seed=seed + k)`).
Every episode started is played to its end, so short episodes are not over-represented. Episodes
are capped at `max_episode_steps` (default: the run's `max_steps`, else 500; a capped episode
counts as lost), because the paper's environment has no step limit and an untrained policy may
never finish.
"""

import dataclasses
import math
from typing import Optional

import numpy as np

from keras_simplicial.agents.analysis.results import Result, cell, markdown_table
from keras_simplicial.agents.atomic_files import atomic_write_json
from keras_simplicial.agents.rollout import LOOPS, episode_outcomes
from keras_simplicial.agents.training.checkpoints import (
    check_observation_shape,
    environment_of,
    keras_policy_file,
    load_keras_agent,
    load_policy,
    resolve_checkpoint,
    run_arguments_of,
    run_directory_of,
)
from keras_simplicial.envs import OUTCOMES, episode_step_limit


def wilson_interval(wins, total, z=1.96):
    """The Wilson score interval of a binomial proportion (95% for z = 1.96)."""
    if total == 0:
        return (0.0, 1.0)
    p = wins / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def puzzle_type_label(puzzle_type):
    """`(3, 2, 5)` -> `"(3, 2, 5)"`, a puzzle type's key in `summarise`'s per_puzzle_type and the
    reports that follow its form (`win_rate_figures.parse_puzzle_type` reads it back)."""
    return "(%d, %d, %d)" % tuple(int(part) for part in puzzle_type)


def policy_logits(policy):
    """observations -> logits of an RLlib policy loaded by `load_policy` (its traced model)."""
    return lambda observations: np.asarray(policy.model.logits_and_values(observations)[0])


def summarise(results, loops=False):
    """Win rate overall and per puzzle type, each with a 95% Wilson interval and the fraction of
    episodes that ended each way (`ended_by`, over `OUTCOMES`), from `EpisodeOutcome`s.

    `loops=True` (greedy play) adds the fraction of episodes ended at a repeated observation, by
    what they were repeating (`loops`, over `rollout.LOOPS`; e.g. `gem_box_one_key`: pushing the
    Gem box holding one of its two keys). Those episodes are also in `ended_by`, as out of steps
    (or a wrong box where the Gem was already lost).
    """

    def entry(outcomes):
        wins, total = sum(outcome.won for outcome in outcomes), len(outcomes)
        low, high = wilson_interval(wins, total)
        ended_by = [outcome.ended_by for outcome in outcomes]
        result = {
            "episodes": total,
            "wins": wins,
            "win_rate": wins / total if total else 0.0,
            "ci95": [round(low, 4), round(high, 4)],
            "ended_by": {
                name: round(ended_by.count(name) / total, 4) if total else 0.0 for name in OUTCOMES
            },
        }
        if loops:
            looped = [outcome.loop for outcome in outcomes]
            result["loops"] = {
                name: round(looped.count(name) / total, 4) if total else 0.0 for name in LOOPS
            }
        return result

    by_type = {}
    for outcome in results:
        by_type.setdefault(outcome.puzzle_type, []).append(outcome)
    return {
        "overall": entry(results),
        "mean_episode_length": float(np.mean([outcome.length for outcome in results]))
        if results
        else 0.0,
        "per_puzzle_type": {
            puzzle_type_label(puzzle_type): entry(outcomes)
            for puzzle_type, outcomes in sorted(by_type.items())
        },
    }


@dataclasses.dataclass
class Evaluation(Result):
    """Win rates of one checkpoint on fresh episodes: `to_dict()` is its evaluation.json.

    Attributes:
        checkpoint: what was played (a checkpoint, or a Keras policy file).
        agent, env, env_config, seed: the agent and the episodes (episode k is the board of
            `reset(seed=seed + k)`).
        explore: whether actions were sampled (False: the most probable).
        max_episode_steps: the step limit of an episode.
        overall, mean_episode_length, per_puzzle_type: `summarise` of the episodes.
        output: where `to_dict()` was written, if anywhere (not part of it).
        mask_blocked_moves: whether the policy chose among the moves the board lets through only,
            as its run trained (`--mask-blocked-moves`).
    """

    checkpoint: str
    agent: str
    env: str
    env_config: dict
    seed: int
    explore: bool
    max_episode_steps: int
    overall: dict
    mean_episode_length: float
    per_puzzle_type: dict
    output: Optional[str] = None
    mask_blocked_moves: bool = False

    def to_dict(self):
        report = dataclasses.asdict(self)
        del report["output"]
        return report

    def to_markdown(self):
        return evaluation_table(self.to_dict())


def evaluate_checkpoint(
    checkpoint,
    episodes=1000,
    env_id=None,
    env_config=None,
    seed=0,
    num_envs=32,
    max_episode_steps=None,
    explore=True,
    output=None,
    policy=None,
):
    """Evaluates a checkpoint (or a run directory's latest one) and writes its JSON report.

    The environment defaults to the one the run trained on (from its run.json); `env_config` is
    merged over the run's env config (`environment_of`), and a board of another size than the
    agent's is named in a ValueError. The report goes
    to `output`, or to the run's evaluation.json. `explore=False` takes the most probable action.
    `policy`: the checkpoint's policy if already loaded (`load_policy`), to evaluate it several
    ways without loading it again. A greedy report also says what the episodes that looped were
    repeating (`summarise(loops=True)`). A run trained with `--mask-blocked-moves` plays as it
    trained: among the moves the board lets through only.

    Returns:
        An `Evaluation`.
    """
    if int(episodes) < 1:
        raise ValueError(f"episodes must be a positive integer, got {episodes!r}.")
    keras_policy = keras_policy_file(checkpoint)
    if keras_policy is not None:  # a supervised run's model (keras-simplicial dagger)
        agent, arguments = load_keras_agent(keras_policy)
        checkpoint, logits, shape = keras_policy, agent.logits, agent.observation_shape
    else:
        checkpoint = resolve_checkpoint(checkpoint)
        arguments = run_arguments_of(checkpoint)
        policy = policy or load_policy(checkpoint)
        logits, shape = policy_logits(policy), policy.observation_space.shape
    env_id, env_config = environment_of(arguments, env_id, env_config)
    check_observation_shape(shape, env_id, env_config)
    limit = episode_step_limit(env_config, max_episode_steps)
    masking = bool(arguments and arguments.mask_blocked_moves)
    results = episode_outcomes(
        logits,
        env_id,
        env_config,
        int(episodes),
        num_envs=num_envs,
        seed=seed,
        max_steps=limit,
        greedy=not explore,
        mask_blocked_moves=masking,
    )
    report = Evaluation(
        checkpoint=str(checkpoint),
        agent=arguments.agent if arguments else policy.model.kind,
        env=env_id,
        env_config=env_config,
        seed=seed,
        explore=explore,
        max_episode_steps=limit,
        **summarise(results, loops=not explore),
        mask_blocked_moves=masking,
    )
    run = None if keras_policy is not None else run_directory_of(checkpoint)
    if output is None and run is not None:
        output = run.evaluation_file
    if output is not None:
        atomic_write_json(output, report.to_dict())
        report.output = str(output)
    return report


# Column titles of the losses in `evaluation_table`, by outcome.
LOSS_COLUMNS = {
    "opened_bridge": "bridge",
    "opened_wrong_box": "wrong box",
    "out_of_steps": "no time",
}

# Column titles of a greedy report's loops in `evaluation_table`: the Gem box pushed with one of its
# two keys, a wrong box (the bridge) pushed without its key, every other move the board does not
# allow, and cycles of moves.
LOOP_COLUMNS = {
    "gem_box_one_key": "Gem 1 key",
    "closed_wrong_box": "wrong box",
    "blocked": "blocked",
    "cycle": "cycle",
}


def loop_shares(loops):
    """A report entry's `loops` ({kind: share}) folded into `LOOP_COLUMNS`' four."""
    named = {kind: loops.get(kind, 0.0) for kind in LOOP_COLUMNS if kind != "blocked"}
    blocked = round(max(0.0, sum(loops.values()) - sum(named.values())), 4)
    return {kind: named.get(kind, blocked) for kind in LOOP_COLUMNS}


def evaluation_table(report):
    """An evaluation report (`Evaluation.to_dict()`, or `summarise`'s) as a Markdown table:
    puzzle type, episodes, win rate, its 95% interval and the fraction of episodes lost each way
    (reports written before `ended_by` existed leave those out); a greedy report adds what its
    looping episodes repeated (`LOOP_COLUMNS`)."""
    with_loops = "loops" in report["overall"]
    header = ["puzzle type", "episodes", "win rate", "95% interval"]
    header += [f"lost: {title}" for title in LOSS_COLUMNS.values()]
    header += [f"loops: {title}" for title in LOOP_COLUMNS.values()] if with_loops else []
    rows = []
    for name, entry in [*report["per_puzzle_type"].items(), ("overall", report["overall"])]:
        low, high = entry["ci95"]
        ended_by = entry.get("ended_by") or {}
        row = [name, entry["episodes"], cell(entry["win_rate"]), f"[{low:.3f}, {high:.3f}]"]
        row += [cell(ended_by.get(outcome)) for outcome in LOSS_COLUMNS]
        if with_loops:
            row += [cell(share) for share in loop_shares(entry["loops"]).values()]
        rows.append(row)
    return markdown_table(header, rows)
