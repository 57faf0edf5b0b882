"""2-simplicial (and k-simplicial) multi-head attention, eq. (Bformula), and its trilinear form."""

import itertools
import numbers

import keras
from keras import ops

from keras_simplicial import _utils
from keras_simplicial._weight_options import WeightOptionsLayer
from keras_simplicial.scalar_product import (
    DEFAULT_EPSILON,
    safe_sqrt,
    scalar_product_square_from_gram,
)

# "auto" tiling: key tuples are processed in tiles once a (batch, head) slice of the logits
# would hold more than this many entries, and each tile then holds about TILE_BUDGET entries.
TILE_THRESHOLD = 2**21
TILE_BUDGET = 2**19

LOGIT_SCALES = ("auto", "a float > 0", "None (the paper's unscaled logits)")
# "scalar_product": the paper's unsigned scalar product and B (the default); "trilinear": the
# (k+1)-linear form and elementwise products of values (Roy et al.).
FORMS = ("scalar_product", "trilinear")


def check_form(form):
    if form not in FORMS:
        raise ValueError(f"`form` must be one of {FORMS}, received form={form!r}.")
    return form


def resolve_logit_scale(logit_scale, key_dim, order, form="scalar_product"):
    """The factor on the logits; see `SimplicialAttention`.

    "auto" for the unsigned scalar product is key_dim^(-order/2): a product of order+1 norms of
    key_dim-wide projections grows as key_dim^((order+1)/2) and its spread over key tuples as
    key_dim^(order/2), so this keeps the logits' spread of order 1 at initialisation, as
    1/sqrt(key_dim) does for dot products. The trilinear form is a sum of key_dim products of
    coordinates, whose spread grows as key_dim^(1/2) whatever the order: "auto" is 1/sqrt(key_dim).
    """
    if logit_scale is None:
        return 1.0
    if isinstance(logit_scale, str):
        if logit_scale != "auto":
            raise ValueError(
                f"`logit_scale` must be one of {LOGIT_SCALES}, "
                f"received logit_scale={logit_scale!r}."
            )
        exponent = 0.5 if check_form(form) == "trilinear" else order / 2.0
        return float(key_dim) ** (-exponent)
    if (
        isinstance(logit_scale, bool)
        or not isinstance(logit_scale, (int, float))
        or not logit_scale > 0
    ):
        raise ValueError(
            f"`logit_scale` must be one of {LOGIT_SCALES}, received logit_scale={logit_scale!r}."
        )
    return float(logit_scale)


def check_window(window, order):
    """None, or (w_1, ..., w_k): each a positive integer, one per key (order 2 only)."""
    if window is None:
        return None
    accepted = "None or a pair (w1, w2) of positive integers"
    if isinstance(window, (str, bytes)) or not hasattr(window, "__len__") or len(window) != 2:
        raise ValueError(f"`window` must be {accepted}, received window={window!r}.")
    for w in window:
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w <= 0:
            raise ValueError(f"`window` must be {accepted}, received window={window!r}.")
    if order != 2:
        raise ValueError(f"`window` is implemented for order=2 only, received order={order}.")
    return tuple(int(w) for w in window)


# The fused kernels (forward and backward) and the Keras backend each runs on.
FUSED = (None, "pallas", "triton")
FUSED_BACKENDS = {"pallas": "jax", "triton": "torch"}


def check_fused(fused, window):
    """None (`keras.ops` everywhere), "pallas" (JAX, with `window`) or "triton" (PyTorch, with
    `window`)."""
    if fused not in FUSED:
        raise ValueError(f"`fused` must be one of {FUSED}, received fused={fused!r}.")
    if fused is None:
        return None
    if window is None:
        raise ValueError(f"`fused={fused!r}` needs a `window`: it fuses the windowed path only.")
    backend = FUSED_BACKENDS[fused]
    if keras.backend.backend() != backend:
        accepted = [name for name, on in FUSED_BACKENDS.items() if on == keras.backend.backend()]
        raise ValueError(
            f"`fused={fused!r}` needs the {backend} backend, received backend "
            f"{keras.backend.backend()!r}; use fused=None"
            + "".join(f" or fused={name!r}" for name in accepted)
            + " on this backend."
        )
    return fused


def _window_positions(n, width):
    """The `width` positions up to each query i (i - width + 1, ..., i), clipped at 0: [N, width]
    int32, and whether each is a real position (>= 0): [N, width] bool."""
    positions = ops.expand_dims(ops.arange(n), 1) + ops.expand_dims(
        ops.arange(width) - width + 1, 0
    )
    return ops.maximum(positions, 0), positions >= 0


def _gather_window(x, positions):
    """x [B, H, M, d] at positions [N, w] -> [B, H, N, w, d]."""
    n, width = positions.shape
    taken = ops.take(x, ops.reshape(positions, (-1,)), axis=2)
    return ops.reshape(taken, (-1, x.shape[1], n, width, x.shape[-1]))


def _largest_divisor_at_most(n, bound):
    bound = max(1, min(n, bound))
    return max(d for d in range(1, bound + 1) if n % d == 0)


def _place(x, axes, rank):
    """Insert size-1 axes into [B, H, *rest] so that `rest` lands on the sorted `axes`."""
    for position in range(2, rank):
        if position not in axes:
            x = ops.expand_dims(x, position)
    return x


def _split_axis(x, axis, outer, inner):
    shape = list(ops.shape(x))
    return ops.reshape(x, shape[:axis] + [outer, inner] + shape[axis + 1 :])


def _first(u):
    """u, or u^1 of the trilinear form's list [u^1, ..., u^k]."""
    return u[0] if isinstance(u, (list, tuple)) else u


class _PerHeadInitializer:
    """Initialises each head's B: H^(x)k -> H as its own [d, ..., d] tensor, so that fan-based
    initialisers (the original used Glorot-uniform on B) see one head's fans, each head from its
    own copy of the initializer (one copy would give every head the same B)."""

    def __init__(self, initializer):
        self.initializer = initializer

    def __call__(self, shape, dtype=None):
        heads = [_utils.fresh_initializer(self.initializer) for _ in range(shape[0])]
        return ops.stack([initializer(shape[1:], dtype=dtype) for initializer in heads])


@keras.saving.register_keras_serializable(package="keras_simplicial")
class SimplicialAttention(WeightOptionsLayer):
    r"""Multi-head 2-simplicial attention (Section 2.2, eqs. scalar_triple and Bformula).

    From the queries' sequence $e_i$ ($i \le N$) and the keys' / values' sequence $f_j$
    ($j \le M$), each head extracts $p_i = W^P e_i$, $l^1_j = W^{L_1} f_j$, $l^2_j = W^{L_2} f_j$,
    $u_j = W^U f_j$ (eq. querykeyvalue_simp) and computes (eq. Bformula)

    $$v'_i = \sum_{j,k} \operatorname{softmax}_{(j,k)}\big(\lambda\,\langle p_i, l^1_j, l^2_k
    \rangle\big)\; B(u_j \otimes u_k)$$

    with the unsigned scalar triple product $\langle a, b, c \rangle$ of eq. (scalar_triple)
    as logit, times $\lambda$ = `logit_scale`, and a learned $B: H \otimes H \to H$ per head.
    Heads are concatenated: the output has width `num_heads * value_dim`. With `order=k` the keys
    are k-tuples $(j_1, \ldots, j_k)$, the logit is the (k+1)-fold unsigned scalar product
    $\langle p_i, l^1_{j_1}, \ldots, l^k_{j_k} \rangle$ (Definition A.8) and the value is
    $B(u_{j_1} \otimes \cdots \otimes u_{j_k})$ with $B: H^{\otimes k} \to H$.

    `form="trilinear"` replaces both the logit and the value by the form of Roy et al. ("Fast and
    Simplex: 2-Simplicial Attention in Triton", 2025, their trilinear 2-simplicial attention):
    the logit is the trilinear form $\sum_d p_{i,d}\, l^1_{j,d}\, l^2_{k,d}$ and the value of a
    pair is the elementwise product $u^1_j \odot u^2_k$ of two value projections
    $u^1 = W^{U_1} f$, $u^2 = W^{U_2} f$, with no B:

    $$v'_i = \sum_{j,k} \operatorname{softmax}_{(j,k)}\Big(\lambda \sum_d p_{i,d}\, l^1_{j,d}\,
    l^2_{k,d}\Big)\; u^1_j \odot u^2_k .$$

    With `order=k` the logit is the (k+1)-linear form $\sum_d p_{i,d} \prod_a l^a_{j_a,d}$ and
    the value $u^1_{j_1} \odot \cdots \odot u^k_{j_k}$ (k value projections). Its logits are signed
    and depend on the coordinates (a rotation of all vectors changes them), whereas the unsigned
    scalar product depends only on their Gram matrix; the paper's form stays the default.

    Cost per head: the logits come from Gram entries (p.l: N x M, l.l: M x M, norms), so no
    [N, M, M, d] tensor is formed; $B(u_j \otimes u_k)$ is computed once per key pair
    ($O(M d^3 + M^2 d^2)$) and the output is a matmul [N, M^2] x [M^2, d]. Time
    $O(N M^2 d + M d^3 + M^2 d^2)$, memory $O(N M^2)$. The trilinear form's logits are
    $(p_i \odot l^1_j) \cdot l^2_k$, a matmul [N M, d] x [d, M], and its values
    $u^1_j \odot u^2_k$ cost $M^2 d$: time $O(N M^2 d)$, memory $O(N M^2 + N M d)$.
    Above a size threshold (`tile_size="auto"`) key tuples are processed in tiles over j_1 with an
    online softmax (as flash attention tiles keys): memory O(N M^(k-1)) instead of O(N M^k).

    Args:
        num_heads: number of 2-simplicial (query) heads.
        key_dim: size of each head's query p and keys l^1..l^k (the paper's agent: 48).
        num_key_value_heads: number of key/value heads, each shared by `num_heads /
            num_key_value_heads` query heads, as in `keras.layers.GroupedQueryAttention` (Roy et
            al. train with one key/value head per 64 query heads); None (default): `num_heads`, one
            key/value head per query head. It must divide `num_heads`. The keys l^1..l^k and the
            values u are projected once per key/value head (fewer parameters, smaller projections
            and cache) and then repeated to the query heads: the result equals that of a layer with
            `num_heads` key/value heads whose projections repeat each group's; the attention
            itself, and B (one per query head), are computed per query head.
        value_dim: size of each head's values u; defaults to `key_dim`.
        order: k, the number of keys per tuple (2 = the paper's 2-simplicial attention).
        dropout: dropout rate on the attention probabilities.
        use_bias: whether the p, l, u projections have biases (the original had none).
        epsilon: added under the square root of the scalar product, so that gradients stay finite
            at pairwise orthogonal or zero vectors (unused by the trilinear form).
        logit_scale: factor on the logits. "auto" (default): key_dim^(-order/2), 1/48 for the
            paper's head, which keeps the joint softmax over key tuples out of saturation at
            initialisation, as 1/sqrt(key_dim) does in `MultiHeadAttention`; 1/sqrt(key_dim) for
            the trilinear form. `None` (or 1.0): the paper's unscaled logits, as in the original
            code; with 48-wide projections of layer-normed entities they are of order 10^2 and
            put > 0.99 of every query's probability on one key pair from the first step, so the
            query and key projections get almost no gradient (docs/benchmarks.md, "2-simplicial
            attention at initialisation"). A float: that factor.
        tile_size: "auto" (tiled above a size threshold), None (never tile) or a positive integer
            (always tile, with at most this many j_1 per tile). The tiled path is used only when
            neither attention scores nor training-time dropout are requested.
        form: "scalar_product" (default): the paper's unsigned scalar product as logit and
            B(u_{j_1} (x) ... (x) u_{j_k}) as value. "trilinear": the (k+1)-linear form as logit
            and u^1_{j_1} (.) ... (.) u^k_{j_k} as value (Roy et al.), k value projections, no B.
        window: None (every key tuple) or (w1, w2), order 2 only: query i attends to the pairs
            (j, k) with i - w1 < j <= i and i - w2 < k <= i (Roy et al.'s sliding windows, causal
            by construction), for a sequence attending to itself (N = M). Time O(N w1 w2 d) (plus
            O(N w1 d^2 + N d^3) for B), memory O(N (w1 w2 + (w1 + w2) d + d^2)): no [N, M, M]
            tensor. It does not take an `attention_mask`; a `padding_mask` it does.
        fused: None (default): `keras.ops` on every backend. "pallas" (JAX backend, with
            `window`): the windowed path as Pallas kernels, forward and backward
            (`keras_simplicial/_pallas.py`). "triton" (PyTorch backend, with `window`): the same
            as Triton kernels, forward and backward (`keras_simplicial/_triton.py`; Triton from
            the [triton] extra; on a CPU only in Triton's interpreter, TRITON_INTERPRET=1 set
            before Python starts). Calls with a `padding_mask`, that ask for scores or train
            with dropout take the `keras.ops` path. Both are tested in their interpreters on a
            CPU only; never compiled or timed on a GPU (`benchmarks/fused_kernel_cost.py`).
        **kwargs: `kernel_initializer` (of the projections and, per head, of B; default
            Glorot-uniform), `bias_initializer`, `kernel_regularizer` and `kernel_constraint`
            (both also on B), `bias_regularizer`, `bias_constraint`, as in
            `keras.layers.MultiHeadAttention`; `seed`, of the dropout; and the arguments of
            `keras.layers.Layer`.

    Call arguments:
        query: [B, N, Dq], source of p.
        value: [B, M, Dv], source of u (u^1..u^k for the trilinear form).
        key: [B, M, Dk], source of l^1..l^k; defaults to `value`.
        attention_mask: boolean, broadcastable to [B, N, M, M] ([B, N] + [M] * order); True = may
            attend. Masked probabilities are exactly 0; a query with no allowed tuple outputs 0.
        return_attention_scores: also return the probabilities [B, num_heads, N, M, M] (M
            repeated `order` times); with
            `window`, [B, num_heads, N, w1, w2], entry (a, b) for the pair
            (i - w1 + 1 + a, i - w2 + 1 + b) (w clipped to N).
        training: whether dropout is active.
        use_causal_mask: query i attends only to tuples with every j_a <= i (positions from 0 in
            both sequences), as in `keras.layers.MultiHeadAttention`; combined with
            `attention_mask`. It is applied as one [N, M] condition per key axis inside the
            softmax (and per tile on the tiled path), never as an [N, M, ..., M] mask.
        padding_mask: boolean [B, M], True at the real positions of the keys' sequence (False
            at padding, on either side): a tuple is attended to only if every one of its keys is
            real. It works on every path, `window` included (the fused kernel then falls back
            to `keras.ops`), but a cached call, which refuses it; it combines with
            `attention_mask` and `use_causal_mask` and, like the causal condition, is applied
            once per key axis. A query with no allowed tuple (a padding position of a
            left-padded sequence, under a causal mask or a window) outputs exactly 0, never NaN.
        cache: a decoding cache (`initial_cache`, or the one a previous cached call returned):
            `query` and `value` (the same new positions of a sequence attending to itself) are
            then positions `cache_update_index`.. of it; their keys and values are written into
            the cache and each attends to the tuples of cached positions up to itself (with
            `window`, within the windows: the cache is a ring buffer of max(w1, w2) positions, one
            new position a call). The call returns (outputs, new cache), equal to the full
            causal (or windowed) pass at those positions, as KerasHub's
            `CachedMultiHeadAttention`.
        cache_update_index: the position of the first new query (an integer or scalar tensor).

    Returns:
        [B, N, num_heads * value_dim], and the scores if requested.
    """

    def __init__(
        self,
        num_heads=1,
        key_dim=48,
        value_dim=None,
        order=2,
        dropout=0.0,
        use_bias=False,
        epsilon=DEFAULT_EPSILON,
        logit_scale="auto",
        tile_size="auto",
        form="scalar_product",
        window=None,
        fused=None,
        num_key_value_heads=None,
        **kwargs,
    ):
        super().__init__(dropout=dropout, use_bias=use_bias, **kwargs)
        self.num_heads = _utils.check_positive_int("num_heads", num_heads)
        self.num_key_value_heads = _utils.check_positive_int(
            "num_key_value_heads", num_key_value_heads, allow_none=True
        )
        self._kv_heads = self.num_key_value_heads or self.num_heads
        if self.num_heads % self._kv_heads:
            raise ValueError(
                "`num_heads` must be a multiple of `num_key_value_heads`, received "
                f"num_heads={self.num_heads} and num_key_value_heads={self.num_key_value_heads}."
            )
        self.key_dim = _utils.check_positive_int("key_dim", key_dim)
        self.value_dim = _utils.check_positive_int("value_dim", value_dim, allow_none=True)
        order = _utils.check_positive_int("order", order)
        if order < 2:
            raise ValueError(f"`order` must be at least 2, received order={order}.")
        self.order = order
        self.epsilon = _utils.check_non_negative("epsilon", epsilon)
        self.form = check_form(form)
        self.logit_scale = logit_scale
        self._logit_scale = resolve_logit_scale(logit_scale, self.key_dim, order, form)
        if tile_size not in (None, "auto"):
            try:
                _utils.check_positive_int("tile_size", tile_size)
            except ValueError:
                raise ValueError(
                    '`tile_size` must be "auto", None or a positive integer, received '
                    f"tile_size={tile_size!r}."
                ) from None
        self.tile_size = tile_size
        self.window = check_window(window, order)
        self.fused = check_fused(fused, self.window)
        self._value_dim = self.value_dim or self.key_dim
        self._dropout_layer = keras.layers.Dropout(self.dropout, seed=self.seed)

    # ----------------------------------------------------------------------------------- weights
    def build(self, query_shape, value_shape, key_shape=None):
        key_shape = value_shape if key_shape is None else key_shape
        for name, shape in (("query", query_shape), ("value", value_shape), ("key", key_shape)):
            if shape[-1] is None:
                raise ValueError(f"The last dimension of `{name}` must be known, got {shape}.")
        if tuple(key_shape[1:-1]) != tuple(value_shape[1:-1]):
            raise ValueError(
                "`key` and `value` must have the same sequence shape, received "
                f"key_shape={key_shape} and value_shape={value_shape}."
            )
        width = self.num_heads * self.key_dim
        self.query_kernel = self.add_kernel("query_kernel", (query_shape[-1], width))
        self.query_bias = self.add_bias("query_bias", width)
        key_width = self._kv_heads * self.key_dim
        self.key_kernels = [
            self.add_kernel(f"key{a + 1}_kernel", (key_shape[-1], key_width))
            for a in range(self.order)
        ]
        self.key_biases = [self.add_bias(f"key{a + 1}_bias", key_width) for a in range(self.order)]
        value_width = self._kv_heads * self._value_dim
        # One value projection u (with B), or u^1..u^k for the trilinear form.
        names = (
            ["value"]
            if self.form == "scalar_product"
            else [f"value{a + 1}" for a in range(self.order)]
        )
        self.value_kernels = [
            self.add_kernel(f"{name}_kernel", (value_shape[-1], value_width)) for name in names
        ]
        self.value_biases = [self.add_bias(f"{name}_bias", value_width) for name in names]
        # u's kernel and bias (u^1's for the trilinear form), as the virtual entities' own value.
        self.value_kernel, self.value_bias = self.value_kernels[0], self.value_biases[0]
        if self.form == "trilinear":
            self.B = None
            return
        d = self._value_dim
        self.B = self.add_kernel(
            "B",
            (self.num_heads,) + (d,) * (self.order + 1),
            initializer=_PerHeadInitializer(self.kernel_initializer),
        )

    # ------------------------------------------------------------------------------- projections
    def project_query(self, query):
        """p: [B, H, N, key_dim]."""
        p = ops.matmul(query, self.query_kernel)
        p = p if self.query_bias is None else p + self.query_bias
        return _utils.split_heads(p, self.num_heads)

    def project_keys(self, key):
        """[l^1, ..., l^k], each [B, H, M, key_dim], from one fused matmul."""
        ls = ops.matmul(key, ops.concatenate(self.key_kernels, axis=1))
        if self.use_bias:
            ls = ls + ops.concatenate(self.key_biases, axis=0)
        return [self._key_value_heads(l) for l in ops.split(ls, self.order, axis=-1)]

    def _key_value_heads(self, x):
        """[B, M, G d] -> [B, H, M, d]: split into the G = `num_key_value_heads` heads, then each
        repeated for the H / G query heads of its group (query head h reads key/value head
        h // (H / G), as in `keras.layers.GroupedQueryAttention`)."""
        x = _utils.split_heads(x, self._kv_heads)
        group = self.num_heads // self._kv_heads
        return x if group == 1 else ops.repeat(x, group, axis=1)

    def project_value(self, value):
        """u: [B, H, M, value_dim]; for the trilinear form the list [u^1, ..., u^k]."""
        if len(self.value_kernels) == 1:
            u = ops.matmul(value, self.value_kernel)
            u = u if self.value_bias is None else u + self.value_bias
        else:
            u = ops.matmul(value, ops.concatenate(self.value_kernels, axis=1))
            if self.use_bias:
                u = u + ops.concatenate(self.value_biases, axis=0)
        return self._split_values(u)

    def _split_values(self, u):
        """[B, M, (k) G value_dim] -> u [B, H, M, value_dim], or [u^1..u^k] (trilinear), the G
        key/value heads repeated to the H query heads."""
        if self.form == "scalar_product":
            return self._key_value_heads(u)
        return [self._key_value_heads(v) for v in ops.split(u, self.order, axis=-1)]

    def project_keys_and_value(self, key_value):
        """([l^1, ..., l^k], u) from one sequence that is both key and value: one matmul with
        the kernels of l^1..l^k and u (u^1..u^k) side by side, [B, M, D] x [D, H (k key_dim +
        value_dim)]."""
        return self._split_cache_entries(self._cache_entries(key_value))

    def _cache_entries(self, key_value):
        """The keys l^1..l^k and the values (u, or u^1..u^k) of a sequence that is both key and
        value, before the heads are split: a list of [B, M, G d] (G key/value heads), what a
        decoding cache holds (`initial_cache`)."""
        kernels = list(self.key_kernels) + list(self.value_kernels)
        projected = ops.matmul(key_value, ops.concatenate(kernels, axis=1))
        if self.use_bias:
            biases = list(self.key_biases) + list(self.value_biases)
            projected = projected + ops.concatenate(biases, 0)
        key_width = self._kv_heads * self.key_dim
        value_width = self._kv_heads * self._value_dim
        widths = [key_width] * self.order + [value_width] * len(self.value_kernels)
        return ops.split(projected, list(itertools.accumulate(widths))[:-1], axis=-1)

    def _split_cache_entries(self, entries):
        """([l^1, ..., l^k], u or [u^1, ..., u^k]) as [B, H, M, d] from `_cache_entries`."""
        ls = [self._key_value_heads(l) for l in entries[: self.order]]
        values = [self._key_value_heads(v) for v in entries[self.order :]]
        return ls, (values[0] if self.form == "scalar_product" else values)

    # ------------------------------------------------------------------------------ decoding
    def cache_length(self, max_length):
        """The positions a decoding cache holds: `max_length`, or with `window` the larger
        window (a ring buffer: a step's cost does not grow with the sequence)."""
        max_length = _utils.check_positive_int("max_length", max_length)
        return max(self.window) if self.window is not None else max_length

    def initial_cache(self, batch_size, max_length, dtype=None):
        """An empty decoding cache for sequences of up to `max_length` positions: a tuple of
        the keys l^1..l^k and the values (u, or u^1..u^k), each [batch, S, G d] (G key/value
        heads, S = `cache_length(max_length)`), all zeros. Pass it to `call(..., cache=...,
        cache_update_index=...)` with the layer built."""
        length = self.cache_length(max_length)
        dtype = dtype or self.compute_dtype
        widths = [self._kv_heads * self.key_dim] * self.order + [
            self._kv_heads * self._value_dim
        ] * (1 if self.form == "scalar_product" else self.order)
        return tuple(ops.zeros((batch_size, length, w), dtype=dtype) for w in widths)

    def _call_cached(self, query, value, cache, index, training):
        """Decoding: `query` and `value` are the T new positions index..index+T-1 of a sequence
        attending to itself; their keys and values are written into `cache` (at those positions,
        or with `window` at slot index mod S, T = 1), and each new position attends to the key
        tuples up to it (within the windows): the full causal pass at those positions."""
        steps = _utils.dim(query, 1)
        if self.window is not None and steps != 1:
            raise ValueError(
                "With `window`, a cached call takes one new position at a time (the cache is a "
                f"ring buffer of the window), received {steps} positions."
            )
        entries = self._cache_entries(value)
        cache = tuple(_utils.write_cache(c, e, index, ring=self.window is not None)
                      for c, e in zip(cache, entries))  # fmt: skip
        ls, u = self._split_cache_entries(cache)
        keys = _utils.cache_positions(_utils.dim(cache[0], 1), index, self.window is not None)
        queries = index + ops.arange(steps)
        widths = self.window or (None,) * self.order
        masks = self._key_axis_masks([_utils.key_condition(queries, keys, w) for w in widths])
        outputs, _ = self._attend_tuples(self.project_query(query), ls, u, masks, False, training)
        return _utils.merge_heads(outputs), cache

    # -------------------------------------------------------------------------------- attention
    def tensor_values(self, u):
        """B(u_{j_1} (x) ... (x) u_{j_k}) for all key tuples: [B, H, M^k, value_dim]; for the
        trilinear form u^1_{j_1} (.) ... (.) u^k_{j_k} (elementwise products).

        B's input slots are contracted one at a time, first u_{j_1} against B ([M, d] x [d, d^k]),
        then each further u_{j_a}, so no [M, M, d, d] tensor ever appears.
        """
        return self._contract_remaining(self._contract_first(u), u)

    def _contract_first(self, u):
        """u_{j_1} against B's first slot: [B, H, M, d^(k-1) * d], cost O(M d^(k+1)) per head
        (the trilinear form: u^1 itself, [B, H, M, d]).

        One plain [B*M, d] x [d, d^k] matmul per head: XLA on CPU runs it several times faster
        than the equivalent batched einsum over heads.
        """
        if self.form == "trilinear":
            return u[0]
        d = self._value_dim
        b = ops.reshape(ops.cast(self.B, u.dtype), (self.num_heads, d, d**self.order))
        rows = _utils.dim(u, 2)
        per_head = [
            ops.reshape(ops.matmul(ops.reshape(u[:, h], (-1, d)), b[h]), (-1, rows, d**self.order))
            for h in range(self.num_heads)
        ]
        return ops.stack(per_head, axis=1)

    def _contract_remaining(self, t, u):
        """t: [B, H, J, d^(s) * d] with the next slot leading -> [B, H, J * M^(k-1), d]; for the
        trilinear form t: [B, H, J, d] times u^2..u^k elementwise, over all their tuples."""
        d = self._value_dim
        if self.form == "trilinear":
            for v in u[1:]:
                rows = _utils.dim(t, 2)
                t = ops.expand_dims(t, 3) * ops.expand_dims(v, 2)
                t = ops.reshape(t, (-1, self.num_heads, rows * _utils.dim(v, 2), d))
            return t
        for remaining in range(self.order - 1, 0, -1):
            rows = _utils.dim(t, 2)
            t = ops.reshape(t, (-1, self.num_heads, rows, d, d**remaining))
            t = ops.einsum("bhjdr,bhmd->bhjmr", t, u)
            t = ops.reshape(t, (-1, self.num_heads, rows * _utils.dim(u, 2), d**remaining))
        return t

    def _gram(self, p, ls):
        """Gram entries of (p, l^1..l^k) in the softmax dtype, keyed by vector index pairs.

        p . l^a for all a comes from one batched matmul of p [B, H, N, d] against the stacked keys
        [B, H, k M, d]; the key-key entries l^a . l^b ([B, H, M, M], O(k^2 M^2 d)) and the norms
        are elementwise products summed over d, which XLA fuses, instead of one small batched
        matmul each (with M = 2 those cost more in per-call overhead than in arithmetic).
        """
        dtype = _utils.softmax_dtype(self.compute_dtype)
        p = ops.cast(p, dtype)
        ls = [ops.cast(l, dtype) for l in ls]
        m = _utils.dim(ls[0], 2)
        p_dot_l = ops.einsum("bhnd,bhmd->bhnm", p, ops.concatenate(ls, axis=2))
        entries = {(0, 0): ops.sum(ops.square(p), axis=-1)}
        for a in range(self.order):
            entries[(0, a + 1)] = p_dot_l[..., a * m : (a + 1) * m]
            entries[(a + 1, a + 1)] = ops.sum(ops.square(ls[a]), axis=-1)
            for b in range(a + 1, self.order):
                products = ops.expand_dims(ls[a], 3) * ops.expand_dims(ls[b], 2)
                entries[(a + 1, b + 1)] = ops.sum(products, axis=-1)
        return entries

    def _logit_terms(self, p, ls):
        """What the logits are computed from, in the softmax dtype: the Gram entries (`_gram`),
        or for the trilinear form p and l^1..l^k themselves, keyed 0, 1, ..., k."""
        if self.form == "scalar_product":
            return self._gram(p, ls)
        dtype = _utils.softmax_dtype(self.compute_dtype)
        return {a: ops.cast(x, dtype) for a, x in enumerate([p] + list(ls))}

    def _j1_axis(self, key):
        """The axis of j_1 in the logit term `key`, or None if the term does not depend on j_1."""
        if self.form == "trilinear":
            return 2 if key == 1 else None  # l^1: [B, H, M, d]
        a, b = key  # (1, b): [B, H, M, M] or [B, H, M]; (0, 1): [B, H, N, M]
        return 2 if a == 1 else (3 if b == 1 else None)

    def _logits(self, entries):
        """<p_i, l^1_{j_1}, ..., l^k_{j_k}>: [B, H, N, M, ..., M] (eq. scalar_triple / defn)."""
        if self.form == "trilinear":
            return self._trilinear_logits(entries)
        rank = self.order + 3

        def gram(a, b):
            a, b = min(a, b), max(a, b)
            axes = (2 + a,) if a == b else (2 + a, 2 + b)
            return _place(entries[(a, b)], axes, rank)

        logits = safe_sqrt(scalar_product_square_from_gram(gram, self.order + 1), self.epsilon)
        return logits if self._logit_scale == 1.0 else logits * self._logit_scale

    def _trilinear_logits(self, terms):
        """sum_d p_{i,d} l^1_{j_1,d} ... l^k_{j_k,d}: [B, H, N, M, ..., M] (Roy et al.).

        (p_i (.) l^1_{j_1} (.) ... (.) l^(k-1)_{j_(k-1)}) . l^k_{j_k}: elementwise products, then
        one batched matmul against l^k.
        """
        t = terms[0]  # [B, H, N, d]
        for a in range(1, self.order):
            l = terms[a]
            for _ in range(a):  # [B, H, M, d] -> [B, H, 1, ..., 1, M, d]
                l = ops.expand_dims(l, 2)
            t = ops.expand_dims(t, -2) * l
        axes = "ijklmnoqrs"[: self.order - 1]
        logits = ops.einsum(f"bhp{axes}d,bhzd->bhp{axes}z", t, terms[self.order])
        return logits if self._logit_scale == 1.0 else logits * self._logit_scale

    def _use_tiles(self, p, u, return_attention_scores, training):
        if self.tile_size is None or return_attention_scores:
            return None
        if self.dropout and training:
            return None
        n, m = p.shape[2], _first(u).shape[2]
        if m is None or (self.tile_size == "auto" and n is None):
            return None
        if self.tile_size == "auto":
            if n * m**self.order <= TILE_THRESHOLD:
                return None
            return _largest_divisor_at_most(m, TILE_BUDGET // (n * m ** (self.order - 1)))
        return _largest_divisor_at_most(m, self.tile_size)

    def attend(
        self,
        p,
        ls,
        u,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        padding_mask=None,
    ):
        """Attention from projected p [B,H,N,dk], ls (k x [B,H,M,dk]), u [B,H,M,dv] (for the
        trilinear form the list u^1..u^k, k x [B,H,M,dv]).

        Returns ([B, H, N, dv], scores [B, H, N, M, ..., M] (with `window`: [B, H, N, w1, w2])
        or None).
        """
        masks = []
        padding = None
        if padding_mask is not None:
            if len(padding_mask.shape) != 2:
                raise ValueError(
                    "`padding_mask` must have shape [B, M] (True = a real key position), "
                    f"received shape {tuple(padding_mask.shape)}."
                )
            padding = ops.cast(padding_mask, "bool")
        if attention_mask is not None:
            if self.window is not None:
                raise ValueError(
                    "`attention_mask` cannot be combined with `window` (the windows already "
                    "choose each query's key pairs); pass attention_mask=None, and a "
                    "`padding_mask` [B, N] for sequences of different lengths."
                )
            if len(attention_mask.shape) != self.order + 2:
                raise ValueError(
                    f"`attention_mask` must have rank {self.order + 2} ([B, N] + [M] * order, "
                    f"size-1 axes broadcast), received shape {tuple(attention_mask.shape)}."
                )
            masks.append(ops.expand_dims(ops.cast(attention_mask, "bool"), axis=1))
        if self.window is not None:
            fusable = padding is None and not return_attention_scores
            if self.fused and fusable and not (self.dropout and training):
                return self._attend_fused(p, ls, u), None
            return self._attend_windowed(
                p, ls, u, return_attention_scores, training, padding=padding
            )
        if padding is not None:
            # One [B, M] condition per key axis, as the causal one: never [B, N, M^k].
            rank = self.order + 3
            masks.extend(
                _place(ops.expand_dims(padding, 1), (3 + a,), rank) for a in range(self.order)
            )
        if use_causal_mask:
            # One [N, M] condition per key axis (j_a <= i), applied one by one: never [N, M^k].
            causal = _utils.causal_condition(_utils.dim(p, 2), _utils.dim(_first(u), 2))
            masks.extend(self._key_axis_masks([causal] * self.order))
        return self._attend_tuples(p, ls, u, masks, return_attention_scores, training)

    def _key_axis_masks(self, conditions):
        """One [N, M] boolean condition per key axis as masks of the logits [B, H, N, M, ..., M]."""
        rank = self.order + 3
        return [
            _place(ops.expand_dims(ops.expand_dims(condition, 0), 0), (2, 3 + a), rank)
            for a, condition in enumerate(conditions)
        ]

    def _attend_tuples(self, p, ls, u, masks, return_attention_scores, training):
        """Every key tuple, directly or in tiles, under `masks`: ([B, H, N, dv], scores or
        None)."""
        tile = self._use_tiles(p, u, return_attention_scores, training)
        if tile is not None:
            return self._attend_tiled(p, ls, u, masks, tile), None
        logits = self._logits(self._logit_terms(p, ls))
        key_axes = tuple(range(3, 3 + self.order))
        scores = ops.cast(_utils.masked_softmax(logits, masks, key_axes), self.compute_dtype)
        weights = self._dropout_layer(scores, training=training) if self.dropout else scores
        num_tuples = _utils.dim(_first(u), 2) ** self.order
        weights = ops.reshape(weights, (-1, self.num_heads, _utils.dim(p, 2), num_tuples))
        outputs = ops.matmul(weights, self.tensor_values(u))
        return outputs, (scores if return_attention_scores else None)

    def _attend_fused(self, p, ls, u):
        """The windowed path as fused kernels, forward and backward: Pallas on JAX
        (`keras_simplicial._pallas`), Triton on PyTorch (`keras_simplicial._triton`), each
        imported only here."""
        if self.fused == "pallas":
            from keras_simplicial import _pallas as kernels
        else:
            from keras_simplicial import _triton as kernels

        scalar = self.form == "scalar_product"
        u1, u2 = (u, u) if scalar else u
        b = ops.convert_to_tensor(self.B) if scalar else ops.zeros((1, 1, 1, 1), u1.dtype)
        return kernels.windowed_attention(
            p,
            *ls,
            u1,
            u2,
            b,
            window=self.window,
            form=self.form,
            scale=self._logit_scale,
            epsilon=self.epsilon,
        )

    def _attend_windowed(self, p, ls, u, return_attention_scores, training, padding=None):
        """Query i attends to the pairs (j, k) with i - w1 < j <= i and i - w2 < k <= i (and,
        with `padding` [B, N], both j and k real positions).

        The w1 keys l^1 (values u, u^1) and the w2 keys l^2 (u, u^2) before each query are
        gathered ([B, H, N, w, d]); logits [B, H, N, w1, w2] come from the per-query Gram entries
        (or the trilinear form), and the output from sum_{j,k} w_ijk u_j (x) u_k ([B, H, N, d, d])
        contracted with B once per query, or sum_j u^1_j (.) sum_k w_ijk u^2_k. Time
        O(N w1 w2 d + N w1 d^2 + N d^3) per head (trilinear: O(N w1 w2 d)), memory
        O(N (w1 w2 + (w1 + w2) d + d^2)).
        """
        n, m = p.shape[2], _first(u).shape[2]
        if n is None or m is None or n != m:
            raise ValueError(
                "`window` needs query and key sequences of one known length (a sequence "
                f"attending to itself), received lengths {n} and {m}."
            )
        widths = [min(w, n) for w in self.window]  # positions before 0 are masked anyway
        positions, valid = zip(*(_window_positions(n, w) for w in widths))
        dtype = _utils.softmax_dtype(self.compute_dtype)
        p = ops.cast(p, dtype)
        l1, l2 = (_gather_window(ops.cast(l, dtype), at) for l, at in zip(ls, positions))
        if self.form == "trilinear":
            logits = ops.einsum("bhnjd,bhnkd->bhnjk", ops.expand_dims(p, 3) * l1, l2)
        else:
            entries = {
                (0, 0): ops.sum(ops.square(p), axis=-1),
                (0, 1): ops.einsum("bhnd,bhnjd->bhnj", p, l1),
                (0, 2): ops.einsum("bhnd,bhnkd->bhnk", p, l2),
                (1, 1): ops.sum(ops.square(l1), axis=-1),
                (2, 2): ops.sum(ops.square(l2), axis=-1),
                (1, 2): ops.einsum("bhnjd,bhnkd->bhnjk", l1, l2),
            }
            axes = {0: (), 1: (3,), 2: (4,)}

            def gram(a, b):
                a, b = min(a, b), max(a, b)
                return _place(entries[(a, b)], (2,) + tuple(sorted(set(axes[a] + axes[b]))), 5)

            logits = safe_sqrt(scalar_product_square_from_gram(gram, 3), self.epsilon)
        logits = logits if self._logit_scale == 1.0 else logits * self._logit_scale
        masks = [
            _place(ops.expand_dims(ops.expand_dims(v, 0), 0), (2, axis), 5)
            for v, axis in zip(valid, (3, 4))
        ]
        if padding is not None:  # each axis's window of the padding mask: [B, 1, N, w]
            for at, axis in zip(positions, (3, 4)):
                taken = ops.take(padding, ops.reshape(at, (-1,)), axis=1)
                taken = ops.reshape(taken, (-1, 1, n, at.shape[1]))
                masks.append(_place(taken, (2, axis), 5))
        scores = ops.cast(_utils.masked_softmax(logits, masks, (3, 4)), self.compute_dtype)
        weights = self._dropout_layer(scores, training=training) if self.dropout else scores
        u1, u2 = (u, u) if self.form == "scalar_product" else u
        u1, u2 = (_gather_window(v, at) for v, at in zip((u1, u2), positions))
        inner = ops.einsum("bhnjk,bhnkd->bhnjd", weights, u2)  # sum_k w_ijk u_k
        if self.form == "trilinear":
            outputs = ops.sum(u1 * inner, axis=3)
        else:
            pairs = ops.einsum("bhnjd,bhnje->bhnde", u1, inner)  # sum_jk w_ijk u_j (x) u_k
            outputs = ops.einsum("bhnde,hdef->bhnf", pairs, ops.cast(self.B, pairs.dtype))
        return outputs, (scores if return_attention_scores else None)

    def _attend_tiled(self, p, ls, u, masks, tile):
        """Online softmax over tiles of `tile` values of j_1 (all j_2..j_k at once)."""
        m = _first(u).shape[2]
        num_tiles = m // tile
        dtype = _utils.softmax_dtype(self.compute_dtype)
        entries = self._logit_terms(p, ls)
        # Everything that depends on j_1 gets a tile axis where j_1 was, taken one tile per step.
        tiled = {}
        for key, entry in entries.items():
            axis = self._j1_axis(key)
            if axis is not None:
                tiled[key] = (axis, _split_axis(entry, axis, num_tiles, tile))
        first = _split_axis(self._contract_first(u), 2, num_tiles, tile)
        # A mask with a j_1 axis is split into tiles, one with a size-1 j_1 axis used as it is.
        masks = [(mask.shape[3] != 1, mask) for mask in masks]
        masks = [(t, _split_axis(x, 3, num_tiles, tile) if t else x) for t, x in masks]
        n = _utils.dim(p, 2)
        key_axes = tuple(range(3, 3 + self.order))

        def step(i, state):
            running_max, total, accumulator = state
            tile_entries = dict(entries)
            for key, (axis, entry) in tiled.items():
                tile_entries[key] = ops.take(entry, i, axis=axis)
            logits = self._logits(tile_entries)
            tile_masks = [ops.take(x, i, axis=3) if t else x for t, x in masks]
            for tile_mask in tile_masks:
                logits = ops.where(tile_mask, logits, _utils.MASK_LOGIT)
            new_max = ops.maximum(running_max, ops.max(logits, axis=key_axes))
            new_max = ops.stop_gradient(new_max)
            weights = ops.exp(logits - _place(new_max, (2,), self.order + 3))
            for tile_mask in tile_masks:
                weights = ops.where(tile_mask, weights, 0.0)
            rescale = ops.exp(running_max - new_max)
            total = total * rescale + ops.sum(weights, axis=key_axes)
            values = self._contract_remaining(ops.take(first, i, axis=2), u)
            tuples = tile * m ** (self.order - 1)
            weights = ops.cast(weights, _first(u).dtype)
            weights = ops.reshape(weights, (-1, self.num_heads, n, tuples))
            accumulator = accumulator * ops.expand_dims(rescale, -1) + ops.cast(
                ops.matmul(weights, values), dtype
            )
            return new_max, total, accumulator

        zeros = ops.zeros_like(ops.cast(p[..., 0], dtype))
        accumulator = ops.expand_dims(zeros, -1) + ops.zeros((self._value_dim,), dtype=dtype)
        initial = (zeros + _utils.MASK_LOGIT, zeros, accumulator)
        _, total, accumulator = ops.fori_loop(0, num_tiles, step, initial)
        outputs = accumulator / ops.expand_dims(ops.maximum(total, 1e-30), -1)
        return ops.cast(outputs, self.compute_dtype)

    def call(
        self,
        query,
        value,
        key=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        padding_mask=None,
        cache=None,
        cache_update_index=None,
    ):
        if cache is not None:
            _utils.check_cached_call(
                cache_update_index, key, value, attention_mask, return_attention_scores,
                padding_mask,
            )  # fmt: skip
            return self._call_cached(query, value, tuple(cache), cache_update_index, training)
        p = self.project_query(query)
        if key is None or key is value:
            ls, u = self.project_keys_and_value(value)
        else:
            ls, u = self.project_keys(key), self.project_value(value)
        outputs, scores = self.attend(
            p,
            ls,
            u,
            attention_mask,
            return_attention_scores,
            training=training,
            use_causal_mask=use_causal_mask,
            padding_mask=padding_mask,
        )
        outputs = _utils.merge_heads(outputs)
        return (outputs, scores) if return_attention_scores else outputs

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        return tuple(query_shape[:-1]) + (self.num_heads * self._value_dim,)

    def compute_output_spec(
        self,
        query,
        value,
        key=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        padding_mask=None,
        cache=None,
        cache_update_index=None,
    ):
        outputs = keras.KerasTensor(
            self.compute_output_shape(query.shape, value.shape), dtype=self.compute_dtype
        )
        if cache is not None:
            return outputs, tuple(keras.KerasTensor(c.shape, dtype=c.dtype) for c in cache)
        if not return_attention_scores:
            return outputs
        keys = self.window or (value.shape[1],) * self.order
        if self.window is not None and query.shape[1] is not None:
            keys = tuple(min(w, query.shape[1]) for w in keys)
        scores_shape = (query.shape[0], self.num_heads, query.shape[1]) + tuple(keys)
        return outputs, keras.KerasTensor(scores_shape, dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "key_dim": self.key_dim,
                "value_dim": self.value_dim,
                "order": self.order,
                "epsilon": self.epsilon,
                "logit_scale": self.logit_scale,
                "tile_size": self.tile_size,
                "form": self.form,
                "window": self.window,
                "fused": self.fused,
                "num_key_value_heads": self.num_key_value_heads,
            }
        )
        return config
