"""The fused kernels (`fused="pallas"` on JAX, `fused="triton"` on PyTorch) against the `keras.ops`
path (fused=None): outputs and the gradients of a loss with respect to the inputs and every
trainable weight (B included). Imported by the subprocess scripts of test_layers_pallas.py and
test_layers_triton.py, on the kernel's backend."""

import keras
import numpy as np

from keras_simplicial import SimplicialAttention


def outputs_and_gradients(layer, x):
    """The layer's output on (x, x) and the gradients of sum(sin(output)) with respect to x and
    each of `layer.trainable_variables`, as NumPy arrays."""
    if keras.backend.backend() == "jax":
        import jax

        weights = [v.value for v in layer.trainable_variables]

        def loss(weights, inputs):
            out, _ = layer.stateless_call(weights, [], inputs, inputs)
            return jax.numpy.sum(jax.numpy.sin(out)), out

        (_, out), (weight_grads, input_grad) = jax.value_and_grad(
            loss, argnums=(0, 1), has_aux=True
        )(weights, x)
        return np.asarray(out), [np.asarray(input_grad)] + [np.asarray(g) for g in weight_grads]
    import torch

    inputs = torch.tensor(x, requires_grad=True)
    for variable in layer.trainable_variables:
        variable.value.grad = None
    out = layer(inputs, inputs)
    torch.sin(out).sum().backward()
    grads = [inputs.grad] + [v.value.grad for v in layer.trainable_variables]
    return out.detach().numpy(), [g.detach().numpy().copy() for g in grads]


def check(fused, form, window, n=6, batch=1, heads=2, kv_heads=None, seed=0):
    """Asserts the fused path's output (to 1e-5) and gradients (to 1e-4 relative, 1e-5 absolute:
    float32 sums in another order) equal the `keras.ops` path's, on a layer with biases."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, n, 5)).astype("float32")
    common = dict(
        num_heads=heads,
        num_key_value_heads=kv_heads,
        key_dim=3,
        value_dim=2,
        form=form,
        window=window,
        use_bias=True,
        bias_initializer="random_normal",
    )
    reference = SimplicialAttention(**common)
    layer = SimplicialAttention(fused=fused, **common)
    reference.build(x.shape, x.shape)
    layer.build(x.shape, x.shape)
    layer.set_weights(reference.get_weights())
    names = ["inputs"] + [v.path for v in reference.trainable_variables]
    assert (form == "trilinear") or any(name.endswith("/B") for name in names), names
    want_out, want = outputs_and_gradients(reference, x)
    got_out, got = outputs_and_gradients(layer, x)
    case = f"{fused} {form} window={window} n={n} heads={heads}/{kv_heads}"
    np.testing.assert_allclose(got_out, want_out, rtol=1e-5, atol=1e-5, err_msg=case)
    for name, a, b in zip(names, got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=f"{case}: d/d {name}")


def check_fallbacks(fused):
    """A padding mask and requested scores take the `keras.ops` path, with the same result."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 7, 5)).astype("float32")
    padding = np.arange(7)[None, :].repeat(2, axis=0) >= 2
    for form in ("scalar_product", "trilinear"):
        common = dict(num_heads=2, num_key_value_heads=1, key_dim=3, form=form, window=(3, 2))
        reference = SimplicialAttention(**common)
        layer = SimplicialAttention(fused=fused, **common)
        reference.build(x.shape, x.shape)
        layer.build(x.shape, x.shape)
        layer.set_weights(reference.get_weights())
        for kwargs in ({"padding_mask": padding}, {"return_attention_scores": True}):
            got = keras.tree.flatten(layer(x, x, **kwargs))
            want = keras.tree.flatten(reference(x, x, **kwargs))
            for a, b in zip(got, want):
                np.testing.assert_allclose(
                    keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), atol=1e-6
                )


def check_training_step(fused):
    """Two epochs of a model through the fused kernels train to finite losses."""
    x = np.random.default_rng(2).normal(size=(2, 6, 5)).astype("float32")
    inputs = keras.Input((6, 5))
    layer = SimplicialAttention(num_heads=2, key_dim=3, window=(4, 2), fused=fused)
    model = keras.Model(inputs, keras.layers.Dense(1)(layer(inputs, inputs)))
    model.compile(optimizer="adam", loss="mse", jit_compile=keras.backend.backend() == "jax")
    history = model.fit(x, np.ones((2, 6, 1), "float32"), epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"])), history.history
