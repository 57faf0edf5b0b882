"""The k-fold unsigned scalar product of Definition A.8, computed from Gram entries.

    <v_1, ..., v_k>^2 = |v_1|^2 ... |v_k|^2 - det Gram(v_1, ..., v_k)        (eq. useful_identity)

Expanding det Gram by the Leibniz formula, the identity permutation contributes exactly
|v_1|^2 ... |v_k|^2, so the square is minus the sum over the *other* permutations. Evaluating that
sum directly (instead of subtracting two nearly equal numbers) keeps the result accurate when the
vectors are close to linearly dependent. For k = 3 it is the closed polynomial of
eq. (unsigned_scalar_triple_square).
"""

import functools
import itertools

from keras import ops

DEFAULT_EPSILON = 1e-6


@functools.lru_cache(maxsize=None)
def scalar_product_square_terms(k):
    """Monomials of <v_1..v_k>^2 in the Gram entries G[a][b] (a <= b).

    Returns a tuple of (coefficient, ((a, b), ...)) such that
    <v_1..v_k>^2 = sum coefficient * prod G[a][b]. A permutation s contributes
    -sign(s) * prod_a G[a][s(a)]; since G is symmetric, permutations with the same multiset of
    unordered pairs {a, s(a)} give the same monomial and are merged.
    """
    if k < 2:
        raise ValueError(f"`k` must be at least 2, received k={k}.")
    merged = {}
    for permutation in itertools.permutations(range(k)):
        if permutation == tuple(range(k)):
            continue
        inversions = sum(
            1 for a in range(k) for b in range(a + 1, k) if permutation[a] > permutation[b]
        )
        sign = -1 if inversions % 2 else 1
        monomial = tuple(sorted((min(a, s), max(a, s)) for a, s in enumerate(permutation)))
        merged[monomial] = merged.get(monomial, 0) - sign
    return tuple((c, m) for m, c in sorted(merged.items()) if c != 0)


def triple_product_square(g_ab, g_ac, g_bc, g_aa, g_bb, g_cc):
    """<a, b, c>^2 from pairwise dot products, eq. (unsigned_scalar_triple_square)."""
    return (
        ops.square(g_ab) * g_cc
        + ops.square(g_bc) * g_aa
        + ops.square(g_ac) * g_bb
        - 2.0 * g_ab * g_ac * g_bc
    )


def scalar_product_square_from_gram(gram, k):
    """<v_1..v_k>^2 given `gram(a, b)`, a function returning the (broadcastable) entry v_a . v_b."""
    if k == 2:
        return ops.square(gram(0, 1))
    if k == 3:
        return triple_product_square(
            gram(0, 1), gram(0, 2), gram(1, 2), gram(0, 0), gram(1, 1), gram(2, 2)
        )
    total = None
    for coefficient, monomial in scalar_product_square_terms(k):
        term = gram(*monomial[0])
        for a, b in monomial[1:]:
            term = term * gram(a, b)
        term = term * float(coefficient)
        total = term if total is None else total + term
    return total


def safe_sqrt(square, epsilon):
    """sqrt(max(square, 0) + epsilon): rounding can make `square` slightly negative, and the
    derivative of sqrt is infinite at 0, which is where pairwise orthogonal vectors land."""
    return ops.sqrt(ops.maximum(square, 0.0) + epsilon)


def unsigned_scalar_product(*vectors, epsilon=DEFAULT_EPSILON):
    r"""The k-fold unsigned scalar product $\langle v_1, \ldots, v_k \rangle$ (Def. A.4, eq.
    defn_unsigned_scalar).

    For k = 2 it is $|a \cdot b|$; for k = 3 it is the unsigned scalar triple product of eq.
    (scalar_triple), $\| (a \cdot b)c - (a \cdot c)b + (b \cdot c)a \|$, evaluated by
    the closed polynomial of eq. (unsigned_scalar_triple_square). In general (eq. useful_identity)

    $$\langle v_1, \ldots, v_k \rangle^2 = |v_1|^2 \cdots |v_k|^2
    - \det \operatorname{Gram}(v_1, \ldots, v_k)$$

    Args:
        *vectors: k >= 2 tensors whose last axis is the vector space H (all the same size); the
            leading axes broadcast against each other.
        epsilon: added under the square root so that the gradient stays finite where the product
            vanishes (pairwise orthogonal or zero vectors). Use 0.0 for the exact value.

    Returns:
        The broadcast leading shape (the last axis is contracted). Half-precision inputs are
        evaluated in float32 and cast back.
    """
    if len(vectors) < 2:
        raise ValueError(
            f"`vectors`: the unsigned scalar product needs at least 2 vectors, got {len(vectors)}."
        )
    if epsilon < 0:
        raise ValueError(f"`epsilon` must be non-negative, received epsilon={epsilon}.")
    vectors = [ops.convert_to_tensor(v) for v in vectors]
    sizes = {v.shape[-1] for v in vectors}
    if len(sizes) != 1:
        raise ValueError(
            "`vectors` must have the same last dimension, received shapes "
            f"{[tuple(v.shape) for v in vectors]}."
        )
    dtype = vectors[0].dtype
    work_dtype = "float32" if str(dtype) in ("float16", "bfloat16") else dtype
    vectors = [ops.cast(v, work_dtype) for v in vectors]
    cache = {}

    def gram(a, b):
        a, b = min(a, b), max(a, b)
        if (a, b) not in cache:
            cache[(a, b)] = ops.sum(vectors[a] * vectors[b], axis=-1)
        return cache[(a, b)]

    square = scalar_product_square_from_gram(gram, len(vectors))
    return ops.cast(safe_sqrt(square, epsilon), dtype)
