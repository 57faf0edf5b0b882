"""The trainability study's page (studies/trainability/README.md), from its committed files: the
screen's table (every candidate, both learning rates), plan.md's decision, the confirmation, the
diagnosis, the front end (front-end-plan.md), the bridge-small campaign (rl-plan.md), the
bridge-medium pilot (pilot-plan.md), the front end's RL campaigns (front-end-rl-plan.md) and the
ladder (ladder-plan.md).

    .venv/bin/python studies/trainability/report.py
    .venv/bin/python studies/trainability/report.py --pilot-decision  # go, no-go or open
    .venv/bin/python studies/trainability/report.py --front-end-pilot-decision
    .venv/bin/python studies/trainability/report.py --campaign  # {"campaign": ..., ...}
    .venv/bin/python studies/trainability/report.py --front-end-config  # the front end's answer
    .venv/bin/python studies/trainability/report.py --bridge-small-front-end-decision
    .venv/bin/python studies/trainability/report.py --easy-front-end-decision  # defaults-plan.md
"""

import json
import statistics
import sys
from pathlib import Path

from keras_simplicial.agents.experiments.trainability_ladder import (
    FLAT,
    GROWS,
    KEEPS,
    LABEL_SHARES,
    PERMUTATIONS_HELP,
    PERMUTATIONS_NO_HELP,
    RUNG_2_STEPS,
    colour_permutations_lines,
    dagger_runs,
    errors_lines,
    label_curve_lines,
    label_curve_runs,
    rl_errors_lines,
    rung_1_lines,
    rung_2_lines,
    rung_2_runs,
    unrecorded_dagger_lines,
)
from keras_simplicial.agents.experiments.trainability_ladder import PASSES as LADDER_PASSES
from keras_simplicial.agents.experiments.trainability_rl import (
    EASY_TARGETS,
    GO,
    LEARNS,
    PILOT_STEPS,
    RECENT,
    campaign_finished,
    campaign_holds,
    easy_check_decision,
    evaluation_pair,
    last_type,
    length_2_lines,
    meets_easy_targets,
    next_campaign,
    pilot_decision,
    pilot_lines,
    rl_runs,
    site_lines,
    type_columns,
    type_label,
)
from keras_simplicial.agents.imitation.dagger_config import DaggerConfig
from keras_simplicial.agents.imitation.trainability_study import (
    CANDIDATES,
    CAP,
    CONFIRMATION_SEEDS,
    FRONT_END_CANDIDATES,
    FRONT_END_SEEDS,
    GOAL_UPDATES,
    MODELS,
    REMEDY,
    TARGET,
    candidate_config,
    candidate_scores,
    chosen_for_confirmation,
    confirmation_runs,
    front_end_decision,
    front_end_runs,
    load_records,
    screen_complete,
    screen_runs,
    updates_to_target,
)
from keras_simplicial.agents.model.model_config import with_architecture_defaults
from keras_simplicial.agents.provenance import code_lines
from keras_simplicial.agents.provenance import code_records as result_code_records
from keras_simplicial.agents.training.run_directory import RunDirectory

STUDY = Path(__file__).resolve().parent
RESULTS = STUDY / "results"
PAGE = STUDY / "README.md"
DIAGNOSIS = RESULTS / "diagnosis.json"
FRONT_END_INIT = RESULTS / "front-end-init.json"
FRONT_END_CURVES = STUDY / "figures" / "front-end-curves.png"


# ------------------------------------------------------------------------------------ the page
def cell(updates):
    return "censored" if updates is None else f"{updates:,}"


def median_cell(updates):
    """The median of runs' updates to the target, a censored run counting as later than any."""
    median = statistics.median(float("inf") if u is None else u for u in updates)
    return cell(None if median == float("inf") else int(median))


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
            median = median_cell(updates) if complete else "-"
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


def front_end_init_lines():
    if not FRONT_END_INIT.exists():
        return ["Not measured yet (`studies/trainability/diagnose.py --front-end`)."]
    entries = json.loads(FRONT_END_INIT.read_text(encoding="utf-8"))
    lines = [
        "At initialisation, on 512 training states of each seed: the share of the first "
        "convolution's filters that are zero on every state (`conv_1` dead), and how much each "
        "convolution's features depend on the state (`state_sd`).",
        "",
        "| candidate | model | seed | conv_1 dead | conv_1 state_sd | conv_2 dead | conv_2 "
        "state_sd |",
        "|---|---|---|---|---|---|---|",
    ]
    grouped = {}
    for e in entries:
        values = (e["conv_1/dead"], e["conv_1/state_sd"], e["conv_2/dead"], e["conv_2/state_sd"])
        grouped.setdefault((e["candidate"], e["seed"]), []).append((e["agent"], values))
    for (candidate, seed), measured in grouped.items():
        # Both models draw their convolutions alike, so they usually start the same.
        same = len({values for _, values in measured}) == 1
        rows = [("both", measured[0][1])] if same else measured
        for agent, values in rows:
            lines.append(
                f"| {candidate} | {agent} | {seed} | "
                + " | ".join(f"{value:.3f}" for value in values)
                + " |"
            )
    return lines + [""]


def front_end_lines(records):
    lines = [
        "| candidate | model | "
        + " | ".join(f"seed {s}" for s in FRONT_END_SEEDS)
        + f" | median | within {GOAL_UPDATES:,} |",
        "|---|---|" + "---|" * len(FRONT_END_SEEDS) + "---|---|",
    ]
    runs = front_end_runs()
    for candidate, _ in FRONT_END_CANDIDATES:
        for agent in MODELS:
            chosen = [r for c, r in runs if c == candidate and r.agent == agent]
            records_of = [records.get(run.name) for run in chosen]
            cells = [
                "running" if r is None or not r["finished"] else cell(updates_to_target(r))
                for r in records_of
            ]
            done = [updates_to_target(r) for r in records_of if r is not None and r["finished"]]
            within = sum(u is not None and u <= GOAL_UPDATES for u in done)
            median = median_cell(done) if len(done) == len(chosen) else "-"
            lines.append(
                f"| {candidate} | {agent} | {' | '.join(cells)} | {median} | "
                f"{within} of {len(chosen)} |"
            )
    decision = front_end_decision(records)
    lines.append("")
    if decision is None:
        return lines + ["Runs still to finish: no decision yet."]
    for candidate, _ in FRONT_END_CANDIDATES:
        updates = decision["runs"][candidate]
        within = sum(u is not None and u <= GOAL_UPDATES for u in updates)
        reached = sum(u is not None for u in updates)
        verdict = "meets the goal" if candidate in decision["meets_goal"] else "misses the goal"
        lines.append(
            f"- **{candidate}** {verdict}: {within} of {len(updates)} runs at 0.9 within "
            f"{GOAL_UPDATES:,} updates, {reached} within the cap of {CAP:,}."
        )
    answer = decision["answer"]
    lines += [
        "",
        f"The front end's answer (front-end-plan.md, section 4): **{answer}**."
        if answer
        else "No candidate meets the goal (front-end-plan.md, section 4): it stays unmet.",
    ]
    return lines


def draw_front_end_curves(records, path=FRONT_END_CURVES):
    """Held-out-pair accuracy against updates of every front-end run, one panel per candidate,
    one line per run (colour: the model); nothing before the first run has finished."""
    if not any(records.get(run.name) for _, run in front_end_runs()):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = dict(zip(MODELS, ("#1f77b4", "#d62728")))
    count = len(FRONT_END_CANDIDATES)
    figure, axes = plt.subplots(1, count, figsize=(3.6 * count, 3.2), squeeze=False, sharey=True)
    for axis, (candidate, _) in zip(axes.flat, FRONT_END_CANDIDATES):
        for c, run in front_end_runs():
            record = records.get(run.name)
            if c != candidate or record is None:
                continue
            curve = record["curve"]
            axis.plot(
                [r["updates"] for r in curve],
                [r["held_out_pairs_accuracy"] for r in curve],
                color=colours[run.agent],
                linewidth=0.9,
                alpha=0.8,
                label=run.agent if run.seed == FRONT_END_SEEDS[0] else None,
            )
        axis.axhline(TARGET, color="#999999", linewidth=0.7, linestyle="--")
        axis.axvline(GOAL_UPDATES, color="#999999", linewidth=0.7, linestyle=":")
        axis.set_xlim(0, CAP)
        axis.set_ylim(0.45, 1.0)
        axis.set_xlabel("updates (batch 64)")
        axis.set_title(candidate, fontsize=8)
        axis.grid(alpha=0.3)
    axes.flat[0].set_ylabel("accuracy on held-out pairs")
    axes.flat[0].legend(loc="lower right", fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=80, metadata={"Software": None})
    plt.close(figure)
    return path


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
FRONT_END_PILOT = RESULTS / "bridge-medium-front-end-pilot"
LABEL_CURVE = RESULTS / "label-curve"  # label-curve-plan.md
COLOUR_PERMUTATIONS = RESULTS / "colour-permutations"  # colour-permutations-plan.md
FRONT_END_PILOT_CURVES = STUDY / "figures" / "bridge-medium-front-end-pilot-curves.png"
BRIDGE_SMALL_FRONT_END = RESULTS / "bridge-small-front-end"
BRIDGE_SMALL_FRONT_END_CURVES = STUDY / "figures" / "bridge-small-front-end-curves.png"
EASY_FRONT_END = RESULTS / "easy-front-end"  # defaults-plan.md
LADDER_DAGGER = RESULTS / "bridge-medium-dagger"
LADDER_RL = RESULTS / "bridge-medium-from-dagger"
LADDER_CURVES = STUDY / "figures" / "bridge-medium-from-dagger-curves.png"
DAGGER = DaggerConfig()  # ladder-plan.md, rung 1: every setting its default


def campaign(records):
    """front-end-rl-plan.md, section 3, on the committed results: {"campaign": "comparison",
    "ladder" or "wait", "model_config": the model config it trains (None while waiting)}; the
    config whole, each option of the presets' model it leaves out at the architecture's default
    (a preset merges --model-config over its own model)."""
    chosen = next_campaign(
        pilot_decision(rl_runs(PILOT)),
        pilot_decision(rl_runs(FRONT_END_PILOT)),
        campaign_finished(rl_runs(BRIDGE_SMALL_FRONT_END)),
    )
    if chosen is None:
        return {"campaign": "wait", "model_config": None}
    kind, model = chosen
    answer = front_end_decision(records)["answer"]
    config = REMEDY if model == "remedy" else candidate_config(answer)
    return {"campaign": kind, "model_config": with_architecture_defaults(config)}


def draw_rl_curves(folder=BRIDGE_SMALL, path=CURVES, model="the remedy"):
    """The training win rate against environment steps of every run of a bridge-small campaign
    (`model`: its model, in the panels' titles), one panel per agent, one line per seed; nothing
    before its first run."""
    if not any(RunDirectory(d).metrics_source() for d in Path(folder).glob("*-seed*")):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(MODELS), figsize=(5.0 * len(MODELS), 3.4), squeeze=False)
    for axis, agent in zip(axes.flat, MODELS):
        for run_dir in sorted(Path(folder).glob(f"{agent}-seed*")):
            rows = [r for r in RunDirectory(run_dir).read_metrics() if r["win_rate"]]
            if not rows:
                continue
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
        axis.set_title(f"{agent} agent, bridge-small, {model}", fontsize=9)
        axis.grid(alpha=0.3)
        axis.legend(loc="lower right", fontsize=7)
    axes.flat[0].set_ylabel("training win rate")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=80, metadata={"Software": None})
    plt.close(figure)
    return path


def rl_lines(runs, script="run-bridge-small.sh"):
    """A bridge-small campaign's section of the page; `script` starts it."""
    if not runs:
        return [f"No run has started yet (`studies/trainability/{script}`)."]
    lines = [
        "| agent | seed | steps | training win rate, last | first at 0.9 (steps) | last type to "
        f"hold 0.9 over {RECENT} iterations (steps) | best: greedy, sampled | final: greedy, "
        "sampled | learns (best greedy >= 0.9) |",
        "|---|---|---|---|---|---|---|---|---|",
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
            f"{'never' if first is None else f'{first:,}'} | {last_type_cell(run)} | "
            f"{evaluation_pair(e, 'best')} | "
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
        typed = [found for found in map(last_type, done) if found]
        held = sorted(step for _, step in typed if step is not None)
        spread += (
            f"; steps until every puzzle type held 0.9 over {RECENT} iterations: median "
            f"{statistics.median(held):,.0f}, range {held[0]:,}-{held[-1]:,}"
            + (f" ({len(typed) - len(held)} never did)" if len(held) < len(typed) else "")
            if held
            else ""
        )
        lines.append(
            f"- {agent}: {learned} of {len(done)} finished runs learn (the plan asks 8 of 8)"
            f"{spread}."
        )
    return lines


def bridge_small_front_end_decision_line(runs):
    """front-end-rl-plan.md, section 3: whether bridge-small with the front end held (8 of 8
    runs of both agents learn), and what follows."""
    return (
        "**Decision** (front-end-rl-plan.md, section 3): "
        + {
            None: "open: a run has not finished.",
            "holds": "holds: every run of both agents learns. Before the front end becomes every "
            "preset's default, the easy preset is checked with it (below).",
            "does-not-hold": "does not hold: a run does not learn. The front end stays a named "
            "model config (`--model-config front-end`), and the failing runs are diagnosed as "
            "rl-plan.md says.",
        }[campaign_holds(runs)]
    )


def easy_check_lines(runs, bridge_small):
    """defaults-plan.md's check of the easy preset with the front end: a row per run, then the
    decision; while bridge-small with the front end has not held, why nothing runs."""
    holds = campaign_holds(bridge_small)
    if not runs:
        waiting = {
            None: "It runs once bridge-small with the front end has finished and held.",
            "holds": "Bridge-small with the front end held: it runs next "
            "(`run-easy-front-end.sh`); no run has started yet.",
            "does-not-hold": "Bridge-small with the front end did not hold: it does not run, "
            "and the front end stays a named model config (`--model-config front-end`).",
        }
        return [waiting[holds]]
    targets = " and ".join(
        f"{name.replace('_', ' ')} >= {target}" for name, target in EASY_TARGETS.items()
    )
    lines = [
        "| agent | seed | steps | first at 0.9 (steps) | best within 300,000: greedy, sampled | "
        "best within 500,000: greedy, sampled | best: greedy, sampled | final: greedy, sampled "
        f"| meets both targets ({targets}) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in sorted(runs, key=lambda r: (r["agent"], r["seed"])):
        e, first, meets = run["evaluations"], run["first_at_0.9"], meets_easy_targets(run)
        lines.append(
            f"| {run['agent']} | {run['seed']} | {run['steps']:,} | "
            f"{'never' if first is None else f'{first:,}'} | "
            f"{evaluation_pair(e, 'within_300000')} | {evaluation_pair(e, 'within_500000')} | "
            f"{evaluation_pair(e, 'best')} | {evaluation_pair(e, 'final')} | "
            f"{'running' if meets is None else 'yes' if meets else 'no'} |"
        )
    decision = easy_check_decision(runs)
    lines += [
        "",
        "**Decision** (defaults-plan.md, section 4): "
        + {
            None: "open: a run has not finished.",
            "holds": "holds on easy: the front end becomes every preset's model.",
            "does-not-hold": "does not hold on easy: the front end becomes the model of the "
            "other presets, and `easy` keeps its model.",
        }[decision],
    ]
    return lines


def last_type_cell(run):
    found = last_type(run)
    if found is None:
        return "-"
    puzzle_type, step = found
    return f"{'never' if step is None else f'{step:,}'} {type_label(puzzle_type)}"


def draw_pilot_curves(folder=PILOT, path=PILOT_CURVES, model="the remedy", length=PILOT_STEPS):
    """The training win rate of each puzzle type against environment steps, one panel per run of
    a bridge-medium campaign (`model`: its model, in the titles; `length`: its steps), each line
    the mean over `RECENT` iterations; nothing before its first run."""
    run_dirs = [d for d in sorted(Path(folder).glob("*-seed*")) if RunDirectory(d).metrics_source()]
    if not run_dirs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(run_dirs), figsize=(5.0 * len(run_dirs), 3.4), squeeze=False)
    for axis, run_dir in zip(axes.flat, run_dirs):
        rows = RunDirectory(run_dir).read_metrics()
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
        axis.set_xlim(0.0, length / 1e6)
        axis.set_xlabel("environment steps (millions)")
        axis.set_title(f"{run_dir.name}, bridge-medium, {model}", fontsize=9)
        axis.grid(alpha=0.3)
        axis.legend(loc="lower right", fontsize=6, ncol=2)
    axes.flat[0].set_ylabel(f"training win rate (mean of {RECENT} iterations)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=80, metadata={"Software": None})
    plt.close(figure)
    return path


def figure_lines(path, alt):
    """The page's lines that show a figure, once it has been drawn."""
    return [f"![{alt}](figures/{path.name})", ""] if path.exists() else []


def code_records(folder=RESULTS):
    """The `provenance()` record of every result file under `folder` (`provenance.code_records`)
    and of each entry of the front end's initialisation check."""
    found = result_code_records(folder)
    if (Path(folder) / FRONT_END_INIT.name).exists():
        entries = json.loads((Path(folder) / FRONT_END_INIT.name).read_text(encoding="utf-8"))
        found += [entry["provenance"] for entry in entries]
    return found


def page(records):
    bridge_small, bridge_small_front_end = rl_runs(BRIDGE_SMALL), rl_runs(BRIDGE_SMALL_FRONT_END)
    pilot, front_end_pilot = rl_runs(PILOT), rl_runs(FRONT_END_PILOT)
    lines = [
        "# Trainability: where the agent model's signal dies, and what lets it learn",
        "",
        "The agent model of both agents sits on the constant prediction at Adam's 3e-4 on the "
        "held-keys probe (studies/held-keys/). This study diagnoses why and screens remedies, "
        "each a named `--model-config` option, by [the plan](plan.md) (written and committed "
        "before the runs). This page is generated by `studies/trainability/report.py` from "
        "`studies/trainability/results/`. The plans were written while every preset trained "
        "the architecture's defaults, so a `--model-config` in them that names some options "
        'only (the remedy\'s `{"entity_norm": true, "mlp_units": [256]}`) meant those '
        "options on that model; presets now train the front end and merge `--model-config` over "
        "it, so this study's scripts pass each model whole (their `REMEDY`), and its results "
        "record the model they trained.",
        "",
        "```bash",
        ".venv/bin/python studies/trainability/diagnose.py              # results/diagnosis.json",
        ".venv/bin/python studies/trainability/diagnose.py --front-end  # front-end-init.json",
        ".venv/bin/python studies/trainability/run.py    # the screen, confirmation, front end",
        ".venv/bin/python studies/trainability/report.py                # this page",
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
        "## The front end",
        "",
        "By [the front end's plan](front-end-plan.md) (written before its runs, after "
        "exploratory runs on seeds 1-3 that it declares): the screen's candidate (the remedy) "
        "with the pixels scaled to [-1, 1] (`centre_pixels`) and wider convolutions, both "
        f"models, seeds {FRONT_END_SEEDS[0]}-{FRONT_END_SEEDS[-1]}, Adam at 3e-4, cap {CAP:,} "
        f"updates; a candidate meets the goal when every run reaches {TARGET} on held-out "
        f"pairs within {GOAL_UPDATES:,} updates (64,000 examples).",
        "",
        *front_end_init_lines(),
        *front_end_lines(records),
        "",
    ]
    if FRONT_END_CURVES.exists():
        lines += [
            f"![Held-out-pair accuracy against updates, every front-end run](figures/"
            f"{FRONT_END_CURVES.name})",
            "",
        ]
    lines += [
        "## In reinforcement learning: bridge-small",
        "",
        "By [the RL plan](rl-plan.md) (written before its runs): bridge-small at its default "
        "preset on the Keras engine, the screen's candidate (`entity_norm`, one MLP layer) for "
        "both agents, 3,000,000 steps, seeds 1-8; the best and the final checkpoint evaluated "
        "greedily and by sampling on 1,000 fresh episodes each.",
        "",
        *rl_lines(bridge_small),
        "",
        *site_lines(bridge_small),
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
        *pilot_lines(pilot),
        "",
        *length_2_lines(pilot),
        *site_lines(pilot),
        "Both of the pilot's outcomes were planned before its first run: on go the paper's "
        "comparison ([its plan](comparison-plan.md), `run-bridge-medium-comparison.sh`), on "
        "no-go the ladder ([its plan](ladder-plan.md), `run-ladder.sh`). Before the pilot "
        "decided, [the front end's RL plan](front-end-rl-plan.md) amended both: a second pilot "
        "with the front end and bridge-small with it run first, the comparison runs when either "
        "pilot says go (with the front end when its pilot does), the ladder when neither does "
        "(with the front end); each script runs only on what `report.py --campaign` answers.",
        "",
    ]
    if PILOT_CURVES.exists():
        lines += [
            f"![Training win rate of each puzzle type, every pilot run](figures/"
            f"{PILOT_CURVES.name})",
            "",
        ]
    lines += [
        "## In reinforcement learning: the front end",
        "",
        "By [the front end's RL plan](front-end-rl-plan.md) (written before its runs and before "
        "the first pilot decided): the pilot's runs with the front end's model "
        "(`run-bridge-medium-front-end-pilot.sh`, after the first pilot has decided), then "
        "bridge-small's with it (`run-bridge-small-front-end.sh`, after that pilot). "
        "`run-campaigns.sh` runs the steps in this order from where they stand, the first "
        "pilot first and what `report.py --campaign` names last, and stops at a step that "
        "may not start yet.",
        "",
        "**The pilot with the front end**:",
        "",
        *pilot_lines(front_end_pilot, "run-bridge-medium-front-end-pilot.sh"),
        "",
        *length_2_lines(front_end_pilot),
        *site_lines(front_end_pilot),
        *figure_lines(FRONT_END_PILOT_CURVES, "Training win rate of each puzzle type, both runs"),
        "**Bridge-small with the front end**:",
        "",
        *rl_lines(bridge_small_front_end, "run-bridge-small-front-end.sh"),
        "",
        bridge_small_front_end_decision_line(bridge_small_front_end),
        "",
        *site_lines(bridge_small_front_end),
        *figure_lines(BRIDGE_SMALL_FRONT_END_CURVES, "Training win rate against steps, every run"),
        "**Before the front end becomes every preset's default: the easy preset** "
        "([its plan](defaults-plan.md), written before its runs): `make train`'s preset with "
        "the front end, the acceptance runs of docs/benchmarks.md (both agents, seeds 1-5, "
        "600,000 steps, RLlib's old stack); it holds when every run's best checkpoint within "
        f"500,000 steps wins at least {EASY_TARGETS['within_500000_greedy']} of 1,000 greedy "
        f"episodes and its final checkpoint at least {EASY_TARGETS['final_greedy']}.",
        "",
        *easy_check_lines(rl_runs(EASY_FRONT_END), bridge_small_front_end),
        "",
        f"**What the committed results call for next** (`report.py --campaign`): "
        f"{campaign(records)['campaign']}.",
        "",
    ]
    rung_1 = dagger_runs(LADDER_DAGGER)
    rung_2 = rung_2_runs(LADDER_RL, rung_1)
    lines += [
        "## The ladder: what stops RL where supervision works",
        "",
        "By [the ladder's plan](ladder-plan.md) (written before the first pilot's runs, amended "
        "by front-end-rl-plan.md before any of its own): it runs when neither pilot says go, "
        "after bridge-small with the front end, with the front end's model for both agents "
        "(`run-ladder.sh`). Each rung asks one question and starts only when the one before "
        "it has answered.",
        "",
        "**Rung 1: can the model learn the length-2 puzzles from supervision?** Tie-aware "
        "DAgger on the step-optimal oracle (`keras-simplicial dagger`, `DaggerConfig`'s "
        f"defaults: {DAGGER.rounds} rounds after the oracle's own, at most "
        f"{DAGGER.max_labelled_moves:,} labelled moves, Adam at {DAGGER.learning_rate:g} halved "
        "on a plateau), seed 1; each best model greedily on 1,000 fresh length-2 episodes; it "
        f"passes at {LADDER_PASSES}.",
        "",
        *rung_1_lines(rung_1),
        "",
        "**Where the rung-1 models err** ([errors-plan.md](errors-plan.md), committed before its "
        "measurements were recorded): each best model plays the same 1,000 length-2 episodes "
        "greedily, every move judged by the step-optimal oracle (`keras-simplicial errors`): "
        "optimal, a detour, fatal (the Gem lost) or blocked (a move that changes nothing); the "
        "stage is the number of objects of the solution paths opened before the move. Read only "
        "if rung 1 stops the ladder.",
        "",
        *errors_lines(rung_1),
        "",
        "The same measure on the front-end pilot's RL runs (their best policies, the same "
        "episodes), to describe where RL's best policy leaves the shortest way; no rule reads it:",
        "",
        *rl_errors_lines(FRONT_END_PILOT),
        "",
        "**After rung 1: does the model's length-2 play grow with its labels?** By "
        "[label-curve-plan.md](label-curve-plan.md) (committed before its runs), only once rung 1 "
        "has stopped the ladder: fresh models on nested shares "
        f"({', '.join(str(s) for s in LABEL_SHARES)}) of each agent's rung-1 labels, one round "
        "of at most 12 / share epochs (the same updates for every share), DaggerConfig's other "
        "defaults, each greedily on rung 1's 1,000 length-2 episodes; "
        f"**grows** when each doubling adds at least {GROWS}, **flat** when the last adds less "
        f"than {FLAT}.",
        "",
        *label_curve_lines(label_curve_runs(LABEL_CURVE), rung_1),
        "",
        "**After the label curve: do colour permutations do what more labels do?** By "
        "[colour-permutations-plan.md](colour-permutations-plan.md) (committed before its runs), "
        "once both label curves are read and one is not flat: the curve's share-1.0 run again "
        "with every batch's key colours renamed by a fresh permutation of the palette (`dagger "
        "--augment colour-permutations`: the same optimal moves), the same labels, seed and cap "
        f"of 12 epochs; **helps** when it adds at least {PERMUTATIONS_HELP} to the length-2 "
        f"greedy win rate, **no help** when it adds less than {PERMUTATIONS_NO_HELP}.",
        "",
        *colour_permutations_lines(
            label_curve_runs(COLOUR_PERMUTATIONS), label_curve_runs(LABEL_CURVE)
        ),
        "",
        "**Rung 2: does RL keep a policy that solves length 2?** RL on bridge-medium "
        "started from each rung-1 model that passes (every weight from it, the value head "
        f"untrained, the preset's recipe), {RUNG_2_STEPS:,} steps; the start's, the best and the "
        "final checkpoint's length-2 greedy win rates (1,000 episodes each); kept when the "
        f"final one is at least {KEEPS}.",
        "",
        *rung_2_lines(rung_2, rung_1),
        "",
        *figure_lines(LADDER_CURVES, "Training win rate of each puzzle type, every rung-2 run"),
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
        *unrecorded_dagger_lines(RESULTS),
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
    parser.add_argument(
        "--front-end-pilot-decision",
        action="store_true",
        help="print the front end's bridge-medium pilot's decision (go, no-go or open)",
    )
    parser.add_argument(
        "--bridge-small-front-end-decision",
        action="store_true",
        help="print whether bridge-small with the front end holds (holds, does-not-hold or open)",
    )
    parser.add_argument(
        "--easy-front-end-decision",
        action="store_true",
        help="print the decision of defaults-plan.md's check of the easy preset with the front "
        "end (holds, does-not-hold or open)",
    )
    parser.add_argument(
        "--campaign",
        action="store_true",
        help="print, as JSON, the campaign the pilots' decisions call for (front-end-rl-plan.md, "
        "section 3) and its model config",
    )
    parser.add_argument(
        "--front-end-config",
        action="store_true",
        help="print, as JSON, the model config of the front end's answer (front-end-plan.md)",
    )
    args = parser.parse_args(argv)
    if args.front_end_config:
        answer = front_end_decision(load_records(RESULTS))
        if answer is None or answer["answer"] is None:
            print("The front end has no answer (front-end-plan.md, section 4).", file=sys.stderr)
            return 1
        print(json.dumps(with_architecture_defaults(candidate_config(answer["answer"]))))
        return 0
    if args.pilot_decision or args.front_end_pilot_decision:
        folder = PILOT if args.pilot_decision else FRONT_END_PILOT
        print(pilot_decision(rl_runs(folder)) or "open")
        return 0
    if args.bridge_small_front_end_decision:
        print(campaign_holds(rl_runs(BRIDGE_SMALL_FRONT_END)) or "open")
        return 0
    if args.easy_front_end_decision:
        print(easy_check_decision(rl_runs(EASY_FRONT_END)) or "open")
        return 0
    if args.campaign:
        print(json.dumps(campaign(load_records(RESULTS))))
        return 0
    records = load_records(RESULTS)
    draw_front_end_curves(records)
    draw_rl_curves()
    draw_pilot_curves()
    draw_pilot_curves(FRONT_END_PILOT, FRONT_END_PILOT_CURVES, "the front end")
    draw_rl_curves(BRIDGE_SMALL_FRONT_END, BRIDGE_SMALL_FRONT_END_CURVES, "the front end")
    draw_pilot_curves(LADDER_RL, LADDER_CURVES, "from DAgger", RUNG_2_STEPS)
    PAGE.write_text(page(records), encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
