"""Can the architecture tell *which* two keys it holds? A probe that the count of keys cannot solve.

    curve = held_keys_curve("simplicial", "BridgeBoxWorld-v0", env_config, sizes=(250, 4000))
    print(curve.to_markdown())

Bridge BoxWorld's Gem box opens only with both of its lock colours held, X1 ⊗ X2 ⊸ Gem. The
inventory probe (`keras-simplicial inventory`) found that trained agents read how many keys they
hold, never which. This probe asks whether a fresh model of each architecture *can* learn the
conjunction, and from how many examples:

- a state is a bridge BoxWorld board the oracle passes through (one per board), with the
  inventory replaced by exactly two keys: the Gem box's two lock colours (y = 1), or one of them
  and another colour (y = 0), half and half, in a random order. Both classes hold two keys, so
  the count says nothing; the answer needs both held colours matched against the Gem box's two
  locks;
- colour pairs are held out: a share of the unordered pairs {c1, c2} never is a Gem box's locks
  in training, only in the held-out test, so a model that memorised pairs fails there;
- the agent model (`build_agent_model`, untrained) reads the state, its value output is the
  logit of y, trained by cross-entropy with Adam for a fixed number of updates on training sets
  of each size; the curve is the held-out accuracy against the size.
"""

import dataclasses
import itertools

import numpy as np

from keras_simplicial.agents.analysis.results import Result, cell, markdown_table
from keras_simplicial.agents.imitation.labelled_play import oracle_moves, play_labelled
from keras_simplicial.envs import make_vector_env
from keras_simplicial.envs.palette import EMPTY_SLOT_RGB

# Board seeds: training boards from 0 on, test boards far from them.
TEST_SEED = 5_000_000


def held_out_pairs(num_colours, share, seed):
    """A `share` of the unordered colour pairs, drawn with `seed`: those never a Gem box's locks
    in training."""
    pairs = list(itertools.combinations(range(num_colours), 2))
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(pairs), size=max(1, round(share * len(pairs))), replace=False)
    return frozenset(pairs[i] for i in chosen)


def held_keys_states(env_id, env_config, count, *, held_out, test, seed):
    """`count` states and labels (observations [n, R, C+1, 3] uint8, y [n] float32): boards whose
    Gem locks are a held-out pair when `test`, another pair otherwise."""
    core = make_vector_env(env_id, 256, env_config).core
    if core.config.mode != "bridge":
        raise ValueError(f"the held-keys probe needs bridge BoxWorld, got {env_id!r}.")
    rng = np.random.default_rng([int(seed), int(test)])
    next_seed = (TEST_SEED if test else 0) + 100_000 * int(seed)
    observations, labels = [], []
    while len(observations) < count:
        seeds = next_seed + np.arange(core.num_boards)
        next_seed += core.num_boards
        gems = _gem_locks(core, seeds)
        chosen = [k for k, gem in enumerate(gems) if (tuple(sorted(gem)) in held_out) == test]
        played = play_labelled(oracle_moves(rng), env_id, env_config, seeds[chosen], horizon=200)
        starts = np.concatenate([[0], np.cumsum(played.lengths)[:-1]])
        for episode, k in enumerate(chosen[: count - len(observations)]):
            gem = gems[k]
            state = starts[episode] + rng.integers(played.lengths[episode])
            positive = len(observations) % 2 == 0
            if positive:
                keys = list(gem)
            else:
                others = [c for c in range(core.config.num_colours) if c not in gem]
                keys = [gem[rng.integers(2)], others[rng.integers(len(others))]]
            rng.shuffle(keys)
            observation = played.observations[state].copy()
            observation[:, -1] = EMPTY_SLOT_RGB
            for slot, colour in enumerate(keys):
                observation[slot, -1] = core.colour_rgb[colour]
            observations.append(observation)
            labels.append(float(positive))
    return np.stack(observations), np.asarray(labels, np.float32)


def _gem_locks(core, seeds):
    """The two lock colours of the Gem box on the board of `reset(seed=s)` for each of `seeds`
    (at most `core.num_boards`), drawn on `core`'s boards."""
    from gymnasium.utils import seeding

    boards = np.arange(len(seeds))
    for board, seed in zip(boards, seeds):
        core.seed(board, seeding.np_random(int(seed))[0])
    core.reset_boards(boards)
    slots = (core.key[boards] == core.gem).argmax(axis=1)
    return [(int(core.lock[b, s]), int(core.lock2[b, s])) for b, s in zip(boards, slots)]


@dataclasses.dataclass
class HeldKeysCurve(Result):
    """Held-out accuracy of an architecture against the number of training examples."""

    agent: str
    held_out_pairs: int
    updates: int
    points: list  # per size: size, train_accuracy, test_accuracy (held-out pairs), seconds

    def to_markdown(self):
        rows = [
            [
                f"{point['size']:,}",
                cell(point["train_accuracy"]),
                cell(point["test_accuracy"]),
                f"{point['seconds']:.0f}",
            ]
            for point in self.points
        ]
        return (
            f"{self.agent} agent, held-keys probe: both Gem lock colours held, or one of them and "
            f"another ({self.held_out_pairs} colour pairs held out; {self.updates} updates):\n\n"
            + markdown_table(["examples", "train", "held-out", "seconds"], rows)
        )


def held_keys_curve(
    agent,
    env_id,
    env_config,
    *,
    sizes=(250, 1000, 4000, 16000),
    test_size=2000,
    updates=3000,
    batch_size=64,
    learning_rate=1e-3,
    held_out_share=0.2,
    model_overrides=None,
    seed=0,
):
    """Trains a fresh `agent` model on each training-set size and tests it on held-out pairs.

    Args:
        agent: "relational" or "simplicial".
        env_id, env_config: a bridge BoxWorld (e.g. the bridge-medium preset's).
        sizes: training-set sizes, each a fresh model.
        test_size: held-out states (their Gem locks a held-out pair).
        updates, batch_size, learning_rate: Adam on each training set.
        held_out_share: the share of colour pairs held out.
        model_overrides: architecture overrides (as `--model-config`).
        seed: the pairs held out, the states and the initialisations.
    """
    import time

    from keras_simplicial.agents.training.run_arguments import RunArguments

    for name, value in (("test_size", test_size), ("updates", updates)):
        if int(value) < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    if not sizes or min(sizes) < 2:
        raise ValueError(f"sizes must be integers >= 2, got {sizes!r}.")
    num_colours = make_vector_env(env_id, 1, env_config).core.config.num_colours
    pairs = held_out_pairs(num_colours, held_out_share, seed)
    largest = max(sizes)
    train_x, train_y = held_keys_states(
        env_id, env_config, largest, held_out=pairs, test=False, seed=seed
    )
    test_x, test_y = held_keys_states(
        env_id, env_config, test_size, held_out=pairs, test=True, seed=seed
    )
    arguments = RunArguments(env=env_id, agent=agent, model_overrides=dict(model_overrides or {}))
    points = []
    for size in sizes:
        started = time.perf_counter()
        train_accuracy, test_accuracy = _fit_and_score(
            arguments,
            (train_x[:size], train_y[:size]),
            (test_x, test_y),
            updates=int(updates),
            batch_size=int(batch_size),
            learning_rate=learning_rate,
            seed=[int(seed), int(size)],
        )
        points.append(
            {
                "size": int(size),
                "train_accuracy": round(train_accuracy, 4),
                "test_accuracy": round(test_accuracy, 4),
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    return HeldKeysCurve(agent, len(pairs), int(updates), points)


def _fit_and_score(arguments, train, test, *, updates, batch_size, learning_rate, seed):
    """A fresh model of `arguments.agent` whose value output is the logit of y, trained by
    cross-entropy on `train` (x, y); its accuracy on `train` and on `test`."""
    import keras
    import tensorflow as tf

    from keras_simplicial.agents.model.architecture import build_agent_model

    keras.utils.set_random_seed(seed[0])
    x, y = train
    model = build_agent_model(arguments.agent, x.shape[1:], 4, **arguments.architecture)
    variables = model.trainable_variables
    optimizer = keras.optimizers.Adam(learning_rate)
    optimizer.build(variables)

    @tf.function(jit_compile=arguments.jit_compile)
    def train_step(batch, labels):
        with tf.GradientTape() as tape:
            logit = model(tf.cast(batch, tf.float32))[1][:, 0]
            loss = tf.reduce_mean(
                tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logit)
            )
        gradients = tape.gradient(loss, variables)
        optimizer.apply_gradients([(g, v) for g, v in zip(gradients, variables) if g is not None])

    @tf.function(jit_compile=arguments.jit_compile)
    def predict(batch):
        return model(tf.cast(batch, tf.float32))[1][:, 0] > 0

    def accuracy(states, labels):
        hits = [
            np.asarray(predict(states[i : i + 512])) == (labels[i : i + 512] > 0.5)
            for i in range(0, len(labels), 512)
        ]
        return float(np.concatenate(hits).mean())

    rng = np.random.default_rng(seed)
    for _ in range(updates):
        chosen = rng.integers(len(y), size=batch_size)
        train_step(x[chosen], y[chosen])
    return accuracy(x, y), accuracy(*test)
