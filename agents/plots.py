"""Training curves: fraction of puzzles solved against environment steps (Figures 4-6).

`plot_training_curves(run_dirs, path)` draws the mean and standard deviation over the runs of each
agent kind on one axis (Figure 4); with `per_run_panels=True` it adds one panel per run (Figures 5
and 6); with `time_adjusted=True` each agent's steps are rescaled by its measured frames/s relative
to the fastest agent, the x-axis of Appendix C.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from keras_simplicial.agents.run_directory import RunDirectory  # noqa: E402

AGENT_COLOURS = {"relational": "tab:blue", "simplicial": "tab:red"}


def load_curve(run_dir):
    """`(agent, steps, win_rate, frames_per_s)` of one run, rows without a win rate dropped."""
    run = RunDirectory(run_dir)
    arguments = run.read_run()
    steps, wins, fps = [], [], []
    for row in run.read_metrics():
        fps.append(float(row["frames_per_s"] or 0.0))
        if row.get("win_rate") not in ("", None):
            steps.append(int(row["timesteps"]))
            wins.append(float(row["win_rate"]))
    mean_fps = float(np.mean([f for f in fps if f > 0])) if any(f > 0 for f in fps) else 0.0
    return arguments["agent"], np.array(steps), np.array(wins), mean_fps


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


def plot_training_curves(run_dirs, path, per_run_panels=False, time_adjusted=False):
    """Writes the training-curve figure of `run_dirs` to `path` (PNG or PDF); returns the figure."""
    runs = [load_curve(run_dir) for run_dir in run_dirs]
    kinds = sorted({agent for agent, *_ in runs})
    speed = {kind: np.mean([fps for agent, _, _, fps in runs if agent == kind]) for kind in kinds}
    fastest = max(speed.values()) if speed and max(speed.values()) > 0 else 0.0

    def x_of(agent, steps):
        if time_adjusted and fastest and speed[agent]:
            return steps * fastest / speed[agent]
        return steps

    panels = 1 + (len(runs) if per_run_panels else 0)
    figure, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4), squeeze=False)
    summary = axes[0, 0]
    for kind in kinds:
        curves = [(x_of(agent, steps), wins) for agent, steps, wins, _ in runs if agent == kind]
        grid, mean, std = mean_and_std(curves)
        if len(grid) == 0:
            continue
        count = len(curves)
        summary.plot(grid, mean, color=AGENT_COLOURS.get(kind), label=f"{kind} ({count} run"
                     f"{'s' if count > 1 else ''})")
        summary.fill_between(grid, mean - std, mean + std, color=AGENT_COLOURS.get(kind),
                             alpha=0.2)
    summary.set_xlabel("environment steps" + (" (time-adjusted)" if time_adjusted else ""))
    summary.set_ylabel("fraction solved")
    summary.set_ylim(0.0, 1.0)
    summary.set_title("mean and standard deviation over runs")
    summary.legend(loc="lower right")
    summary.grid(alpha=0.3)
    if per_run_panels:
        for axis, (run_dir, (agent, steps, wins, _)) in zip(axes[0, 1:], zip(run_dirs, runs)):
            axis.plot(x_of(agent, steps), wins, color=AGENT_COLOURS.get(agent))
            axis.set_title(f"{agent}: {RunDirectory(run_dir).root.name}")
            axis.set_xlabel("environment steps")
            axis.set_ylabel("fraction solved")
            axis.set_ylim(0.0, 1.0)
            axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return figure
