"""`GreedyCheck`: the greedy win rate of a saved checkpoint, by which the best one is chosen.

A training iteration's win rate is a mean over episodes played by many versions of the weights:
on 2 cores the learner updates them about twenty times a second while the boards play. A saved
snapshot can play far worse than that mean. On the `easy` preset the simplicial agent's snapshots
alternated, from one iteration to the next, between winning every greedy episode and winning
about half of them ("go right" on nearly every tile), while the training win rate stayed at
0.96-1.0 (docs/benchmarks.md, "Snapshots churn"). So the best checkpoint is chosen by playing the
weights that were saved, greedily, on boards kept apart from those of `evaluate` (seed 0).
"""

import numpy as np

from keras_simplicial.agents.rollout import episode_outcomes
from keras_simplicial.agents.training.checkpoints import (
    keras_logits_and_values,
    saved_keras_weights,
)

# Board seeds of the check (episode k plays `reset(seed=CHECK_SEED + k)`), far from the seeds
# `evaluate` and `learning_curve` report with (0 onwards).
CHECK_SEED = 1_000_000
DEFAULT_CHECK_EPISODES = 128


class GreedyCheck:
    """Plays a checkpoint's saved weights greedily and returns the fraction of episodes won.

    Args:
        arguments: the run's `RunArguments` (agent, architecture overrides, env and its config).
        episodes: episodes per check (default 128; 64 boards at once).
        seed: the boards' seed (default `CHECK_SEED`).
    """

    def __init__(self, arguments, episodes=DEFAULT_CHECK_EPISODES, seed=CHECK_SEED):
        from keras_simplicial.agents.model.architecture import build_agent_model
        from keras_simplicial.envs import make_vector_env

        if int(episodes) < 1:
            raise ValueError(f"episodes must be >= 1, got {episodes!r}.")
        self.arguments, self.episodes, self.seed = arguments, int(episodes), int(seed)
        env = make_vector_env(arguments.env, 1, arguments.env_config)
        self.model = build_agent_model(
            arguments.agent,
            env.single_observation_space.shape,
            int(env.single_action_space.n),
            **arguments.architecture,
        )
        forward = keras_logits_and_values(self.model)  # on this process's Keras backend
        self._logits = lambda observations: np.asarray(forward(observations)[0])

    def __call__(self, checkpoint):
        self.model.set_weights(saved_keras_weights(checkpoint, self.model))  # either API stack
        outcomes = episode_outcomes(
            self._logits,
            self.arguments.env,
            self.arguments.env_config,
            self.episodes,
            num_envs=min(64, self.episodes),
            seed=self.seed,
            greedy=True,
            mask_blocked_moves=self.arguments.mask_blocked_moves,
        )
        return float(np.mean([outcome.won for outcome in outcomes]))
