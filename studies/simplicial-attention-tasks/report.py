"""The study's page, README.md ("When 2-simplicial attention helps"), and its figures, from the
runs of run.py beside this file (studies/simplicial-attention-tasks/).

    .venv/bin/python studies/simplicial-attention-tasks/report.py

Reads the JSON files of the results folder only (plan.json and one file per run; no Keras), and
writes the page and figures/*.png. Every number on the page is computed here from those files; what
is missing is said to be missing. The analysis is the one fixed by the pre-registration
(preregistration.md beside this file), which this script never writes: the endpoint is a run's
held- out accuracy after its task's last epoch; each 2-simplicial model is compared with the
dot-product model of its task by the exact one-sided permutation test over seeds (the difference of
the means, every split of the pooled runs), Holm's correction over the `PRIMARY` family at level
`ALPHA`. A hand-written conclusion, if the results folder has one (conclusion.md), is shown as it
is."""

import argparse
import hashlib
import json
import math
import os
from pathlib import Path

from keras_simplicial.agents.atomic_files import atomic_write_text
from keras_simplicial.agents.experiments.statistics import one_sided_permutation_p_value

ROOT = Path(__file__).resolve().parents[2]
STUDY = Path(__file__).resolve().parent
STUDY_PATH = STUDY.relative_to(ROOT).as_posix()
RESULTS = STUDY / "results"
# The first campaign, trained before the initialisation fix (9c70f44): kept, and compared here.
FIRST_CAMPAIGN = STUDY / "first-campaign" / "results"
PAGE = STUDY / "README.md"
FIGURES = STUDY / "figures"
PREREGISTRATION = STUDY / "preregistration.md"
CONCLUSION = "conclusion.md"
# The secondary, Match3 at length 16: its own pre-registration, pilot and runs.
SECONDARY_PREREGISTRATION = STUDY / "length-16-preregistration.md"
SECONDARY_RESULTS = STUDY / "length-16" / "results"
SECONDARY_PILOT = STUDY / "length-16" / "pilot"
# Exploratory checks after the secondary (run.py --length-16-checks): tested by nothing.
CHECK_RESULTS = STUDY / "length-16" / "checks"
CHECK_COLUMNS = (
    ("match3-8-m197", "length 8, M = 197"),
    ("match3-16-data4x", "length 16, M = 197, 32,000 sequences"),
)

# ------------------------------------------------------- fixed by the pre-registration (section 4)
ALPHA = 0.05
SEEDS_PER_MODEL = 8
REFERENCE = "dot-product"
TASKS = ("match3", "match2", "two-key", "three-key")
MODELS = (
    "dot-product",
    "simplicial-pairs",
    "simplicial-virtual",
    "trilinear-pairs",
    "simplicial-triples",
)
# The primary family: (task, model), each tested one-sided, model > dot-product on that task.
PRIMARY = tuple(
    (task, model)
    for task in TASKS
    for model in MODELS[1:]
    if model != "simplicial-triples" or task == "three-key"
)

# ----------------------------------- fixed by the secondary's pre-registration (length-16-...md)
SECONDARY_TASK = "match3-16"
# Its own family, Holm's correction over these 3 alone, at the same ALPHA.
SECONDARY_FAMILY = tuple((SECONDARY_TASK, model) for model in MODELS[1:4])
# The pilot's rules: go unless every model's last held-out accuracy is below NOTHING_LEARNED or at
# least CEILING; the epochs are the first candidate by which every model has plateaued (the mean
# of its last PLATEAU_WINDOW epochs there within PLATEAU_TOLERANCE of the pilot's last ones).
NOTHING_LEARNED = 0.55
CEILING = 0.99
EPOCH_CANDIDATES = (20, 30, 40, 50)
PLATEAU_WINDOW = 5
PLATEAU_TOLERANCE = 0.01

TASK_TITLES = {
    "match3": "Match3",
    "match2": "Match2 (the control)",
    "two-key": "Two keys",
    "three-key": "Three keys",
    SECONDARY_TASK: "Match3 at length 16 (the secondary)",
}
MODEL_DESCRIPTIONS = {
    "dot-product": "`TransformerBlock`: dot-product attention, 2 heads",
    "simplicial-pairs": "`SimplicialAttention` over all pairs of entities, the paper's form "
    "(unsigned scalar triple product, B), 2 heads",
    "simplicial-virtual": "`TwoSimplicialTransformerBlock`: dot-product heads plus 2-simplicial "
    "heads over pairs of 2 virtual entities (the agents' block)",
    "trilinear-pairs": '`SimplicialAttention(form="trilinear")` over all pairs of entities '
    "(Roy et al.'s logit, values u1 * u2), 2 heads",
    "simplicial-triples": "`SimplicialAttention(order=3)` over all triples of entities, the "
    "paper's form, 2 heads",
}
COLOURS = {
    "dot-product": "#444444",
    "simplicial-pairs": "#1f77b4",
    "simplicial-virtual": "#2ca02c",
    "trilinear-pairs": "#d62728",
    "simplicial-triples": "#9467bd",
}
# Student's t 0.975 quantiles, 1 to 30 degrees of freedom (the 95% interval of a mean).
T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


# ------------------------------------------------------------------------------------ statistics
def mean(values):
    return sum(values) / len(values)


def t_interval(values):
    """95% Student t interval of the mean over runs (None below 2 runs), clipped to [0, 1]."""
    n = len(values)
    if n < 2:
        return None
    m = mean(values)
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = (T_975[n - 2] if n - 1 <= len(T_975) else 1.96) * sd / math.sqrt(n)
    return max(0.0, m - half), min(1.0, m + half)


def holm(p_values, family_size):
    """Holm-adjusted p-values of `p_values` (a dict) in a family of `family_size` hypotheses; those
    not yet tested count as p = 1, which can only make the adjusted values larger."""
    ordered = sorted(p_values, key=lambda key: p_values[key])
    adjusted, running = {}, 0.0
    for rank, key in enumerate(ordered):
        running = max(running, min(1.0, (family_size - rank) * p_values[key]))
        adjusted[key] = running
    return adjusted


def format_p(p):
    return f"{p:.4f}" if p >= 1e-3 else f"{p:.1e}"


# ------------------------------------------------------------------------------------------- data
# JSON files of a results folder that are not runs: run.py's measurement of the length-16 cost.
NOT_RUNS = frozenset({"length-16-cost.json"})


def load(results):
    """(plan or None, runs, unreadable file names) of the results folder."""
    results = Path(results)
    plan, runs, unreadable = None, [], []
    if not results.is_dir():
        return plan, runs, unreadable
    for path in sorted(results.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            unreadable.append(path.name)
            continue
        if path.name == "plan.json":
            plan = record
        elif path.name in NOT_RUNS:
            continue
        elif isinstance(record, dict) and {"task", "model", "seed", "epochs"} <= set(record):
            runs.append(record)
        else:
            unreadable.append(path.name)
    return plan, runs, unreadable


def group(runs):
    """{(task, model): [run, ...]} sorted by seed."""
    groups = {}
    for run in sorted(runs, key=lambda run: run["seed"]):
        groups.setdefault((run["task"], run["model"]), []).append(run)
    return groups


def final_accuracy(run):
    return run["epochs"][-1]["test_accuracy"]


def curve_mean(run):
    """Held-out accuracy averaged over the epochs: how fast a run learned (secondary)."""
    return mean([row["test_accuracy"] for row in run["epochs"]])


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def comparisons(groups, measure, family=PRIMARY):
    """{(task, model): (difference, p, smallest p)} for each pair of `family` with every seed of
    both models, and {(task, model): (n model, n reference)} for the others."""
    done, waiting = {}, {}
    for task, model in family:
        treated = [measure(run) for run in groups.get((task, model), [])]
        reference = [measure(run) for run in groups.get((task, REFERENCE), [])]
        if len(treated) >= SEEDS_PER_MODEL and len(reference) >= SEEDS_PER_MODEL:
            p, smallest = one_sided_permutation_p_value(treated, reference)
            done[(task, model)] = (mean(treated) - mean(reference), p, smallest)
        else:
            waiting[(task, model)] = (len(treated), len(reference))
    return done, waiting


def plateau_epoch(accuracies):
    """The first of `EPOCH_CANDIDATES` by which a pilot run (its held-out accuracy per epoch) has
    plateaued, or None: the mean over the `PLATEAU_WINDOW` epochs ending there is within
    `PLATEAU_TOLERANCE` of the mean over its last `PLATEAU_WINDOW` epochs."""
    last = mean(accuracies[-PLATEAU_WINDOW:])
    for epoch in EPOCH_CANDIDATES:
        if epoch <= len(accuracies):
            window = accuracies[epoch - PLATEAU_WINDOW : epoch]
            if abs(mean(window) - last) <= PLATEAU_TOLERANCE:
                return epoch
    return None


def pilot_decision(pilot_runs):
    """(decision, epochs, {model: plateau epoch or None}) of the secondary's pilot, by the rules
    of its pre-registration's section 1; (None, None, {}) without all four models' runs."""
    by_model = {run["model"]: run for run in pilot_runs if run["task"] == SECONDARY_TASK}
    if not set(MODELS[:4]) <= set(by_model):
        return None, None, {}
    finals = {model: final_accuracy(by_model[model]) for model in MODELS[:4]}
    plateaus = {
        model: plateau_epoch([row["test_accuracy"] for row in by_model[model]["epochs"]])
        for model in MODELS[:4]
    }
    if all(value < NOTHING_LEARNED for value in finals.values()):
        return "no-go, nothing learned", None, plateaus
    if all(value >= CEILING for value in finals.values()):
        return "no-go, ceiling", None, plateaus
    if any(epoch is None for epoch in plateaus.values()):
        return "go", EPOCH_CANDIDATES[-1], plateaus
    return "go", max(plateaus.values()), plateaus


# ---------------------------------------------------------------------------------------- figures
def draw_curves(task, groups, path):
    """Held-out accuracy per epoch: a thin line per seed, a thick line for the mean."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axis = plt.subplots(figsize=(7.5, 4.2))
    lowest = 0.45
    for model in MODELS:
        runs = groups.get((task, model), [])
        if not runs:
            continue
        colour = COLOURS[model]
        for run in runs:
            epochs = [row["epoch"] for row in run["epochs"]]
            lowest = min([lowest] + [row["test_accuracy"] - 0.02 for row in run["epochs"]])
            axis.plot(
                epochs,
                [row["test_accuracy"] for row in run["epochs"]],
                color=colour,
                alpha=0.25,
                linewidth=0.8,
            )
        length = min(len(run["epochs"]) for run in runs)
        average = [mean([run["epochs"][e]["test_accuracy"] for run in runs]) for e in range(length)]
        axis.plot(
            range(1, length + 1),
            average,
            color=colour,
            linewidth=2.2,
            label=f"{model} (mean of {len(runs)})",
        )
    axis.set_ylim(lowest, 1.005)
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_xlabel("epoch")
    axis.set_ylabel("held-out accuracy")
    axis.set_title(TASK_TITLES[task])
    axis.grid(alpha=0.3)
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)


# ------------------------------------------------------------------------------------------- page
def provenance_lines(runs):
    """Which layers trained the runs: the package versions and commits their files record."""
    recorded = {}
    missing = 0
    for run in runs:
        source = run.get("provenance")
        if not source or not source.get("git_commit"):
            missing += 1
            continue
        key = (source.get("package_version"), source["git_commit"], bool(source["code_modified"]))
        recorded[key] = recorded.get(key, 0) + 1
    if not runs:
        return []
    parts = [
        f"{count} runs by keras-simplicial {version} at commit {commit[:10]}"
        + (" with uncommitted changes to the code" if modified else "")
        for (version, commit, modified), count in sorted(recorded.items(), key=lambda kv: -kv[1])
    ]
    if missing:
        parts.append(f"{missing} runs whose file names no commit")
    return [
        f"**Which layers trained these runs** (recorded in each run's file): {'; '.join(parts)}.",
        "",
    ]


def earlier_section(groups, first_campaign):
    """The first campaign's means (before the initialisation fix) beside the re-run's."""
    _, earlier_runs, _ = load(first_campaign)
    if not earlier_runs:
        return []
    earlier = group(earlier_runs)
    lines = [
        "## Earlier numbers: the first campaign, before the initialisation fix",
        "",
        "Dated note (2026-11-28). The first campaign (2026-11-26, the same constants and seeds) "
        "trained every model before commit 9c70f44, when one initializer instance gave p, l1, l2 "
        "and u equal initial values; its page is kept as [first-campaign.md](first-campaign.md) "
        "and its runs in `first-campaign/results/`. Its mean held-out accuracy after the last "
        "epoch beside the re-run's (over the seeds each has so far):",
        "",
        "| task | model | first campaign (seeds) | re-run (seeds) | re-run - first |",
        "|---|---|---|---|---|",
    ]
    for task in TASKS:
        for model in MODELS:
            before = [final_accuracy(run) for run in earlier.get((task, model), [])]
            if not before:
                continue
            after = [final_accuracy(run) for run in groups.get((task, model), [])]
            shown = f"{mean(after):.3f} ({len(after)})" if after else "not run yet"
            change = f"{mean(after) - mean(before):+.3f}" if after else ""
            lines.append(
                f"| {task} | {model} | {mean(before):.3f} ({len(before)}) | {shown} | {change} |"
            )
    return lines + [""]


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest() if Path(path).exists() else None


def setup_section(plan):
    lines = ["## Set-up", ""]
    if plan is None:
        lines += [
            "No plan.json in the results folder yet (`studies/simplicial-attention-tasks/run.py "
            "--dry-run` writes it): the set-up is the one the pre-registration states.",
            "",
        ]
        return lines
    match3, key2, key3 = (plan["tasks"].get(t) for t in ("match3", "two-key", "three-key"))
    rates = plan.get("positive_rates_uniform", {})
    lines += [
        "**Tasks** (`keras_simplicial.tasks`, drawn from the seed; held-out set of "
        f"{plan['test_size']:,} examples, training set of {plan['train_size']:,}):",
        "",
    ]
    if match3:
        lines.append(
            f"- *Match3*: x_1..x_N in Z_M with N = {match3['length']}, M = {match3['modulus']}; "
            "y_i = 1 iff x_i + x_j + x_k = 0 (mod M) for some positions j, k (i included, j = k "
            "allowed). Balanced: only sequences with exactly N/2 positive positions are kept "
            f"(uniform draws have {rates.get('match3', float('nan')):.1%} positive positions)."
        )
        lines.append(
            "- *Match2* (the control): y_i = 1 iff x_i + x_j = 0 (mod M) for some j, same N, M "
            f"and balance (uniform draws: {rates.get('match2', float('nan')):.1%} positive)."
        )
    for name, spec in (("Two keys", key2), ("Three keys", key3)):
        if spec:
            k = spec["num_keys"]
            lines.append(
                f"- *{name}*: {k} held keys, the Gem's {k} locks and {spec['num_distractors']} "
                f"distractors ({2 * k + spec['num_distractors']} entities), "
                f"{spec['num_colours']} colours; y = 1 iff the held keys' colours are the locks'. "
                "Half the examples positive; a negative misses exactly one lock colour, which a "
                f"distractor carries. {spec['num_held_out']} of the "
                f"{math.comb(spec['num_colours'], k)} colour {'pairs' if k == 2 else 'triples'} "
                "never appear as locks or held keys in training and are the locks of every "
                "held-out example."
            )
    epochs = ", ".join(f"{task} {n}" for task, n in plan["epochs"].items())
    lines += [
        "",
        f"**Training**: Adam, learning rate {plan['learning_rate']}, batch {plan['batch_size']}, "
        f"binary cross-entropy on logits; epochs: {epochs}. Seeds: "
        f"{', '.join(str(s) for s in plan['seeds'])}.",
        "",
        f"**Models**: entity embedding Dense({plan['width']}), one block, a logit per entity "
        "(Match3, Match2) or after max pooling over the entities (key tasks). Attention heads: "
        f"{plan['heads']} of key width {plan['key_dim']}; 2-simplicial values of width "
        f"{plan['simplicial_value_dim']} ({plan['triples_value_dim']} for triples, whose B has "
        "value_dim^4 entries per head). The feed-forward width of each model is chosen so that "
        "its parameter count is that of the dot-product model (feed-forward "
        f"{plan['dot_feedforward_dim']}) within 10%:",
        "",
        "| model | attention | "
        + " | ".join(f"{t}: parameters (ff)" for t in plan["tasks"])
        + " |",
        "|---|---|" + "---|" * len(plan["tasks"]),
    ]
    for model in MODELS:
        cells = []
        for task in plan["tasks"]:
            entry = plan["runs"].get(f"{task}/{model}")
            cells.append(f"{entry['parameters']:,} ({entry['feedforward_dim']})" if entry else "")
        if any(cells):
            lines.append(f"| {model} | {MODEL_DESCRIPTIONS[model]} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def deviations_section(plan):
    if plan is None or "match3" not in plan["tasks"]:
        return []
    match3 = plan["tasks"]["match3"]
    return [
        "## How this differs from Kozachinskiy et al.",
        "",
        "Their Match3 runs: sequences of length 30-35, M = 37, one layer of width 128 with 2 "
        "heads, 500 epochs, 8 seeds: far more than the few hours of a 2-core CPU this benchmark "
        "has. Here: length "
        f"{match3['length']}, M = {match3['modulus']}, width {plan['width']} with "
        f"{plan['heads']} heads, {plan['epochs'].get('match3')} epochs of "
        f"{plan['train_size']:,} sequences, 8 seeds. M and the length were chosen in pilot runs "
        "(section 5 of the pre-registration) so that a balanced set can be drawn by rejection "
        "and the models are not all stuck at one accuracy within the budget (at length 10, "
        "M = 37 the three models tried stopped at 0.76-0.80 in 20 epochs). Their lower bound "
        "is asymptotic in the length: at length 8 a dot-product model may approximate Match3 "
        "better than the theory allows at length 30, so a gap here is evidence of ease of "
        "learning, not of what one layer can represent.",
        "",
    ]


def results_section(task, groups, figure_link):
    lines = [f"### {TASK_TITLES[task]}", ""]
    models = [m for m in MODELS if groups.get((task, m))]
    if not models:
        return lines + ["No run of this task has finished yet.", ""]
    lines += [
        f"![Held-out accuracy per epoch, {task}]({figure_link})",
        "",
        "| model | seeds | parameters | held-out accuracy, last epoch: mean [95% t-interval] "
        "| mean over epochs | training accuracy, last epoch | s / epoch (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for model in models:
        runs = groups[(task, model)]
        finals = [final_accuracy(run) for run in runs]
        interval = t_interval(finals)
        shown = f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "(one run)"
        lines.append(
            f"| {model} | {len(runs)} of {SEEDS_PER_MODEL} | {runs[0]['parameters']:,} | "
            f"{mean(finals):.3f} {shown} | {mean([curve_mean(r) for r in runs]):.3f} | "
            f"{mean([r['epochs'][-1]['train_accuracy'] for r in runs]):.3f} | "
            f"{median([r['seconds_per_epoch'] for r in runs]):.2f} |"
        )
    lines += [
        "",
        "Per seed, held-out accuracy after the last epoch: "
        + "; ".join(
            f"{model} " + ", ".join(f"{final_accuracy(run):.3f}" for run in groups[(task, model)])
            for model in models
        )
        + ".",
        "",
    ]
    return lines


def comparison_section(groups, family=PRIMARY, heading="## The pre-registered comparisons"):
    """The table of `family`'s tests, Holm's correction over `family`; (lines, done, adjusted)."""
    done, waiting = comparisons(groups, final_accuracy, family)
    adjusted = holm({key: value[1] for key, value in done.items()}, len(family))
    lines = [
        heading,
        "",
        f"Each 2-simplicial model against the dot-product model of its task: the difference of "
        "the mean held-out accuracies after the last epoch, the exact one-sided permutation "
        f"p-value (H1: the 2-simplicial model's mean is higher; all C(16, 8) = 12,870 splits of "
        f"the 16 runs), and Holm's adjustment over the {len(family)} comparisons of the family "
        f"(those still missing count as p = 1 until they are done). Ahead: adjusted p <= {ALPHA}.",
        "",
        "| task | model | difference | p (one-sided) | Holm-adjusted p | ahead of dot-product? |",
        "|---|---|---|---|---|---|",
    ]
    for key in family:
        task, model = key
        if key in done:
            difference, p, smallest = done[key]
            verdict = "**yes**" if adjusted[key] <= ALPHA else "no"
            lines.append(
                f"| {task} | {model} | {difference:+.3f} | {format_p(p)} | "
                f"{format_p(adjusted[key])} | {verdict} |"
            )
        else:
            n_model, n_reference = waiting[key]
            lines.append(
                f"| {task} | {model} | not tested yet: seeds done {n_model} of "
                f"{SEEDS_PER_MODEL}, dot-product {n_reference} of {SEEDS_PER_MODEL} | | | |"
            )
    if done:
        smallest = min(value[2] for value in done.values())
        lines += ["", f"The smallest p-value 8 v 8 runs allow: {format_p(smallest)}."]
    lines.append("")
    return lines, done, adjusted


def secondary_section(groups):
    done, _ = comparisons(groups, curve_mean)
    if not done:
        return []
    lines = [
        "## Secondary: how fast (exploratory)",
        "",
        "The held-out accuracy averaged over all epochs of a run (the area under its curve over "
        "the number of epochs), which separates models that all end at the ceiling. Same test, "
        "no correction for multiplicity: a description, not a pre-registered claim.",
        "",
        "| task | model | difference of means | p (one-sided, uncorrected) |",
        "|---|---|---|---|",
    ]
    for (task, model), (difference, p, _) in done.items():
        lines.append(f"| {task} | {model} | {difference:+.3f} | {format_p(p)} |")
    return lines + [""]


def cost_section(groups):
    rows = []
    for task in TASKS:
        reference = groups.get((task, REFERENCE))
        for model in MODELS:
            runs = groups.get((task, model))
            if not runs:
                continue
            seconds = median([run["seconds_per_epoch"] for run in runs])
            ratio = ""
            # Each run against the dot-product run of its seed: the runs of one seed follow each
            # other within minutes, so the machine's load changes less between them than across
            # the campaign.
            by_seed = {r["seed"]: r["seconds_per_epoch"] for r in reference or []}
            paired = [
                r["seconds_per_epoch"] / by_seed[r["seed"]] for r in runs if r["seed"] in by_seed
            ]
            if paired:
                ratio = f"{median(paired):.2f}"
            finals = mean([final_accuracy(run) for run in runs])
            rows.append(f"| {task} | {model} | {seconds:.2f} | {ratio} | {finals:.3f} |")
    if not rows:
        return []
    environment = next(iter(groups.values()))[0].get("environment", {})
    return [
        "## The price: seconds per epoch beside accuracy",
        "",
        "Median over a model's runs of its median epoch (which leaves out the first epoch's "
        f"compilation); {environment.get('backend', '?')} backend, Keras "
        f"{environment.get('keras', '?')}, {environment.get('machine', '?')}, one run at a time "
        "on a machine that may have been running other jobs: compare within a task. The ratio "
        "to dot-product is the median over seeds of each run's seconds per epoch over those of "
        "the dot-product run of the same seed (run minutes apart).",
        "",
        "| task | model | s / epoch | x dot-product | held-out accuracy (mean) |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ]


def summary_section(groups, done, adjusted, total_runs, planned_runs):
    lines = ["## What the numbers say", ""]
    if not total_runs:
        return lines + ["Nothing yet: no run has finished.", ""]
    lines.append(f"- Runs finished: {total_runs} of {planned_runs}.")
    control = [final_accuracy(run) for run in groups.get(("match2", REFERENCE), [])]
    if control:
        reached = "reached" if mean(control) >= 0.95 else "did **not** reach"
        lines.append(
            f"- Control: dot-product attention on Match2, mean held-out accuracy "
            f"{mean(control):.3f} over {len(control)} seeds; it {reached} the pre-registered "
            "0.95 that makes a null result on Match3 interpretable."
        )
    for task in TASKS:
        tested = [model for (t, model) in done if t == task]
        if not tested:
            continue
        ahead = [model for model in tested if adjusted[(task, model)] <= ALPHA]
        lines.append(
            f"- {TASK_TITLES[task]}: "
            + (
                f"ahead of dot-product after Holm's correction: {', '.join(ahead)}"
                if ahead
                else "no 2-simplicial model is ahead of dot-product after Holm's correction"
            )
            + f" ({len(tested)} of the task's comparisons tested)."
        )
    return lines + [""]


def registration_warning(runs, registration):
    """A warning if some of `runs` were made under a text of `registration` other than today's."""
    registered = _sha256(registration)
    if not runs or {run.get("preregistration_sha256") for run in runs} == {registered}:
        return []
    return [
        '!!! warning "Pre-registration changed"',
        f"    {sum(run.get('preregistration_sha256') != registered for run in runs)} runs "
        "were made under a pre-registration text other than the current one (or none).",
        "",
    ]


def pilot_table(pilot_runs, plateaus):
    """The secondary's pilot: held-out accuracy every 10 epochs, and where each model plateaued."""
    runs = {run["model"]: run for run in pilot_runs if run["task"] == SECONDARY_TASK}
    length = max(len(run["epochs"]) for run in runs.values())
    marks = list(range(10, length + 1, 10))
    lines = [
        "| model (seed "
        + ", ".join(sorted({str(run["seed"]) for run in runs.values()}))
        + ") | "
        + " | ".join(f"epoch {e}" for e in marks)
        + " | plateaued by |",
        "|---|" + "---|" * (len(marks) + 1),
    ]
    for model in MODELS:
        run = runs.get(model)
        if run is None:
            continue
        accuracies = [row["test_accuracy"] for row in run["epochs"]]
        cells = [f"{accuracies[e - 1]:.3f}" if e <= len(accuracies) else "" for e in marks]
        plateau = plateaus.get(model)
        shown = (
            f"epoch {plateau}" if plateau else f"not by {EPOCH_CANDIDATES[-1]}" if plateaus else ""
        )
        lines.append(f"| {model} | " + " | ".join(cells) + f" | {shown} |")
    return lines + [""]


def length_16_section(
    results, pilot, figures, page, registration, primary_groups=None, checks=None
):
    """The secondary (Match3 at length 16): its pilot and decision, its runs, its own family's
    tests; (lines, verdict line or None)."""
    registration_link = os.path.relpath(registration, Path(page).parent)
    results_link = os.path.relpath(results, ROOT) if Path(results).is_absolute() else results
    lines = [
        "## Secondary, pre-registered: Match3 at length 16",
        "",
        "Closer to the literature's lengths, where the theory's separation between one layer of "
        "dot-product attention and 2-simplicial attention should be wider: Match3 at N = 16, "
        "M = 197, balanced, the four Match3 models with the primary's constants and seeds 1-8, "
        f"the same endpoint and test. [Its own pre-registration]({registration_link}) fixed the "
        "pilot's rules before the pilot and the campaign before its runs; its "
        f"{len(SECONDARY_FAMILY)} comparisons are their own family (Holm's correction over "
        f"{len(SECONDARY_FAMILY)}), apart from the primary's {len(PRIMARY)}. Its runs are in "
        f"`{results_link}`.",
        "",
    ]
    _, pilot_runs, _ = load(pilot)
    if not pilot_runs:
        return lines + ["The pilot has not run yet.", ""], None
    decision, epochs, plateaus = pilot_decision(pilot_runs)
    lines += ["**The pilot** (held-out accuracy):", ""] + pilot_table(pilot_runs, plateaus)
    if decision is None:
        return lines + ["The pilot is incomplete: no decision yet.", ""], None
    lines += [
        f"By the pre-registered rules: **{decision}**"
        + (f", {epochs} epochs." if epochs else ": the campaign does not run.")
        + f" (Go unless every model ends below {NOTHING_LEARNED} or every model at {CEILING} or "
        f"more; a model has plateaued by epoch e when its mean over epochs e-{PLATEAU_WINDOW - 1}"
        f"..e is within {PLATEAU_TOLERANCE} of its mean over the pilot's last "
        f"{PLATEAU_WINDOW}.)",
        "",
    ]
    if epochs is None:
        return lines, f"- Match3 at length 16: {decision}; the campaign did not run."
    if epochs == EPOCH_CANDIDATES[-1] and any(v is None for v in plateaus.values()):
        late = [model for model, epoch in plateaus.items() if epoch is None]
        lines += [
            f"The endpoint of {', '.join(late)} is taken before its pilot's plateau (the cap).",
            "",
        ]
    plan, runs, unreadable = load(results)
    if not runs:
        return lines + ["No run of the campaign has finished yet.", ""], None
    planned = len(plan["seeds"]) * len(plan["runs"]) if plan else 4 * SEEDS_PER_MODEL
    lines += registration_warning(runs, registration)
    if unreadable:
        lines += [f"Unreadable files, left out: {', '.join(unreadable)}.", ""]
    if len(runs) < planned:
        lines += [
            '!!! warning "Partial results"',
            f"    {len(runs)} of the {planned} planned runs of the secondary have finished.",
            "",
        ]
    off = [run for run in runs if len(run["epochs"]) != epochs]
    if off:
        lines += [f"{len(off)} runs trained for other than the pilot's {epochs} epochs.", ""]
    groups = group(runs)
    figure = Path(figures) / f"{SECONDARY_TASK}.png"
    draw_curves(SECONDARY_TASK, groups, figure)
    lines += provenance_lines(runs)
    lines += results_section(SECONDARY_TASK, groups, os.path.relpath(figure, Path(page).parent))[2:]
    table, done, adjusted = comparison_section(
        groups, SECONDARY_FAMILY, heading="### Its comparisons, a family of 3"
    )
    lines += table
    if checks is not None:
        lines += checks_section(checks, groups, primary_groups or {})
    verdict = None
    if done:
        ahead = [model for (_, model) in done if adjusted[(SECONDARY_TASK, model)] <= ALPHA]
        verdict = (
            f"- {TASK_TITLES[SECONDARY_TASK]}: "
            + (
                f"ahead of dot-product after Holm's correction over its family: {', '.join(ahead)}"
                if ahead
                else "no 2-simplicial model is ahead of dot-product after Holm's correction over "
                "its family"
            )
            + f" ({len(done)} of its {len(SECONDARY_FAMILY)} comparisons tested)."
        )
    return lines, verdict


def checks_section(checks, secondary_groups, primary_groups):
    """The exploratory checks of why length 16 stays near chance, beside the two campaigns."""
    _, runs, _ = load(checks)
    if not runs:
        return []
    checks_groups = group(runs)
    columns = [("length 8, M = 23 (the primary)", primary_groups, "match3")]
    columns += [("length 16, M = 197 (the secondary)", secondary_groups, SECONDARY_TASK)]
    columns += [(title, checks_groups, task) for task, title in CHECK_COLUMNS]

    def cell(groups, task, model):
        done = groups.get((task, model), [])
        if not done:
            return "not run"
        held_out = mean([final_accuracy(run) for run in done])
        training = mean([run["epochs"][-1]["train_accuracy"] for run in done])
        return f"{held_out:.3f} / {training:.3f} ({len(done)})"

    lines = [
        "### Why near chance? Exploratory checks",
        "",
        "Not pre-registered and tested by nothing: run after the campaign "
        "(`run.py --length-16-checks`, seeds 100 and 101, the secondary's 30 epochs), each "
        "changing one thing of the secondary's task, to say where its difficulty comes from: "
        "the length, the modulus (M = 197 residues the embedding must learn from one-hot inputs, "
        "against 23), or the data. Each cell: held-out / training accuracy after the last epoch, "
        "means over the runs (their number in brackets); the primary's cells are after its 40 "
        "epochs.",
        "",
        "| model | " + " | ".join(title for title, _, _ in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for model in MODELS[:4]:
        lines.append(
            f"| {model} | "
            + " | ".join(cell(groups, task, model) for _, groups, task in columns)
            + " |"
        )
    return lines + [""]


def estimate(plan):
    """ "about H hours for all runs; " from the plan's pilot seconds per epoch, or ""."""
    if not plan or not plan.get("measured_seconds_per_epoch"):
        return ""
    seconds = 0.0
    for key, entry in plan["runs"].items():
        per_epoch = plan["measured_seconds_per_epoch"].get(key)
        if per_epoch is None:
            return ""
        outside = plan.get("seconds_per_run_outside_epochs", 0.0)
        seconds += len(plan["seeds"]) * (outside + plan["epochs"][entry["task"]] * per_epoch)
    return f"about {seconds / 3600:.1f} hours for all runs on the pilots' machine; "


def render(results, figures, preregistration, page, first_campaign=None, secondary=None):
    """The page. `secondary`: (results, pilot, pre-registration[, exploratory checks]) of the
    length-16 secondary."""
    plan, runs, unreadable = load(results)
    groups = group(runs)
    planned_runs = (
        len(plan["seeds"]) * len(plan["runs"])
        if plan
        else SEEDS_PER_MODEL * len({(t, m) for t, m in PRIMARY} | {(t, REFERENCE) for t in TASKS})
    )
    figure_links = {}
    for task in TASKS:
        if any(groups.get((task, m)) for m in MODELS):
            path = Path(figures) / f"{task}.png"
            draw_curves(task, groups, path)
            figure_links[task] = os.path.relpath(path, Path(page).parent)
    results_link = os.path.relpath(results, ROOT) if Path(results).is_absolute() else results
    prereg_link = os.path.relpath(preregistration, Path(page).parent)
    lines = [
        "# When 2-simplicial attention helps",
        "",
        "Tasks on which one layer of dot-product attention is known to fall short or to "
        "succeed, and the same budget given to each 2-simplicial variant of this package: "
        "which of them learns what dot-product attention does not, and at what cost per epoch.",
        "",
        f"The plan, the endpoint and the test were fixed before the runs: "
        f"[the pre-registration]({prereg_link}). This page is generated by "
        "`studies/simplicial-attention-tasks/report.py` from the files in "
        f"`{results_link}`; every number below is computed from them.",
        "",
        "```bash",
        f".venv/bin/python {STUDY_PATH}/run.py --dry-run  # the plan, its time",
        f".venv/bin/python {STUDY_PATH}/run.py            # the runs not done yet",
        f".venv/bin/python {STUDY_PATH}/run.py --tasks match3-16  # the secondary's",
        f".venv/bin/python {STUDY_PATH}/report.py         # this page",
        "```",
        "",
        f"`make simplicial-tasks` does the last three ({estimate(plan)}about half an hour more "
        "for the secondary; run again, it continues where it stopped), "
        "`make simplicial-tasks-report` the last.",
        "",
    ]
    if not runs:
        lines += [
            '!!! note "No results yet"',
            "    No run has finished yet: the tables and curves appear here once "
            "`studies/simplicial-attention-tasks/run.py` has written its first results.",
            "",
        ]
    lines += registration_warning(runs, preregistration)
    quick = [run for run in runs if run.get("quick")]
    if quick:
        lines += [
            '!!! warning "Quick runs"',
            f"    {len(quick)} runs are `--quick` smoke tests, not the pre-registered sizes.",
            "",
        ]
    if unreadable:
        lines += [f"Unreadable files, left out: {', '.join(unreadable)}.", ""]
    if runs and len(runs) < planned_runs:
        lines += [
            '!!! warning "Partial results"',
            f"    {len(runs)} of the {planned_runs} planned runs have finished; a comparison is "
            "tested only once both of its models have every seed.",
            "",
        ]
    lines += provenance_lines(runs)
    lines += setup_section(plan)
    lines += deviations_section(plan)
    lines += ["## Learning curves and the endpoint", ""]
    lines += [
        "Held-out accuracy after each epoch; thin lines one seed each, thick lines the mean. The "
        "interval is Student's t over seeds (95%, clipped to [0, 1]).",
        "",
    ]
    for task in TASKS:
        lines += results_section(task, groups, figure_links.get(task))
    comparison_lines, done, adjusted = comparison_section(groups)
    lines += comparison_lines
    lines += secondary_section(groups)
    lines += cost_section(groups)
    summary = summary_section(groups, done, adjusted, len(runs), planned_runs)
    secondary_lines, verdict = [], None
    if secondary is not None:
        results_16, pilot_16, registration_16, *checks = secondary
        secondary_lines, verdict = length_16_section(
            results_16,
            pilot_16,
            figures,
            page,
            registration_16,
            primary_groups=groups,
            checks=checks[0] if checks else None,
        )
    if verdict:
        summary.insert(-1, verdict)
    lines += summary + secondary_lines
    if first_campaign is not None:
        lines += earlier_section(groups, first_campaign)
    conclusion = Path(results) / CONCLUSION
    lines += ["## Conclusion", ""]
    if conclusion.exists():
        lines += [conclusion.read_text(encoding="utf-8").strip(), ""]
    else:
        lines += [
            "Not written yet: it is written from the numbers above once every run has "
            f"finished (`{results_link}/{CONCLUSION}`, shown here as it is).",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS), help="the runs' JSON files")
    parser.add_argument("--page", default=str(PAGE), help="the Markdown page to write")
    parser.add_argument("--figures", default=str(FIGURES), help="folder of the figures")
    parser.add_argument(
        "--preregistration", default=str(PREREGISTRATION), help="the pre-registration page"
    )
    parser.add_argument(
        "--secondary-results",
        default=str(SECONDARY_RESULTS),
        help="the length-16 secondary's runs",
    )
    parser.add_argument(
        "--secondary-pilot", default=str(SECONDARY_PILOT), help="the secondary's pilot runs"
    )
    parser.add_argument(
        "--secondary-preregistration",
        default=str(SECONDARY_PREREGISTRATION),
        help="the secondary's pre-registration page",
    )
    parser.add_argument(
        "--checks",
        default=str(CHECK_RESULTS),
        help="the exploratory checks of the secondary (run.py --length-16-checks)",
    )
    parser.add_argument(
        "--first-campaign",
        default=str(FIRST_CAMPAIGN),
        help="the first campaign's runs (before the initialisation fix), compared in a note",
    )
    args = parser.parse_args(argv)
    text = render(
        args.results,
        args.figures,
        args.preregistration,
        args.page,
        Path(args.first_campaign),
        secondary=(
            Path(args.secondary_results),
            Path(args.secondary_pilot),
            Path(args.secondary_preregistration),
            Path(args.checks),
        ),
    )
    atomic_write_text(args.page, text)
    print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
