"""The episodes that a batch of boards plays, step by step: what the Keras engine and the old
stack's batched runner (`batched_env_runner`) both count and report.

    episodes = BoardEpisodes(core)              # a BoxWorldCore of B boards, reset
    reward, terminated, truncated, _ = core.step(actions, autoreset=False)
    ended, reports = episodes.step(reward, terminated | truncated)
    for episode_return, episode_length, metrics in reports: ...

Plain numpy: the Keras engine counts with it where neither TensorFlow nor Ray is installed.
"""

import numpy as np

from keras_simplicial.agents.training.metric_rows import episode_metrics
from keras_simplicial.envs import OUTCOMES


class BoardEpisodes:
    """Each board's current episode on `core`: its return and its length so far.

    Attributes:
        returns: [B] float64, the reward summed over each board's current episode.
        lengths: [B] int64, the steps of each board's current episode.
    """

    def __init__(self, core):
        self.core = core
        self.returns = np.zeros(core.num_boards, np.float64)
        self.lengths = np.zeros(core.num_boards, np.int64)

    def step(self, reward, done):
        """Counts one step of every board (`reward`, `done`: [B]) and ends the episodes that
        `done` ends: their boards start new ones (`core.reset_boards`).

        Returns:
            (the indices of the ended boards, one (return, length, `episode_metrics`) per ended
            board: won or not, its puzzle type and why it ended).
        """
        self.returns += reward
        self.lengths += 1
        ended = np.flatnonzero(done)
        if not ended.size:
            return ended, []
        core = self.core
        reports = [
            (
                float(self.returns[board]),
                int(self.lengths[board]),
                episode_metrics(
                    core.is_success[board], core.puzzle_type[board], OUTCOMES[core.ended_by[board]]
                ),
            )
            for board in ended
        ]
        self.returns[ended] = 0.0
        self.lengths[ended] = 0
        core.reset_boards(ended)
        return ended, reports
