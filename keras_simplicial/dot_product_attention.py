"""1-simplicial (dot product) multi-head attention, as inside the paper's Transformer blocks."""

import math

import keras
from keras import ops

from keras_simplicial import _utils
from keras_simplicial._weight_options import WeightOptionsLayer


@keras.saving.register_keras_serializable(package="keras_simplicial")
class DotProductAttention(WeightOptionsLayer):
    """Multi-head 1-simplicial attention, no output projection (Section 2.1, eq. update_multhead).

    For each head u, with q_i = W^Q e_i, k_j = W^K e_j, v_j = W^V e_j (eq. E_weight_matrix),

        v'_{i,(u)} = sum_j softmax_j(q_{i,(u)} . k_{j,(u)} / sqrt(key_dim)) v_{j,(u)}

    and the heads are concatenated: the output has width `num_heads * value_dim`. This is the
    attention of the original agent code: no bias on q, k, v by default, logits scaled by
    1/sqrt(key_dim), no output projection. Unlike `keras.layers.MultiHeadAttention` the heads are
    therefore not mixed by a final dense layer; the block's feed-forward network does that.

    Args:
        num_heads: number of heads K.
        key_dim: size of each head's queries and keys.
        value_dim: size of each head's values; defaults to `key_dim`.
        dropout: dropout rate on the attention probabilities.
        use_bias: whether the q, k, v projections have biases.
        **kwargs: `kernel_initializer`, `bias_initializer`, `kernel_regularizer`,
            `bias_regularizer`, `kernel_constraint` and `bias_constraint`, as in
            `keras.layers.MultiHeadAttention`; `seed`, of the dropout; and the arguments of
            `keras.layers.Layer`.

    Call arguments:
        query: [B, N, Dq].
        value: [B, M, Dv].
        key: [B, M, Dk]; defaults to `value`.
        attention_mask: boolean, broadcastable to [B, N, M]; True = may attend. Masked
            probabilities are exactly 0.
        return_attention_scores: also return the probabilities [B, num_heads, N, M].
        training: whether dropout is active.
        use_causal_mask: query i attends only to keys j <= i (positions from 0 in both
            sequences), as in `keras.layers.MultiHeadAttention`; combined with `attention_mask`.
        cache: a decoding cache (`initial_cache`, or the one a previous cached call returned):
            `query` and `value` are then the new positions `cache_update_index`.. of a sequence
            attending to itself, written into the cache; the call returns (outputs, new cache),
            the full causal pass at those positions (as KerasHub's `CachedMultiHeadAttention`).
        cache_update_index: the position of the first new query.

    Returns:
        [B, N, num_heads * value_dim], and the scores if requested.
    """

    def __init__(
        self, num_heads=2, key_dim=32, value_dim=None, dropout=0.0, use_bias=False, **kwargs
    ):
        super().__init__(dropout=dropout, use_bias=use_bias, **kwargs)
        self.num_heads = _utils.check_positive_int("num_heads", num_heads)
        self.key_dim = _utils.check_positive_int("key_dim", key_dim)
        self.value_dim = _utils.check_positive_int("value_dim", value_dim, allow_none=True)
        self._value_dim = self.value_dim or self.key_dim
        self._dropout_layer = keras.layers.Dropout(self.dropout, seed=self.seed)

    def _projection(self, name, input_dim, width):
        return self.add_kernel(f"{name}_kernel", (input_dim, width)), self.add_bias(
            f"{name}_bias", width
        )

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
        qk_width = self.num_heads * self.key_dim
        self.query_kernel, self.query_bias = self._projection("query", query_shape[-1], qk_width)
        self.key_kernel, self.key_bias = self._projection("key", key_shape[-1], qk_width)
        self.value_kernel, self.value_bias = self._projection(
            "value", value_shape[-1], self.num_heads * self._value_dim
        )
        self._self_attention_ok = query_shape[-1] == key_shape[-1] == value_shape[-1]

    @staticmethod
    def _project(x, kernel, bias):
        y = ops.matmul(x, kernel)
        return y if bias is None else y + bias

    def project(self, query, key, value):
        """q, k, v as [B, H, length, d]; one fused matmul when query, key and value coincide."""
        if query is key and key is value and self._self_attention_ok:
            kernels = [self.query_kernel, self.key_kernel, self.value_kernel]
            qkv = ops.matmul(query, ops.concatenate(kernels, axis=1))
            if self.use_bias:
                qkv = qkv + ops.concatenate([self.query_bias, self.key_bias, self.value_bias], 0)
            qk_width = self.num_heads * self.key_dim
            q, k, v = ops.split(qkv, [qk_width, 2 * qk_width], axis=-1)
        else:
            q = self._project(query, self.query_kernel, self.query_bias)
            k = self._project(key, self.key_kernel, self.key_bias)
            v = self._project(value, self.value_kernel, self.value_bias)
        return (
            _utils.split_heads(q, self.num_heads),
            _utils.split_heads(k, self.num_heads),
            _utils.split_heads(v, self.num_heads),
        )

    def attend(self, q, k, v, attention_mask=None, training=None, use_causal_mask=False):
        """Scaled dot product attention on [B, H, length, d] tensors -> ([B, H, N, dv], scores)."""
        q = q * ops.cast(1.0 / math.sqrt(self.key_dim), q.dtype)
        logits = ops.einsum("bhnd,bhmd->bhnm", q, k)
        logits = ops.cast(logits, _utils.softmax_dtype(self.compute_dtype))
        masks = []
        if attention_mask is not None:
            masks.append(ops.expand_dims(ops.cast(attention_mask, "bool"), axis=1))
        if use_causal_mask:
            masks.append(_utils.causal_condition(_utils.dim(q, 2), _utils.dim(k, 2)))
        # A query with no key to attend to (a padding position) gets zeros, not a uniform mix.
        scores = ops.cast(_utils.masked_softmax(logits, masks, -1), self.compute_dtype)
        weights = self._dropout_layer(scores, training=training) if self.dropout else scores
        return ops.matmul(weights, v), scores

    def initial_cache(self, batch_size, max_length, dtype=None):
        """An empty decoding cache for sequences of up to `max_length` positions: (keys,
        values), [batch, max_length, num_heads * key_dim] and [..., num_heads * value_dim],
        zeros. Pass it to `call(..., cache=..., cache_update_index=...)`."""
        max_length = _utils.check_positive_int("max_length", max_length)
        dtype = dtype or self.compute_dtype
        return (
            ops.zeros((batch_size, max_length, self.num_heads * self.key_dim), dtype=dtype),
            ops.zeros((batch_size, max_length, self.num_heads * self._value_dim), dtype=dtype),
        )

    def _call_cached(self, query, value, cache, index, training):
        """The T new positions index..index+T-1 of a sequence attending to itself: their keys
        and values written into `cache`, each attending to the cached positions up to itself."""
        keys, values = (
            _utils.write_cache(c, self._project(value, kernel, bias), index)
            for c, kernel, bias in zip(
                cache,
                (self.key_kernel, self.value_kernel),
                (self.key_bias, self.value_bias),
            )
        )
        q = _utils.split_heads(
            self._project(query, self.query_kernel, self.query_bias), self.num_heads
        )
        positions = _utils.cache_positions(_utils.dim(keys, 1), index)
        condition = _utils.key_condition(index + ops.arange(_utils.dim(query, 1)), positions)
        outputs, _ = self.attend(
            q,
            _utils.split_heads(keys, self.num_heads),
            _utils.split_heads(values, self.num_heads),
            ops.expand_dims(condition, 0),
            training=training,
        )
        return _utils.merge_heads(outputs), (keys, values)

    def call(
        self,
        query,
        value,
        key=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        cache=None,
        cache_update_index=None,
    ):
        if cache is not None:
            _utils.check_cached_call(
                cache_update_index, key, value, attention_mask, return_attention_scores
            )
            return self._call_cached(query, value, tuple(cache), cache_update_index, training)
        key = value if key is None else key
        q, k, v = self.project(query, key, value)
        outputs, scores = self.attend(
            q, k, v, attention_mask, training=training, use_causal_mask=use_causal_mask
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
        scores_shape = (query.shape[0], self.num_heads, query.shape[1], value.shape[1])
        return outputs, keras.KerasTensor(scores_shape, dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(
            {"num_heads": self.num_heads, "key_dim": self.key_dim, "value_dim": self.value_dim}
        )
        return config
