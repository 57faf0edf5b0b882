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

import numpy as np  # noqa: E402
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_simplicial import TransformerBlock, TwoSimplicialTransformerBlock  # noqa: E402


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
        rng.normal(size=(args.batch, args.entities, args.features)).astype("float32"))
    with_virtual = tf.constant(rng.normal(
        size=(args.batch, args.entities + args.virtual, args.features)).astype("float32"))
    relational = gradient_step(TransformerBlock(num_heads=2, key_dim=32, feedforward_dim=64),
                               standard)
    simplicial = gradient_step(
        TwoSimplicialTransformerBlock(num_virtual_entities=args.virtual, num_heads=2, key_dim=32,
                                      num_simplicial_heads=1, simplicial_key_dim=48,
                                      feedforward_dim=64),
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
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"TensorFlow {tf.__version__}, Keras {keras.__version__}")
    print(f"config: batch {args.batch} x {args.entities} entities x {args.features} "
          f"(+{args.virtual} virtual for the simplicial block), XLA, {args.repeats} alternating "
          f"repeats after {args.warmup} warm-up")
    print(f"relational (TransformerBlock)              median {rel * 1e3:8.2f} ms  "
          f"(min {min(times['relational']) * 1e3:.2f})")
    print(f"simplicial (TwoSimplicialTransformerBlock) median {simp * 1e3:8.2f} ms  "
          f"(min {min(times['simplicial']) * 1e3:.2f})")
    print(f"ratio simplicial / relational: {simp / rel:.3f} (ratio of medians), "
          f"{statistics.median(ratios):.3f} (median of per-round ratios); paper: 80/35 = 2.29")


if __name__ == "__main__":
    main()
