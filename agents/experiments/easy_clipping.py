"""Does global-norm clipping learn the easy preset as well as per-variable clipping? The rule
written in docs/benchmarks.md ("Global-norm clipping on the easy preset"), applied.

    .venv/bin/python studies/easy-recipe/easy_clipping.py [--sweep benchmarks/runs/stack-parity/old]
        [--markdown FILE]

Reads the old-stack sweep of `studies/stack-parity/stack_parity.py` (its `learning_curve.json`:
global-norm clipping, the default of new runs) and the per-variable acceptance runs from the
acceptance table of docs/benchmarks.md (their run directories were not kept; the table is their
record). Per agent: (a) every seed's best checkpoint of the first 500,000 steps wins >= 0.99 of its
greedy episodes and its final checkpoint >= 0.95; (b) the one-sided exact permutation test of the
steps to a training win rate of 0.99, global slower than per-variable (a seed that never got there
counts as the run's length). An agent learns worse with global-norm clipping when (a) fails or (b)
gives p <= 0.05.
"""

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

from keras_simplicial.agents.experiments.statistics import one_sided_permutation_p_value

# The acceptance table's page, from the repository's root (where the command runs).
BENCHMARKS_PAGE = Path("docs") / "benchmarks.md"
AGENTS = ("relational", "simplicial")
LEVEL = "0.99"
BUDGET = "500000"
BEST_WITHIN_BUDGET = 0.99  # the acceptance's must targets
FINAL = 0.95
ALPHA = 0.05
# A row of the acceptance table: | simplicial-seed1 | 206,080 / 222,720 / 236,160 | ...
ACCEPTANCE_ROW = re.compile(
    r"^\| (relational|simplicial)-seed(\d+) \| ([\d,]+|-) / ([\d,]+|-) / ([\d,]+|-) \|"
)


def per_variable_steps(page=BENCHMARKS_PAGE):
    """{agent: {seed: steps to a training win rate of 0.99 or None}} of the acceptance table."""
    text = Path(page).read_text(encoding="utf-8")
    section = text.split("### Acceptance: both agents, 5 seeds each", 1)[1].split("\n## ", 1)[0]
    steps = {agent: {} for agent in AGENTS}
    for line in section.splitlines():
        match = ACCEPTANCE_ROW.match(line)
        if match:
            agent, seed, level = match.group(1), int(match.group(2)), match.group(5)
            steps[agent][seed] = None if level == "-" else int(level.replace(",", ""))
    if not all(steps.values()):
        raise ValueError(
            f"{page}: no acceptance table rows for {[a for a in AGENTS if not steps[a]]}."
        )
    return steps


def verdict(sweep_report, reference, run_length):
    """Per agent: the seeds' values, (a), (b) and whether global-norm clipping learns worse."""
    results = {}
    for agent in AGENTS:
        runs = sorted(
            (run for run in sweep_report["runs"].values() if run["agent"] == agent),
            key=lambda run: run["seed"],
        )
        if not runs:
            continue
        global_steps = [run["steps_to"][LEVEL] or run_length for run in runs]
        reference_steps = [steps or run_length for steps in reference[agent].values()]
        within = [
            (run.get("budget_evaluations", {}).get(BUDGET) or {}).get("greedy", {}).get("win_rate")
            for run in runs
        ]
        final = [run["evaluations"]["final"]["greedy"]["win_rate"] for run in runs]
        targets_met = all(w is not None and w >= BEST_WITHIN_BUDGET for w in within) and all(
            f >= FINAL for f in final
        )
        p_value, smallest = one_sided_permutation_p_value(global_steps, reference_steps)
        results[agent] = {
            "seeds": [run["seed"] for run in runs],
            "global_steps_to_0.99": global_steps,
            "per_variable_steps_to_0.99": reference_steps,
            "best_within_500000_greedy": within,
            "final_greedy": final,
            "targets_met": targets_met,
            "p_global_slower": p_value,
            "smallest_p": smallest,
            "learns_worse": (not targets_met) or p_value <= ALPHA,
        }
    return results


def markdown(results):
    lines = [
        "| agent | steps to 0.99, global (seeds 1-5) | per-variable | median global / per-variable "
        "| best of 500,000 steps, greedy (min) | final, greedy (min) | (a) targets met "
        "| (b) p, global slower | learns worse |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for agent, r in results.items():
        within = [w for w in r["best_within_500000_greedy"] if w is not None]
        lines.append(
            f"| {agent} | {', '.join(f'{s:,}' for s in r['global_steps_to_0.99'])} "
            f"| {', '.join(f'{s:,}' for s in r['per_variable_steps_to_0.99'])} "
            f"| {statistics.median(r['global_steps_to_0.99']):,.0f} / "
            f"{statistics.median(r['per_variable_steps_to_0.99']):,.0f} "
            f"| {min(within) if within else float('nan'):.3f} | {min(r['final_greedy']):.3f} "
            f"| {'yes' if r['targets_met'] else 'no'} | {r['p_global_slower']:.3f} "
            f"| **{'yes' if r['learns_worse'] else 'no'}** |"
        )
    worse = [agent for agent, r in results.items() if r["learns_worse"]]
    lines.append("")
    lines.append(
        "Decision: the easy preset keeps per-variable clipping (learns worse with global-norm "
        f"clipping: {', '.join(worse)})."
        if worse
        else "Decision: the easy preset clips the global norm (neither agent learns worse)."
    )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", default="benchmarks/runs/stack-parity/old")
    parser.add_argument("--markdown", default=None, help="also write the table here")
    args = parser.parse_args(argv)
    report = json.loads((Path(args.sweep) / "learning_curve.json").read_text())
    results = verdict(report, per_variable_steps(), int(report["options"]["stop_timesteps"]))
    text = markdown(results)
    print(text)
    print(json.dumps(results, indent=1))
    if args.markdown:
        Path(args.markdown).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
