"""What `train` reads from an algorithm on RLlib's new API stack, in the old stack's terms.

    result = old_stack_view(algorithm.train())    # what `metrics.metrics_row` reads
    environment_steps(algorithm)                  # sampled over the whole run (restored too)
    learner = LearnerModel(algorithm, arguments)  # the learner's weights in a Keras model
    learner.refresh().model

The new stack reports other names than the old one (`result["learners"]`, the episode metrics of
`EpisodeOutcomeCallbacks` under `result["env_runners"]["custom_metrics"]`), so a run's
metrics.csv gets the same columns on both stacks where the value exists (the old stack's
`vf_explained_var` does not: RLlib's new-stack IMPALA keeps its V-trace targets inside the loss,
so that column stays empty; the per-part gradient norms come from `KerasAgentIMPALALearner`).
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import tensorflow  # noqa: E402, F401  (before RLlib: see agents/__init__.py)
from ray.rllib.core import DEFAULT_MODULE_ID  # noqa: E402
from ray.rllib.utils.metrics import (  # noqa: E402
    ENV_RUNNER_RESULTS,
    LEARNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
)

from keras_simplicial.agents.model.module_state import keras_weights  # noqa: E402
from keras_simplicial.agents.training.impala_torch import CUSTOM_METRICS  # noqa: E402

# The old stack's learner statistic <- the new stack's (IMPALA's PyTorch Learner; the losses
# are the means over the batch, as the old stack reports them).
LEARNER_STATS = {
    "policy_loss": "mean_pi_loss",
    "vf_loss": "mean_vf_loss",
    "entropy": "entropy",
    "cur_lr": "default_optimizer_learning_rate",
}
GRADIENT_NORM = "gradients_default_optimizer_global_norm"
# `KerasAgentIMPALALearner`'s `grad_norm/<part>`, under the same names on both stacks.
PART_GRADIENT_NORM = "grad_norm/"
THROUGHPUT = "num_env_steps_sampled_lifetime_throughput"


def environment_steps(algorithm):
    """Environment steps sampled over the whole run (a checkpoint restores the count)."""
    return int(
        algorithm.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
    )


def _throughput(runners):
    value = runners.get(THROUGHPUT)
    if isinstance(value, dict):  # {"throughput_since_last_reduce": ..., ...}
        value = value.get("throughput_since_last_reduce")
    return value


def old_stack_view(result):
    """A new-stack `Algorithm.train()` result with the names of the old stack's, as far as
    `metrics.metrics_row` reads them (episode and win-rate metrics, learner statistics,
    timesteps and the sampling rate)."""
    runners = result.get(ENV_RUNNER_RESULTS) or {}
    learner = (result.get(LEARNER_RESULTS) or {}).get(DEFAULT_MODULE_ID) or {}
    custom = {
        f"{'/'.join(name) if isinstance(name, tuple) else name}_mean": value
        for name, value in _flatten(runners.get(CUSTOM_METRICS) or {}).items()
    }
    return {
        "training_iteration": result["training_iteration"],
        "num_env_steps_sampled_lifetime": result.get(NUM_ENV_STEPS_SAMPLED_LIFETIME)
        or runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME),
        "num_env_steps_sampled_throughput_per_sec": _throughput(runners),
        "env_runners": {
            "episodes_this_iter": runners.get("num_episodes"),
            "episode_return_mean": runners.get("episode_return_mean"),
            "episode_len_mean": runners.get("episode_len_mean"),
            "custom_metrics": custom,
        },
        "info": {
            "learner": {
                "default_policy": {
                    "learner_stats": {old: learner.get(new) for old, new in LEARNER_STATS.items()},
                    "grad_gnorm": learner.get(GRADIENT_NORM),
                    **{
                        name: value
                        for name, value in learner.items()
                        if name.startswith(PART_GRADIENT_NORM)
                    },
                }
            }
        },
    }


def _flatten(tree, prefix=()):
    """{"win": x, "win": {"type_1_0_0": y}} style nesting -> {"win": x, "win/type_1_0_0": y}."""
    flat = {}
    for key, value in tree.items():
        path = prefix + (str(key),)
        if isinstance(value, dict):
            flat.update(_flatten(value, path))
        else:
            flat["/".join(path)] = value
    return flat


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
