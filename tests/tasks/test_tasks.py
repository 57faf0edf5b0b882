"""keras_simplicial.tasks: labels checked by brute force, balance, held-out colours, seeds."""

import itertools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from keras_simplicial import tasks


def brute_force_match3(x, modulus):
    """The definition, over every (j, k) of every position i."""
    n = len(x)
    return [
        int(any((x[i] + x[j] + x[k]) % modulus == 0 for j in range(n) for k in range(n)))
        for i in range(n)
    ]


def brute_force_match2(x, modulus):
    return [int(any((x[i] + x[j]) % modulus == 0 for j in range(len(x)))) for i in range(len(x))]


def brute_force_opens(symbols):
    """y = 1 iff the held keys' colours are exactly the locks' colours."""
    held = sorted(int(c) for c, role in symbols if role == tasks.HELD)
    locks = sorted(int(c) for c, role in symbols if role == tasks.LOCK)
    return int(held == locks)


@pytest.mark.parametrize("balanced", [False, True])
@pytest.mark.parametrize(
    "generator,reference",
    [(tasks.match3, brute_force_match3), (tasks.match2, brute_force_match2)],
)
def test_match_labels_by_brute_force(generator, reference, balanced):
    examples = generator(300, length=8, modulus=11, seed=3, balanced=balanced)
    assert examples.inputs.shape == (300, 8, 11) and examples.inputs.dtype == np.float32
    assert examples.labels.shape == (300, 8)
    np.testing.assert_array_equal(examples.inputs.argmax(-1), examples.symbols)
    np.testing.assert_array_equal(examples.inputs.sum(-1), 1.0)
    for x, y in zip(examples.symbols, examples.labels):
        assert list(y) == reference(list(x), 11)


def test_match_labels_cover_both_outcomes_and_edge_cases():
    # 3 * 0 = 0: a 0 is always positive; 1 + 1 + 9 = 11; 9 + 2 = 11.
    x = np.array([[0, 5, 5, 5], [1, 9, 2, 2]])
    np.testing.assert_array_equal(tasks.match3_labels(x, 11), [[1, 0, 0, 0], [1, 1, 0, 0]])
    np.testing.assert_array_equal(tasks.match2_labels(x, 11), [[1, 0, 0, 0], [0, 1, 1, 1]])


@pytest.mark.parametrize("generator", [tasks.match3, tasks.match2])
def test_balanced_match_tasks_have_half_positive_positions(generator):
    examples = generator(500, length=8, modulus=23, seed=1)
    np.testing.assert_array_equal(examples.labels.sum(axis=1), 4)
    plain = generator(4000, length=8, modulus=23, seed=1, balanced=False)
    rate = plain.labels.mean()
    # Uniform draws: Match3 mostly positive, Match2 mostly negative, as the rates say.
    expected = tasks.positive_rate(
        tasks.match3_labels if generator is tasks.match3 else tasks.match2_labels, 8, 23
    )
    assert abs(rate - expected) < 0.02
    assert (rate > 0.7) if generator is tasks.match3 else (rate < 0.4)


@pytest.mark.parametrize("num_keys,num_held_out", [(2, 6), (3, 12)])
def test_key_task_labels_balance_and_layout(num_keys, num_held_out):
    for split in tasks.SPLITS:
        examples = tasks.key_task(
            400, num_keys=num_keys, num_held_out=num_held_out, seed=5, split=split
        )
        n = 2 * num_keys + 4
        assert examples.inputs.shape == (400, n, 8 + 3)
        np.testing.assert_array_equal(examples.inputs[..., :8].argmax(-1), examples.symbols[..., 0])
        np.testing.assert_array_equal(examples.inputs[..., 8:].argmax(-1), examples.symbols[..., 1])
        assert [brute_force_opens(s) for s in examples.symbols] == list(examples.labels)
        assert examples.labels.sum() == 200  # exactly balanced
        for symbols, label in zip(examples.symbols, examples.labels):
            roles = list(symbols[:, 1])
            assert roles.count(tasks.HELD) == roles.count(tasks.LOCK) == num_keys
            locks = {int(c) for c, role in symbols if role == tasks.LOCK}
            held = {int(c) for c, role in symbols if role == tasks.HELD}
            distractors = {int(c) for c, role in symbols if role == tasks.DISTRACTOR}
            assert len(locks) == len(held) == num_keys  # distinct colours
            if not label:  # a near miss: one lock colour missing, and a distractor carries it
                assert len(locks - held) == 1 and (locks - held) <= distractors
            else:
                assert locks & distractors


@pytest.mark.parametrize("num_keys,num_held_out", [(2, 6), (3, 12)])
def test_held_out_colours_never_appear_in_training(num_keys, num_held_out):
    held_out = set(tasks.held_out_colours(8, num_keys, num_held_out, seed=7))
    assert len(held_out) == num_held_out
    assert held_out <= set(itertools.combinations(range(8), num_keys))

    def combinations(examples, role):
        return [
            tuple(sorted(int(c) for c, r in symbols if r == role)) for symbols in examples.symbols
        ]

    train = tasks.key_task(2000, num_keys=num_keys, num_held_out=num_held_out, seed=7)
    for role in (tasks.HELD, tasks.LOCK):
        assert not set(combinations(train, role)) & held_out
    test = tasks.key_task(500, num_keys=num_keys, num_held_out=num_held_out, seed=7, split="test")
    assert set(combinations(test, tasks.LOCK)) <= held_out
    # Every held-out combination is used, and the positives hold them.
    assert set(combinations(test, tasks.LOCK)) == held_out
    # Another seed holds out other combinations.
    assert set(tasks.held_out_colours(8, num_keys, num_held_out, seed=8)) != held_out


@pytest.mark.parametrize(
    "make",
    [
        lambda seed, split: tasks.match3(50, seed=seed, split=split),
        lambda seed, split: tasks.match2(50, seed=seed, split=split, balanced=False),
        lambda seed, split: tasks.key_task(50, num_keys=3, num_held_out=12, seed=seed, split=split),
    ],
)
def test_seeds_reproduce_and_splits_differ(make):
    first, again = make(4, "train"), make(4, "train")
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first.symbols, make(5, "train").symbols)
    assert not np.array_equal(first.symbols, make(4, "test").symbols)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: tasks.match3(0), "num_samples"),
        (lambda: tasks.match3(10, length=7), "length"),
        (lambda: tasks.match2(10, modulus=1), "modulus"),
        (lambda: tasks.match3(10, split="validation"), "split"),
        (lambda: tasks.key_task(10, num_held_out=28), "num_held_out"),
        (lambda: tasks.key_task(10, num_keys=3, num_colours=3), "num_colours"),
        (lambda: tasks.key_task(10, num_distractors=0), "num_distractors"),
    ],
)
def test_bad_arguments(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_the_tasks_load_neither_keras_nor_tensorflow():
    script = textwrap.dedent(
        """
        import sys
        from keras_simplicial import tasks
        tasks.match3(4, seed=0)
        tasks.key_task(4, seed=0)
        print([m for m in ("keras", "tensorflow", "jax", "torch") if m in sys.modules])
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"
