"""Time and peak memory of causal 2-simplicial attention over a sequence attending to itself: all
pairs j, k <= i against sliding windows, for both forms, beside causal dot-product attention.

Forward pass of one layer (batch 1, 1 head, d = 32 for the 2-simplicial layers; 2 heads of 16 for
`DotProductAttention`), compiled by XLA on the JAX backend (`compiled.memory_analysis()` gives the
program's temporary buffers, inputs and outputs excluded), median of --repeats calls:
- dot: `DotProductAttention`, `use_causal_mask=True`;
- full: `SimplicialAttention`, `use_causal_mask=True` (`tile_size="auto"`: tiled above 2^21
  logits per head), skipped above --full-max-n;
- window: `SimplicialAttention(window=(w1, w2))`.
The windowed output is checked against the full causal path with a window mask where both run.

    python benchmarks/sequence_attention_cost.py [--max-n 2048] [--window 32 8]
"""

import argparse
import os
import platform
import statistics
import time

os.environ["KERAS_BACKEND"] = "jax"

import jax  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_simplicial import DotProductAttention, SimplicialAttention  # noqa: E402

WIDTH, KEY_DIM = 64, 32


def compiled_call(layer, x, **kwargs):
    weights = [v.value for v in layer.trainable_variables]
    fn = lambda w, x: layer.stateless_call(w, [], x, x, **kwargs)[0]
    compiled = jax.jit(fn).lower(weights, x).compile()
    analysis = compiled.memory_analysis()
    return (lambda: compiled(weights, x)), (
        None if analysis is None else analysis.temp_size_in_bytes
    )


def median_seconds(call, repeats):
    call().block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call().block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-n", type=int, default=64)
    parser.add_argument("--max-n", type=int, default=2048)
    parser.add_argument("--full-max-n", type=int, default=512)
    parser.add_argument("--window", type=int, nargs=2, default=(32, 8))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    window = tuple(args.window)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores; Keras {keras.__version__} on "
        f"JAX {jax.__version__} (XLA CPU); batch 1, forward, median of {args.repeats}; "
        f"window {window}"
    )
    print("| N | form | dot ms | full ms | window ms | full / window | full MiB | window MiB |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    mib = lambda b: "n/a" if b is None else f"{b / 2**20:.2f}"
    n = args.min_n
    while n <= args.max_n:
        x = rng.normal(size=(1, n, WIDTH)).astype("float32")
        dot = DotProductAttention(num_heads=2, key_dim=16)
        dot(x[:, :1], x[:, :1])
        dot_call, _ = compiled_call(dot, x, use_causal_mask=True)
        dot_ms = median_seconds(dot_call, args.repeats) * 1e3
        for form in ("scalar_product", "trilinear"):
            windowed = SimplicialAttention(1, KEY_DIM, form=form, window=window)
            windowed(x, x)
            window_call, window_bytes = compiled_call(windowed, x)
            window_ms = median_seconds(window_call, args.repeats) * 1e3
            full_ms = full_bytes = None
            if n <= args.full_max_n:
                full = SimplicialAttention(1, KEY_DIM, form=form)
                full(x[:, :1], x)
                full.set_weights(windowed.get_weights())
                full_call, full_bytes = compiled_call(full, x, use_causal_mask=True)
                full_ms = median_seconds(full_call, args.repeats) * 1e3
                if n >= max(window):
                    # Where the windows cover no more than the prefix, compare on the first rows.
                    head = min(window)
                    np.testing.assert_allclose(
                        np.asarray(window_call())[:, :head],
                        np.asarray(full_call())[:, :head],
                        rtol=1e-4,
                        atol=1e-4,
                    )
            ratio = "" if full_ms is None else f"{full_ms / window_ms:.1f}"
            print(
                f"| {n} | {form} | {dot_ms:.2f} | "
                + ("skipped" if full_ms is None else f"{full_ms:.2f}")
                + f" | {window_ms:.2f} | {ratio} | {mib(full_bytes)} | {mib(window_bytes)} |",
                flush=True,
            )
        n *= 2


if __name__ == "__main__":
    main()
