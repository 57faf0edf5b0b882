"""Learning over seeds: agents x seeds trained on a preset, curves and evaluations recorded.

    .venv/bin/python benchmarks/learning_curve.py [--agents relational simplicial]
        [--seeds 1 2 3 4 5] [--stop-timesteps 600000] [--budget 300000 500000]
        [--out benchmarks/runs/learning-easy] [--markdown FILE]

Trains every agent with every seed on `--preset` (default `easy`, what `make train` runs) and
writes under `--out`: one run directory per agent and seed (`<agent>-seed<k>`: metrics.csv,
TensorBoard events, checkpoints), `learning_curves.png` (the win rate while training against
environment steps: mean and standard deviation over seeds per agent, one faint line per seed)
and `learning_curve.json`. For every run: the steps at which the training win rate first reached
0.5, 0.9 and 0.99, and its best and final checkpoints evaluated on `--eval-episodes` fresh
episodes twice, sampling from the policy (as in training) and greedily (the most probable
action: a policy that has not learned where the player is can win by sampling a biased random
walk and lose every greedy episode). With `--budget N [M ...]`, each run first stops at N (then
M) steps and the best checkpoint of those steps is evaluated the same way before the run goes on
(the learning issue's "best checkpoint within N steps, final checkpoint of a run twice as
long"). The reference measured in the same invocation: a uniformly random policy on the same
puzzles.

Nothing is lost between sittings: a run directory that already holds a run is resumed from its
last checkpoint (`train --resume`) or, when it reached `--stop-timesteps`, left as it is, and
evaluations already written are read back. Run the same command again to pick up where it
stopped.
"""

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

LEVELS = (0.5, 0.9, 0.99)
SMOOTHING_EPISODES = 200  # impala_config's metrics_num_episodes_for_smoothing
# A run stops at the first iteration past its step target: at most one iteration's samples
# beyond it (about 10,000 steps on the easy preset).
SAMPLE_GRANULARITY = 20_000


def random_policy_win_rate(env_id, env_config, episodes=2000, seed=0):
    """The reference measured in the same run: uniformly random actions on the same puzzles."""
    import numpy as np

    from keras_simplicial.agents.analysis.evaluation import episode_outcomes

    def uniform(observations):
        return np.zeros((len(observations), 4))

    outcomes = episode_outcomes(uniform, env_id, env_config, episodes, num_envs=64, seed=seed)
    return sum(outcome.won for outcome in outcomes) / len(outcomes)


def summarise(run_dir):
    """Steps to each of `LEVELS`, start and end win rates and frames/s of one run."""
    from keras_simplicial.agents.training.run_directory import RunDirectory

    rows, episodes, previous_time = [], 0, 0.0
    for row in RunDirectory(run_dir).read_metrics():
        if float(row["time_s"]) < previous_time:  # a resumed process: RLlib's window restarts
            episodes = 0
        previous_time = float(row["time_s"])
        episodes += int(row.get("episodes") or 0)
        # The training win rate is a mean over RLlib's last 200 episodes: count it once 200 ended.
        if row.get("win_rate") not in ("", None) and episodes >= SMOOTHING_EPISODES:
            rows.append(row)
    steps = [int(r["timesteps"]) for r in rows]
    wins = [float(r["win_rate"]) for r in rows]
    fps = [float(r["frames_per_s"]) for r in rows if float(r["frames_per_s"] or 0) > 0]

    def first_reaching(level):
        return next((step for step, win in zip(steps, wins) if win >= level), None)

    return {
        "iterations": len(rows),
        "timesteps": steps[-1] if steps else 0,
        "win_rate_start": statistics.mean(wins[:5]) if wins else None,
        "win_rate_end": statistics.mean(wins[-5:]) if wins else None,
        "steps_to": {str(level): first_reaching(level) for level in LEVELS},
        "median_frames_per_s": statistics.median(fps) if fps else None,
    }


def train_or_resume(run_dir, agent, seed, preset, args, stop_timesteps=None):
    """Trains the run in `run_dir` up to `stop_timesteps` (default `--stop-timesteps`),
    resuming what is there."""
    from keras_simplicial.agents.training.impala import preset_overrides
    from keras_simplicial.agents.training.run_directory import RunDirectory
    from keras_simplicial.agents.training.train import train

    stop_timesteps = int(stop_timesteps or args.stop_timesteps)
    run = RunDirectory(run_dir)
    done = summarise(run_dir)["timesteps"] if run.metrics_file.exists() else 0
    if run.run_file.exists() and done >= stop_timesteps:
        return
    resume = run.run_file.exists() and run.latest_checkpoint() is not None
    if run.run_file.exists() and not resume:  # started but never checkpointed: start again
        import shutil

        shutil.rmtree(run_dir)
    summary = train(
        preset["env"],
        agent,
        out=run_dir,
        stop_timesteps=stop_timesteps,
        env_config=preset["env_config"],
        overrides=preset_overrides(preset, args.config),
        model_overrides=args.model_config,
        num_env_runners=args.num_env_runners,
        num_envs_per_env_runner=args.num_envs,
        address=getattr(args, "address", None),
        seed=seed,
        resume=resume,
        checkpoint_every=args.checkpoint_every,
        progress="plain",
        sampler=args.sampler,
    )
    if summary.interrupted:
        # Going on would evaluate "the best within N steps" of a run that never got there.
        raise SystemExit(
            f"Interrupted at {summary.timesteps:,} steps; run the same command to resume."
        )


def checkpoint_key(checkpoint):
    """What a cached result of a run's own checkpoint is keyed by: its name in the run's
    checkpoints folder (`iter_000120`), not its path, so that the caches of a run directory hold
    wherever it is cloned and however `--out` is spelled (relative or absolute)."""
    return Path(str(checkpoint)).name


def evaluate_checkpoints(run_dir, checkpoints, episodes, record_ended_by=()):
    """Win rates of `{name: checkpoint}` (checkpoints of the run in `run_dir`), sampled and
    greedy, cached in `evaluation_<name>_<mode>.json` (re-used while they name the same
    checkpoint, by `checkpoint_key`, and the same number of episodes). `record_ended_by`: the
    modes ("sampled", "greedy") whose cached reports must also say why episodes ended
    (`ended_by`); one written before evaluations recorded it is played again."""
    from keras_simplicial.agents.analysis.evaluation import evaluate_checkpoint
    from keras_simplicial.agents.training.checkpoints import load_policy

    results, done = {}, {}
    for which, checkpoint in checkpoints.items():
        key = checkpoint_key(checkpoint)
        if key in done:
            results[which] = results[done[key]]
            continue
        done[key] = which
        results[which] = {"checkpoint": str(checkpoint)}
        policy = None
        for mode, explore in (("sampled", True), ("greedy", False)):
            path = Path(run_dir) / f"evaluation_{which}_{mode}.json"
            report = json.loads(path.read_text()) if path.exists() else None
            if (
                report is None
                or checkpoint_key(report.get("checkpoint", "")) != key
                or report["overall"]["episodes"] != episodes
                or (mode in record_ended_by and "ended_by" not in report["overall"])
            ):
                policy = policy or load_policy(checkpoint)
                report = evaluate_checkpoint(
                    checkpoint, episodes=episodes, explore=explore, output=path, policy=policy
                )
            results[which][mode] = report["overall"]
    return results


def evaluate_run(run_dir, episodes):
    """Win rates of the run's best and final checkpoints, sampled and greedy (cached)."""
    from keras_simplicial.agents.training.run_directory import RunDirectory

    run = RunDirectory(run_dir)
    final = run.latest_checkpoint()
    best = run.best_checkpoint()
    return evaluate_checkpoints(
        run_dir, {"final": final, "best": best[0] if best else final}, episodes
    )


def evaluate_budget(run_dir, budget, episodes):
    """The best checkpoint of the run's first `budget` steps, sampled and greedy.

    Called when the run has just reached `budget` (before it goes on), so `best.json` names the
    best checkpoint of those steps; the evaluations are kept as
    `evaluation_within_<budget>_<mode>.json` and read back once the run has gone further. A run
    that went past `budget` without stopping there still has an answer when its overall best
    checkpoint was saved within `budget` steps (a later one replaces it only when strictly
    better); otherwise None.
    """
    from keras_simplicial.agents.training.run_directory import RunDirectory

    run = RunDirectory(run_dir)
    steps_at = {int(row["training_iteration"]): int(row["timesteps"]) for row in run.read_metrics()}
    name = f"within_{budget}"
    path = Path(run_dir) / f"evaluation_{name}_greedy.json"
    best = run.best_checkpoint()
    checkpoint = best[0] if best else run.latest_checkpoint()
    if path.exists():
        recorded = json.loads(path.read_text())["checkpoint"]
        checkpoint = run.checkpoints_dir / checkpoint_key(recorded)
    elif checkpoint is None or (
        steps_at.get(iteration_of(checkpoint), budget + 1) > budget
        and summarise(run_dir)["timesteps"] > budget + SAMPLE_GRANULARITY
    ):
        return None
    result = evaluate_checkpoints(run_dir, {name: checkpoint}, episodes)[name]
    return {
        **result,
        "budget": budget,
        "checkpoint_timesteps": steps_at.get(iteration_of(checkpoint)),
    }


def iteration_of(checkpoint):
    """The training iteration of a `checkpoints/iter_NNNNNN` directory."""
    return int(Path(checkpoint).name.rsplit("_", 1)[-1])


def count(value):
    """`1,234` for a number, `-` for a count that a short run could not give."""
    return "-" if value is None else f"{value:,.0f}"


def markdown(report):
    levels = [str(level) for level in LEVELS]
    budgets = report["args"].get("budget") or []
    budget_head = "".join(
        f" best checkpoint of the first {budget:,} steps (its step): sampled, greedy |"
        for budget in budgets
    )
    lines = [
        "| run | steps to "
        + " / ".join(levels)
        + " |"
        + budget_head
        + " best checkpoint: sampled, greedy | final checkpoint: sampled, greedy |"
        " frames/s |",
        "|---|---|" + "---|" * len(budgets) + "---|---|---|",
    ]
    for name, r in report["runs"].items():
        to = " / ".join(
            f"{r['steps_to'][level]:,}" if r["steps_to"][level] else "-" for level in levels
        )
        evaluations = r["evaluations"]
        best = evaluations["best"]
        final = evaluations["final"]
        within = ""
        for budget in budgets:
            b = r["budget_evaluations"].get(str(budget))
            within += (
                f" {b['sampled']['win_rate']:.3f}, **{b['greedy']['win_rate']:.3f}** "
                f"({count(b['checkpoint_timesteps'])}) |"
                if b
                else " - |"
            )
        lines.append(
            f"| {name} | {to} |{within} {best['sampled']['win_rate']:.3f}, "
            f"**{best['greedy']['win_rate']:.3f}** ({Path(best['checkpoint']).name}) | "
            f"{final['sampled']['win_rate']:.3f}, **{final['greedy']['win_rate']:.3f}** | "
            f"{count(r['median_frames_per_s'])} |"
        )
    lines.append("")
    for agent, entry in report["agents"].items():
        lines.append(
            f"- **{agent}** ({entry['seeds']} seeds): best checkpoint greedy win rate "
            f"min {entry['best_greedy_min']:.3f}, mean {entry['best_greedy_mean']:.3f}; "
            f"final greedy min {entry['final_greedy_min']:.3f}, mean "
            f"{entry['final_greedy_mean']:.3f}; seeds whose training win rate reached "
            f"0.99: {entry['reached_0.99']}/{entry['seeds']}"
            + "".join(
                f"; best checkpoint of the first {int(budget):,} steps: greedy win "
                f"rate min {within['min']:.3f}, mean {within['mean']:.3f} over "
                f"{within['runs']} runs"
                for budget, within in entry["within"].items()
            )
        )
    lines.append(f"- uniformly random policy: {report['random_policy_win_rate']:.3f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="easy", choices=("easy", "bridge-small", "paper"))
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["relational", "simplicial"],
        choices=("relational", "simplicial"),
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--stop-timesteps", type=int, default=600_000)
    parser.add_argument(
        "--budget",
        type=int,
        nargs="+",
        default=[],
        help="also stop each run at these step counts and evaluate the best "
        "checkpoint so far (the best 'within N steps'), then go on",
    )
    parser.add_argument("--out", default="benchmarks/runs/learning-easy")
    parser.add_argument(
        "--config",
        type=json.loads,
        default={},
        help="JSON object of IMPALAConfig overrides on top of the preset's",
    )
    parser.add_argument(
        "--model-config", type=json.loads, default={}, help="JSON object of architecture overrides"
    )
    parser.add_argument("--sampler", default="batched", choices=("batched", "rllib"))
    parser.add_argument("--num-env-runners", type=int, default=0)
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--checkpoint-every", type=int, default=5)
    parser.add_argument("--eval-episodes", type=int, default=1000)
    parser.add_argument("--markdown", default=None, help="also write the table here")
    args = parser.parse_args(argv)

    import ray

    from keras_simplicial.agents.analysis.training_curves import plot_training_curves
    from keras_simplicial.agents.training.impala import PRESETS

    preset = PRESETS[args.preset]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = {}
    for agent in args.agents:
        for seed in args.seeds:
            run_dir = out / f"{agent}-seed{seed}"
            within = {}
            for budget in sorted(b for b in args.budget if b < args.stop_timesteps):
                train_or_resume(run_dir, agent, seed, preset, args, stop_timesteps=budget)
                ray.shutdown()
                within[str(budget)] = evaluate_budget(run_dir, budget, args.eval_episodes)
            train_or_resume(run_dir, agent, seed, preset, args)
            ray.shutdown()
            runs[run_dir.name] = {
                **summarise(run_dir),
                "agent": agent,
                "seed": seed,
                "run_dir": str(run_dir),
                "budget_evaluations": within,
                "evaluations": evaluate_run(run_dir, args.eval_episodes),
            }
            print(f"{run_dir.name}: {json.dumps(runs[run_dir.name]['steps_to'])}", flush=True)
    plot_training_curves(
        [r["run_dir"] for r in runs.values()], out / "learning_curves.png", seed_lines=True
    )
    agents = {}
    for agent in args.agents:
        mine = [r for r in runs.values() if r["agent"] == agent]
        best = [r["evaluations"]["best"]["greedy"]["win_rate"] for r in mine]
        final = [r["evaluations"]["final"]["greedy"]["win_rate"] for r in mine]
        within = {}
        for budget in args.budget:
            wins = [
                r["budget_evaluations"][str(budget)]["greedy"]["win_rate"]
                for r in mine
                if r["budget_evaluations"].get(str(budget))
            ]
            if wins:
                within[str(budget)] = {
                    "min": min(wins),
                    "mean": statistics.mean(wins),
                    "runs": len(wins),
                }
        agents[agent] = {
            "seeds": len(mine),
            "best_greedy_min": min(best),
            "within": within,
            "best_greedy_mean": statistics.mean(best),
            "final_greedy_min": min(final),
            "final_greedy_mean": statistics.mean(final),
            "reached_0.99": sum(r["steps_to"]["0.99"] is not None for r in mine),
        }
    report = {
        "preset": preset,
        "args": vars(args),
        "runs": runs,
        "agents": agents,
        "random_policy_win_rate": random_policy_win_rate(preset["env"], preset["env_config"]),
    }
    (out / "learning_curve.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    print("\n" + text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    print(f"\nWrote {out / 'learning_curves.png'} and {out / 'learning_curve.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
