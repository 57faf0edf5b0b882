"""V-trace (Espeholt et al. 2018, Section 4.1) and the IMPALA loss, in `keras.ops`: one code path
for TensorFlow, JAX and PyTorch, used by the Keras engine's learner step (`keras_engine`).

    vs, pg_advantages = vtrace(log_rhos, discounts, rewards, values, bootstrap_value)
    total, stats = impala_loss(logits, values, actions, behaviour_logp, rewards, terminateds,
                               bootstrap_value, gamma=0.99, entropy_coeff=5e-3)

Every tensor is time-major, [T, B]: T steps of B boards' unrolls, as RLlib's old stack cuts its
train batch (`_make_time_major`). The conventions are RLlib 2.60's old stack (`vtrace_tf`,
`impala_tf_policy.VTraceLoss`), which the paper's code (RLlib 0.7) shares, so that the two
engines train on the same objective (tests/agents/training/test_keras_engine.py compares both on
the same inputs):

- discounts are gamma where the step did not terminate the episode, 0 where it did; a step limit
  (truncation) inside an unroll is not a termination (RLlib's V-trace reads on into the next
  episode's value there, as it does);
- rho and the policy-gradient rho are clipped at `clip_rho_threshold` and
  `clip_pg_rho_threshold`, c at 1;
- the losses are sums over the batch, not means: the policy gradient on the V-trace advantages,
  the value loss 0.5 * (v_s - V(x_s))^2 weighted by `vf_loss_coeff`, and the entropy bonus
  weighted by `entropy_coeff`. Their means are the statistics reported.
"""

from keras import ops


def vtrace(
    log_rhos,
    discounts,
    rewards,
    values,
    bootstrap_value,
    clip_rho_threshold=1.0,
    clip_pg_rho_threshold=1.0,
):
    """The V-trace targets v_s and the policy-gradient advantages of one batch of unrolls.

    Args:
        log_rhos: [T, B] log pi(a_t | x_t) - log mu(a_t | x_t), target minus behaviour policy.
        discounts: [T, B] the discount after each step (0 where the episode terminated).
        rewards: [T, B].
        values: [T, B] V(x_t) of the target (learner's) value function.
        bootstrap_value: [B] V(x_T), the value after the unroll's last step.
        clip_rho_threshold: rho-bar of the targets.
        clip_pg_rho_threshold: rho-bar of the policy-gradient advantages.

    Returns:
        (vs [T, B], pg_advantages [T, B]), both without gradient.
    """
    steps = values.shape[0]
    if steps is None:
        raise ValueError("vtrace needs the unroll length T (the first axis) to be known.")
    rhos = ops.exp(log_rhos)
    clipped_rhos = ops.minimum(clip_rho_threshold, rhos)
    cs = ops.minimum(1.0, rhos)
    next_values = ops.concatenate([values[1:], ops.expand_dims(bootstrap_value, 0)], axis=0)
    deltas = clipped_rhos * (rewards + discounts * next_values - values)
    # v_s - V(x_s) = delta_s + gamma_s c_s (v_{s+1} - V(x_{s+1})), from the last step back; T is
    # small (10 or 40) and known, so the recursion is unrolled into the compiled step.
    correction = ops.zeros_like(bootstrap_value)
    corrections = [None] * steps
    for t in reversed(range(steps)):
        correction = deltas[t] + discounts[t] * cs[t] * correction
        corrections[t] = correction
    vs = ops.stack(corrections, axis=0) + values
    next_vs = ops.concatenate([vs[1:], ops.expand_dims(bootstrap_value, 0)], axis=0)
    pg_advantages = ops.minimum(clip_pg_rho_threshold, rhos) * (
        rewards + discounts * next_vs - values
    )
    return ops.stop_gradient(vs), ops.stop_gradient(pg_advantages)


def explained_variance(targets, predictions):
    """1 - Var(targets - predictions) / Var(targets), at least -1 (RLlib's `explained_variance`)."""
    ratio = ops.var(targets - predictions) / ops.maximum(ops.var(targets), 1e-30)
    return ops.maximum(-1.0, 1.0 - ratio)


def impala_loss(
    logits,
    values,
    actions,
    behaviour_logp,
    rewards,
    terminateds,
    bootstrap_value,
    *,
    gamma,
    entropy_coeff,
    vf_loss_coeff=0.5,
    clip_rho_threshold=1.0,
    clip_pg_rho_threshold=1.0,
):
    """IMPALA's loss on one batch of unrolls, and its statistics.

    Args:
        logits: [T, B, A] the learner's logits (masked already where the run masks blocked moves).
        values: [T, B] the learner's values.
        actions: [T, B] int, the actions taken.
        behaviour_logp: [T, B] log mu(a_t | x_t) of the policy that acted.
        rewards: [T, B].
        terminateds: [T, B] 1.0 where the step ended the episode by termination, else 0.0.
        bootstrap_value: [B] V(x_T) of the acting policy (0 after a termination).
        gamma: the discount (Table 1: 0.99).
        entropy_coeff, vf_loss_coeff: the weights of the entropy bonus and the value loss.
        clip_rho_threshold, clip_pg_rho_threshold: V-trace's clips (`vtrace`).

    Returns:
        (total loss, a scalar to minimise; {"policy_loss", "vf_loss", "entropy",
        "vf_explained_var"}: the means over the batch, as RLlib reports them).
    """
    log_probs = ops.log_softmax(logits, axis=-1)
    action_logp = ops.squeeze(
        ops.take_along_axis(log_probs, ops.expand_dims(ops.cast(actions, "int32"), -1), axis=-1),
        axis=-1,
    )
    entropy = -ops.sum(ops.exp(log_probs) * log_probs, axis=-1)
    discounts = gamma * (1.0 - ops.cast(terminateds, values.dtype))
    vs, pg_advantages = vtrace(
        action_logp - behaviour_logp,
        discounts,
        rewards,
        values,
        bootstrap_value,
        clip_rho_threshold,
        clip_pg_rho_threshold,
    )
    policy_terms = action_logp * pg_advantages
    value_terms = 0.5 * ops.square(values - vs)
    total = (
        -ops.sum(policy_terms)
        + vf_loss_coeff * ops.sum(value_terms)
        - entropy_coeff * ops.sum(entropy)
    )
    stats = {
        "policy_loss": -ops.mean(policy_terms),
        "vf_loss": ops.mean(value_terms),
        "entropy": ops.mean(entropy),
        "vf_explained_var": explained_variance(ops.reshape(vs, (-1,)), ops.reshape(values, (-1,))),
    }
    return total, stats
