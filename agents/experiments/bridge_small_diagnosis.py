"""Why does a bridge-small run hold on the (1,1,2) plateau? The package's diagnostics, run by run,
for failing and succeeding runs side by side (issue: the simplicial agent on every run).

    .venv/bin/python studies/bridge-small-every-run/bridge_small_diagnosis.py RUN_DIR [RUN_DIR ...]
        [--boards 40] [--late-from 2000000] [--markdown FILE] [--json FILE]

Per run directory (a `keras-simplicial sweep` or `reproduce` run on `bridge-small`):

- the outcome: the best checkpoint's greedy win rate on 1,000 fresh episodes, overall and on
  puzzle type (1,1,2), and what its looping greedy (1,1,2) episodes repeated (the cached
  `evaluation_best_greedy.json`; a run that does not succeed wins < `SUCCESS`);
- the plateau: the iterations where the training win rate on (1,0,0) is >= 0.9 and on (1,1,2)
  < 0.9 (type (1,0,0) learnt, the bridge type not yet): how many steps the run spent there, and
  the medians over them of the policy entropy, the gradient norm and each part's
  (`grad_norm/<part>`), the 2-simplicial attention's largest probability and saturated share,
  and why (1,1,2) episodes ended (`ended/<why>/1_1_2`, where the run logged it);
- late in the run: the medians over the iterations from `--late-from` steps on of the training
  win rate, the policy entropy and the mean episode length (a run that has converged wins every
  episode, by short paths, with little entropy left);
- position: does the best checkpoint's policy depend on where the player stands? On `--boards`
  fresh (1,1,2) boards, the standard deviation over the floor tiles of each action's probability
  (`keras-simplicial policy-map`), averaged over actions and boards (0: the same policy on
  every tile); needs the checkpoint, "-" where the run was committed without it;
- routes: the best checkpoint's greedy win rate on 3 x `--boards` fresh (1,1,2) episodes, by the
  tile the bridge stands on (`wins_by_bridge_tile`; needs the checkpoint too).
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

from keras_simplicial.agents.training.run_directory import RunDirectory

SUCCESS = 0.95  # the greedy target within 3M steps
BRIDGE_TYPE = "1_1_2"
PLATEAU_COLUMNS = {
    "entropy": "entropy",
    "grad_gnorm": "grad norm",
    "grad_norm/simplicial_query_key": "grad 2-simp q/k",
    "grad_norm/simplicial_value_B": "grad 2-simp v/B",
    "grad_norm/one_simplicial": "grad 1-simp",
    "attention/simplicial_max_prob": "2-simp max prob",
    "attention/simplicial_saturated": "2-simp saturated",
    "ended/out_of_steps/1_1_2": "(1,1,2) out of steps",
    "ended/opened_bridge/1_1_2": "(1,1,2) bridge",
}
LATE_COLUMNS = {
    "win_rate": "late win rate",
    "entropy": "late entropy",
    "episode_len_mean": "late episode length",
}
LATE_FROM = 2_000_000  # environment steps: the last third of a 3M-step run


def number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def plateau(rows):
    """The rows on the (1,1,2) plateau: (1,0,0) >= 0.9, (1,1,2) < 0.9 in training."""
    return [
        row
        for row in rows
        if (number(row.get("win_rate/1_0_0")) or 0.0) >= 0.9
        and (number(row.get(f"win_rate/{BRIDGE_TYPE}")) or 0.0) < 0.9
    ]


def medians_of(rows, columns):
    """{column: median over `rows`} of `columns` (None where the run did not log it)."""
    medians = {}
    for column in columns:
        values = [number(row.get(column)) for row in rows]
        values = [v for v in values if v is not None]
        medians[column] = statistics.median(values) if values else None
    return medians


def steps_on(rows, all_rows):
    """Environment steps spent in `rows` (each row's steps since the row before it)."""
    previous = {id(row): 0 for row in all_rows[:1]}
    for before, row in zip(all_rows, all_rows[1:]):
        previous[id(row)] = int(before["timesteps"])
    return sum(int(row["timesteps"]) - previous[id(row)] for row in rows)


def outcome(run_dir):
    """The best checkpoint's greedy evaluation: overall, (1,1,2) and its loops, or None."""
    path = Path(run_dir) / "evaluation_best_greedy.json"
    if not path.exists():
        return None
    report = json.loads(path.read_text(encoding="utf-8"))
    bridge = report["per_puzzle_type"].get("(1, 1, 2)", {})
    return {
        "win_rate": report["overall"]["win_rate"],
        "bridge_type_win_rate": bridge.get("win_rate"),
        "bridge_type_loops": bridge.get("loops", {}),
    }


def best_agent_on_bridge_boards(run_dir):
    """(agent, env id, env config) of the run's best checkpoint (or its exported policy), on its
    env with a bridge in every episode, or None where neither is there."""
    from keras_simplicial.agents.training.checkpoints import (
        environment_of,
        load_attention_agent,
    )
    from keras_simplicial.agents.training.run_directory import RunDirectory

    best = RunDirectory(run_dir).best_policy()
    if best is None:
        return None
    agent, arguments = load_attention_agent(best[0])
    env_id, env_config = environment_of(arguments, None, {"bridge_probability": 1.0})
    return agent, env_id, env_config


def position_spread(agent, env_id, env_config, boards):
    """Mean over `boards` fresh (1,1,2) boards of the agent's policy spread over the floor tiles
    (mean over actions)."""
    from keras_simplicial.agents.analysis.policy_map import policy_map

    spreads = []
    seed = 0
    while len(spreads) < boards:
        result = policy_map(agent.logits, env_id, env_config, seed=seed)
        seed += 1
        if result.puzzle_type == (1, 1, 2):
            spreads.append(float(result.spread().mean()))
    return statistics.mean(spreads)


def wins_by_bridge_tile(agent, env_id, env_config, episodes):
    """{bridge tile: greedy win rate} of the agent on `episodes` fresh (1,1,2) episodes (boards of
    seeds 0, 1, ...). Bridge-small has 4 key positions, the Gem box always at the first, so the
    bridge stands on one of 3 tiles: a policy that wins on some of them only has learnt a route,
    not where the keys it must collect are."""
    from keras_simplicial.agents.analysis.bridge_rule import bridge_of
    from keras_simplicial.agents.analysis.episode import play_episode

    wins, seed = {}, 0
    while sum(len(outcomes) for outcomes in wins.values()) < episodes:
        record = play_episode(
            agent, env_id, env_config, seed=seed, greedy=True, record_attention=False
        )
        seed += 1
        if record.puzzle_type == (1, 1, 2):
            tile = str(tuple(bridge_of(record.puzzle).position))
            wins.setdefault(tile, []).append(record.won)
    return {tile: sum(won) / len(won) for tile, won in sorted(wins.items())}


def diagnose(run_dir, boards, late_from=LATE_FROM):
    rows = RunDirectory(run_dir).read_metrics()
    late = [row for row in rows if int(row["timesteps"]) >= late_from]
    run = json.loads((Path(run_dir) / "run.json").read_text(encoding="utf-8"))
    on_plateau = plateau(rows)
    result = outcome(run_dir)
    diagnosis = {
        "run": str(run_dir),
        "agent": run["agent"],
        "seed": run["seed"],
        "outcome": result,
        "succeeded": None if result is None else result["win_rate"] >= SUCCESS,
        "plateau_steps": steps_on(on_plateau, rows),
        "plateau_medians": medians_of(on_plateau, PLATEAU_COLUMNS),
        "late_from": late_from,
        "late_medians": medians_of(late, LATE_COLUMNS),
        "position_spread": None,
        "wins_by_bridge_tile": None,
    }
    best = best_agent_on_bridge_boards(run_dir) if boards else None
    if best is not None:
        diagnosis["position_spread"] = position_spread(*best, boards)
        diagnosis["wins_by_bridge_tile"] = wins_by_bridge_tile(*best, 3 * boards)
    return diagnosis


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}g}"


def markdown(diagnoses):
    header = ["run", "best greedy", "(1,1,2)", "(1,1,2) cycles", "steps on plateau"]
    header += list(PLATEAU_COLUMNS.values()) + list(LATE_COLUMNS.values())
    header += ["position spread", "(1,1,2) wins by bridge tile"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for d in diagnoses:
        result = d["outcome"] or {}
        medians = d["plateau_medians"]
        cells = [
            f"{d['agent']} seed {d['seed']} ({Path(d['run']).parent.name})",
            fmt(result.get("win_rate")),
            fmt(result.get("bridge_type_win_rate")),
            fmt((result.get("bridge_type_loops") or {}).get("cycle")),
            f"{d['plateau_steps']:,}",
            *(fmt(medians[column]) for column in PLATEAU_COLUMNS),
            *(fmt(d["late_medians"][column]) for column in LATE_COLUMNS),
            fmt(d["position_spread"]),
            ", ".join(
                f"{tile} {rate:.2f}" for tile, rate in (d["wins_by_bridge_tile"] or {}).items()
            )
            or "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories")
    parser.add_argument(
        "--boards", type=int, default=40, help="(1,1,2) boards for the position spread; 0: skip"
    )
    parser.add_argument(
        "--late-from",
        type=int,
        default=LATE_FROM,
        help="environment steps from which the late medians are taken",
    )
    parser.add_argument("--markdown", default=None, help="also write the table here")
    parser.add_argument("--json", default=None, help="also write every number here")
    args = parser.parse_args(argv)
    if args.boards < 0:
        parser.error(f"--boards must be >= 0, got {args.boards}")
    if args.late_from < 0:
        parser.error(f"--late-from must be >= 0 steps, got {args.late_from}")
    from keras_simplicial.agents.analysis.results import save_report
    from keras_simplicial.agents.provenance import provenance

    code = provenance()
    diagnoses = [{**diagnose(run, args.boards, args.late_from), "code": code} for run in args.runs]

    text = markdown(diagnoses)
    save_report(text, diagnoses, args.markdown, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
