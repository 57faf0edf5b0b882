"""A run's training curve, read from its metrics.csv by one rule that every curve, table and
report uses.

    curve = TrainingCurve.read("runs/demo")
    curve.steps, curve.win_rates        # the points of Figure 3's curve
    curve.timesteps, curve.frames_per_s # how far the run went, and how fast it sampled

The rule: RLlib's training win rate is a mean over the last `SMOOTHING_EPISODES` episodes that
ended in the training process. Until that many have ended (after the start of a run, and again
after each `--resume`, which starts a new process) it rests on a few episodes, and one lucky win
reads 1.0. A row's win rate therefore counts from the row at which `SMOOTHING_EPISODES` episodes
have ended in its process on; a process that resumed a run shows itself by a `time_s` below the
previous row's. Frames/s is the median over the same rows (which also leaves out the slow
iterations of a process warming up).
"""

import dataclasses
import statistics
from pathlib import Path

import numpy as np

from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory

# RLlib's `metrics_num_episodes_for_smoothing` of every run (`impala_config`).
SMOOTHING_EPISODES = 200


@dataclasses.dataclass(frozen=True)
class TrainingCurve:
    """The training win rate of one run against environment steps.

    Attributes:
        run_dir: the run directory.
        agent: "relational" or "simplicial" (from run.json).
        rows: every row of metrics.csv, each a dict of strings.
        counted: the rows whose win rate counts (see the module docstring).
        steps, win_rates: `timesteps` and `win_rate` of `counted`, as arrays.
    """

    run_dir: Path
    agent: str
    rows: tuple
    counted: tuple
    steps: np.ndarray
    win_rates: np.ndarray

    @classmethod
    def read(cls, run_dir, agent=None):
        """The curve of the run in `run_dir` (`agent` read from its run.json unless given)."""
        run = RunDirectory(run_dir)
        if agent is None:
            agent = RunArguments.read(run.run_file).agent
        rows = run.read_metrics()
        counted = tuple(counted_rows(rows))
        return cls(
            run_dir=run.root,
            agent=agent,
            rows=tuple(rows),
            counted=counted,
            steps=np.array([int(row["timesteps"]) for row in counted], dtype=np.int64),
            win_rates=np.array([float(row["win_rate"]) for row in counted], dtype=np.float64),
        )

    @property
    def timesteps(self):
        """Environment steps of the run so far (its last row; 0 without one)."""
        return int(self.rows[-1]["timesteps"]) if self.rows else 0

    @property
    def frames_per_s(self):
        """The median sampling rate of the counted rows, 0.0 when none was measured."""
        measured = [float(row.get("frames_per_s") or 0.0) for row in self.counted]
        measured = [fps for fps in measured if fps > 0]
        return float(statistics.median(measured)) if measured else 0.0

    def first_reaching(self, level):
        """The first step at which the counted win rate is at least `level`, or None."""
        reached = np.flatnonzero(self.win_rates >= level)
        return int(self.steps[reached[0]]) if len(reached) else None

    def sittings(self):
        """(wall-clock seconds the run trained, summed over its sittings; how many sittings):
        `time_s` restarts with each process that resumed the run."""
        total, previous, sittings = 0.0, 0.0, 1
        for row in self.rows:
            time_s = float(row["time_s"])
            if time_s < previous:
                total, sittings = total + previous, sittings + 1
            previous = time_s
        return total + previous, sittings


def counted_rows(rows):
    """The rows of metrics.csv whose training win rate counts: those with a win rate, from the
    row at which `SMOOTHING_EPISODES` episodes have ended in the row's process on."""
    episodes, previous_time = 0, 0.0
    for row in rows:
        time_s = float(row.get("time_s") or 0.0)
        if time_s < previous_time:  # a resumed process: RLlib's window starts empty
            episodes = 0
        previous_time = time_s
        episodes += int(float(row.get("episodes") or 0))
        if row.get("win_rate") not in ("", None) and episodes >= SMOOTHING_EPISODES:
            yield row
