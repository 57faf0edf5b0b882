"""The Keras engine: IMPALA in one process, no Ray, on whatever backend Keras runs.

    engine = KerasIMPALA(RunArguments.from_preset("easy", "relational", engine="keras", seed=1))
    result = engine.train()              # one iteration, in the shape of RLlib's results
    engine.save(path); engine.restore(path)

What `train --engine keras` runs (`engines.ENGINES["keras"]`), top to bottom:

    B boards of the run's environment (`num_envs_per_env_runner`), one numpy core
    every iteration, until `min_time_s_per_iteration` has passed:
        act: for t in 0 .. T-1 (T = rollout_fragment_length):
            logits, V = model(x_t)           one compiled forward pass of all B boards
            a_t ~ softmax(logits)            `rollout.sample_actions`, as the old stack's runner
            step the B boards; report and restart the ended ones
        V(x_T) bootstraps the unrolls, and starts the next act
        learn: the B unrolls cut into train batches of train_batch_size / T unrolls; each
            trained on num_epochs times by one compiled learner step (`LearnerStep`):
            V-trace targets and the IMPALA loss (`vtrace.impala_loss`), the gradient clipped
            (global norm, or each variable's where the run's overrides say
            `CLIP_EACH_VARIABLE`), RMSProp (decay, epsilon inside the root) or Adam, the learning
            rate of the preset's schedule at the environment steps sampled so far

The recipe is the run's: Table 1 (`PAPER_IMPALA_HYPERPARAMETERS`), the preset's overrides and
`--config` (a key this engine does not read, one of RLlib's alone, is refused by name). The
train batch, the unroll, the epochs and the schedule are the old stack's, so an update sees the
same number of environment steps, and as many updates follow each sampled step.

One deviation from the paper's IMPALA: acting and learning take turns, so every unroll is acted
by the weights of the latest update (no policy lag; V-trace's importance weights still correct for
the `num_epochs` passes over a batch). The paper's learner ran beside 63 actors per machine,
whose weights were some updates behind.

A checkpoint (`save`) is the model's weights and the optimizer's variables (numpy arrays, backend
independent: a run saved on TensorFlow resumes on JAX or PyTorch, and back), the counters and the
random generators (`KERAS_ENGINE_STATE`); a resumed run's boards start new episodes.
"""

import abc
import collections
import json
import time
from pathlib import Path

import numpy as np

from keras_simplicial.agents.ranges import check_ranges
from keras_simplicial.agents.rollout import BLOCKED_MOVE_LOGIT, mask_logits, sample_actions
from keras_simplicial.agents.training.board_episodes import BoardEpisodes
from keras_simplicial.agents.training.curve import SMOOTHING_EPISODES
from keras_simplicial.agents.training.presets import (
    CLIP_EACH_VARIABLE,
    CONFIG_RANGES,
    PAPER_IMPALA_HYPERPARAMETERS,
)
from keras_simplicial.agents.training.run_arguments import RunArguments

#: The IMPALA settings the engine reads (RLlib's names), with what a run trains with unless its
#: overrides say otherwise: Table 1, and RLlib's IMPALA defaults for the others.
ENGINE_SETTINGS = {
    **PAPER_IMPALA_HYPERPARAMETERS,
    "lr_schedule": None,
    "entropy_coeff_schedule": None,
    "num_epochs": 1,
    "min_time_s_per_iteration": 10,
    "min_sample_timesteps_per_iteration": 0,
    "metrics_num_episodes_for_smoothing": SMOOTHING_EPISODES,
}
#: The file that marks a checkpoint of this engine: its counters and random generators.
KERAS_ENGINE_STATE = "keras_engine.json"
WEIGHTS_FILE = "model_weights.npz"
OPTIMIZER_FILE = "optimizer_variables.npz"
CHECKPOINT_FORMAT = 1
# Seeds of the action sampler: the old stack's runner's (`BatchedEnvRunner`, seed + 7919).
SAMPLER_SEED_OFFSET = 7919


def engine_settings(arguments):
    """The IMPALA settings of a run on the Keras engine: `ENGINE_SETTINGS` with the run's
    overrides on top, every one checked (`ValueError` naming the argument)."""
    if not isinstance(arguments, RunArguments):
        raise ValueError(f"arguments must be a RunArguments, got {arguments!r}.")
    from keras_simplicial.agents.model.architecture import agent_hyperparameters
    from keras_simplicial.envs import make_vector_env

    overrides = dict(arguments.overrides)
    unknown = sorted(set(overrides) - set(ENGINE_SETTINGS))
    if unknown:
        raise ValueError(
            f"--config: the keras engine does not read {unknown} (RLlib's settings); it reads "
            f"{sorted(ENGINE_SETTINGS)}."
        )
    check_ranges(overrides, CONFIG_RANGES, "--config")
    settings = {**ENGINE_SETTINGS, **overrides}
    if settings["lr_schedule"] is None:
        settings["lr_schedule"] = [[0, settings["lr"]]]
    if settings["entropy_coeff_schedule"] is None:
        settings["entropy_coeff_schedule"] = [[0, settings["entropy_coeff"]]]
    if arguments.num_env_runners != 0:
        raise ValueError(
            "num_env_runners (--num-env-runners) must be 0 with the keras engine: it acts in its "
            f"own process, on num_envs_per_env_runner boards; got {arguments.num_env_runners}."
        )
    if arguments.sampler != "batched":
        raise ValueError(
            "sampler (--sampler) must be 'batched' with the keras engine (it steps all boards "
            f"as one batch), got {arguments.sampler!r}."
        )
    unroll, size = settings["rollout_fragment_length"], settings["train_batch_size"]
    boards = arguments.num_envs_per_env_runner
    if size % unroll or (boards * unroll) % size:
        raise ValueError(
            f"train_batch_size ({size}) must be a multiple of rollout_fragment_length ({unroll}), "
            f"and divide the steps of one act, num_envs_per_env_runner (--num-envs) x "
            f"rollout_fragment_length = {boards} x {unroll}: e.g. --num-envs "
            f"{max(1, size // unroll)}."
        )
    make_vector_env(arguments.env, 1, arguments.env_config)  # a bad env config fails, named
    agent_hyperparameters(arguments.agent, **arguments.architecture)  # bad overrides fail, named
    return settings


def scheduled(schedule, timestep):
    """The value of a piecewise linear `schedule` ([[step, value], ...]) at `timestep`, held
    constant past its ends (RLlib's `PiecewiseSchedule` with the last value outside)."""
    steps = [float(point[0]) for point in schedule]
    values = [float(point[1]) for point in schedule]
    return float(np.interp(float(timestep), steps, values))


def make_optimizer(settings):
    """The Keras optimizer of the run's settings: RMSProp (Appendix D's form, epsilon inside
    the root: Keras's `RMSprop`) or Adam, clipping the global norm or each variable's."""
    import keras

    clip = settings["grad_clip"]
    clipping = {}
    if clip is not None:
        clipping = {"clipnorm" if settings[CLIP_EACH_VARIABLE] else "global_clipnorm": clip}
    if settings["opt_type"] == "adam":
        return keras.optimizers.Adam(learning_rate=settings["lr"], **clipping)
    return keras.optimizers.RMSprop(
        learning_rate=settings["lr"],
        rho=settings["decay"],
        momentum=settings["momentum"],
        epsilon=settings["epsilon"],
        **clipping,
    )


def batch_loss(outputs, batch, entropy_coeff, settings):
    """(IMPALA loss, statistics) of the model's `outputs` ([logits [T*B, A], value [T*B, 1]])
    on a time-major `batch` (`KerasIMPALA.act`)."""
    from keras import ops

    from keras_simplicial.agents.training.vtrace import impala_loss

    steps, boards = batch["actions"].shape
    logits = ops.reshape(outputs[0], (steps, boards, -1))
    values = ops.reshape(outputs[1], (steps, boards))
    if "allowed" in batch:
        logits = ops.where(batch["allowed"], logits, BLOCKED_MOVE_LOGIT)
    return impala_loss(
        logits,
        values,
        batch["actions"],
        batch["behaviour_logp"],
        batch["rewards"],
        batch["terminateds"],
        batch["bootstrap_value"],
        gamma=settings["gamma"],
        entropy_coeff=entropy_coeff,
        vf_loss_coeff=settings["vf_loss_coeff"],
        clip_rho_threshold=settings["vtrace_clip_rho_threshold"],
        clip_pg_rho_threshold=settings["vtrace_clip_pg_rho_threshold"],
    )


def gradient_statistics(gradients, parts, settings):
    """The global norm of the clipped gradient (`grad_gnorm`, as RLlib reports it) and the norm
    of each model part's (`grad_norm/<part>`, `model_parts`)."""
    from keras import ops

    norms = [ops.sqrt(ops.sum(ops.square(gradient))) for gradient in gradients]
    clip = settings["grad_clip"]
    if clip is None:
        clipped = norms
    elif settings[CLIP_EACH_VARIABLE]:
        clipped = [ops.minimum(norm, clip) for norm in norms]
    else:
        total = ops.sqrt(sum(ops.square(norm) for norm in norms))
        clipped = [norm * ops.minimum(1.0, clip / ops.maximum(total, 1e-12)) for norm in norms]
    stats = {"grad_gnorm": ops.sqrt(sum(ops.square(norm) for norm in clipped))}
    for part in sorted(set(parts)):
        squares = [ops.square(n) for n, p in zip(clipped, parts) if p == part]
        stats[f"grad_norm/{part}"] = ops.sqrt(sum(squares))
    return stats


class LearnerStep(abc.ABC):
    """The agent model, its optimizer and IMPALA's update, compiled one backend's way.

    Subclasses take the gradient their backend's way (`TensorFlowLearnerStep`: `GradientTape`;
    `JaxLearnerStep`: `stateless_call`, `jax.value_and_grad`, `stateless_apply`;
    `TorchLearnerStep`: autograd); the loss
    (`batch_loss`), the optimizer and the model are the same Keras objects on every backend.

    Args:
        model: the agent model (`build_agent_model`).
        optimizer: a Keras optimizer (`make_optimizer`); built here.
        settings: the run's `engine_settings`.
        jit_compile: compile the step (the run's `jit_compile`): XLA on TensorFlow, `jax.jit`
            on JAX; PyTorch's step runs eager whatever it says (`TorchLearnerStep`).
    """

    def __init__(self, model, optimizer, settings, jit_compile=True):
        from keras_simplicial.agents.model.model_parts import model_part

        self.model, self.optimizer, self.settings = model, optimizer, settings
        self.jit_compile = bool(jit_compile)
        optimizer.build(model.trainable_variables)
        self.parts = [model_part(variable.path) for variable in model.trainable_variables]

    @abc.abstractmethod
    def act(self, observations):
        """(logits [B, A], values [B]) as numpy arrays, of uint8 observations [B, R, C+1, 3]."""

    @abc.abstractmethod
    def learn(self, batch, learning_rate, entropy_coeff):
        """One update on a time-major `batch`; returns its statistics as floats."""

    def state(self):
        """(model weights in `model.weights` order, optimizer variables), as numpy arrays."""
        return self.model.get_weights(), [np.asarray(v) for v in self.optimizer.variables]

    def set_state(self, weights, optimizer_variables):
        """Loads `state()`'s arrays (checked against the model's and optimizer's shapes)."""
        self.model.set_weights(weights)
        variables = self.optimizer.variables
        for variable, value in zip(variables, optimizer_variables, strict=True):
            variable.assign(np.asarray(value, dtype=variable.dtype))


class TensorFlowLearnerStep(LearnerStep):
    """`LearnerStep` on TensorFlow: a `tf.function` (XLA with `jit_compile`) around a
    `GradientTape` and the optimizer's `apply`."""

    def __init__(self, model, optimizer, settings, jit_compile=True):
        import tensorflow as tf

        super().__init__(model, optimizer, settings, jit_compile)
        self._tf = tf
        self._update = tf.function(self._update_step, jit_compile=self.jit_compile)
        self._forward = tf.function(
            lambda x: model(tf.cast(x, tf.float32), training=False), jit_compile=self.jit_compile
        )

    def _update_step(self, batch, learning_rate, entropy_coeff):
        tf = self._tf
        observations = batch["observations"]
        flat = tf.reshape(observations, (-1,) + tuple(observations.shape[2:]))
        with tf.GradientTape() as tape:
            outputs = self.model(tf.cast(flat, tf.float32), training=True)
            loss, stats = batch_loss(outputs, batch, entropy_coeff, self.settings)
        variables = self.model.trainable_variables
        gradients = tape.gradient(loss, variables)
        self.optimizer.learning_rate = learning_rate
        self.optimizer.apply(gradients, variables)
        return {**stats, **gradient_statistics(gradients, self.parts, self.settings)}

    def act(self, observations):
        logits, values = self._forward(observations)
        return logits.numpy(), values.numpy().reshape(-1)

    def learn(self, batch, learning_rate, entropy_coeff):
        tf = self._tf
        stats = self._update(
            batch, tf.constant(learning_rate, tf.float32), tf.constant(entropy_coeff, tf.float32)
        )
        return {name: float(value) for name, value in stats.items()}


class JaxLearnerStep(LearnerStep):
    """`LearnerStep` on JAX: the model's and the optimizer's variables held as arrays and
    updated by one `jax.jit` of `stateless_call`, `jax.value_and_grad` and `stateless_apply`."""

    def __init__(self, model, optimizer, settings, jit_compile=True):
        import jax

        super().__init__(model, optimizer, settings, jit_compile)
        self._jax = jax
        self._learning_rate_index = next(
            index
            for index, variable in enumerate(optimizer.variables)
            if variable is optimizer._learning_rate
        )
        self._load_arrays()
        compile_ = jax.jit if self.jit_compile else (lambda function: function)
        self._update = compile_(self._update_step)
        self._forward = compile_(self._forward_step)

    def _load_arrays(self):
        self._trainable = [v.value for v in self.model.trainable_variables]
        self._non_trainable = [v.value for v in self.model.non_trainable_variables]
        self._optimizer_variables = [v.value for v in self.optimizer.variables]

    def _forward_step(self, trainable, non_trainable, observations):
        import jax.numpy as jnp

        outputs, _ = self.model.stateless_call(
            trainable, non_trainable, observations.astype(jnp.float32), training=False
        )
        return outputs[0], outputs[1]

    def _update_step(self, state, batch, learning_rate, entropy_coeff):
        import jax.numpy as jnp

        trainable, non_trainable, optimizer_variables = state
        observations = batch["observations"]
        flat = observations.reshape((-1,) + observations.shape[2:]).astype(jnp.float32)

        def loss_of(trainable):
            outputs, updated = self.model.stateless_call(
                trainable, non_trainable, flat, training=True
            )
            loss, stats = batch_loss(outputs, batch, entropy_coeff, self.settings)
            return loss, (stats, updated)

        (_, (stats, non_trainable)), gradients = self._jax.value_and_grad(loss_of, has_aux=True)(
            trainable
        )
        optimizer_variables = list(optimizer_variables)
        optimizer_variables[self._learning_rate_index] = learning_rate.astype(
            optimizer_variables[self._learning_rate_index].dtype
        )
        trainable, optimizer_variables = self.optimizer.stateless_apply(
            optimizer_variables, gradients, trainable
        )
        stats = {**stats, **gradient_statistics(gradients, self.parts, self.settings)}
        return (trainable, non_trainable, optimizer_variables), stats

    def act(self, observations):
        logits, values = self._forward(self._trainable, self._non_trainable, observations)
        return np.asarray(logits), np.asarray(values).reshape(-1)

    def learn(self, batch, learning_rate, entropy_coeff):
        import jax.numpy as jnp

        state = (self._trainable, self._non_trainable, self._optimizer_variables)
        state, stats = self._update(
            state, batch, jnp.float32(learning_rate), jnp.float32(entropy_coeff)
        )
        self._trainable, self._non_trainable, self._optimizer_variables = state
        return {name: float(value) for name, value in stats.items()}

    def state(self):
        for variable, value in zip(self.model.trainable_variables, self._trainable):
            variable.assign(value)
        for variable, value in zip(self.model.non_trainable_variables, self._non_trainable):
            variable.assign(value)
        for variable, value in zip(self.optimizer.variables, self._optimizer_variables):
            variable.assign(value)
        return super().state()

    def set_state(self, weights, optimizer_variables):
        super().set_state(weights, optimizer_variables)
        self._load_arrays()


class TorchLearnerStep(LearnerStep):
    """`LearnerStep` on PyTorch: the model's variables are torch parameters; autograd
    (`torch.autograd.grad` of the loss over them) takes the gradient, the optimizer's `apply`
    updates them in place under `torch.no_grad()`, and acting runs under `torch.no_grad()`.

    Eager whatever `jit_compile` says: `torch.compile` did not pay on a CPU (docs/agents.md,
    "Which engine"), so the engine does not use it."""

    def __init__(self, model, optimizer, settings, jit_compile=True):
        import torch

        super().__init__(model, optimizer, settings, jit_compile)
        self._torch = torch

    @staticmethod
    def _tensors(batch):
        from keras import ops

        return {name: ops.convert_to_tensor(value) for name, value in batch.items()}

    def act(self, observations):
        from keras import ops

        with self._torch.no_grad():
            logits, values = self.model(
                ops.cast(ops.convert_to_tensor(observations), "float32"), training=False
            )
        return ops.convert_to_numpy(logits), ops.convert_to_numpy(values).reshape(-1)

    def learn(self, batch, learning_rate, entropy_coeff):
        from keras import ops

        torch = self._torch
        batch = self._tensors(batch)
        observations = batch["observations"]
        flat = ops.reshape(observations, (-1,) + tuple(observations.shape[2:]))
        outputs = self.model(ops.cast(flat, "float32"), training=True)
        loss, stats = batch_loss(outputs, batch, entropy_coeff, self.settings)
        variables = self.model.trainable_variables
        gradients = list(torch.autograd.grad(loss, [variable.value for variable in variables]))
        with torch.no_grad():
            stats = {**stats, **gradient_statistics(gradients, self.parts, self.settings)}
            self.optimizer.learning_rate = learning_rate
            self.optimizer.apply(gradients, variables)
        return {name: float(value.detach()) for name, value in stats.items()}


#: The learner step of each Keras backend the engine runs on.
LEARNER_STEPS = {
    "tensorflow": TensorFlowLearnerStep,
    "jax": JaxLearnerStep,
    "torch": TorchLearnerStep,
}


class KerasIMPALA:
    """IMPALA in one process: the run's boards act with the current weights, then the learner
    step trains on what they played (see the module's docstring).

    Args:
        arguments: the run's `RunArguments` (engine "keras").
        settings: its `engine_settings` (made here when None).

    Attributes:
        iteration: training iterations so far (restored with a checkpoint).
        timesteps: environment steps sampled so far (restored with a checkpoint).
    """

    def __init__(self, arguments, settings=None):
        import keras

        from keras_simplicial.agents.model.architecture import build_agent_model
        from keras_simplicial.envs import make_vector_env

        self.arguments = arguments
        self.settings = settings or engine_settings(arguments)
        backend = keras.backend.backend()
        if backend not in LEARNER_STEPS:
            raise ValueError(
                f"The keras engine runs Keras on {sorted(LEARNER_STEPS)}, but Keras runs on "
                f"{backend!r}: set KERAS_BACKEND to one of them before Keras is imported."
            )
        self.backend = backend
        seed = arguments.seed
        if seed is not None:
            keras.utils.set_random_seed(seed)
        self.env = make_vector_env(
            arguments.env, arguments.num_envs_per_env_runner, arguments.env_config, copy=False
        )
        self.env.reset(seed=seed)  # board i: seed + i, as the old stack's runner seeds them
        self.core = self.env.core
        self.rng = np.random.default_rng(None if seed is None else seed + SAMPLER_SEED_OFFSET)
        self.model = build_agent_model(
            arguments.agent,
            self.env.single_observation_space.shape,
            int(self.env.single_action_space.n),
            **arguments.architecture,
        )
        self.learner = LEARNER_STEPS[backend](
            self.model, make_optimizer(self.settings), self.settings, arguments.jit_compile
        )
        self.iteration, self.timesteps, self.updates = 0, 0, 0
        self._episodes = collections.deque(
            maxlen=int(self.settings["metrics_num_episodes_for_smoothing"])
        )
        self._reset_episodes()

    def _reset_episodes(self):
        self._board_episodes = BoardEpisodes(self.core)
        self._ended_this_iteration = 0
        self._pending = None  # (logits, values) of the current observations

    # -- acting -------------------------------------------------------------------------------
    def act(self):
        """One unroll of T steps on every board; returns the time-major batch (numpy):
        observations [T, B, R, C+1, 3] uint8, actions [T, B] int32, behaviour_logp, rewards and
        terminateds [T, B] float32, bootstrap_value [B] float32 (V(x_T), 0 after a
        termination), and allowed [T, B, A] bool where the run masks blocked moves."""
        core, boards = self.core, self.core.num_boards
        steps = int(self.settings["rollout_fragment_length"])
        masking = self.arguments.mask_blocked_moves
        observations = np.empty((steps, boards) + core.obs.shape[1:], np.uint8)
        actions = np.empty((steps, boards), np.int32)
        behaviour_logp = np.empty((steps, boards), np.float32)
        rewards = np.empty((steps, boards), np.float32)
        terminateds = np.empty((steps, boards), np.float32)
        allowed = np.empty((steps, boards, 4), bool) if masking else None
        if self._pending is None:
            self._pending = self.learner.act(core.obs)
        for t in range(steps):
            observations[t] = core.obs
            logits = self._pending[0]
            if masking:
                allowed[t] = core.allowed_moves()
                logits = mask_logits(logits, allowed[t])
            actions[t], behaviour_logp[t] = sample_actions(logits, self.rng)
            reward, terminated, truncated, _ = core.step(actions[t], autoreset=False)
            rewards[t], terminateds[t] = reward, terminated
            self._end_episodes(reward, terminated | truncated)
            self._pending = self.learner.act(core.obs)
        batch = {
            "observations": observations,
            "actions": actions,
            "behaviour_logp": behaviour_logp,
            "rewards": rewards,
            "terminateds": terminateds,
            "bootstrap_value": np.where(terminateds[-1] > 0, 0.0, self._pending[1]).astype(
                np.float32
            ),
        }
        if masking:
            batch["allowed"] = allowed
        self.timesteps += steps * boards
        return batch

    def _end_episodes(self, reward, done):
        ended, reports = self._board_episodes.step(reward, done)
        self._episodes.extend(reports)
        self._ended_this_iteration += ended.size

    # -- learning -----------------------------------------------------------------------------
    def learn(self, batch):
        """Trains on `batch` (`act`): each train batch of its unrolls `num_epochs` times.
        Returns the statistics of each update."""
        steps = int(self.settings["rollout_fragment_length"])
        per_update = int(self.settings["train_batch_size"]) // steps
        boards = batch["actions"].shape[1]
        learning_rate = scheduled(self.settings["lr_schedule"], self.timesteps)
        entropy_coeff = scheduled(self.settings["entropy_coeff_schedule"], self.timesteps)
        stats = []
        for start in range(0, boards, per_update):
            part = {
                name: value[start : start + per_update]
                if name == "bootstrap_value"
                else value[:, start : start + per_update]
                for name, value in batch.items()
            }
            for _ in range(int(self.settings["num_epochs"])):
                stats.append(
                    {
                        **self.learner.learn(part, learning_rate, entropy_coeff),
                        "cur_lr": learning_rate,
                    }
                )
                self.updates += 1
        return stats

    def train(self):
        """One training iteration: act and learn until `min_time_s_per_iteration` seconds and
        `min_sample_timesteps_per_iteration` steps have passed. Returns the iteration's result
        with the names of RLlib's old-stack results (what `metric_rows.metrics_row` reads)."""
        started, first_step = time.perf_counter(), self.timesteps
        self._ended_this_iteration = 0
        stats = []
        while True:
            stats += self.learn(self.act())
            elapsed = time.perf_counter() - started
            if elapsed >= float(self.settings["min_time_s_per_iteration"] or 0) and (
                self.timesteps - first_step
                >= int(self.settings["min_sample_timesteps_per_iteration"])
            ):
                break
        self.iteration += 1
        return self._result(stats, (self.timesteps - first_step) / max(elapsed, 1e-9))

    def _result(self, stats, frames_per_s):
        episodes = list(self._episodes)
        custom = collections.defaultdict(list)
        for _, _, metrics in episodes:
            for name, value in metrics.items():
                custom[name].append(value)
        learner = {name: float(np.mean([s[name] for s in stats])) for name in stats[0]}
        learner["cur_lr"] = stats[-1]["cur_lr"]
        return {
            "training_iteration": self.iteration,
            "num_env_steps_sampled_lifetime": self.timesteps,
            "num_env_steps_sampled_throughput_per_sec": frames_per_s,
            "env_runners": {
                "episodes_this_iter": self._ended_this_iteration,
                "episode_return_mean": np.mean([e[0] for e in episodes]) if episodes else None,
                "episode_len_mean": np.mean([e[1] for e in episodes]) if episodes else None,
                "custom_metrics": {f"{name}_mean": np.mean(v) for name, v in custom.items()},
            },
            "info": {
                "learner": {
                    "default_policy": {
                        "learner_stats": {
                            name: learner[name]
                            for name in (
                                "policy_loss",
                                "vf_loss",
                                "entropy",
                                "vf_explained_var",
                                "cur_lr",
                            )
                        },
                        "grad_gnorm": learner["grad_gnorm"],
                        **{n: v for n, v in learner.items() if n.startswith("grad_norm/")},
                    }
                }
            },
        }

    # -- checkpoints --------------------------------------------------------------------------
    def save(self, path):
        """Writes the engine's state into the directory `path` (made if missing): the model's
        weights, the optimizer's variables, the counters and the random generators. Atomic
        together with the run's manifest when `RunDirectory.save_checkpoint` calls it."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        weights, optimizer_variables = self.learner.state()
        np.savez(path / WEIGHTS_FILE, *weights)
        np.savez(path / OPTIMIZER_FILE, *optimizer_variables)
        state = {
            "format": CHECKPOINT_FORMAT,
            "engine": "keras",
            "backend": self.backend,
            "iteration": self.iteration,
            "timesteps": self.timesteps,
            "updates": self.updates,
            "sampler": self.rng.bit_generator.state,
            "boards": [rng.bit_generator.state for rng in self.core.rngs],
        }
        (path / KERAS_ENGINE_STATE).write_text(json.dumps(state) + "\n", encoding="utf-8")
        return path

    def restore(self, path):
        """Loads `save`'s state from the checkpoint directory `path` (also one saved on another
        backend); the boards start new episodes from their saved generators."""
        path = Path(path)
        state = read_engine_state(path)
        weights = _arrays(path / WEIGHTS_FILE)
        optimizer_variables = _arrays(path / OPTIMIZER_FILE)
        expected = [tuple(w.shape) for w in self.model.weights]
        if [tuple(w.shape) for w in weights] != expected:
            raise ValueError(
                f"{path / WEIGHTS_FILE} holds weights of another model ({len(weights)} arrays, "
                f"{len(expected)} expected): was it trained with another agent or board?"
            )
        expected = [tuple(v.shape) for v in self.learner.optimizer.variables]
        if [tuple(v.shape) for v in optimizer_variables] != expected:
            raise ValueError(
                f"{path / OPTIMIZER_FILE} holds another optimizer's variables: was the run "
                "trained with another opt_type?"
            )
        if len(state["boards"]) != self.core.num_boards:
            raise ValueError(
                f"{path} was saved with {len(state['boards'])} boards, the run has "
                f"{self.core.num_boards} (num_envs_per_env_runner)."
            )
        self.learner.set_state(weights, optimizer_variables)
        self.iteration, self.timesteps = int(state["iteration"]), int(state["timesteps"])
        self.updates = int(state["updates"])
        self.rng.bit_generator.state = state["sampler"]
        for rng, board_state in zip(self.core.rngs, state["boards"]):
            rng.bit_generator.state = board_state
        self.core.reset_boards()
        self._reset_episodes()
        return self

    def keras_model(self):
        """The agent model holding the learner's current weights."""
        self.learner.state()
        return self.model


def read_engine_state(checkpoint):
    """The `KERAS_ENGINE_STATE` record of a Keras-engine checkpoint; a `ValueError` naming the
    file where it is not one."""
    path = Path(checkpoint) / KERAS_ENGINE_STATE
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: not a keras engine checkpoint.")
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is damaged: not valid JSON ({error}).") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(
            f"{path} is not a keras engine checkpoint of format {CHECKPOINT_FORMAT} "
            f"(format {state.get('format') if isinstance(state, dict) else None!r})."
        )
    return state


def _arrays(path):
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: not a keras engine checkpoint.")
    with np.load(path) as saved:
        return [saved[f"arr_{index}"] for index in range(len(saved.files))]


def saved_weights(checkpoint, keras_model=None):
    """The model weights of a Keras-engine checkpoint, in `model.weights` order (any backend:
    `keras_model.set_weights` takes them)."""
    read_engine_state(checkpoint)
    return _arrays(Path(checkpoint) / WEIGHTS_FILE)


class KerasEngineTrainer:
    """The Keras engine as `train` drives it (the `train.Trainer` interface)."""

    def __init__(self, engine):
        from keras_simplicial.agents.training.attention_health import AttentionHealth

        self.engine = engine
        arguments = engine.arguments
        self.smoothing = int(engine.settings["metrics_num_episodes_for_smoothing"])
        self._attention_health = AttentionHealth(
            engine.model,
            arguments.agent,
            arguments.architecture,
            arguments.env,
            arguments.env_config,
        )

    @property
    def iteration(self):
        return self.engine.iteration

    def environment_steps(self):
        return self.engine.timesteps

    def train(self):
        return self.engine.train()

    def read_result(self, result):
        return result

    def diagnostics(self):
        self.engine.keras_model()
        return self._attention_health()

    def save(self, path):
        return self.engine.save(path)

    def layout(self):
        arguments = self.engine.arguments
        return (
            f"Acting on {arguments.num_envs_per_env_runner} boards, then learning, in this "
            f"process (the keras engine, Keras on {self.engine.backend}; no Ray)."
        )

    def stop(self):
        self.engine.env.close()


def open_keras_engine(arguments, settings, checkpoint=None, address=None):
    """The `KerasEngineTrainer` of a run (`engines.Engine.open`), restored from `checkpoint`."""
    if address:
        raise ValueError(
            "--address joins a Ray cluster, but the keras engine runs in one process without "
            "Ray: leave --address out, or train with --engine rllib-old."
        )
    engine = KerasIMPALA(arguments, settings)
    if checkpoint is not None:
        engine.restore(checkpoint)
    return KerasEngineTrainer(engine)
