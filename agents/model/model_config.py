"""What a model config (`--model-config`) holds: the architecture overrides of the agent model,
and whether it runs as one XLA computation.

    architecture, jit_compile = split_model_config({"num_heads": 4, "jit_compile": False})

The one place that splits them: `RunArguments`, the RLlib model wrapper and the supervised checks
all call it. Plain Python, so that the run's arguments read without Keras.
"""

import copy

JIT_COMPILE = "jit_compile"

# The paper's model exactly (Section 4): each architecture option of `PAPER_DEFAULTS`
# (architecture.py) that is not the paper's, or that the presets' model (`PRESET_MODEL`) changes,
# set to the paper's value. `--model-config paper`.
PAPER_MODEL = {
    "simplicial_logit_scale": None,  # unscaled 2-simplicial logits
    "simplicial_gain_initializer": "ones",  # LayerNorm(a2) with its usual gain
    "entity_norm": False,  # no LayerNorm on the entities' board features
    "mlp_kernel_initializer": "glorot_uniform",  # the original code's (Keras's default)
    "centre_pixels": False,  # pixels / 255, in [0, 1]
    "conv_filters": [12, 24],  # the two 2 x 2 convolutions' filters
    "mlp_units": [256, 256, 256, 256],  # four fully connected layers of 256
}
# The trainability study's front end (studies/trainability/, front-end-plan.md's answer): a
# LayerNorm on the entities' board features with one MLP layer of 256 (the remedy), pixels in
# [-1, 1] and 128 filters in each convolution. With it every run of both agents learnt the held-keys
# conjunction within 64,000 examples at Adam's 3e-4, where the defaults sat on the constant
# prediction. `--model-config front-end`.
FRONT_END_MODEL = {
    "entity_norm": True,
    "mlp_units": [256],
    "centre_pixels": True,
    "conv_filters": [128, 128],
}
# The model every preset trained before the front end became their default (2026-12):
# `PAPER_DEFAULTS` as it is. Those runs' run.json files hold only what their --model-config
# changed of it, and load as they trained: the architecture's defaults did not change.
# `--model-config pre-front-end`, for the studies that reproduce them.
PRE_FRONT_END_MODEL = {
    "entity_norm": False,
    "mlp_units": [256, 256, 256, 256],
    "centre_pixels": False,
    "conv_filters": [12, 24],
}
# The model every preset trains unless --model-config changes it (merged under it, as a preset's
# env config under --env-config): the front end, since bridge-small and the easy preset learnt
# with it on every run of both agents (studies/trainability/: "Bridge-small with the front end",
# defaults-plan.md's check of the easy preset).
PRESET_MODEL = FRONT_END_MODEL
# Named model configs: `--model-config NAME` is the same as the JSON object it names.
MODEL_CONFIGS = {
    "paper": PAPER_MODEL,
    "front-end": FRONT_END_MODEL,
    "pre-front-end": PRE_FRONT_END_MODEL,
}


def named_model_config(text):
    """The model config `text` names (a copy, its lists too), or None when it names none of
    `MODEL_CONFIGS`."""
    config = MODEL_CONFIGS.get(str(text).strip())
    return None if config is None else copy.deepcopy(config)


def parse_model_config(text):
    """The model config `--model-config` gives on the command line: a copy of the one `text`
    names (`MODEL_CONFIGS`), else the JSON object it is; a one-line ValueError naming the flag
    and the accepted names otherwise."""
    from keras_simplicial.agents.ranges import parse_json_object

    named = named_model_config(text)
    if named is not None:
        return named
    return parse_json_object(text, "--model-config", f" or one of {sorted(MODEL_CONFIGS)}")


def with_architecture_defaults(model_config):
    """`model_config` with each option of `PRESET_MODEL` that it leaves out set to the
    architecture's default (`PRE_FRONT_END_MODEL`'s value): the same model, written so that it
    compares with a preset's (a run.json written before the presets gave a model holds only what
    its --model-config changed)."""
    return {**copy.deepcopy(PRE_FRONT_END_MODEL), **dict(model_config or {})}


def split_model_config(model_config, where="--model-config"):
    """(architecture overrides for `build_agent_model`, jit_compile) of a model config.

    `jit_compile` defaults to True (the forward pass, and so its gradient, is compiled by XLA,
    which fuses the attention blocks' many small ops; False keeps TensorFlow's graph executor).
    """
    architecture = dict(model_config or {})
    jit_compile = architecture.pop(JIT_COMPILE, True)
    if not isinstance(jit_compile, bool):
        raise ValueError(f"{where}: {JIT_COMPILE} must be true or false, got {jit_compile!r}.")
    return architecture, jit_compile
