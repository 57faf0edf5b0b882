"""A Pallas kernel (JAX) for the windowed causal 2-simplicial attention's forward pass,
`SimplicialAttention(window=(w1, w2), fused="pallas")`.

One program per (batch x head, block of queries): it reads its queries p [T, d] and the whole
front-padded key and value sequences of its (batch, head), takes the rows its queries' windows
need ([T + w - 1, d] from position T * block), and builds each query's windows from static
shifts of those rows. Logits [T, w1, w2] (the unsigned scalar triple product from Gram entries,
or the trilinear form), a masked softmax over the window pairs (positions before 0 masked), and
the output: sum_jk w_ijk u_j (x) u_k contracted with the head's B, or sum_j u^1_j (.) sum_k w_ijk
u^2_k. The backward pass is the `keras.ops` path's (`jax.vjp` of the reference, through
`jax.custom_vjp`): only the forward is fused.

Limits: each program holds its (batch, head)'s whole padded key and value sequences (O(N d) of
fast memory, so long sequences need a blocked key loop that is not written); no attention scores,
no dropout, no `attention_mask`. On a CPU it runs in Pallas's interpreter (`interpret=True`),
which is what the tests check; it has never been compiled for, or timed on, a GPU.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from keras_simplicial import _utils
from keras_simplicial.scalar_product import safe_sqrt, triple_product_square

MAX_BLOCK = 128  # queries per program


def _block_size(n):
    return max(t for t in range(1, min(n, MAX_BLOCK) + 1) if n % t == 0)


def _windows(rows, width, block):
    """rows [block + width - 1, d] -> [block, width, d]: query t's keys t .. t + width - 1."""
    return jnp.stack([rows[a : a + block] for a in range(width)], axis=1)


def _kernel(
    p_ref, l1_ref, u1_ref, l2_ref, u2_ref, b_ref, o_ref, *, w1, w2, block, form, scale, epsilon
):
    start = pl.program_id(1) * block
    p = p_ref[0].astype(jnp.float32)  # [T, d]
    l1 = _windows(l1_ref[0, pl.ds(start, block + w1 - 1), :], w1, block).astype(jnp.float32)
    l2 = _windows(l2_ref[0, pl.ds(start, block + w2 - 1), :], w2, block).astype(jnp.float32)
    u1 = _windows(u1_ref[0, pl.ds(start, block + w1 - 1), :], w1, block).astype(jnp.float32)
    u2 = _windows(u2_ref[0, pl.ds(start, block + w2 - 1), :], w2, block).astype(jnp.float32)
    if form == "trilinear":
        logits = jnp.einsum("tjd,tkd->tjk", p[:, None, :] * l1, l2)
    else:
        square = triple_product_square(
            jnp.einsum("td,tjd->tj", p, l1)[:, :, None],
            jnp.einsum("td,tkd->tk", p, l2)[:, None, :],
            jnp.einsum("tjd,tkd->tjk", l1, l2),
            jnp.sum(p * p, axis=-1)[:, None, None],
            jnp.sum(l1 * l1, axis=-1)[:, :, None],
            jnp.sum(l2 * l2, axis=-1)[:, None, :],
        )
        logits = safe_sqrt(square, epsilon)
    logits = logits * scale
    query = start + jax.lax.broadcasted_iota(jnp.int32, (block, 1), 0)
    valid1 = (query - w1 + 1 + jax.lax.broadcasted_iota(jnp.int32, (1, w1), 1) >= 0)[:, :, None]
    valid2 = (query - w2 + 1 + jax.lax.broadcasted_iota(jnp.int32, (1, w2), 1) >= 0)[:, None, :]
    valid = jnp.logical_and(valid1, valid2)
    logits = jnp.where(valid, logits, _utils.MASK_LOGIT)
    weights = jnp.where(valid, jnp.exp(logits - jnp.max(logits, axis=(1, 2), keepdims=True)), 0.0)
    weights = weights / jnp.sum(weights, axis=(1, 2), keepdims=True)  # (i, i) is always valid
    inner = jnp.einsum("tjk,tkd->tjd", weights, u2)  # sum_k w_ijk u_k
    if form == "trilinear":
        out = jnp.sum(u1 * inner, axis=1)
    else:
        pairs = jnp.einsum("tjd,tje->tde", u1, inner)
        out = jnp.einsum("tde,def->tf", pairs, b_ref[0].astype(jnp.float32))
    o_ref[0] = out.astype(o_ref.dtype)


def _forward(p, l1, l2, u1, u2, b, *, window, form, scale, epsilon, interpret):
    batch, heads, n, d = p.shape
    dv = u1.shape[-1]
    w1, w2 = (min(w, n) for w in window)
    block = _block_size(n)

    def flat(x, pad):
        x = x.reshape((batch * heads, n, x.shape[-1]))
        return jnp.pad(x, ((0, 0), (pad, 0), (0, 0)))

    def whole(length, width):
        return pl.BlockSpec((1, length, width), lambda g, q: (g, 0, 0))

    kernel = functools.partial(
        _kernel, w1=w1, w2=w2, block=block, form=form, scale=scale, epsilon=epsilon
    )
    out = pl.pallas_call(
        kernel,
        grid=(batch * heads, n // block),
        in_specs=[
            pl.BlockSpec((1, block, d), lambda g, q: (g, q, 0)),
            whole(n + w1 - 1, d),
            whole(n + w1 - 1, dv),
            whole(n + w2 - 1, d),
            whole(n + w2 - 1, dv),
            pl.BlockSpec((1,) + b.shape[1:], lambda g, q: (g % b.shape[0], 0, 0, 0)),
        ],
        out_specs=pl.BlockSpec((1, block, dv), lambda g, q: (g, q, 0)),
        out_shape=jax.ShapeDtypeStruct((batch * heads, n, dv), p.dtype),
        interpret=interpret,
    )(
        p.reshape((batch * heads, n, d)),
        flat(l1, w1 - 1),
        flat(u1, w1 - 1),
        flat(l2, w2 - 1),
        flat(u2, w2 - 1),
        b,
    )
    return out.reshape((batch, heads, n, dv))


def windowed_attention(p, l1, l2, u1, u2, b, reference, *, window, form, scale, epsilon):
    """[B, H, N, dv] from p, l^1, l^2 [B, H, N, d] and the values u^1, u^2 [B, H, N, dv] (u, u
    for the paper's form) and B [H, dv, dv, dv] (any [1, 1, 1, 1] array for the trilinear form).
    `reference(p, l1, l2, u1, u2, b)` computes the same with `keras.ops`; its `jax.vjp` is the
    backward pass. On a CPU the kernel runs in Pallas's interpreter."""
    interpret = jax.default_backend() == "cpu"
    forward = functools.partial(
        _forward,
        window=tuple(window),
        form=form,
        scale=scale,
        epsilon=epsilon,
        interpret=interpret,
    )

    @jax.custom_vjp
    def attention(*args):
        return forward(*args)

    def attention_forward(*args):
        return forward(*args), args

    def attention_backward(args, gradient):
        return jax.vjp(reference, *args)[1](gradient)

    attention.defvjp(attention_forward, attention_backward)
    return attention(p, l1, l2, u1, u2, b)
