"""What a training iteration reports: win rates from every episode, and the row of metrics.csv.

The original experiments logged the win rate of the first sub-environment only; here each finished
episode reports, through RLlib's custom metrics, whether it was won, overall and under its puzzle
type (a, b, c) of Section 6.2. RLlib averages them over its smoothing window of episodes and
returns them as ``result["env_runners"]["custom_metrics"]["win_mean"]`` and
``...["win/type_a_b_c_mean"]``. Each episode also reports why it ended (`OUTCOMES` of the env:
won, opened the bridge, opened another wrong box, out of steps) as ``ended/<outcome>`` and
``ended/<outcome>/type_a_b_c``, 1.0 for its outcome and 0.0 for the others, so their means are the
fraction of episodes that ended each way. `metrics_row` turns a `train()` result into the row that
metrics.csv and TensorBoard get.

Plain numpy: every engine reads it, also where neither TensorFlow nor Ray is installed
(`keras_engine`); RLlib's callback that reports the episode metrics is `metrics.WinRateCallbacks`.
"""

import math
import time

from keras_simplicial.envs import OUTCOMES

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


def ended_by_from_result(result):
    """`{column: share}` of why episodes ended, from an `Algorithm.train()` result (NaN-free):
    `ended/<outcome>` over all episodes and `ended/<outcome>/a_b_c` per puzzle type."""
    custom = (result.get("env_runners") or {}).get("custom_metrics") or {}
    shares = {}
    for name, value in custom.items():
        if name.startswith(ENDED_METRIC_PREFIX) and name.endswith("_mean") and value == value:
            column = name[: -len("_mean")].replace("/type_", "/")
            shares[column] = round(float(value), 4)
    return dict(sorted(shares.items()))


def win_rates_from_result(result):
    """`(overall, {puzzle_type: rate})` from an `Algorithm.train()` result (NaN-free)."""
    custom = (result.get("env_runners") or {}).get("custom_metrics") or {}
    overall = custom.get(WIN_METRIC + "_mean")
    per_type = {}
    for name, value in custom.items():
        if name.startswith(TYPE_METRIC_PREFIX) and name.endswith("_mean"):
            key = name[len(TYPE_METRIC_PREFIX) : -len("_mean")]
            if value == value:  # skip NaN
                per_type[parse_puzzle_type_key(key)] = float(value)
    if overall is not None and overall != overall:
        overall = None
    return overall, per_type


def metrics_row(result, started_at, diagnostics=None, since=None):
    """The CSV/TensorBoard row of one `Algorithm.train()` result (plus `diagnostics`, a dict).

    `frames_per_s` is RLlib's sampling rate during the iteration. With `since`, the
    `(environment steps, time.time())` of the previous row, `wall_frames_per_s` is the steps
    since then over the wall time since then: what the run really trains per second, checkpoints
    and their greedy checks included.
    """
    timesteps = int(
        result.get("num_env_steps_sampled_lifetime") or result.get("timesteps_total") or 0
    )
    runners = result.get("env_runners") or {}
    learner = ((result.get("info") or {}).get("learner") or {}).get("default_policy") or {}
    stats = {**(learner.get("learner_stats") or {}), "grad_gnorm": learner.get("grad_gnorm")}
    win_rate, per_type = win_rates_from_result(result)
    wall_frames_per_s = None
    if since is not None and time.time() > since[1]:
        wall_frames_per_s = (timesteps - since[0]) / (time.time() - since[1])
    row = {
        "training_iteration": int(result["training_iteration"]),
        "timesteps": timesteps,
        "time_s": round(time.time() - started_at, 3),
        "frames_per_s": round(
            float(result.get("num_env_steps_sampled_throughput_per_sec") or 0.0), 2
        ),
        "wall_frames_per_s": "" if wall_frames_per_s is None else round(wall_frames_per_s, 2),
        "episodes": int(runners.get("episodes_this_iter") or 0),
        "episode_return_mean": _finite(runners.get("episode_return_mean")),
        "episode_len_mean": _finite(runners.get("episode_len_mean")),
        "win_rate": _finite(win_rate),
        "policy_loss": _finite(stats.get("policy_loss")),
        "vf_loss": _finite(stats.get("vf_loss")),
        "entropy": _finite(stats.get("entropy")),
        "vf_explained_var": _finite(stats.get("vf_explained_var")),
        "grad_gnorm": _finite(stats.get("grad_gnorm")),
        "lr": _finite(stats.get("cur_lr")),
    }
    for name in sorted(learner):
        if name.startswith("grad_norm/"):
            row[name] = _finite(learner[name])
    for name, value in sorted((diagnostics or {}).items()):
        row[name] = _finite(value)
    for puzzle_type, rate in sorted(per_type.items()):
        row["win_rate/" + "_".join(map(str, puzzle_type))] = round(rate, 4)
    row.update(ended_by_from_result(result))
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
