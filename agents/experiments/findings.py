"""What a comparison of the two agents found, computed from its run directories alone.

    found = findings(options, run_dirs)      # a `Findings`: per-run records, comparisons, ...

Per run: steps to a sustained training win rate (the first step from which the next
`SUSTAIN_WINDOW` steps average at least the level), the mean training win rate over the whole run
and over its last tenth, its best and final checkpoints played greedily and sampling (cached in
the run directory), its logic probe and why its lost episodes ended. Over runs: every measure of
`MEASURES`, simplicial minus relational, with the exact permutation test (`statistics`), the win
rate per puzzle type (Figures 10-11), the time adjustment of Appendix C, and the attention figures
of the best checkpoints.
"""

import dataclasses
import json
from pathlib import Path
from typing import Callable, NamedTuple

from keras_simplicial.agents.experiments.learning import run_summary
from keras_simplicial.agents.experiments.setting import (
    SharedSetting,
    paper_deviations,
    shared_setting,
)
from keras_simplicial.agents.experiments.statistics import (
    compare_seeds,
    first_sustained_step,
    mean_win_rate_between,
)
from keras_simplicial.agents.experiments.sweep import (
    cached_json,
    checkpoint_key,
    evaluate_checkpoints,
    evaluate_run,
    random_policy_win_rate,
)
from keras_simplicial.agents.training.curve import SMOOTHING_EPISODES, TrainingCurve

AGENTS = ("relational", "simplicial")
LATE_FRACTION = 0.1  # "late in the run": the last tenth of the steps
PLATEAU_BELOW = 0.9  # a run whose late training win rate stays below this is held at a plateau
SUSTAIN_WINDOW = 200_000  # a level is reached where the next this many steps average at least it
SUSTAINED_LEVELS = (0.5, 0.9)  # the levels whose steps the report shows
ATTENTION_BOARD_SEEDS = range(100)  # where to look for a bridge episode to draw


class Measure(NamedTuple):
    """How the agents are compared over seeds on one measure."""

    value: Callable  # of one run's record (see `findings`)
    higher_is_better: bool
    answers: str  # "early" (how early an agent learns) or "end" (where it ends)
    counts_never: bool = False  # steps to a level: a run that never got there counts as its length


def _win_rate(checkpoint, mode):
    return lambda r: r["evaluations"][checkpoint][mode]["win_rate"]


MEASURES = {
    "mean training win rate over the run": Measure(lambda r: r["whole"], True, "early"),
    "steps to a sustained training win rate of 0.9 (millions)": Measure(
        lambda r: r["steps_to_sustained_0.9"], False, "early", counts_never=True
    ),
    "steps to a sustained 0.9, time-adjusted (Appendix C; millions)": Measure(
        lambda r: r["steps_to_sustained_0.9_time_adjusted"], False, "early", counts_never=True
    ),
    "mean training win rate, last tenth of the run": Measure(lambda r: r["late"], True, "end"),
    "best checkpoint, sampled": Measure(_win_rate("best", "sampled"), True, "end"),
    "best checkpoint, greedy": Measure(_win_rate("best", "greedy"), True, "end"),
    "final checkpoint, sampled": Measure(_win_rate("final", "sampled"), True, "end"),
}


def best_sampled_report(run_dir, checkpoint, episodes):
    """The sampled evaluation report of the run's best `checkpoint`, per puzzle type and with why
    its episodes ended. `evaluate_run` caches it once per checkpoint (as the final checkpoint's
    when the best one is the final one); a cached report from before evaluations recorded
    `ended_by` is played again through that cache."""
    key = checkpoint_key(checkpoint)

    def cached_as(which):
        path = Path(run_dir) / f"evaluation_{which}_sampled.json"
        return path.exists() and checkpoint_key(json.loads(path.read_text())["checkpoint"]) == key

    which = next((which for which in ("best", "final") if cached_as(which)), "best")
    evaluate_checkpoints(run_dir, {which: checkpoint}, episodes, record_ended_by=("sampled",))
    return json.loads((Path(run_dir) / f"evaluation_{which}_sampled.json").read_text())


def read_curve(run_dir):
    """The run's `TrainingCurve`; a `ValueError` when it has no training win rate yet."""
    curve = TrainingCurve.read(run_dir)
    if len(curve.steps) == 0:
        raise ValueError(
            f"{run_dir} has no training win rate yet (fewer than {SMOOTHING_EPISODES} episodes "
            "ended); train it longer (a larger --stop-timesteps)."
        )
    return curve


def late_win_rate(curve):
    """The training win rate averaged over the last `LATE_FRACTION` of the run's steps."""
    end = float(curve.steps[-1])
    return mean_win_rate_between(curve.steps, curve.win_rates, end * (1 - LATE_FRACTION), end)


def whole_run_win_rate(curve):
    """The training win rate averaged over the whole run (the area under Figure 3's curve
    divided by the run's steps): how early an agent learns, not only where it ends."""
    return mean_win_rate_between(curve.steps, curve.win_rates, 0.0, float(curve.steps[-1]))


def sustained_steps(curve):
    """{level: the first step from which the run's training win rate averaged over the next
    `SUSTAIN_WINDOW` environment steps is at least the level, or None} for `SUSTAINED_LEVELS`."""
    return {
        str(level): first_sustained_step(curve.steps, curve.win_rates, level, SUSTAIN_WINDOW)
        for level in SUSTAINED_LEVELS
    }


def training_minutes(curve):
    """(wall-clock minutes the run trained, summed over its sittings; the sittings)."""
    seconds, sittings = curve.sittings()
    return seconds / 60, sittings


def probe(run_dir, checkpoint, episodes, env_id, env_config):
    from keras_simplicial.agents.analysis.logic_probe import logic_probe
    from keras_simplicial.agents.training.checkpoints import load_attention_agent

    def compute():
        agent, _ = load_attention_agent(checkpoint)
        return logic_probe(agent, env_id, env_config, episodes=episodes, seed=0).to_dict()

    return cached_json(Path(run_dir) / "probe_best.json", checkpoint, compute)


def attention_figures(checkpoint, out_dir, prefix):
    """Figures of the first won bridge episode (greedy) of `checkpoint`, named
    `<prefix>_<figure>.png` (docs/analysis.md links them); (board seed, episode record, paths)."""
    from keras_simplicial.agents.analysis.attention_figures import save_figures
    from keras_simplicial.agents.analysis.episode import play_episode
    from keras_simplicial.agents.training.checkpoints import load_attention_agent

    agent, arguments = load_attention_agent(checkpoint)
    chosen = None
    for board in ATTENTION_BOARD_SEEDS:
        record = play_episode(agent, arguments.env, arguments.env_config, seed=board, greedy=True)
        if record.has_bridge and record.outcome() == "won":
            chosen = (board, record)
            break
        chosen = chosen or (board, record)
    board, record = chosen
    paths = save_figures(record, out_dir)
    named = []
    for path in paths:
        target = Path(out_dir) / f"{prefix}_{Path(path).name.split('_', 2)[2]}"
        Path(path).replace(target)
        named.append(target)
    return board, record, named


def lost_outcomes():
    """The ways an episode ends lost: `OUTCOMES` but "won"."""
    from keras_simplicial.envs import OUTCOMES

    return tuple(outcome for outcome in OUTCOMES if outcome != "won")


def loss_causes(reports):
    """{agent: {puzzle type: {lost outcome: share of the type's episodes that ended so, the mean
    over the agent's reports}}} for the lost outcomes of `OUTCOMES`."""
    import numpy as np

    from keras_simplicial.agents.analysis.win_rate_figures import parse_puzzle_type

    shares = {}
    for report in reports:
        for name, entry in report["per_puzzle_type"].items():
            if entry.get("episodes", 0) == 0:
                continue
            by_outcome = shares.setdefault(report["agent"], {}).setdefault(
                parse_puzzle_type(name), {}
            )
            for outcome in lost_outcomes():
                by_outcome.setdefault(outcome, []).append(entry["ended_by"][outcome])
    return {
        agent: {
            puzzle_type: {outcome: float(np.mean(v)) for outcome, v in by_outcome.items()}
            for puzzle_type, by_outcome in sorted(by_type.items())
        }
        for agent, by_type in sorted(shares.items())
    }


@dataclasses.dataclass
class Findings:
    """What the report shows, every field computed from the run directories by `findings`."""

    setting: SharedSetting  # the runs' puzzles, policy and architecture: `shared_setting`
    deviations: list  # [(what, these runs, the paper)]: `paper_deviations`
    kept_from_table_1: list  # [(IMPALA hyperparameter, value)] the runs share with the paper
    runs: dict  # {(agent, seed): one run's record, see `findings`}
    comparisons: dict  # {measure: `statistics.SeedComparison`}, simplicial vs relational
    per_type: dict  # {agent: {puzzle type: (mean, std, rates)}} of the best checkpoints, sampled
    loss_causes: dict  # {agent: {puzzle type: {lost outcome: mean share}}}: `loss_causes`
    random_rate: float  # a uniformly random policy's win rate on the runs' puzzles
    time_factor: dict  # {agent: Appendix C's factor on its steps}
    throughput: dict  # `measured_throughput`: the frames/s behind time_factor and their machine
    curve_paths: dict  # {"figure4" | "per_run" | "time_adjusted": figure path}
    per_type_path: Path
    attention: dict  # {agent: (seed, board seed, episode record, figure paths)}


def findings(options, run_dirs, throughput):
    """Evaluate, probe and draw every run of `run_dirs` ({(agent, seed): run directory}) of the
    comparison `options` (a `ReproduceOptions`; cached evaluations are reused); `throughput`:
    both agents' frames/s on one machine (`measured_throughput`), for Appendix C."""
    from keras_simplicial.agents.analysis.training_curves import (
        appendix_c_factors,
        plot_training_curves,
    )
    from keras_simplicial.agents.analysis.win_rate_figures import (
        per_type_statistics,
        plot_per_type_win_rates,
    )
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.run_directory import RunDirectory

    figures = Path(options.figures)
    figures.mkdir(parents=True, exist_ok=True)
    dirs = {key: d for key, d in run_dirs.items() if RunDirectory(d).metrics_source() is not None}
    missing = sorted(set(run_dirs) - set(dirs))
    if missing:
        raise FileNotFoundError(f"No run yet for {missing}; run without --report-only first.")
    trained_with = {
        f"{agent}-seed{seed}": RunArguments.read(RunDirectory(d).run_file)
        for (agent, seed), d in dirs.items()
    }
    setting = shared_setting(trained_with)

    curve_paths = {
        "figure4": figures / "learning_curves.png",
        "per_run": figures / "learning_curves_per_run.png",
        "time_adjusted": figures / "learning_curves_time_adjusted.png",
    }
    ordered = [str(d) for d in dirs.values()]
    plot_training_curves(ordered, curve_paths["figure4"], seed_lines=True)
    plot_training_curves(ordered, curve_paths["per_run"], per_run_panels=True)
    plot_training_curves(
        ordered,
        curve_paths["time_adjusted"],
        time_adjusted=True,
        frames_per_s=throughput["frames_per_s"],
    )

    runs = {}
    for (agent, seed), run_dir in dirs.items():
        curve = read_curve(run_dir)
        summary = run_summary(run_dir)
        sustained = sustained_steps(curve)
        evaluations = evaluate_run(run_dir, options.eval_episodes)
        best = evaluations["best"]["checkpoint"]
        reached = sustained["0.9"]
        runs[(agent, seed)] = {
            "summary": summary,
            "sustained": sustained,
            "training_minutes": training_minutes(curve),
            "late": late_win_rate(curve),
            "whole": whole_run_win_rate(curve),
            # A run that never sustained 0.9 counts as its length (a lower bound on its steps).
            "steps_to_sustained_0.9": (reached if reached is not None else summary["timesteps"])
            / 1e6,
            "evaluations": evaluations,
            "best_sampled_report": best_sampled_report(run_dir, best, options.eval_episodes),
            "probe": probe(run_dir, best, options.probe_episodes, setting.env, setting.env_config),
        }
    time_factor = appendix_c_factors(throughput["frames_per_s"])
    for (agent, _), r in runs.items():
        r["steps_to_sustained_0.9_time_adjusted"] = r["steps_to_sustained_0.9"] * time_factor[agent]

    comparisons = {}
    for name, measure in MEASURES.items():
        values = {a: [measure.value(r) for (b, _), r in runs.items() if b == a] for a in AGENTS}
        comparisons[name] = compare_seeds(
            values["relational"], values["simplicial"], higher_is_better=measure.higher_is_better
        )

    reports = [r["best_sampled_report"] for r in runs.values()]
    per_type_path = figures / "win_rate_per_puzzle_type.png"
    plot_per_type_win_rates(reports, per_type_path, title="best checkpoints, sampled")

    best_of = {}
    for agent in AGENTS:
        key = max(
            ((a, s) for a, s in runs if a == agent),
            key=lambda k: runs[k]["evaluations"]["best"]["sampled"]["win_rate"],
        )
        best_of[agent] = (key, runs[key]["evaluations"]["best"]["checkpoint"])
    attention = {
        agent: (key[1], *attention_figures(checkpoint, figures, f"{agent}_best"))
        for agent, (key, checkpoint) in best_of.items()
    }
    machines = {
        entry["machine"] for d in dirs.values() for entry in RunDirectory(d).read_machines()
    }
    deviations, kept = paper_deviations(options, machines or {"unrecorded machines"}, trained_with)
    return Findings(
        setting=setting,
        deviations=deviations,
        kept_from_table_1=kept,
        runs=runs,
        comparisons=comparisons,
        per_type=per_type_statistics(reports),
        loss_causes=loss_causes(reports),
        random_rate=random_policy_win_rate(setting.env, setting.env_config),
        time_factor=time_factor,
        throughput=throughput,
        curve_paths=curve_paths,
        per_type_path=per_type_path,
        attention=attention,
    )


def plateaus(found):
    """Runs whose training win rate over their last tenth stays below `PLATEAU_BELOW`, each with
    the puzzle type its best checkpoint loses most, how those episodes were lost and its final
    checkpoint's greedy win rate: [(agent, seed, late rate, type, its rate, {lost outcome: share
    of the type's episodes, those above 0}, final greedy)]."""
    from keras_simplicial.agents.analysis.win_rate_figures import parse_puzzle_type

    held = []
    for (agent, seed), r in found.runs.items():
        if r["late"] >= PLATEAU_BELOW:
            continue
        by_type = {
            parse_puzzle_type(name): entry
            for name, entry in r["best_sampled_report"]["per_puzzle_type"].items()
            if entry.get("episodes", 0) > 0
        }
        weakest = min(by_type, key=lambda t: by_type[t]["win_rate"])
        entry = by_type[weakest]
        losses = {o: entry["ended_by"][o] for o in lost_outcomes() if entry["ended_by"][o] > 0}
        final = r["evaluations"]["final"]["greedy"]["win_rate"]
        held.append((agent, seed, r["late"], weakest, entry["win_rate"], losses, final))
    return held
