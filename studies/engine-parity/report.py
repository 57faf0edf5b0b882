"""The engine-parity study's results, from its committed run folders: the pre-registered verdict.

    .venv/bin/python studies/engine-parity/report.py

Reads the Keras engine's finished runs (`results/keras/<agent>-seed<k>`, written by `run.sh`) and
the reference, the old stack's runs of the stack-parity re-run
(`benchmarks/results/stack-parity-rerun/old`), from their files alone (run.json, metrics.csv,
the cached evaluations: no training, no checkpoints: `runs_from_files`), applies the rule of
`preregistration.md` (`parity_verdict`, the stack-parity rule with the Keras engine as the
candidate) and writes `results/verdict.json`, `figures/learning_curves.png` (both engines' curves
on one axis, every seed) and the generated part of `README.md` (between its two markers). Until
seeds 1-5 of both agents are in, the verdict is "interim" and names the seeds each lacks.

Addendum 2 of the pre-registration (the relational agent on seeds 6-15, both engines, trained by
`run-relational-seeds.sh` into `results/relational-seeds/<engine>`) is read here too: its table,
its two tests over seeds 1-15 and its reading go on the page and into
`results/relational-seeds.json` once a seed of it has finished on both engines. So is the
bridge-small addendum (`run-bridge-small.sh` into `results/bridge-small`, against stage E's runs in
`benchmarks/results/bridge-small-every-run/stage-e`): its table and its flag per agent.
"""

import argparse
import statistics
import sys
from pathlib import Path

from keras_simplicial.agents.atomic_files import atomic_write_json, atomic_write_text
from keras_simplicial.agents.experiments.stack_parity import (
    AGENTS,
    BUDGET,
    LEVEL,
    parity_verdict,
    runs_from_files,
)
from keras_simplicial.agents.experiments.statistics import (
    SIGNIFICANCE_LEVEL,
    fisher_exact_one_sided,
    sampled_one_sided_permutation_p_value,
)

STUDY = Path(__file__).resolve().parent
ROOT = STUDY.parents[1]
CANDIDATE = STUDY / "results" / "keras"
REFERENCE = ROOT / "benchmarks" / "results" / "stack-parity-rerun" / "old"
RUN_LENGTH = 600_000  # the pre-registration's run length: a seed that never reaches 0.99 counts so
MORE_SEEDS = STUDY / "results" / "relational-seeds"  # addendum 2: <engine>/relational-seed<k>
MORE_SEEDS_PLANNED = tuple(range(6, 16))
RESAMPLES = 200_000  # addendum 2's random relabellings (seed 0)
BRIDGE_SMALL = STUDY / "results" / "bridge-small"  # the bridge-small addendum's runs
STAGE_E = ROOT / "benchmarks" / "results" / "bridge-small-every-run" / "stage-e"
BRIDGE_SMALL_SEEDS = (1, 2)
SUCCESS = 0.95  # stage E's endpoint: the best checkpoint wins this share of 1,000 greedy episodes
# The flag's part (i): more failures than the reference makes likely (8 of 8 simplicial runs
# succeeded there, 6 of 8 relational): any simplicial failure, both relational runs failing.
FAILURES_ALLOWED = {"simplicial": 0, "relational": 1}
NAMES = ("the old stack", "the Keras engine")
BEGIN = "<!-- report.py writes from here -->"
END = "<!-- report.py writes up to here -->"


def steps(value):
    return f"{value:,}" if value is not None else "never"


def run_table(runs):
    """One row per run of the Keras engine: the endpoint and every pre-registered evaluation."""
    lines = [
        f"| run | steps to a training win rate of {LEVEL} | best within {int(BUDGET):,} steps, "
        "greedy | final, greedy | best, greedy / sampled | final, sampled |",
        "|---|---|---|---|---|---|",
    ]
    for run in sorted(runs.values(), key=lambda run: (run["agent"], run["seed"])):
        within = run["budget_evaluations"].get(BUDGET)
        best, final = run["evaluations"]["best"], run["evaluations"]["final"]
        within = f"{within['greedy']['win_rate']:.3f}" if within else "-"
        lines.append(
            f"| {run['agent']} seed {run['seed']} | {steps(run['steps_to'][LEVEL])} | {within} "
            f"| {final['greedy']['win_rate']:.3f} "
            f"| {best['greedy']['win_rate']:.3f} / {best['sampled']['win_rate']:.3f} "
            f"| {final['sampled']['win_rate']:.3f} |"
        )
    return lines


def verdict_table(results):
    """The rule's inputs and its verdict, a row per agent."""
    lines = [
        f"| agent | steps to {LEVEL}, old stack (seeds 1-5) | Keras engine | median old / Keras "
        f"| (a) every best within {int(BUDGET):,} and final >= {LEVEL} | (b) p, Keras later "
        "| p, Keras earlier | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for agent, r in results.items():
        old, new = r["steps_to_0.99"]["old"], r["steps_to_0.99"]["new"]
        lines.append(
            f"| {agent} | {', '.join(f'{s:,}' for s in old)} | {', '.join(f'{s:,}' for s in new)} "
            f"| {statistics.median(old):,.0f} / {statistics.median(new):,.0f} "
            f"| {'yes' if r['targets_met'] else 'no'} | {r['p_new_later']:.3f} "
            f"| {r['p_new_earlier']:.3f} | **{r['verdict']}** |"
        )
    return lines


def relational_seeds(reference_runs, candidate_runs, more_seeds):
    """Addendum 2's reading: the relational agent's runs of both engines on seeds 1-15 (1-5 from
    the main study, 6-15 from `more_seeds`), the stalls and steps to 0.99 of each, and the two
    pre-registered tests. None before a seed of the addendum has finished on both engines."""
    engines = {
        "old": {
            **reference_runs,
            **runs_from_files(Path(more_seeds) / "rllib-old", ("relational",)),
        },
        "keras": {**candidate_runs, **runs_from_files(Path(more_seeds) / "keras", ("relational",))},
    }
    by_seed = {
        name: {run["seed"]: run for run in runs.values() if run["agent"] == "relational"}
        for name, runs in engines.items()
    }
    added = sorted(set(by_seed["old"]) & set(by_seed["keras"]) & set(MORE_SEEDS_PLANNED))
    if not added:
        return None
    seeds = sorted(set(by_seed["old"]) & set(by_seed["keras"]))
    steps = {name: [by_seed[name][seed]["steps_to"][LEVEL] for seed in seeds] for name in engines}
    counted = {name: [RUN_LENGTH if s is None else s for s in steps[name]] for name in engines}
    stalls = {name: sum(s is None for s in steps[name]) for name in engines}
    p_later, error = sampled_one_sided_permutation_p_value(
        counted["keras"], counted["old"], resamples=RESAMPLES, seed=0
    )
    p_stalls = fisher_exact_one_sided(stalls["keras"], len(seeds), stalls["old"], len(seeds))
    missing = [seed for seed in MORE_SEEDS_PLANNED if seed not in added]
    if missing:
        reading = "interim: no reading until every seed of 6-15 has finished on both engines"
    elif min(p_later, p_stalls) < SIGNIFICANCE_LEVEL:
        reading = "the Keras engine learns the easy preset worse than the old stack (relational)"
    else:
        reading = "no evidence that the Keras engine learns worse (relational, 15 + 15 runs)"
    return {
        "seeds": seeds,
        "missing_seeds": missing,
        "steps_to_0.99": steps,
        "stalls": stalls,
        "median_steps_to_0.99": {name: statistics.median(counted[name]) for name in engines},
        "p_keras_stalls_more": p_stalls,
        "p_keras_later": p_later,
        "p_keras_later_standard_error": error,
        "resamples": RESAMPLES,
        "reading": reading,
        "runs": {
            name: {
                str(seed): {
                    "steps_to_0.99": by_seed[name][seed]["steps_to"][LEVEL],
                    "best_within_500000_greedy": (
                        by_seed[name][seed]["budget_evaluations"].get(BUDGET) or {}
                    )
                    .get("greedy", {})
                    .get("win_rate"),
                    "final_greedy": by_seed[name][seed]["evaluations"]["final"]["greedy"][
                        "win_rate"
                    ],
                }
                for seed in seeds
            }
            for name in engines
        },
    }


def relational_seeds_lines(result):
    """The page's section for addendum 2."""
    status = "interim" if result["missing_seeds"] else "final"
    lines = [
        f"## Addendum 2: the relational agent on seeds 1-15, both engines ({status})",
        "",
        f"Seeds 6-15 as the pre-registration's addendum 2 says; seeds 1-5 are the runs above. "
        f"{len(result['seeds'])} seeds have finished on both engines"
        + (
            f"; still to run: {', '.join(str(s) for s in result['missing_seeds'])}."
            if result["missing_seeds"]
            else "."
        ),
        "",
        f"| seed | old stack: steps to {LEVEL} | best within {int(BUDGET):,}, greedy | final, "
        f"greedy | Keras engine: steps to {LEVEL} | best within {int(BUDGET):,}, greedy | "
        "final, greedy |",
        "|---|---|---|---|---|---|---|",
    ]

    def rate(value):
        return f"{value:.3f}" if value is not None else "-"

    for seed in result["seeds"]:
        old, new = result["runs"]["old"][str(seed)], result["runs"]["keras"][str(seed)]
        lines.append(
            f"| {seed} | {steps(old['steps_to_0.99'])} | {rate(old['best_within_500000_greedy'])} "
            f"| {rate(old['final_greedy'])} | {steps(new['steps_to_0.99'])} "
            f"| {rate(new['best_within_500000_greedy'])} | {rate(new['final_greedy'])} |"
        )
    n, median = len(result["seeds"]), result["median_steps_to_0.99"]
    lines += [
        "",
        f"- Stalled (never {LEVEL} within {RUN_LENGTH:,} steps): the old stack "
        f"{result['stalls']['old']} of {n}, the Keras engine {result['stalls']['keras']} of {n}; "
        f"Fisher's exact test, one-sided (the Keras engine stalls more): p = "
        f"{result['p_keras_stalls_more']:.3f}.",
        f"- Steps to {LEVEL} (a stall counts as {RUN_LENGTH:,}): median "
        f"{median['old']:,.0f} on the old stack, "
        f"{median['keras']:,.0f} on the Keras engine; the one-sided permutation "
        f"test (the Keras engine later), from {result['resamples']:,} random relabellings: "
        f"p = {result['p_keras_later']:.3f} (standard error "
        f"{result['p_keras_later_standard_error']:.4f}).",
        f"- Reading (fixed before the runs): **{result['reading']}**.",
        "",
    ]
    return lines


def later(steps_a, steps_b):
    """Whether steps to a level `steps_a` come later than `steps_b` (None: never reached)."""
    if steps_a is None:
        return steps_b is not None
    return steps_b is not None and steps_a > steps_b


def bridge_small(candidate_dir, reference_dir):
    """The bridge-small addendum's check per agent: each run of the Keras engine, stage E's
    summary and the flag (preregistration.md, addendum); None before a run has finished."""
    candidate, reference = runs_from_files(candidate_dir), runs_from_files(reference_dir)
    if not candidate:
        return None
    agents = {}
    for agent in AGENTS:
        mine = sorted(
            (run for run in candidate.values() if run["agent"] == agent), key=lambda r: r["seed"]
        )
        theirs = [run for run in reference.values() if run["agent"] == agent]
        succeeded = [run["evaluations"]["best"]["greedy"]["win_rate"] >= SUCCESS for run in mine]
        if len(mine) < len(BRIDGE_SMALL_SEEDS):
            flag = None
        else:
            failures = succeeded.count(False) > FAILURES_ALLOWED[agent]
            slower = all(
                later(run["steps_to"][LEVEL], other["steps_to"][LEVEL])
                for run in mine
                for other in theirs
            )
            flag = {"too_many_failures": failures, "later_than_every_reference_run": slower}
        agents[agent] = {"runs": mine, "succeeded": succeeded, "reference": theirs, "flag": flag}
    return agents


def bridge_small_lines(result):
    """The page's section for the bridge-small addendum."""
    done = sum(len(a["runs"]) for a in result.values())
    planned = len(AGENTS) * len(BRIDGE_SMALL_SEEDS)
    lines = [
        f"## Bridge-small (addendum): {done} of {planned} runs",
        "",
        "The check pre-registered in the addendum of `preregistration.md` (2 seeds per agent "
        "with stage E's recipe: random start, `--mask-blocked-moves`, 3M steps; against stage "
        "E's 8 + 8 old-stack runs; `run-bridge-small.sh`). A run succeeds when its best "
        f"checkpoint wins at least {SUCCESS} of 1,000 fresh greedy episodes (stage E's "
        "endpoint).",
        "",
        f"| run | steps to a training win rate of {LEVEL} | best checkpoint, greedy / sampled "
        f"| final, greedy / sampled | succeeded (>= {SUCCESS} greedily) |",
        "|---|---|---|---|---|",
    ]

    def pair(evaluation):
        return f"{evaluation['greedy']['win_rate']:.3f} / {evaluation['sampled']['win_rate']:.3f}"

    for agent, r in result.items():
        for run, ok in zip(r["runs"], r["succeeded"]):
            lines.append(
                f"| Keras engine, {agent} seed {run['seed']} | {steps(run['steps_to'][LEVEL])} "
                f"| {pair(run['evaluations']['best'])} | {pair(run['evaluations']['final'])} "
                f"| {'yes' if ok else 'no'} |"
            )
    for agent, r in result.items():
        reached = sorted(s for s in (x["steps_to"][LEVEL] for x in r["reference"]) if s)
        never = len(r["reference"]) - len(reached)
        best = [x["evaluations"]["best"]["greedy"]["win_rate"] for x in r["reference"]]
        wins = sum(b >= SUCCESS for b in best)
        span = f"{reached[0]:,}-{reached[-1]:,}" if reached else "never"
        lines.append(
            f"| stage E (old stack), {agent}, {len(r['reference'])} runs | {span}"
            + (f" ({never} never)" if never and reached else "")
            + f" | {min(best):.3f}-{max(best):.3f} | | {wins} of {len(r['reference'])} |"
        )
    lines.append("")
    for agent, r in result.items():
        flag = r["flag"]
        if flag is None:
            missing = [s for s in BRIDGE_SMALL_SEEDS if s not in {x["seed"] for x in r["runs"]}]
            text = f"no reading yet: seed {', '.join(map(str, missing))} still to run"
        elif flag["too_many_failures"] or flag["later_than_every_reference_run"]:
            why = [
                *(["more failures than stage E makes likely"] if flag["too_many_failures"] else []),
                *(
                    ["both runs later to 0.99 than every stage E run"]
                    if flag["later_than_every_reference_run"]
                    else []
                ),
            ]
            text = f"**flag: the Keras engine learns bridge-small worse** ({'; '.join(why)})"
        else:
            text = (
                "**no flag** (no claim of equality: 2 runs; neither too many failures nor both "
                "runs later to 0.99 than every stage E run)"
            )
        lines.append(f"- {agent}: {text}.")
    lines.append("")
    return lines


def render(candidate_runs, results, figure_link, more_seeds=None, bridge=None):
    complete = all(r["complete"] for r in results.values()) and len(results) == len(AGENTS)
    status = "final" if complete else "interim"
    count = len(candidate_runs)
    lines = [
        BEGIN,
        "",
        f"## Results ({status}: {count} of {2 * 5} runs; generated by `report.py`)",
        "",
        "Each run of the Keras engine, its best and final checkpoints evaluated as the "
        "pre-registration says (1,000 fresh episodes each way):",
        "",
        *run_table(candidate_runs),
        "",
        "The rule (a seed that never reaches the level counts as "
        f"{RUN_LENGTH:,} steps; p from the one-sided exact permutation test on the 5 + 5 runs):",
        "",
        *verdict_table(results),
        "",
        f"![Training win rate against steps, both engines, every seed]({figure_link})",
        "",
        *(relational_seeds_lines(more_seeds) if more_seeds else []),
        *(bridge_small_lines(bridge) if bridge else []),
        END,
    ]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", default=str(CANDIDATE), help="the Keras engine's sweep")
    parser.add_argument("--reference", default=str(REFERENCE), help="the old stack's sweep")
    parser.add_argument("--page", default=str(STUDY / "README.md"))
    parser.add_argument("--figure", default=str(STUDY / "figures" / "learning_curves.png"))
    parser.add_argument("--verdict", default=str(STUDY / "results" / "verdict.json"))
    parser.add_argument("--more-seeds", default=str(MORE_SEEDS), help="addendum 2's sweeps")
    parser.add_argument("--bridge-small", default=str(BRIDGE_SMALL), help="the addendum's sweep")
    args = parser.parse_args(argv)

    reference = {"runs": runs_from_files(args.reference)}
    candidate = {"runs": runs_from_files(args.candidate)}
    if not candidate["runs"]:
        parser.error(f"--candidate {args.candidate} holds no finished run (run.sh trains them).")
    results = parity_verdict(reference, candidate, RUN_LENGTH, names=NAMES)
    atomic_write_json(args.verdict, results, indent=1)
    more_seeds = relational_seeds(reference["runs"], candidate["runs"], args.more_seeds)
    if more_seeds is not None:
        atomic_write_json(Path(args.more_seeds).with_suffix(".json"), more_seeds, indent=1)
    bridge = bridge_small(args.bridge_small, STAGE_E)

    from keras_simplicial.agents.analysis.training_curves import plot_training_curves

    runs = [*reference["runs"].values(), *candidate["runs"].values()]
    groups = [
        f"{run['agent']}, {name}"
        for name, report in zip(NAMES, (reference, candidate))
        for run in report["runs"].values()
    ]
    Path(args.figure).parent.mkdir(parents=True, exist_ok=True)
    plot_training_curves(
        [run["run_dir"] for run in runs], args.figure, seed_lines=True, groups=groups
    )

    page = Path(args.page)
    text = page.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        parser.error(f"--page {page} must hold the markers {BEGIN!r} and {END!r} once each.")
    figure_link = Path(args.figure).resolve().relative_to(page.resolve().parent).as_posix()
    head, rest = text.split(BEGIN)
    tail = rest.split(END)[1]
    atomic_write_text(
        page, head + render(candidate["runs"], results, figure_link, more_seeds, bridge) + tail
    )
    for agent, result in results.items():
        print(f"{agent}: {result['verdict']}")
    if more_seeds is not None:
        print(f"relational, seeds 1-15: {more_seeds['reading']}")
    print(f"wrote {args.verdict}, {args.figure} and {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
