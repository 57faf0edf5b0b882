"""The study's page, README.md, and its figures, from the runs of run.py beside this file
(studies/held-keys/results/<run>/run.json).

    .venv/bin/python studies/held-keys/report.py

Every number on the page is read from the run files. The decision and the ladder's reading are
the rules of pilot-plan.md (keras_simplicial.agents.imitation.held_keys_budget: pilot_decision,
first_failing_rung), which this script never writes. Unfinished runs are said to be unfinished.
"""

import argparse
import json
import os
import statistics
from pathlib import Path

from keras_simplicial.agents.atomic_files import atomic_write_text
from keras_simplicial.agents.experiments.statistics import (
    SIGNIFICANCE_LEVEL,
    holm_adjusted,
    one_sided_permutation_p_value,
)
from keras_simplicial.agents.imitation import held_keys_study as plan
from keras_simplicial.agents.imitation.held_keys_budget import (
    DEFAULT_LEARNING_RATE,
    FLAT_SHARE,
    LADDER,
    first_failing_rung,
    learned,
    left_constant,
    pilot_decision,
)

ROOT = Path(__file__).resolve().parents[2]
STUDY = Path(__file__).resolve().parent

STUDY_PATH = STUDY.relative_to(ROOT).as_posix()
RESULTS = STUDY / "results"
PAGE = STUDY / "README.md"
FIGURES = STUDY / "figures"
MODELS = ("relational", "simplicial-gain-zeros", "simplicial-gain-ones")
COLOURS = {
    "relational": "#444444",
    "simplicial-gain-zeros": "#1f77b4",
    "simplicial-gain-ones": "#d62728",
}
RUNG_TITLES = {
    "board": "the board (the probe)",
    "locks-marked": "the Gem's lock tiles marked",
    "gem-locks-only": "only the Gem box and its locks",
    "colours-one-hot": "only the Gem box and its locks, colours one-hot",
}
DECISIONS = {
    "go": "**go**: a model learned the conjunction on the board; the comparison over 5 or more "
    "seeds is the next step, pre-registered before its runs",
    "extend": "**extend**: no model learned, but one left the constant prediction on the board; "
    "the next step is a longer pilot",
    "no-go": "**no-go**: every model stayed at the constant prediction on the board for its "
    "whole cap; the ladder gives the answer",
    "open": "**not decided yet**: some runs on the board are unfinished and none has learned",
}


def load(results):
    records = []
    for path in sorted(Path(results).glob("*/run.json")):
        records.append(json.loads(path.read_text(encoding="utf-8")))
    return records


def draw(records, path):
    """Held-out-pair accuracy (solid) and training accuracy (dotted) against updates, a panel a
    rung, a line a run; the top axis counts the examples seen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    batch = records[0]["run"]["batch_size"]
    panels = sorted({panel_of(r) for r in records}, key=panel_order)
    # A grid of at most three panels a row, readable at the page's width.
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.6 * rows), squeeze=False)
    for axis in axes.flat[len(panels) :]:
        axis.set_visible(False)
    for axis, panel in zip(axes.flat, panels):
        for record in records:
            if panel_of(record) != panel:
                continue
            updates = [row["updates"] for row in record["curve"]]
            colour = COLOURS.get(record["model"], "#888888")
            held_out = [row["held_out_pairs_accuracy"] for row in record["curve"]]
            train = [row["train_accuracy"] for row in record["curve"]]
            label = f"{record['model']} (seed {record['run']['seed']})"
            axis.plot(updates, held_out, color=colour, linewidth=1.6, label=label)
            axis.plot(updates, train, color=colour, linewidth=0.9, linestyle=":")
        top = axis.secondary_xaxis("top", functions=(lambda u: u * batch, lambda e: e / batch))
        top.set_xlabel("examples seen", fontsize=8)
        axis.axhline(0.9, color="#999999", linewidth=0.7, linestyle="--")
        axis.set_ylim(0.4, 1.02)
        axis.set_xlabel("updates")
        rung, learning_rate = panel
        axis.set_title(f"{RUNG_TITLES[rung]}\nlearning rate {learning_rate:g}", fontsize=8)
        axis.grid(alpha=0.3)
    for row in axes:
        row[0].set_ylabel("accuracy: held-out pairs (solid),\ntraining (dotted)", fontsize=8)
    axes.flat[len(panels) - 1].legend(loc="lower right", fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=80, metadata={"Software": None})
    plt.close(figure)


def panel_of(record):
    """(rung, learning rate) of a run: a panel of the figure."""
    return record["run"]["rung"], record["run"]["learning_rate"]


def panel_order(panel):
    """The probe first, then the ladder's rungs towards the easiest; the pilot's learning rate
    before the others."""
    rung, learning_rate = panel
    return (
        list(reversed(LADDER)).index(rung),
        learning_rate != DEFAULT_LEARNING_RATE,
        learning_rate,
    )


def at_default_rate(records):
    return [r for r in records if r["run"]["learning_rate"] == DEFAULT_LEARNING_RATE]


def run_row(record):
    last = record["curve"][-1]
    run = record["run"]
    if record["finished"]:
        endpoint = record["endpoint"]
        reached = (
            f"{endpoint['updates']:,} updates ({endpoint['examples_seen']:,} examples)"
            if endpoint["reached"]
            else f"not reached (censored at {run['max_updates']:,})"
        )
    else:
        reached = "unfinished"
    commits = ", ".join(
        (p["git_commit"] or "no git")[:10] + (" (modified)" if p.get("code_modified") else "")
        for p in record["provenance"]
    )
    return (
        f"| {run['rung']} | {run['learning_rate']:g} | {record['model']} | "
        f"{last['updates']:,} of {run['max_updates']:,} | "
        f"{reached} | {min(row['train_loss'] for row in record['curve']):.4f} | "
        f"{last['train_loss']:.4f} | {last['train_accuracy']:.3f} | "
        f"{last['seen_pairs_accuracy']:.3f} | {last['held_out_pairs_accuracy']:.3f} | "
        f"{'yes' if left_constant(record) else 'no'} | "
        f"{record['seconds_per_update'] or 0:.3f} | {commits} |"
    )


def comparison(records):
    """The comparison of comparison-plan.md: per model, each seed's endpoint (examples seen when
    held-out pairs reach the target; the cap's examples when censored; None while unfinished),
    and each simplicial model tested against the relational one. None before any of its runs."""
    chosen = [
        r
        for r in records
        if r["run"]["seed"] in plan.COMPARISON_SEEDS
        and r["run"]["rung"] == "board"
        and r["run"]["learning_rate"] == plan.COMPARISON_RATE
    ]
    if not chosen:
        return None
    endpoints = {model: {} for model in MODELS}
    for record in chosen:
        run = record["run"]
        if record["finished"]:
            endpoint = record["endpoint"]
            value = (
                endpoint["examples_seen"]
                if endpoint["reached"]
                else run["max_updates"] * run["batch_size"]
            )
            endpoints[record["model"]][run["seed"]] = (value, endpoint["reached"])
        else:
            endpoints[record["model"]][run["seed"]] = None
    complete = all(
        endpoints[model].get(seed) is not None for model in MODELS for seed in plan.COMPARISON_SEEDS
    )
    tests = {}
    if complete:
        reference = [endpoints["relational"][s][0] for s in plan.COMPARISON_SEEDS]
        p_values = {}
        for model in MODELS[1:]:
            mine = [endpoints[model][s][0] for s in plan.COMPARISON_SEEDS]
            # H1: the simplicial model needs fewer examples: the relational mean is the larger.
            p_values[model] = one_sided_permutation_p_value(reference, mine)[0]
        adjusted = holm_adjusted(list(p_values.values()))
        for (model, p), holm in zip(p_values.items(), adjusted):
            tests[model] = {"p": p, "holm_p": holm, "fewer": holm <= SIGNIFICANCE_LEVEL}
    return {"endpoints": endpoints, "complete": complete, "tests": tests}


def comparison_lines(result):
    seeds = plan.COMPARISON_SEEDS
    cap = plan.COMPARISON_CAP * 64
    lines = [
        "## The comparison (comparison-plan.md)",
        "",
        f"The board at a learning rate of {plan.COMPARISON_RATE:g}, seeds "
        f"{', '.join(map(str, seeds))}: the examples seen when held-out pairs first reached 0.9 "
        f"(at an evaluation every 500 updates), or censored at the cap ({cap:,} examples)"
        + ("." if result["complete"] else "; the comparison is not complete yet."),
        "",
        "| model | " + " | ".join(f"seed {s}" for s in seeds) + " | median | reached |",
        "|---|" + "---|" * (len(seeds) + 2),
    ]
    for model in MODELS:
        cells, values, reached = [], [], 0
        for seed in seeds:
            entry = result["endpoints"][model].get(seed, "missing")
            if entry == "missing":
                cells.append("-")
            elif entry is None:
                cells.append("unfinished")
            else:
                values.append(entry[0])
                reached += entry[1]
                cells.append(f"{entry[0]:,}" + ("" if entry[1] else " (censored)"))
        median = f"{statistics.median(values):,.0f}" if values else "-"
        lines.append(f"| {model} | {' | '.join(cells)} | {median} | {reached} of {len(values)} |")
    lines.append("")
    if result["tests"]:
        for model, test in result["tests"].items():
            verdict = (
                "**needs fewer examples than the relational model**"
                if test["fewer"]
                else "is not shown to need fewer examples than the relational model"
            )
            lines.append(
                f"- {model} {verdict}: one-sided exact permutation test p = {test['p']:.4f}, "
                f"Holm-adjusted over the two comparisons {test['holm_p']:.4f} (level "
                f"{SIGNIFICANCE_LEVEL})."
            )
        lines.append("")
    return lines


def not_learned(record):
    """How a run that has not learned its rung stands: at its cap, or unfinished."""
    if record["finished"]:
        return f"did not learn it within its cap of {record['run']['max_updates']:,} updates"
    return f"has not learned it after {record['curve'][-1]['updates']:,} updates (unfinished)"


def ladder_lines(records, rate, plans):
    """The ladder's reading over the seed-1 runs at one learning rate: each model's first rung
    not learned, from the easiest up."""
    lines = [
        f"## The ladder at {rate:g}: the first rung each model fails",
        "",
        f"Read over the runs at a learning rate of {rate:g}, from the easiest rung up ({plans}).",
        "",
    ]
    for model in MODELS:
        by_rung = {r["run"]["rung"]: r for r in records if r["model"] == model}
        if not by_rung:
            continue
        rung, _ = first_failing_rung(by_rung)
        if rung is None:
            text = "learned every rung it ran"
        else:
            record = by_rung[rung]
            state = not_learned(record)
            moved = (
                "left the constant prediction"
                if left_constant(record)
                else "stayed at the constant prediction"
            )
            text = f"fails at **{RUNG_TITLES[rung]}** ({rung}): it {state} and {moved} there"
        learned_rungs = [r for r in LADDER if r in by_rung and learned(by_rung[r])]
        lines.append(
            f"- {model}: {text}"
            + (f"; learned: {', '.join(learned_rungs)}" if learned_rungs else "")
            + "."
        )
    return lines + [""]


def render(records, figures, page, results=RESULTS):
    lines = [
        "# Which block learns the two-key conjunction from pixels? The held-keys probe at its "
        "learning budget",
        "",
        "Bridge BoxWorld's Gem box opens only when both of its lock colours are held (X1 ⊗ X2 ⊸ "
        "Gem). A fresh agent model is trained, supervised, on board states holding two keys: "
        "the Gem's two lock colours (y = 1), or one of them and another (y = 0). It is tested on "
        "colour pairs never seen as the Gem's locks in training. The models: the relational "
        "agent, and the simplicial agent with its default gain on the 2-simplicial branch "
        '("zeros") and with the paper\'s block ("ones"). The ladder shows the same states with '
        "the board made easier, to find what stops a model that does not learn.",
        "",
        "The plans and the decision rules were written before their runs: "
        "[the pilot's plan](pilot-plan.md); [the ladder's second stage](ladder-plan.md), "
        "planned after the pilot and the flat-start diagnosis (`results/diagnosis.md`); "
        "[the second pilot](second-pilot-plan.md); and [the comparison's "
        "pre-registration](comparison-plan.md). This page is generated by "
        f"`{STUDY_PATH}/report.py` from `{STUDY_PATH}/results/*/run.json`.",
        "",
        "```bash",
        f".venv/bin/python {STUDY_PATH}/run.py --dry-run  # the runs and how far they are",
        f".venv/bin/python {STUDY_PATH}/run.py            # train them in turns (resumes)",
        f".venv/bin/python {STUDY_PATH}/report.py         # this page",
        "```",
        "",
    ]
    if not records:
        return "\n".join(lines + ["No run has started yet.", ""])
    unfinished = [r for r in records if not r["finished"]]
    if unfinished:
        lines += [
            '!!! warning "Partial results"',
            f"    {len(unfinished)} of the {len(records)} runs are unfinished. Each is shown at "
            "its last evaluation, and its checkpoint resumes it exactly. Nothing is "
            "extrapolated.",
            "",
        ]
    figure = Path(figures) / "curves.png"
    draw(records, figure)
    link = os.path.relpath(figure, Path(page).parent)
    lines += [
        "## The curves",
        "",
        f"![Accuracy against updates and examples seen]({link})",
        "",
        "Each panel is one rung at one learning rate, each colour one model (one seed each). "
        "Solid lines are the "
        "held-out-pair accuracy and dotted lines the training accuracy; the dashed line is the "
        "0.9 endpoint. The bottom axis counts updates and the top axis the examples seen.",
        "",
        "## The runs",
        "",
        "| rung | learning rate | model | updates | 0.9 on held-out pairs at | lowest train "
        "loss | train loss (last) | train | seen pairs | held-out pairs | left log 2? | "
        "s / update | commit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for record in sorted(
        records,
        key=lambda r: (panel_order(panel_of(r)), MODELS.index(r["model"]), r["run"]["seed"]),
    ):
        lines.append(run_row(record))
    lines += [
        "",
        f"Left log 2: the training loss fell below {FLAT_SHARE} x log 2 = "
        f"{FLAT_SHARE * 0.6931471805599453:.4f} at some evaluation. The accuracies are at the "
        "last evaluation, on 2,048 training states and 1,000 states of each test set. Seconds "
        "per update are measured with other jobs sharing the 2 cores.",
        "",
    ]
    pilots = [r for r in records if r["run"]["seed"] == plan.SEED]
    board = [r for r in at_default_rate(pilots) if r["run"]["rung"] == "board"]
    lines += [
        "## The pilot's decision",
        "",
        "Rule (pilot-plan.md, section 3), applied to the board runs: "
        f"{DECISIONS[pilot_decision(board)]}.",
        "",
    ]
    second = [
        r
        for r in pilots
        if r["run"]["rung"] == "board" and r["run"]["learning_rate"] == plan.COMPARISON_RATE
    ]
    if second:
        lines += [
            "## The second pilot's decision",
            "",
            "The same rule (second-pilot-plan.md, section 3), applied to the board runs at "
            f"{plan.COMPARISON_RATE:g}: {DECISIONS[pilot_decision(second)]}.",
            "",
        ]
    for rate, plans in (
        (DEFAULT_LEARNING_RATE, "pilot-plan.md, section 3; ladder-plan.md, section 4"),
        (plan.COMPARISON_RATE, "second-pilot-plan.md, section 3"),
    ):
        at_rate = [r for r in pilots if r["run"]["learning_rate"] == rate]
        if len({r["run"]["rung"] for r in at_rate}) > 1:
            lines += ladder_lines(at_rate, rate, plans)
    ladder_rates = (DEFAULT_LEARNING_RATE, plan.COMPARISON_RATE)
    other_rates = [r for r in pilots if r["run"]["learning_rate"] not in ladder_rates]
    if other_rates:
        lines += ["## Other learning rates", ""]
        for record in sorted(other_rates, key=lambda r: (panel_order(panel_of(r)), r["model"])):
            run = record["run"]
            if learned(record):
                outcome = f"learned it ({record['endpoint']['updates']:,} updates)"
            else:
                outcome = not_learned(record)
            moved = "left" if left_constant(record) else "stayed at"
            lines.append(
                f"- {record['model']}, {RUNG_TITLES[run['rung']]} ({run['rung']}) at "
                f"{run['learning_rate']:g}: {outcome}, and {moved} the constant prediction."
            )
    compared = comparison(records)
    if compared is not None:
        lines += ["", *comparison_lines(compared)]
    conclusion = Path(results) / "conclusion.md"
    if conclusion.exists():  # hand-written from the numbers above, shown as it is
        lines += ["", "## Conclusion", "", conclusion.read_text(encoding="utf-8").strip()]
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS), help="folder of the runs' folders")
    parser.add_argument("--page", default=str(PAGE), help="the Markdown page to write")
    parser.add_argument("--figures", default=str(FIGURES), help="folder of the figures")
    args = parser.parse_args(argv)
    text = render(load(args.results), args.figures, args.page, args.results)
    atomic_write_text(args.page, text)
    print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
