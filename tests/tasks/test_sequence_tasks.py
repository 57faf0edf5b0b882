"""The causal sequence tasks: labels against their definitions, determinism, the recall's keys."""

import itertools

import numpy as np
import pytest

from keras_simplicial import sequence_tasks as st


def test_causal_match3_labels_match_the_definition():
    x = np.random.default_rng(0).integers(0, 7, (50, 9))
    labels = st.causal_match3_labels(x, 7)
    for s, i in itertools.product(range(50), range(9)):
        want = any(
            (x[s, i] + x[s, j] + x[s, k]) % 7 == 0 for j in range(i + 1) for k in range(i + 1)
        )
        assert labels[s, i] == want, (s, i)


def test_causal_match3_draws_from_seed_and_split():
    a = st.causal_match3(20, length=6, modulus=11, seed=3)
    b = st.causal_match3(20, length=6, modulus=11, seed=3)
    c = st.causal_match3(20, length=6, modulus=11, seed=3, split="test")
    np.testing.assert_array_equal(a.symbols, b.symbols)
    assert not np.array_equal(a.symbols, c.symbols)
    assert a.inputs.shape == (20, 6, 11)
    np.testing.assert_array_equal(a.inputs.argmax(-1), a.symbols)


def test_pair_recall_labels_are_the_values_of_the_queried_pairs():
    examples = st.pair_recall(200, num_keys=6, num_values=5, num_queries=3, seed=1)
    assert examples.inputs.shape == (200, 18, 6 + 5 + 18)
    single_key_answers = 0
    for tokens, labels in zip(examples.symbols, examples.labels):
        items = {(tokens[3 * n], tokens[3 * n + 1]): tokens[3 * n + 2] - 6 for n in range(4)}
        assert len(items) == 4 and len(set(items.values())) == 4
        firsts = {a for a, _ in items}
        seconds = {b for _, b in items}
        assert len(firsts) == 2 and len(seconds) == 2  # a 2 x 2 grid
        scored = np.flatnonzero(labels != st.IGNORED)
        assert list(scored) == [13, 15, 17]
        for position in scored:
            pair = (tokens[position - 1], tokens[position])
            assert labels[position] == items[pair]
            # The query's b alone is shared by two items with different values.
            single_key_answers += sum(b == pair[1] for _, b in items) == 1
    assert single_key_answers == 0


def test_per_position_majority_accuracy():
    train = np.array([[1, 0, st.IGNORED], [1, 1, st.IGNORED], [0, 1, 2]])
    test = np.array([[1, 0, 2], [0, 1, st.IGNORED]])
    # Majorities 1, 1, 2: correct 1 + 0 + 1 on the first row, 0 + 1 on the second: 3 of 5.
    assert st.per_position_majority_accuracy(train, test) == pytest.approx(3 / 5)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: st.causal_match3(0), "num_samples"),
        (lambda: st.causal_match3(4, modulus=1), "modulus"),
        (lambda: st.pair_recall(4, num_values=3), "num_values"),
        (lambda: st.pair_recall(4, split="valid"), "split"),
    ],
)
def test_bad_arguments(call, name):
    with pytest.raises(ValueError, match=name):
        call()
