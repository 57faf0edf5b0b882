"""Training curves: fraction of puzzles solved against environment steps (Figures 3-5).

`plot_training_curves(run_dirs, path)` draws the mean and standard deviation over the runs of each
agent kind on one axis (Figure 3); with `per_run_panels=True` it adds one panel per run (Figures 4
and 5); with `time_adjusted=True` each agent's steps are rescaled by its measured frames/s relative
to the fastest agent, the x-axis of Appendix C.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from keras_simplicial.agents.training.curve import TrainingCurve  # noqa: E402
from keras_simplicial.agents.training.run_directory import RunDirectory  # noqa: E402

AGENT_COLOURS = {"relational": "tab:blue", "simplicial": "tab:red"}


def load_curve(run_dir):
    """`(agent, steps, win_rate, frames_per_s)` of one run: its `TrainingCurve` (the rows whose
    win rate counts, and the median frames/s of those rows; 0.0 when none was measured)."""
    curve = TrainingCurve.read(run_dir)
    return curve.agent, curve.steps, curve.win_rates, curve.frames_per_s


def mean_and_std(curves, num_points=200):
    """Mean and std of several (steps, values) curves on a common grid of steps."""
    curves = [(s, v) for s, v in curves if len(s)]
    if not curves:
        return np.array([]), np.array([]), np.array([])
    end = min(s[-1] for s, _ in curves)
    start = max(s[0] for s, _ in curves)
    grid = np.linspace(start, end, num_points) if end > start else np.array([start])
    values = np.stack([np.interp(grid, s, v) for s, v in curves])
    return grid, values.mean(axis=0), values.std(axis=0)


def frames_per_s_by_machine(run_dir):
    """{machine: median frames/s of the run's iterations trained on it}
    (`RunDirectory.record_machine`); a run's iterations from before machines were recorded
    count as "unrecorded"."""
    run = RunDirectory(run_dir)
    entries = run.read_machines()
    measured = {}
    for row in TrainingCurve.read(run_dir).counted:
        fps, iteration = float(row.get("frames_per_s") or 0.0), int(row["training_iteration"])
        if fps <= 0:
            continue
        machine = run.machine_of(iteration, entries) or "unrecorded"
        measured.setdefault(machine, []).append(fps)
    return {machine: float(np.median(values)) for machine, values in measured.items()}


def shared_machine(runs, machines):
    """The machine on which every agent kind of `runs` has measured runs (the one with the most
    such runs), or None. `machines` holds one `frames_per_s_by_machine` dict per run."""
    kinds = {agent for agent, *_ in runs}
    counts = {}
    for (agent, *_), by_machine in zip(runs, machines):
        for machine in by_machine:
            if machine != "unrecorded":
                counts.setdefault(machine, {}).setdefault(agent, 0)
                counts[machine][agent] += 1
    shared = [m for m, by_agent in counts.items() if set(by_agent) == kinds]
    return max(shared, key=lambda m: (sum(counts[m].values()), m), default=None)


def time_adjustment(runs, machines=None):
    """{agent: factor}: the Appendix C factor (fastest agent's frames/s over this agent's) that
    turns an agent's environment steps into the steps the fastest agent makes in the same time;
    and {agent: the frames/s it rests on}. Agents without a measured frames/s keep factor 1.

    Frames/s differ 2x between machines, so with `machines` (one `frames_per_s_by_machine` dict
    per run) the speeds are those of the `shared_machine` alone; without one, every run counts.
    """
    kinds = sorted({agent for agent, *_ in runs})
    machine = shared_machine(runs, machines) if machines is not None else None
    if machine is None:
        measured = [(agent, fps) for agent, _, _, fps in runs]
    else:
        measured = [
            (agent, by_machine[machine])
            for (agent, *_), by_machine in zip(runs, machines)
            if machine in by_machine
        ]
    speed = {}
    for kind in kinds:  # a run without a measured (positive) frames/s does not count
        rates = [fps for agent, fps in measured if agent == kind and fps and fps > 0]
        speed[kind] = float(np.mean(rates)) if rates else 0.0
    return appendix_c_factors(speed), speed


def appendix_c_factors(frames_per_s):
    """{agent: fastest agent's frames/s over this agent's} from {agent: frames/s}; an agent
    without a measured (positive) frames/s keeps factor 1."""
    fastest = max(frames_per_s.values(), default=0.0)
    return {
        kind: fastest / fps if fastest > 0 and fps > 0 else 1.0
        for kind, fps in frames_per_s.items()
    }


def plot_training_curves(
    run_dirs,
    path,
    per_run_panels=False,
    time_adjusted=False,
    seed_lines=False,
    groups=None,
    frames_per_s=None,
):
    """Writes the training-curve figure of `run_dirs` to `path` (PNG or PDF); returns the figure.

    The first panel is Figure 3: the mean and standard deviation over the runs of each agent (on
    the range of steps all its runs cover). `per_run_panels` adds one row per agent with one
    panel per run (Figures 4 and 5). `time_adjusted` rescales each agent's steps by
    `time_adjustment` (Appendix C: the simplicial agent's axis times 1.9/1.4 in the paper).
    `seed_lines` adds each run as a faint line to the first panel. `groups` (one label per run)
    groups the runs by label instead of by agent kind, e.g. to compare two configurations.
    `frames_per_s` ({agent: frames/s}, e.g. both agents measured back to back on one machine)
    replaces the runs' own medians in the time adjustment.
    """
    runs = [load_curve(run_dir) for run_dir in run_dirs]
    if groups is not None:
        if len(groups) != len(runs):
            raise ValueError(
                f"groups must have one label per run ({len(runs)}), got {len(groups)}."
            )
        runs = [(label,) + tuple(run[1:]) for label, run in zip(groups, runs)]
    kinds = sorted({agent for agent, *_ in runs})
    if frames_per_s is None:
        factor, speed = time_adjustment(runs, [frames_per_s_by_machine(d) for d in run_dirs])
    else:
        missing = sorted(set(kinds) - set(frames_per_s))
        if missing:
            raise ValueError(
                f"frames_per_s must name every agent of the runs {kinds}; missing {missing}."
            )
        speed = {kind: float(frames_per_s[kind]) for kind in kinds}
        factor = appendix_c_factors(speed)
    x_label = "environment steps"
    if time_adjusted:
        fastest = max(speed, key=speed.get)
        x_label = f"time-adjusted environment steps ({fastest} frames/s)"

    def x_of(agent, steps):
        return steps * factor[agent] if time_adjusted else steps

    by_kind = {
        kind: [(run_dir, run) for run_dir, run in zip(run_dirs, runs) if run[0] == kind]
        for kind in kinds
    }
    columns = max([len(v) for v in by_kind.values()] + [1]) if per_run_panels else 1
    rows = 1 + (len(kinds) if per_run_panels else 0)
    figure = plt.figure(figsize=(max(6.0, 3.6 * columns), 4.0 + 3.0 * (rows - 1)))
    grid = figure.add_gridspec(rows, columns, height_ratios=[1.3] + [1] * (rows - 1))
    summary = figure.add_subplot(grid[0, :])
    for kind in kinds:
        curves = [(x_of(agent, steps), wins) for agent, steps, wins, _ in runs if agent == kind]
        grid_x, mean, std = mean_and_std(curves)
        if len(grid_x) == 0:
            continue
        count = len(curves)
        label = f"{kind} ({count} run{'s' if count > 1 else ''})"
        if time_adjusted and factor[kind] != 1.0:
            label += f", steps x {factor[kind]:.2f}"
        colour = AGENT_COLOURS.get(kind, f"C{kinds.index(kind) + 2}")
        if seed_lines:
            for steps, wins in curves:
                summary.plot(steps, wins, color=colour, alpha=0.25, linewidth=0.8)
        summary.plot(grid_x, mean, color=colour, label=label)
        summary.fill_between(grid_x, mean - std, mean + std, color=colour, alpha=0.2)
    summary.set_xlabel(x_label)
    summary.set_ylabel("fraction solved")
    summary.set_ylim(0.0, 1.0)
    summary.set_title(
        ("mean and standard deviation over runs" if len(runs) > 1 else "training win rate")
        + (" (time-adjusted, Appendix C)" if time_adjusted else "")
    )
    if summary.get_legend_handles_labels()[0]:
        summary.legend(loc="lower right")
    summary.grid(alpha=0.3)
    if per_run_panels:
        for row, kind in enumerate(kinds, start=1):
            for column, (run_dir, (agent, steps, wins, fps)) in enumerate(by_kind[kind]):
                axis = figure.add_subplot(grid[row, column])
                axis.plot(x_of(agent, steps), wins, color=AGENT_COLOURS.get(agent))
                axis.set_title(
                    f"{agent}: {RunDirectory(run_dir).root.name}"
                    + (f" ({fps:,.0f} frames/s)" if fps else ""),
                    fontsize=9,
                )
                axis.set_xlabel(x_label, fontsize=8)
                axis.set_ylabel("fraction solved", fontsize=8)
                axis.set_ylim(0.0, 1.0)
                axis.grid(alpha=0.3)
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return figure
