"""The 2-simplicial attention of a freshly built simplicial agent: saturated or not, by logit scale.

    .venv/bin/python benchmarks/simplicial_saturation.py [--seeds 5] [--boards 64]

For each `simplicial_logit_scale` (None = the paper's unscaled logits, "auto" = 1/key_dim, and
1/sqrt(key_dim) for comparison) and each initialisation seed, a simplicial agent is built on
bridge BoxWorld (the paper preset) and run on `--boards` start positions. Reported, averaged over
both block iterations and all queries: the entropy of the 2-simplicial scores over the M^2 key
pairs as a fraction of log M^2 (1 = uniform), the largest pair probability, the fraction of
queries with > 0.99 on one pair, and the gradient norm reaching the 2-simplicial query and key
kernels (the routing) next to that reaching its value kernel and B, under the loss
`-sum log pi(a) + sum V^2` with random actions a. Means and ranges over seeds.
"""

import argparse
import os
import statistics
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

SCALES = {"none (paper)": None, "1/sqrt(d)": 48**-0.5, "auto (1/d)": "auto"}


def measure(scale, seed, boards):
    import keras
    import numpy as np
    import tensorflow as tf

    from keras_simplicial.agents.model.architecture import build_agent_model
    from keras_simplicial.agents.model.model_parts import model_part
    from keras_simplicial.agents.training.attention_health import score_statistics
    from keras_simplicial.envs import make_vector_env

    keras.utils.set_random_seed(seed)
    env = make_vector_env("BridgeBoxWorld-v0", boards, copy=False)
    env.reset(seed=1000 + seed)
    observations = tf.constant(env.core.obs.astype(np.float32))
    model = build_agent_model(
        "simplicial",
        observations.shape[1:],
        4,
        return_attention_scores=True,
        simplicial_logit_scale=scale,
        # The paper's full gain on the branch: with the agents' zero-initialised gain no gradient
        # reaches the routing at the first step whatever the scale.
        simplicial_gain_initializer="ones",
    )
    actions = tf.constant(np.random.default_rng(seed).integers(0, 4, boards))
    with tf.GradientTape() as tape:
        outputs = model(observations)
        logits, value, scores = outputs[0], outputs[1], outputs[2:]
        log_pi = tf.gather(tf.nn.log_softmax(logits), actions, batch_dims=1)
        loss = -tf.reduce_sum(log_pi) + tf.reduce_sum(value**2)
    variables = [v.value for v in model.trainable_weights]
    gradients = tape.gradient(loss, variables)
    norms = {}
    for gradient, variable in zip(gradients, variables):
        norms.setdefault(model_part(variable.name), []).append(gradient)
    two = [score_statistics(s.numpy(), axes=(-2, -1)) for s in scores[1::2]]
    return {
        "entropy": statistics.mean(s[0] for s in two),
        "max_prob": statistics.mean(s[1] for s in two),
        "saturated": statistics.mean(s[2] for s in two),
        "grad_query_key": float(tf.linalg.global_norm(norms["simplicial_query_key"])),
        "grad_value_B": float(tf.linalg.global_norm(norms["simplicial_value_B"])),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--boards", type=int, default=64)
    args = parser.parse_args(argv)
    keys = ("entropy", "max_prob", "saturated", "grad_query_key", "grad_value_B")
    print(
        "| logit scale | pair entropy / log M^2 | largest pair probability | queries > 0.99 "
        "| grad norm, query+key kernels | grad norm, value kernel + B |"
    )
    print("|---|---|---|---|---|---|")
    for name, scale in SCALES.items():
        runs = [measure(scale, seed, args.boards) for seed in range(args.seeds)]
        cells = []
        for key in keys:
            values = [r[key] for r in runs]
            cells.append(f"{statistics.mean(values):.3g} [{min(values):.3g}, {max(values):.3g}]")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    print(
        f"\n{args.seeds} initialisation seeds, {args.boards} bridge BoxWorld start positions "
        "each; mean [min, max] over seeds."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
