"""Checks of the causal and windowed attention against the masked references, run on the default
backend by `test_layers_sequence.py` and on the other backends (TensorFlow, JAX, PyTorch) by
`test_layers_backends.py`. A helper module, not a test file."""

import itertools

import keras
import loop_reference as reference
import numpy as np
import trilinear_reference

from keras_simplicial import (
    DotProductAttention,
    SimplicialAttention,
    TransformerBlock,
    TwoSimplicialTransformerBlock,
)

TOLERANCE = {"rtol": 2e-4, "atol": 2e-4}


def causal_mask(n, m, order):
    """[N, M, ..., M]: every j_a <= i, built directly (the layer never builds it)."""
    grids = np.meshgrid(*(np.arange(s) for s in (n,) + (m,) * order), indexing="ij")
    return np.logical_and.reduce([grids[a + 1] <= grids[0] for a in range(order)])


def window_mask(n, window):
    """[N, N, N]: i - w1 < j <= i and i - w2 < k <= i."""
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    return (j <= i) & (j > i - window[0]) & (k <= i) & (k > i - window[1])


def _reference(layer):
    if layer.form == "trilinear":
        return trilinear_reference.trilinear_attention
    return reference.simplicial_attention


def _numpy(x):
    return keras.ops.convert_to_numpy(x)


def check_causal_matches_reference(form, order, tile_size, user_mask):
    rng = np.random.default_rng(order)
    n, m = 5, 4  # N != M: positions count from 0 in both, as in MultiHeadAttention
    query = rng.normal(size=(2, n, 6)).astype("float32")
    value = rng.normal(size=(2, m, 6)).astype("float32")
    layer = SimplicialAttention(
        num_heads=2,
        key_dim=3,
        order=order,
        form=form,
        tile_size=tile_size,
        use_bias=True,
        bias_initializer="random_normal",
    )
    mask = None
    allowed = np.broadcast_to(causal_mask(n, m, order), (2, n) + (m,) * order)
    if user_mask:
        mask = rng.random((2, n) + (m,) * order) < 0.7
        allowed = allowed & mask
    out = _numpy(layer(query, value, attention_mask=mask, use_causal_mask=True))
    expected, _ = _reference(layer)(layer, query, value, mask=allowed)
    np.testing.assert_allclose(out, expected, **TOLERANCE)


def check_window_matches_reference(form, window):
    n = 6
    x = np.random.default_rng(sum(window)).normal(size=(2, n, 5)).astype("float32")
    layer = SimplicialAttention(num_heads=2, key_dim=3, form=form, window=window)
    out, scores = layer(x, x, return_attention_scores=True)
    mask = np.broadcast_to(window_mask(n, window), (2, n, n, n))
    expected, expected_scores = _reference(layer)(layer, x, x, mask=mask)
    np.testing.assert_allclose(_numpy(out), expected, **TOLERANCE)
    # Score (a, b) of query i is the full path's score of the pair (i - w1 + 1 + a, i - w2 + 1 + b).
    w1, w2 = (min(w, n) for w in window)
    scores = _numpy(scores)
    assert scores.shape == (2, 2, n, w1, w2)
    for i, a, b in itertools.product(range(n), range(w1), range(w2)):
        j, k = i - w1 + 1 + a, i - w2 + 1 + b
        want = expected_scores[:, :, i, j, k] if j >= 0 and k >= 0 else 0.0
        np.testing.assert_allclose(scores[:, :, i, a, b], want, **TOLERANCE)


def check_window_covering_the_sequence_equals_the_causal_full_path(form):
    x = np.random.default_rng(3).normal(size=(2, 7, 5)).astype("float32")
    full = SimplicialAttention(num_heads=2, key_dim=3, form=form, tile_size=None)
    windowed = SimplicialAttention(num_heads=2, key_dim=3, form=form, window=(7, 9))
    full.build(x.shape, x.shape)
    windowed.build(x.shape, x.shape)
    windowed.set_weights(full.get_weights())
    np.testing.assert_allclose(
        _numpy(windowed(x, x)), _numpy(full(x, x, use_causal_mask=True)), **TOLERANCE
    )


def check_no_output_depends_on_a_later_token(call, n=6, width=8, positions=None):
    """Perturbing token t (each of `positions`, default all) changes no output before t."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, n, width)).astype("float32")
    before = _numpy(call(x))
    for t in positions or range(1, n):
        changed = x.copy()
        changed[:, t] += rng.normal(size=(2, width)).astype("float32")
        after = _numpy(call(changed))
        np.testing.assert_allclose(after[:, :t], before[:, :t], rtol=1e-5, atol=1e-5)
        assert not np.allclose(after[:, t], before[:, t]), t


def sequence_block(form, window, **kwargs):
    """A small `TwoSimplicialTransformerBlock` over the sequence itself (no virtual entities)."""
    return TwoSimplicialTransformerBlock(
        num_virtual_entities=0,
        num_heads=2,
        key_dim=4,
        simplicial_key_dim=4,
        feedforward_dim=8,
        simplicial_form=form,
        simplicial_window=window,
        **kwargs,
    )


def causal_calls():
    """name -> a function of x [B, N, 8] that should be causal."""
    dot = DotProductAttention(num_heads=2, key_dim=3)
    relational = TransformerBlock(num_heads=2, key_dim=4, feedforward_dim=8)
    calls = {
        "dot_product": lambda x: dot(x, x, use_causal_mask=True),
        "transformer_block": lambda x: relational(x, use_causal_mask=True),
    }
    for form, order, tile_size in [
        ("scalar_product", 2, None),
        ("scalar_product", 3, 2),
        ("trilinear", 2, 3),
        ("trilinear", 3, None),
    ]:
        layer = SimplicialAttention(
            num_heads=2, key_dim=3, order=order, form=form, tile_size=tile_size
        )
        calls[f"{form}_order{order}_tile{tile_size}"] = lambda x, layer=layer: layer(
            x, x, use_causal_mask=True
        )
    for form, window in itertools.product(("scalar_product", "trilinear"), (None, (3, 2))):
        block = sequence_block(form, window)
        calls[f"block_{form}_window{window}"] = lambda x, block=block: block(
            x, use_causal_mask=True
        )
        layer = SimplicialAttention(num_heads=2, key_dim=3, form=form, window=(3, 2))
        calls[f"window_{form}"] = lambda x, layer=layer: layer(x, x)
    return calls


def windowed_decoder():
    """Two causal blocks, 2-simplicial over windows (3, 2), one of each form, with dropout."""
    inputs = keras.Input((6, 8))
    x = inputs
    for form in ("scalar_product", "trilinear"):
        x = sequence_block(form, (3, 2), dropout=0.1, name=form)(x, use_causal_mask=True)
    return keras.Model(inputs, keras.layers.Dense(1)(x))


def run_all():
    """A lighter pass of the checks (the default backend's tests run every case)."""
    for form in ("scalar_product", "trilinear"):
        for order, tile_size in ((2, None), (3, 2)):
            check_causal_matches_reference(form, order, tile_size, user_mask=True)
        for window in ((3, 2), (9, 1)):
            check_window_matches_reference(form, window)
        check_window_covering_the_sequence_equals_the_causal_full_path(form)
    for call in causal_calls().values():
        check_no_output_depends_on_a_later_token(call, positions=(2, 5))
