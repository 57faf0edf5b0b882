"""The learner step of the Keras engine on each Keras backend: IMPALA's update, compiled.

    learner = LEARNER_STEPS[keras.backend.backend()](model, make_optimizer(settings), settings)
    logits, values = learner.act(observations)
    statistics = learner.learn(batch, learning_rate, entropy_coeff)

The loss (`batch_loss`: V-trace targets and the IMPALA loss of `vtrace.impala_loss`), the
optimizer (`make_optimizer`: RMSProp with epsilon inside the root, or Adam; the gradient clipped
by its global norm, or each variable's where the run says `CLIP_EACH_VARIABLE`) and the model are
the same Keras objects on every backend; only how the gradient is taken differs.
"""

import abc

import numpy as np

from keras_simplicial.agents.rollout import BLOCKED_MOVE_LOGIT
from keras_simplicial.agents.training.presets import CLIP_EACH_VARIABLE


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

    def sync_model(self):
        """Makes `model`'s variables hold the learner's current weights (a step that learns on
        copies of them, as JAX's, writes them back); the optimizer's variables are left as
        they are. TensorFlow's and PyTorch's steps learn on the model's variables themselves."""
        return None

    def state(self):
        """(model weights in `model.weights` order, optimizer variables), as numpy arrays."""
        self.sync_model()
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

    def sync_model(self):
        for variable, value in zip(self.model.trainable_variables, self._trainable):
            variable.assign(value)
        for variable, value in zip(self.model.non_trainable_variables, self._non_trainable):
            variable.assign(value)

    def state(self):
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
