"""A `.keras` model saved by an earlier version of the layers still loads, with equal outputs.

`data/weight_options.keras` and `data/weight_options.npz` (its inputs and outputs) were written by
`_model()` below with the layers as they were before their weight options moved to one home
(`keras_simplicial/_weight_options.py`; commit ebbc73f of main), by

    model = _model(); model.save("weight_options.keras")
    np.savez("weight_options.npz", inputs=INPUTS, outputs=model(INPUTS))

Every layer sets every weight option away from its default, so a renamed, dropped or re-encoded
option in `get_config` or `from_config` fails here.
"""

import os

import keras
import numpy as np
import pytest

from keras_simplicial import (
    DotProductAttention,
    SimplicialAttention,
    TransformerBlock,
    TwoSimplicialTransformerBlock,
    VirtualEntities,
)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
INPUTS = np.random.default_rng(0).normal(size=(2, 5, 8)).astype("float32")


def _options(seed):
    return {
        "use_bias": True,
        "kernel_initializer": keras.initializers.RandomNormal(stddev=0.3, seed=seed),
        "bias_initializer": keras.initializers.RandomUniform(-0.2, 0.2, seed=seed + 1),
        "kernel_regularizer": keras.regularizers.L2(1e-3),
        "bias_regularizer": keras.regularizers.L1(1e-4),
        "kernel_constraint": keras.constraints.MaxNorm(3.0),
        "bias_constraint": keras.constraints.NonNeg(),
        "seed": seed,
    }


def _model():
    inputs = keras.Input((5, 8))
    x = VirtualEntities(2, name="virtual")(inputs)
    x = TwoSimplicialTransformerBlock(
        num_heads=2,
        key_dim=4,
        simplicial_key_dim=4,
        feedforward_dim=8,
        name="simplicial_block",
        **_options(1),
    )(x)
    x = TwoSimplicialTransformerBlock(
        num_heads=1,
        key_dim=4,
        simplicial_key_dim=3,
        feedforward_dim=8,
        simplicial_form="trilinear",
        name="trilinear_block",
        **_options(3),
    )(x)
    x = TransformerBlock(num_heads=2, key_dim=4, feedforward_dim=8, name="block", **_options(5))(x)
    a = DotProductAttention(num_heads=2, key_dim=3, name="dot", **_options(7))(x, x)
    b = SimplicialAttention(num_heads=2, key_dim=3, name="simplicial", **_options(9))(x, x)
    c = SimplicialAttention(
        num_heads=1, key_dim=3, order=3, form="trilinear", name="trilinear", **_options(11)
    )(x, x)
    outputs = keras.layers.Concatenate()([a, b, c])
    return keras.Model(inputs, outputs)


def test_model_saved_before_the_weight_options_moved_loads_with_equal_outputs():
    loaded = keras.models.load_model(os.path.join(DATA, "weight_options.keras"))
    saved = np.load(os.path.join(DATA, "weight_options.npz"))
    np.testing.assert_array_equal(saved["inputs"], INPUTS)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(loaded(INPUTS)), saved["outputs"], rtol=1e-5, atol=1e-6
    )
    # The loaded layers' configurations are those the current code writes for the same model.
    fresh = _model()
    names = ("simplicial_block", "trilinear_block", "block", "dot", "simplicial", "trilinear")
    for name in names:
        assert loaded.get_layer(name).get_config() == fresh.get_layer(name).get_config(), name


@pytest.mark.parametrize("layer", [DotProductAttention, SimplicialAttention, TransformerBlock])
@pytest.mark.parametrize(
    "name,value",
    [
        ("kernel_initializer", "no_such_initializer"),
        ("bias_regularizer", "no_such_regularizer"),
        ("kernel_constraint", 3),
        ("dropout", 1.0),
    ],
)
def test_bad_weight_options_name_the_argument(layer, name, value):
    with pytest.raises(ValueError, match=name):
        layer(**{name: value})


def test_blocks_hand_their_weight_options_to_every_sublayer():
    block = TwoSimplicialTransformerBlock(name="b", **_options(1))
    expected = block.sublayer_kwargs()
    for sublayer in (block.attention, block.simplicial_attention):
        config = sublayer.get_config()
        assert all(config[key] == value for key, value in expected.items() if key != "dtype")
    dense = block._dense(4, "d").get_config()
    assert all(dense[key] == value for key, value in block.dense_kwargs().items() if key != "dtype")
