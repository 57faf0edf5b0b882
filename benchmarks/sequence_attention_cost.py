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
    python benchmarks/sequence_attention_cost.py --decode   # the decode step instead

`--decode`: the cost of one cached decoding step (`cache=`, `cache_update_index=`) at position
N - 1 of a sequence of N, the paper's form: all pairs (the cache holds the N positions) against
the windows (a ring buffer of max(w1, w2) positions), compiled, median of --repeats steps. The
windowed step's output is checked against the windowed full pass at that position.
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
    parser.add_argument("--decode", action="store_true", help="the cached decoding step")
    args = parser.parse_args()
    if args.decode:
        return decode_table(args)
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


def decode_step(layer, cache, token, index):
    """A compiled cached step of `layer` and its cache's size in bytes."""
    weights = [v.value for v in layer.trainable_variables]
    fn = lambda w, c, x, i: layer.stateless_call(w, [], x, x, cache=c, cache_update_index=i)[0]
    compiled = jax.jit(fn).lower(weights, cache, token, index).compile()
    size = sum(int(np.prod(c.shape)) * 4 for c in cache)
    return (lambda: compiled(weights, cache, token, index)[0]), size


def decode_table(args):
    window = tuple(args.window)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores; Keras {keras.__version__} on "
        f"JAX {jax.__version__} (XLA CPU); batch 1, one cached step at position N - 1, median "
        f"of {args.repeats}; window {window}, the paper's form, d = {KEY_DIM}"
    )
    print("| N | all pairs ms | window ms | all pairs / window | cache KiB, all pairs | window |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    n = args.min_n
    while n <= args.max_n:
        x = rng.normal(size=(1, n, WIDTH)).astype("float32")
        windowed = SimplicialAttention(1, KEY_DIM, window=window)
        windowed(x[:, : max(window)], x[:, : max(window)])
        full = SimplicialAttention(1, KEY_DIM)
        full(x[:, :1], x[:, :1])
        full.set_weights(windowed.get_weights())
        index = np.int32(n - 1)
        token = x[:, n - 1 :]
        rows = {}
        for name, layer in (("full", full), ("window", windowed)):
            cache = layer.initial_cache(1, n)
            # The cache as decoding leaves it after positions 0..n-2 (filled in one pass).
            entries = layer._cache_entries(keras.ops.convert_to_tensor(x[:, : n - 1]))
            if name == "full":
                cache = tuple(
                    keras.ops.slice_update(c, (0, 0, 0), e) for c, e in zip(cache, entries)
                )
            else:
                for i in range(max(0, n - 1 - max(window)), n - 1):
                    _, cache = layer(x[:, i : i + 1], x[:, i : i + 1], cache=cache,
                                     cache_update_index=i)  # fmt: skip
            call, size = decode_step(layer, cache, token, index)
            rows[name] = (median_seconds(call, args.repeats) * 1e3, size, call)
        expected = np.asarray(windowed(x, x))[:, -1]
        np.testing.assert_allclose(np.asarray(rows["window"][2]())[:, 0], expected, atol=1e-4)
        full_ms, full_size, _ = rows["full"]
        window_ms, window_size, _ = rows["window"]
        print(
            f"| {n} | {full_ms:.3f} | {window_ms:.3f} | {full_ms / window_ms:.1f} | "
            f"{full_size / 1024:.0f} | {window_size / 1024:.0f} |",
            flush=True,
        )
        n *= 2


if __name__ == "__main__":
    main()
