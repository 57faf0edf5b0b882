"""What each episode reports (win rates from every episode, why it ended), and the row of
metrics.csv of a training iteration.

The original experiments logged the win rate of the first sub-environment only; here each finished
episode reports whether it was won (`episode_metrics`), overall and under its puzzle type (a, b,
c) of Section 6, and why it ended (`OUTCOMES` of the env: won, opened the bridge, opened another
wrong box, out of steps) as ``ended/<outcome>`` and ``ended/<outcome>/type_a_b_c``, 1.0 for its
outcome and 0.0 for the others, so their means are the fraction of episodes that ended each way.
Every engine averages them over its window of episodes into `Iteration.episode_means`;
`metrics_row` turns an `Iteration` into the row that metrics.csv and TensorBoard get.

Plain Python: every engine reads it, also where neither TensorFlow nor Ray is installed; RLlib's
callbacks that report the episode metrics are in `rllib/callbacks.py` (old stack) and
`rllib/impala_torch.py` (new stack).
"""

import math
import time

from keras_simplicial.envs import OUTCOMES

#: The learner's losses, metrics.csv's columns of that name (`Iteration.learner`).
LOSSES = ("policy_loss", "vf_loss", "entropy", "vf_explained_var")

WIN_METRIC = "win"
TYPE_METRIC_PREFIX = "win/type_"
ENDED_METRIC_PREFIX = "ended/"


def puzzle_type_key(puzzle_type):
    """`(3, 2, 5)` -> `"3_2_5"`, the suffix of the per-type metric name."""
    return "_".join(str(int(part)) for part in puzzle_type)


def parse_puzzle_type_key(key):
    """`"3_2_5"` -> `(3, 2, 5)`."""
    return tuple(int(part) for part in key.split("_"))


def episode_metrics(won, puzzle_type=None, ended_by=None):
    """The custom metrics of one finished episode: `win`, and where known `win/type_a_b_c`,
    `ended/<outcome>` and `ended/<outcome>/type_a_b_c` (`ended_by`: one of `OUTCOMES`)."""
    won = float(bool(won))
    metrics = {WIN_METRIC: won}
    suffix = None if puzzle_type is None else "type_" + puzzle_type_key(puzzle_type)
    if suffix is not None:
        metrics[TYPE_METRIC_PREFIX + puzzle_type_key(puzzle_type)] = won
    if ended_by is not None:
        for outcome in OUTCOMES:
            share = float(outcome == ended_by)
            metrics[ENDED_METRIC_PREFIX + outcome] = share
            if suffix is not None:
                metrics[f"{ENDED_METRIC_PREFIX}{outcome}/{suffix}"] = share
    return metrics


def metrics_row(iteration, started_at, diagnostics=None, since=None):
    """The metrics.csv and TensorBoard row of one `Iteration` (plus `diagnostics`, a dict).

    `frames_per_s` is the engine's rate during the iteration (`Iteration.frames_per_s`). With
    `since`, the
    `(environment steps, time.time())` of the previous row, `wall_frames_per_s` is the steps
    since then over the wall time since then: what the run really trains per second, checkpoints
    and their greedy checks included.
    """
    timesteps = int(iteration.timesteps)
    wall_frames_per_s = None
    if since is not None and time.time() > since[1]:
        wall_frames_per_s = (timesteps - since[0]) / (time.time() - since[1])
    learner = iteration.learner
    row = {
        "training_iteration": int(iteration.number),
        "timesteps": timesteps,
        "time_s": round(time.time() - started_at, 3),
        "frames_per_s": round(float(iteration.frames_per_s or 0.0), 2),
        "wall_frames_per_s": "" if wall_frames_per_s is None else round(wall_frames_per_s, 2),
        "episodes": int(iteration.episodes or 0),
        "episode_return_mean": _finite(iteration.episode_return_mean),
        "episode_len_mean": _finite(iteration.episode_len_mean),
        "win_rate": _finite(iteration.win_rate),
        **{name: _finite(learner.get(name)) for name in LOSSES},
        "grad_gnorm": _finite(learner.get("grad_gnorm")),
        "lr": _finite(learner.get("lr")),
    }
    for name in sorted(learner):
        if name.startswith("grad_norm/"):
            row[name] = _finite(learner[name])
    for name, value in sorted((diagnostics or {}).items()):
        row[name] = _finite(value)
    for puzzle_type, rate in sorted(iteration.win_rates_by_type().items()):
        row["win_rate/" + "_".join(map(str, puzzle_type))] = round(rate, 4)
    row.update(iteration.ended_by())
    return row


def _finite(value):
    """A rounded float for the CSV, "" for missing or non-finite values (lists are averaged)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        if not value:
            return ""
        value = sum(float(v) for v in value) / len(value)
    value = float(value)
    return "" if math.isnan(value) or math.isinf(value) else round(value, 6)
