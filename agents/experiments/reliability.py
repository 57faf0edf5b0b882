"""How many runs of a sweep reach the target, per agent: reliability as a figure.

    .venv/bin/python studies/bridge-small-every-run/reliability.py \
        LABEL=SWEEP_DIR [LABEL=SWEEP_DIR ...]
        [--target 0.95] [--budget STEPS] [--markdown FILE] [--json FILE] [--figure FILE]

A sweep directory (`keras-simplicial sweep --out`) holds one run directory per agent and seed. A
run *reaches the target* when its best checkpoint wins at least `--target` of the greedy episodes
the sweep evaluated it on (`evaluation_best_greedy.json`, or, in a sweep written before the best
checkpoint's reports were also written where it is the final one, the final checkpoint's report);
with `--budget`, its best checkpoint
within that many steps (`evaluation_within_<budget>_greedy.json`, written by `sweep --budget`).
A run not yet evaluated is left out and named. Per sweep and agent: the runs that reach the
target, of the runs evaluated, with their seeds and the win rates of the others; the figure
draws the counts as bars, one group per sweep.
"""

import argparse
import json
import sys
from pathlib import Path


def evaluation_file(run_dir, budget=None):
    name = f"evaluation_within_{budget}_greedy.json" if budget else "evaluation_best_greedy.json"
    return Path(run_dir) / name


def best_greedy_win_rate(run_dir, budget=None):
    """The greedy win rate the sweep recorded for the run's best checkpoint (within `budget`), or
    None. Sweeps written before `sweep.evaluate_checkpoints` wrote a best checkpoint that is the
    final one under both names have only `evaluation_final_greedy.json` for it."""
    run_dir = Path(run_dir)
    evaluation = evaluation_file(run_dir, budget)
    if evaluation.is_file():
        return json.loads(evaluation.read_text(encoding="utf-8"))["overall"]["win_rate"]
    best, final = run_dir / "checkpoints" / "best.json", run_dir / "evaluation_final_greedy.json"
    if budget is None and best.is_file() and final.is_file():
        report = json.loads(final.read_text(encoding="utf-8"))
        if Path(report["checkpoint"]).name == json.loads(best.read_text())["checkpoint"]:
            return report["overall"]["win_rate"]
    return None


def sweep_runs(sweep_dir, budget=None):
    """[(agent, seed, greedy win rate or None)] of the runs in `sweep_dir`, by agent then seed."""
    runs = []
    for run_file in sorted(Path(sweep_dir).glob("*/run.json")):
        arguments = json.loads(run_file.read_text(encoding="utf-8"))
        win_rate = best_greedy_win_rate(run_file.parent, budget)
        runs.append((arguments["agent"], int(arguments["seed"]), win_rate))
    if not runs:
        raise SystemExit(f"{sweep_dir} holds no run directory (no */run.json)")
    return sorted(runs)


def tally(label, runs, target):
    """Per agent: the runs reaching `target`, of those evaluated."""
    rows = []
    for agent in sorted({agent for agent, _, _ in runs}):
        mine = [(seed, rate) for a, seed, rate in runs if a == agent]
        evaluated = [(seed, rate) for seed, rate in mine if rate is not None]
        rows.append(
            {
                "sweep": label,
                "agent": agent,
                "reached": sum(rate >= target for _, rate in evaluated),
                "evaluated": len(evaluated),
                "seeds_reaching": [seed for seed, rate in evaluated if rate >= target],
                "others": {seed: rate for seed, rate in evaluated if rate < target},
                "not_evaluated": [seed for seed, rate in mine if rate is None],
            }
        )
    return rows


def markdown(rows, target, budget):
    from keras_simplicial.agents.analysis.results import markdown_table

    best = f"best checkpoint within {budget:,} steps" if budget else "best checkpoint"
    header = [
        "sweep",
        "agent",
        f"runs whose {best} wins >= {target:g} greedily",
        "the others",
        "not evaluated yet",
    ]
    table = [
        [
            row["sweep"],
            row["agent"],
            f"**{row['reached']} of {row['evaluated']}**",
            ", ".join(f"seed {seed}: {rate:.3f}" for seed, rate in row["others"].items()) or "-",
            ", ".join(f"seed {seed}" for seed in row["not_evaluated"]) or "-",
        ]
        for row in rows
    ]
    return markdown_table(header, table) + "\n"


def figure(rows, target, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from keras_simplicial.agents.analysis.training_curves import AGENT_COLOURS

    sweeps = list(dict.fromkeys(row["sweep"] for row in rows))
    agents = sorted({row["agent"] for row in rows})
    width = 0.8 / len(agents)
    fig, ax = plt.subplots(figsize=(1.6 + 1.6 * len(sweeps), 3.2))
    labelled = set()
    for offset, agent in enumerate(agents):
        for position, sweep in enumerate(sweeps):
            row = next((r for r in rows if r["sweep"] == sweep and r["agent"] == agent), None)
            if row is None or not row["evaluated"]:
                continue
            x = position + (offset - (len(agents) - 1) / 2) * width
            ax.bar(x, row["evaluated"], width, color="none", edgecolor=AGENT_COLOURS[agent])
            ax.bar(
                x,
                row["reached"],
                width,
                color=AGENT_COLOURS[agent],
                label=None if agent in labelled else f"{agent} (outline: runs evaluated)",
            )
            labelled.add(agent)
            ax.text(
                x,
                row["reached"],
                f"{row['reached']}/{row['evaluated']}",
                ha="center",
                va="bottom",
                fontsize=8,
            )
    ax.set_xticks(range(len(sweeps)), sweeps, fontsize=8)
    ax.set_ylabel(f"runs reaching {target:g} greedily")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def labelled_sweep(text):
    label, separator, sweep_dir = text.partition("=")
    if not separator or not label or not sweep_dir:
        raise argparse.ArgumentTypeError(f"expected LABEL=SWEEP_DIR, got {text!r}")
    if not Path(sweep_dir).is_dir():
        raise argparse.ArgumentTypeError(f"{sweep_dir} is not a directory")
    return label, sweep_dir


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweeps", nargs="+", type=labelled_sweep, help="LABEL=SWEEP_DIR")
    parser.add_argument("--target", type=float, default=0.95, help="greedy win rate to reach")
    parser.add_argument(
        "--budget",
        type=int,
        default=None,
        help="the best checkpoint within this many steps (sweep --budget)",
    )
    parser.add_argument("--markdown", default=None, help="also write the table here")
    parser.add_argument("--json", default=None, help="also write the counts here")
    parser.add_argument("--figure", default=None, help="also draw the counts here (PNG)")
    args = parser.parse_args(argv)
    if not 0 < args.target <= 1:
        parser.error(f"--target must be a win rate in (0, 1], got {args.target}")
    if args.budget is not None and args.budget < 1:
        parser.error(f"--budget must be a positive number of steps, got {args.budget}")
    rows = []
    for label, sweep_dir in args.sweeps:
        rows += tally(label, sweep_runs(sweep_dir, args.budget), args.target)
    from keras_simplicial.agents.analysis.results import save_report

    save_report(markdown(rows, args.target, args.budget), rows, args.markdown, args.json)
    if args.figure:
        figure(rows, args.target, args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
