"""Why does a checkpoint win less greedily than by sampling? The loops its greedy play ends in.

    .venv/bin/python studies/bridge-small-every-run/greedy_gap.py CHECKPOINT_OR_RUN_DIR [...]
        [--episodes 500] [--samples 20] [--markdown FILE] [--json FILE]

Greedy play is deterministic, so a greedy episode that meets an observation a second time repeats
the same moves until the step limit: a *loop* (one state and a move the board does not allow, or a
cycle of moves). Sampling can leave a loop at any of its states. Per checkpoint (a run directory
means its best checkpoint), on the run's own environment:

1. `--episodes` greedy episodes (boards `reset(seed=0 ...)`), each ended at its first repeated
   observation (as `keras-simplicial evaluate --greedy` does). For every loop: its kind (one of
   `rollout.LOOPS`), its length, the policy's probability of the move it repeats at each of its
   states, and the chance that one pass of sampled play follows the whole loop (the product of
   those probabilities): near 1, the policy is sure of the loop's moves; low, it is near a tie
   there and sampling leaves the loop at once.
2. On each board lost greedily, `--samples` sampled episodes of the same board: how many are won,
   and how many meet one of the loop's states (the greedy loop lies on sampled play's own path, or
   only greedy play goes there).
3. The same `--episodes` boards played greedily among the moves the board allows (the most
   probable move that `core.allowed_moves` lets through): what greedy play would win if a move
   the board blocks could never be chosen, and how many of its episodes end in a cycle of moves.

A run trained with `--mask-blocked-moves` is played as it trained, masked, in 1 and 2 as well
(its loops are then cycles of moves, and 3 is its greedy play again).
"""

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np


def loop_start(observations, repeated):
    """Index of the decision whose observation `repeated` (bytes) is: where the loop begins."""
    for index, observation in enumerate(observations):
        if observation == repeated:
            return index
    raise ValueError("the repeated observation is not among the episode's observations")


def follow_probability(probabilities, actions, start):
    """The chance that sampled play repeats the loop once: the product over the loop's decisions
    (from `start` on) of the policy's probability of the move greedy play took there."""
    return float(np.prod([p[a] for p, a in zip(probabilities[start:], actions[start:])]))


def greedy_loops(agent, env_id, env_config, episodes, seed=0):
    """Greedy episodes on boards seed ... seed + episodes - 1; one record per episode lost."""
    from keras_simplicial.agents.rollout import play_episodes

    history = {}  # episode -> (observations, probabilities, actions, values) of its decisions
    lost, won = [], 0
    for step in play_episodes(
        agent,
        env_id,
        env_config,
        episodes=episodes,
        num_envs=min(64, episodes),
        seed=seed,
        greedy=True,
        end_cycles=True,
        mask_blocked_moves=agent.mask_blocked_moves,
    ):
        core = step.core
        _, value, _ = step.outputs
        for i, board in enumerate(step.boards):
            episode = int(step.episodes[i])
            observations, probabilities, actions, values = history.setdefault(
                episode, ([], [], [], [])
            )
            observations.append(step.observations[i].tobytes())
            probabilities.append(np.asarray(step.probabilities[i], np.float64))
            actions.append(int(step.actions[i]))
            values.append(float(np.asarray(value)[board]))
            if not step.ended[i]:
                continue
            observations, probabilities, actions, values = history.pop(episode)
            if core.is_success[board]:
                won += 1
                continue
            loop = step.loops[i]
            record = {
                "board_seed": int(seed) + episode,
                "puzzle_type": str(tuple(int(v) for v in core.puzzle_type[board])),
                "ended_by": core.outcome(board),
                "loop": loop,
            }
            if loop is not None:
                start = loop_start(observations, core.obs[board].tobytes())
                record.update(
                    loop_length=len(actions) - start,
                    loop_observations=observations[start:],
                    move_probabilities=[
                        round(float(p[a]), 4)
                        for p, a in zip(probabilities[start:], actions[start:])
                    ],
                    follow_probability=round(follow_probability(probabilities, actions, start), 4),
                    loop_value=round(float(np.mean(values[start:])), 4),
                )
            lost.append(record)
    return won, lost


def sampled_on_board(agent, env_id, env_config, board_seed, samples, loop_observations, rng):
    """`samples` sampled episodes of board `board_seed`: (wins, episodes meeting a loop state)."""
    from gymnasium.utils import seeding

    from keras_simplicial.agents.rollout import choose_actions, mask_logits
    from keras_simplicial.envs import episode_step_limit, make_vector_env

    limit = episode_step_limit(env_config, None)
    core = make_vector_env(env_id, samples, {**env_config, "max_steps": limit}, copy=False).core
    for board in range(samples):
        core.seed(board, seeding.np_random(int(board_seed))[0])
    core.reset_boards(np.arange(samples))
    trap = set(loop_observations)
    playing = np.ones(samples, bool)
    met = np.zeros(samples, bool)
    won = np.zeros(samples, bool)
    actions = np.zeros(samples, np.int64)
    while playing.any():
        for board in np.flatnonzero(playing):
            met[board] |= core.obs[board].tobytes() in trap
        logits = np.asarray(agent.logits(core.obs.copy()))
        if agent.mask_blocked_moves:
            logits = mask_logits(logits, core.allowed_moves())
        actions[:], _ = choose_actions(logits, False, rng)
        _, terminated, truncated, _ = core.step(actions, autoreset=False)
        # Boards whose episode has ended are stepped too (one batch shape); read each outcome
        # at its end.
        ended = playing & (terminated | truncated)
        won[ended] = core.is_success[ended]
        playing &= ~ended
    return int(won.sum()), int(met.sum())


def greedy_unblocked(agent, env_id, env_config, episodes, seed=0):
    """Greedy play that skips the moves the board blocks, on boards seed ... seed + episodes - 1
    (the boards of `greedy_loops`): (episodes won, episodes ended at a repeated observation).

    A repeated observation ends an episode as in `greedy_loops`; with no blocked move ever
    taken, what repeats is a cycle of moves.
    """
    from keras_simplicial.agents.rollout import episode_outcomes

    outcomes = episode_outcomes(
        agent.logits,
        env_id,
        env_config,
        episodes,
        num_envs=min(64, episodes),
        seed=seed,
        greedy=True,
        mask_blocked_moves=True,
    )
    won = sum(outcome.won for outcome in outcomes)
    return won, sum(outcome.loop is not None for outcome in outcomes)


def quantiles(values):
    if not values:
        return None
    values = sorted(values)
    return {
        "median": round(statistics.median(values), 4),
        "p10": round(float(np.quantile(values, 0.1)), 4),
        "p90": round(float(np.quantile(values, 0.9)), 4),
    }


def summary(checkpoint, episodes, won, lost, sampled, unblocked=None):
    """What greedy play lost and how (see the module docstring); `sampled`: per lost board
    (wins, episodes meeting a loop state, samples); `unblocked`: `greedy_unblocked`'s
    (wins, cycles) on the same boards."""
    loops = [record for record in lost if record.get("loop") is not None]
    kinds = {}
    for record in loops:
        kinds[record["loop"]] = kinds.get(record["loop"], 0) + 1
    samples = sum(n for _, _, n in sampled)
    return {
        "checkpoint": str(checkpoint),
        "episodes": episodes,
        "greedy_wins": won,
        "greedy_lost": len(lost),
        "lost_without_loop": len(lost) - len(loops),
        "loops_by_kind": dict(sorted(kinds.items(), key=lambda item: -item[1])),
        "loop_length": quantiles([r["loop_length"] for r in loops]),
        "follow_probability": quantiles([r["follow_probability"] for r in loops]),
        "loops_followed_at_most_half_the_time": sum(r["follow_probability"] <= 0.5 for r in loops),
        "weakest_move_probability": quantiles([min(r["move_probabilities"]) for r in loops]),
        "loop_value": quantiles([r["loop_value"] for r in loops]),
        "sampled_on_lost_boards": {
            "episodes": samples,
            "won": round(sum(w for w, _, _ in sampled) / samples, 4) if samples else None,
            "met_a_loop_state": round(sum(m for _, m, _ in sampled) / samples, 4)
            if samples
            else None,
        },
        "greedy_blocked_moves_skipped": None
        if unblocked is None
        else {"wins": unblocked[0], "ended_in_a_cycle": unblocked[1]},
        "lost": [{k: v for k, v in r.items() if k != "loop_observations"} for r in lost],
    }


def markdown(summaries):
    from keras_simplicial.agents.analysis.results import markdown_table

    header = [
        "checkpoint",
        "greedy wins",
        "lost: loops by kind",
        "loop length (median)",
        "one pass of the loop when sampling: median (10th-90th percentile)",
        "loops followed <= 0.5",
        "weakest move of a loop (median)",
        "value there (median)",
        "lost boards, sampled: won / met a loop state",
        "greedy, blocked moves skipped: wins (ended in a cycle)",
    ]
    rows = []
    for s in summaries:
        parts = Path(s["checkpoint"]).parts
        follow, weakest, length, value = (
            s[k]
            for k in ("follow_probability", "weakest_move_probability", "loop_length", "loop_value")
        )
        on_lost = s["sampled_on_lost_boards"]
        unblocked = s.get("greedy_blocked_moves_skipped")
        loops = sum(s["loops_by_kind"].values())
        rows.append(
            [
                "/".join(parts[-4:-2] + parts[-1:]),
                f"{s['greedy_wins']}/{s['episodes']}",
                ", ".join(f"{kind} {n}" for kind, n in s["loops_by_kind"].items()) or "-",
                f"{length['median']:g}" if length else "-",
                f"{follow['median']:.2f} ({follow['p10']:.2f}-{follow['p90']:.2f})"
                if follow
                else "-",
                f"{s['loops_followed_at_most_half_the_time']}/{loops}" if loops else "-",
                f"{weakest['median']:.2f}" if weakest else "-",
                f"{value['median']:.2f}" if value else "-",
                f"{on_lost['won']:.2f} / {on_lost['met_a_loop_state']:.2f}"
                if on_lost["episodes"]
                else "-",
                f"{unblocked['wins']}/{s['episodes']} ({unblocked['ended_in_a_cycle']})"
                if unblocked
                else "-",
            ]
        )
    return markdown_table(header, rows) + "\n"


def diagnose(path, episodes, samples):
    from keras_simplicial.agents.training.checkpoints import (
        best_checkpoint_of,
        environment_of,
        load_attention_agent,
    )

    checkpoint = best_checkpoint_of(path)
    agent, arguments = load_attention_agent(checkpoint)
    env_id, env_config = environment_of(arguments)
    won, lost = greedy_loops(agent, env_id, env_config, episodes)
    rng = np.random.default_rng(0)
    sampled = []
    for record in lost:
        if record.get("loop") is None:
            continue
        wins, met = sampled_on_board(
            agent,
            env_id,
            env_config,
            record["board_seed"],
            samples,
            record["loop_observations"],
            rng,
        )
        record["sampled_won"], record["sampled_met_loop"] = wins, met
        sampled.append((wins, met, samples))
    unblocked = greedy_unblocked(agent, env_id, env_config, episodes)
    return summary(checkpoint, episodes, won, lost, sampled, unblocked)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoints or run directories (best)")
    parser.add_argument("--episodes", type=int, default=500, help="greedy episodes per checkpoint")
    parser.add_argument(
        "--samples", type=int, default=20, help="sampled episodes on each board lost greedily"
    )
    parser.add_argument("--markdown", default=None, help="also write the table here")
    parser.add_argument("--json", default=None, help="also write every loop here")
    args = parser.parse_args(argv)
    for name in ("episodes", "samples"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be a positive integer, got {getattr(args, name)}")
    summaries = [diagnose(path, args.episodes, args.samples) for path in args.checkpoints]
    from keras_simplicial.agents.analysis.results import save_report

    save_report(markdown(summaries), summaries, args.markdown, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
