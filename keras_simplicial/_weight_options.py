"""The weight options the attention layers and blocks share, stored, checked, serialised and
handed on to sublayers in one place (as `keras.layers.MultiHeadAttention` hands its own to its
sublayers, `_get_common_kwargs_for_sublayer`)."""

import keras
from keras import constraints, initializers, regularizers

from keras_simplicial import _utils

# The options given to every weight, each with its (de)serialiser.
_SERIALISED = {
    "kernel_initializer": initializers,
    "bias_initializer": initializers,
    "kernel_regularizer": regularizers,
    "bias_regularizer": regularizers,
    "kernel_constraint": constraints,
    "bias_constraint": constraints,
}


class WeightOptionsLayer(keras.layers.Layer):
    """A layer with `dropout`, `use_bias`, the initializers, regularizers and constraints of its
    kernels and biases, and the dropout `seed`, all keyword arguments as in
    `keras.layers.MultiHeadAttention`."""

    def __init__(
        self,
        dropout=0.0,
        use_bias=False,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.dropout = _utils.check_rate("dropout", dropout)
        self.use_bias = bool(use_bias)
        given = {
            "kernel_initializer": kernel_initializer,
            "bias_initializer": bias_initializer,
            "kernel_regularizer": kernel_regularizer,
            "bias_regularizer": bias_regularizer,
            "kernel_constraint": kernel_constraint,
            "bias_constraint": bias_constraint,
        }
        for name, module in _SERIALISED.items():
            try:
                setattr(self, name, module.get(given[name]))
            except (ValueError, TypeError):
                raise ValueError(
                    f"`{name}` must be a Keras {module.__name__.rsplit('.', 1)[-1][:-1]} (an "
                    f"instance, a name or a config), received {name}={given[name]!r}."
                ) from None
        self.seed = seed

    def _serialised_options(self):
        return {name: module.serialize(getattr(self, name)) for name, module in _SERIALISED.items()}

    def dense_kwargs(self):
        """The initializers, regularizers, constraints and dtype policy, for a `Dense` sublayer."""
        return {**self._serialised_options(), "dtype": self.dtype_policy}

    def sublayer_kwargs(self):
        """All the weight options and the dtype policy, for an attention sublayer."""
        options = {"dropout": self.dropout, "use_bias": self.use_bias, "seed": self.seed}
        return {**options, **self.dense_kwargs()}

    def add_kernel(self, name, shape, initializer=None):
        """A kernel with this layer's options, from its own copy of the kernel initializer."""
        return self.add_weight(
            name=name,
            shape=shape,
            initializer=initializer or _utils.fresh_initializer(self.kernel_initializer),
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )

    def add_bias(self, name, width):
        """A bias [width] with this layer's options, or None without `use_bias`."""
        if not self.use_bias:
            return None
        return self.add_weight(
            name=name,
            shape=(width,),
            initializer=self.bias_initializer,
            regularizer=self.bias_regularizer,
            constraint=self.bias_constraint,
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "dropout": self.dropout,
                "use_bias": self.use_bias,
                **self._serialised_options(),
                "seed": self.seed,
            }
        )
        return config
