"""The trainability study's RL campaigns, read from their run directories (studies/trainability/):
bridge-small (rl-plan.md), the bridge-medium pilot (pilot-plan.md), the front end's two campaigns
(front-end-rl-plan.md), what the pilots' decisions lead to (comparison-plan.md, ladder-plan.md,
as front-end-rl-plan.md amends them), and the check before the front end becomes every preset's
default (defaults-plan.md). The study's report.py writes its page from these; its scripts
ask `pilot_decision` and `next_campaign` (through `report.py --pilot-decision` and `--campaign`)
before they run.

    runs = rl_runs("studies/trainability/results/bridge-medium-pilot")
    pilot_decision(runs)            # "go", "no-go" or None (open)
    next_campaign("no-go", "go", campaign_finished(rl_runs(bridge_small_front_end)))
                                    # ("comparison", "front end")
    campaign_holds(rl_runs(bridge_small_front_end))   # "holds", "does-not-hold" or None
    easy_check_decision(rl_runs(easy_front_end))     # defaults-plan.md's check, the same
"""

import json
import statistics
from pathlib import Path

from keras_simplicial.agents.analysis.training_table import WIN_PREFIX
from keras_simplicial.agents.training.metric_rows import parse_puzzle_type_key
from keras_simplicial.agents.training.rllib.results import PART_GRADIENT_NORM
from keras_simplicial.agents.training.run_arguments import AGENTS
from keras_simplicial.agents.training.run_directory import RunDirectory

LEARNS = 0.9  # rl-plan.md: the best checkpoint's greedy win rate on 1,000 fresh episodes
PILOT_STEPS = 20_000_000  # pilot-plan.md, section 3
LENGTH_2 = "best_greedy_length2"  # run-bridge-medium-pilot.sh's evaluation of the best checkpoint
GO = 0.9  # pilot-plan.md: greedy win rate of a best checkpoint on 1,000 length-2 episodes
RECENT = 50  # iterations averaged for a training win rate per puzzle type
# The trainability sites a run's metrics rows carry (`trainability.FeatureHealth`), in the signal's
# order: how much each depends on the state, then the last MLP layer's dead share.
SITES = {
    "block_1": "trainability/block_1/state_sd",
    "block_2": "trainability/block_2/state_sd",
    "pooled": "trainability/pooled/state_sd",
    "MLP dead": "trainability/mlp_dead",
}
# Then the norm of each part's gradient as the optimizer applies it (`model_parts.MODEL_PARTS`,
# after the clipping of the whole gradient's norm), front end first, as the signal flows; the
# 2-simplicial parts only the simplicial agent has.
GRADIENT_PARTS = {
    "grad front end": PART_GRADIENT_NORM + "front_end",
    "grad 1-simp": PART_GRADIENT_NORM + "one_simplicial",
    "grad 2-simp q/k": PART_GRADIENT_NORM + "simplicial_query_key",
    "grad 2-simp v/B": PART_GRADIENT_NORM + "simplicial_value_B",
    "grad block rest": PART_GRADIENT_NORM + "block_feedforward_norms",
    "grad MLP, heads": PART_GRADIENT_NORM + "mlp_heads",
}


def rl_runs(folder):
    """One dict per run directory of the RL campaign (rl-plan.md): agent, seed, steps, the
    training win rate of the last iteration, the first step at a training win rate of 0.9, the
    first step at which each puzzle type held 0.9 (`types_at`), the four evaluations' win rates
    (None until the run has finished) and any other it has (`evaluation_NAME.json`: a sweep's
    budgets' `within_STEPS_greedy`, ...), the length-2 one where made (`length_2`: its whole
    report, per puzzle type and how episodes ended), the
    recent training win rate of each puzzle type (`recent_win_rates`), the trainability sites
    over the run's second half (`late_sites`) and whether it logged a gradient outside the named
    parts (`gradient_apart`: `entity_norm`'s, before `model_parts` counted it in the front
    end)."""
    runs = []
    for run_dir in sorted(Path(folder).glob("*-seed*")):
        if not (run_dir / "run.json").exists():  # a run that failed to open: not a run yet
            continue
        arguments = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        rows = RunDirectory(run_dir).read_metrics()
        win = [(int(r["timesteps"]), float(r["win_rate"])) for r in rows if r.get("win_rate")]
        evaluations, length_2 = {}, None
        for path in sorted(run_dir.glob("evaluation_*.json")):
            name = path.stem[len("evaluation_") :]
            report = json.loads(path.read_text(encoding="utf-8"))
            evaluations[name] = report["overall"]
            length_2 = report if name == LENGTH_2 else length_2
        runs.append(
            {
                "agent": arguments["agent"],
                "seed": arguments["seed"],
                "steps": int(rows[-1]["timesteps"]) if rows else 0,
                "last_win_rate": win[-1][1] if win else None,
                "first_at_0.9": next((step for step, rate in win if rate >= 0.9), None),
                "evaluations": {k: v["win_rate"] for k, v in evaluations.items()},
                "length_2": length_2,
                "recent_by_type": recent_win_rates(rows),
                "types_at_0.9": types_at(rows, LEARNS),
                "late_sites": late_sites(rows),
                "gradient_apart": any(r.get(PART_GRADIENT_NORM + "other") for r in rows),
            }
        )
    return runs


def type_columns(rows):
    """{puzzle type (a, b, c): its metrics.csv column of training win rates}, in type order."""
    columns = [c for c in (rows[0] if rows else {}) if c.startswith(WIN_PREFIX)]
    return dict(sorted((parse_puzzle_type_key(c[len(WIN_PREFIX) :]), c) for c in columns))


def recent_win_rates(rows, iterations=RECENT):
    """{puzzle type (a, b, c): mean training win rate over the last `iterations` iterations that
    played it}: one iteration plays only a few episodes of each type."""
    found = {}
    for puzzle_type, column in type_columns(rows).items():
        values = [float(r[column]) for r in rows if r.get(column)]
        if values:
            found[puzzle_type] = statistics.fmean(values[-iterations:])
    return found


def types_at(rows, level, iterations=RECENT):
    """{puzzle type (a, b, c): the first step at which its mean training win rate over
    `iterations` iterations that played it reached `level`, or None}: a plateau on one type
    that a single lucky iteration of the overall rate hides."""
    found = {}
    for puzzle_type, column in type_columns(rows).items():
        points = [(int(r["timesteps"]), float(r[column])) for r in rows if r.get(column)]
        found[puzzle_type] = next(
            (
                step
                for i, (step, _) in enumerate(points)
                if i + 1 >= iterations
                and statistics.fmean(rate for _, rate in points[i + 1 - iterations : i + 1])
                >= level
            ),
            None,
        )
    return found


def last_type(run):
    """(puzzle type, step) of an `rl_runs` run's puzzle type that was last to hold a training win
    rate of 0.9 over `RECENT` iterations (step None for a type that never did); None for a run
    without per-type rates."""
    at = run.get("types_at_0.9") or {}
    if not at:
        return None
    never = [puzzle_type for puzzle_type, step in at.items() if step is None]
    if never:
        return never[0], None
    return max(at.items(), key=lambda item: item[1])


def late_sites(rows):
    """{site name of `SITES` or part of `GRADIENT_PARTS`: its median over the second half of the
    run's metrics rows that carry it} (runs started before the trainability columns existed carry
    only the gradient norms)."""
    found = {}
    for name, column in {**SITES, **GRADIENT_PARTS}.items():
        values = [float(r[column]) for r in rows if r.get(column)]
        if values:
            found[name] = statistics.median(values[len(values) // 2 :])
    return found


def site_lines(runs):
    """A campaign's trainability sites (`late_sites`): a row per run that carries them, with its
    best checkpoint's greedy win rate, then a blank line; nothing when no run carries them."""
    carried = [r for r in runs if r["late_sites"]]
    if not carried:
        return []
    columns = [*SITES, *GRADIENT_PARTS]
    lines = [
        "The trainability sites over the second half of each run (the median of its metrics "
        "rows): how much the block's and the pooled features depend on the state (`state_sd`), "
        "the last MLP layer's dead share (runs started before these columns existed have none), "
        "and the norm of each part's gradient as the optimizer applies it, after the clipping of "
        "the whole gradient's norm (the 2-simplicial parts the simplicial agent's alone)."
        + entity_norm_apart(carried),
        "",
        "| agent | seed | " + " | ".join(columns) + " | best: greedy |",
        "|---|---|" + "---|" * len(columns) + "---|",
    ]
    for run in sorted(carried, key=lambda r: (r["agent"], r["seed"])):
        best = run["evaluations"].get("best_greedy")
        sites = run["late_sites"]
        lines.append(
            f"| {run['agent']} | {run['seed']} | "
            + " | ".join(
                "-" if n not in sites else f"{sites[n]:.2f}" if n in SITES else f"{sites[n]:.3g}"
                for n in columns
            )
            + f" | {'running' if best is None else f'{best:.3f}'} |"
        )
    return lines + [""]


def entity_norm_apart(runs):
    """The sentence on the runs (of `rl_runs`) whose front-end gradient leaves out `entity_norm`:
    made before `model_parts` counted that LayerNorm in the front end, they logged its gradient
    apart, as `grad_norm/other`; "" when none did."""
    apart = [r for r in runs if r["gradient_apart"]]
    if not apart:
        return ""
    which = (
        "every run here"
        if len(apart) == len(runs)
        else "these runs: " + ", ".join(f"{r['agent']} seed {r['seed']}" for r in apart)
    )
    return (
        f" The front end's column leaves out `entity_norm`'s LayerNorm in {which}: they logged "
        "its gradient apart (`grad_norm/other`), before it was counted in the front end."
    )


def evaluation_pair(evaluations, kind):
    """ "greedy, sampled" win rates of the `kind` checkpoint ("best", "final", a sweep budget's
    "within_STEPS"), or "-"."""
    if f"{kind}_greedy" not in evaluations:
        return "-"
    sampled = evaluations.get(f"{kind}_sampled", float("nan"))
    return f"{evaluations[f'{kind}_greedy']:.3f}, {sampled:.3f}"


def type_label(puzzle_type):
    """(1, 1, 2) -> "(1,1,2)", as the tables of `keras-simplicial summary` write it."""
    return f"({','.join(map(str, puzzle_type))})"


def pilot_decision(runs):
    """pilot-plan.md, section 5, once both agents' runs are evaluated on length 2 (None before:
    front-end-rl-plan.md's next step waits for the whole pilot, and a pilot reports both runs):
    "go" when a best checkpoint wins at least `GO` of the length-2 episodes greedily, else
    "no-go"."""
    rates = {r["agent"]: r["evaluations"][LENGTH_2] for r in runs if LENGTH_2 in r["evaluations"]}
    if not set(AGENTS) <= set(rates):
        return None
    return "go" if any(rate >= GO for rate in rates.values()) else "no-go"


BRIDGE_SMALL_SEEDS = range(1, 9)  # rl-plan.md: seeds 1-8 per agent


def campaign_finished(runs, seeds=BRIDGE_SMALL_SEEDS):
    """Whether every run of a bridge-small campaign (both agents, `seeds`) has its evaluations."""
    done = {(r["agent"], r["seed"]) for r in runs if "best_greedy" in r["evaluations"]}
    return done >= {(agent, seed) for agent in AGENTS for seed in seeds}


def campaign_holds(runs, seeds=BRIDGE_SMALL_SEEDS):
    """rl-plan.md, section 3, on a bridge-small campaign: "holds" when every run of both agents
    (`seeds`) learns (its best checkpoint wins at least `LEARNS` greedily), "does-not-hold" when
    one does not; None until every run has its evaluations."""
    if not campaign_finished(runs, seeds):
        return None
    wanted = {(agent, seed) for agent in AGENTS for seed in seeds}
    best = {(r["agent"], r["seed"]): r["evaluations"].get("best_greedy") for r in runs}
    return "holds" if all(best[run] >= LEARNS for run in wanted) else "does-not-hold"


EASY_SEEDS = range(1, 6)  # defaults-plan.md, section 3: seeds 1-5 per agent
# defaults-plan.md, section 4: the easy preset's acceptance targets (docs/benchmarks.md).
EASY_TARGETS = {"within_500000_greedy": 0.99, "final_greedy": 0.95}


def meets_easy_targets(run):
    """Whether an `rl_runs` run meets both of `EASY_TARGETS` (None while it lacks one)."""
    rates = run["evaluations"]
    if not set(EASY_TARGETS) <= set(rates):
        return None
    return all(rates[name] >= target for name, target in EASY_TARGETS.items())


def easy_check_decision(runs, seeds=EASY_SEEDS):
    """defaults-plan.md, section 4: "holds" when every run of both agents (`seeds`) meets both
    of `EASY_TARGETS`, "does-not-hold" when one does not; None until each has both
    evaluations."""
    meets = {(r["agent"], r["seed"]): meets_easy_targets(r) for r in runs}
    wanted = [(agent, seed) for agent in AGENTS for seed in seeds]
    if any(meets.get(run) is None for run in wanted):
        return None
    return "holds" if all(meets[run] for run in wanted) else "does-not-hold"


def next_campaign(first_pilot, front_end_pilot, bridge_small_front_end_finished):
    """front-end-rl-plan.md, section 3: what the pilots' decisions ("go", "no-go" or None) lead
    to once both have decided and bridge-small with the front end has finished: ("comparison",
    "front end") when the front end's pilot says go, ("comparison", "remedy") when only the first
    pilot does, ("ladder", "front end") when neither does; None until then."""
    if first_pilot is None or front_end_pilot is None or not bridge_small_front_end_finished:
        return None
    if front_end_pilot == "go":
        return ("comparison", "front end")
    if first_pilot == "go":
        return ("comparison", "remedy")
    return ("ladder", "front end")


def length_2_lines(runs):
    """Why a pilot's best checkpoints lose the length-2 episodes of its decision (greedily): for
    each run evaluated on length 2, its report as `keras-simplicial evaluate` prints it (per
    puzzle type, how the episodes ended and what the looping ones repeated); no lines before any
    run is."""
    from keras_simplicial.agents.analysis.evaluation import evaluation_table

    evaluated = [run for run in runs if run.get("length_2")]
    if not evaluated:
        return []
    lines = [
        "How the best checkpoints' 1,000 length-2 episodes of the decision ended (greedily), and "
        "what the episodes that looped repeated (`keras-simplicial evaluate`'s table: the Gem's "
        "box pushed holding one of its two keys, a wrong box pushed without its key, any other "
        "move the board blocks, a cycle of moves):",
        "",
    ]
    for run in sorted(evaluated, key=lambda r: (AGENTS.index(r["agent"]), r["seed"])):
        lines += [f"{run['agent']} seed {run['seed']}:", "", evaluation_table(run["length_2"]), ""]
    return lines


def pilot_lines(runs, script="run-bridge-medium-pilot.sh"):
    """A pilot's section of the trainability page: a row per run, then the decision; `script`
    starts it."""
    if not runs:
        return [f"Not started yet (`studies/trainability/{script}`)."]
    types = sorted({name for run in runs for name in run["recent_by_type"]})
    lines = [
        "| run | steps | "
        + " | ".join(type_label(name) for name in types)
        + " | best: greedy, sampled | final: greedy, sampled | best, length 2, greedy |",
        "|---|---|" + "---|" * len(types) + "---|---|---|",
    ]
    for run in sorted(runs, key=lambda r: AGENTS.index(r["agent"]) if r["agent"] in AGENTS else 9):
        e = run["evaluations"]
        by_type = run["recent_by_type"]
        length_2 = f"{e[LENGTH_2]:.3f}" if LENGTH_2 in e else "-"
        lines.append(
            f"| {run['agent']} seed {run['seed']} | {run['steps']:,} of {PILOT_STEPS:,} | "
            + " | ".join(f"{by_type[n]:.2f}" if n in by_type else "-" for n in types)
            + f" | {evaluation_pair(e, 'best')} | {evaluation_pair(e, 'final')} | {length_2} |"
        )
    decision = pilot_decision(runs)
    lines += [
        "",
        f"The puzzle types' columns: the training win rate, the mean of the last {RECENT} "
        "iterations that played the type.",
        "",
        "**Decision**: "
        + {
            "go": "go: a best checkpoint wins at least 0.9 of the length-2 episodes greedily.",
            "no-go": "no-go: neither best checkpoint wins 0.9 of the length-2 episodes greedily.",
            None: "open: not every run has finished and been evaluated on length 2.",
        }[decision],
    ]
    return lines
