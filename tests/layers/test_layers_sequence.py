"""Causal and windowed attention (sequence models), on the default backend; the same checks run
on the other backends in `test_layers_backends.py`."""

import os

import keras
import numpy as np
import pytest
import sequence_checks as checks

from keras_simplicial import (
    DotProductAttention,
    SimplicialAttention,
    TwoSimplicialTransformerBlock,
)

FORMS = ("scalar_product", "trilinear")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("order", [2, 3])
@pytest.mark.parametrize("tile_size", [None, 2])
@pytest.mark.parametrize("user_mask", [False, True])
def test_causal_matches_the_masked_reference(form, order, tile_size, user_mask):
    checks.check_causal_matches_reference(form, order, tile_size, user_mask)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("window", [(6, 6), (3, 2), (1, 4), (9, 1)])
def test_window_matches_the_masked_reference(form, window):
    checks.check_window_matches_reference(form, window)


@pytest.mark.parametrize("form", FORMS)
def test_window_covering_the_sequence_equals_the_causal_full_path(form):
    checks.check_window_covering_the_sequence_equals_the_causal_full_path(form)


@pytest.mark.parametrize("name", list(checks.causal_calls()))
def test_no_output_depends_on_a_later_token(name):
    checks.check_no_output_depends_on_a_later_token(checks.causal_calls()[name])


def test_dot_product_causal_mask_equals_a_lower_triangular_mask():
    x = np.random.default_rng(0).normal(size=(2, 5, 6)).astype("float32")
    layer = DotProductAttention(num_heads=2, key_dim=3)
    user = np.random.default_rng(1).random((2, 5, 5)) < 0.7
    tril = np.tril(np.ones((5, 5), bool))
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(layer(x, x, attention_mask=user, use_causal_mask=True)),
        keras.ops.convert_to_numpy(layer(x, x, attention_mask=user & tril)),
        rtol=1e-6,
        atol=1e-6,
    )


@pytest.mark.parametrize("form", FORMS)
def test_window_runs_where_the_full_pairs_could_not_be_held(form):
    """N = 4096: one head's [N, N, N] logits would take 275 GB; windows (16, 4) take 1 MB."""
    n = 4096
    x = np.random.default_rng(0).normal(size=(1, n, 8)).astype("float32")
    layer = SimplicialAttention(num_heads=1, key_dim=4, form=form, window=(16, 4))
    out = keras.ops.convert_to_numpy(layer(x, x))
    assert out.shape == (1, n, 4) and np.all(np.isfinite(out))
    # The last query against its own windows, computed on the last 16 tokens alone.
    tail = layer(x[:, -16:], x[:, -16:])
    np.testing.assert_allclose(keras.ops.convert_to_numpy(tail)[:, -1], out[:, -1], atol=1e-5)


def test_windowed_decoder_trains_saves_and_loads(tmp_path):
    """Compiled (XLA where the backend has it), as on the other backends in
    `test_layers_backends.py`."""
    model = checks.windowed_decoder()
    x = np.random.default_rng(0).normal(size=(8, 6, 8)).astype("float32")
    model.compile(optimizer="adam", loss="mse", jit_compile=keras.backend.backend() != "torch")
    history = model.fit(x, np.ones((8, 6, 1), "float32"), batch_size=4, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"])), history.history
    path = os.path.join(tmp_path, "decoder.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(loaded(x)), keras.ops.convert_to_numpy(model(x)), atol=1e-6
    )
    assert loaded.get_layer("trilinear").get_config()["simplicial_window"] == (3, 2)


@pytest.mark.parametrize(
    "factory,name",
    [
        (lambda: SimplicialAttention(window=(2,)), "window"),
        (lambda: SimplicialAttention(window=(0, 2)), "window"),
        (lambda: SimplicialAttention(window="wide"), "window"),
        (lambda: SimplicialAttention(window=(2, True)), "window"),
        (lambda: SimplicialAttention(order=3, window=(2, 2)), "order"),
        (
            lambda: TwoSimplicialTransformerBlock(simplicial_window=(2, 2)),
            "num_virtual_entities",
        ),
    ],
)
def test_bad_window_arguments(factory, name):
    with pytest.raises(ValueError, match=name):
        factory()


def test_bad_window_and_causal_calls():
    x = np.zeros((1, 4, 6), "float32")
    layer = SimplicialAttention(num_heads=1, key_dim=2, window=(2, 2))
    with pytest.raises(ValueError, match="attention_mask"):
        layer(x, x, attention_mask=np.ones((1, 4, 4, 4), bool))
    with pytest.raises(ValueError, match="length"):
        layer(x, np.zeros((1, 3, 6), "float32"))
    with pytest.raises(ValueError, match="use_causal_mask"):
        TwoSimplicialTransformerBlock(num_virtual_entities=2)(
            np.zeros((1, 5, 8), "float32"), use_causal_mask=True
        )
