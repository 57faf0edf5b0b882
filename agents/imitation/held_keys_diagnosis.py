"""Why a held-keys model stays at the constant prediction: what it looks like from its flat start.

    rows = flat_start_diagnosis(BudgetRun(agent="relational", seed=1), data_dir="runs/data",
                                updates=1_000, every=100)

The budget probe (`held_keys_budget.py`) saw every model give one answer for every state, at
the training loss log 2, for thousands of updates. That can have several causes, which look
different from inside the model:

- the trunk's output (the max-pooled entities) does not depend on the state: the convolutions and
  the block give every board the same features, so no head can separate them;
- it does, but the MLP's ReLU units die (zero on every state), so the value head sees a constant;
- both vary, but the gradient that reaches the trunk is vanishingly small next to the heads'.

This trains the run's model (the same states, rung, optimizer and learning rate as the probe)
and, every `every` updates, measures on a fixed sample of its training states: the loss, the
spread of the logit over the states, the spread of the pooled features, the share of dead units
in each MLP layer, and the norm of the loss's gradient on each model part (`model_parts`).
"""

import numpy as np

from keras_simplicial.agents.imitation.held_keys_budget import ladder_states


def flat_start_diagnosis(run, *, data_dir=None, updates=1_000, every=100, sample=512):
    """Trains `run`'s model (a `BudgetRun`) for `updates` updates and describes it at update 0
    and every `every` updates after.

    Returns a list of dicts, one per measurement: `updates`, `loss` (cross-entropy on the sample),
    `logit_mean` and `logit_std` (over the sample's states), `pooled_std` (the standard deviation
    over states of each pooled feature, averaged over the features), `dead_<layer>` (the share of
    a ReLU layer's units that are zero on every state of the sample: conv_k, mlp_k),
    `grad_norm/<part>` (the norm of the gradient of the loss on the sample, by model part), and
    every statistic of `trainability.FeatureHealth` (`<site>/<statistic>`).
    """
    import tensorflow as tf

    from keras_simplicial.agents.imitation.held_keys import _Probe
    from keras_simplicial.agents.imitation.plateau import PlateauSchedule
    from keras_simplicial.agents.model.trainability import FeatureHealth, gradient_norms
    from keras_simplicial.agents.training.presets import PRESETS
    from keras_simplicial.agents.training.run_arguments import RunArguments

    for name, value in (("updates", updates), ("every", every), ("sample", sample)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    preset = PRESETS[run.preset]
    states, labels = ladder_states(run, "train", run.train_size, data_dir)
    arguments = RunArguments(
        env=preset["env"], agent=run.agent, model_overrides=run.model_overrides()
    )
    schedule = PlateauSchedule(learning_rate=run.learning_rate, batch_size=run.batch_size)
    probe = _Probe(arguments, states.shape[1:], schedule, [int(run.seed), int(run.train_size)])
    model = probe.model
    health = FeatureHealth(model)
    variables = [v for v in model.trainable_variables if not v.path.startswith("logits/")]
    x = tf.constant(states[: min(sample, len(states))], tf.float32)
    y = tf.constant(labels[: min(sample, len(labels))], tf.float32)

    @tf.function
    def loss_and_gradients():
        with tf.GradientTape() as tape:
            logit = model(x)[1][:, 0]
            loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logit))
        return loss, logit, tape.gradient(loss, variables)

    def describe(done):
        loss, logit, gradients = loss_and_gradients()
        sites = health(x.numpy())
        logit = np.asarray(logit)
        row = {
            "updates": done,
            "loss": float(loss),
            "logit_mean": float(logit.mean()),
            "logit_std": float(logit.std()),
            # The absolute spread of the pooled features (the relative one is pooled/state_sd).
            "pooled_std": float(sites["pooled/state_sd"] * sites["pooled/rms"]),
        }
        row.update(
            {f"dead_{key[:-5]}": value for key, value in sites.items() if key.endswith("/dead")}
        )
        row.update(gradient_norms(variables, [None if g is None else g.numpy() for g in gradients]))
        row.update(sites)
        return row

    rows = [describe(0)]
    for done in range(1, updates + 1):
        chosen = probe.rng.integers(len(labels), size=run.batch_size)
        probe._train_step(states[chosen], labels[chosen])
        if done % every == 0 or done == updates:
            rows.append(describe(done))
    return rows
