"""Decoding with caches (`initial_cache`, `cache=`, `cache_update_index=`): a step of one position
equals the full causal (or windowed) pass at that position, on every attention and both blocks."""

import numpy as np
import pytest

from keras_simplicial import (
    DotProductAttention,
    SimplicialAttention,
    TransformerBlock,
    TwoSimplicialTransformerBlock,
)

RNG = np.random.default_rng(0)
LENGTH = 9


def step_by_step(layer, x, prefill=0):
    """The outputs of `layer` fed `x` through its cache: the first `prefill` positions in one
    call, then one position a call."""
    cache = layer.initial_cache(len(x), LENGTH)
    outputs = []
    if prefill:
        out, cache = layer(x[:, :prefill], x[:, :prefill], cache=cache, cache_update_index=0)
        outputs.append(np.asarray(out))
    for i in range(prefill, x.shape[1]):
        out, cache = layer(x[:, i : i + 1], x[:, i : i + 1], cache=cache, cache_update_index=i)
        outputs.append(np.asarray(out))
    return np.concatenate(outputs, axis=1), cache


@pytest.mark.parametrize("form", ["scalar_product", "trilinear"])
@pytest.mark.parametrize(
    "options",
    [{}, {"order": 3}, {"num_key_value_heads": 1}, {"tile_size": 3}, {"window": (3, 2)}],
    ids=["pairs", "order-3", "grouped", "tiled", "windowed"],
)
@pytest.mark.parametrize("prefill", [0, 4])
def test_a_cached_step_equals_the_full_pass(form, options, prefill):
    if prefill and "window" in options:
        pytest.skip("a windowed cache takes one position a call")
    layer = SimplicialAttention(num_heads=2, key_dim=3, form=form, **options)
    x = RNG.normal(size=(2, LENGTH, 5)).astype("float32")
    full = np.asarray(layer(x, x, use_causal_mask="window" not in options))
    stepped, cache = step_by_step(layer, x, prefill)
    np.testing.assert_allclose(stepped, full, rtol=1e-5, atol=1e-5)
    # The cache holds the grouped key/value heads, and with a window only the window.
    heads = options.get("num_key_value_heads", 2)
    length = max(options["window"]) if "window" in options else LENGTH
    assert tuple(cache[0].shape) == (2, length, heads * 3)


def test_a_windowed_cache_does_not_grow_with_the_sequence():
    layer = SimplicialAttention(num_heads=1, key_dim=3, window=(4, 2))
    assert layer.cache_length(10) == layer.cache_length(100_000) == 4
    assert SimplicialAttention(num_heads=1, key_dim=3).cache_length(100) == 100


def test_the_dot_product_attention_decodes_too():
    layer = DotProductAttention(num_heads=2, key_dim=3)
    x = RNG.normal(size=(2, LENGTH, 5)).astype("float32")
    full = np.asarray(layer(x, x, use_causal_mask=True))
    for prefill in (0, 5):
        stepped, _ = step_by_step(layer, x, prefill)
        np.testing.assert_allclose(stepped, full, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "block",
    [
        lambda: TransformerBlock(num_heads=2, key_dim=4, feedforward_dim=8),
        lambda: TwoSimplicialTransformerBlock(
            num_virtual_entities=0, num_heads=2, key_dim=4, simplicial_key_dim=3,
            feedforward_dim=8,
        ),
        lambda: TwoSimplicialTransformerBlock(
            num_virtual_entities=0, num_heads=2, key_dim=4, simplicial_key_dim=3,
            feedforward_dim=8, simplicial_window=(3, 2), num_simplicial_heads=2,
            num_simplicial_key_value_heads=1,
        ),
    ],
    ids=["relational", "simplicial", "simplicial-windowed-grouped"],
)  # fmt: skip
def test_the_blocks_decode_one_position_at_a_time(block):
    block = block()
    x = RNG.normal(size=(2, LENGTH, 8)).astype("float32")
    full = np.asarray(block(x, use_causal_mask=True))
    cache = block.initial_cache(2, LENGTH)
    outputs = []
    for i in range(LENGTH):
        out, cache = block(x[:, i : i + 1], cache=cache, cache_update_index=i)
        outputs.append(np.asarray(out))
    np.testing.assert_allclose(np.concatenate(outputs, axis=1), full, rtol=1e-5, atol=1e-5)


def test_cached_calls_refuse_what_they_cannot_do():
    layer = SimplicialAttention(num_heads=1, key_dim=3, window=(2, 2))
    x = RNG.normal(size=(1, 4, 5)).astype("float32")
    cache = layer.initial_cache(1, 4)
    with pytest.raises(ValueError, match="needs `cache_update_index`"):
        layer(x, x, cache=cache)
    with pytest.raises(ValueError, match="one new position at a time"):
        layer(x, x, cache=cache, cache_update_index=0)
    with pytest.raises(ValueError, match="no `attention_mask` or `padding_mask`"):
        layer(x[:, :1], x[:, :1], cache=cache, cache_update_index=0, padding_mask=np.ones((1, 1)))
    virtual = TwoSimplicialTransformerBlock(num_virtual_entities=2, simplicial_key_dim=3)
    with pytest.raises(ValueError, match="Decoding needs num_virtual_entities=0"):
        virtual.initial_cache(1, 4)
    block = TransformerBlock(num_heads=1, key_dim=2, feedforward_dim=4)
    e = RNG.normal(size=(1, 4, 4)).astype("float32")
    with pytest.raises(ValueError, match="no `attention_mask` or `padding_mask`"):
        block(
            e, cache=block.initial_cache(1, 4), cache_update_index=0, padding_mask=np.ones((1, 4))
        )
