"""Padding masks (`padding_mask`, [B, N], True at real positions) on every path of the
2-simplicial attention and in both blocks: left and right padding, windows and causal masks."""

import keras
import numpy as np
import pytest

from keras_simplicial import SimplicialAttention, TransformerBlock, TwoSimplicialTransformerBlock

RNG = np.random.default_rng(0)
LENGTH, REAL = 7, 4  # each sequence: 4 real positions, 3 of padding


def padded(side):
    """x [2, 7, 5] whose rows are the same 4 real vectors padded on `side` with random junk, the
    padding mask, and the 4 real vectors alone [2, 4, 5]."""
    real = RNG.normal(size=(2, REAL, 5)).astype("float32")
    junk = RNG.normal(size=(2, LENGTH - REAL, 5)).astype("float32") * 10
    parts = [junk, real] if side == "left" else [real, junk]
    mask = np.zeros((2, LENGTH), bool)
    if side == "left":
        mask[:, LENGTH - REAL :] = True
    else:
        mask[:, :REAL] = True
    return np.concatenate(parts, axis=1), mask, real


def real_part(outputs, side):
    return outputs[:, LENGTH - REAL :] if side == "left" else outputs[:, :REAL]


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("form", ["scalar_product", "trilinear"])
@pytest.mark.parametrize(
    "path",
    [{"tile_size": None}, {"tile_size": 2}, {"window": (3, 2)}, {"window": (8, 8)}],
    ids=["dense", "tiled", "windowed", "wide-window"],
)
def test_padding_gives_the_real_positions_what_the_unpadded_sequence_gives(side, form, path):
    """Causal (or windowed) attention has no position code: with the padding masked, each real
    position sees exactly the real positions before it, as in the sequence without padding."""
    layer = SimplicialAttention(num_heads=2, key_dim=3, form=form, **path)
    x, mask, real = padded(side)
    causal = {} if "window" in path else {"use_causal_mask": True}
    out = np.asarray(layer(x, x, padding_mask=mask, **causal))
    if "window" in path:
        # A window reaches back only: on the right the padding lies outside every real query's
        # window, on the left it is masked; a copy of the layer runs the unpadded sequence.
        reference = SimplicialAttention.from_config(layer.get_config())
        reference(real, real)
        reference.set_weights(layer.get_weights())
        expected = np.asarray(reference(real, real))
    else:
        expected = np.asarray(layer(real, real, **causal))
    np.testing.assert_allclose(real_part(out, side), expected, rtol=1e-5, atol=1e-5)
    assert np.all(np.isfinite(out))
    if side == "left":
        # A padding query on the left sees no real pair before it: exactly zero.
        np.testing.assert_array_equal(out[:, : LENGTH - REAL], 0.0)


@pytest.mark.parametrize("order", [2, 3])
def test_padding_equals_the_same_condition_as_a_full_attention_mask(order):
    layer = SimplicialAttention(num_heads=2, key_dim=3, order=order, tile_size=None)
    x, mask, _ = padded("right")
    full = np.ones((2, LENGTH) + (LENGTH,) * order, bool)
    for axis in range(order):
        shape = [2, 1] + [1] * order
        shape[2 + axis] = LENGTH
        full &= mask.reshape(shape)
    with_padding = np.asarray(layer(x, x, padding_mask=mask))
    with_full_mask = np.asarray(layer(x, x, attention_mask=full))
    np.testing.assert_allclose(with_padding, with_full_mask, rtol=1e-6, atol=1e-6)


def test_gradients_stay_finite_where_every_pair_is_masked():
    import tensorflow as tf

    layer = SimplicialAttention(num_heads=1, key_dim=3, window=(2, 2))
    x, mask, _ = padded("left")
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(layer(x, x, padding_mask=mask) ** 2)
    gradients = tape.gradient(loss, [x] + layer.trainable_weights)
    assert all(np.all(np.isfinite(np.asarray(g))) for g in gradients)


def test_a_padding_mask_must_be_batch_by_length():
    layer = SimplicialAttention(num_heads=1, key_dim=3, window=(2, 2))
    x, mask, _ = padded("left")
    with pytest.raises(ValueError, match=r"`padding_mask` must have shape \[B, M\]"):
        layer(x, x, padding_mask=mask[:, None, :])


@pytest.mark.parametrize("side", ["left", "right"])
def test_the_blocks_take_padding_masks(side):
    x, mask, real = padded(side)
    x, real = x[..., :4], real[..., :4]
    windowed = TwoSimplicialTransformerBlock(
        num_virtual_entities=0, num_heads=1, key_dim=4, simplicial_key_dim=3,
        feedforward_dim=8, simplicial_window=(3, 3),
    )  # fmt: skip
    relational = TransformerBlock(num_heads=1, key_dim=4, feedforward_dim=8)
    for block in (windowed, relational):
        out = np.asarray(block(x, padding_mask=mask, use_causal_mask=True))
        expected = np.asarray(block(real, use_causal_mask=True))
        np.testing.assert_allclose(real_part(out, side), expected, rtol=1e-5, atol=1e-5)
        assert np.all(np.isfinite(out))


def test_the_virtual_block_masks_padding_for_the_standard_entities_only():
    block = TwoSimplicialTransformerBlock(
        num_virtual_entities=2, num_heads=1, key_dim=4, simplicial_key_dim=3, feedforward_dim=8
    )
    x, mask, _ = padded("right")
    e = np.concatenate([x[..., :4], RNG.normal(size=(2, 2, 4)).astype("float32")], axis=1)
    out = np.asarray(block(e, padding_mask=mask))
    # Changing the padding changes no real entity's output.
    changed = e.copy()
    changed[:, REAL:LENGTH] += 5.0
    again = np.asarray(block(changed, padding_mask=mask))
    np.testing.assert_allclose(out[:, :REAL], again[:, :REAL], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[:, LENGTH:], again[:, LENGTH:], rtol=1e-5, atol=1e-5)
    assert keras.ops.convert_to_numpy(block(e)).shape == e.shape
