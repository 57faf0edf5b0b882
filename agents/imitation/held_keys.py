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
  logit of y, trained by cross-entropy with Adam *to a plateau* on training sets of each size
  (`PlateauSchedule`: the learning rate halves when the training loss stops falling, training
  stops after a few halvings or at a cap of updates). A fresh model starts flat (the loss at
  log 2, the constant prediction) and leaves it after a few hundred updates, or, by chance,
  never: its output collapses to a constant. So a model still flat after `flat_updates` is
  replaced by a fresh one, and the table says how many starts each size took. The first version
  of this probe had neither rule and reported constant predictors at every size;
- each size's point gives the training accuracy first (a size whose training set was not fitted
  says nothing about the architecture), then the accuracy on fresh boards whose Gem locks are a
  training pair (the conjunction on new boards) and on boards whose Gem locks are a held-out pair
  (the conjunction for colours never seen together).
"""

import dataclasses
import itertools

import numpy as np

from keras_simplicial.agents.analysis.results import Result, cell, markdown_table
from keras_simplicial.agents.imitation.labelled_play import oracle_moves, play_labelled
from keras_simplicial.agents.imitation.plateau import PlateauSchedule
from keras_simplicial.envs import make_vector_env
from keras_simplicial.envs.palette import EMPTY_SLOT_RGB

# Board seeds of the three splits: training boards from 0 on, the two test sets far from them
# and from each other.
SPLITS = {"train": 0, "seen-pairs": 2_500_000, "held-out-pairs": 5_000_000}
TEST_SEED = SPLITS["held-out-pairs"]
FITTED = 0.95  # the training accuracy from which a point counts as fitted
FLAT_LOSS = float(np.log(2))  # the cross-entropy of the best constant: the labels are balanced


def held_out_pairs(num_colours, share, seed):
    """A `share` of the unordered colour pairs, drawn with `seed`: those never a Gem box's locks
    in training."""
    pairs = list(itertools.combinations(range(num_colours), 2))
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(pairs), size=max(1, round(share * len(pairs))), replace=False)
    return frozenset(pairs[i] for i in chosen)


def held_keys_states(env_id, env_config, count, *, held_out, split, seed):
    """`count` states and labels (observations [n, R, C+1, 3] uint8, y [n] float32) of `split`:
    "train" and "seen-pairs" (fresh boards) have Gem locks outside `held_out`, "held-out-pairs"
    inside it."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {sorted(SPLITS)}, got {split!r}.")
    core = make_vector_env(env_id, 256, env_config).core
    if core.config.mode != "bridge":
        raise ValueError(f"the held-keys probe needs bridge BoxWorld, got {env_id!r}.")
    inside = split == "held-out-pairs"
    rng = np.random.default_rng([int(seed), list(SPLITS).index(split)])
    next_seed = SPLITS[split] + 100_000 * int(seed)
    observations, labels = [], []
    while len(observations) < count:
        seeds = next_seed + np.arange(core.num_boards)
        next_seed += core.num_boards
        gems = _gem_locks(core, seeds)
        chosen = [k for k, gem in enumerate(gems) if (tuple(sorted(gem)) in held_out) == inside]
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
    """Accuracies of an architecture against the number of training examples."""

    agent: str
    held_out_pairs: int
    schedule: dict
    points: list  # per size: size, updates, train_loss, the three accuracies, seconds

    def to_markdown(self):
        rows = [
            [
                f"{point['size']:,}",
                str(point["starts"]),
                f"{point['updates']:,}",
                "never" if point["left_flat_start"] is None else f"{point['left_flat_start']:,}",
                f"{point['train_loss']:.3f}",
                cell(point["train_accuracy"]) + ("" if point["fitted"] else " (not fitted)"),
                cell(point["seen_pairs_accuracy"]),
                cell(point["test_accuracy"]),
                f"{point['seconds']:.0f}",
            ]
            for point in self.points
        ]
        return (
            f"{self.agent} agent, held-keys probe: both Gem lock colours held, or one of them and "
            f"another ({self.held_out_pairs} colour pairs held out; Adam to a plateau, at most "
            f"{self.schedule['max_updates']:,} updates; the plateau rule starts once the training "
            "loss has left log 2, the constant prediction, and a model still at log 2 after "
            f"{self.schedule['flat_updates']:,} updates is replaced by a fresh one, at most "
            f"{self.schedule['starts']} starts). A size not fitted (training accuracy "
            f"below {FITTED}) says nothing about the architecture:\n\n"
            + markdown_table(
                [
                    "examples",
                    "starts",
                    "updates",
                    "left log 2 at",
                    "train loss",
                    "train",
                    "fresh boards, seen pairs",
                    "held-out pairs",
                    "seconds",
                ],
                rows,
            )
        )


def held_keys_curve(
    agent,
    env_id,
    env_config,
    *,
    sizes=(250, 1000, 4000, 16000),
    test_size=2000,
    schedule=None,
    held_out_share=0.2,
    model_overrides=None,
    seed=0,
):
    """Trains a fresh `agent` model to a plateau on each training-set size and tests it.

    Args:
        agent: "relational" or "simplicial".
        env_id, env_config: a bridge BoxWorld (e.g. the bridge-medium preset's).
        sizes: training-set sizes, each a fresh model.
        test_size: states in each test set (fresh boards with seen pairs; held-out pairs).
        schedule: a `PlateauSchedule` (its defaults when None).
        held_out_share: the share of colour pairs held out.
        model_overrides: architecture overrides (as `--model-config`).
        seed: the pairs held out, the states and the initialisations.
    """
    import time

    from keras_simplicial.agents.training.run_arguments import RunArguments

    schedule = schedule or PlateauSchedule(flat_loss=FLAT_LOSS)
    if int(test_size) < 1:
        raise ValueError(f"test_size must be a positive integer, got {test_size!r}.")
    if not sizes or min(sizes) < 2:
        raise ValueError(f"sizes must be integers >= 2, got {sizes!r}.")
    num_colours = make_vector_env(env_id, 1, env_config).core.config.num_colours
    pairs = held_out_pairs(num_colours, held_out_share, seed)

    def states(split, count):
        return held_keys_states(env_id, env_config, count, held_out=pairs, split=split, seed=seed)

    train_x, train_y = states("train", max(sizes))
    seen = states("seen-pairs", test_size)
    held_out = states("held-out-pairs", test_size)
    arguments = RunArguments(env=env_id, agent=agent, model_overrides=dict(model_overrides or {}))
    points = []
    for size in sizes:
        started = time.perf_counter()
        for start in range(schedule.starts):
            probe = _Probe(arguments, train_x.shape[1:], schedule, [int(seed), int(size), start])
            fit = probe.fit_to_plateau(train_x[:size], train_y[:size])
            if fit["left_flat_start"] is not None:
                break
        train_accuracy = probe.accuracy(train_x[:size], train_y[:size])
        points.append(
            {
                "size": int(size),
                "starts": start + 1,
                **fit,
                "train_accuracy": round(train_accuracy, 4),
                "fitted": train_accuracy >= FITTED,
                "seen_pairs_accuracy": round(probe.accuracy(*seen), 4),
                "test_accuracy": round(probe.accuracy(*held_out), 4),
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    return HeldKeysCurve(agent, len(pairs), dataclasses.asdict(schedule), points)


class _Probe:
    """A fresh model of `arguments.agent` whose value output is the logit of y."""

    def __init__(self, arguments, observation_shape, schedule, seed):
        import keras
        import tensorflow as tf

        from keras_simplicial.agents.model.architecture import build_agent_model

        keras.utils.set_random_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))
        self.schedule = schedule
        self.rng = np.random.default_rng(seed)
        self.model = build_agent_model(
            arguments.agent, observation_shape, 4, **arguments.architecture
        )
        variables = [v for v in self.model.trainable_variables if not v.path.startswith("logits/")]
        self.optimizer = keras.optimizers.Adam(schedule.learning_rate)
        self.optimizer.build(variables)

        @tf.function(jit_compile=arguments.jit_compile)
        def train_step(batch, labels):
            with tf.GradientTape() as tape:
                logit = self.model(tf.cast(batch, tf.float32))[1][:, 0]
                loss = tf.reduce_mean(
                    tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logit)
                )
            self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))

        @tf.function(jit_compile=arguments.jit_compile)
        def logit_of(batch):
            return self.model(tf.cast(batch, tf.float32))[1][:, 0]

        self._train_step, self._logit_of = train_step, logit_of

    def logits(self, states):
        return np.concatenate(
            [np.asarray(self._logit_of(states[i : i + 512])) for i in range(0, len(states), 512)]
        )

    def accuracy(self, states, labels):
        return float(((self.logits(states) > 0) == (labels > 0.5)).mean())

    def loss(self, states, labels):
        logit = self.logits(states).astype(np.float64)
        # Cross-entropy of sigmoid(logit) against y, in a form that does not overflow.
        return float(
            np.mean(np.maximum(logit, 0) - logit * labels + np.log1p(np.exp(-np.abs(logit))))
        )

    def fit_to_plateau(self, x, y):
        """Trains by `self.schedule`; returns the updates made, the update at which the loss left
        the flat start (None if it never did) and the last training loss."""
        schedule = self.schedule
        check = slice(0, min(len(y), schedule.check_size))
        learning_rate, best, stale, halvings, updates = schedule.learning_rate, None, 0, 0, 0
        left_flat_start = None if schedule.flat_loss is not None else 0
        loss = self.loss(x[check], y[check])
        while (
            updates < schedule.max_updates
            and halvings < schedule.halvings
            and loss > schedule.target_loss
        ):
            for _ in range(min(schedule.check_every, schedule.max_updates - updates)):
                chosen = self.rng.integers(len(y), size=schedule.batch_size)
                self._train_step(x[chosen], y[chosen])
                updates += 1
            loss = self.loss(x[check], y[check])
            if left_flat_start is None:
                if loss < schedule.flat_loss * (1 - schedule.min_improvement):
                    left_flat_start = updates
                elif updates >= schedule.flat_updates:
                    break  # given up: the caller starts a fresh model
                else:
                    continue
            if best is not None and loss > best * (1 - schedule.min_improvement):
                stale += 1
                if stale >= schedule.patience:
                    learning_rate /= 2
                    self.optimizer.learning_rate.assign(learning_rate)
                    halvings, stale = halvings + 1, 0
            else:
                stale = 0
            best = loss if best is None else min(best, loss)
        return {
            "updates": updates,
            "left_flat_start": left_flat_start,
            "train_loss": round(loss, 4),
            "halvings": halvings,
        }
