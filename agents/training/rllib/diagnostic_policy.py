"""`DiagnosticImpalaTF2Policy`: RLlib's IMPALA TF2 policy (the old API stack) plus the norm of the
(clipped) gradient of each part of the agent (`grad_norm/<part>`, `model_parts.MODEL_PARTS`), so
one sees whether the 2-simplicial query and key projections (which route the attention) get any
gradient at all; its optimizer state survives a restore and its schedules count environment
steps. The attention statistics of every metrics row are `attention_health.AttentionHealth`'s.
"""

import numpy as np
import tensorflow as tf
from ray.rllib.algorithms.impala.impala_tf_policy import ImpalaTF2Policy

from keras_simplicial.agents.model.model_parts import model_part


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
