"""Learned virtual entities appended to an entity sequence (Section 2.2)."""

import keras
from keras import constraints, initializers, ops, regularizers

from keras_simplicial import _utils


@keras.saving.register_keras_serializable(package="keras_simplicial")
class VirtualEntities(keras.layers.Layer):
    """Appends M learned entities e_{N+1}, ..., e_{N+M} to the entities e_1, ..., e_N.

    The virtual entities are the "scratch pad" of the 2-simplicial block: they are updated by the
    1-simplicial attention and their values are the only ones propagated by the 2-simplicial
    attention (eqs. update_rule_ent, 1_simp_virtual_update). The same M vectors (weights [M, D])
    are appended to every sample of the batch.

    Args:
        num_entities: M, the number of virtual entities (the paper's agent: 2).
        embeddings_initializer: initializer of the [M, D] weights.
        embeddings_regularizer: regularizer of the [M, D] weights.
        embeddings_constraint: constraint on the [M, D] weights.

    Call arguments:
        inputs: [B, N, D].

    Returns:
        [B, N + M, D], the input followed by the M virtual entities.
    """

    def __init__(
        self,
        num_entities=2,
        embeddings_initializer="glorot_uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_entities = _utils.check_positive_int("num_entities", num_entities)
        given = {
            "embeddings_initializer": (initializers, embeddings_initializer),
            "embeddings_regularizer": (regularizers, embeddings_regularizer),
            "embeddings_constraint": (constraints, embeddings_constraint),
        }
        for name, (module, value) in given.items():
            try:
                setattr(self, name, module.get(value))
            except (ValueError, TypeError):
                kind = module.__name__.rsplit(".", 1)[-1][:-1]
                raise ValueError(
                    f"`{name}` must be a Keras {kind} (an instance, a name or a config), "
                    f"received {name}={value!r}."
                ) from None

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(
                f"`inputs` must have shape [batch, entities, features] with known features, "
                f"received {input_shape}."
            )
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.num_entities, input_shape[-1]),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint,
        )

    def call(self, inputs):
        batch = ops.shape(inputs)[0]
        virtual = ops.cast(self.embeddings, inputs.dtype)
        virtual = ops.broadcast_to(
            ops.expand_dims(virtual, 0), (batch, self.num_entities, inputs.shape[-1])
        )
        return ops.concatenate([inputs, virtual], axis=1)

    def compute_output_shape(self, input_shape):
        length = input_shape[1]
        return (
            input_shape[0],
            None if length is None else length + self.num_entities,
            input_shape[2],
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_entities": self.num_entities,
                "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
                "embeddings_regularizer": regularizers.serialize(self.embeddings_regularizer),
                "embeddings_constraint": constraints.serialize(self.embeddings_constraint),
            }
        )
        return config
