"""Which optional dependencies (setup.py's extras) bring which modules, and the error that names
the extra to install when one is missing.

    try:
        import gymnasium
    except ModuleNotFoundError as error:
        raise missing_extra(error, "envs", "keras_simplicial.envs") from error

Plain Python: read by the command line, `keras_simplicial.envs`, `keras_simplicial.agents` and
the Triton kernels (`fused="triton"`) before any of them imports what an extra brings.
"""

# The modules each extra of setup.py brings, by the name a missing one is reported under.
EXTRA_MODULES = {
    "envs": ("gymnasium",),
    "agents": (
        "gymnasium",
        "tensorflow",
        "tf_keras",
        "ray",
        "matplotlib",
        "PIL",
        "rich",
        "tensorboardX",
    ),
    "torch": ("torch",),
    "backends": ("jax",),
    "triton": ("triton",),  # `fused="triton"` (keras_simplicial._triton)
}


def missing_module(error):
    """The top-level name of the module a `ModuleNotFoundError` could not find ("" if none)."""
    return (getattr(error, "name", None) or "").partition(".")[0]


def extra_of(error, extra):
    """The extra that brings the module `error` misses: "torch" for PyTorch, else `extra` when it
    brings that module; None when no extra does (a real bug, to be raised as it is)."""
    missing = missing_module(error)
    chosen = "torch" if missing == "torch" else extra
    return chosen if missing in EXTRA_MODULES.get(chosen, ()) else None


def missing_extra(error, extra, what):
    """The error to raise for `error` (a `ModuleNotFoundError`) when `what` needs the extra
    `extra`: a `ModuleNotFoundError` (an `ImportError`) for the same module whose message names the
    extra to install; `error` itself when the missing module is none of the extra's."""
    chosen = extra_of(error, extra)
    if chosen is None:
        return error
    return ModuleNotFoundError(
        f"{what} needs the [{chosen}] extra (no module named {missing_module(error)!r}): "
        f"pip install 'keras-simplicial[{chosen}]'",
        name=error.name,
    )
