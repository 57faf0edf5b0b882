"""Per-puzzle-type win rates of several checkpoints, both agents side by side (Figures 10 and 11).

The inputs are the reports `keras-simplicial evaluate` writes (`analysis.evaluation`): one JSON file
per evaluated checkpoint, with the agent kind and the win rate of every puzzle type (a, b, c) of
Section 6. For each agent and puzzle type the figure shows the mean over checkpoints with the
standard deviation as an error bar (the paper: "mean and standard deviation of 100 runs across
various checkpoints"), and the individual checkpoints as dots.
"""

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from keras_simplicial.agents.analysis.training_curves import AGENT_COLOURS  # noqa: E402


def parse_puzzle_type(text):
    """ "(3, 3, 5)", "3,3,5" or "335" -> (3, 3, 5)."""
    digits = [part for part in text.replace("(", " ").replace(")", " ").replace(",", " ").split()]
    if len(digits) == 1 and len(digits[0]) == 3 and digits[0].isdigit():
        digits = list(digits[0])
    try:
        values = tuple(int(d) for d in digits)
    except ValueError:
        values = ()
    if len(values) != 3:
        raise ValueError(f"a puzzle type is three integers (a, b, c), e.g. '3,3,5'; got {text!r}.")
    return values


def load_evaluations(paths):
    """The evaluation reports at `paths` (JSON files, or run directories holding
    evaluation.json); each gets "source" set to its path."""
    reports = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            path = path / "evaluation.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"No evaluation report at {path} (run `keras-simplicial "
                "evaluate CHECKPOINT --output FILE` first)."
            )
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON: {error.msg}.") from None
        if not isinstance(report, dict) or "per_puzzle_type" not in report:
            raise ValueError(f"{path} is not an evaluation report (no 'per_puzzle_type').")
        report["source"] = str(path)
        reports.append(report)
    return reports


def per_type_statistics(reports, puzzle_types=None):
    """{agent: {puzzle_type: (mean, std, [win rate of each report])}} over the reports.

    A report without an agent kind counts as "unknown". `puzzle_types` restricts (and orders) the
    types; by default every type any report has.
    """
    rates = {}
    for report in reports:
        agent = report.get("agent") or "unknown"
        for name, entry in report["per_puzzle_type"].items():
            if entry.get("episodes", 0) > 0:
                rates.setdefault(agent, {}).setdefault(parse_puzzle_type(name), []).append(
                    float(entry["win_rate"])
                )
    wanted = (
        list(puzzle_types)
        if puzzle_types
        else sorted({t for by_type in rates.values() for t in by_type})
    )
    return {
        agent: {
            t: (float(np.mean(by_type[t])), float(np.std(by_type[t])), by_type[t])
            for t in wanted
            if t in by_type
        }
        for agent, by_type in sorted(rates.items())
    }


def plot_per_type_win_rates(reports, path=None, puzzle_types=None, title=None):
    """Grouped bars: for each puzzle type one bar per agent (mean over checkpoints, std error bar,
    one dot per checkpoint). Writes `path` (PNG or PDF) if given; returns the figure."""
    statistics = per_type_statistics(reports, puzzle_types)
    types = (
        list(puzzle_types)
        if puzzle_types
        else sorted({t for by_type in statistics.values() for t in by_type})
    )
    found = {t for by_type in statistics.values() for t in by_type}
    if not found.intersection(types):
        raise ValueError(
            "the evaluation reports have no puzzle type with episodes"
            + (f" among {puzzle_types}" if puzzle_types else "")
            + "."
        )
    agents = list(statistics)
    width = 0.8 / max(len(agents), 1)
    figure, axis = plt.subplots(
        figsize=(max(4.5, 0.75 * len(types) * max(len(agents), 1) + 1.5), 3.6)
    )
    positions = np.arange(len(types))
    for k, agent in enumerate(agents):
        offset = (k - (len(agents) - 1) / 2) * width
        means = [statistics[agent][t][0] if t in statistics[agent] else np.nan for t in types]
        stds = [statistics[agent][t][1] if t in statistics[agent] else 0.0 for t in types]
        counts = {len(statistics[agent][t][2]) for t in types if t in statistics[agent]}
        label = (
            f"{agent} ({'/'.join(str(c) for c in sorted(counts))} checkpoint"
            f"{'s' if max(counts, default=1) > 1 else ''})"
        )
        axis.bar(
            positions + offset,
            means,
            width * 0.9,
            yerr=stds,
            capsize=3,
            color=AGENT_COLOURS.get(agent, "tab:gray"),
            alpha=0.8,
            label=label,
            error_kw={"linewidth": 1},
        )
        for p, t in zip(positions, types):
            if t in statistics[agent]:
                values = statistics[agent][t][2]
                axis.scatter(np.full(len(values), p + offset), values, s=8, color="black", zorder=3)
    axis.set_xticks(positions)
    axis.set_xticklabels(
        [f"({a}, {b}, {c})" if b else f"({a}, -, -)" for a, b, c in types],
        rotation=45 if len(types) > 6 else 0,
        fontsize=8,
    )
    axis.set_xlabel("puzzle type (a, b, c)")
    axis.set_ylabel("win rate")
    axis.set_ylim(0.0, 1.05)
    axis.set_title(title or "win rate per puzzle type: mean and std over checkpoints")
    axis.grid(axis="y", alpha=0.3)
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, dpi=150)
    return figure
