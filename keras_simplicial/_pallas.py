"""Pallas kernels (JAX) for the windowed causal 2-simplicial attention, forward and backward:
`SimplicialAttention(window=(w1, w2), fused="pallas")`.

Forward: one program per (batch x head, block of T queries). It reads its queries p [T, d] and the
whole front-padded key and value sequences of its (batch, head), takes the rows its queries'
windows need ([T + w - 1, d] from position T * block), and builds each query's windows from static
shifts of those rows. Logits [T, w1, w2] (the unsigned scalar triple product from Gram entries,
eq. (unsigned_scalar_triple_square), or the trilinear form), a masked softmax over the window pairs
(positions before 0 masked), and the output: sum_jk w_ijk u_j (x) u_k contracted with the head's B
(eq. Bformula), or sum_j u^1_j (.) sum_k w_ijk u^2_k. It also writes each query's log-sum-exp of
its logits, lse_i = m_i + log sum_jk exp(s_ijk - m_i) [B H, N] (float32).

Backward (`_backward_kernel`, same grid): each program recomputes its logits and the weights
w_ijk = exp(s_ijk - lse_i) from the saved lse, then the softmax's gradient ds_ijk = w_ijk (dw_ijk -
sum_jk w_ijk dw_ijk) and from it the gradients of p (written per query), of the keys l^1, l^2 and
values u^1, u^2 (per program, the [T + w - 1] rows its windows touch) and of B (per program). The
key and value rows of neighbouring blocks overlap by w - 1, so the per-program partials are summed
outside the kernel with jnp (a scatter-add of the overlapping rows, `_overlap_add`), and B's
gradient, sum over queries and batch of (sum_jk w_ijk u_j (x) u_k) (x) dO_i, is each program's
[dv, dv, dv] partial summed outside with jnp: memory O(B H (N / T) dv^3) for it.

Limits: each program holds its (batch, head)'s whole padded key and value sequences (O(N d) of
fast memory, so long sequences need a blocked key loop that is not written); no attention scores,
no dropout, no `attention_mask`. On a CPU it runs in Pallas's interpreter (`interpret=True`),
which is what the tests check; it has never been compiled for, or timed on, a GPU (its 3-D
einsums and non-power-of-two blocks may not lower there: `benchmarks/fused_kernel_cost.py`
records whether they do).
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from keras_simplicial import _utils

MAX_BLOCK = 128  # queries per program


def _block_size(n):
    return max(t for t in range(1, min(n, MAX_BLOCK) + 1) if n % t == 0)


def _windows(rows, width, block):
    """rows [block + width - 1, d] -> [block, width, d]: query t's keys t .. t + width - 1."""
    return jnp.stack([rows[a : a + block] for a in range(width)], axis=1)


def _unwindow(windows, width):
    """The inverse placement of `_windows`, summed: [block, width, d] -> [block + width - 1, d],
    slot (t, a) added into row t + a."""
    return sum(jnp.pad(windows[:, a], ((a, width - 1 - a), (0, 0))) for a in range(width))


def _load(refs, start, w1, w2, block):
    """p [T, d] and the windows l^1 [T, w1, d], l^2 [T, w2, d], u^1 [T, w1, dv], u^2 [T, w2, dv]
    of the queries start .. start + T - 1, in float32."""
    p_ref, l1_ref, u1_ref, l2_ref, u2_ref = refs

    def window(ref, width):
        rows = ref[0, pl.ds(start, block + width - 1), :]
        return _windows(rows, width, block).astype(jnp.float32)

    p = p_ref[0].astype(jnp.float32)
    return p, window(l1_ref, w1), window(l2_ref, w2), window(u1_ref, w1), window(u2_ref, w2)


def _gram(p, l1, l2):
    """x = p.l^1_j [T, w1, 1], y = p.l^2_k [T, 1, w2], z = l^1_j.l^2_k [T, w1, w2], |p|^2
    [T, 1, 1], |l^1_j|^2 [T, w1, 1], |l^2_k|^2 [T, 1, w2]."""
    return (
        jnp.einsum("td,tjd->tj", p, l1)[:, :, None],
        jnp.einsum("td,tkd->tk", p, l2)[:, None, :],
        jnp.einsum("tjd,tkd->tjk", l1, l2),
        jnp.sum(p * p, axis=-1)[:, None, None],
        jnp.sum(l1 * l1, axis=-1)[:, :, None],
        jnp.sum(l2 * l2, axis=-1)[:, None, :],
    )


def _logits(p, l1, l2, *, form, scale, epsilon):
    """The scaled logits [T, w1, w2] and, for the paper's form, the Gram entries and the square
    <p, l^1_j, l^2_k>^2 they give (None for the trilinear form)."""
    if form == "trilinear":
        return scale * jnp.einsum("tjd,tkd->tjk", p[:, None, :] * l1, l2), None
    x, y, z, pp, bb, cc = gram = _gram(p, l1, l2)
    # eq. (unsigned_scalar_triple_square): <p, l1, l2>^2 = x^2 |l2|^2 + z^2 |p|^2 + y^2 |l1|^2
    # - 2 x y z, as `scalar_product.triple_product_square` writes it.
    square = x * x * cc + z * z * pp + y * y * bb - 2.0 * x * y * z
    return scale * jnp.sqrt(jnp.maximum(square, 0.0) + epsilon), (gram, square)


def _valid(start, block, w1, w2):
    """[T, w1, w2]: both keys of the pair at positions >= 0."""
    query = start + jax.lax.broadcasted_iota(jnp.int32, (block, 1), 0)
    valid1 = (query - w1 + 1 + jax.lax.broadcasted_iota(jnp.int32, (1, w1), 1) >= 0)[:, :, None]
    valid2 = (query - w2 + 1 + jax.lax.broadcasted_iota(jnp.int32, (1, w2), 1) >= 0)[:, None, :]
    return jnp.logical_and(valid1, valid2)


def _kernel(
    p_ref, l1_ref, u1_ref, l2_ref, u2_ref, b_ref, o_ref, lse_ref, *, w1, w2, block, form, scale,
    epsilon
):  # fmt: skip
    start = pl.program_id(1) * block
    p, l1, l2, u1, u2 = _load((p_ref, l1_ref, u1_ref, l2_ref, u2_ref), start, w1, w2, block)
    logits, _ = _logits(p, l1, l2, form=form, scale=scale, epsilon=epsilon)
    valid = _valid(start, block, w1, w2)
    logits = jnp.where(valid, logits, _utils.MASK_LOGIT)
    top = jnp.max(logits, axis=(1, 2), keepdims=True)
    weights = jnp.where(valid, jnp.exp(logits - top), 0.0)
    total = jnp.sum(weights, axis=(1, 2), keepdims=True)  # >= 1: (i, i) is always valid
    weights = weights / total
    inner = jnp.einsum("tjk,tkd->tjd", weights, u2)  # sum_k w_ijk u_k
    if form == "trilinear":
        out = jnp.sum(u1 * inner, axis=1)
    else:
        pairs = jnp.einsum("tjd,tje->tde", u1, inner)
        out = jnp.einsum("tde,def->tf", pairs, b_ref[0].astype(jnp.float32))
    o_ref[0] = out.astype(o_ref.dtype)
    lse_ref[0] = (top + jnp.log(total))[:, 0, 0]


def _scalar_product_logit_gradients(ds, p, l1, l2, logits, gram, square, scale):
    """The gradients of p [T, d] and of the window slots of l^1 [T, w1, d] and l^2 [T, w2, d]
    from ds = dL/ds_ijk through s = scale sqrt(max(S, 0) + epsilon), S = <p, l^1_j, l^2_k>^2 =
    x^2 C + z^2 A + y^2 B - 2 x y z (x = p.l^1_j, y = p.l^2_k, z = l^1_j.l^2_k, A = |p|^2,
    B = |l^1_j|^2, C = |l^2_k|^2; eq. (unsigned_scalar_triple_square), the logit of eq.
    (scalar_triple)):

        g = dL/dS = ds * scale^2 / (2 s)   where S > 0, else 0 (max(S, 0) is flat there);
        dS/dx = 2 (x C - y z),  dS/dy = 2 (y B - x z),  dS/dz = 2 (z A - x y),
        dS/dA = z^2,  dS/dB = y^2,  dS/dC = x^2;

    then each Gram entry's gradient goes to both of its vectors (d(a.b)/da = b, d|a|^2/da = 2a):
    dp = sum_j g_x l^1_j + sum_k g_y l^2_k + 2 g_A p, dl^1_j = g_x p + sum_k g_z l^2_k + 2 g_B
    l^1_j, dl^2_k = g_y p + sum_j g_z l^1_j + 2 g_C l^2_k, with g_x = sum_k g dS/dx and so on.
    """
    x, y, z, pp, bb, cc = gram
    g = jnp.where(square > 0, ds * scale * scale / (2.0 * jnp.maximum(logits, 1e-30)), 0.0)
    gx = jnp.sum(g * 2.0 * (x * cc - y * z), axis=2)  # [T, w1]
    gy = jnp.sum(g * 2.0 * (y * bb - x * z), axis=1)  # [T, w2]
    gz = g * 2.0 * (z * pp - x * y)  # [T, w1, w2]
    ga = jnp.sum(g * z * z, axis=(1, 2))  # [T]
    gb = jnp.sum(g * y * y, axis=2)  # [T, w1]
    gc = jnp.sum(g * x * x, axis=1)  # [T, w2]
    dp = jnp.einsum("tj,tjd->td", gx, l1) + jnp.einsum("tk,tkd->td", gy, l2) + 2.0 * ga[:, None] * p
    dl1 = (
        gx[:, :, None] * p[:, None] + jnp.einsum("tjk,tkd->tjd", gz, l2) + 2.0 * gb[..., None] * l1
    )
    dl2 = (
        gy[:, :, None] * p[:, None] + jnp.einsum("tjk,tjd->tkd", gz, l1) + 2.0 * gc[..., None] * l2
    )
    return dp, dl1, dl2


def _backward_kernel(
    p_ref, l1_ref, u1_ref, l2_ref, u2_ref, b_ref, do_ref, lse_ref,
    dp_ref, dl1_ref, du1_ref, dl2_ref, du2_ref, db_ref, *, w1, w2, block, form, scale, epsilon
):  # fmt: skip
    start = pl.program_id(1) * block
    p, l1, l2, u1, u2 = _load((p_ref, l1_ref, u1_ref, l2_ref, u2_ref), start, w1, w2, block)
    logits, gram = _logits(p, l1, l2, form=form, scale=scale, epsilon=epsilon)
    valid = _valid(start, block, w1, w2)
    weights = jnp.where(valid, jnp.exp(logits - lse_ref[0][:, None, None]), 0.0)
    grad = do_ref[0].astype(jnp.float32)  # dO [T, dv]
    inner = jnp.einsum("tjk,tkd->tjd", weights, u2)  # sum_k w_ijk u^2_k
    if form == "trilinear":
        # o_i = sum_jk w_ijk u^1_j (.) u^2_k
        dw = jnp.einsum("tjd,tkd->tjk", u1 * grad[:, None], u2)
        du1 = grad[:, None] * inner
        du2 = jnp.einsum("tjk,tjd->tkd", weights, u1) * grad[:, None]
        db_ref[0, 0] = jnp.zeros(db_ref.shape[2:], db_ref.dtype)
    else:
        # o_i = sum_de P_ide B_def, P_i = sum_jk w_ijk u_j (x) u_k; M_i = dL/dP_i = B . dO_i
        b = b_ref[0].astype(jnp.float32)
        m = jnp.einsum("def,tf->tde", b, grad)
        um = jnp.einsum("tjd,tde->tje", u1, m)  # M_i^T u_j
        dw = jnp.einsum("tje,tke->tjk", um, u2)  # u_j^T M_i u_k
        du1 = jnp.einsum("tde,tje->tjd", m, inner)
        du2 = jnp.einsum("tjk,tje->tke", weights, um)
        pairs = jnp.einsum("tjd,tje->tde", u1, inner)
        db_ref[0, 0] = jnp.einsum("tde,tf->def", pairs, grad).astype(db_ref.dtype)
    ds = weights * (dw - jnp.sum(weights * dw, axis=(1, 2), keepdims=True))
    if form == "trilinear":
        g = ds * scale
        q1 = jnp.einsum("tjk,tkd->tjd", g, l2)  # sum_k g_ijk l^2_k
        dp = jnp.sum(l1 * q1, axis=1)
        dl1 = p[:, None] * q1
        dl2 = p[:, None] * jnp.einsum("tjk,tjd->tkd", g, l1)
    else:
        dp, dl1, dl2 = _scalar_product_logit_gradients(ds, p, l1, l2, logits, *gram, scale)
    dp_ref[0] = dp.astype(dp_ref.dtype)
    dl1_ref[0, 0] = _unwindow(dl1, w1)
    dl2_ref[0, 0] = _unwindow(dl2, w2)
    du1_ref[0, 0] = _unwindow(du1, w1)
    du2_ref[0, 0] = _unwindow(du2, w2)


def _flat(x, pad):
    """[B, H, N, d] -> [B H, pad + N, d], `pad` zero rows in front (positions before 0)."""
    batch, heads, n, d = x.shape
    return jnp.pad(x.reshape((batch * heads, n, d)), ((0, 0), (pad, 0), (0, 0)))


def _overlap_add(partials, n, block, width):
    """[G, N / T, T + w - 1, d] per-program rows -> [G, N, d]: block q's row r is position
    q T + r - (w - 1); rows before position 0 are dropped."""
    groups, blocks, rows, d = partials.shape
    at = (jnp.arange(blocks)[:, None] * block + jnp.arange(rows)[None, :]).reshape(-1)
    summed = jnp.zeros((groups, n + width - 1, d), partials.dtype)
    return summed.at[:, at].add(partials.reshape((groups, blocks * rows, d)))[:, width - 1 :]


def _specs(n, d, dv, w1, w2, block, b_shape):
    """The inputs' BlockSpecs: p by block, the padded keys and values whole, the head's B."""

    def whole(length, width):
        return pl.BlockSpec((1, length, width), lambda g, q: (g, 0, 0))

    return [
        pl.BlockSpec((1, block, d), lambda g, q: (g, q, 0)),
        whole(n + w1 - 1, d),
        whole(n + w1 - 1, dv),
        whole(n + w2 - 1, d),
        whole(n + w2 - 1, dv),
        pl.BlockSpec((1,) + b_shape[1:], lambda g, q: (g % b_shape[0], 0, 0, 0)),
    ]


def _inputs(p, l1, l2, u1, u2, b, w1, w2):
    batch, heads, n, d = p.shape
    return (
        p.reshape((batch * heads, n, d)),
        _flat(l1, w1 - 1),
        _flat(u1, w1 - 1),
        _flat(l2, w2 - 1),
        _flat(u2, w2 - 1),
        b,
    )


def _forward(p, l1, l2, u1, u2, b, *, window, form, scale, epsilon, interpret):
    """(out [B, H, N, dv], lse [B H, N] float32)."""
    batch, heads, n, d = p.shape
    dv = u1.shape[-1]
    w1, w2 = (min(w, n) for w in window)
    block = _block_size(n)
    kernel = functools.partial(
        _kernel, w1=w1, w2=w2, block=block, form=form, scale=scale, epsilon=epsilon
    )
    out, lse = pl.pallas_call(
        kernel,
        grid=(batch * heads, n // block),
        in_specs=_specs(n, d, dv, w1, w2, block, b.shape),
        out_specs=[
            pl.BlockSpec((1, block, dv), lambda g, q: (g, q, 0)),
            pl.BlockSpec((1, block), lambda g, q: (g, q)),
        ],
        out_shape=[
            jax.ShapeDtypeStruct((batch * heads, n, dv), p.dtype),
            jax.ShapeDtypeStruct((batch * heads, n), jnp.float32),
        ],
        interpret=interpret,
    )(*_inputs(p, l1, l2, u1, u2, b, w1, w2))
    return out.reshape((batch, heads, n, dv)), lse


def _backward(args, lse, grad, *, window, form, scale, epsilon, interpret):
    """The gradients of (p, l1, l2, u1, u2, b) from the output's gradient `grad` [B, H, N, dv]."""
    p, l1, l2, u1, u2, b = args
    batch, heads, n, d = p.shape
    dv = u1.shape[-1]
    w1, w2 = (min(w, n) for w in window)
    block = _block_size(n)
    blocks = n // block
    groups = batch * heads
    kernel = functools.partial(
        _backward_kernel, w1=w1, w2=w2, block=block, form=form, scale=scale, epsilon=epsilon
    )

    def partial(width, size):
        spec = pl.BlockSpec((1, 1, block + width - 1, size), lambda g, q: (g, q, 0, 0))
        shape = jax.ShapeDtypeStruct((groups, blocks, block + width - 1, size), jnp.float32)
        return spec, shape

    outputs = [
        (
            pl.BlockSpec((1, block, d), lambda g, q: (g, q, 0)),
            jax.ShapeDtypeStruct((groups, n, d), jnp.float32),
        ),
        partial(w1, d),
        partial(w1, dv),
        partial(w2, d),
        partial(w2, dv),
        (
            pl.BlockSpec((1, 1) + b.shape[1:], lambda g, q: (g, q, 0, 0, 0)),
            jax.ShapeDtypeStruct((groups, blocks) + b.shape[1:], jnp.float32),
        ),
    ]
    dp, dl1, du1, dl2, du2, db = pl.pallas_call(
        kernel,
        grid=(groups, blocks),
        in_specs=_specs(n, d, dv, w1, w2, block, b.shape)
        + [
            pl.BlockSpec((1, block, dv), lambda g, q: (g, q, 0)),
            pl.BlockSpec((1, block), lambda g, q: (g, q)),
        ],
        out_specs=[spec for spec, _ in outputs],
        out_shape=[shape for _, shape in outputs],
        interpret=interpret,
    )(*_inputs(p, l1, l2, u1, u2, b, w1, w2), grad.reshape((groups, n, dv)), lse)

    def shaped(x, like):
        return x.reshape(like.shape).astype(like.dtype)

    dl1, du1 = (_overlap_add(x, n, block, w1) for x in (dl1, du1))
    dl2, du2 = (_overlap_add(x, n, block, w2) for x in (dl2, du2))
    # B's gradient: each program's partial, summed over the query blocks and the batch.
    db = db.reshape((batch, heads // b.shape[0], b.shape[0], blocks) + b.shape[1:])
    db = jnp.sum(db, axis=(0, 1, 3)).astype(b.dtype)
    return (
        shaped(dp, p),
        shaped(dl1, l1),
        shaped(dl2, l2),
        shaped(du1, u1),
        shaped(du2, u2),
        db,
    )


def windowed_attention(p, l1, l2, u1, u2, b, *, window, form, scale, epsilon):
    """[B, H, N, dv] from p, l^1, l^2 [B, H, N, d] and the values u^1, u^2 [B, H, N, dv] (u, u
    for the paper's form) and B [H, dv, dv, dv] (any [1, 1, 1, 1] array for the trilinear form,
    whose gradient is then zeros), forward and backward as Pallas kernels (`jax.custom_vjp`). On
    a CPU the kernels run in Pallas's interpreter."""
    options = dict(
        window=tuple(window),
        form=form,
        scale=scale,
        epsilon=epsilon,
        interpret=jax.default_backend() == "cpu",
    )

    @jax.custom_vjp
    def attention(*args):
        return _forward(*args, **options)[0]

    def attention_forward(*args):
        out, lse = _forward(*args, **options)
        return out, (args, lse)

    def attention_backward(saved, grad):
        args, lse = saved
        return _backward(args, lse, grad, **options)

    attention.defvjp(attention_forward, attention_backward)
    return attention(p, l1, l2, u1, u2, b)
