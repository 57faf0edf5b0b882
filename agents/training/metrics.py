"""`WinRateCallbacks`: the episode metrics of `metric_rows` (win, per puzzle type, why it ended)
reported through RLlib's custom metrics by RLlib's own sampler.

Every name of `metric_rows` imports from here too. `WinRateCallbacks` stays under this module's
name: every old-stack checkpoint pickles it so.
"""

import tensorflow  # noqa: F401  (before RLlib: see agents/__init__.py)
from ray.rllib.callbacks.callbacks import RLlibCallback

from keras_simplicial.agents.training.metric_rows import (  # noqa: F401  (imported from here)
    ENDED_METRIC_PREFIX,
    TYPE_METRIC_PREFIX,
    WIN_METRIC,
    ended_by_from_result,
    episode_metrics,
    metrics_row,
    parse_puzzle_type_key,
    puzzle_type_key,
    win_rates_from_result,
)


class WinRateCallbacks(RLlibCallback):
    """Records `episode_metrics` of each episode from its last info (RLlib's own sampler)."""

    def on_episode_end(self, *, episode, **kwargs):
        info = episode.last_info_for() if hasattr(episode, "last_info_for") else None
        info = info or {}
        episode.custom_metrics.update(
            episode_metrics(
                info.get("is_success", False), info.get("puzzle_type"), info.get("ended_by")
            )
        )
