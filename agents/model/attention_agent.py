"""An agent model that also returns its attention (Section 6.1), for analysis.

`AttentionAgent` wraps an agent model built with `return_attention_scores=True` (weights copied from
the trained model) and returns, for a batch of observations, the logits, the value and the attention
of every block iteration: 1-simplicial scores [B, heads, N+M, N+M] (query rows, key columns) and,
for the simplicial agent, 2-simplicial scores [B, heads, N, M, M] (query i, key pair (j, k)).
"""

import dataclasses

import numpy as np

from keras_simplicial.agents.model.architecture import agent_hyperparameters, build_agent_model
from keras_simplicial.agents.model.entities import entity_grid_shape


@dataclasses.dataclass
class Attention:
    """The attention of one forward pass of a batch, per block iteration.

    one_simplicial[t]: [B, heads, N+M, N+M], rows are query entities, columns key entities.
    two_simplicial[t]: [B, simplicial_heads, N, M, M] (simplicial agent; empty for relational).
    """

    one_simplicial: list
    two_simplicial: list
    num_entities: int
    num_virtual: int

    def at(self, index):
        """The attention of batch element `index`, with the batch axis dropped."""
        return Attention(
            [a[index] for a in self.one_simplicial],
            [a[index] for a in self.two_simplicial],
            self.num_entities,
            self.num_virtual,
        )


class AttentionAgent:
    """An agent model that also returns its attention (weights copied from a trained model).

    Args:
        model: the agent's functional Keras model (`build_agent_model`, outputs [logits, value]),
            e.g. `policy.model.base_model` of a loaded checkpoint.
        kind: "relational" or "simplicial".
        model_overrides: the architecture overrides the model was built with (run.json's
            `model_overrides`).
        mask_blocked_moves: whether the agent chooses among the moves the board lets through
            only (run.json's `mask_blocked_moves`); the episodes of the analysis tools are then
            played that way. The logits and probabilities returned are the model's own.
    """

    def __init__(self, model, kind, model_overrides=None, mask_blocked_moves=False):
        overrides = dict(model_overrides or {})
        self.kind = kind
        self.mask_blocked_moves = bool(mask_blocked_moves)
        self.base_model = model
        self.params = agent_hyperparameters(kind, **overrides)
        self.observation_shape = tuple(int(d) for d in model.input_shape[1:])
        self.num_actions = int(model.outputs[0].shape[-1])
        self.model = build_agent_model(
            kind,
            self.observation_shape,
            self.num_actions,
            return_attention_scores=True,
            **overrides,
        )
        source = model.get_weights()
        target = self.model.get_weights()
        if [w.shape for w in source] != [w.shape for w in target]:
            raise ValueError(
                f"the {kind} model's weights do not match an agent built with "
                f"overrides {overrides}: pass the run's model_overrides."
            )
        self.model.set_weights(source)
        rows, width = entity_grid_shape(self.observation_shape)
        self.num_entities = rows * width
        self.num_virtual = int(self.params["num_virtual_entities"]) if kind == "simplicial" else 0
        self.num_iterations = int(self.params["num_block_iterations"])
        self._forward = _compiled(self.model)
        self._forward_logits = _compiled(model)

    @property
    def board_shape(self):
        """(R, C): the board without its inventory column."""
        return self.observation_shape[0], self.observation_shape[1] - 1

    def __call__(self, observations):
        """(logits [B, A], value [B], Attention) for uint8 or float observations [B, R, C+1, 3]."""
        observations = np.asarray(observations, dtype=np.float32)
        if observations.ndim == 3:
            observations = observations[None]
        outputs = [np.asarray(o) for o in self._forward(observations)]
        logits, value, scores = outputs[0], outputs[1][:, 0], outputs[2:]
        per_iteration = 2 if self.kind == "simplicial" else 1
        one = scores[0::per_iteration]
        two = scores[1::per_iteration] if self.kind == "simplicial" else []
        return logits, value, Attention(one, two, self.num_entities, self.num_virtual)

    def logits(self, observations):
        """Only the logits [B, A], from the trained model itself (no attention computed)."""
        observations = np.asarray(observations, dtype=np.float32)
        return np.asarray(self._forward_logits(observations)[0])


def _compiled(model):
    """`model(x, training=False)` as a traced `tf.function` on TensorFlow (30x faster than eager
    calls for one observation), the plain call on other backends (on PyTorch without gradients:
    numpy cannot read a tensor that requires one)."""
    import keras

    if keras.backend.backend() == "torch":
        import torch

        def forward(x):
            with torch.no_grad():
                return [keras.ops.convert_to_numpy(o) for o in model(x, training=False)]

        return forward
    if keras.backend.backend() != "tensorflow":
        return lambda x: model(x, training=False)
    import tensorflow as tf

    return tf.function(lambda x: model(x, training=False), reduce_retracing=True)
