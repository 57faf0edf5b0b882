"""What the trainer reads from an algorithm on RLlib's new API stack besides its results
(`results.new_stack_iteration`): its environment steps and its learner's weights.

    environment_steps(algorithm)                  # sampled over the whole run (restored too)
    learner = LearnerModel(algorithm, arguments)  # the learner's weights in a Keras model
    learner.refresh().model
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import tensorflow  # noqa: E402, F401  (before RLlib: see agents/__init__.py)
from ray.rllib.core import DEFAULT_MODULE_ID  # noqa: E402
from ray.rllib.utils.metrics import (  # noqa: E402
    ENV_RUNNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
)

from keras_simplicial.agents.model.module_state import keras_weights  # noqa: E402


def environment_steps(algorithm):
    """Environment steps sampled over the whole run (a checkpoint restores the count)."""
    return int(
        algorithm.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
    )


class LearnerModel:
    """A Keras model of the run's agent that holds the learner's weights when refreshed (for
    the attention statistics of every metrics row), on this process's Keras backend.

    Args:
        algorithm: a new-stack algorithm of `torch_impala_config`.
        arguments: its run's `RunArguments`.
    """

    def __init__(self, algorithm, arguments):
        from keras_simplicial.agents.model.architecture import build_agent_model
        from keras_simplicial.envs import make_vector_env

        self.algorithm = algorithm
        env = make_vector_env(arguments.env, 1, arguments.env_config)
        self.model = build_agent_model(
            arguments.agent,
            env.single_observation_space.shape,
            int(env.single_action_space.n),
            **arguments.architecture,
        )
        self.refresh()

    def refresh(self):
        """Copies the learner's current weights into `model`; returns self."""
        state = self.algorithm.learner_group.get_weights(module_ids=[DEFAULT_MODULE_ID])
        self.model.set_weights(keras_weights(state[DEFAULT_MODULE_ID], self.model))
        return self
