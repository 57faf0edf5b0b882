"""Win-rate metrics from every episode of every environment of every env runner.

The original experiments logged the win rate of the first sub-environment only; here each finished
episode reports, through RLlib's custom metrics, whether it was won, overall and under its puzzle
type (a, b, c) of Section 6.2. RLlib averages them over its smoothing window of episodes and
returns them as ``result["env_runners"]["custom_metrics"]["win_mean"]`` and
``...["win/type_a_b_c_mean"]``.
"""

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
            key = name[len(TYPE_METRIC_PREFIX):-len("_mean")]
            if value == value:  # skip NaN
                per_type[parse_puzzle_type_key(key)] = float(value)
    if overall is not None and overall != overall:
        overall = None
    return overall, per_type
