"""The loop reference (`loop_reference.py`) checked against independent geometry."""

import numpy as np
from loop_reference import scalar_product_by_gram, softmax, triple_vector_norm


def test_reference_triple_product_is_volume_formula_in_3d():
    # In R^3, |a ^ b ^ c| = |a . (b x c)| (Example A.9).
    rng = np.random.default_rng(1)
    for _ in range(20):
        a, b, c = rng.normal(size=(3, 3))
        expected = np.sqrt(
            np.dot(a, a) * np.dot(b, b) * np.dot(c, c) - np.dot(a, np.cross(b, c)) ** 2
        )
        np.testing.assert_allclose(triple_vector_norm(a, b, c), expected, rtol=1e-9)
        np.testing.assert_allclose(scalar_product_by_gram(a, b, c), expected, rtol=1e-9)


def test_reference_softmax_masks_and_empty_rows():
    np.testing.assert_allclose(softmax([0.0, np.log(3.0)]), [0.25, 0.75])
    np.testing.assert_allclose(
        softmax([5.0, 1.0, 1.0], np.array([False, True, True])), [0, 0.5, 0.5]
    )
    np.testing.assert_array_equal(softmax([1.0, 2.0], np.array([False, False])), [0.0, 0.0])
