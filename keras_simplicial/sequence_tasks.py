"""Synthetic sequence tasks in which order matters, for causal (decoder) models, generated on the
fly from a seed. numpy only, as `keras_simplicial.tasks` (whose `Examples` they return).

- `causal_match3`: x_1..x_N in Z_M; y_i = 1 iff some positions j, k <= i (i included, j = k
  allowed) have x_i + x_j + x_k = 0 (mod M): Match3 (Sanford, Hsu and Telgarsky 2023) over each
  prefix, so every label needs three positions at once and none may look ahead.
- `pair_recall`: associative recall whose key is a pair of tokens. The sequence holds four items
  (a, b, v), the four pairs of a 2 x 2 grid {a1, a2} x {b1, b2} in random order, each with its own
  value v, then queries (a, b); the label at a query's b is the value of the item (a, b). Each
  key token belongs to two items with different values, so a single token answers at best half
  the queries: the pair is the key.

Labels are int32 [S, N] with `IGNORED` (-1) where a position has no label.
"""

import numpy as np

from keras_simplicial.tasks import SPLITS, Examples, _check_positive, _one_hot, _rng, _split_stream

IGNORED = -1
ITEMS = 4  # the four pairs of a 2 x 2 grid


def causal_match3_labels(x, modulus):
    """y_i = [exists j, k <= i: x_i + x_j + x_k = 0 mod M] for x [S, N] -> int32 [S, N].

    The residues of the prefix's pairwise sums are kept in a table [S, M], updated with the new
    pairs (j, i) at each i: O(S N^2) in all.
    """
    x = np.asarray(x)
    samples, length = x.shape
    present = np.zeros((samples, modulus), bool)
    rows = np.arange(samples)[:, None]
    labels = np.zeros((samples, length), "int32")
    for i in range(length):
        present[rows, (x[:, : i + 1] + x[:, i : i + 1]) % modulus] = True
        labels[:, i] = present[np.arange(samples), (-x[:, i]) % modulus]
    return labels


def causal_match3(num_samples, length=12, modulus=31, seed=0, split="train"):
    """Causal Match3, x uniform on 0..M-1.

    Args:
        num_samples: S.
        length: N.
        modulus: M.
        seed: the draw is a function of (seed, split) only.
        split: "train" or "test".

    Returns:
        `Examples`: inputs [S, N, M] (one-hot x), labels [S, N] (0 or 1, every position),
        symbols x [S, N].
    """
    num_samples = _check_positive("num_samples", num_samples)
    length = _check_positive("length", length, minimum=2)
    modulus = _check_positive("modulus", modulus, minimum=2)
    x = _rng(seed, _split_stream(split)).integers(0, modulus, (num_samples, length))
    x = x.astype("int32")
    return Examples(_one_hot(x, modulus), causal_match3_labels(x, modulus), x)


def pair_recall(num_samples, num_keys=8, num_values=8, num_queries=2, seed=0, split="train"):
    """Pair-keyed associative recall (multi-query).

    Tokens: key symbols 0..K-1, then value symbols K..K+V-1. A sequence is the four items
    a b v (a in {a1, a2}, b in {b1, b2}, a1 != a2, b1 != b2, four distinct values), then
    `num_queries` queries a b, each one of the four pairs, drawn with replacement; length
    N = 12 + 2 Q.

    Args:
        num_samples: S.
        num_keys: K, the key symbols (at least 2).
        num_values: V, the value symbols (at least 4).
        num_queries: Q.
        seed: the draw is a function of (seed, split) only.
        split: "train" or "test".

    Returns:
        `Examples`: inputs [S, N, K + V + N] (one-hot token, then one-hot position), labels
        [S, N] (the value's index 0..V-1 at each query's b, `IGNORED` elsewhere), symbols
        [S, N] (the tokens).
    """
    num_samples = _check_positive("num_samples", num_samples)
    num_keys = _check_positive("num_keys", num_keys, minimum=2)
    num_values = _check_positive("num_values", num_values, minimum=ITEMS)
    num_queries = _check_positive("num_queries", num_queries)
    rng = _rng(seed, _split_stream(split))
    length = 3 * ITEMS + 2 * num_queries
    tokens = np.zeros((num_samples, length), "int32")
    labels = np.full((num_samples, length), IGNORED, "int32")
    grid = np.array([(0, 0), (0, 1), (1, 0), (1, 1)])
    for s in range(num_samples):
        a = rng.choice(num_keys, 2, replace=False)
        b = rng.choice(num_keys, 2, replace=False)
        values = rng.choice(num_values, ITEMS, replace=False)
        order = rng.permutation(ITEMS)
        for slot, item in enumerate(order):
            tokens[s, 3 * slot : 3 * slot + 3] = (
                a[grid[item, 0]],
                b[grid[item, 1]],
                num_keys + values[item],
            )
        for q, item in enumerate(rng.integers(0, ITEMS, num_queries)):
            start = 3 * ITEMS + 2 * q
            tokens[s, start : start + 2] = a[grid[item, 0]], b[grid[item, 1]]
            labels[s, start + 1] = values[item]
    inputs = np.concatenate(
        [
            _one_hot(tokens, num_keys + num_values),
            np.broadcast_to(np.eye(length, dtype="float32"), (num_samples, length, length)),
        ],
        axis=-1,
    )
    return Examples(inputs, labels, tokens)


def per_position_majority_accuracy(train_labels, test_labels):
    """The test accuracy of answering, at each position, the most frequent training label there:
    what position alone gives (the chance level of a per-position task)."""
    correct = total = 0
    for i in range(train_labels.shape[1]):
        train, test = train_labels[:, i], test_labels[:, i]
        train, test = train[train != IGNORED], test[test != IGNORED]
        if len(test) == 0:
            continue
        guess = np.bincount(train).argmax() if len(train) else 0
        correct += int((test == guess).sum())
        total += len(test)
    return correct / total


__all__ = [
    "IGNORED",
    "SPLITS",
    "causal_match3",
    "causal_match3_labels",
    "pair_recall",
    "per_position_majority_accuracy",
]
