"""A run's training over windows of environment steps: win rate per puzzle type and why episodes
ended, as a Markdown table (`keras-simplicial summary`).

    summary = run_summary("runs/a", every=1_000_000)
    print(summary.to_markdown())        # the windows, then the run's saved evaluations

Each window (start, end] is the mean of the metrics.csv rows whose `timesteps` fall in it, taken
by the one rule of `TrainingCurve` (a row counts once RLlib's smoothing window of episodes is
full in its sitting). A row's rates are themselves means over RLlib's last `SMOOTHING_EPISODES`
episodes, so a window summarises the episodes that ended in it. A plateau shows for what it is
here: a bridge type at the random policy's rate with half of its episodes ended by opening the
bridge is not learnt; one lost by running out of steps is a policy that loops.
"""

import dataclasses
import json
from pathlib import Path

import numpy as np

from keras_simplicial.agents.analysis.evaluation import loop_shares
from keras_simplicial.agents.analysis.results import Result, markdown_table
from keras_simplicial.agents.training.curve import TrainingCurve
from keras_simplicial.agents.training.metric_rows import parse_puzzle_type_key
from keras_simplicial.envs import OUTCOMES

WIN_PREFIX = "win_rate/"
ENDED_PREFIX = "ended/"


@dataclasses.dataclass(frozen=True)
class TrainingWindow:
    """The mean training metrics of one window of environment steps.

    Attributes:
        start, end: the window's environment steps, (start, end].
        rows: how many metrics rows fall in it.
        win_rate: the training win rate.
        per_type: {puzzle type (a, b, c): training win rate}.
        ended: {outcome of `OUTCOMES`: share of all episodes that ended so}.
        bridge_opened: share of the bridge types' episodes ended by opening the bridge (None
            when no bridge type was played).
        episode_length, entropy: the mean episode length and the policy's entropy.
    """

    start: int
    end: int
    rows: int
    win_rate: float
    per_type: dict
    ended: dict
    bridge_opened: object
    episode_length: float
    entropy: float


def _mean(rows, column):
    values = [float(row[column]) for row in rows if row.get(column) not in ("", None)]
    return float(np.mean(values)) if values else float("nan")


def training_windows(run_dir, every=1_000_000):
    """The `TrainingWindow`s of the run in `run_dir`, `every` environment steps wide (windows
    with no counted row are left out)."""
    if int(every) <= 0:
        raise ValueError(f"--every must be a positive number of steps, got {every}.")
    curve = TrainingCurve.read(run_dir)
    groups = {}
    for row in curve.counted:
        # A row counts the steps up to its `timesteps`: the window (start, end] holds it.
        groups.setdefault((int(row["timesteps"]) - 1) // int(every), []).append(row)
    windows = []
    for index, rows in sorted(groups.items()):
        columns = set().union(*rows)
        types = sorted(
            parse_puzzle_type_key(c[len(WIN_PREFIX) :]) for c in columns if c.startswith(WIN_PREFIX)
        )
        # Bridge types: (a, b, c) with b > 0, the bridge's place on the path (Section 6).
        bridge_types = ["_".join(map(str, t)) for t in types if t[1] > 0]
        bridge_columns = [f"{ENDED_PREFIX}opened_bridge/{key}" for key in bridge_types]
        bridge_shares = [_mean(rows, c) for c in bridge_columns if c in columns]
        windows.append(
            TrainingWindow(
                start=index * int(every),
                end=(index + 1) * int(every),
                rows=len(rows),
                win_rate=_mean(rows, "win_rate"),
                per_type={t: _mean(rows, WIN_PREFIX + "_".join(map(str, t))) for t in types},
                ended={o: _mean(rows, ENDED_PREFIX + o) for o in OUTCOMES},
                bridge_opened=float(np.mean(bridge_shares)) if bridge_shares else None,
                episode_length=_mean(rows, "episode_len_mean"),
                entropy=_mean(rows, "entropy"),
            )
        )
    return windows


def _cell(value, digits=2):
    if value is None or value != value:
        return "-"
    return f"{value:.{digits}f}"


def format_training_table(windows):
    """`windows` as a Markdown table: one row per window (steps in millions)."""
    types = sorted(set().union(*(w.per_type for w in windows))) if windows else []
    header = (
        ["steps (M)", "win rate"]
        + [f"({','.join(map(str, t))})" for t in types]
        + [f"ended: {o.replace('_', ' ')}" for o in OUTCOMES]
        + ["bridge opened", "episode length", "policy entropy"]
    )
    rows = [
        [f"{w.start / 1e6:g}-{w.end / 1e6:g}", _cell(w.win_rate, 3)]
        + [_cell(w.per_type.get(t)) for t in types]
        + [_cell(w.ended.get(o)) for o in OUTCOMES]
        + [_cell(w.bridge_opened), _cell(w.episode_length, 0), _cell(w.entropy)]
        for w in windows
    ]
    return markdown_table(header, rows)


def run_evaluations(run_dir):
    """{name: report} of the evaluation reports saved in the run directory
    (`evaluation_<name>.json`, e.g. `best_greedy`, as `evaluate --output` and the sweeps write
    them; `evaluation.json`, `evaluate`'s default and `train --evaluate`'s last checkpoint, is
    named "last"), sorted by name."""
    reports = {}
    paths = [Path(run_dir) / "evaluation.json", *Path(run_dir).glob("evaluation_*.json")]
    for path in paths:
        if not path.is_file():
            continue
        report = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(report, dict) and "per_puzzle_type" in report and "overall" in report:
            name = path.stem[len("evaluation_") :] if "_" in path.stem else "last"
            reports[name] = report
    return dict(sorted(reports.items()))


def format_evaluation_table(reports):
    """`reports` ({name: evaluation report}) as a Markdown table: per report its checkpoint,
    episodes, the win rate overall and per puzzle type, and the share of all episodes that
    ended by opening the bridge and by running out of steps; where a report is greedy, what its
    looping episodes repeated (`evaluation.LOOP_COLUMNS`)."""
    types = sorted({t for r in reports.values() for t in r["per_puzzle_type"]})
    header = [
        "evaluation",
        "checkpoint",
        "episodes",
        "overall",
        *types,
        "ended: bridge / out of steps",
    ]
    with_loops = any("loops" in report["overall"] for report in reports.values())
    if with_loops:
        header.append("greedy loops: Gem box with 1 key / wrong box / blocked / cycle")
    rows = []
    for name, report in reports.items():
        per_type = report["per_puzzle_type"]
        ended = report["overall"].get("ended_by") or {}
        rows.append(
            [
                name,
                Path(str(report.get("checkpoint", ""))).name,
                str(report["overall"]["episodes"]),
                _cell(report["overall"]["win_rate"], 3),
                *[_cell(per_type[t]["win_rate"], 3) if t in per_type else "-" for t in types],
                f"{_cell(ended.get('opened_bridge'), 3)} / {_cell(ended.get('out_of_steps'), 3)}",
            ]
        )
        if with_loops:
            loops = report["overall"].get("loops")
            rows[-1].append(
                " / ".join(_cell(share, 3) for share in loop_shares(loops).values())
                if loops
                else "-"
            )
    return markdown_table(header, rows)


@dataclasses.dataclass
class RunSummary(Result):
    """A run's training per window of steps and its saved evaluations (`keras-simplicial
    summary`).

    Attributes:
        run_dir: the run directory.
        windows: its `TrainingWindow`s.
        evaluations: {name: evaluation report} saved in it (`run_evaluations`).
    """

    run_dir: str
    windows: list
    evaluations: dict

    def to_dict(self):
        windows = []
        for window in self.windows:
            entry = dataclasses.asdict(window)
            entry["per_type"] = {"(%d, %d, %d)" % t: rate for t, rate in window.per_type.items()}
            windows.append(entry)
        return {"run_dir": self.run_dir, "windows": windows, "evaluations": self.evaluations}

    def to_markdown(self):
        tables = [format_training_table(self.windows)]
        if self.evaluations:
            tables.append(format_evaluation_table(self.evaluations))
        return "\n\n".join(tables)


def run_summary(run_dir, every=1_000_000):
    """The `RunSummary` of the run in `run_dir`, in windows `every` environment steps wide."""
    return RunSummary(str(run_dir), training_windows(run_dir, every), run_evaluations(run_dir))
