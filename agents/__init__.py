"""Relational and simplicial agents (Section 5 of the paper), IMPALA training on Ray RLlib.

Importing this package sets ``TF_USE_LEGACY_KERAS=1`` (unless the user set it) before TensorFlow is
imported: RLlib's TensorFlow policies build Keras-2 optimizers through ``tf.keras`` (``tf_keras``),
while our models stay Keras 3. Heavy modules (TensorFlow, Ray) load only when a name needs them.
"""

import importlib
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_LAZY = {
    "AGENT_KINDS": "models",
    "PAPER_DEFAULTS": "models",
    "build_agent_model": "models",
    "KerasAgentModel": "rllib_model",
    "register_agent_models": "rllib_model",
    "impala_config": "config",
    "PAPER_IMPALA_HYPERPARAMETERS": "config",
    "WinRateCallbacks": "callbacks",
    "train": "train",
    "evaluate_checkpoint": "evaluate",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
