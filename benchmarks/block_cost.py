"""Forward + backward time of TwoSimplicialTransformerBlock vs TransformerBlock (Section 4.2).

The paper reports a gradient step of 80 ms (simplicial) vs 35 ms (relational), a ratio of 2.3.
Here both blocks run at the paper's configuration (batch 1280 x 40 entities x 64; the simplicial
block also carries its 2 virtual entities), compiled with XLA (tf.function(jit_compile=True)),
and are timed alternately in the same process so that machine load affects them alike. A third
block is the simplicial one with the trilinear form of Roy et al. (`simplicial_form="trilinear"`:
trilinear logits, values u^1_j * u^2_k, no B).

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
    entities,
    features,
    heads=2,
    key_dim=32,
    feedforward=64,
    virtual=0,
    simplicial_dim=48,
    form="scalar_product",
):
    """Multiply-adds per sample of one forward pass, counting the matmuls / contractions as the
    blocks compute them (virtual=0: the relational block). The backward pass differentiates
    every product with respect to both operands (inputs included), 2x the forward count, so the
    forward+backward ratio of the two blocks equals the forward ratio. Elementwise work
    (LayerNorm, softmax, the scalar product's polynomial) is left out; the trilinear form's
    elementwise products p_i * l^1_j and u^1_j * u^2_k are counted, being d-wide per entry."""
    n, m, width = entities, virtual, heads * key_dim
    length = n + m
    count = {
        "q, k, v projection": length * features * 3 * width,
        # the masked softmax computes all length^2 logits (standard -> virtual ones are masked)
        "1-simplicial logits + weighted sum": 2 * heads * length * length * key_dim,
        "feed-forward g": length * (width + (simplicial_dim if m else 0)) * feedforward
        + length * feedforward * features,
    }
    if m and form == "trilinear":
        d = simplicial_dim
        count.update(
            {
                "p projection (standard entities)": n * features * d,
                "l1, l2, u1, u2 projection (virtual entities)": m * features * 4 * d,
                "trilinear logits (p * l1) . l2": n * m * d + n * m * m * d,
                "u1_j * u2_k, all M^2 pairs": m * m * d,
                "sum_jk weights x (u1_j * u2_k)": n * m * m * d,
            }
        )
    elif m:
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
    simplicial_blocks = {
        form: gradient_step(
            TwoSimplicialTransformerBlock(
                num_virtual_entities=args.virtual,
                num_heads=2,
                key_dim=32,
                num_simplicial_heads=1,
                simplicial_key_dim=48,
                feedforward_dim=64,
                simplicial_form=form,
            ),
            with_virtual,
        )
        for form in ("scalar_product", "trilinear")
    }
    steps = [
        ("relational", relational, standard),
        ("simplicial", simplicial_blocks["scalar_product"], with_virtual),
        ("trilinear", simplicial_blocks["trilinear"], with_virtual),
    ]
    for _ in range(args.warmup):
        for _, step, x in steps:
            timed(step, x)
    times = {name: [] for name, _, _ in steps}
    for r in range(args.repeats):
        # Rotate which block goes first, so none always follows another.
        for name, step, x in steps[r % 3 :] + steps[: r % 3]:
            times[name].append(timed(step, x))
    medians = {name: statistics.median(values) for name, values in times.items()}
    rel = medians["relational"]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"TensorFlow {tf.__version__}, Keras {keras.__version__}"
    )
    print(
        f"config: batch {args.batch} x {args.entities} entities x {args.features} "
        f"(+{args.virtual} virtual for the simplicial blocks), XLA, {args.repeats} rotating "
        f"repeats after {args.warmup} warm-up"
    )
    labels = {
        "relational": "relational (TransformerBlock)",
        "simplicial": "simplicial (TwoSimplicialTransformerBlock)",
        "trilinear": 'trilinear (simplicial_form="trilinear")',
    }
    for name, label in labels.items():
        print(
            f"{label:43s}median {medians[name] * 1e3:8.2f} ms  (min {min(times[name]) * 1e3:.2f})"
        )
    for name in ("simplicial", "trilinear"):
        ratios = [s / r for s, r in zip(times[name], times["relational"])]
        paper = "; paper: 80/35 = 2.29" if name == "simplicial" else ""
        print(
            f"ratio {name} / relational: {medians[name] / rel:.3f} (ratio of medians), "
            f"{statistics.median(ratios):.3f} (median of per-round ratios){paper}"
        )
    counts = {
        "relational": multiply_adds(args.entities, args.features),
        "simplicial": multiply_adds(args.entities, args.features, virtual=args.virtual),
        "trilinear": multiply_adds(
            args.entities, args.features, virtual=args.virtual, form="trilinear"
        ),
    }
    print("forward multiply-adds per sample:")
    terms = list(dict.fromkeys(term for count in counts.values() for term in count))
    for term in terms:
        print(
            f"  {term:46s}"
            + "  ".join(f"{name} {count.get(term, 0):>9,}" for name, count in counts.items())
        )
    totals = {name: sum(count.values()) for name, count in counts.items()}
    print(f"  {'total':46s}" + "  ".join(f"{name} {t:>9,}" for name, t in totals.items()))
    for name in ("simplicial", "trilinear"):
        print(
            f"multiply-add ratio {name} / relational: {totals[name] / totals['relational']:.3f} "
            f"(the time ratio's floor if both blocks were purely compute-bound)"
        )


if __name__ == "__main__":
    main()
