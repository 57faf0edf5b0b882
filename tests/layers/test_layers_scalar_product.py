"""unsigned_scalar_product: Definition A.8, eq. (scalar_triple) and Lemma A.10 (i)-(v)."""

import itertools

import keras
import numpy as np
import pytest
from loop_reference import scalar_product_by_gram, triple_vector_norm

from keras_simplicial import unsigned_scalar_product
from keras_simplicial.scalar_product import scalar_product_square_terms

RNG = np.random.default_rng(0)


def usp(*vectors, epsilon=0.0):
    return np.asarray(
        unsigned_scalar_product(*[np.asarray(v, np.float64) for v in vectors], epsilon=epsilon)
    )


def test_triple_equals_clifford_grade_one_norm():
    a, b, c = RNG.normal(size=(3, 16, 7))
    expected = [triple_vector_norm(*v) for v in zip(a, b, c)]
    np.testing.assert_allclose(usp(a, b, c), expected, rtol=1e-10)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_equals_norms_minus_gram_determinant(k):
    vectors = RNG.normal(size=(k, 10, 6))
    expected = [scalar_product_by_gram(*v) for v in zip(*vectors)]
    np.testing.assert_allclose(usp(*vectors), expected, rtol=1e-8, atol=1e-10)


def test_k2_is_absolute_dot_product():
    a, b = RNG.normal(size=(2, 9, 5))
    np.testing.assert_allclose(usp(a, b), np.abs(np.sum(a * b, -1)), rtol=1e-12)


def test_closed_polynomial_for_k3():
    # eq. (unsigned_scalar_triple_square): G01^2 G22 + G12^2 G00 + G02^2 G11 - 2 G01 G02 G12
    terms = dict((m, c) for c, m in scalar_product_square_terms(3))
    assert terms == {
        ((0, 1), (0, 1), (2, 2)): 1,
        ((0, 0), (1, 2), (1, 2)): 1,
        ((0, 2), (0, 2), (1, 1)): 1,
        ((0, 1), (0, 2), (1, 2)): -2,
    }


def test_broadcasting_over_leading_axes():
    p = RNG.normal(size=(4, 1, 1, 5))
    l1 = RNG.normal(size=(1, 3, 1, 5))
    l2 = RNG.normal(size=(1, 1, 2, 5))
    out = usp(p, l1, l2)
    assert out.shape == (4, 3, 2)
    np.testing.assert_allclose(
        out[2, 1, 0], triple_vector_norm(p[2, 0, 0], l1[0, 1, 0], l2[0, 0, 0])
    )


@pytest.mark.parametrize("k", [2, 3, 4])
def test_lemma_a6(k):
    v = RNG.normal(size=(k, 8))
    value = usp(*v)
    norms = np.prod(np.linalg.norm(v, axis=-1))
    # (i) 0 <= <v> <= prod |v_i|, strictly below for independent vectors (iii).
    assert 0.0 <= value < norms * (1 - 1e-6)
    # (ii) pairwise orthogonal -> 0.
    q, _ = np.linalg.qr(RNG.normal(size=(8, k)))
    assert usp(*(q.T * RNG.uniform(0.5, 2.0, size=(k, 1)))) < 1e-12
    # (iii) linearly dependent <-> equality.
    dependent = v.copy()
    dependent[-1] = 0.3 * v[0] - 1.7 * v[k - 2]
    np.testing.assert_allclose(
        usp(*dependent), np.prod(np.linalg.norm(dependent, axis=-1)), rtol=1e-10
    )
    # (iv) symmetric under permutations.
    for perm in itertools.permutations(range(k)):
        np.testing.assert_allclose(usp(*v[list(perm)]), value, rtol=1e-12)
    # (v) <l1 v1, ..., lk vk> = |l1| ... |lk| <v1, ..., vk>.
    lambdas = np.array([-2.0, 0.5, 3.0, -0.25])[:k]
    np.testing.assert_allclose(
        usp(*(v * lambdas[:, None])), np.prod(np.abs(lambdas)) * value, rtol=1e-10
    )


def _gradient_tf(vectors, dtype):
    import tensorflow as tf

    variables = [tf.Variable(np.asarray(v, dtype)) for v in vectors]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(unsigned_scalar_product(*variables))
    return [np.asarray(g, np.float64) for g in tape.gradient(loss, variables)]


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="gradient via tf.GradientTape")
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_gradient_finite_at_orthogonal_and_zero_vectors(dtype):
    eye = np.eye(4)
    cases = [
        (eye[0], eye[1], eye[2]),  # pairwise orthogonal: the product is exactly 0
        (np.zeros(4), eye[1], eye[2]),  # a zero vector
        (np.zeros(4), np.zeros(4), np.zeros(4)),
        (eye[0], eye[0], 2 * eye[0]),  # dependent: the maximum
    ]
    for vectors in cases:
        for grad in _gradient_tf(vectors, dtype):
            assert np.all(np.isfinite(grad)), (vectors, grad)


def test_bad_arguments():
    with pytest.raises(ValueError, match="vectors"):
        unsigned_scalar_product(np.ones(3))
    with pytest.raises(ValueError, match="vectors"):
        unsigned_scalar_product(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="epsilon"):
        unsigned_scalar_product(np.ones(3), np.ones(3), epsilon=-1.0)
