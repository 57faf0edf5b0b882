"""`Iteration`: what one training iteration reports, the one format every engine returns.

    iteration = trainer.train()
    iteration.win_rate, iteration.win_rates_by_type(), iteration.learner["grad_gnorm"]
    row = metrics_row(iteration, started_at)      # metric_rows: metrics.csv and TensorBoard

The Keras engine builds it directly; the RLlib adapter converts RLlib's nested result dict into
it once, at its edge (`rllib/results.py`). metrics.csv, TensorBoard, the progress line and the
checkpoints' scoring read only this.
"""

import dataclasses
from typing import Optional

from keras_simplicial.agents.training.metric_rows import (
    ENDED_METRIC_PREFIX,
    TYPE_METRIC_PREFIX,
    WIN_METRIC,
    parse_puzzle_type_key,
)


@dataclasses.dataclass(frozen=True)
class Iteration:
    """One training iteration's report.

    Attributes:
        number: training iterations so far, this one included (restored with a checkpoint).
        timesteps: environment steps sampled over the whole run.
        frames_per_s: environment steps sampled per second during the iteration (RLlib's
            sampling rate; the Keras engine's steps over its acting and learning time;
            checkpoints and their checks not included), None where the engine says none.
        episodes: episodes that ended during the iteration.
        episode_return_mean: the mean return of the last `smoothing` episodes (the engine's
            window), None before any ended.
        episode_len_mean: their mean length, None before any ended.
        episode_means: each episode metric (`metric_rows.episode_metrics`: "win",
            "win/type_a_b_c", "ended/<outcome>", "ended/<outcome>/type_a_b_c") averaged over
            the same episodes.
        learner: the learner's statistics averaged over the iteration's updates: the losses
            (`metric_rows.LOSSES`), "grad_gnorm" (the clipped gradient's global norm), "lr" (the
            learning rate of the last update) and "grad_norm/<part>" per model part
            (`model_parts`); a statistic an engine does not report is missing.
        timings: seconds spent in each phase of the iteration ("act_s", "learn_s"), where the
            engine knows them.
    """

    number: int
    timesteps: int
    frames_per_s: Optional[float]
    episodes: int
    episode_return_mean: Optional[float] = None
    episode_len_mean: Optional[float] = None
    episode_means: dict = dataclasses.field(default_factory=dict)
    learner: dict = dataclasses.field(default_factory=dict)
    timings: dict = dataclasses.field(default_factory=dict)

    @property
    def win_rate(self):
        """The win rate over the engine's window of episodes, None before any ended."""
        return _number(self.episode_means.get(WIN_METRIC))

    def win_rates_by_type(self):
        """`{puzzle_type (a, b, c): win rate}` over the same episodes."""
        return {
            parse_puzzle_type_key(name[len(TYPE_METRIC_PREFIX) :]): float(value)
            for name, value in self.episode_means.items()
            if name.startswith(TYPE_METRIC_PREFIX) and _number(value) is not None
        }

    def ended_by(self):
        """`{column: share}` of why episodes ended: `ended/<outcome>` over all episodes and
        `ended/<outcome>/a_b_c` per puzzle type (metrics.csv's column names), sorted."""
        shares = {
            name.replace("/type_", "/"): round(float(value), 4)
            for name, value in self.episode_means.items()
            if name.startswith(ENDED_METRIC_PREFIX) and _number(value) is not None
        }
        return dict(sorted(shares.items()))


def _number(value):
    """`value` as a float, None where it is missing or NaN."""
    if value is None:
        return None
    value = float(value)
    return None if value != value else value
