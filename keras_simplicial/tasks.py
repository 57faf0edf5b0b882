"""Synthetic tasks on which one attention layer can or cannot do what another does, generated on the
fly from a seed. numpy only: no Keras, no TensorFlow, so any Keras backend can use them (and
``import keras_simplicial.tasks`` stays as light as ``import keras_simplicial``).

Every generator returns `Examples`: float32 one-hot `inputs` [S, N, F] (a set of N entities, no
positions: every task here is invariant under permuting the entities), `labels` and the integer
`symbols` the inputs encode. Sequences have a fixed length, so no task needs a mask.

- `match3` (Sanford, Hsu and Telgarsky 2023, "Representational strengths and limitations of
  transformers"): x_1..x_N in Z_M, y_i = 1 iff there are positions j, k (any of 1..N, i included,
  j = k allowed) with x_i + x_j + x_k = 0 (mod M). One layer of dot-product attention of small
  size cannot compute it; third-order attention can.
- `match2`: y_i = 1 iff some position j (i included) has x_i + x_j = 0 (mod M): the control that
  dot-product attention is known to solve.
- `key_task`: a set of coloured entities shaped like bridge BoxWorld's Gem: `num_keys` held keys,
  the Gem's `num_keys` locks and distractors; y = 1 iff the held keys' colours are exactly the
  locks' colours (linear conjunction, the paper's Section 1). 2 keys: the two-key task; 3: the
  three-key task.

Balancing. Uniform x makes most Match3 positions positive and most Match2 positions negative (at
N = 10, M = 37: 78% and 24%; at N = 8, M = 23: 81% and 30%). `balanced=True` keeps, by rejection,
only sequences with exactly N/2 positive positions (N even): the positive rate is then exactly 1/2
overall and in every sequence. `positive_rate` reports the rate of uniform draws. The key tasks
are balanced by construction: exactly half the examples (rounded down) are positive.
"""

import collections
import itertools

import numpy as np

Examples = collections.namedtuple("Examples", "inputs labels symbols")
Examples.__doc__ = """One draw of a task.

inputs: float32 [S, N, F], one-hot features of N entities.
labels: int32, [S, N] (one label per position: Match2, Match3) or [S] (one per set: key tasks).
symbols: int32, what `inputs` encodes: x [S, N] for Match2 / Match3; for the key tasks
    [S, N, 2], each entity's colour and role (`HELD`, `LOCK`, `DISTRACTOR`).
"""

# Roles of the key tasks' entities (the last 3 features).
HELD, LOCK, DISTRACTOR = 0, 1, 2
ROLES = ("held key", "lock", "distractor")
SPLITS = ("train", "test")

# Candidate sequences drawn per rejection round, and the rounds allowed before giving up.
_CHUNK = 4096
_MAX_ROUNDS = 10_000


def _rng(seed, stream):
    """An independent generator per (seed, stream): 0 held-out colours, 1 train, 2 test."""
    return np.random.default_rng([int(seed), stream])


def _split_stream(split):
    if split not in SPLITS:
        raise ValueError(f"`split` must be one of {SPLITS}, received split={split!r}.")
    return 1 + SPLITS.index(split)


def _check_positive(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}, received {name}={value!r}.")
    return int(value)


def match3_labels(x, modulus):
    """y_i = [exists j, k: x_i + x_j + x_k = 0 mod M] for x [S, N] -> int32 [S, N].

    The pairwise sums x_j + x_k (mod M) of each sequence mark a table of M residues, looked up
    at -x_i: O(S N^2) instead of the O(S N^3) of the definition.
    """
    x = np.asarray(x)
    sums = (x[:, :, None] + x[:, None, :]) % modulus
    present = np.zeros((x.shape[0], modulus), bool)
    np.put_along_axis(present, sums.reshape(x.shape[0], -1), True, axis=1)
    return np.take_along_axis(present, (-x) % modulus, axis=1).astype("int32")


def match2_labels(x, modulus):
    """y_i = [exists j: x_i + x_j = 0 mod M] for x [S, N] -> int32 [S, N]."""
    x = np.asarray(x)
    present = np.zeros((x.shape[0], modulus), bool)
    np.put_along_axis(present, x, True, axis=1)
    return np.take_along_axis(present, (-x) % modulus, axis=1).astype("int32")


def positive_rate(task_labels, length, modulus, num_samples=20_000, seed=0):
    """The fraction of positive positions under uniform x (`match3_labels` or `match2_labels`)."""
    x = np.random.default_rng(seed).integers(0, modulus, (num_samples, length))
    return float(task_labels(x, modulus).mean())


def _one_hot(indices, depth):
    return np.eye(depth, dtype="float32")[indices]


def _match(task_labels, num_samples, length, modulus, seed, split, balanced):
    num_samples = _check_positive("num_samples", num_samples)
    length = _check_positive("length", length, minimum=2)
    modulus = _check_positive("modulus", modulus, minimum=2)
    rng = _rng(seed, _split_stream(split))
    if not balanced:
        x = rng.integers(0, modulus, (num_samples, length))
        y = task_labels(x, modulus)
    else:
        if length % 2:
            raise ValueError(f"`length` must be even when balanced, received length={length}.")
        kept_x, kept_y, count = [], [], 0
        for _ in range(_MAX_ROUNDS):
            x = rng.integers(0, modulus, (_CHUNK, length))
            y = task_labels(x, modulus)
            keep = y.sum(axis=1) == length // 2
            kept_x.append(x[keep])
            kept_y.append(y[keep])
            count += int(keep.sum())
            if count >= num_samples:
                break
        else:
            raise ValueError(
                f"Fewer than {num_samples} balanced sequences of length {length} mod {modulus} "
                f"in {_MAX_ROUNDS * _CHUNK} draws: choose another length or modulus."
            )
        x = np.concatenate(kept_x)[:num_samples]
        y = np.concatenate(kept_y)[:num_samples]
    x = x.astype("int32")
    return Examples(_one_hot(x, modulus), y.astype("int32"), x)


def match3(num_samples, length=10, modulus=37, seed=0, split="train", balanced=True):
    """Match3: y_i = 1 iff x_i + x_j + x_k = 0 (mod M) for some positions j, k.

    Args:
        num_samples: S, the number of sequences.
        length: N, entities per sequence (even when `balanced`).
        modulus: M; x is drawn uniformly from 0..M-1 (then filtered when `balanced`).
        seed: the draw is a function of (seed, split) only.
        split: "train" or "test": independent draws from the same distribution.
        balanced: keep only sequences with exactly N/2 positive positions (rejection).

    Returns:
        `Examples`: inputs [S, N, M] (one-hot x), labels [S, N], symbols x [S, N].
    """
    return _match(match3_labels, num_samples, length, modulus, seed, split, balanced)


def match2(num_samples, length=10, modulus=37, seed=0, split="train", balanced=True):
    """Match2: y_i = 1 iff x_i + x_j = 0 (mod M) for some position j; arguments as `match3`."""
    return _match(match2_labels, num_samples, length, modulus, seed, split, balanced)


def held_out_colours(num_colours, num_keys, num_held_out, seed):
    """The `num_held_out` colour combinations (sorted tuples of `num_keys` distinct colours)
    reserved for the test split, drawn from `seed` alone (train and test agree on them)."""
    combinations = list(itertools.combinations(range(num_colours), num_keys))
    if not 0 < num_held_out < len(combinations):
        raise ValueError(
            f"`num_held_out` must be between 1 and {len(combinations) - 1} (there are "
            f"{len(combinations)} combinations), received num_held_out={num_held_out}."
        )
    chosen = _rng(seed, 0).choice(len(combinations), num_held_out, replace=False)
    return sorted(combinations[i] for i in chosen)


def key_task(
    num_samples,
    num_keys=2,
    num_colours=8,
    num_distractors=4,
    num_held_out=6,
    seed=0,
    split="train",
):
    """The two-key (`num_keys=2`) or three-key task: is the Gem opened by the keys held?

    Each example is a set of N = 2 num_keys + num_distractors entities, one colour and one role
    each: `num_keys` held keys, the Gem's `num_keys` locks (distinct colours) and distractors.
    y = 1 iff the held keys' colours are exactly the locks' colours. Half the examples are
    positive (held = locks). A negative is a near miss: the held keys are the locks with exactly
    one colour replaced by a colour no lock has, so no single lock decides it. In every example one
    distractor has a lock's colour (in a negative, the colour the held keys miss), so a colour's
    presence in the set says nothing; the other distractors' colours are uniform.

    Held-out combinations (`held_out_colours`): in "train" neither the locks' nor the held keys'
    colours are ever one of them; in "test" the locks' colours always are (the held keys of a
    negative may or may not be).

    Args:
        num_samples: S.
        num_keys: held keys and locks (2: the two-key task; 3: the three-key task).
        num_colours: C.
        num_distractors: entities that are neither held nor locks (at least 1).
        num_held_out: colour combinations reserved for the test split.
        seed: the draw is a function of (seed, split) only; the held-out combinations of seed.
        split: "train" or "test".

    Returns:
        `Examples`: inputs [S, N, C + 3] (one-hot colour, then one-hot role), labels [S],
        symbols [S, N, 2] (colour, role). The entities are in random order.
    """
    num_samples = _check_positive("num_samples", num_samples)
    num_keys = _check_positive("num_keys", num_keys)
    num_distractors = _check_positive("num_distractors", num_distractors)
    num_colours = _check_positive("num_colours", num_colours, minimum=num_keys + 1)
    held_out = set(held_out_colours(num_colours, num_keys, num_held_out, seed))
    allowed = sorted(set(itertools.combinations(range(num_colours), num_keys)) - held_out)
    locks_from = sorted(held_out) if split == "test" else allowed
    rng = _rng(seed, _split_stream(split))
    labels = np.zeros(num_samples, "int32")
    labels[: num_samples // 2] = 1
    rng.shuffle(labels)
    length = 2 * num_keys + num_distractors
    symbols = np.zeros((num_samples, length, 2), "int32")
    for s in range(num_samples):
        while True:
            locks = list(locks_from[rng.integers(len(locks_from))])
            held, present = list(locks), locks[rng.integers(num_keys)]
            if not labels[s]:
                missing = rng.integers(num_keys)
                others = [c for c in range(num_colours) if c not in locks]
                present, held[missing] = held[missing], others[rng.integers(len(others))]
            if split == "test" or tuple(sorted(held)) not in held_out:
                break
        distractors = [present] + list(rng.integers(0, num_colours, num_distractors - 1))
        colours = held + locks + distractors
        roles = [HELD] * num_keys + [LOCK] * num_keys + [DISTRACTOR] * num_distractors
        order = rng.permutation(length)
        symbols[s, :, 0] = np.asarray(colours)[order]
        symbols[s, :, 1] = np.asarray(roles)[order]
    inputs = np.concatenate(
        [_one_hot(symbols[..., 0], num_colours), _one_hot(symbols[..., 1], len(ROLES))], axis=-1
    )
    return Examples(inputs, labels, symbols)


def chance_accuracy(labels):
    """The accuracy of always answering the majority label."""
    rate = float(np.mean(labels))
    return max(rate, 1.0 - rate)
