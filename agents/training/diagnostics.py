"""Why a run learns or stalls, per training iteration: gradients per part and attention health.

Two sources, both written into each metrics row (CSV and TensorBoard) by `train`:

- `DiagnosticImpalaTF2Policy`: RLlib's IMPALA policy plus the norm of the (clipped) gradient of
  each part of the agent (`grad_norm/<part>`, `model_parts.MODEL_PARTS`), so one sees whether the
  2-simplicial query and key projections (which route the attention) get any gradient at all.
- `AttentionHealth`: on a fixed probe batch of start positions, the entropy of the 2-simplicial
  scores over key pairs (as a fraction of log M^2, the uniform distribution's), the mean largest
  pair probability and the fraction of queries with > 0.99 on one pair (saturation), and the
  same entropy for the 1-simplicial scores.
"""

import numpy as np
import tensorflow as tf
from ray.rllib.algorithms.impala.impala_tf_policy import ImpalaTF2Policy

from keras_simplicial.agents.model.model_parts import model_part

SATURATION_THRESHOLD = 0.99


class DiagnosticImpalaTF2Policy(ImpalaTF2Policy):
    """IMPALA's TF2 policy whose learner stats also hold `grad_norm/<part>` per model part,
    whose optimizer state survives a restore, and whose `lr_schedule` and
    `entropy_coeff_schedule` count environment steps."""

    def on_global_var_update(self, global_vars):
        """Moves the schedules to the environment steps trained on so far.

        RLlib's old-stack IMPALA passes the steps *trained* as `timestep`, and its learner
        counts a batch once per pass: with `num_epochs: 2`, a schedule written in environment
        steps would run twice as fast. `timestep` is divided by `num_epochs` here, so
        `[[0, 5e-4], [600_000, 5e-5]]` reaches 5e-5 after 600,000 environment steps.
        """
        passes = max(1, int(self.config.get("num_epochs") or 1))
        if passes > 1 and "timestep" in global_vars:
            global_vars = {**global_vars, "timestep": global_vars["timestep"] // passes}
        super().on_global_var_update(global_vars)

    def set_state(self, state):
        """Restores the optimizer's slots too, which RLlib 2.60 silently skips on a new policy.

        RLlib zips the saved optimizer variables with the optimizer's, and Keras creates the
        slots at the first update (before it, only the step counter exists): a restored run
        started RMSProp's mean squares from zero, so its first updates were up to ~10x larger
        than before the restore (RMSProp has no bias correction) and knocked a solved policy
        down to a win rate of 0.03 for a few iterations. The slots are created here, in the
        order of the first update (the model's trainable variables).
        """
        saved = state.get("_optimizer_variables") or []
        # A new optimizer holds only its step counter until its first update.
        if saved and self._optimizer is not None and len(self._optimizer.variables()) < len(saved):
            variables = self.model.trainable_variables()
            if hasattr(self._optimizer, "build"):
                self._optimizer.build(variables)
            else:
                self._optimizer._create_all_weights(variables)
            current = self._optimizer.variables()
            shapes = [tuple(v.shape) for v in current]
            if shapes != [tuple(np.shape(v)) for v in saved]:
                raise ValueError(
                    "The checkpoint's optimizer state does not match this policy's "
                    f"optimizer ({len(saved)} saved variables, {len(current)} "
                    "created): was it trained with another opt_type or model?"
                )
        super().set_state(state)

    def grad_stats_fn(self, train_batch, grads):
        stats = dict(super().grad_stats_fn(train_batch, grads))
        if grads and isinstance(grads[0], (list, tuple)):  # one list per loss: the first
            grads = grads[0]
        variables = self.model.trainable_variables()
        parts = {}
        for gradient, variable in zip(grads, variables):
            if gradient is not None:
                parts.setdefault(model_part(variable.name), []).append(gradient)
        for part, gradients in parts.items():
            stats[f"grad_norm/{part}"] = tf.linalg.global_norm(gradients)
        return stats


def score_statistics(scores, axes):
    """(normalised entropy, mean max probability, saturated fraction) of distributions on `axes`.

    `scores` holds probabilities summing to 1 over `axes`; the entropy is divided by the log of
    the number of outcomes (1.0 = uniform, 0.0 = one outcome).
    """
    scores = np.asarray(scores, np.float64)
    outcomes = int(np.prod([scores.shape[a] for a in axes]))
    entropy = -np.sum(scores * np.log(np.maximum(scores, 1e-30)), axis=axes)
    largest = np.max(scores, axis=axes)
    normalised = entropy / np.log(outcomes) if outcomes > 1 else np.zeros_like(entropy)
    return (
        float(np.mean(normalised)),
        float(np.mean(largest)),
        float(np.mean(largest > SATURATION_THRESHOLD)),
    )


class AttentionHealth:
    """Attention statistics of an agent on a fixed probe batch, refreshed from its weights.

    Args:
        model: the agent's Keras model (`policy.model.base_model`).
        kind: "relational" or "simplicial".
        architecture: the architecture overrides of the run (`RunArguments.architecture`).
        env_id, env_config: the environment the probe positions come from.
        num_boards: probe batch size; seed: the probe puzzles' seed.
    """

    def __init__(self, model, kind, architecture, env_id, env_config, num_boards=64, seed=0):
        from keras_simplicial.agents.model.attention_agent import AttentionAgent
        from keras_simplicial.envs import make_vector_env

        self.agent = AttentionAgent(model, kind, architecture)
        env = make_vector_env(env_id, num_boards, env_config, copy=False)
        env.reset(seed=seed)
        self.observations = env.core.obs.copy()

    def __call__(self):
        """A dict of statistics, averaged over block iterations (`attention/...` keys)."""
        self.agent.model.set_weights(self.agent.base_model.get_weights())
        _, _, attention = self.agent(self.observations)
        stats = {}
        one = [score_statistics(s, axes=(-1,)) for s in attention.one_simplicial]
        stats["attention/one_simplicial_entropy"] = float(np.mean([s[0] for s in one]))
        if attention.two_simplicial:
            two = [score_statistics(s, axes=(-2, -1)) for s in attention.two_simplicial]
            stats["attention/simplicial_entropy"] = float(np.mean([s[0] for s in two]))
            stats["attention/simplicial_max_prob"] = float(np.mean([s[1] for s in two]))
            stats["attention/simplicial_saturated"] = float(np.mean([s[2] for s in two]))
        return stats
