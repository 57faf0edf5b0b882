"""What a model config (`--model-config`) holds: the architecture overrides of the agent model,
and whether it runs as one XLA computation.

    architecture, jit_compile = split_model_config({"num_heads": 4, "jit_compile": False})

The one place that splits them: `RunArguments`, the RLlib model wrapper and the supervised checks
all call it. Plain Python, so that the run's arguments read without Keras.
"""

JIT_COMPILE = "jit_compile"


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
