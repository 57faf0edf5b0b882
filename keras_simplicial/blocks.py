"""The relational and the 2-simplicial Transformer blocks of Section 4.2."""

import numbers
import re

import keras
from keras import initializers, ops

from keras_simplicial import _utils
from keras_simplicial._weight_options import WeightOptionsLayer
from keras_simplicial.dot_product_attention import DotProductAttention
from keras_simplicial.scalar_product import DEFAULT_EPSILON
from keras_simplicial.simplicial_attention import SimplicialAttention


class _Block(WeightOptionsLayer):
    """What both blocks share: x = LayerNorm(e), 1-simplicial attention, and
    e' = LayerNorm(g(v') + e) with g = Dense(feedforward_dim, relu) -> Dense(D) (eq. efromv)."""

    def __init__(
        self,
        num_heads=2,
        key_dim=32,
        value_dim=None,
        feedforward_dim=64,
        dropout=0.0,
        use_bias=False,
        layer_norm_epsilon=1e-5,
        **kwargs,
    ):
        super().__init__(dropout=dropout, use_bias=use_bias, **kwargs)
        self.num_heads = _utils.check_positive_int("num_heads", num_heads)
        self.key_dim = _utils.check_positive_int("key_dim", key_dim)
        self.value_dim = _utils.check_positive_int("value_dim", value_dim, allow_none=True)
        self.feedforward_dim = _utils.check_positive_int("feedforward_dim", feedforward_dim)
        self.layer_norm_epsilon = _utils.check_non_negative(
            "layer_norm_epsilon", layer_norm_epsilon
        )
        self.input_norm = self._layer_norm("input_norm")
        self.attention = DotProductAttention(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            value_dim=self.value_dim,
            name="attention",
            **self.sublayer_kwargs(),
        )
        self.output_norm = self._layer_norm("output_norm")

    def _layer_norm(self, name, gamma_initializer="ones"):
        return keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon,
            gamma_initializer=gamma_initializer,
            dtype=self.dtype_policy,
            name=name,
        )

    def _dense(self, units, name, activation=None):
        return keras.layers.Dense(units, activation=activation, name=name, **self.dense_kwargs())

    def _check_inputs(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(
                f"`inputs` must have shape [batch, entities, features] with known features, "
                f"received {input_shape}."
            )

    def _build_common(self, input_shape, attention_width):
        """Builds the norms, the 1-simplicial attention and g (input width `attention_width`)."""
        self.input_norm.build(input_shape)
        self.attention.build(input_shape, input_shape)
        self.feedforward_hidden = self._dense(self.feedforward_dim, "feedforward_hidden", "relu")
        self.feedforward_hidden.build(tuple(input_shape[:-1]) + (attention_width,))
        self.feedforward_output = self._dense(input_shape[-1], "feedforward_output")
        self.feedforward_output.build(tuple(input_shape[:-1]) + (self.feedforward_dim,))
        self.output_norm.build(input_shape)

    def _update(self, e, v):
        """e' = LayerNorm(g(v') + e), eq. (efromv)."""
        return self.output_norm(e + self.feedforward_output(self.feedforward_hidden(v)))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "key_dim": self.key_dim,
                "value_dim": self.value_dim,
                "feedforward_dim": self.feedforward_dim,
                "layer_norm_epsilon": self.layer_norm_epsilon,
            }
        )
        return config


# The block's names of the arguments it passes to its `SimplicialAttention`: the sublayer's errors
# are reported in the block's terms (`simplicial_order`, not the sublayer's `order`).
_SIMPLICIAL_ARGUMENTS = {
    "num_heads": "num_simplicial_heads",
    "num_key_value_heads": "num_simplicial_key_value_heads",
    "key_dim": "simplicial_key_dim",
    "value_dim": "simplicial_value_dim",
    "order": "simplicial_order",
    "epsilon": "simplicial_epsilon",
    "logit_scale": "simplicial_logit_scale",
    "form": "simplicial_form",
    "window": "simplicial_window",
}


def _in_block_terms(message):
    """`message` of a `SimplicialAttention` error with each argument named as the block names it
    (an argument is a name in backquotes or before "=")."""
    names = "|".join(_SIMPLICIAL_ARGUMENTS)
    return re.sub(
        rf"(?<![\w])({names})(?=`|=)", lambda m: _SIMPLICIAL_ARGUMENTS[m.group(1)], message
    )


def _check_cached_call(attention_mask, padding_mask, return_attention_scores):
    if attention_mask is not None or padding_mask is not None or return_attention_scores:
        raise ValueError(
            "A cached call takes no `attention_mask` or `padding_mask` and returns no scores: "
            "it attends causally to the cached positions."
        )


def _cache_spec(cache):
    """The symbolic shape of a cache (nested tuples of tensors), for `compute_output_spec`."""
    if isinstance(cache, (tuple, list)):
        return tuple(_cache_spec(c) for c in cache)
    return keras.KerasTensor(cache.shape, dtype=cache.dtype)


def _with_padding(attention_mask, padding_mask):
    """`attention_mask` ([B or 1, N, N] or None) and a key padding mask [B, N] (None: none) as one
    mask broadcastable to [B, N, N]: entity i may attend to j when both allow it."""
    if padding_mask is None:
        return attention_mask
    keys = ops.expand_dims(ops.cast(padding_mask, "bool"), 1)  # [B, 1, N]
    if attention_mask is None:
        return keys
    return ops.logical_and(ops.cast(attention_mask, "bool"), keys)


@keras.saving.register_keras_serializable(package="keras_simplicial")
class TransformerBlock(_Block):
    r"""The relational Transformer block (Section 4.2, `transformer_block`; eq. update_multhead).

    $$x = \operatorname{LayerNorm}(e)$$

    $$a_i = \operatorname{concat}_u \sum_j \operatorname{softmax}_j\Big(
    \frac{q_{i,(u)} \cdot k_{j,(u)}}{\sqrt{d_k}}\Big) v_{j,(u)}$$

    $$e'_i = \operatorname{LayerNorm}\big(e_i + g(a_i)\big)$$

    with $d_k$ = `key_dim`, u the heads and g = Dense(D) after Dense(feedforward_dim, relu).

    The attention has no bias on q, k, v by default and no output projection (heads concatenated,
    width num_heads * value_dim), as in the original agent. The paper's agent: 2 heads of 32,
    feed-forward width 64, LayerNorm epsilon 1e-5.

    Args:
        num_heads: heads of the 1-simplicial attention.
        key_dim: size of each head's queries and keys.
        value_dim: size of each head's values; defaults to `key_dim`.
        feedforward_dim: hidden width of the feed-forward network g.
        dropout: dropout rate on the attention probabilities.
        use_bias: whether the q, k, v projections have biases.
        layer_norm_epsilon: epsilon of both layer normalisations.
        **kwargs: `kernel_initializer`, `bias_initializer`, `kernel_regularizer`,
            `bias_regularizer`, `kernel_constraint` and `bias_constraint`, of the attention's
            projections and the feed-forward layers, as in `keras.layers.MultiHeadAttention`;
            `seed`, of the dropout; and the arguments of `keras.layers.Layer`.

    Call arguments:
        inputs: entities e, [B, N, D].
        attention_mask: boolean, broadcastable to [B, N, N]; True = may attend.
        return_attention_scores: also return the attention probabilities [B, num_heads, N, N].
        training: whether dropout is active.
        use_causal_mask: entity i attends only to entities j <= i (a decoder), combined with
            `attention_mask`.
        padding_mask: boolean [B, N], True at real positions: no entity attends to a padding
            position (left or right); one with nothing to attend to gets a zero attention output.
        cache: a decoding cache (`initial_cache`): `inputs` are then the new positions
            `cache_update_index`.. of a causal sequence; returns (e', new cache), equal to the
            causal pass at those positions.
        cache_update_index: the position of the first new entity.

    Returns:
        e' [B, N, D], and the scores if requested; (e', cache) for a cached call.
    """

    def build(self, input_shape):
        self._check_inputs(input_shape)
        self._build_common(input_shape, self.num_heads * (self.value_dim or self.key_dim))

    def initial_cache(self, batch_size, max_length, dtype=None):
        """An empty decoding cache: the attention's (keys, values) for `max_length` positions."""
        return self.attention.initial_cache(batch_size, max_length, dtype)

    def call(
        self,
        inputs,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        padding_mask=None,
        cache=None,
        cache_update_index=None,
    ):
        x = self.input_norm(inputs)
        if cache is not None:
            _check_cached_call(attention_mask, padding_mask, return_attention_scores)
            a, cache = self.attention(
                x, x, cache=cache, cache_update_index=cache_update_index, training=training
            )
            return self._update(inputs, a), cache
        q, k, v = self.attention.project(x, x, x)
        attention_mask = _with_padding(attention_mask, padding_mask)
        a, scores = self.attention.attend(
            q, k, v, attention_mask, training=training, use_causal_mask=use_causal_mask
        )
        outputs = self._update(inputs, _utils.merge_heads(a))
        return (outputs, scores) if return_attention_scores else outputs

    def compute_output_spec(
        self,
        inputs,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        padding_mask=None,
        cache=None,
        cache_update_index=None,
    ):
        outputs = keras.KerasTensor(inputs.shape, dtype=self.compute_dtype)
        if cache is not None:
            return outputs, _cache_spec(cache)
        if not return_attention_scores:
            return outputs
        batch, length = inputs.shape[0], inputs.shape[1]
        scores = keras.KerasTensor(
            (batch, self.num_heads, length, length), dtype=self.compute_dtype
        )
        return outputs, scores


@keras.saving.register_keras_serializable(package="keras_simplicial")
class TwoSimplicialTransformerBlock(_Block):
    r"""The 2-simplicial Transformer block with virtual entities (Section 2.2 and 5.2,
    `simplicial_transformer_block`; eqs. efrmov0, update_rule_ent, 1_simp_virtual_update, efromv).

    The last M = `num_virtual_entities` entities of the input are virtual. With
    $x = \operatorname{LayerNorm}(e)$:

    - 1-simplicial attention (heads concatenated, no output projection): a standard entity
      ($i \le N$) attends only to standard entities, a virtual entity to all N + M.
    - 2-simplicial attention: a standard entity attends to pairs (j, k) of virtual entities,
      $a_{2,i} = \sum_{j,k} \operatorname{softmax}_{(j,k)}(\lambda \langle p_i, l^1_j, l^2_k
      \rangle)\, B(u_j \otimes u_k)$ (eq. update_rule_ent, where $\lambda = 1$;
      $\lambda$ is `simplicial_logit_scale`); a virtual entity takes its own value $u_i$ instead
      (eq. 1_simp_virtual_update).
    - $v' = \operatorname{concat}(a_1, \operatorname{LayerNorm}(a_2))$ and
      $e' = \operatorname{LayerNorm}(e + g(v'))$, g = Dense(D) after Dense(feedforward_dim, relu).

    Paper defaults: 2 heads of 32 (1-simplicial), one 2-simplicial head of 48, 2 virtual
    entities, feed-forward width 64. The virtual entities are appended by `VirtualEntities`
    before the first block and dropped after the last.

    Args:
        num_virtual_entities: M, the number of trailing virtual entities (1 <= M < sequence length);
            0: no virtual entities, the 2-simplicial attention of every entity goes over pairs of
            the entities themselves (N^2 pairs, or the windows' w1 w2), as in a sequence model.
        num_heads: heads of the 1-simplicial attention.
        key_dim: size of each 1-simplicial head's queries and keys.
        value_dim: size of each 1-simplicial head's values; defaults to `key_dim`.
        num_simplicial_heads: heads of the 2-simplicial attention.
        simplicial_key_dim: size of each 2-simplicial head's query p and keys l^1, l^2.
        simplicial_value_dim: size of each 2-simplicial head's values u; defaults to
            `simplicial_key_dim`.
        simplicial_order: k of the k-simplicial attention (2 in the paper).
        simplicial_epsilon: epsilon under the square root of the scalar product.
        simplicial_logit_scale: `logit_scale` of the 2-simplicial attention ("auto":
            simplicial_key_dim^(-order/2), or simplicial_key_dim^(-1/2) in the trilinear form;
            None: the paper's unscaled logits).
        simplicial_gain_initializer: initializer of the gain (the LayerNorm scale) on the
            2-simplicial branch, LayerNorm(a2) in v'. "ones" (the default) is the paper's block;
            "zeros" starts the block as a 1-simplicial one whose 2-simplicial inputs to the
            feed-forward network are exactly 0, the branch coming in as the gain learns (its
            gradient is LayerNorm(a2) times the feed-forward's, nonzero from the first step).
        feedforward_dim: hidden width of the feed-forward network g.
        dropout: dropout rate on both attentions' probabilities.
        use_bias: whether both attentions' projections have biases.
        layer_norm_epsilon: epsilon of the layer normalisations.
        simplicial_form: `form` of the 2-simplicial attention: "scalar_product" (the paper's
            unsigned scalar product and B) or "trilinear" (Roy et al.'s trilinear logit and
            elementwise product of two values; a virtual entity then takes its u^1_i).
        simplicial_window: `window` of the 2-simplicial attention, (w1, w2) or None; with
            num_virtual_entities=0 only (the windows run over the sequence itself).
        num_simplicial_key_value_heads: `num_key_value_heads` of the 2-simplicial attention:
            key/value heads shared by groups of the `num_simplicial_heads` query heads (None: one
            per query head). A virtual entity's own value u_i is its group's.
        **kwargs: `kernel_initializer`, `bias_initializer`, `kernel_regularizer`,
            `bias_regularizer`, `kernel_constraint`, `bias_constraint` and `seed`, as in
            `TransformerBlock`; and the arguments of `keras.layers.Layer`.

    Call arguments:
        inputs: entities e, [B, N + M, D], virtual entities last.
        return_attention_scores: also return the 1-simplicial probabilities
            [B, num_heads, N + M, N + M] (masked entries exactly 0) and the 2-simplicial ones
            [B, num_simplicial_heads, N, M, M] (with num_virtual_entities=0,
            [B, num_simplicial_heads, N, N, N], or [..., N, w1, w2] with `simplicial_window`).
        training: whether dropout is active.
        use_causal_mask: with num_virtual_entities=0 only: entity i attends to entities j <= i
            and to pairs (j, k) with j, k <= i (a decoder).
        padding_mask: boolean [B, N] over the standard entities, True at real positions: no
            entity attends to a padding position (left or right), in either attention, windows
            included; with nothing to attend to, an attention's output is zero, never NaN.
        cache: a decoding cache (num_virtual_entities=0; `initial_cache`): `inputs` are then
            the new positions `cache_update_index`.. of a causal sequence (one at a time with
            `simplicial_window`, whose cache holds only the window); returns (e', new cache),
            equal to the causal (windowed) pass at those positions.
        cache_update_index: the position of the first new entity.

    Returns:
        e' [B, N + M, D], or (e', attention_scores, simplicial_attention_scores); (e', cache)
        for a cached call.
    """

    def __init__(
        self,
        num_virtual_entities=2,
        num_heads=2,
        key_dim=32,
        value_dim=None,
        num_simplicial_heads=1,
        simplicial_key_dim=48,
        simplicial_value_dim=None,
        simplicial_order=2,
        simplicial_epsilon=DEFAULT_EPSILON,
        simplicial_logit_scale="auto",
        simplicial_gain_initializer="ones",
        feedforward_dim=64,
        dropout=0.0,
        use_bias=False,
        layer_norm_epsilon=1e-5,
        simplicial_form="scalar_product",
        simplicial_window=None,
        num_simplicial_key_value_heads=None,
        **kwargs,
    ):
        super().__init__(
            num_heads=num_heads,
            key_dim=key_dim,
            value_dim=value_dim,
            feedforward_dim=feedforward_dim,
            dropout=dropout,
            use_bias=use_bias,
            layer_norm_epsilon=layer_norm_epsilon,
            **kwargs,
        )
        if (
            isinstance(num_virtual_entities, bool)
            or not isinstance(num_virtual_entities, numbers.Integral)
            or num_virtual_entities < 0
        ):
            raise ValueError(
                "`num_virtual_entities` must be a non-negative integer, received "
                f"num_virtual_entities={num_virtual_entities!r}."
            )
        self.num_virtual_entities = int(num_virtual_entities)
        self.num_simplicial_heads = _utils.check_positive_int(
            "num_simplicial_heads", num_simplicial_heads
        )
        self.simplicial_key_dim = _utils.check_positive_int(
            "simplicial_key_dim", simplicial_key_dim
        )
        self.simplicial_value_dim = _utils.check_positive_int(
            "simplicial_value_dim", simplicial_value_dim, allow_none=True
        )
        self.simplicial_order = simplicial_order
        self.simplicial_epsilon = simplicial_epsilon
        self.simplicial_logit_scale = simplicial_logit_scale
        self.simplicial_form = simplicial_form
        try:
            self.simplicial_attention = SimplicialAttention(
                num_heads=self.num_simplicial_heads,
                key_dim=self.simplicial_key_dim,
                value_dim=self.simplicial_value_dim,
                order=simplicial_order,
                epsilon=simplicial_epsilon,
                logit_scale=simplicial_logit_scale,
                form=simplicial_form,
                window=simplicial_window,
                num_key_value_heads=num_simplicial_key_value_heads,
                name="simplicial_attention",
                **self.sublayer_kwargs(),
            )
        except ValueError as error:
            raise ValueError(_in_block_terms(str(error))) from None
        self.simplicial_window = self.simplicial_attention.window
        self.num_simplicial_key_value_heads = self.simplicial_attention.num_key_value_heads
        if self.simplicial_window is not None and self.num_virtual_entities:
            raise ValueError(
                "`simplicial_window` needs num_virtual_entities=0 (the windows run over the "
                f"sequence itself), received num_virtual_entities={self.num_virtual_entities}."
            )
        try:
            self.simplicial_gain_initializer = initializers.get(simplicial_gain_initializer)
        except ValueError:
            raise ValueError(
                '`simplicial_gain_initializer` must be a Keras initializer (e.g. "ones", the '
                f'paper\'s, or "zeros"), received {simplicial_gain_initializer!r}.'
            ) from None
        self.simplicial_norm = self._layer_norm(
            "simplicial_norm", gamma_initializer=self.simplicial_gain_initializer
        )

    def build(self, input_shape):
        self._check_inputs(input_shape)
        length = input_shape[1]
        if length is not None and self.num_virtual_entities >= length:
            raise ValueError(
                "`num_virtual_entities` must be smaller than the sequence length, received "
                f"num_virtual_entities={self.num_virtual_entities} for inputs of shape "
                f"{tuple(input_shape)}."
            )
        batch, features = input_shape[0], input_shape[-1]
        m = self.num_virtual_entities
        standard = None if length is None else length - m
        self.simplicial_attention.build(
            (batch, standard, features), (batch, m if m else length, features)
        )
        simplicial_width = self.num_simplicial_heads * (
            self.simplicial_value_dim or self.simplicial_key_dim
        )
        self.simplicial_norm.build((batch, length, simplicial_width))
        width = self.num_heads * (self.value_dim or self.key_dim) + simplicial_width
        self._build_common(input_shape, width)

    def initial_cache(self, batch_size, max_length, dtype=None):
        """An empty decoding cache (num_virtual_entities=0 only): the 1-simplicial attention's
        (keys, values) for `max_length` positions and the 2-simplicial attention's cache (with
        `simplicial_window`, a ring buffer of the larger window)."""
        if self.num_virtual_entities:
            raise ValueError(
                "Decoding needs num_virtual_entities=0 (virtual entities see the whole "
                f"sequence), received num_virtual_entities={self.num_virtual_entities}."
            )
        return (
            self.attention.initial_cache(batch_size, max_length, dtype),
            self.simplicial_attention.initial_cache(batch_size, max_length, dtype),
        )

    def _call_cached(self, inputs, cache, index, training, unsupported):
        if self.num_virtual_entities:
            raise ValueError(
                "Decoding needs num_virtual_entities=0 (virtual entities see the whole "
                f"sequence), received num_virtual_entities={self.num_virtual_entities}."
            )
        _check_cached_call(None, *unsupported)
        x = self.input_norm(inputs)
        one, two = cache
        a1, one = self.attention(x, x, cache=one, cache_update_index=index, training=training)
        a2, two = self.simplicial_attention(
            x, x, cache=two, cache_update_index=index, training=training
        )
        v_prime = ops.concatenate([a1, self.simplicial_norm(a2)], axis=-1)
        return self._update(inputs, v_prime), (one, two)

    def _virtual_mask(self, length):
        """[1, N+M, N+M]: standard queries see standard keys only, virtual queries see all."""
        positions = ops.arange(length)
        first_virtual = length - self.num_virtual_entities
        query_is_virtual = ops.expand_dims(positions >= first_virtual, 1)
        key_is_standard = ops.expand_dims(positions < first_virtual, 0)
        return ops.expand_dims(ops.logical_or(query_is_virtual, key_is_standard), 0)

    def call(
        self,
        inputs,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        padding_mask=None,
        cache=None,
        cache_update_index=None,
    ):
        m = self.num_virtual_entities
        if cache is not None:
            return self._call_cached(
                inputs, cache, cache_update_index, training,
                (padding_mask, return_attention_scores),
            )  # fmt: skip
        if use_causal_mask and m:
            raise ValueError(
                "`use_causal_mask` needs num_virtual_entities=0 (virtual entities see the whole "
                f"sequence), received num_virtual_entities={m}."
            )
        if padding_mask is not None and m:
            # The virtual entities are always real: the standard ones' padding, then M Trues.
            padding_mask = ops.concatenate(
                [
                    ops.cast(padding_mask, "bool"),
                    ops.ones((ops.shape(padding_mask)[0], m), dtype="bool"),
                ],
                axis=1,
            )
        x = self.input_norm(inputs)
        q, k, v = self.attention.project(x, x, x)
        mask = self._virtual_mask(_utils.dim(x, 1)) if m else None
        a1, scores = self.attention.attend(
            q,
            k,
            v,
            _with_padding(mask, padding_mask),
            training=training,
            use_causal_mask=use_causal_mask,
        )
        simplicial = self.simplicial_attention
        standard, keys = (x[:, :-m], x[:, -m:]) if m else (x, x)
        ls, u = simplicial.project_keys_and_value(keys)
        a2, simplicial_scores = simplicial.attend(
            simplicial.project_query(standard),
            ls,
            u,
            return_attention_scores=return_attention_scores,
            training=training,
            use_causal_mask=use_causal_mask,
            # The 2-simplicial keys are the virtual entities (always real) when there are any.
            padding_mask=None if m else padding_mask,
        )
        a2 = _utils.merge_heads(a2)
        if m:
            own = u[0] if simplicial.form == "trilinear" else u  # eq. (1_simp_virtual_update)
            a2 = ops.concatenate([a2, _utils.merge_heads(own)], axis=1)
        v_prime = ops.concatenate([_utils.merge_heads(a1), self.simplicial_norm(a2)], axis=-1)
        outputs = self._update(inputs, v_prime)
        if return_attention_scores:
            return outputs, scores, simplicial_scores
        return outputs

    def compute_output_spec(
        self,
        inputs,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        padding_mask=None,
        cache=None,
        cache_update_index=None,
    ):
        outputs = keras.KerasTensor(inputs.shape, dtype=self.compute_dtype)
        if cache is not None:
            return outputs, _cache_spec(cache)
        if not return_attention_scores:
            return outputs
        batch, length = inputs.shape[0], inputs.shape[1]
        m = self.num_virtual_entities
        standard = None if length is None else length - m
        scores = keras.KerasTensor((batch, self.num_heads, length, length), self.compute_dtype)
        keys = (m if m else length,) * self.simplicial_order
        window = self.simplicial_attention.window
        if window is not None:
            keys = tuple(w if length is None else min(w, length) for w in window)
        simplicial_scores = keras.KerasTensor(
            (batch, self.num_simplicial_heads, standard) + keys, self.compute_dtype
        )
        return outputs, scores, simplicial_scores

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_virtual_entities": self.num_virtual_entities,
                "num_simplicial_heads": self.num_simplicial_heads,
                "simplicial_key_dim": self.simplicial_key_dim,
                "simplicial_value_dim": self.simplicial_value_dim,
                "simplicial_order": self.simplicial_order,
                "simplicial_epsilon": self.simplicial_epsilon,
                "simplicial_logit_scale": self.simplicial_logit_scale,
                "simplicial_form": self.simplicial_form,
                "simplicial_window": self.simplicial_window,
                "num_simplicial_key_value_heads": self.num_simplicial_key_value_heads,
                "simplicial_gain_initializer": initializers.serialize(
                    self.simplicial_gain_initializer
                ),
            }
        )
        return config
