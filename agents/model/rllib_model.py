"""The Keras 3 agent models of `architecture.py` wrapped as RLlib `TFModelV2`s (old API stack).

Three facts of RLlib 2.60 with TensorFlow 2.21 and Keras 3, found when this wrapper was written,
are handled here:

1. RLlib's `try_import_tf` calls `tf.compat.v1.disable_v2_behavior()` in any worker process that
   imports RLlib before TensorFlow. Keras 3 needs v2 tensor shapes (it trips over v1 `Dimension`
   objects), so `ensure_tf2_behavior()` switches them back on before a model is built.
2. RLlib's optimizer and weight sync read `TFModelV2.variables()`. A Keras 3 model holds
   `keras.Variable`s; we expose the `tf.Variable` behind each one, so gradients, `get_weights` and
   `set_weights` reach exactly the variables the forward pass reads.
3. Rollout workers must act with the learner's latest weights: since (2) returns the same
   variables the model computes with, RLlib's `set_weights` is enough (a test checks it).
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402  (after the environment variable)
from ray.rllib.models import ModelCatalog  # noqa: E402
from ray.rllib.models.tf.tf_modelv2 import TFModelV2  # noqa: E402
from ray.rllib.policy.view_requirement import ViewRequirement  # noqa: E402

from keras_simplicial.agents.model.architecture import AGENT_KINDS, build_agent_model  # noqa: E402
from keras_simplicial.agents.model.model_config import split_model_config  # noqa: E402
from keras_simplicial.agents.rollout import BLOCKED_MOVE_LOGIT  # noqa: E402

MODEL_NAMES = {kind: f"{kind}_agent" for kind in AGENT_KINDS}
#: The `custom_model_config` key of `RunArguments.mask_blocked_moves`, and the sample batch column
#: that then holds each step's allowed moves ([B, A], 1.0 allowed, 0.0 blocked), which the
#: `BatchedEnvRunner` writes.
MASK_BLOCKED_MOVES = "mask_blocked_moves"
ALLOWED_MOVES = "allowed_moves"


def ensure_tf2_behavior():
    """Undo what `disable_v2_behavior()` does to shapes and execution, as Keras 3 needs."""
    tf.compat.v1.enable_v2_tensorshape()
    if not tf.executing_eagerly():
        tf.compat.v1.enable_eager_execution()


def _tf_variable(keras_variable):
    """The `tf.Variable` that backs a Keras 3 variable on the TensorFlow backend."""
    value = getattr(keras_variable, "value", keras_variable)
    if not isinstance(value, tf.Variable):
        raise TypeError(
            f"Expected a TensorFlow-backed variable, got {type(value).__name__}; the agents need "
            "KERAS_BACKEND=tensorflow."
        )
    return value


class KerasAgentModel(TFModelV2):
    """A relational or simplicial agent (Section 4.1) as an RLlib `TFModelV2`.

    `model_config["custom_model_config"]` takes any architecture override accepted by
    `build_agent_model` (e.g. `{"num_heads": 4}`), `kind` ("relational" or "simplicial")
    where the registered subclass does not fix it, `jit_compile` (default True: the model's
    forward pass, and so its gradient, is compiled by XLA, which fuses the attention blocks'
    many small ops; False keeps TensorFlow's graph executor) and `mask_blocked_moves` (default
    False: with True the model asks for the `ALLOWED_MOVES` column and gives every blocked move
    the logit `BLOCKED_MOVE_LOGIT`, so the policy, its log-probabilities and its entropy are
    those over the allowed moves only).
    """

    kind = None

    def __init__(self, obs_space, action_space, num_outputs, model_config, name, **kwargs):
        super().__init__(obs_space, action_space, num_outputs, model_config, name)
        ensure_tf2_behavior()
        custom = dict(model_config.get("custom_model_config") or {})
        custom.update(kwargs)
        kind = custom.pop("kind", None) or self.kind
        self.mask_blocked_moves = custom.pop(MASK_BLOCKED_MOVES, False)
        if not isinstance(self.mask_blocked_moves, bool):
            raise ValueError(
                f"custom_model_config[{MASK_BLOCKED_MOVES!r}] must be true or false, got "
                f"{self.mask_blocked_moves!r}."
            )
        custom, jit_compile = split_model_config(custom, "custom_model_config")
        if kind not in AGENT_KINDS:
            raise ValueError(
                f"custom_model_config['kind'] must be one of {AGENT_KINDS}, got {kind!r}."
            )
        self.kind = kind
        self.base_model = build_agent_model(kind, obs_space.shape, num_outputs, **custom)
        # RLlib also calls the model outside its traced functions (e.g. for the bootstrap value
        # at the end of every rollout fragment); eager Keras would cost ~70 ms a call there.
        # Inside RLlib's own traced functions the call stays one XLA cluster (one compilation per
        # batch size: the env runners' and the learner's).
        self._traced_model = tf.function(
            self.base_model,
            jit_compile=jit_compile,
            input_signature=[tf.TensorSpec((None,) + tuple(obs_space.shape), tf.float32)],
        )
        self._value_out = None
        if self.mask_blocked_moves:
            self.view_requirements[ALLOWED_MOVES] = ViewRequirement(
                ALLOWED_MOVES, space=gym.spaces.Box(0.0, 1.0, (num_outputs,), np.float32)
            )

    def forward(self, input_dict, state, seq_lens):
        observations = tf.cast(input_dict["obs"], tf.float32)
        logits, value = self._traced_model(observations)
        if self.mask_blocked_moves:
            logits = masked_logits(logits, input_dict[ALLOWED_MOVES])
        self._value_out = tf.reshape(value, [-1])
        return logits, state

    def value_function(self):
        return self._value_out

    def logits_and_values(self, observations):
        """`(logits [B, num_outputs], value [B, 1])` of a batch of raw (uint8) observations: the
        unmasked logits (with `mask_blocked_moves`, mask them with `masked_logits` or
        `rollout.mask_logits`)."""
        return self._traced_model(tf.cast(observations, tf.float32))

    def variables(self, as_dict=False):
        return self._tf_variables(self.base_model.weights, as_dict)

    def trainable_variables(self, as_dict=False):
        return self._tf_variables(self.base_model.trainable_weights, as_dict)

    @staticmethod
    def _tf_variables(keras_variables, as_dict):
        if as_dict:
            return {v.path: _tf_variable(v) for v in keras_variables}
        return [_tf_variable(v) for v in keras_variables]


def masked_logits(logits, allowed):
    """`logits` [B, A] with every move not `allowed` ([B, A], nonzero: allowed) set to
    `BLOCKED_MOVE_LOGIT` (no gradient reaches a blocked move's logit)."""
    blocked = tf.fill(tf.shape(logits), tf.constant(BLOCKED_MOVE_LOGIT, logits.dtype))
    return tf.where(tf.cast(allowed, tf.bool), logits, blocked)


class RelationalAgentModel(KerasAgentModel):
    """The relational agent: two iterations of the Transformer block."""

    kind = "relational"


class SimplicialAgentModel(KerasAgentModel):
    """The simplicial agent: two iterations of the 2-simplicial Transformer block."""

    kind = "simplicial"


def register_agent_models():
    """Registers `relational_agent` and `simplicial_agent` in RLlib's `ModelCatalog`."""
    ModelCatalog.register_custom_model(MODEL_NAMES["relational"], RelationalAgentModel)
    ModelCatalog.register_custom_model(MODEL_NAMES["simplicial"], SimplicialAgentModel)
    return dict(MODEL_NAMES)


register_agent_models()
