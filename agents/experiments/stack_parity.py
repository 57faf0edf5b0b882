"""Learning and throughput on RLlib's two API stacks, same agents, preset and seeds.

    .venv/bin/python studies/stack-parity/stack_parity.py [--seeds 1 2 3 4 5] \
        [--stop-timesteps 600000]
        [--budget 100000 200000 300000 400000 500000] [--out benchmarks/runs/stack-parity]

Runs `keras-simplicial sweep` on the `easy` preset per stack (`--api-stack old`, then
`--api-stack new`), both agents x `--seeds`, seed by seed, into `<out>/old` and `<out>/new`: each
in its own process, since Keras chooses its backend (TensorFlow for the old stack, PyTorch for
the new) once per process. The sweeps are resumable and cache their evaluations, so running the
same command again continues where it stopped (`--stacks new` sweeps one stack; the table still
shows every stack swept into `--out`). Then prints, per stack and agent, side by side: the steps at
which the training win rate first reached 0.99 (mean over the seeds that got there, and how
many), the first budget at which the best checkpoint so far won 0.99 of its greedy episodes (every
seed; "-" where one never did), the greedy win rates of the best and the final checkpoints (mean
and minimum over seeds), and the median frames/s (a fair comparison only where both stacks ran on
one machine, as each run's machines.json records, with nothing else running); and writes the
table to `<out>/stack_parity.md` and both stacks' curves on one axis to
`<out>/stack_parity.png`. With both stacks swept, it applies the rule written before the re-run
(`parity_verdict`, docs/benchmarks.md): the verdict per agent goes under the table and into
`<out>/stack_parity_verdict.json`, "interim" until seeds 1-5 are in on both stacks. `--seeds 2`
trains seed 2 only; the table and the verdict take in every seed already trained into `--out`.

Hours on 2 cores at the defaults (2 stacks x 2 agents x 5 seeds x 600,000 steps);
`--seeds 1 --stop-timesteps 4000 --budget 2000 --eval-episodes 8` is a smoke run.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

STACKS = ("old", "new")
# The recipe of both stacks' runs: the preset's, with the paper's clipping of the gradient's global
# norm whatever the preset's own (the easy preset clips each variable's: docs/benchmarks.md).
PARITY_CONFIG = {"_tf_policy_handles_more_than_one_loss": False}
# The model both stacks' runs trained: the presets' before the front end became their model.
PARITY_MODEL = "pre-front-end"
AGENTS = ("relational", "simplicial")
LEVEL = "0.99"
BUDGET = "500000"  # the rule's "best checkpoint within 500,000 steps"
ALPHA = 0.05
RULE_SEEDS = (1, 2, 3, 4, 5)  # the rule decides on these, on both stacks, whatever `--seeds` trains


def finished_seeds(stack_dir, agents):
    """Seeds whose runs of every agent in `stack_dir` have finished (their final checkpoint
    evaluated, `evaluate_run`), in this sitting or an earlier one."""
    from keras_simplicial.agents.experiments.sweep import sweep_run_dir

    suffixes = {
        path.name.rsplit("-seed", 1)[1] for path in Path(stack_dir).glob(f"{agents[0]}-seed*")
    }
    seeds = {int(suffix) for suffix in suffixes if suffix.isdigit()}
    return {
        seed
        for seed in seeds
        if all(
            (sweep_run_dir(stack_dir, agent, seed) / "evaluation_final_greedy.json").exists()
            for agent in agents
        )
    }


def sweep_command(stack, args, seeds=None):
    """The `keras-simplicial sweep` of one stack over `seeds` (default: all of `--seeds`); the
    command line sets its Keras backend."""
    return [
        sys.executable,
        "-m",
        "keras_simplicial_cli",
        "sweep",
        "--preset",
        "easy",
        "--api-stack",
        stack,
        "--agents",
        *args.agents,
        "--seeds",
        *(str(seed) for seed in (seeds or args.seeds)),
        "--stop-timesteps",
        str(args.stop_timesteps),
        "--eval-episodes",
        str(args.eval_episodes),
        "--config",
        json.dumps(PARITY_CONFIG),
        "--model-config",
        PARITY_MODEL,
        "--out",
        str(Path(args.out) / stack),
        *(["--budget", *(str(b) for b in args.budget)] if args.budget else []),
    ]


def runs_from_files(sweep_dir, agents=AGENTS):
    """The `runs` of a sweep's `learning_curve.json`, read back from its finished run folders
    alone (run.json, metrics.csv and the cached `evaluation_*_greedy/sampled.json`), without
    Keras, Ray or checkpoints: what a study committed without its checkpoints still says.
    A run counts once its final checkpoint is evaluated (`evaluate_run`)."""
    from keras_simplicial.agents.experiments.learning import run_summary
    from keras_simplicial.agents.experiments.sweep import sweep_run_dir

    def overall(run_dir, which):
        if which == "best" and not (run_dir / "evaluation_best_greedy.json").exists():
            which = "final"  # written once where the best checkpoint is the final one (older runs)
        return {
            mode: json.loads((run_dir / f"evaluation_{which}_{mode}.json").read_text())["overall"]
            for mode in ("sampled", "greedy")
        }

    runs = {}
    for agent in agents:
        for seed in sorted(finished_seeds(sweep_dir, (agent,))):
            run_dir = sweep_run_dir(sweep_dir, agent, seed)
            budgets = sorted(
                int(path.name.split("_")[2])
                for path in run_dir.glob("evaluation_within_*_greedy.json")
            )
            runs[run_dir.name] = {
                **run_summary(run_dir),
                "agent": agent,
                "seed": seed,
                "run_dir": str(run_dir),
                "budget_evaluations": {
                    str(budget): overall(run_dir, f"within_{budget}") for budget in budgets
                },
                "evaluations": {which: overall(run_dir, which) for which in ("best", "final")},
            }
    return runs


def mean_and_min(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{statistics.mean(values):.3f} (min {min(values):.3f})"


def first_greedy_budget(run, level=float(LEVEL)):
    """The first budget whose best checkpoint won `level` of its greedy episodes, or None."""
    for budget, evaluation in sorted(
        run.get("budget_evaluations", {}).items(), key=lambda item: int(item[0])
    ):
        if evaluation and evaluation["greedy"]["win_rate"] >= level:
            return int(budget)
    return None


def stack_rows(report, stack):
    """One table row per agent of a sweep's `learning_curve.json`."""
    rows = []
    for agent in report["agents"]:
        runs = [run for run in report["runs"].values() if run["agent"] == agent]
        reached = [run["steps_to"][LEVEL] for run in runs if run["steps_to"][LEVEL] is not None]
        greedy = [first_greedy_budget(run) for run in runs]
        rates = [run["median_frames_per_s"] for run in runs if run["median_frames_per_s"]]
        rows.append(
            [
                stack,
                agent,
                f"{statistics.mean(reached):,.0f} ({len(reached)}/{len(runs)})" if reached else "-",
                f"{max(greedy):,}" if greedy and None not in greedy else "-",
                mean_and_min([run["evaluations"]["best"]["greedy"]["win_rate"] for run in runs]),
                mean_and_min([run["evaluations"]["final"]["greedy"]["win_rate"] for run in runs]),
                f"{statistics.median(rates):,.0f}" if rates else "-",
            ]
        )
    return rows


def parity_verdict(old_report, new_report, run_length, seeds=RULE_SEEDS, names=("old", "new")):
    """The re-run's rule (docs/benchmarks.md, "The re-run: the rule, written before its runs"),
    per agent with runs on both stacks. The rule decides on every seed of `seeds` on both stacks;
    until they are all in, the verdict is "interim" (the figures so far, no decision).
    (a) every new-stack seed's best checkpoint of the first `BUDGET` steps and its final
    checkpoint win >= `LEVEL` of their greedy episodes; (b) the one-sided exact permutation test
    of the steps to a training win rate of `LEVEL` (a run that never got there counts as
    `run_length`), new later than old, and new earlier than old.
    The new stack learns as well when (a) holds and (b) does not find it later, better when (a)
    holds and (b) finds it earlier (p < `ALPHA` each way). `names`: what the verdict calls the
    reference and the candidate ("old", "new": RLlib's two stacks)."""
    from keras_simplicial.agents.experiments.statistics import one_sided_permutation_p_value

    def runs_of(report, agent):
        return sorted(
            (run for run in report["runs"].values() if run["agent"] == agent),
            key=lambda run: run["seed"],
        )

    results = {}
    for agent in AGENTS:
        old, new = runs_of(old_report, agent), runs_of(new_report, agent)
        if not old or not new:
            continue
        old_steps = [run["steps_to"][LEVEL] or run_length for run in old]
        new_steps = [run["steps_to"][LEVEL] or run_length for run in new]
        within = [
            (run.get("budget_evaluations", {}).get(BUDGET) or {}).get("greedy", {}).get("win_rate")
            for run in new
        ]
        final = [run["evaluations"]["final"]["greedy"]["win_rate"] for run in new]
        targets_met = all(rate is not None and rate >= float(LEVEL) for rate in within + final)
        p_later, smallest = one_sided_permutation_p_value(new_steps, old_steps)
        p_earlier, _ = one_sided_permutation_p_value(old_steps, new_steps)
        missing = {
            stack: sorted(set(seeds) - {run["seed"] for run in runs})
            for stack, runs in (("old", old), ("new", new))
        }
        if missing["old"] or missing["new"]:
            label = {
                stack: f"{name} stack" if name in STACKS else name
                for stack, name in zip(("old", "new"), names)
            }
            verdict = "interim: " + "; ".join(
                f"{label[stack]} lacks seeds {', '.join(map(str, left))}"
                for stack, left in missing.items()
                if left
            )
        elif targets_met and p_earlier < ALPHA:
            verdict = f"{names[1]} learns better"
        elif targets_met and not p_later < ALPHA:
            verdict = f"{names[1]} learns as well"
        else:
            verdict = f"{names[0]} learns better"
        results[agent] = {
            "seeds": {"old": [run["seed"] for run in old], "new": [run["seed"] for run in new]},
            "steps_to_0.99": {"old": old_steps, "new": new_steps},
            "new_best_within_500000_greedy": within,
            "new_final_greedy": final,
            "complete": not (missing["old"] or missing["new"]),
            "targets_met": targets_met,
            "p_new_later": p_later,
            "p_new_earlier": p_earlier,
            "smallest_p": smallest,
            "verdict": verdict,
        }
    return results


def verdict_table(results):
    """`parity_verdict` as Markdown, a row per agent."""
    lines = [
        f"| agent | steps to {LEVEL}, old stack | new stack | median old / new "
        "| new: best of 500,000 steps, greedy (min) | new: final, greedy (min) | (a) met "
        "| (b) p, new later | p, new earlier | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for agent, r in results.items():
        old, new = r["steps_to_0.99"]["old"], r["steps_to_0.99"]["new"]
        within = [rate for rate in r["new_best_within_500000_greedy"] if rate is not None]
        lines.append(
            f"| {agent} | {', '.join(f'{s:,}' for s in old)} | {', '.join(f'{s:,}' for s in new)} "
            f"| {statistics.median(old):,.0f} / {statistics.median(new):,.0f} "
            f"| {f'{min(within):.3f}' if within else '-'} | {min(r['new_final_greedy']):.3f} "
            f"| {'yes' if r['targets_met'] else 'no'} | {r['p_new_later']:.3f} "
            f"| {r['p_new_earlier']:.3f} | **{r['verdict']}** |"
        )
    return "\n".join(lines) + "\n"


def table(rows):
    header = [
        "stack",
        "agent",
        f"steps to training win rate {LEVEL} (seeds)",
        f"budget by which every seed's best greedy >= {LEVEL}",
        "best checkpoint, greedy",
        "final checkpoint, greedy",
        "frames/s (median)",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", nargs="+", default=list(AGENTS), choices=AGENTS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--stop-timesteps", type=int, default=600_000)
    parser.add_argument(
        "--budget", type=int, nargs="*", default=[100_000, 200_000, 300_000, 400_000, 500_000]
    )
    parser.add_argument("--eval-episodes", type=int, default=1000)
    parser.add_argument("--stacks", nargs="+", default=list(STACKS), choices=STACKS)
    parser.add_argument("--out", default="benchmarks/runs/stack-parity")
    args = parser.parse_args(argv)

    for stack in args.stacks:
        # Seed by seed, both agents each, so that a sweep stopped part-way (the end of a
        # sitting) has as many runs of one agent as of the other; then once over every seed
        # trained into `out`, in this sitting or an earlier one (cached: no training), for the
        # stack's learning_curve.json.
        for seed in args.seeds:
            print(f"== sweep on the {stack} API stack, seed {seed} ==", flush=True)
            subprocess.run(sweep_command(stack, args, [seed]), check=True)
        every_seed = sorted(set(args.seeds) | finished_seeds(Path(args.out) / stack, args.agents))
        subprocess.run(sweep_command(stack, args, every_seed), check=True)

    from keras_simplicial.agents.analysis.training_curves import plot_training_curves

    rows, run_dirs, groups, reports = [], [], [], {}
    for stack in STACKS:  # every stack swept into `out`, now or in an earlier sitting
        path = Path(args.out) / stack / "learning_curve.json"
        if stack not in args.stacks and not path.exists():
            continue
        report = reports[stack] = json.loads(path.read_text())
        rows += stack_rows(report, stack)
        for run in report["runs"].values():
            run_dirs.append(run["run_dir"])
            groups.append(f"{run['agent']}, {stack} stack")
    markdown = table(rows)
    if len(reports) == len(STACKS):
        results = parity_verdict(reports["old"], reports["new"], args.stop_timesteps)
        markdown += "\n" + verdict_table(results)
        (Path(args.out) / "stack_parity_verdict.json").write_text(
            json.dumps(results, indent=1), encoding="utf-8"
        )
    print("\n" + markdown)
    (Path(args.out) / "stack_parity.md").write_text(markdown, encoding="utf-8")
    figure = Path(args.out) / "stack_parity.png"
    plot_training_curves(run_dirs, figure, seed_lines=True, groups=groups)
    print(f"Wrote {Path(args.out) / 'stack_parity.md'} and {figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
