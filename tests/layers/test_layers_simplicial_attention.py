"""SimplicialAttention against the loop reference; tiled path; gradients; saving; arguments."""

import os

import keras
import loop_reference as reference
import numpy as np
import pytest
import trilinear_reference

from keras_simplicial import SimplicialAttention, VirtualEntities
from keras_simplicial import simplicial_attention as simplicial_module

TF_ONLY = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="uses tf.GradientTape / tf.function"
)


def _inputs(seed, batch=2, n=5, m=3, d=6):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(batch, n, d)).astype("float32"),
        rng.normal(size=(batch, m, d)).astype("float32"),
    )


def _mask(seed, batch, n, m, order):
    mask = np.random.default_rng(seed).random((batch, n) + (m,) * order) < 0.6
    mask[0, 0] = False  # a query with nothing to attend to outputs 0
    return mask


@pytest.mark.parametrize("num_heads,order,use_bias", [(1, 2, False), (3, 2, True), (2, 3, False)])
@pytest.mark.parametrize("masked", [False, True])
def test_matches_loop_reference(num_heads, order, use_bias, masked):
    query, value = _inputs(num_heads + order)
    layer = SimplicialAttention(
        num_heads=num_heads,
        key_dim=4,
        value_dim=3,
        order=order,
        use_bias=use_bias,
        bias_initializer="random_normal",
    )
    mask = _mask(7, 2, 5, 3, order) if masked else None
    out, scores = layer(query, value, attention_mask=mask, return_attention_scores=True)
    expected, expected_scores = reference.simplicial_attention(layer, query, value, mask=mask)
    assert out.shape == (2, 5, num_heads * 3)
    assert scores.shape == (2, num_heads, 5) + (3,) * order
    np.testing.assert_allclose(np.asarray(scores), expected_scores, atol=2e-5)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-4, atol=2e-4)
    if masked:
        assert np.all(np.asarray(scores)[0, :, 0] == 0.0)
        assert np.all(np.asarray(out)[0, 0] == 0.0)


def test_separate_key_input_and_broadcast_mask():
    query, value = _inputs(3)
    key = np.random.default_rng(4).normal(size=(2, 3, 9)).astype("float32")
    layer = SimplicialAttention(num_heads=2, key_dim=4)
    mask = np.array([True, False, True])[None, None, :, None]  # forbid j = 1, any k
    out, scores = layer(query, value, key=key, attention_mask=mask, return_attention_scores=True)
    expected, _ = reference.simplicial_attention(layer, query, value, key=key, mask=mask)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-4, atol=2e-4)
    assert np.all(np.asarray(scores)[:, :, :, 1, :] == 0.0)


@pytest.mark.parametrize("num_heads,order,use_bias", [(1, 2, False), (3, 2, True), (2, 3, True)])
@pytest.mark.parametrize("masked", [False, True])
def test_trilinear_form_matches_einsum_reference(num_heads, order, use_bias, masked):
    query, value = _inputs(20 + num_heads + order)
    layer = SimplicialAttention(
        num_heads=num_heads,
        key_dim=4,
        value_dim=3,
        order=order,
        use_bias=use_bias,
        bias_initializer="random_normal",
        form="trilinear",
    )
    mask = _mask(8, 2, 5, 3, order) if masked else None
    out, scores = layer(query, value, attention_mask=mask, return_attention_scores=True)
    expected, expected_scores = trilinear_reference.trilinear_attention(
        layer, query, value, mask=mask
    )
    assert out.shape == (2, 5, num_heads * 3)
    assert scores.shape == (2, num_heads, 5) + (3,) * order
    np.testing.assert_allclose(np.asarray(scores), expected_scores, atol=2e-5)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-4, atol=2e-4)
    if masked:
        assert np.all(np.asarray(out)[0, 0] == 0.0)
    # k value projections and no B; u^1's kernel doubles as `value_kernel`.
    names = [w.name for w in layer.weights]
    assert "B" not in names and layer.B is None
    assert [f"value{a + 1}_kernel" for a in range(order)] == [
        n for n in names if n.startswith("value") and n.endswith("kernel")
    ]
    assert layer.value_kernel is layer.value_kernels[0]


def test_trilinear_form_with_separate_key_and_scales():
    query, value = _inputs(5)
    key = np.random.default_rng(6).normal(size=(2, 3, 9)).astype("float32")
    for scale in (None, 0.3):
        layer = SimplicialAttention(num_heads=2, key_dim=4, logit_scale=scale, form="trilinear")
        out = layer(query, value, key=key)
        expected, _ = trilinear_reference.trilinear_attention(layer, query, value, key=key)
        np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-4, atol=2e-4)
    # "auto" is 1/sqrt(key_dim) for the trilinear form, key_dim^(-order/2) for the paper's.
    assert SimplicialAttention(key_dim=16, order=3, form="trilinear")._logit_scale == 0.25
    assert SimplicialAttention(key_dim=16, order=3)._logit_scale == 16**-1.5


@pytest.mark.parametrize("form", ["scalar_product", "trilinear"])
@pytest.mark.parametrize("order,tile", [(2, 1), (2, 2), (3, 1)])
@pytest.mark.parametrize("masked", [False, True])
def test_tiled_path_equals_direct(form, order, tile, masked):
    query, value = _inputs(11, n=7, m=4)
    direct = SimplicialAttention(num_heads=2, key_dim=5, order=order, tile_size=None, form=form)
    direct(query, value)
    tiled = SimplicialAttention.from_config({**direct.get_config(), "tile_size": tile})
    tiled(query, value)
    tiled.set_weights(direct.get_weights())
    mask = _mask(3, 2, 7, 4, order) if masked else None
    np.testing.assert_allclose(
        np.asarray(tiled(query, value, attention_mask=mask)),
        np.asarray(direct(query, value, attention_mask=mask)),
        rtol=1e-5,
        atol=1e-5,
    )


def test_auto_switches_to_tiles_above_threshold(monkeypatch):
    query, value = _inputs(5, n=6, m=4)
    layer = SimplicialAttention(num_heads=1, key_dim=4)
    reference_out = np.asarray(layer(query, value))
    calls = []
    original = SimplicialAttention._attend_tiled

    def spy(self, *args):
        calls.append(args[-1])
        return original(self, *args)

    monkeypatch.setattr(SimplicialAttention, "_attend_tiled", spy)
    layer(query, value)
    assert calls == []  # 6 * 4^2 entries: below the threshold, direct path
    monkeypatch.setattr(simplicial_module, "TILE_THRESHOLD", 50)
    monkeypatch.setattr(simplicial_module, "TILE_BUDGET", 6 * 4 * 2)
    np.testing.assert_allclose(np.asarray(layer(query, value)), reference_out, rtol=1e-5, atol=1e-6)
    assert calls == [2]


def _orthogonal_layer(**kwargs):
    """p, l1, l2 are the first three coordinates of the input: orthogonal for basis inputs."""
    layer = SimplicialAttention(num_heads=1, key_dim=4, value_dim=4, **kwargs)
    layer.build((None, 3, 4), (None, 3, 4))
    eye = np.eye(4, dtype="float32")
    layer.query_kernel.assign(eye)
    layer.key_kernels[0].assign(eye[:, [1, 0, 2, 3]])
    layer.key_kernels[1].assign(eye[:, [2, 1, 0, 3]])
    return layer


@TF_ONLY
@pytest.mark.parametrize("policy", ["float32", "mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("form", ["scalar_product", "trilinear"])
def test_gradients_finite_at_orthogonal_and_zero_vectors(policy, jit, form):
    import tensorflow as tf

    keras.mixed_precision.set_global_policy(policy)
    try:
        layer = _orthogonal_layer(form=form)
        eye = np.eye(4, dtype="float32")
        query = np.stack([eye[:3], np.zeros((3, 4), "float32")])  # basis vectors, zero vectors
        value = np.stack([eye[:3], np.zeros((3, 4), "float32")])
        query, value = tf.constant(query), tf.constant(value)

        @tf.function(jit_compile=jit)
        def grads(query, value):
            with tf.GradientTape() as tape:
                tape.watch([query, value])
                out = layer(query, value)
                loss = tf.reduce_sum(tf.cast(out, "float32") ** 2) + tf.reduce_sum(
                    tf.cast(out, "float32")
                )
            return tape.gradient(loss, [query, value] + layer.trainable_variables)

        for grad in grads(query, value):
            assert np.all(np.isfinite(np.asarray(tf.cast(grad, "float32"))))
    finally:
        keras.mixed_precision.set_global_policy("float32")


@TF_ONLY
def test_functional_model_with_dynamic_batch_under_jit():
    import tensorflow as tf

    entities = keras.Input((6, 8))
    virtual = VirtualEntities(3)(entities)
    layer = SimplicialAttention(num_heads=2, key_dim=4)
    out = layer(entities, virtual)
    model = keras.Model(entities, out)
    x = np.random.default_rng(0).normal(size=(5, 6, 8)).astype("float32")
    compiled = tf.function(model, jit_compile=True)
    np.testing.assert_allclose(np.asarray(compiled(x)), np.asarray(model(x)), rtol=1e-5, atol=1e-5)
    assert out.shape == (None, 6, 8)


def test_save_load_config_and_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps the summary table at the terminal width
    query_in, value_in = keras.Input((5, 6)), keras.Input((3, 6))
    out, scores = SimplicialAttention(
        num_heads=2, key_dim=4, value_dim=3, use_bias=True, tile_size=2, name="simp"
    )(query_in, value_in, return_attention_scores=True)
    model = keras.Model([query_in, value_in], [out, scores])
    assert tuple(scores.shape) == (None, 2, 5, 3, 3)
    query, value = _inputs(2)
    before = [np.asarray(t) for t in model([query, value])]
    path = os.path.join(tmp_path, "simplicial.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    after = [np.asarray(t) for t in loaded([query, value])]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    layer = loaded.get_layer("simp")
    config = layer.get_config()
    assert config["tile_size"] == 2 and config["value_dim"] == 3 and config["use_bias"] is True
    clone = SimplicialAttention.from_config(config)
    assert clone.get_config() == config
    lines = []
    model.summary(line_length=150, print_fn=lambda line, **kwargs: lines.append(line))
    text = "\n".join(lines)
    # 3 projections of 6 -> 8 (+ bias), value 6 -> 6 (+ bias), B: 2 x 3^3.
    expected_params = 3 * (6 * 8 + 8) + (6 * 6 + 6) + 2 * 27
    assert "simp (SimplicialAttention)" in text
    assert f"{expected_params:,}" in text


def test_trilinear_form_saves_loads_and_counts_its_weights(tmp_path):
    query_in, value_in = keras.Input((5, 6)), keras.Input((3, 6))
    layer = SimplicialAttention(
        num_heads=2, key_dim=4, value_dim=3, order=3, use_bias=True, form="trilinear", name="tri"
    )
    model = keras.Model([query_in, value_in], layer(query_in, value_in))
    query, value = _inputs(4)
    before = np.asarray(model([query, value]))
    path = os.path.join(tmp_path, "trilinear.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(np.asarray(loaded([query, value])), before)
    config = loaded.get_layer("tri").get_config()
    assert config["form"] == "trilinear" and config["order"] == 3
    assert SimplicialAttention.from_config(config).get_config() == config
    # p, l1, l2, l3: 6 -> 8 (+ bias); u1, u2, u3: 6 -> 6 (+ bias); no B.
    assert layer.count_params() == 4 * (6 * 8 + 8) + 3 * (6 * 6 + 6)
    assert SimplicialAttention().get_config()["form"] == "scalar_product"


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"num_heads": 0}, "num_heads"),
        ({"key_dim": -3}, "key_dim"),
        ({"value_dim": 0}, "value_dim"),
        ({"order": 1}, "order"),
        ({"dropout": 1.5}, "dropout"),
        ({"tile_size": 0}, '`tile_size` must be "auto", None or a positive integer'),
        ({"epsilon": -1.0}, "epsilon"),
        ({"logit_scale": "big"}, "logit_scale"),
        ({"logit_scale": 0.0}, "logit_scale"),
        ({"logit_scale": True}, "logit_scale"),
        ({"form": "determinant"}, "form"),
        ({"form": None}, "form"),
    ],
)
def test_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        SimplicialAttention(**kwargs)


def test_bad_shapes():
    layer = SimplicialAttention(num_heads=1, key_dim=4)
    query, value = _inputs(0)
    with pytest.raises(ValueError, match="key"):
        layer(query, value, key=np.ones((2, 4, 6), "float32"))
    layer = SimplicialAttention(num_heads=1, key_dim=4)
    with pytest.raises(ValueError, match="attention_mask"):
        layer(query, value, attention_mask=np.ones((5, 3, 3), bool))


def _layer_normed(seed, batch, length, width):
    x = np.random.default_rng(seed).normal(size=(batch, length, width))
    x = (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True)
    return x.astype("float32")


@pytest.mark.parametrize("order", [2, 3])
def test_logit_scale_keeps_the_softmax_out_of_saturation_at_initialisation(order):
    """The paper's scale-free logits put ~all mass on one key tuple; "auto" does not."""
    query, value = _layer_normed(0, 8, 40, 64), _layer_normed(1, 8, 4, 64)
    largest = {}
    for scale in (None, "auto"):
        keras.utils.set_random_seed(3)
        layer = SimplicialAttention(key_dim=48, order=order, logit_scale=scale)
        _, scores = layer(query, value, return_attention_scores=True)
        axes = tuple(range(3, 3 + order))
        largest[scale] = np.asarray(keras.ops.max(scores, axis=axes))
    assert np.mean(largest[None] > 0.99) > 0.5, "unscaled logits saturate (the measured fact)"
    assert np.mean(largest["auto"]) < 0.8 and np.all(largest["auto"] < 0.99)
    layer = SimplicialAttention(key_dim=48, order=order, logit_scale=0.25)
    assert layer.get_config()["logit_scale"] == 0.25
    assert SimplicialAttention.from_config(layer.get_config()).logit_scale == 0.25


@TF_ONLY
def test_logit_scale_lets_gradients_reach_the_query_and_key_kernels():
    import tensorflow as tf

    query, value = _layer_normed(2, 8, 40, 64), _layer_normed(3, 8, 4, 64)
    target = np.random.default_rng(4).normal(size=(8, 40, 48)).astype("float32")
    keras.utils.set_random_seed(5)
    layer = SimplicialAttention(key_dim=48)
    layer(query, value)
    routing = [layer.query_kernel.value] + [k.value for k in layer.key_kernels]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(query, value) * target)
    gradients = tape.gradient(loss, routing + [layer.value_kernel.value])
    routing_norm = float(tf.linalg.global_norm(gradients[:-1]))
    # The routing (p, l1, l2) learns at a rate comparable to the values' kernel. With the
    # unscaled logits of a freshly built agent this ratio is ~1e-17 (every query saturated:
    # benchmarks/simplicial_saturation.py).
    assert np.isfinite(routing_norm)
    assert routing_norm / float(tf.norm(gradients[-1])) > 1e-2
