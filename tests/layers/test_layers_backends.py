"""The layers on the TensorFlow, JAX and PyTorch backends of Keras other than the suite's own, in
two subprocesses per backend (the attention checks, then training and the sequence checks)."""

import importlib.util
import os
import subprocess
import sys
import textwrap

import keras
import pytest

# Fresh interpreters on other backends (JAX compiles op by op): `make test-integration`.
pytestmark = pytest.mark.integration

TESTS = os.path.dirname(os.path.abspath(__file__))

PRELUDE = textwrap.dedent(
    """
    import os, sys, tempfile
    sys.path.insert(0, {tests!r})
    import keras
    import numpy as np
    assert keras.backend.backend() == {backend!r}, keras.backend.backend()
    import loop_reference as reference
    import trilinear_reference
    from keras_simplicial import (SimplicialAttention, TransformerBlock,
                                  TwoSimplicialTransformerBlock, VirtualEntities)

    """
)

# Two halves of about equal time, one test each: on JAX, which compiles op by op, one process
# took 115 s on 2 cores, and the suite's two workers can share the halves.
ATTENTION_CHECKS = textwrap.dedent(
    """
    rng = np.random.default_rng(0)
    query = rng.normal(size=(2, 5, 6)).astype("float32")
    value = rng.normal(size=(2, 4, 6)).astype("float32")
    mask = rng.random((2, 5, 4, 4)) < 0.7
    for tile_size in (None, 2):
        layer = SimplicialAttention(num_heads=2, key_dim=3, tile_size=tile_size)
        out = keras.ops.convert_to_numpy(layer(query, value, attention_mask=mask))
        expected, _ = reference.simplicial_attention(layer, query, value, mask=mask)
        np.testing.assert_allclose(out, expected, rtol=2e-4, atol=2e-4)
    # The trilinear form (Roy et al.) against a direct einsum, orders 2 and 3, direct and tiled.
    for order in (2, 3):
        mask = rng.random((2, 5) + (4,) * order) < 0.7
        for tile_size in (None, 2):
            layer = SimplicialAttention(num_heads=2, key_dim=3, order=order, use_bias=True,
                                        bias_initializer="random_normal", tile_size=tile_size,
                                        form="trilinear")
            out = keras.ops.convert_to_numpy(layer(query, value, attention_mask=mask))
            expected, _ = trilinear_reference.trilinear_attention(layer, query, value, mask=mask)
            np.testing.assert_allclose(out, expected, rtol=2e-4, atol=2e-4)

    # Grouped key/value heads equal repeated projections (tiled and windowed paths; every path
    # on the suite's own backend: test_layers_grouped_heads.py).
    from grouped_heads import copy_as_full_heads
    x = rng.normal(size=(2, 6, 5)).astype("float32")
    for form, options in (("scalar_product", {{"tile_size": 2}}),
                          ("trilinear", {{"window": (3, 2)}})):
        grouped = SimplicialAttention(num_heads=4, num_key_value_heads=2, key_dim=3,
                                      form=form, **options)
        full = SimplicialAttention(num_heads=4, key_dim=3, form=form, **options)
        grouped(x, x)
        full(x, x)
        copy_as_full_heads(grouped, full)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(grouped(x, x)),
                                   keras.ops.convert_to_numpy(full(x, x)),
                                   rtol=1e-5, atol=1e-5)

    # Left padding, masked: the real positions get what the unpadded sequence gets (windows and
    # causal pairs, both forms), the padding positions exactly 0.
    real = rng.normal(size=(2, 4, 5)).astype("float32")
    x = np.concatenate([rng.normal(size=(2, 3, 5)).astype("float32") * 10, real], axis=1)
    padding = np.arange(7)[None, :].repeat(2, axis=0) >= 3
    for form, options, causal in (("scalar_product", {{"window": (3, 2)}}, False),
                                  ("trilinear", {{"tile_size": 2}}, True)):
        layer = SimplicialAttention(num_heads=2, key_dim=3, form=form, **options)
        out = keras.ops.convert_to_numpy(
            layer(x, x, padding_mask=padding, use_causal_mask=causal))
        expected = keras.ops.convert_to_numpy(layer(real, real, use_causal_mask=causal))
        # float32 sums in another order (the padding is 10 times the scale): 1.3e-5 was seen on
        # TensorFlow's CPU kernels; a padding that leaked in would be of order 1.
        np.testing.assert_allclose(out[:, 3:], expected, rtol=1e-4, atol=1e-4)
        assert np.all(out[:, :3] == 0.0)

    # Decoding with caches: one position a step equals the windowed pass (every attention and
    # block on the suite's own backend: test_layers_decoding.py).
    seq = rng.normal(size=(2, 4, 8)).astype("float32")
    decoder = TwoSimplicialTransformerBlock(num_virtual_entities=0, key_dim=4,
                                            simplicial_key_dim=3, feedforward_dim=8,
                                            simplicial_window=(3, 2))
    full = keras.ops.convert_to_numpy(decoder(seq, use_causal_mask=True))
    cache = decoder.initial_cache(2, 4)
    for i in range(4):
        out, cache = decoder(seq[:, i:i + 1], cache=cache, cache_update_index=i)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(out)[:, 0], full[:, i],
                                   rtol=1e-5, atol=1e-5)

    # Mixed precision: the logits and the softmax stay in float32; the outputs of bfloat16 and
    # float16 policies within the tolerances the layers page states of float32's.
    x = rng.normal(size=(2, 8, 6)).astype("float32")
    for policy, tolerance in (("mixed_bfloat16", 0.15), ("mixed_float16", 0.02)):
        for options in ({{"num_key_value_heads": 1}}, {{"window": (3, 2), "form": "trilinear"}}):
            causal = "window" not in options
            keras.config.set_dtype_policy("float32")
            exact = SimplicialAttention(num_heads=2, key_dim=4, **options)
            expected = keras.ops.convert_to_numpy(exact(x, x, use_causal_mask=causal))
            keras.config.set_dtype_policy(policy)
            mixed = SimplicialAttention(num_heads=2, key_dim=4, **options)
            mixed(x, x)
            mixed.set_weights(exact.get_weights())
            out = mixed(x, x, use_causal_mask=causal)
            assert keras.backend.standardize_dtype(out.dtype) == policy.split("_")[1], out.dtype
            out = keras.ops.convert_to_numpy(keras.ops.cast(out, "float32"))
            np.testing.assert_allclose(out, expected, atol=tolerance)
    keras.config.set_dtype_policy("float32")

    e = rng.normal(size=(3, 7, 8)).astype("float32")
    block = TwoSimplicialTransformerBlock(num_heads=2, key_dim=4, simplicial_key_dim=4,
                                          feedforward_dim=8)
    block.build(e.shape)
    out, scores, simplicial_scores = block(e, return_attention_scores=True)
    expected, _, _ = reference.simplicial_block(block, e)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(out), expected, rtol=2e-4, atol=2e-4)
    relational = TransformerBlock(num_heads=2, key_dim=4, feedforward_dim=8)
    relational.build(e.shape)
    expected, _ = reference.transformer_block(relational, e)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(relational(e)), expected,
                               rtol=2e-4, atol=2e-4)

    """
)

TRAINING_CHECKS = textwrap.dedent(
    """
    rng = np.random.default_rng(1)

    # Training (compiled: XLA on TF and JAX) through the shared block, including zero entities
    # (sqrt of the scalar product at 0), then a .keras round trip.
    inputs = keras.Input((5, 8))
    x = VirtualEntities(2)(inputs)
    shared = TwoSimplicialTransformerBlock(num_heads=2, key_dim=4, simplicial_key_dim=4,
                                           feedforward_dim=8, name="block")
    x = shared(shared(x))
    x = TwoSimplicialTransformerBlock(num_heads=2, key_dim=4, simplicial_key_dim=4,
                                      feedforward_dim=8, simplicial_form="trilinear")(x)
    outputs = keras.layers.Dense(1)(keras.layers.GlobalMaxPooling1D()(x))
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss="mse", jit_compile={jit!r})
    data = rng.normal(size=(8, 5, 8)).astype("float32")
    data[:2] = 0.0
    history = model.fit(data, np.ones((8, 1), "float32"), batch_size=4, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"])), history.history
    assert all(np.all(np.isfinite(keras.ops.convert_to_numpy(w))) for w in model.weights)
    path = os.path.join(tempfile.mkdtemp(), "model.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(loaded(data)),
                               keras.ops.convert_to_numpy(model(data)), rtol=1e-6, atol=1e-6)

    # Causal and windowed attention against the masked references, then a windowed decoder trains.
    import sequence_checks
    sequence_checks.run_all()
    decoder = sequence_checks.windowed_decoder()
    decoder.compile(optimizer="adam", loss="mse", jit_compile={jit!r})
    history = decoder.fit(data[:, :5].repeat(2, axis=1)[:, :6], np.ones((8, 6, 1), "float32"),
                          batch_size=4, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"])), history.history
    """
)

CHECKS = {"attention": ATTENTION_CHECKS, "training": TRAINING_CHECKS}

BACKENDS = {
    "tensorflow": ("tensorflow", True),
    "jax": ("jax", True),
    # torch has no XLA: Keras compiles nothing for it with jit_compile=False.
    "torch": ("torch", False),
}
# The suite's own backend runs every one of these cases, and more, in the layers' test files.
OTHER_BACKENDS = [name for name in BACKENDS if name != keras.backend.backend()]


@pytest.mark.parametrize("part", CHECKS)
@pytest.mark.parametrize("backend", OTHER_BACKENDS)
def test_layers_on_backend(backend, part):
    module, jit = BACKENDS[backend]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"the {backend} backend is not importable ({module} is not installed)")
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    script = (PRELUDE + CHECKS[part]).format(tests=TESTS, backend=backend, jit=jit)
    script += "print('BACKEND_OK', keras.backend.backend())\n"
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"BACKEND_OK {backend}" in result.stdout
