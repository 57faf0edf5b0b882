"""Grouped key/value heads (`num_key_value_heads`): equal to repeating each group's key and value
projections, on every path (dense, tiled, windowed, causal), both forms, every order."""

import keras
import numpy as np
import pytest
from grouped_heads import copy_as_full_heads, repeat_groups

from keras_simplicial import SimplicialAttention, TwoSimplicialTransformerBlock

RNG = np.random.default_rng(0)


def pair(**options):
    """(grouped layer with 2 key/value heads for 4 query heads, the full layer equal to it)."""
    grouped = SimplicialAttention(num_heads=4, num_key_value_heads=2, key_dim=3, **options)
    full = SimplicialAttention(num_heads=4, key_dim=3, **options)
    return grouped, full


@pytest.mark.parametrize("form", ["scalar_product", "trilinear"])
@pytest.mark.parametrize(
    "path",
    [
        {"tile_size": None},
        {"tile_size": 2},
        {"tile_size": None, "order": 3},
        {"tile_size": 2, "order": 3},
        {"window": (3, 2)},
        {"use_bias": True, "bias_initializer": "random_normal"},
    ],
    ids=["dense", "tiled", "order-3", "order-3-tiled", "windowed", "biases"],
)
@pytest.mark.parametrize("causal", [False, True])
def test_grouped_heads_equal_repeated_projections(form, path, causal):
    grouped, full = pair(form=form, **path)
    x = RNG.normal(size=(2, 6, 5)).astype("float32")
    grouped(x, x)
    full(x, x)
    copy_as_full_heads(grouped, full)
    kwargs = {"use_causal_mask": causal} if "window" not in path else {}
    expected, expected_scores = full(x, x, return_attention_scores=True, **kwargs)
    out, scores = grouped(x, x, return_attention_scores=True, **kwargs)
    np.testing.assert_allclose(np.asarray(out), np.asarray(expected), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(scores), np.asarray(expected_scores), atol=1e-6)


def test_grouped_heads_have_smaller_projections():
    grouped, full = pair()
    x = RNG.normal(size=(1, 4, 5)).astype("float32")
    grouped(x, x)
    full(x, x)
    assert tuple(grouped.key_kernels[0].shape) == (5, 2 * 3)
    assert tuple(grouped.value_kernel.shape) == (5, 2 * 3)
    assert tuple(grouped.query_kernel.shape) == (5, 4 * 3)
    assert tuple(grouped.B.shape) == tuple(full.B.shape)  # one B per query head
    assert grouped.count_params() < full.count_params()


def test_query_heads_share_their_groups_key_value_head_in_order():
    kernel = np.arange(2 * 4).reshape(1, 8)  # 2 heads of width 4
    expected = [0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7]
    assert repeat_groups(kernel, 2, 4).tolist() == [expected]


def test_num_key_value_heads_must_divide_num_heads():
    with pytest.raises(ValueError, match="multiple of `num_key_value_heads`"):
        SimplicialAttention(num_heads=4, num_key_value_heads=3)
    with pytest.raises(ValueError, match="`num_key_value_heads` must be a positive integer"):
        SimplicialAttention(num_heads=4, num_key_value_heads=0)


def test_the_config_round_trips_and_old_configs_load():
    layer = SimplicialAttention(num_heads=4, num_key_value_heads=1, key_dim=3)
    config = layer.get_config()
    assert config["num_key_value_heads"] == 1
    assert SimplicialAttention.from_config(config).num_key_value_heads == 1
    del config["num_key_value_heads"]  # a layer saved before the argument existed
    assert SimplicialAttention.from_config(config).num_key_value_heads is None


@pytest.mark.parametrize("virtual", [2, 0])
def test_the_block_takes_grouped_heads_and_saves_them(tmp_path, virtual):
    options = dict(num_heads=2, key_dim=4, num_simplicial_heads=4, simplicial_key_dim=3)
    window = {} if virtual else {"simplicial_window": (3, 3)}
    grouped = TwoSimplicialTransformerBlock(
        num_virtual_entities=virtual, num_simplicial_key_value_heads=2, **options, **window
    )
    full = TwoSimplicialTransformerBlock(num_virtual_entities=virtual, **options, **window)
    e = RNG.normal(size=(2, 7, 8)).astype("float32")
    grouped(e)
    full(e)
    # Every weight but the 2-simplicial attention's is the same in both blocks.
    for g, f in zip(grouped.weights, full.weights):
        if "simplicial_attention" not in g.path:
            f.assign(np.asarray(g))
    copy_as_full_heads(grouped.simplicial_attention, full.simplicial_attention)
    np.testing.assert_allclose(np.asarray(grouped(e)), np.asarray(full(e)), rtol=1e-5, atol=1e-6)
    inputs = keras.Input((7, 8))
    model = keras.Model(inputs, grouped(inputs))
    path = tmp_path / "grouped.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.layers[1].num_simplicial_key_value_heads == 2
    np.testing.assert_allclose(np.asarray(loaded(e)), np.asarray(model(e)), atol=1e-6)
