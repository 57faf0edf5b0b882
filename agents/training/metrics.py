"""What a training iteration reports: win rates from every episode, and the row of metrics.csv.

The original experiments logged the win rate of the first sub-environment only; here each finished
episode reports, through RLlib's custom metrics, whether it was won, overall and under its puzzle
type (a, b, c) of Section 6.2. RLlib averages them over its smoothing window of episodes and
returns them as ``result["env_runners"]["custom_metrics"]["win_mean"]`` and
``...["win/type_a_b_c_mean"]``. `metrics_row` turns a `train()` result into the row that
metrics.csv and TensorBoard get.
"""

import math
import time

from ray.rllib.callbacks.callbacks import RLlibCallback

WIN_METRIC = "win"
TYPE_METRIC_PREFIX = "win/type_"


def puzzle_type_key(puzzle_type):
    """`(3, 2, 5)` -> `"3_2_5"`, the suffix of the per-type metric name."""
    return "_".join(str(int(part)) for part in puzzle_type)


def parse_puzzle_type_key(key):
    """`"3_2_5"` -> `(3, 2, 5)`."""
    return tuple(int(part) for part in key.split("_"))


class WinRateCallbacks(RLlibCallback):
    """Records `win` (1.0 if the gem was obtained, else 0.0) and `win/type_a_b_c` per episode."""

    def on_episode_end(self, *, episode, **kwargs):
        info = episode.last_info_for() if hasattr(episode, "last_info_for") else None
        info = info or {}
        won = float(bool(info.get("is_success", False)))
        episode.custom_metrics[WIN_METRIC] = won
        if "puzzle_type" in info:
            key = TYPE_METRIC_PREFIX + puzzle_type_key(info["puzzle_type"])
            episode.custom_metrics[key] = won


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


def metrics_row(result, started_at, diagnostics=None):
    """The CSV/TensorBoard row of one `Algorithm.train()` result (plus `diagnostics`, a dict)."""
    timesteps = int(
        result.get("num_env_steps_sampled_lifetime") or result.get("timesteps_total") or 0
    )
    runners = result.get("env_runners") or {}
    learner = ((result.get("info") or {}).get("learner") or {}).get("default_policy") or {}
    stats = {**(learner.get("learner_stats") or {}), "grad_gnorm": learner.get("grad_gnorm")}
    win_rate, per_type = win_rates_from_result(result)
    row = {
        "training_iteration": int(result["training_iteration"]),
        "timesteps": timesteps,
        "time_s": round(time.time() - started_at, 3),
        "frames_per_s": round(
            float(result.get("num_env_steps_sampled_throughput_per_sec") or 0.0), 2
        ),
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
