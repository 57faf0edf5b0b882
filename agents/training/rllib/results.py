"""RLlib's result of `Algorithm.train()` as an `Iteration`: the adapter's one conversion.

    iteration = old_stack_iteration(algorithm.train())      # the old API stack
    iteration = new_stack_iteration(algorithm.train())      # the new API stack

The two stacks report under other names: the old one its episode metrics as RLlib custom metrics
(`result["env_runners"]["custom_metrics"]["win_mean"]`, from `callbacks.WinRateCallbacks`) and its
learner statistics under `result["info"]["learner"]["default_policy"]`; the new one its episode
metrics under `result["env_runners"]["custom_metrics"]` as a nested tree
(`impala_torch.EpisodeOutcomeCallbacks`) and its learner statistics under
`result["learners"]["default_policy"]`. The new stack's IMPALA keeps its V-trace targets inside
the loss, so it reports no `vf_explained_var`; the per-part gradient norms come from
`torch_learner.KerasAgentIMPALALearner` on the new stack and `DiagnosticImpalaTF2Policy` on the
old one, under the same names.
"""

from keras_simplicial.agents.training.iteration import Iteration

#: The custom metrics' suffix: RLlib's old stack reports the mean of each over its window.
MEAN = "_mean"
#: `Iteration.learner`'s names <- the old stack's learner statistics.
OLD_STACK_LEARNER = {
    "policy_loss": "policy_loss",
    "vf_loss": "vf_loss",
    "entropy": "entropy",
    "vf_explained_var": "vf_explained_var",
    "lr": "cur_lr",
}
#: `Iteration.learner`'s names <- the new stack's (IMPALA's PyTorch Learner; the losses are the
#: means over the batch, as the old stack reports them).
NEW_STACK_LEARNER = {
    "policy_loss": "mean_pi_loss",
    "vf_loss": "mean_vf_loss",
    "entropy": "entropy",
    "lr": "default_optimizer_learning_rate",
    "grad_gnorm": "gradients_default_optimizer_global_norm",
}
PART_GRADIENT_NORM = "grad_norm/"
NEW_STACK_THROUGHPUT = "num_env_steps_sampled_lifetime_throughput"


def old_stack_iteration(result):
    """The `Iteration` of an old-stack `Algorithm.train()` result."""
    runners = result.get("env_runners") or {}
    custom = runners.get("custom_metrics") or {}
    policy = ((result.get("info") or {}).get("learner") or {}).get("default_policy") or {}
    stats = policy.get("learner_stats") or {}
    learner = {name: stats.get(old) for name, old in OLD_STACK_LEARNER.items()}
    learner["grad_gnorm"] = policy.get("grad_gnorm")
    learner.update(_part_norms(policy))
    return Iteration(
        number=int(result["training_iteration"]),
        timesteps=int(
            result.get("num_env_steps_sampled_lifetime") or result.get("timesteps_total") or 0
        ),
        frames_per_s=result.get("num_env_steps_sampled_throughput_per_sec"),
        episodes=int(runners.get("episodes_this_iter") or 0),
        episode_return_mean=runners.get("episode_return_mean"),
        episode_len_mean=runners.get("episode_len_mean"),
        episode_means={
            name[: -len(MEAN)]: value for name, value in custom.items() if name.endswith(MEAN)
        },
        learner={name: value for name, value in learner.items() if value is not None},
    )


def new_stack_iteration(result):
    """The `Iteration` of a new-stack `Algorithm.train()` result."""
    import tensorflow  # noqa: F401  (before RLlib: see agents/__init__.py)
    from ray.rllib.core import DEFAULT_MODULE_ID
    from ray.rllib.utils.metrics import (
        ENV_RUNNER_RESULTS,
        LEARNER_RESULTS,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
    )

    from keras_simplicial.agents.training.rllib.impala_torch import CUSTOM_METRICS

    runners = result.get(ENV_RUNNER_RESULTS) or {}
    policy = (result.get(LEARNER_RESULTS) or {}).get(DEFAULT_MODULE_ID) or {}
    learner = {name: policy.get(new) for name, new in NEW_STACK_LEARNER.items()}
    learner.update(_part_norms(policy))
    throughput = runners.get(NEW_STACK_THROUGHPUT)
    if isinstance(throughput, dict):  # {"throughput_since_last_reduce": ..., ...}
        throughput = throughput.get("throughput_since_last_reduce")
    return Iteration(
        number=int(result["training_iteration"]),
        timesteps=int(
            result.get(NUM_ENV_STEPS_SAMPLED_LIFETIME)
            or runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME)
            or 0
        ),
        frames_per_s=throughput,
        episodes=int(runners.get("num_episodes") or 0),
        episode_return_mean=runners.get("episode_return_mean"),
        episode_len_mean=runners.get("episode_len_mean"),
        episode_means=_flatten(runners.get(CUSTOM_METRICS) or {}),
        learner={name: value for name, value in learner.items() if value is not None},
    )


def _part_norms(statistics):
    return {
        name: value for name, value in statistics.items() if name.startswith(PART_GRADIENT_NORM)
    }


def _flatten(tree, prefix=()):
    """{"win": x, "ended": {"won": {"type_1_0_0": y}}} -> {"win": x, "ended/won/type_1_0_0": y}
    (keys that are tuples are joined the same way)."""
    flat = {}
    for key, value in tree.items():
        path = prefix + (tuple(map(str, key)) if isinstance(key, tuple) else (str(key),))
        if isinstance(value, dict):
            flat.update(_flatten(value, path))
        else:
            flat["/".join(path)] = value
    return flat
