"""The Pallas kernel of the windowed path (`fused="pallas"`, JAX) against the `keras.ops` path, in
Pallas's interpreter on the CPU: outputs, gradients (with respect to the inputs and every weight)
and a compiled training step. Run in a JAX subprocess, whatever the suite's backend."""

import importlib.util
import os
import subprocess
import sys
import textwrap

import keras
import pytest

from keras_simplicial import SimplicialAttention

SCRIPT = textwrap.dedent(
    """
    import jax
    import keras
    import numpy as np
    from keras_simplicial import SimplicialAttention

    assert keras.backend.backend() == "jax"
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 10, 6)).astype("float32")
    for form in ("scalar_product", "trilinear"):
        for window in ((4, 2), (10, 10), (1, 3), (16, 5)):
            common = dict(num_heads=2, key_dim=3, form=form, window=window, use_bias=True,
                          bias_initializer="random_normal")
            reference = SimplicialAttention(**common)
            fused = SimplicialAttention(fused="pallas", **common)
            reference.build(x.shape, x.shape)
            fused.build(x.shape, x.shape)
            fused.set_weights(reference.get_weights())
            np.testing.assert_allclose(np.asarray(fused(x, x)), np.asarray(reference(x, x)),
                                       rtol=1e-5, atol=1e-5)

            def loss(weights, inputs, layer):
                out, _ = layer.stateless_call(weights, [], inputs, inputs)
                return jax.numpy.sum(jax.numpy.sin(out))

            weights = [v.value for v in reference.trainable_variables]
            want = jax.grad(loss, argnums=(0, 1))(weights, x, reference)
            got = jax.grad(loss, argnums=(0, 1))(weights, x, fused)
            for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)

    # Grouped key/value heads run through the kernel (the heads are repeated before it), and a
    # padding mask falls back to the keras.ops path.
    for form in ("scalar_product", "trilinear"):
        common = dict(num_heads=2, num_key_value_heads=1, key_dim=3, form=form, window=(4, 2))
        reference = SimplicialAttention(**common)
        fused = SimplicialAttention(fused="pallas", **common)
        reference.build(x.shape, x.shape)
        fused.build(x.shape, x.shape)
        fused.set_weights(reference.get_weights())
        np.testing.assert_allclose(np.asarray(fused(x, x)), np.asarray(reference(x, x)),
                                   rtol=1e-5, atol=1e-5)
        padding = np.arange(10)[None, :].repeat(2, axis=0) >= 3
        np.testing.assert_allclose(np.asarray(fused(x, x, padding_mask=padding)),
                                   np.asarray(reference(x, x, padding_mask=padding)),
                                   rtol=1e-5, atol=1e-5)

    # A jit-compiled training step through the kernel.
    inputs = keras.Input((10, 6))
    layer = SimplicialAttention(num_heads=2, key_dim=3, window=(4, 2), fused="pallas")
    model = keras.Model(inputs, keras.layers.Dense(1)(layer(inputs, inputs)))
    model.compile(optimizer="adam", loss="mse", jit_compile=True)
    history = model.fit(x, np.ones((2, 10, 1), "float32"), epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"])), history.history
    print("PALLAS_OK")
    """
)


@pytest.mark.slow  # about a minute: the interpreter runs every program of the grid in Python
@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed")
def test_pallas_kernel_matches_the_keras_ops_path_in_interpret_mode():
    env = dict(os.environ, KERAS_BACKEND="jax", CUDA_VISIBLE_DEVICES="", JAX_PLATFORMS="cpu")
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "PALLAS_OK" in result.stdout


@pytest.mark.parametrize(
    "kwargs,name",
    [({"fused": "triton", "window": (2, 2)}, "fused"), ({"fused": "pallas"}, "window")],
)
def test_bad_fused_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        SimplicialAttention(**kwargs)


@pytest.mark.skipif(keras.backend.backend() == "jax", reason="checks a backend other than JAX")
def test_pallas_needs_the_jax_backend():
    with pytest.raises(ValueError, match="JAX"):
        SimplicialAttention(window=(2, 2), fused="pallas")
