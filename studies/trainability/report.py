"""The trainability study's page (studies/trainability/README.md), from its committed files: the
screen's table (every candidate, both learning rates), plan.md's decision, the confirmation and the
diagnosis.

    .venv/bin/python studies/trainability/report.py
"""

import json
import statistics
import sys
from pathlib import Path

from keras_simplicial.agents.imitation.trainability_study import (
    CANDIDATES,
    CAP,
    CONFIRMATION_SEEDS,
    CONFIRMED,
    GOAL_UPDATES,
    MODELS,
    SCREEN_RATES,
    TARGET,
    confirmation_runs,
    screen_runs,
)

STUDY = Path(__file__).resolve().parent
RESULTS = STUDY / "results"
PAGE = STUDY / "README.md"
DIAGNOSIS = RESULTS / "diagnosis.json"


# ------------------------------------------------------------------------------------ the runs
def load_records(results=RESULTS):
    """{run name: run.json} of every run folder under `results`."""
    records = {}
    for path in sorted(Path(results).glob("*/run.json")):
        records[path.parent.name] = json.loads(path.read_text(encoding="utf-8"))
    return records


def updates_to_target(record):
    """The updates at which a finished run first reached the target, None if censored."""
    endpoint = record.get("endpoint") if record else None
    if not endpoint or not endpoint["reached"]:
        return None
    return endpoint["updates"]


def screen_complete(records):
    return all(run.name in records and records[run.name]["finished"] for _, run in screen_runs())


def candidate_scores(records):
    """{candidate: (score, sum, rate)} of each candidate that qualifies (plan.md, section 3): both
    models at 0.9 within the cap at a learning rate; its better rate's larger and summed updates."""
    by_key = {(c, run.agent, run.learning_rate): records.get(run.name) for c, run in screen_runs()}
    scores = {}
    for candidate, _ in CANDIDATES:
        options = []
        for rate in SCREEN_RATES:
            updates = [updates_to_target(by_key[(candidate, agent, rate)]) for agent in MODELS]
            if all(u is not None for u in updates):
                options.append((max(updates), sum(updates), SCREEN_RATES.index(rate), rate))
        if options:
            score, total, _, rate = min(options)
            scores[candidate] = (score, total, rate)
    return scores


def chosen_for_confirmation(records):
    """[(candidate, rate)] that plan.md's rule sends to the confirmation, best first; [] until the
    screen has finished (or when no candidate qualifies)."""
    if not screen_complete(records):
        return []
    scores = candidate_scores(records)
    order = [c for c, _ in CANDIDATES]
    ranked = sorted(scores, key=lambda c: (scores[c][0], scores[c][1], order.index(c)))
    return [(candidate, scores[candidate][2]) for candidate in ranked[:CONFIRMED]]


def planned(records):
    """[(candidate, BudgetRun)] of the study: the screen, then (once it has finished) the
    confirmation's runs on seeds the screen did not use."""
    runs = screen_runs()
    names = {run.name for _, run in runs}
    for candidate, run in confirmation_runs(chosen_for_confirmation(records)):
        if run.name not in names:
            runs.append((candidate, run))
            names.add(run.name)
    return runs


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
    conclusion = RESULTS / "conclusion.md"
    if conclusion.exists():
        lines += ["## Conclusion", "", conclusion.read_text(encoding="utf-8").strip(), ""]
    return "\n".join(lines)


def main():
    PAGE.write_text(page(load_records()), encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
