"""Each projection of an attention layer starts from its own draw of the kernel initializer: one
initializer instance used for several weights gives each the same values in Keras 3 (its seed is
drawn when it is made), which started query, keys and value equal and every head's B alike."""

import keras
import numpy as np
import pytest

from keras_simplicial import DotProductAttention, SimplicialAttention


def kernels(layer):
    return {
        weight.path.rsplit("/", 1)[-1]: keras.ops.convert_to_numpy(weight)
        for weight in layer.weights
    }


def assert_all_different(arrays):
    names = sorted(arrays)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if arrays[a].shape == arrays[b].shape:
                assert not np.allclose(arrays[a], arrays[b]), (a, b)


@pytest.mark.parametrize("initializer", ["glorot_uniform", "he_normal"])
def test_dot_product_attention_projections_start_different(initializer):
    layer = DotProductAttention(num_heads=2, key_dim=4, kernel_initializer=initializer)
    x = np.zeros((1, 3, 6), "float32")
    layer(x, x)
    assert_all_different({n: w for n, w in kernels(layer).items() if n.endswith("kernel")})


@pytest.mark.parametrize(
    "form,order", [("scalar_product", 2), ("trilinear", 2), ("scalar_product", 3)]
)
def test_simplicial_attention_projections_and_heads_start_different(form, order):
    layer = SimplicialAttention(num_heads=2, key_dim=4, form=form, order=order)
    x = np.zeros((1, 3, 6), "float32")
    layer(x, x)
    weights = kernels(layer)
    assert_all_different({n: w for n, w in weights.items() if n.endswith("kernel")})
    if "B" in weights:
        assert not np.allclose(weights["B"][0], weights["B"][1])  # each head its own B


def test_a_seeded_model_is_still_reproducible():
    def build():
        keras.utils.set_random_seed(7)
        layer = SimplicialAttention(num_heads=2, key_dim=4)
        x = np.zeros((1, 3, 6), "float32")
        layer(x, x)
        return kernels(layer)

    first, second = build(), build()
    assert all(np.array_equal(first[name], second[name]) for name in first)
