"""The FLOPs counted for the windowed 2-simplicial attention (the attention only, not the
projections), as `benchmarks/fused_kernel_cost.py` reports TFLOP/s: plain Python, no backend.

pairs = sum_i min(i + 1, w1) min(i + 1, w2) valid key pairs, keys = sum_i min(i + 1, w1);
- trilinear: pairs x (2 d + 2 dv): the logit sum_d p_d l1_jd l2_kd and the output's
  w_jk u1_j (.) u2_k, a multiply-add per coordinate each (FBGEMM's count, 4 x head_dim x w1 x w2
  per query with d = dv = head_dim);
- the paper's form: pairs x (2 d + 2 dv) (the Gram entry l1_j . l2_k and sum_k w_jk u_k) + keys x
  2 dv^2 (sum_j u_j (x) inner_j) + N x 2 dv^3 (the contraction with B).
"""


def windowed_attention_flops(n, window, key_dim, value_dim, form, batch, heads):
    """The forward pass's counted FLOPs over `batch` sequences of length `n` and `heads` query
    heads, with windows `window` = (w1, w2) and the form "trilinear" or "scalar_product"."""
    w1, w2 = (min(w, n) for w in window)
    pairs = sum(min(i + 1, w1) * min(i + 1, w2) for i in range(n))
    flops = pairs * (2 * key_dim + 2 * value_dim)
    if form == "scalar_product":
        keys = sum(min(i + 1, w1) for i in range(n))
        flops += keys * 2 * value_dim**2 + n * 2 * value_dim**3
    return batch * heads * flops
