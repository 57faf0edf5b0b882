"""Helpers shared by the attention layers: argument checks, head reshapes, masked softmax, one
initializer per weight."""

import numbers

import keras
from keras import ops

# Added to masked logits before the softmax; exp() of it underflows to exactly 0 in float32.
MASK_LOGIT = -1e9


def check_positive_int(name, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"`{name}` must be a positive integer, received {name}={value!r}.")
    return int(value)


def check_rate(name, value):
    if not isinstance(value, numbers.Real) or not 0.0 <= value < 1.0:
        raise ValueError(f"`{name}` must be a number in [0, 1), received {name}={value!r}.")
    return float(value)


def check_non_negative(name, value):
    if not isinstance(value, numbers.Real) or value < 0:
        raise ValueError(f"`{name}` must be a non-negative number, received {name}={value!r}.")
    return float(value)


def fresh_initializer(initializer):
    """A new instance of `initializer` for one weight.

    A Keras 3 random initializer draws its seed when it is made (its `seed=None` included), so one
    instance used for several weights gives each the same values: a layer's query, key and value
    projections would start equal (Keras's own MultiHeadAttention clones its initializer per
    projection for this reason). A seeded initializer's copies still repeat its values, as in
    Keras; a plain function is returned as it is.
    """
    if isinstance(initializer, keras.initializers.Initializer):
        return initializer.__class__.from_config(initializer.get_config())
    return initializer


def dim(x, axis):
    """Static size of `axis` if known, else the dynamic one."""
    size = x.shape[axis]
    return size if size is not None else ops.shape(x)[axis]


def split_heads(x, num_heads):
    """[B, N, H * d] -> [B, H, N, d]."""
    head_dim = x.shape[-1] // num_heads
    x = ops.reshape(x, (-1, dim(x, 1), num_heads, head_dim))
    return ops.transpose(x, (0, 2, 1, 3))


def merge_heads(x):
    """[B, H, N, d] -> [B, N, H * d] (heads concatenated)."""
    num_heads, head_dim = x.shape[1], x.shape[3]
    x = ops.transpose(x, (0, 2, 1, 3))
    return ops.reshape(x, (-1, dim(x, 1), num_heads * head_dim))


def softmax_dtype(compute_dtype):
    """Logits and softmax run in float32 under mixed precision (as in keras MultiHeadAttention)."""
    return "float32" if str(compute_dtype) in ("float16", "bfloat16") else compute_dtype


def causal_condition(n, m):
    """[N, M] boolean, True where key position j <= query position i (as
    `keras.layers.MultiHeadAttention`'s causal mask: positions counted from 0 in both)."""
    return ops.expand_dims(ops.arange(n), 1) >= ops.expand_dims(ops.arange(m), 0)


def masked_softmax(logits, masks, axes):
    """Softmax jointly over `axes`; entries where any of `masks` (a mask, a list of masks each
    broadcastable to `logits`, or None) is False get probability exactly 0, and a row with nothing
    to attend to gets all zeros (not a uniform distribution). The masks are applied one by one, so
    factors such as a causal condition per key axis are never broadcast into one full mask."""
    masks = [] if masks is None else list(masks) if isinstance(masks, (list, tuple)) else [masks]
    for mask in masks:
        logits = ops.where(mask, logits, MASK_LOGIT)
    shifted = logits - ops.stop_gradient(ops.max(logits, axis=axes, keepdims=True))
    weights = ops.exp(shifted)
    if not masks:
        return weights / ops.sum(weights, axis=axes, keepdims=True)
    for mask in masks:
        weights = ops.where(mask, weights, 0.0)
    total = ops.sum(weights, axis=axes, keepdims=True)
    return weights / ops.maximum(total, 1e-30)


# ---------------------------------------------------------------------------- decoding caches
def check_cached_call(
    cache_update_index, key, value, attention_mask, return_attention_scores, padding_mask=None
):
    """What a cached call refuses: no index, a separate key sequence, a mask, scores."""
    if cache_update_index is None or key is not None and key is not value:
        raise ValueError(
            "A cached call needs `cache_update_index` (the position of the first new query) and "
            "a sequence attending to itself (no separate `key`)."
        )
    if attention_mask is not None or padding_mask is not None or return_attention_scores:
        raise ValueError(
            "A cached call takes no `attention_mask` or `padding_mask` and returns no scores; it "
            "attends causally (within any windows) to the cached positions."
        )


def write_cache(cache, new, index, ring=False):
    """`cache` [B, S, W] with `new` [B, T, W] written at positions index..index+T-1, or (`ring`,
    T = 1) at slot index mod S."""
    start = ops.mod(index, dim(cache, 1)) if ring else index
    zero = ops.zeros((), dtype="int32")
    return ops.slice_update(
        cache, (zero, ops.cast(start, "int32"), zero), ops.cast(new, cache.dtype)
    )


def cache_positions(length, index, ring=False):
    """[S] int32: the sequence position of each cache slot once position `index` is written:
    0..S-1 (positions not yet written are later than every query, so masked), or for a ring
    buffer index - ((index - s) mod S), negative for slots never written."""
    slots = ops.arange(length, dtype="int32")
    if not ring:
        return slots
    index = ops.cast(index, "int32")
    return index - ops.mod(index - slots, length)


def key_condition(query_positions, key_positions, width=None):
    """[T, S] boolean: key position j is real (>= 0), j <= i, and (with `width`) i - j < width."""
    queries = ops.expand_dims(ops.cast(query_positions, "int32"), 1)
    keys = ops.expand_dims(key_positions, 0)
    allowed = ops.logical_and(keys <= queries, keys >= 0)
    if width is not None:
        allowed = ops.logical_and(allowed, queries - keys < width)
    return allowed
