"""The parts of an agent model, by variable path, for per-part gradient norms.

    model_part("simplicial_block/simplicial_attention/key1_kernel")   # "simplicial_query_key"

Both stacks log the norm of each part's (clipped) gradient as `grad_norm/<part>` in a run's
metrics, so one sees whether the 2-simplicial query and key projections (which route the
attention) get any gradient at all: the old stack from `DiagnosticImpalaTF2Policy`
(TensorFlow variable names, `...:0`), the new stack from `KerasAgentIMPALALearner` (Keras
variable paths).
"""

import re

# Variable-name patterns of each part of the agent models (`architecture.py`), first match wins.
MODEL_PARTS = (
    ("simplicial_query_key", r"simplicial_attention/(query|key\d+)_kernel"),
    # u and B; the trilinear form (SimplicialAttention(form="trilinear")) has u^1..u^k, no B.
    ("simplicial_value_B", r"simplicial_attention/(value\d*_kernel|B)\b"),
    ("one_simplicial", r"_block/attention/"),
    ("block_feedforward_norms", r"_block/"),
    ("mlp_heads", r"(^|/)(mlp_\d+|logits|value)/"),
    ("front_end", r"(^|/)(conv_\d+|entity_norm|entity_projection|virtual_entities)/"),
)


def model_part(variable_name):
    """The `MODEL_PARTS` name of a variable (its TensorFlow name or Keras path), or "other"."""
    for part, pattern in MODEL_PARTS:
        if re.search(pattern, variable_name):
            return part
    return "other"
