"""Learning over seeds: agents x seeds trained on a preset, curves and evaluations recorded
(`keras-simplicial sweep`).

    options = SweepOptions(preset="easy", seeds=(1, 2, 3), stop_timesteps=600_000)
    options = SweepOptions(arguments=RunArguments.from_preset("easy", sampler="rllib"))
    report = learning_sweep(options)          # trains, evaluates, writes OUT/learning_curve.json
    print(report.to_markdown())

Every agent is trained with every seed on the preset, one run at a time, in
`<out>/<agent>-seed<k>` (`sweep_run_dir`). Written under `out`: `learning_curves.png` (the win
rate while training against environment steps: mean and standard deviation over seeds per agent,
one faint line per seed) and `learning_curve.json`. For every run: the steps at which the training
win rate (`TrainingCurve`) first reached `LEVELS`, and its best and final checkpoints evaluated on
`eval_episodes` fresh episodes twice, sampling from the policy (as in training) and greedily (the
most probable action: a policy that has not learned where the player is can win by sampling a
biased random walk and lose every greedy episode). With `budgets`, each run first stops at each
budget and the best checkpoint of those steps is evaluated the same way before the run goes on.
The reference measured in the same invocation: a uniformly random policy on the same puzzles.
"""

import dataclasses
import json
import statistics
from pathlib import Path
from typing import Optional

from keras_simplicial.agents.analysis.results import Result
from keras_simplicial.agents.experiments.sweep import (
    evaluate_budget,
    evaluate_run,
    random_policy_win_rate,
    sweep_run_dir,
    train_or_resume,
)
from keras_simplicial.agents.training.curve import TrainingCurve
from keras_simplicial.agents.training.run_arguments import RunArguments

LEVELS = (0.5, 0.9, 0.99)
AGENTS = ("relational", "simplicial")


@dataclasses.dataclass(frozen=True)
class SweepOptions:
    """What a learning sweep trains and how it evaluates (the options of `keras-simplicial
    sweep`).

    Attributes:
        preset: the preset the runs train (`PRESETS`).
        arguments: the `RunArguments` of every run, whose agent and seed each run replaces
            (`run_arguments`); None: the preset's (`RunArguments.from_preset`).
    """

    preset: str = "easy"
    agents: tuple = AGENTS
    seeds: tuple = (1, 2, 3, 4, 5)
    stop_timesteps: int = 600_000
    budgets: tuple = ()
    out: str = "runs/learning-easy"
    arguments: Optional[RunArguments] = None
    checkpoint_every: int = 5
    eval_episodes: int = 1000
    address: Optional[str] = None

    def __post_init__(self):
        unknown = sorted(set(self.agents) - set(AGENTS))
        if unknown or not self.agents:
            raise ValueError(f"--agents must be some of {AGENTS}, got {list(self.agents)}.")
        if not self.seeds:
            raise ValueError("--seeds needs at least one seed.")
        if int(self.stop_timesteps) <= 0:
            raise ValueError(f"--stop-timesteps must be > 0, got {self.stop_timesteps}.")
        if any(int(budget) <= 0 for budget in self.budgets):
            raise ValueError(f"--budget steps must be > 0, got {list(self.budgets)}.")
        if int(self.eval_episodes) < 1:
            raise ValueError(f"--eval-episodes must be >= 1, got {self.eval_episodes}.")
        if self.arguments is None:
            object.__setattr__(self, "arguments", RunArguments.from_preset(self.preset))
        elif not isinstance(self.arguments, RunArguments):
            raise ValueError(f"arguments must be a RunArguments, got {self.arguments!r}.")

    def run_arguments(self, agent, seed):
        """The `RunArguments` of one run of the sweep."""
        return dataclasses.replace(self.arguments, agent=agent, seed=seed)


@dataclasses.dataclass
class SweepReport(Result):
    """A sweep's results (`to_dict()`: OUT/learning_curve.json; `to_markdown()`: `sweep_table`).

    Attributes:
        preset: the preset's entry of `PRESETS`.
        options: the `SweepOptions`, as a dict.
        runs: {run name: `run_summary` with the agent, seed, run directory and evaluations}.
        agents: {agent: `agent_summary`}.
        random_policy_win_rate: a uniformly random policy on the same puzzles.
    """

    preset: dict
    options: dict
    runs: dict
    agents: dict
    random_policy_win_rate: float

    def to_markdown(self):
        return sweep_table(self.to_dict())


def run_summary(run_dir):
    """Steps to each of `LEVELS`, start and end win rates and frames/s of one run."""
    curve = TrainingCurve.read(run_dir)
    wins = list(curve.win_rates)
    return {
        "iterations": len(curve.counted),
        "timesteps": curve.timesteps,
        "win_rate_start": statistics.mean(wins[:5]) if wins else None,
        "win_rate_end": statistics.mean(wins[-5:]) if wins else None,
        "steps_to": {str(level): curve.first_reaching(level) for level in LEVELS},
        "median_frames_per_s": curve.frames_per_s or None,
    }


def learning_sweep(options):
    """Trains (or resumes) and evaluates every run of `options`; writes the curves and
    `learning_curve.json` under `options.out` and returns the `SweepReport`."""
    import ray

    from keras_simplicial.agents.analysis.training_curves import plot_training_curves
    from keras_simplicial.agents.atomic_files import atomic_write_json
    from keras_simplicial.agents.training.presets import PRESETS

    preset = PRESETS[options.preset]
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = {}
    for agent in options.agents:
        for seed in options.seeds:
            run_dir = sweep_run_dir(out, agent, seed)
            arguments = options.run_arguments(agent, seed)
            within = {}
            for budget in sorted(b for b in options.budgets if b < options.stop_timesteps):
                _train(run_dir, arguments, budget, options)
                ray.shutdown()
                within[str(budget)] = evaluate_budget(run_dir, budget, options.eval_episodes)
            _train(run_dir, arguments, options.stop_timesteps, options)
            ray.shutdown()
            runs[run_dir.name] = {
                **run_summary(run_dir),
                "agent": agent,
                "seed": seed,
                "run_dir": str(run_dir),
                "budget_evaluations": within,
                "evaluations": evaluate_run(run_dir, options.eval_episodes),
            }
            print(f"{run_dir.name}: {json.dumps(runs[run_dir.name]['steps_to'])}", flush=True)
    plot_training_curves(
        [r["run_dir"] for r in runs.values()], out / "learning_curves.png", seed_lines=True
    )
    report = SweepReport(
        preset=preset,
        options=dataclasses.asdict(options),
        runs=runs,
        agents={agent: agent_summary(runs, agent, options.budgets) for agent in options.agents},
        random_policy_win_rate=random_policy_win_rate(
            options.arguments.env, options.arguments.env_config
        ),
    )
    atomic_write_json(out / "learning_curve.json", report.to_dict())
    return report


def _train(run_dir, arguments, stop_timesteps, options):
    train_or_resume(
        run_dir,
        arguments,
        stop_timesteps,
        address=options.address,
        checkpoint_every=options.checkpoint_every,
    )


def agent_summary(runs, agent, budgets):
    """Best and final greedy win rates over the agent's runs, per budget too."""
    mine = [r for r in runs.values() if r["agent"] == agent]
    best = [r["evaluations"]["best"]["greedy"]["win_rate"] for r in mine]
    final = [r["evaluations"]["final"]["greedy"]["win_rate"] for r in mine]
    within = {}
    for budget in budgets:
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
    return {
        "seeds": len(mine),
        "best_greedy_min": min(best),
        "within": within,
        "best_greedy_mean": statistics.mean(best),
        "final_greedy_min": min(final),
        "final_greedy_mean": statistics.mean(final),
        "reached_0.99": sum(r["steps_to"]["0.99"] is not None for r in mine),
    }


def count(value):
    """`1,234` for a number, `-` for a count that a short run could not give."""
    return "-" if value is None else f"{value:,.0f}"


def sweep_table(report):
    """The sweep as a Markdown table, then one line per agent and the random policy."""
    levels = [str(level) for level in LEVELS]
    budgets = report["options"].get("budgets") or []
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
        best, final = r["evaluations"]["best"], r["evaluations"]["final"]
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
