"""`WinRateCallbacks`: the episode metrics of `metric_rows` (win, per puzzle type, why it ended)
reported through RLlib's custom metrics by RLlib's own sampler (the old API stack).

Every old-stack checkpoint pickles `WinRateCallbacks` under its module's name
(`keras_simplicial.agents.MOVED_MODULES` keeps the earlier names importable).
"""

import tensorflow  # noqa: F401  (before RLlib: see agents/__init__.py)
from ray.rllib.callbacks.callbacks import RLlibCallback

from keras_simplicial.agents.training.metric_rows import episode_metrics


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
