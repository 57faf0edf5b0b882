"""Triton kernels (PyTorch) for the windowed causal 2-simplicial attention, forward and backward:
`SimplicialAttention(window=(w1, w2), fused="triton")` on Keras's PyTorch backend.

One program per (query i, batch x head g). It loads its query p_i [d] and its two windows of keys
and values, the rows i - w + 1 .. i of l^1, u^1 (w1 rows) and l^2, u^2 (w2 rows), padded to a power
of two (at least 16, what `tl.dot` takes) with rows before position 0 and past the window masked.

Forward (`_forward_kernel`): logits [w1, w2] (the unsigned scalar triple product from Gram entries,
eq. (unsigned_scalar_triple_square), or the trilinear form; the Gram matrix l^1 . l^2 as one
`tl.dot`), the masked softmax, and the output: sum_de P_de B_def with P = sum_jk w_jk u_j (x) u_k
(eq. Bformula; one slot d of B at a time, [dv, dv] each), or sum_j u^1_j (.) sum_k w_jk u^2_k. It
writes each query's log-sum-exp lse_i = m_i + log sum_jk exp(s_ijk - m_i) (float32).

Backward (`_backward_kernel`, same grid): the weights recomputed from the saved lse, w_ijk =
exp(s_ijk - lse_i); the softmax's gradient ds_ijk = w_ijk (dw_ijk - sum_jk w_ijk dw_ijk); the
gradient of p_i written directly and those of the window rows of l^1, l^2, u^1, u^2 added with
`tl.atomic_add` (each key row is in the windows of w queries), so they are summed in an order
that can vary between runs on a GPU. B's gradient, sum over queries and batch of P_i (x) dO_i, is
computed outside the kernel: the kernel writes each query's P_i ([B H, N, dv, dv], float32, what
the `keras.ops` path holds too) and one `torch.einsum` contracts it with dO. The scalar-product
form's gradient through sqrt and the triple product is derived in
`keras_simplicial._pallas._scalar_product_logit_gradients`; the formulas are the same here.

Everything is computed in float32 (inputs are cast), `tl.dot` with input_precision="ieee" (no
TF32). Limits: no attention scores, dropout or `attention_mask` (those calls take the `keras.ops`
path); one query per program, so the key windows of neighbouring queries are loaded again by each
(no reuse through shared memory, unlike FBGEMM's kernels). With TRITON_INTERPRET=1 set before Python
starts, the kernels run in Triton's interpreter on CPU tensors, which is what the tests check;
they have never been compiled for, or timed on, a GPU. Triton cannot be imported into a process
that has loaded TensorFlow (their LLVM builds clash and the process aborts): this module refuses
to, by name.
"""

import os
import sys

import torch

from keras_simplicial.extras import missing_extra

if "tensorflow" in sys.modules and "triton" not in sys.modules:
    raise ImportError(
        'SimplicialAttention(fused="triton") cannot load Triton into a process that has loaded '
        "TensorFlow: their LLVM builds clash (importing triton after tensorflow aborts the "
        'process with "LLVM ERROR: inconsistency in registered CommandLine options"). Run it '
        "on Keras's PyTorch backend in a process without TensorFlow."
    )
try:
    import triton
    import triton.language as tl
except ModuleNotFoundError as error:
    raise missing_extra(error, "triton", 'SimplicialAttention(fused="triton")') from error

#: Whether Triton runs kernels in its interpreter: TRITON_INTERPRET=1 in the environment before
#: Python starts (Triton's own functions, `tl.sum` among them, are made interpreted or compiled
#: when `triton` is first imported, which Keras's PyTorch backend already does).
INTERPRET = os.environ.get("TRITON_INTERPRET", "").lower() in ("1", "true", "yes", "on")
_jit = triton.jit

MASK_LOGIT = -1e9  # as keras_simplicial._utils.MASK_LOGIT


@_jit
def _load_windows(
    p_ptr, l1_ptr, l2_ptr, u1_ptr, u2_ptr, g, i, n, w1, w2, d, dv,
    W1P: tl.constexpr, W2P: tl.constexpr, DP: tl.constexpr, DVP: tl.constexpr
):  # fmt: skip
    """p_i [DP], l^1, u^1 windows [W1P, DP], [W1P, DVP], l^2, u^2 [W2P, DP], [W2P, DVP], the window
    positions j [W1P], k [W2P] and whether each is a real key."""
    a = tl.arange(0, W1P)
    b = tl.arange(0, W2P)
    cols = tl.arange(0, DP)
    vcols = tl.arange(0, DVP)
    j = i - w1 + 1 + a
    k = i - w2 + 1 + b
    valid1 = (a < w1) & (j >= 0)
    valid2 = (b < w2) & (k >= 0)
    key = cols < d
    val = vcols < dv
    p = tl.load(p_ptr + (g * n + i) * d + cols, mask=key, other=0.0)
    rows1 = (g * n + j)[:, None]
    rows2 = (g * n + k)[:, None]
    key1, key2 = valid1[:, None] & key[None, :], valid2[:, None] & key[None, :]
    val1, val2 = valid1[:, None] & val[None, :], valid2[:, None] & val[None, :]
    l1 = tl.load(l1_ptr + rows1 * d + cols[None, :], mask=key1, other=0.0)
    l2 = tl.load(l2_ptr + rows2 * d + cols[None, :], mask=key2, other=0.0)
    u1 = tl.load(u1_ptr + rows1 * dv + vcols[None, :], mask=val1, other=0.0)
    u2 = tl.load(u2_ptr + rows2 * dv + vcols[None, :], mask=val2, other=0.0)
    return p, l1, l2, u1, u2, j, k, valid1, valid2


@_jit
def _square(p, l1, l2):
    """<p, l^1_j, l^2_k>^2 [W1P, W2P] from x = p.l^1_j, y = p.l^2_k, z = l^1_j.l^2_k and the
    norms, eq. (unsigned_scalar_triple_square); and x, y, z, |p|^2, |l^1_j|^2, |l^2_k|^2."""
    x = tl.sum(l1 * p[None, :], axis=1)
    y = tl.sum(l2 * p[None, :], axis=1)
    z = tl.dot(l1, tl.trans(l2), input_precision="ieee")
    pp = tl.sum(p * p, axis=0)
    bb = tl.sum(l1 * l1, axis=1)
    cc = tl.sum(l2 * l2, axis=1)
    xc = x[:, None]
    yr = y[None, :]
    square = xc * xc * cc[None, :] + z * z * pp + yr * yr * bb[:, None] - 2.0 * xc * yr * z
    return square, x, y, z, pp, bb, cc


@_jit
def _forward_kernel(
    p_ptr, l1_ptr, l2_ptr, u1_ptr, u2_ptr, b_ptr, out_ptr, lse_ptr, n, w1, w2, d, dv, heads_b,
    scale, epsilon, TRILINEAR: tl.constexpr, W1P: tl.constexpr, W2P: tl.constexpr,
    DP: tl.constexpr, DVP: tl.constexpr
):  # fmt: skip
    i = tl.program_id(0)
    g = tl.program_id(1)
    p, l1, l2, u1, u2, j, k, valid1, valid2 = _load_windows(
        p_ptr, l1_ptr, l2_ptr, u1_ptr, u2_ptr, g, i, n, w1, w2, d, dv, W1P, W2P, DP, DVP
    )
    valid = valid1[:, None] & valid2[None, :]
    if TRILINEAR:
        logits = scale * tl.dot(l1 * p[None, :], tl.trans(l2), input_precision="ieee")
    else:
        square, x, y, z, pp, bb, cc = _square(p, l1, l2)
        logits = scale * tl.sqrt(tl.maximum(square, 0.0) + epsilon)
    logits = tl.where(valid, logits, MASK_LOGIT)
    top = tl.max(tl.max(logits, axis=1), axis=0)
    weights = tl.where(valid, tl.exp(logits - top), 0.0)
    total = tl.sum(tl.sum(weights, axis=1), axis=0)  # >= 1: the pair (i, i) is always valid
    weights = weights / total
    inner = tl.dot(weights, u2, input_precision="ieee")  # [W1P, DVP]: sum_k w_jk u^2_k
    vcols = tl.arange(0, DVP)
    val = vcols < dv
    if TRILINEAR:
        out = tl.sum(u1 * inner, axis=0)
    else:
        # sum_de P_de B_def, P_d = sum_j u_jd inner_j, one slot d of B at a time.
        h = g % heads_b
        out = tl.zeros((DVP,), dtype=tl.float32)
        square_mask = val[:, None] & val[None, :]
        for c in range(dv):
            column = tl.load(u1_ptr + (g * n + j) * dv + c, mask=valid1, other=0.0)
            pair = tl.sum(column[:, None] * inner, axis=0)  # P_c [DVP]
            slot = b_ptr + (h * dv + c) * dv * dv + vcols[:, None] * dv + vcols[None, :]
            out += tl.sum(pair[:, None] * tl.load(slot, mask=square_mask, other=0.0), axis=0)
    tl.store(out_ptr + (g * n + i) * dv + vcols, out, mask=val)
    tl.store(lse_ptr + g * n + i, top + tl.log(total))


@_jit
def _backward_kernel(
    p_ptr, l1_ptr, l2_ptr, u1_ptr, u2_ptr, b_ptr, do_ptr, lse_ptr,
    dp_ptr, dl1_ptr, dl2_ptr, du1_ptr, du2_ptr, pairs_ptr, n, w1, w2, d, dv, heads_b,
    scale, epsilon, TRILINEAR: tl.constexpr, W1P: tl.constexpr, W2P: tl.constexpr,
    DP: tl.constexpr, DVP: tl.constexpr
):  # fmt: skip
    i = tl.program_id(0)
    g = tl.program_id(1)
    p, l1, l2, u1, u2, j, k, valid1, valid2 = _load_windows(
        p_ptr, l1_ptr, l2_ptr, u1_ptr, u2_ptr, g, i, n, w1, w2, d, dv, W1P, W2P, DP, DVP
    )
    valid = valid1[:, None] & valid2[None, :]
    cols = tl.arange(0, DP)
    vcols = tl.arange(0, DVP)
    key = cols < d
    val = vcols < dv
    if TRILINEAR:
        logits = scale * tl.dot(l1 * p[None, :], tl.trans(l2), input_precision="ieee")
    else:
        square, x, y, z, pp, bb, cc = _square(p, l1, l2)
        logits = scale * tl.sqrt(tl.maximum(square, 0.0) + epsilon)
    lse = tl.load(lse_ptr + g * n + i)
    weights = tl.where(valid, tl.exp(logits - lse), 0.0)
    grad = tl.load(do_ptr + (g * n + i) * dv + vcols, mask=val, other=0.0)  # dO_i
    inner = tl.dot(weights, u2, input_precision="ieee")  # sum_k w_jk u^2_k
    if TRILINEAR:
        # o_i = sum_jk w_jk u^1_j (.) u^2_k
        dw = tl.dot(u1 * grad[None, :], tl.trans(u2), input_precision="ieee")
        du1 = inner * grad[None, :]
        du2 = tl.dot(tl.trans(weights), u1, input_precision="ieee") * grad[None, :]
    else:
        # o_i = sum_de P_de B_def: with M_de = sum_f B_def dO_f (one slot d at a time),
        # dw_jk = sum_d u_jd (M_d . u_k), du_j (first slot) = M inner_j,
        # du_k (second slot) = sum_j w_jk M^T u_j, and P_d = sum_j u_jd inner_j stored for dB.
        h = g % heads_b
        dw = tl.zeros((W1P, W2P), dtype=tl.float32)
        du2 = tl.zeros((W2P, DVP), dtype=tl.float32)
        square_mask = val[:, None] & val[None, :]
        for c in range(dv):
            slot = b_ptr + (h * dv + c) * dv * dv + vcols[:, None] * dv + vcols[None, :]
            m = tl.sum(tl.load(slot, mask=square_mask, other=0.0) * grad[None, :], axis=1)
            column = tl.load(u1_ptr + (g * n + j) * dv + c, mask=valid1, other=0.0)
            dw += column[:, None] * tl.sum(u2 * m[None, :], axis=1)[None, :]
            tl.atomic_add(
                du1_ptr + (g * n + j) * dv + c, tl.sum(inner * m[None, :], axis=1), mask=valid1
            )
            du2 += tl.sum(weights * column[:, None], axis=0)[:, None] * m[None, :]
            pair = tl.sum(column[:, None] * inner, axis=0)
            tl.store(pairs_ptr + ((g * n + i) * dv + c) * dv + vcols, pair, mask=val)
    ds = weights * (dw - tl.sum(tl.sum(weights * dw, axis=1), axis=0))
    if TRILINEAR:
        gs = ds * scale
        q1 = tl.dot(gs, l2, input_precision="ieee")  # sum_k g_jk l^2_k
        dp = tl.sum(l1 * q1, axis=0)
        dl1 = p[None, :] * q1
        dl2 = p[None, :] * tl.dot(tl.trans(gs), l1, input_precision="ieee")
    else:
        # dL/dS = ds scale^2 / (2 s) where S > 0; dS/dx = 2 (x C - y z), dS/dy = 2 (y B - x z),
        # dS/dz = 2 (z A - x y), dS/dA = z^2, dS/dB = y^2, dS/dC = x^2 (see the module docstring).
        gs = tl.where(square > 0, ds * scale * scale / (2.0 * tl.maximum(logits, 1e-30)), 0.0)
        xc = x[:, None]
        yr = y[None, :]
        gx = tl.sum(gs * 2.0 * (xc * cc[None, :] - yr * z), axis=1)  # [W1P]
        gy = tl.sum(gs * 2.0 * (yr * bb[:, None] - xc * z), axis=0)  # [W2P]
        gz = gs * 2.0 * (z * pp - xc * yr)
        ga = tl.sum(tl.sum(gs * z * z, axis=1), axis=0)
        gb = tl.sum(gs * yr * yr, axis=1)
        gc = tl.sum(gs * xc * xc, axis=0)
        dp = tl.sum(gx[:, None] * l1, axis=0) + tl.sum(gy[:, None] * l2, axis=0) + 2.0 * ga * p
        dl1 = gx[:, None] * p[None, :] + tl.dot(gz, l2, input_precision="ieee")
        dl1 += 2.0 * gb[:, None] * l1
        dl2 = gy[:, None] * p[None, :] + tl.dot(tl.trans(gz), l1, input_precision="ieee")
        dl2 += 2.0 * gc[:, None] * l2
    tl.store(dp_ptr + (g * n + i) * d + cols, dp, mask=key)
    rows1 = (g * n + j)[:, None]
    rows2 = (g * n + k)[:, None]
    tl.atomic_add(dl1_ptr + rows1 * d + cols[None, :], dl1, mask=valid1[:, None] & key[None, :])
    tl.atomic_add(dl2_ptr + rows2 * d + cols[None, :], dl2, mask=valid2[:, None] & key[None, :])
    if TRILINEAR:
        tl.atomic_add(
            du1_ptr + rows1 * dv + vcols[None, :], du1, mask=valid1[:, None] & val[None, :]
        )
    tl.atomic_add(du2_ptr + rows2 * dv + vcols[None, :], du2, mask=valid2[:, None] & val[None, :])


def _padded(size):
    return max(16, triton.next_power_of_2(size))


def _flat(x):
    """[B, H, N, d] -> [B H, N, d], float32 and contiguous."""
    return x.reshape((-1,) + tuple(x.shape[2:])).to(torch.float32).contiguous()


def _launch_options(p, u1, window, form):
    batch, heads, n, d = p.shape
    dv = u1.shape[-1]
    w1, w2 = (min(w, n) for w in window)
    constants = dict(
        TRILINEAR=form == "trilinear",
        W1P=_padded(w1),
        W2P=_padded(w2),
        DP=_padded(d),
        DVP=_padded(dv),
    )
    return (n, batch * heads), (n, w1, w2, d, dv), constants


class _WindowedAttention(torch.autograd.Function):
    """The fused forward and backward as one autograd function of (p, l1, l2, u1, u2, b)."""

    @staticmethod
    def forward(ctx, p, l1, l2, u1, u2, b, window, form, scale, epsilon):
        grid, sizes, constants = _launch_options(p, u1, window, form)
        flat = [_flat(x) for x in (p, l1, l2, u1, u2)]
        b32 = b.to(torch.float32).contiguous()
        out = torch.empty_like(flat[3])
        lse = torch.empty(grid[::-1], dtype=torch.float32, device=p.device)
        scalars = (b.shape[0], float(scale), float(epsilon))
        _forward_kernel[grid](*flat, b32, out, lse, *sizes, *scalars, **constants)
        ctx.save_for_backward(*flat, b32, lse)
        ctx.options = (window, form, scale, epsilon, p.shape)
        ctx.originals = [(x.shape, x.dtype) for x in (p, l1, l2, u1, u2, b)]
        return out.reshape(p.shape[:3] + u1.shape[-1:]).to(p.dtype)

    @staticmethod
    def backward(ctx, grad):
        p, l1, l2, u1, u2, b, lse = ctx.saved_tensors
        window, form, scale, epsilon, shape = ctx.options
        batch, heads = shape[:2]
        grid, sizes, constants = _launch_options(p.reshape(shape), u1, window, form)
        n, dv = sizes[0], sizes[4]
        gradients = [torch.zeros_like(x) for x in (p, l1, l2, u1, u2)]
        trilinear = form == "trilinear"
        pairs = torch.empty((1,) if trilinear else (batch * heads, n, dv, dv), device=p.device)
        grad = grad.reshape((batch * heads, n, dv)).to(torch.float32).contiguous()
        scalars = (b.shape[0], float(scale), float(epsilon))
        _backward_kernel[grid](
            p, l1, l2, u1, u2, b, grad, lse, *gradients, pairs, *sizes, *scalars, **constants
        )
        if trilinear:
            db = torch.zeros_like(b)
        else:  # sum over queries and batch of P_i (x) dO_i, per head of B
            pairs = pairs.reshape((batch, -1, b.shape[0], n, dv, dv))
            db = torch.einsum("bghnde,bghnf->hdef", pairs, grad.reshape(pairs.shape[:-1]))
        results = [
            x.reshape(like).to(dtype) for x, (like, dtype) in zip(gradients + [db], ctx.originals)
        ]
        return (*results, None, None, None, None)


def windowed_attention(p, l1, l2, u1, u2, b, *, window, form, scale, epsilon):
    """[B, H, N, dv] from p, l^1, l^2 [B, H, N, d] and the values u^1, u^2 [B, H, N, dv] (u, u
    for the paper's form) and B [H, dv, dv, dv] (any [1, 1, 1, 1] tensor for the trilinear form,
    whose gradient is then zeros), torch tensors, forward and backward as Triton kernels."""
    if p.device.type != "cuda" and not INTERPRET:
        raise RuntimeError(
            'SimplicialAttention(fused="triton") got tensors on a CPU: Triton compiles for CUDA '
            "devices; to run its kernels in Triton's interpreter on a CPU, start Python with "
            "TRITON_INTERPRET=1 in the environment."
        )
    return _WindowedAttention.apply(
        p, l1, l2, u1, u2, b, tuple(window), form, float(scale), float(epsilon)
    )
