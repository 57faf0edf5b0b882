"""Shared by the grouped key/value heads' tests: a layer with `num_heads` key/value heads that
repeats a grouped layer's projections (what grouped heads must equal)."""

import numpy as np
from keras import ops


def repeat_groups(array, groups, heads):
    """A projection's kernel [D, G d] (or bias [G d]) with each of its G heads repeated for the
    H / G query heads of its group: [D, H d]."""
    array = ops.convert_to_numpy(array)
    width = array.shape[-1] // groups
    split = array.reshape(array.shape[:-1] + (groups, width))
    return np.repeat(split, heads // groups, axis=-2).reshape(array.shape[:-1] + (heads * width,))


def copy_as_full_heads(grouped, full):
    """Sets `full` (a built SimplicialAttention with one key/value head per query head) to the
    weights of `grouped` (a built one with grouped key/value heads)."""
    groups, heads = grouped.num_key_value_heads, grouped.num_heads
    full.query_kernel.assign(ops.convert_to_numpy(grouped.query_kernel))
    if grouped.query_bias is not None:
        full.query_bias.assign(ops.convert_to_numpy(grouped.query_bias))
    pairs = list(zip(grouped.key_kernels, full.key_kernels)) + list(
        zip(grouped.value_kernels, full.value_kernels)
    )
    if grouped.use_bias:
        pairs += list(zip(grouped.key_biases, full.key_biases))
        pairs += list(zip(grouped.value_biases, full.value_biases))
    for source, target in pairs:
        target.assign(repeat_groups(source, groups, heads))
    if grouped.B is not None:
        full.B.assign(ops.convert_to_numpy(grouped.B))
