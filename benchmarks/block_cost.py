"""Forward + backward time of TwoSimplicialTransformerBlock vs TransformerBlock (Section 5.2).

The paper reports a gradient step of 80 ms (simplicial) vs 35 ms (relational), a ratio of 2.3.
Here both blocks run at the paper's configuration (batch 1280 x 40 entities x 64; the simplicial
block also carries its 2 virtual entities), compiled with XLA (tf.function(jit_compile=True)),
and are timed alternately in the same process so that machine load affects both alike.

    KERAS_BACKEND=tensorflow python benchmarks/block_cost.py [--repeats 30]
"""

import argparse
import os
import platform
import statistics
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_simplicial import TransformerBlock, TwoSimplicialTransformerBlock  # noqa: E402


def multiply_adds(
    entities, features, heads=2, key_dim=32, feedforward=64, virtual=0, simplicial_dim=48
):
    """Multiply-adds per sample of one forward pass, counting the matmuls / contractions as the
    blocks compute them (virtual=0: the relational block). The backward pass differentiates
    every product with respect to both operands (inputs included), 2x the forward count, so the
    forward+backward ratio of the two blocks equals the forward ratio. Elementwise work
    (LayerNorm, softmax, the scalar product's polynomial) is left out."""
    n, m, width = entities, virtual, heads * key_dim
    length = n + m
    count = {
        "q, k, v projection": length * features * 3 * width,
        # the masked softmax computes all length^2 logits (standard -> virtual ones are masked)
        "1-simplicial logits + weighted sum": 2 * heads * length * length * key_dim,
        "feed-forward g": length * (width + (simplicial_dim if m else 0)) * feedforward
        + length * feedforward * features,
    }
    if m:
        d = simplicial_dim
        count.update(
            {
                "p projection (standard entities)": n * features * d,
                "l1, l2, u projection (virtual entities)": m * features * 3 * d,
                "Gram entries p.l, l1.l2, norms": n * 2 * m * d + m * m * d + (n + 2 * m) * d,
                "B(u_j (x) u_k), all M^2 pairs": m * d**3 + m * m * d * d,
                "sum_jk weights x B(u_j (x) u_k)": n * m * m * d,
            }
        )
    return count


def gradient_step(block, inputs):
    """A compiled forward + backward pass: d(sum out^2)/d(weights, inputs)."""
    block(inputs)

    @tf.function(jit_compile=True)
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.square(block(x, training=True)))
        return tape.gradient(loss, [x] + block.trainable_variables)

    return step


def timed(step, x):
    start = time.perf_counter()
    grads = step(x)
    _ = [g.numpy() for g in grads[:1]]  # wait for the result
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1280)
    parser.add_argument("--entities", type=int, default=40)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--virtual", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    standard = tf.constant(
        rng.normal(size=(args.batch, args.entities, args.features)).astype("float32")
    )
    with_virtual = tf.constant(
        rng.normal(size=(args.batch, args.entities + args.virtual, args.features)).astype("float32")
    )
    relational = gradient_step(
        TransformerBlock(num_heads=2, key_dim=32, feedforward_dim=64), standard
    )
    simplicial = gradient_step(
        TwoSimplicialTransformerBlock(
            num_virtual_entities=args.virtual,
            num_heads=2,
            key_dim=32,
            num_simplicial_heads=1,
            simplicial_key_dim=48,
            feedforward_dim=64,
        ),
        with_virtual,
    )
    for _ in range(args.warmup):
        timed(relational, standard)
        timed(simplicial, with_virtual)
    times = {"relational": [], "simplicial": []}
    for r in range(args.repeats):
        # Alternate which block goes first, so neither always follows the other.
        order = [("relational", relational, standard), ("simplicial", simplicial, with_virtual)]
        for name, step, x in order if r % 2 == 0 else order[::-1]:
            times[name].append(timed(step, x))
    rel = statistics.median(times["relational"])
    simp = statistics.median(times["simplicial"])
    ratios = [s / r for s, r in zip(times["simplicial"], times["relational"])]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"TensorFlow {tf.__version__}, Keras {keras.__version__}"
    )
    print(
        f"config: batch {args.batch} x {args.entities} entities x {args.features} "
        f"(+{args.virtual} virtual for the simplicial block), XLA, {args.repeats} alternating "
        f"repeats after {args.warmup} warm-up"
    )
    print(
        f"relational (TransformerBlock)              median {rel * 1e3:8.2f} ms  "
        f"(min {min(times['relational']) * 1e3:.2f})"
    )
    print(
        f"simplicial (TwoSimplicialTransformerBlock) median {simp * 1e3:8.2f} ms  "
        f"(min {min(times['simplicial']) * 1e3:.2f})"
    )
    print(
        f"ratio simplicial / relational: {simp / rel:.3f} (ratio of medians), "
        f"{statistics.median(ratios):.3f} (median of per-round ratios); paper: 80/35 = 2.29"
    )
    rel_count = multiply_adds(args.entities, args.features)
    simp_count = multiply_adds(args.entities, args.features, virtual=args.virtual)
    print("forward multiply-adds per sample:")
    for name in simp_count:
        print(
            f"  {name:42s} relational {rel_count.get(name, 0):>9,}  "
            f"simplicial {simp_count[name]:>9,}"
        )
    rel_total, simp_total = sum(rel_count.values()), sum(simp_count.values())
    print(f"  {'total':42s} relational {rel_total:>9,}  simplicial {simp_total:>9,}")
    print(
        f"multiply-add ratio simplicial / relational: {simp_total / rel_total:.3f} "
        f"(the time ratio's floor if both blocks were purely compute-bound)"
    )


if __name__ == "__main__":
    main()
