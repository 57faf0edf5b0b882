"""A direct numpy einsum reference for `SimplicialAttention(form="trilinear")`, written from the
formula of Roy et al. ("Fast and Simplex", 2025), not from the layer code: one einsum over all key
tuples for the logits, one for the values, one for the output. A helper module, not a test file."""

import numpy as np

# Einsum letters of the key axes j_1..j_k.
KEY_AXES = "jklmo"


def _weights(variables):
    return [None if v is None else np.asarray(v, np.float64) for v in variables]


def _heads(x, kernel, bias, num_heads):
    y = np.asarray(x, np.float64) @ kernel + (0.0 if bias is None else bias)
    return y.reshape(y.shape[:-1] + (num_heads, -1))  # [B, M, H, d]


def trilinear_attention(layer, query, value, key=None, mask=None):
    """Returns ([B, N, H * dv], scores [B, H, N, M, ..., M]) of

    v'_i = sum_{j_1..j_k} softmax(scale * sum_d p_id l^1_{j_1 d} ... l^k_{j_k d})
           u^1_{j_1} * ... * u^k_{j_k}.
    """
    key = value if key is None else key
    k, num_heads = layer.order, layer.num_heads
    scale = {None: 1.0, "auto": layer.key_dim**-0.5}.get(layer.logit_scale, layer.logit_scale)
    p = _heads(query, *_weights([layer.query_kernel, layer.query_bias]), num_heads)
    ls = [
        _heads(key, *_weights([kernel, bias]), num_heads)
        for kernel, bias in zip(layer.key_kernels, layer.key_biases)
    ]
    us = [
        _heads(value, *_weights([kernel, bias]), num_heads)
        for kernel, bias in zip(layer.value_kernels, layer.value_biases)
    ]
    axes = KEY_AXES[:k]
    # "bnhd,bjhd,bkhd->bhnjk" for k = 2.
    logits = scale * np.einsum(
        ",".join(["bnhd"] + [f"b{a}hd" for a in axes]) + f"->bhn{axes}", p, *ls
    )
    # "bjhd,bkhd->bhjkd": u^1_j * u^2_k for every pair.
    values = np.einsum(",".join(f"b{a}hd" for a in axes) + f"->bh{axes}d", *us)
    batch, n, m = logits.shape[0], logits.shape[2], logits.shape[3]
    flat = logits.reshape(batch, num_heads, n, -1)
    allowed = np.ones_like(flat, bool)
    if mask is not None:
        full = np.broadcast_to(mask, (batch, n) + (m,) * k).reshape(batch, 1, n, -1)
        allowed = np.broadcast_to(full, flat.shape)
    shifted = np.where(allowed, flat, -np.inf)
    top = shifted.max(-1, keepdims=True)
    exp = np.where(allowed, np.exp(shifted - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = exp.sum(-1, keepdims=True)
    probs = np.where(total > 0, exp / np.where(total > 0, total, 1.0), 0.0)
    scores = probs.reshape(logits.shape)
    out = np.einsum(f"bhn{axes},bh{axes}d->bnhd", scores, values)
    return out.reshape(batch, n, -1), scores
