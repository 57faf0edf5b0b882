"""Loop-over-(i, j, k) numpy references for the layers, written from the paper's formulas (not from
the layer code). A helper module, not a test file: `test_loop_reference.py` checks the reference
itself against independent geometry."""

import itertools

import numpy as np
from trilinear_reference import trilinear_attention


def triple_vector_norm(a, b, c):
    """||(a.b)c - (a.c)b + (b.c)a||, eq. (scalar_triple)."""
    return np.linalg.norm(a.dot(b) * c - a.dot(c) * b + b.dot(c) * a)


def scalar_product_by_gram(*vectors):
    """sqrt(prod |v|^2 - det Gram), eq. (useful_identity), in float64."""
    v = np.stack([np.asarray(x, np.float64) for x in vectors])
    gram = v @ v.T
    return np.sqrt(max(np.prod(np.diag(gram)) - np.linalg.det(gram), 0.0))


def softmax(x, mask=None):
    x = np.asarray(x, np.float64)
    if mask is None:
        mask = np.ones_like(x, bool)
    if not mask.any():
        return np.zeros_like(x)
    e = np.where(mask, np.exp(x - x[mask].max()), 0.0)
    return e / e.sum()


def heads(x, kernel, bias, num_heads):
    y = x @ kernel + (0.0 if bias is None else bias)
    return y.reshape(y.shape[:-1] + (num_heads, -1))


def simplicial_attention(layer, query, value, key=None, mask=None, epsilon=None):
    """Eq. (Bformula) for every (b, h, i) by looping over all key tuples (j_1..j_k)."""
    key = value if key is None else key
    epsilon = layer.epsilon if epsilon is None else epsilon
    w = lambda v: None if v is None else np.asarray(v.numpy() if hasattr(v, "numpy") else v)
    H, k = layer.num_heads, layer.order
    # logit_scale: None = the paper's unscaled logits, "auto" = key_dim^(-order/2), or a float.
    scale = {None: 1.0, "auto": layer.key_dim ** (-k / 2)}.get(layer.logit_scale, layer.logit_scale)
    p = heads(query, w(layer.query_kernel), w(layer.query_bias), H)
    ls = [heads(key, w(kk), w(kb), H) for kk, kb in zip(layer.key_kernels, layer.key_biases)]
    u = heads(value, w(layer.value_kernel), w(layer.value_bias), H)
    B = w(layer.B)
    batch, n, m = query.shape[0], query.shape[1], value.shape[1]
    out = np.zeros((batch, n, H, u.shape[-1]))
    scores = np.zeros((batch, H, n) + (m,) * k)
    tuples = list(itertools.product(range(m), repeat=k))
    for b in range(batch):
        for h in range(H):
            values = []
            for js in tuples:
                t = B[h]
                for j in js:
                    t = np.tensordot(u[b, j, h], t, axes=(0, 0))
                values.append(t)
            for i in range(n):
                logits = []
                for js in tuples:
                    vecs = [p[b, i, h]] + [ls[a][b, js[a], h] for a in range(k)]
                    if k == 2:
                        square = triple_vector_norm(*vecs) ** 2
                    else:
                        square = scalar_product_by_gram(*vecs) ** 2
                    logits.append(scale * np.sqrt(square + epsilon))
                row_mask = None
                if mask is not None:
                    full = np.broadcast_to(mask, (batch, n) + (m,) * k)
                    row_mask = np.array([full[(b, i) + js] for js in tuples])
                probs = softmax(logits, row_mask)
                scores[(b, h, i)] = probs.reshape((m,) * k)
                out[b, i, h] = sum(pr * v for pr, v in zip(probs, values))
    return out.reshape(batch, n, -1), scores


def layer_norm(x, layer):
    gamma, beta = (np.asarray(v) for v in (layer.gamma, layer.beta))
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + layer.epsilon) * gamma + beta


def dense(x, layer, relu=False):
    y = x @ np.asarray(layer.kernel) + np.asarray(layer.bias)
    return np.maximum(y, 0.0) if relu else y


def dot_attention(att, x, mask=None):
    """eq. (update_multhead) for every (b, h, i) by looping over j."""
    H, dk = att.num_heads, att.key_dim
    q = heads(x, np.asarray(att.query_kernel), None, H)
    k = heads(x, np.asarray(att.key_kernel), None, H)
    v = heads(x, np.asarray(att.value_kernel), None, H)
    batch, n = x.shape[:2]
    out = np.zeros((batch, n, H, v.shape[-1]))
    scores = np.zeros((batch, H, n, n))
    for b, h, i in itertools.product(range(batch), range(H), range(n)):
        logits = [q[b, i, h].dot(k[b, j, h]) / np.sqrt(dk) for j in range(n)]
        probs = softmax(logits, None if mask is None else mask[i])
        scores[b, h, i] = probs
        out[b, i, h] = sum(probs[j] * v[b, j, h] for j in range(n))
    return out.reshape(batch, n, -1), scores


def transformer_block(block, e):
    """Section 4.2 `transformer_block`."""
    x = layer_norm(e, block.input_norm)
    a, scores = dot_attention(block.attention, x)
    c = dense(dense(a, block.feedforward_hidden, relu=True), block.feedforward_output)
    return layer_norm(e + c, block.output_norm), scores


def simplicial_block(block, e):
    """Section 4.2 `simplicial_transformer_block`, eqs. (update_rule_ent, 1_simp_virtual_update)."""
    m = block.num_virtual_entities
    n = e.shape[1] - m
    x = layer_norm(e, block.input_norm)
    mask = np.zeros((n + m, n + m), bool)
    mask[:n, :n] = True
    mask[n:, :] = True
    a1, scores = dot_attention(block.attention, x, mask)
    att = block.simplicial_attention
    attention = trilinear_attention if att.form == "trilinear" else simplicial_attention
    a2_std, simplicial_scores = attention(att, x[:, :n], x[:, n:])
    u = x[:, n:] @ np.asarray(att.value_kernel)  # u^1 for the trilinear form
    a2 = np.concatenate([a2_std, u], axis=1)
    v = np.concatenate([a1, layer_norm(a2, block.simplicial_norm)], axis=-1)
    c = dense(dense(v, block.feedforward_hidden, relu=True), block.feedforward_output)
    return layer_norm(e + c, block.output_norm), scores, simplicial_scores
