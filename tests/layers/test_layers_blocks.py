"""TransformerBlock, TwoSimplicialTransformerBlock and VirtualEntities."""

import os

import keras
import loop_reference as reference
import numpy as np
import pytest

from keras_simplicial import TransformerBlock, TwoSimplicialTransformerBlock, VirtualEntities

TF_ONLY = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow", reason="uses tf.GradientTape / tf.function"
)


def _entities(seed, batch=2, n=6, d=8):
    return np.random.default_rng(seed).normal(size=(batch, n, d)).astype("float32")


def _randomise_norms(block):
    """Non-trivial LayerNorm gains/offsets and biases, so the reference really checks them."""
    rng = np.random.default_rng(5)
    for weight in block.weights:
        if weight.name in ("gamma", "beta", "bias"):
            weight.assign(rng.normal(size=weight.shape).astype("float32"))


def test_transformer_block_matches_reference():
    e = _entities(0)
    block = TransformerBlock(num_heads=2, key_dim=3, value_dim=5, feedforward_dim=7)
    block.build(e.shape)
    _randomise_norms(block)
    out, scores = block(e, return_attention_scores=True)
    expected, expected_scores = reference.transformer_block(block, e)
    assert scores.shape == (2, 2, 6, 6)
    np.testing.assert_allclose(np.asarray(scores), expected_scores, atol=1e-5)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-4)


def test_transformer_block_attention_mask():
    e = _entities(1)
    block = TransformerBlock(num_heads=1, key_dim=4)
    mask = np.tril(np.ones((6, 6), bool))[None]
    _, scores = block(e, attention_mask=mask, return_attention_scores=True)
    scores = np.asarray(scores)
    assert np.all(scores[:, :, ~mask[0]] == 0.0)
    np.testing.assert_allclose(scores.sum(-1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("heads,simplicial_heads,virtual", [(2, 1, 2), (1, 2, 3)])
def test_simplicial_block_matches_reference(heads, simplicial_heads, virtual):
    e = _entities(2, n=7)
    block = TwoSimplicialTransformerBlock(
        num_virtual_entities=virtual,
        num_heads=heads,
        key_dim=3,
        num_simplicial_heads=simplicial_heads,
        simplicial_key_dim=4,
        feedforward_dim=9,
    )
    block.build(e.shape)
    _randomise_norms(block)
    out, scores, simplicial_scores = block(e, return_attention_scores=True)
    expected, expected_scores, expected_simplicial = reference.simplicial_block(block, e)
    n = 7 - virtual
    assert scores.shape == (2, heads, 7, 7)
    assert simplicial_scores.shape == (2, simplicial_heads, n, virtual, virtual)
    scores = np.asarray(scores)
    assert np.all(scores[:, :, :n, n:] == 0.0)  # standard queries never see virtual keys
    assert np.all(scores[:, :, n:, :] > 0.0)  # virtual queries see everything
    np.testing.assert_allclose(scores, expected_scores, atol=1e-5)
    np.testing.assert_allclose(np.asarray(simplicial_scores), expected_simplicial, atol=1e-5)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("order", [2, 3])
def test_simplicial_block_with_the_trilinear_form(order):
    e = _entities(11, n=7)
    block = TwoSimplicialTransformerBlock(
        num_virtual_entities=3,
        num_heads=2,
        key_dim=3,
        num_simplicial_heads=2,
        simplicial_key_dim=4,
        simplicial_order=order,
        feedforward_dim=9,
        simplicial_form="trilinear",
    )
    block.build(e.shape)
    _randomise_norms(block)
    out, _, simplicial_scores = block(e, return_attention_scores=True)
    expected, _, expected_simplicial = reference.simplicial_block(block, e)
    np.testing.assert_allclose(np.asarray(simplicial_scores), expected_simplicial, atol=1e-5)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-4, atol=2e-4)
    config = block.get_config()
    assert config["simplicial_form"] == "trilinear"
    clone = TwoSimplicialTransformerBlock.from_config(config)
    assert clone.get_config() == config and clone.simplicial_attention.form == "trilinear"
    assert TwoSimplicialTransformerBlock().get_config()["simplicial_form"] == "scalar_product"


def test_virtual_entities():
    layer = VirtualEntities(3)
    e = _entities(3, batch=4, n=5)
    out = np.asarray(layer(e))
    assert out.shape == (4, 8, 8)
    np.testing.assert_array_equal(out[:, :5], e)
    np.testing.assert_array_equal(out[1, 5:], np.asarray(layer.embeddings))
    assert layer.compute_output_shape((None, 5, 8)) == (None, 8, 8)


def _paper_model(length=12, features=16):
    """The agent's stack: virtual entities, one block applied twice with shared weights."""
    entities = keras.Input((length, features))
    x = VirtualEntities(2, name="virtual")(entities)
    block = TwoSimplicialTransformerBlock(
        num_heads=2, key_dim=8, simplicial_key_dim=6, feedforward_dim=12, name="block"
    )
    x, _, _ = block(x, return_attention_scores=True)
    x, scores, simplicial_scores = block(x, return_attention_scores=True)
    pooled = keras.layers.GlobalMaxPooling1D()(x[:, :-2])
    outputs = keras.layers.Dense(3, name="head")(pooled)
    return keras.Model(entities, [outputs, scores, simplicial_scores])


def test_shared_block_model_save_load_and_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps the summary table at the terminal width
    model = _paper_model()
    e = _entities(4, batch=3, n=12, d=16)
    before = [np.asarray(t) for t in model(e)]
    assert before[1].shape == (3, 2, 14, 14) and before[2].shape == (3, 1, 12, 2, 2)
    path = os.path.join(tmp_path, "block.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    for a, b in zip(before, [np.asarray(t) for t in loaded(e)]):
        np.testing.assert_array_equal(a, b)
    lines = []
    model.summary(line_length=150, print_fn=lambda line, **kwargs: lines.append(line))
    text = "\n".join(lines)
    block = model.get_layer("block")
    assert "block (TwoSimplicialTransformerBlock)" in text
    assert "virtual (VirtualEntities)" in text
    assert f"{block.count_params():,}" in text
    # 1-simplicial q,k,v 16 -> 16; p,l1,l2,u 16 -> 6; B 6^3; g: (16 + 6) -> 12 -> 16; 3 norms.
    expected = 3 * 16 * 16 + 4 * 16 * 6 + 6**3 + (22 * 12 + 12) + (12 * 16 + 16) + 2 * (16 + 16 + 6)
    assert block.count_params() == expected
    config = block.get_config()
    assert TwoSimplicialTransformerBlock.from_config(config).get_config() == config


def test_transformer_block_config_round_trip():
    block = TransformerBlock(
        num_heads=3,
        key_dim=5,
        value_dim=7,
        feedforward_dim=11,
        use_bias=True,
        layer_norm_epsilon=1e-3,
        name="relational",
    )
    config = block.get_config()
    assert config["value_dim"] == 7 and config["layer_norm_epsilon"] == 1e-3
    clone = TransformerBlock.from_config(config)
    assert clone.get_config() == config


def test_zero_simplicial_gain_starts_as_a_one_simplicial_block():
    e = _entities(8, n=7)
    block = TwoSimplicialTransformerBlock(
        num_heads=2,
        key_dim=3,
        simplicial_key_dim=4,
        feedforward_dim=9,
        simplicial_gain_initializer="zeros",
    )
    out = np.asarray(block(e))
    np.testing.assert_array_equal(np.asarray(block.simplicial_norm.gamma), 0.0)
    rng = np.random.default_rng(0)
    for weight in block.simplicial_attention.weights:  # p, l1, l2, u and B
        weight.assign(rng.normal(size=weight.shape).astype("float32"))
    np.testing.assert_allclose(np.asarray(block(e)), out, atol=1e-6)

    config = block.get_config()
    clone = TwoSimplicialTransformerBlock.from_config(config)
    assert clone.get_config() == config
    assert config["simplicial_gain_initializer"]["class_name"] == "Zeros"
    with pytest.raises(ValueError, match="simplicial_gain_initializer"):
        TwoSimplicialTransformerBlock(simplicial_gain_initializer="nonsense")


@TF_ONLY
def test_zero_simplicial_gain_has_a_gradient():
    import tensorflow as tf

    block = TwoSimplicialTransformerBlock(
        num_heads=2,
        key_dim=3,
        simplicial_key_dim=4,
        feedforward_dim=9,
        simplicial_gain_initializer="zeros",
    )
    e = tf.constant(_entities(9, n=7))
    block(e)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(block(e) * tf.constant(_entities(10, n=7)))
    gain_gradient = tape.gradient(loss, block.simplicial_norm.gamma)
    assert np.abs(np.asarray(gain_gradient)).max() > 1e-3


@TF_ONLY
@pytest.mark.parametrize("policy", ["float32", "mixed_float16", "mixed_bfloat16"])
def test_block_gradients_finite_under_jit(policy):
    import tensorflow as tf

    keras.mixed_precision.set_global_policy(policy)
    try:
        block = TwoSimplicialTransformerBlock(
            num_heads=2, key_dim=4, simplicial_key_dim=4, feedforward_dim=8
        )
        e = np.zeros((2, 6, 8), "float32")  # every p, l, u is 0: the scalar product's sqrt at 0
        e[1] = _entities(6, batch=1)[0]
        e = tf.constant(e)
        block(e)

        @tf.function(jit_compile=True)
        def grads(e):
            with tf.GradientTape() as tape:
                tape.watch(e)
                loss = tf.reduce_sum(tf.cast(block(e), "float32") ** 2)
            return tape.gradient(loss, [e] + block.trainable_variables)

        gradients = grads(e)
        assert all(np.all(np.isfinite(np.asarray(tf.cast(g, "float32")))) for g in gradients)
        assert np.abs(np.asarray(tf.cast(gradients[0], "float32"))).sum() > 0
    finally:
        keras.mixed_precision.set_global_policy("float32")


@TF_ONLY
def test_blocks_in_jit_compiled_training_with_dynamic_batch():
    model = _paper_model()
    model.compile(optimizer="adam", loss=["mse", None, None], jit_compile=True)
    e = _entities(7, batch=8, n=12, d=16)
    history = model.fit(e, np.zeros((8, 3), "float32"), batch_size=4, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


@pytest.mark.parametrize(
    "factory,name",
    [
        (lambda: TransformerBlock(num_heads=0), "num_heads"),
        (lambda: TransformerBlock(feedforward_dim=-1), "feedforward_dim"),
        (lambda: TransformerBlock(key_dim=0), "key_dim"),
        (lambda: TwoSimplicialTransformerBlock(num_virtual_entities=-1), "num_virtual_entities"),
        (lambda: TwoSimplicialTransformerBlock(simplicial_key_dim=0), "simplicial_key_dim"),
        # The sublayer's errors name the block's arguments.
        (lambda: TwoSimplicialTransformerBlock(simplicial_order=1), "`simplicial_order` must"),
        (lambda: TwoSimplicialTransformerBlock(simplicial_form="bilinear"), "simplicial_form="),
        (lambda: TwoSimplicialTransformerBlock(simplicial_logit_scale="x"), "`simplicial_logit_s"),
        (lambda: TwoSimplicialTransformerBlock(simplicial_window=(0, 2)), "`simplicial_window`"),
        (
            lambda: TwoSimplicialTransformerBlock(num_simplicial_key_value_heads=2),
            "`num_simplicial_heads` must be a multiple of `num_simplicial_key_value_heads`",
        ),
        (lambda: VirtualEntities(embeddings_initializer="nope"), "`embeddings_initializer`"),
        (lambda: TwoSimplicialTransformerBlock(layer_norm_epsilon=-1), "layer_norm_epsilon"),
        (lambda: VirtualEntities(0), "num_entities"),
    ],
)
def test_bad_arguments(factory, name):
    with pytest.raises(ValueError, match=name):
        factory()


def test_too_many_virtual_entities():
    block = TwoSimplicialTransformerBlock(num_virtual_entities=6)
    with pytest.raises(ValueError, match="num_virtual_entities"):
        block(_entities(8, n=6))
