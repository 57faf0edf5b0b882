"""The relational and simplicial agents of Section 4.1 as Keras 3 functional models.

Both agents share one architecture and differ only in the Transformer block:

    obs [R, C+1, 3] / 255 (or to [-1, 1], `centre_pixels`)
      -> Conv2D(12, 2x2, relu, valid) -> Conv2D(24, 2x2, relu, valid)     [R-2, C-1, 24]
      -> Dense(62, no bias) (-> LayerNorm, `entity_norm`) ++ 2-d position code
                                                                          [R-2, C-1, 64]
      -> reshape to N = (R-2)(C-1) entities e_1..e_N of width 64         [N, 64]
      -> (simplicial only) VirtualEntities(2)                             [N+2, 64]
      -> the block, applied twice with shared weights
      -> (simplicial only) drop the virtual entities                      [N, 64]
      -> max-pool over entities                                           [64]
      -> 4 x Dense(256, relu) -> logits Dense(num_actions), value Dense(1)

The builders use only Keras 3 (`keras.ops`), so the same model runs on any backend; the RLlib
wrapper in `keras_simplicial.agents.model.rllib_model` is the TensorFlow-specific part.
"""

import keras
from keras import ops

from keras_simplicial import TransformerBlock, TwoSimplicialTransformerBlock, VirtualEntities
from keras_simplicial.agents.model.model_config import MODEL_CONFIGS, PAPER_MODEL  # noqa: F401
from keras_simplicial.agents.ranges import Boolean, Integer, OneOf, Real, Sequence, check_ranges

AGENT_KINDS = ("relational", "simplicial")
SIMPLICIAL_GAIN_INITIALIZERS = ("ones", "zeros")

# Section 4: V = R^64, two 1-simplicial heads of dim 32, one 2-simplicial head of dim 48, two
# virtual entities, a 64-wide feed-forward network, the block applied twice, 4 x 256 MLP.
# run.json records only a run's overrides of these, and every committed run and exported policy is
# rebuilt from them: they do not change (a test pins them). A new default for new runs is written
# into their run.json, as the gradient clipping's is (`run_arguments.NEW_RUN_OVERRIDES`).
PAPER_DEFAULTS = {
    "conv_filters": (12, 24),
    "entity_dim": 64,
    "num_heads": 2,
    "key_dim": 32,
    "num_simplicial_heads": 1,
    "simplicial_key_dim": 48,
    "num_virtual_entities": 2,
    "feedforward_dim": 64,
    "num_block_iterations": 2,
    "mlp_units": (256, 256, 256, 256),
    "layer_norm_epsilon": 1e-5,
    # Not the paper's: its 2-simplicial logits are unscaled (null here), which saturates the
    # joint softmax from the first step; "auto" is simplicial_key_dim^(-1) (keras_simplicial's
    # SimplicialAttention and docs/benchmarks.md, "2-simplicial attention at initialisation").
    "simplicial_logit_scale": "auto",
    # Not the paper's either: the gain on the 2-simplicial branch (LayerNorm(a2) in v') starts at
    # 0, so the agent starts as a 1-simplicial one and brings the branch in as it learns; on the
    # easy preset this found the solution in about half the steps of "ones", the paper's block
    # (studies/easy-recipe/, "A zero-initialised gain on the 2-simplicial branch").
    "simplicial_gain_initializer": "zeros",
    # Not the paper's (off here; for new runs once it holds in RL): a LayerNorm on each entity's 62
    # board features before the 2-d position code joins them. At initialisation those features
    # are small and nearly the same on every board (their root mean square 0.076, their
    # standard deviation over states about 0.02), next to a position code of norm about 1, so every
    # LayerNorm of the block rescales them by the position code's scale: the block's outputs, and
    # so the pooled vector, barely depend on the board, and Adam at 3e-4 collapses the model onto
    # the constant prediction (studies/trainability/).
    "entity_norm": False,
    # The initializer of the MLP's kernels: Keras's default, Glorot's uniform, as the paper's
    # code; "he_normal" or "he_uniform" (He et al.) keep a ReLU layer's variance (the
    # trainability screen's candidate, studies/trainability/).
    "mlp_kernel_initializer": "glorot_uniform",
    # Not the paper's (off here; for new runs once it holds in RL): pixels scaled to [-1, 1]
    # instead of the paper's [0, 1]. Every colour of the board is positive in each channel, so a
    # first convolution filter whose weights sum to a negative value on all colours is a ReLU unit
    # that is zero on every board, gets no gradient, and stays dead: 8-33% of the 12 filters at
    # initialisation, depending on the seed (studies/trainability/, "The front end").
    "centre_pixels": False,
}
MLP_KERNEL_INITIALIZERS = ("glorot_uniform", "he_normal", "he_uniform")


# The valid range of each architecture hyperparameter (`--model-config`); entity_dim holds the
# 2-d position code besides at least one feature.
MODEL_RANGES = {
    "conv_filters": Sequence(Integer(1)),
    "entity_dim": Integer(3),
    "num_heads": Integer(1),
    "key_dim": Integer(1),
    "num_simplicial_heads": Integer(1),
    "simplicial_key_dim": Integer(1),
    "num_virtual_entities": Integer(1),
    "feedforward_dim": Integer(1),
    "num_block_iterations": Integer(1),
    "mlp_units": Sequence(Integer(1)),
    "layer_norm_epsilon": Real(low=0, low_open=True),
    "entity_norm": Boolean(),
    "mlp_kernel_initializer": OneOf(MLP_KERNEL_INITIALIZERS),
    "centre_pixels": Boolean(),
}


@keras.saving.register_keras_serializable(package="keras_simplicial.agents")
class GridPositionCode(keras.layers.Layer):
    """Concatenates a 2-d position code to every cell of a feature grid (Section 4.1).

    Cell (y, x) of an [H, W] grid gets (y', x') with y' evenly spaced in [-1, 1] over the rows
    and x' evenly spaced in [-1, 1] over the columns.

    Input shape: [batch, H, W, F]. Output shape: [batch, H, W, F + 2].
    """

    def build(self, input_shape):
        height, width = input_shape[1], input_shape[2]
        if height is None or width is None:
            raise ValueError(
                f"GridPositionCode needs a static grid size, got input_shape={input_shape}."
            )
        rows = ops.linspace(-1.0, 1.0, height) if height > 1 else ops.zeros((1,))
        cols = ops.linspace(-1.0, 1.0, width) if width > 1 else ops.zeros((1,))
        grid_y = ops.repeat(ops.expand_dims(rows, 1), width, axis=1)
        grid_x = ops.repeat(ops.expand_dims(cols, 0), height, axis=0)
        self.position_code = ops.cast(ops.stack([grid_y, grid_x], axis=-1), self.compute_dtype)

    def call(self, inputs):
        batch = ops.shape(inputs)[0]
        code = ops.broadcast_to(
            ops.expand_dims(ops.cast(self.position_code, inputs.dtype), 0),
            (batch,) + tuple(self.position_code.shape),
        )
        return ops.concatenate([inputs, code], axis=-1)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (input_shape[-1] + 2,)


@keras.saving.register_keras_serializable(package="keras_simplicial.agents")
class DropVirtualEntities(keras.layers.Layer):
    """Discards the last `num_virtual_entities` entities: [B, N+M, D] -> [B, N, D]."""

    def __init__(self, num_virtual_entities, **kwargs):
        super().__init__(**kwargs)
        self.num_virtual_entities = int(num_virtual_entities)

    def call(self, inputs):
        return inputs[:, : ops.shape(inputs)[1] - self.num_virtual_entities, :]

    def compute_output_shape(self, input_shape):
        length = input_shape[1]
        return (
            input_shape[0],
            None if length is None else length - self.num_virtual_entities,
            input_shape[2],
        )

    def get_config(self):
        return {**super().get_config(), "num_virtual_entities": self.num_virtual_entities}


def agent_hyperparameters(kind, **overrides):
    """The architecture hyperparameters of `kind` (paper defaults, then `overrides`)."""
    if kind not in AGENT_KINDS:
        raise ValueError(f"kind must be one of {AGENT_KINDS}, got {kind!r}.")
    unknown = sorted(set(overrides) - set(PAPER_DEFAULTS))
    if unknown:
        raise ValueError(
            f"Unknown agent hyperparameter(s) {unknown}; accepted: {sorted(PAPER_DEFAULTS)}."
        )
    params = {**PAPER_DEFAULTS, **overrides}
    check_ranges(overrides, MODEL_RANGES, "--model-config")
    if kind == "simplicial":
        from keras_simplicial.simplicial_attention import resolve_logit_scale

        try:
            resolve_logit_scale(params["simplicial_logit_scale"], 1, 2)
        except ValueError:
            raise ValueError(
                'simplicial_logit_scale must be "auto", a number > 0 or null (the '
                f"paper's unscaled logits), got {params['simplicial_logit_scale']!r}."
            ) from None
        if params["simplicial_gain_initializer"] not in SIMPLICIAL_GAIN_INITIALIZERS:
            raise ValueError(
                f"simplicial_gain_initializer must be one of {SIMPLICIAL_GAIN_INITIALIZERS}, "
                f"got {params['simplicial_gain_initializer']!r}."
            )
    return params


def build_agent_model(
    kind, observation_shape, num_actions, return_attention_scores=False, **overrides
):
    """Builds the relational or simplicial agent of Section 4.1.

    Args:
        kind: "relational" (Transformer block) or "simplicial" (2-simplicial Transformer block
            with virtual entities).
        observation_shape: (R, C+1, 3), the board plus its inventory column.
        num_actions: number of logits.
        return_attention_scores: if True the model has two more outputs per block iteration:
            the 1-simplicial scores [B, heads, N+M, N+M] and, for the simplicial agent, the
            2-simplicial scores [B, simplicial_heads, N, M, M].
        **overrides: any key of `PAPER_DEFAULTS`.

    Returns:
        A functional `keras.Model` mapping uint8/float observations [B, R, C+1, 3] to
        `[logits [B, num_actions], value [B, 1]]` (plus scores, see above).
    """
    params = agent_hyperparameters(kind, **overrides)
    observation_shape = tuple(int(d) for d in observation_shape)
    if len(observation_shape) != 3 or min(observation_shape[:2]) < 3:
        raise ValueError(
            "observation_shape must be (rows, cols + 1, channels) with at least 3 rows and "
            f"columns, got {observation_shape}."
        )
    if int(num_actions) < 1:
        raise ValueError(f"num_actions must be a positive integer, got {num_actions!r}.")

    observations = keras.Input(shape=observation_shape, name="observations")
    if params["centre_pixels"]:
        x = keras.layers.Rescaling(2.0 / 255.0, offset=-1.0, name="scale_pixels")(observations)
    else:
        x = keras.layers.Rescaling(1.0 / 255.0, name="scale_pixels")(observations)
    for index, filters in enumerate(params["conv_filters"]):
        x = keras.layers.Conv2D(
            filters, 2, padding="valid", activation="relu", name=f"conv_{index + 1}"
        )(x)
    x = keras.layers.Dense(params["entity_dim"] - 2, use_bias=False, name="entity_projection")(x)
    if params["entity_norm"]:
        x = keras.layers.LayerNormalization(
            epsilon=params["layer_norm_epsilon"], name="entity_norm"
        )(x)
    x = GridPositionCode(name="position_code")(x)
    grid_height, grid_width = x.shape[1], x.shape[2]
    entities = keras.layers.Reshape(
        (grid_height * grid_width, params["entity_dim"]), name="entities"
    )(x)

    if kind == "relational":
        block = TransformerBlock(
            num_heads=params["num_heads"],
            key_dim=params["key_dim"],
            feedforward_dim=params["feedforward_dim"],
            layer_norm_epsilon=params["layer_norm_epsilon"],
            name="transformer_block",
        )
    else:
        entities = VirtualEntities(params["num_virtual_entities"], name="virtual_entities")(
            entities
        )
        block = TwoSimplicialTransformerBlock(
            num_virtual_entities=params["num_virtual_entities"],
            num_heads=params["num_heads"],
            key_dim=params["key_dim"],
            num_simplicial_heads=params["num_simplicial_heads"],
            simplicial_key_dim=params["simplicial_key_dim"],
            simplicial_logit_scale=params["simplicial_logit_scale"],
            simplicial_gain_initializer=params["simplicial_gain_initializer"],
            feedforward_dim=params["feedforward_dim"],
            layer_norm_epsilon=params["layer_norm_epsilon"],
            name="simplicial_block",
        )

    # "The weights are shared between iterations of the Transformer block": one instance,
    # called num_block_iterations times.
    scores = []
    for _ in range(params["num_block_iterations"]):
        if return_attention_scores:
            entities, *block_scores = block(entities, return_attention_scores=True)
            scores.extend(block_scores)
        else:
            entities = block(entities)

    if kind == "simplicial":
        entities = DropVirtualEntities(params["num_virtual_entities"], name="drop_virtual")(
            entities
        )
    x = keras.layers.GlobalMaxPooling1D(name="max_pool_entities")(entities)
    for index, units in enumerate(params["mlp_units"]):
        x = keras.layers.Dense(
            units,
            activation="relu",
            kernel_initializer=params["mlp_kernel_initializer"],
            name=f"mlp_{index + 1}",
        )(x)
    logits = keras.layers.Dense(int(num_actions), name="logits")(x)
    value = keras.layers.Dense(1, name="value")(x)
    outputs = [logits, value] + scores
    return keras.Model(observations, outputs, name=f"{kind}_agent")
