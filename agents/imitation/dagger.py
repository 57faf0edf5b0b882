"""Tie-aware DAgger: an agent model learns the step-optimal oracle's moves on its own states.

    config = DaggerConfig.from_preset(agent="simplicial", preset="bridge-medium", seed=1)
    history = run_dagger(config, out="runs/dagger-simplicial-1")   # resumes if OUT has a run

Reinforcement learning on bridge-medium did not learn the length-2 puzzles in 20M steps; this is
the supervised question beneath it: can the model hold a length-2 plan at all, and from how many
labelled moves? A run reads from top to bottom:

1. **Round 0**: the oracle (`keras_simplicial.envs.step_oracle`) plays ``oracle_episodes`` fresh
   boards, taking one of its optimal actions at random; every state is labelled with the set of
   optimal actions.
2. **Training to a plateau**: Adam on -log sum_{a in optimal set} pi(a | s) over the labelled
   states so far (a tie is never an error; each epoch a random order in whole batches, the
   states of a last partial batch left out), from the previous round's weights; the learning
   rate starts at ``learning_rate`` each round and is halved whenever an epoch's training loss
   is not below the round's best epoch's by ``min_improvement`` (relative), until it has been
   halved ``halvings`` times or ``max_epochs`` epochs have run.
3. **Rounds 1, 2, ...**: the learner plays ``episodes_per_round`` fresh boards, half greedily
   (ended at its first repeated state) and half sampling from its policy, at most ``horizon``
   moves each; every state it reaches is labelled by the oracle and added (DAgger, Ross et al.
   2011), and step 2 runs again. The states where greedy play fails, e.g. at the Gem box's lock
   holding one of its two keys, enter the data this way.
4. After each round the learner plays the validation boards greedily; the round whose greedy win
   rate on the length-2 puzzles is highest is the best model.

The run stops after ``rounds`` learner rounds or once ``max_labelled_moves`` have been labelled.
Accuracy counts the greedy action as right when it is in the optimal set.

The run directory (`DaggerDirectory`): run.json (the model and environment, as a training run's),
dagger.json (this config), history.json (per round and epoch), code.json (the commit and source
hash of each process that trained it), policy.keras (the latest model) and best/policy.keras, and
state/ with what a resume needs (written after every epoch, atomically).
`keras-simplicial evaluate OUT` (or OUT/best), `inventory` and the figures load the models.
"""

import time

import numpy as np

from keras_simplicial.agents.imitation.colour_permutation import key_palette, permute_key_colours
from keras_simplicial.agents.imitation.dagger_config import DaggerConfig  # noqa: F401  (its input)
from keras_simplicial.agents.imitation.dagger_directory import DaggerDirectory
from keras_simplicial.agents.imitation.labelled_play import (
    LabelledEpisodes,
    learner_moves,
    oracle_moves,
    play_labelled,
)
from keras_simplicial.agents.training.checkpoints import KERAS_POLICY_FILE

#: Board seeds (episode k plays `reset(seed=...)`): the held-out oracle states from
#: `HELD_OUT_SEED`, the validation games from the greedy check's seed, and the training boards
#: of a run with seed s from (s + 1) * `TRAINING_SEED_STRIDE`, far from `evaluate`'s 0 + k.
HELD_OUT_SEED = 2_000_000
TRAINING_SEED_STRIDE = 10_000_000


def set_loss_and_hits(logits, optimal):
    """Per state: -log of the probability on the optimal set, and whether the most probable
    action is in it (TensorFlow; logits [B, 4], optimal [B, 4] bool)."""
    import tensorflow as tf

    optimal = tf.cast(optimal, tf.bool)
    on_set = tf.where(optimal, logits, tf.fill(tf.shape(logits), -1e9))
    loss = tf.reduce_logsumexp(logits, axis=-1) - tf.reduce_logsumexp(on_set, axis=-1)
    hits = tf.gather(optimal, tf.argmax(logits, axis=-1), axis=1, batch_dims=1)
    return loss, tf.cast(hits, tf.float32)


class Learner:
    """The agent model with its optimiser and compiled steps."""

    def __init__(self, config, observation_shape):
        import keras
        import tensorflow as tf

        from keras_simplicial.agents.model.architecture import build_agent_model

        keras.utils.set_random_seed(int(config.seed))
        self.arguments = config.run_arguments()
        self.model = build_agent_model(
            config.agent, observation_shape, 4, **self.arguments.architecture
        )
        self._setup(config, tf, keras)

    def _setup(self, config, tf, keras):
        model = self.model
        # The value head has no label: only the variables the policy depends on are trained.
        variables = model.trainable_variables
        self.optimizer = keras.optimizers.Adam(config.learning_rate)
        self.optimizer.build(variables)

        @tf.function(jit_compile=self.arguments.jit_compile)
        def train_step(observations, optimal):
            with tf.GradientTape() as tape:
                logits = model(tf.cast(observations, tf.float32))[0]
                loss, hits = set_loss_and_hits(logits, optimal)
                mean_loss = tf.reduce_mean(loss)
            gradients = tape.gradient(mean_loss, variables)
            self.optimizer.apply_gradients(
                [(g, v) for g, v in zip(gradients, variables) if g is not None]
            )
            return mean_loss, tf.reduce_mean(hits)

        @tf.function(jit_compile=self.arguments.jit_compile)
        def logits_of(observations):
            return model(tf.cast(observations, tf.float32))[0]

        self.train_step = train_step
        self._logits = logits_of

    def logits(self, observations, batch_size=1024):
        """Logits [n, 4] of observations [n, R, C+1, 3], in batches."""
        return (
            np.concatenate(
                [
                    np.asarray(self._logits(observations[start : start + batch_size]))
                    for start in range(0, len(observations), batch_size)
                ]
            )
            if len(observations)
            else np.zeros((0, 4), np.float32)
        )

    def accuracy(self, observations, labels):
        """The share of states whose most probable action is optimal."""
        if not len(labels):
            return float("nan")
        chosen = self.logits(observations).argmax(axis=1)
        return float(labels[np.arange(len(labels)), chosen].mean())

    def optimizer_state(self):
        return [np.asarray(v) for v in self.optimizer.variables]

    def load(self, directory):
        """Weights and optimiser state saved by `save`. A finished run committed without them
        (a study keeps its models, history and episodes, not what only a resume needs) says so."""
        import keras

        missing = [n for n in ("policy.keras", "optimizer.npz") if not (directory / n).is_file()]
        if missing:
            raise FileNotFoundError(
                f"{directory} holds no {' or '.join(missing)}: the run cannot resume. A finished "
                "run committed with a study keeps only its models and history; git's history has "
                f"the state it was trained with (`git log --diff-filter=D -- {directory}`, then "
                "`git checkout <commit>^ -- <path>`)."
            )
        saved = keras.models.load_model(directory / "policy.keras", compile=False)
        self.model.set_weights(saved.get_weights())
        with np.load(directory / "optimizer.npz") as values:
            for variable, name in zip(self.optimizer.variables, sorted(values.files, key=int)):
                variable.assign(values[name])

    def save(self, directory):
        self.model.save(directory / "policy.keras")
        np.savez(
            directory / "optimizer.npz",
            **{str(i): value for i, value in enumerate(self.optimizer_state())},
        )


def _greedy_check(learner, config, env_id, env_config):
    """The learner's greedy games on the validation boards: the preset's puzzles and its length-2
    puzzles, per puzzle type (`summarise`)."""
    from keras_simplicial.agents.analysis.evaluation import summarise
    from keras_simplicial.agents.rollout import episode_outcomes
    from keras_simplicial.agents.training.greedy_check import CHECK_SEED

    results = {}
    for name, extra in (("all", {}), ("length2", {"min_solution_length": 2})):
        if extra.get("min_solution_length", 0) > env_config.get("max_solution_length", 1):
            continue
        outcomes = episode_outcomes(
            learner.logits,
            env_id,
            {**env_config, **extra},
            config.validation_episodes,
            num_envs=64,
            seed=CHECK_SEED,
            greedy=True,
        )
        results[name] = summarise(outcomes, loops=True)
    return results


def _score(check):
    """The number the best model is chosen by: the greedy win rate on the length-2 puzzles
    (on the preset's puzzles where it has none)."""
    return check.get("length2", check["all"])["overall"]["win_rate"]


def run_dagger(config, out, *, log=print):
    """Runs (or resumes) a DAgger run in directory `out`; returns its history (a dict). Each
    round's entry holds its epochs, its greedy check and `trainability` (every site's statistics,
    `keras_simplicial.agents.model.trainability.FeatureHealth`, on the held-out probe)."""
    from keras_simplicial.agents.model.trainability import FeatureHealth

    directory = DaggerDirectory(out)
    config = directory.start(config)
    env_id, env_config = config.env
    history, state = directory.read_progress()
    if state is not None and (directory.state_dir / KERAS_POLICY_FILE).is_file():
        # What a crash after a round's state left behind. A finished run committed with a study
        # keeps no weights in its state: it has its round's files already.
        directory.complete_round(history, state)
    if directory.finished(config, history, state):
        log(
            f"{out} is finished: {len(history['rounds'])} round(s), "
            f"{history['rounds'][-1]['labelled_moves']:,} labelled moves (--rounds or "
            "--max-labelled-moves continue it)"
        )
        return history
    directory.record_code(state)
    probe = play_labelled(
        oracle_moves(np.random.default_rng(0)),
        env_id,
        env_config,
        HELD_OUT_SEED + np.arange(config.held_out_episodes),
        horizon=config.horizon,
    )
    learner = Learner(config, probe.observations.shape[1:])
    if state is None:
        episodes = None
        state = {"round": 0, "epoch": 0, "collected": False, "next_board": 0}
    else:
        learner.load(directory.state_dir)
        episodes = LabelledEpisodes.load(directory.state_dir / "episodes.npz", env_id, env_config)
        log(
            f"resumed {out}: round {state['round']}, epoch {state['epoch']}, "
            f"{len(episodes):,} labelled moves"
        )
    board_base = (config.seed + 1) * TRAINING_SEED_STRIDE
    while state["round"] <= config.rounds:
        round_index = state["round"]
        rng = np.random.default_rng([config.seed, round_index])
        if not state["collected"]:
            if episodes is not None and len(episodes) >= config.max_labelled_moves:
                log(f"stopped: {len(episodes):,} labelled moves >= {config.max_labelled_moves:,}")
                break
            started = time.perf_counter()
            new, on_policy = _collect(learner, config, round_index, state, board_base, rng)
            episodes = new if episodes is None else episodes.extend(new)
            history["rounds"].append(
                {
                    "round": round_index,
                    "new_moves": len(new),
                    "labelled_moves": len(episodes),
                    "accuracy_on_new_states": on_policy,
                    "collect_seconds": round(time.perf_counter() - started, 2),
                    "epochs": [],
                }
            )
            state.update(collected=True, epoch=0, learning_rate=config.learning_rate, best=None)
            state["halvings"] = 0
            directory.save_state(learner, episodes, history, state)
        entry = history["rounds"][-1]
        while state["epoch"] < config.max_epochs and state["halvings"] < config.halvings:
            started = time.perf_counter()
            shuffle = np.random.default_rng([config.seed, round_index, state["epoch"]])
            loss, accuracy = _epoch(learner, episodes, config, state, shuffle)
            held_out = learner.accuracy(probe.observations, probe.labels)
            best = state["best"]
            if best is not None and loss > best * (1 - config.min_improvement):
                state["learning_rate"] /= 2
                state["halvings"] += 1
            state["best"] = loss if best is None else min(best, loss)
            state["epoch"] += 1
            entry["epochs"].append(
                {
                    "loss": round(loss, 5),
                    "train_accuracy": round(accuracy, 4),
                    "held_out_accuracy": round(held_out, 4),
                    "learning_rate": state["learning_rate"],
                    "seconds": round(time.perf_counter() - started, 2),
                }
            )
            log(
                f"round {round_index} epoch {state['epoch']}: {len(episodes):,} moves, loss "
                f"{loss:.4f}, accuracy train {accuracy:.3f} held-out {held_out:.3f}, "
                f"lr {state['learning_rate']:.2e}, {entry['epochs'][-1]['seconds']:.0f} s"
            )
            directory.save_state(learner, episodes, history, state)
        check = _greedy_check(learner, config, env_id, env_config)
        entry["greedy"] = check
        # Where the learner's signal stands after the round (the trainability diagnosis), on the
        # held-out probe's states.
        entry["trainability"] = FeatureHealth(learner.model)(probe.observations[:512])
        score = _score(check)
        is_best = history.get("best") is None or score > history["best"]["score"]
        if is_best:
            history["best"] = {"round": round_index, "score": score}
        log(
            f"round {round_index}: greedy win rate {check['all']['overall']['win_rate']:.3f}"
            + (
                f", length 2 {check['length2']['overall']['win_rate']:.3f}"
                if "length2" in check
                else ""
            )
            + (" (best)" if is_best else "")
        )
        state.update(round=round_index + 1, collected=False)
        directory.save_round(learner, episodes, history, state, is_best)
    return history


def _collect(learner, config, round_index, state, board_base, rng):
    """Round 0: the oracle's episodes; later rounds: the learner's, greedy and sampled. Returns
    the labelled episodes and the learner's accuracy on them before it trains on them."""
    env_id, env_config = config.env

    def boards(count):
        seeds = board_base + state["next_board"] + np.arange(count)
        state["next_board"] += count
        return seeds

    if round_index == 0 and config.labels_from:
        return _labels_from(config), None
    if round_index == 0:
        return (
            play_labelled(
                oracle_moves(rng),
                env_id,
                env_config,
                boards(config.oracle_episodes),
                horizon=config.horizon,
            ),
            None,
        )
    greedy_count = config.episodes_per_round // 2
    parts = []
    for player, count in (
        ("greedy", greedy_count),
        ("sampled", config.episodes_per_round - greedy_count),
    ):
        if count:
            parts.append(
                play_labelled(
                    learner_moves(learner.logits, player == "greedy", rng),
                    env_id,
                    env_config,
                    boards(count),
                    horizon=config.horizon,
                    player=player,
                    round_index=round_index,
                    end_at_repeat=player == "greedy",
                )
            )
    new = parts[0]
    for part in parts[1:]:
        new = new.extend(part)
    return new, round(learner.accuracy(new.observations, new.labels), 4)


def _labels_from(config):
    """Round 0's episodes of a run set up with `labels_from`: a `labels_share` of that run's
    labelled episodes (its newest state's), whole episodes in an order fixed by `seed`, so that a
    smaller share's episodes are among a larger one's."""
    import math

    source = DaggerDirectory(config.labels_from)
    if not source.exists or source.state_dir is None:
        raise FileNotFoundError(
            f"labels_from {config.labels_from!r} is not a DAgger run with labelled episodes "
            "(no dagger.json, or no state/LATEST)."
        )
    if source.read_config().env != config.env:
        raise ValueError(
            f"labels_from {config.labels_from!r} was labelled on {source.read_config().env}, not "
            f"on this run's environment {config.env}."
        )
    env_id, env_config = config.env
    episodes = LabelledEpisodes.load(source.state_dir / "episodes.npz", env_id, env_config)
    order = np.random.default_rng(config.seed).permutation(len(episodes.seeds))
    taken = order[: math.ceil(config.labels_share * len(order))]
    return episodes.select(np.sort(taken))


def _epoch(learner, episodes, config, state, rng):
    """One pass over the labelled states in a random order, in whole batches (a last partial
    batch's states are left out, others next epoch), each state's key colours permuted afresh
    with `config.augment` "colour-permutations"; (mean loss, mean accuracy)."""
    learner.optimizer.learning_rate.assign(state["learning_rate"])
    size = len(episodes)
    batch = config.batch_size
    order = rng.permutation(size)
    usable = size - size % batch if size >= batch else size
    losses, hits = [], []
    palette = key_palette(*config.env) if config.augment == "colour-permutations" else None
    for start in range(0, usable, batch):
        chosen = np.sort(order[start : start + batch])
        observations = episodes.observations[chosen]
        if palette is not None:
            observations = permute_key_colours(observations, palette, rng)
        loss, accuracy = learner.train_step(observations, episodes.labels[chosen])
        losses.append(float(loss))
        hits.append(float(accuracy))
    return float(np.mean(losses)), float(np.mean(hits))
