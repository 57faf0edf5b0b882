"""The trainability study's page (studies/trainability/README.md), from its committed files: the
screen's table (every candidate, both learning rates), plan.md's decision, the confirmation, the
diagnosis, the bridge-small campaign (rl-plan.md) and the bridge-medium pilot (pilot-plan.md).

    .venv/bin/python studies/trainability/report.py
    .venv/bin/python studies/trainability/report.py --pilot-decision  # go, no-go or open
"""

import json
import statistics
import sys
from pathlib import Path

from keras_simplicial.agents.experiments.trainability_rl import (
    GO,
    LEARNS,
    PILOT_STEPS,
    RECENT,
    evaluation_pair,
    pilot_decision,
    pilot_lines,
    rl_runs,
    type_columns,
    type_label,
)
from keras_simplicial.agents.imitation.trainability_study import (
    CANDIDATES,
    CAP,
    CONFIRMATION_SEEDS,
    GOAL_UPDATES,
    MODELS,
    TARGET,
    candidate_scores,
    chosen_for_confirmation,
    confirmation_runs,
    load_records,
    screen_complete,
    screen_runs,
    updates_to_target,
)
from keras_simplicial.agents.provenance import code_lines

STUDY = Path(__file__).resolve().parent
RESULTS = STUDY / "results"
PAGE = STUDY / "README.md"
DIAGNOSIS = RESULTS / "diagnosis.json"


# ------------------------------------------------------------------------------------ the page
def cell(updates):
    return "censored" if updates is None else f"{updates:,}"


def screen_table(records):
    lines = [
        "| candidate | learning rate | model | 0.9 on held-out pairs at (updates) | held-out "
        "pairs at 1,000 | held-out pairs at the end | train loss at the end |",
        "|---|---|---|---|---|---|---|",
    ]
    for candidate, run in screen_runs():
        record = records.get(run.name)
        if record is None:
            lines.append(f"| {candidate} | {run.learning_rate:g} | {run.agent} | not run | | | |")
            continue
        at_goal = [r for r in record["curve"] if r["updates"] <= GOAL_UPDATES][-1]
        last = record["curve"][-1]
        status = cell(updates_to_target(record)) if record["finished"] else "running"
        lines.append(
            f"| {candidate} | {run.learning_rate:g} | {run.agent} | {status} | "
            f"{at_goal['held_out_pairs_accuracy']:.3f} | {last['held_out_pairs_accuracy']:.3f} "
            f"(at {last['updates']:,}) | {last['train_loss']:.3f} |"
        )
    return lines


def decision_lines(records):
    if not screen_complete(records):
        return ["The screen has not finished: no decision yet."]
    scores = candidate_scores(records)
    chosen = chosen_for_confirmation(records)
    lines = []
    for candidate, _ in CANDIDATES:
        if candidate in scores:
            score, total, rate = scores[candidate]
            lines.append(
                f"- **{candidate}** qualifies: both models at 0.9 by {score:,} updates at "
                f"{rate:g} (sum {total:,})."
            )
        else:
            lines.append(f"- **{candidate}** does not qualify: no rate brings both models to 0.9.")
    if chosen:
        names = ", ".join(f"{c} at {r:g}" for c, r in chosen)
        lines += ["", f"Sent to the confirmation (plan.md, section 3): {names}."]
    else:
        lines += ["", "No candidate qualifies: no confirmation is run."]
    return lines


def confirmation_lines(records):
    chosen = chosen_for_confirmation(records)
    if not chosen:
        return []
    lines = [
        "| candidate | learning rate | model | "
        + " | ".join(f"seed {s}" for s in CONFIRMATION_SEEDS)
        + " | median | goal (every run within 1,000) |",
        "|---|---|---|" + "---|" * len(CONFIRMATION_SEEDS) + "---|---|",
    ]
    verdicts = []
    for candidate, rate in chosen:
        failed, open_runs = False, False
        for agent in MODELS:
            runs = [
                run
                for c, run in confirmation_runs([(candidate, rate)])
                if c == candidate and run.agent == agent
            ]
            records_of = [records.get(run.name) for run in runs]
            done = [r for r in records_of if r is not None and r["finished"]]
            updates = [updates_to_target(r) for r in done]
            cells = [
                "running" if r is None or not r["finished"] else cell(updates_to_target(r))
                for r in records_of
            ]
            complete = len(done) == len(runs)
            within = complete and all(u is not None and u <= GOAL_UPDATES for u in updates)
            failed = failed or any(u is None or u > GOAL_UPDATES for u in updates)
            open_runs = open_runs or not complete
            median = (
                cell(statistics.median(u if u is not None else CAP + 1 for u in updates))
                if complete
                else "-"
            )
            lines.append(
                f"| {candidate} | {rate:g} | {agent} | {' | '.join(cells)} | {median} | "
                f"{'yes' if within else 'no' if complete else 'open'} |"
            )
        verdict = "not met" if failed else "open" if open_runs else "met"
        verdicts.append((candidate, rate, verdict))
    lines.append("")
    for candidate, rate, verdict in verdicts:
        lines.append(
            f"- **{candidate}** at {rate:g}: the goal (every run at 0.9 within "
            f"{GOAL_UPDATES:,} updates) is {verdict}"
            + (" (runs still to finish)." if verdict == "open" else ".")
        )
    return lines


def diagnosis_lines():
    if not DIAGNOSIS.exists():
        return ["Not run yet (`studies/trainability/diagnose.py`)."]
    records = json.loads(DIAGNOSIS.read_text(encoding="utf-8"))
    lines = []
    for record in records:
        rows = record["rows"]
        sites = [k[: -len("/state_sd")] for k in rows[0] if k.endswith("/state_sd")]
        lines += [
            f"**{record['agent']}, {record['candidate']}**: the training loss on 512 training "
            "states, how much each site depends on the state (`state_sd`, relative to its "
            "scale), in the signal's order, and the dead share of the last MLP layer, along "
            "training.",
            "",
            "| updates | loss | " + " | ".join(sites) + " | dead units, mlp_4 |",
            "|---|---|" + "---|" * len(sites) + "---|",
        ]
        scales = ", ".join(f"{s} {rows[0][f'{s}/rms']:.3f}" for s in sites)
        lines_scale = [f"Root mean square of each site at update 0: {scales}.", ""]
        for row in rows:
            lines.append(
                f"| {row['updates']:,} | {row['loss']:.4f} | "
                + " | ".join(f"{row[f'{s}/state_sd']:.3f}" for s in sites)
                + f" | {row.get('mlp_4/dead', float('nan')):.2f} |"
            )
        lines += ["", *lines_scale]
    return lines


BRIDGE_SMALL = RESULTS / "bridge-small"
CURVES = STUDY / "figures" / "bridge-small-curves.png"
PILOT = RESULTS / "bridge-medium-pilot"
PILOT_CURVES = STUDY / "figures" / "bridge-medium-pilot-curves.png"


def draw_rl_curves(folder=BRIDGE_SMALL, path=CURVES):
    """The training win rate against environment steps of every run of the RL campaign, one
    panel per agent, one line per seed (path: figures/bridge-small-curves.png)."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(MODELS), figsize=(5.0 * len(MODELS), 3.4), squeeze=False)
    for axis, agent in zip(axes.flat, MODELS):
        for run_dir in sorted(Path(folder).glob(f"{agent}-seed*")):
            metrics = run_dir / "metrics.csv"
            if not metrics.exists():
                continue
            rows = [r for r in csv.DictReader(metrics.open(encoding="utf-8")) if r["win_rate"]]
            seed = run_dir.name.rpartition("seed")[2]
            axis.plot(
                [int(r["timesteps"]) / 1e6 for r in rows],
                [float(r["win_rate"]) for r in rows],
                linewidth=1.0,
                label=f"seed {seed}",
            )
        axis.axhline(LEARNS, color="#999999", linewidth=0.7, linestyle="--")
        axis.set_ylim(0.0, 1.02)
        axis.set_xlabel("environment steps (millions)")
        axis.set_title(f"{agent} agent, bridge-small, the remedy", fontsize=9)
        axis.grid(alpha=0.3)
        axis.legend(loc="lower right", fontsize=7)
    axes.flat[0].set_ylabel("training win rate")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=80, metadata={"Software": None})
    plt.close(figure)


def rl_lines(runs):
    if not runs:
        return ["No run has started yet (`studies/trainability/run-bridge-small.sh`)."]
    lines = [
        "| agent | seed | steps | training win rate, last | first at 0.9 (steps) | best: "
        "greedy, sampled | final: greedy, sampled | learns (best greedy >= 0.9) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in sorted(runs, key=lambda r: (r["agent"], r["seed"])):
        e = run["evaluations"]

        learns = (
            "running" if "best_greedy" not in e else "yes" if e["best_greedy"] >= LEARNS else "no"
        )
        first = run["first_at_0.9"]
        last = run["last_win_rate"]
        lines.append(
            f"| {run['agent']} | {run['seed']} | {run['steps']:,} | "
            f"{'-' if last is None else f'{last:.3f}'} | "
            f"{'never' if first is None else f'{first:,}'} | {evaluation_pair(e, 'best')} | "
            f"{evaluation_pair(e, 'final')} | {learns} |"
        )
    lines.append("")
    for agent in MODELS:
        done = [r for r in runs if r["agent"] == agent and "best_greedy" in r["evaluations"]]
        learned = sum(r["evaluations"]["best_greedy"] >= LEARNS for r in done)
        reached = sorted(r["first_at_0.9"] for r in done if r["first_at_0.9"] is not None)
        spread = (
            f"; steps to a training win rate of 0.9: median {statistics.median(reached):,.0f}, "
            f"range {reached[0]:,}-{reached[-1]:,} over the {len(reached)} runs that reached it"
            + (f" ({len(done) - len(reached)} never did)" if len(reached) < len(done) else "")
            if reached
            else ""
        )
        lines.append(
            f"- {agent}: {learned} of {len(done)} finished runs learn (the plan asks 8 of 8)"
            f"{spread}."
        )
    return lines


def draw_pilot_curves(folder=PILOT, path=PILOT_CURVES):
    """The training win rate of each puzzle type against environment steps, one panel per pilot
    run, each line the mean over `RECENT` iterations (path: figures/bridge-medium-pilot-curves.png);
    nothing before the pilot's first run."""
    import csv

    run_dirs = [d for d in sorted(Path(folder).glob("*-seed*")) if (d / "metrics.csv").exists()]
    if not run_dirs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(run_dirs), figsize=(5.0 * len(run_dirs), 3.4), squeeze=False)
    for axis, run_dir in zip(axes.flat, run_dirs):
        rows = list(csv.DictReader((run_dir / "metrics.csv").open(encoding="utf-8")))
        for puzzle_type, column in type_columns(rows).items():
            points = [(int(r["timesteps"]), float(r[column])) for r in rows if r.get(column)]
            steps = [step / 1e6 for step, _ in points]
            rates = [rate for _, rate in points]
            smooth = [
                statistics.fmean(rates[max(0, i - RECENT + 1) : i + 1]) for i in range(len(rates))
            ]
            axis.plot(steps, smooth, linewidth=1.0, label=type_label(puzzle_type))
        axis.axhline(GO, color="#999999", linewidth=0.7, linestyle="--")
        axis.set_ylim(0.0, 1.02)
        axis.set_xlim(0.0, PILOT_STEPS / 1e6)
        axis.set_xlabel("environment steps (millions)")
        axis.set_title(f"{run_dir.name}, bridge-medium, the remedy", fontsize=9)
        axis.grid(alpha=0.3)
        axis.legend(loc="lower right", fontsize=6, ncol=2)
    axes.flat[0].set_ylabel(f"training win rate (mean of {RECENT} iterations)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=80, metadata={"Software": None})
    plt.close(figure)
    return path


def code_records(folder=RESULTS):
    """The `provenance()` record of every result file under `folder`: each supervised run's
    run.json (one per process that trained it), each RL run's machines.json (one per start) and
    each run's entry of a diagnosis.json."""
    found = []
    for path in sorted(Path(folder).rglob("run.json")):
        if "checkpoints" in path.parts or "checkpoint" in path.parts:
            continue
        found += json.loads(path.read_text(encoding="utf-8")).get("provenance") or []
    for path in sorted(Path(folder).rglob("machines.json")):
        found += [entry["code"] for entry in json.loads(path.read_text(encoding="utf-8"))]
    for path in sorted(Path(folder).rglob("diagnosis.json")):
        entries = json.loads(path.read_text(encoding="utf-8"))
        found += [entry["code"] for entry in entries if isinstance(entry, dict) and "code" in entry]
    return found


def page(records):
    lines = [
        "# Trainability: where the agent model's signal dies, and what lets it learn",
        "",
        "The agent model of both agents sits on the constant prediction at Adam's 3e-4 on the "
        "held-keys probe (studies/held-keys/). This study diagnoses why and screens remedies, "
        "each a named `--model-config` option, by [the plan](plan.md) (written and committed "
        "before the runs). This page is generated by `studies/trainability/report.py` from "
        "`studies/trainability/results/`.",
        "",
        "```bash",
        ".venv/bin/python studies/trainability/diagnose.py  # results/diagnosis.json",
        ".venv/bin/python studies/trainability/run.py       # the screen, then the confirmation",
        ".venv/bin/python studies/trainability/report.py    # this page",
        "```",
        "",
        "## The diagnosis",
        "",
        *diagnosis_lines(),
        "## The screen",
        "",
        f"The held-keys board, seed 1, cap {CAP:,} updates at batch 64, target {TARGET} on "
        "held-out colour pairs; an evaluation every 250 updates.",
        "",
        *screen_table(records),
        "",
        "## The decision",
        "",
        *decision_lines(records),
        "",
    ]
    confirmation = confirmation_lines(records)
    if confirmation:
        lines += ["## The confirmation", "", *confirmation, ""]
    lines += [
        "## In reinforcement learning: bridge-small",
        "",
        "By [the RL plan](rl-plan.md) (written before its runs): bridge-small at its default "
        "preset on the Keras engine, the screen's candidate (`entity_norm`, one MLP layer) for "
        "both agents, 3,000,000 steps, seeds 1-8; the best and the final checkpoint evaluated "
        "greedily and by sampling on 1,000 fresh episodes each.",
        "",
        *rl_lines(rl_runs(BRIDGE_SMALL)),
        "",
        f"![Training win rate against steps, every run of both agents](figures/{CURVES.name})",
        "",
        "## In reinforcement learning: the bridge-medium pilot",
        "",
        "By [the pilot's plan](pilot-plan.md) (written before its runs; section 6 says why it "
        "runs though bridge-small did not hold): bridge-medium at its default preset on the "
        "Keras engine, the same remedy for both agents, seed 1 each, 20,000,000 steps "
        "(`run-bridge-medium-pilot.sh`); go when a best checkpoint wins at least 0.9 of 1,000 "
        "length-2 episodes greedily.",
        "",
        *pilot_lines(rl_runs(PILOT)),
        "",
        "Both of the pilot's outcomes were planned before its first run: on go the paper's "
        "comparison ([its plan](comparison-plan.md), `run-bridge-medium-comparison.sh`), on "
        "no-go the ladder ([its plan](ladder-plan.md), `run-ladder.sh`); each script refuses "
        "the other decision.",
        "",
    ]
    if PILOT_CURVES.exists():
        lines += [
            f"![Training win rate of each puzzle type, every pilot run](figures/"
            f"{PILOT_CURVES.name})",
            "",
        ]
    lines += [
        "## Which code made these results",
        "",
        "Every result file records the commit it was made at and a SHA-256 of the package's "
        "sources (`keras_simplicial.agents.provenance`); each is checked here against this "
        "repository's history (`code_lines`):",
        "",
        *code_lines(code_records()),
        "",
    ]
    conclusion = RESULTS / "conclusion.md"
    if conclusion.exists():
        lines += ["## Conclusion", "", conclusion.read_text(encoding="utf-8").strip(), ""]
    return "\n".join(lines)


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pilot-decision",
        action="store_true",
        help="print the bridge-medium pilot's decision (go, no-go or open) and write nothing",
    )
    if parser.parse_args(argv).pilot_decision:
        print(pilot_decision(rl_runs(PILOT)) or "open")
        return 0
    draw_rl_curves()
    draw_pilot_curves()
    PAGE.write_text(page(load_records(RESULTS)), encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
