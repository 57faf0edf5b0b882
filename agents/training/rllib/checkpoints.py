"""What an RLlib checkpoint holds for the readers of every engine: the Keras weights of its
policy (old stack) or of its RLModule (new stack), and the old stack's TF2 policy itself.

Both are pickles, read here because this is the checkpoint's own format: load only checkpoints
you made. A checkpoint written before the RLlib modules moved into this folder names their old
modules; `keras_simplicial.agents.MOVED_MODULES` keeps those names importable.
"""

import pickle
from pathlib import Path

from keras_simplicial.agents.training.checkpoint_integrity import POLICY_STATE

#: Where a new-stack checkpoint keeps the learner's module state (a pickled dict of numpy arrays).
MODULE_STATE = "learner_group/learner/rl_module/default_policy/module_state.pkl"


def _unpickled(path, what):
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: not an RLlib {what} checkpoint.")
    with open(path, "rb") as stream:
        return pickle.load(stream)


def saved_policy_weights(checkpoint, keras_model=None):
    """The weights of an old-stack checkpoint's TF2 policy (`policy.get_weights()` order, which
    is the Keras model's)."""
    return _unpickled(Path(checkpoint) / POLICY_STATE, "policy")["weights"]


def saved_module_weights(checkpoint, keras_model):
    """The Keras weights of a new-stack checkpoint's `KerasAgentRLModule`, for `keras_model`."""
    from keras_simplicial.agents.model.module_state import keras_weights

    return keras_weights(_unpickled(Path(checkpoint) / MODULE_STATE, "new-stack"), keras_model)


def load_tf2_policy(checkpoint):
    """The RLlib TF2 `Policy` of an old-stack checkpoint (its Keras agent model at
    `policy.model.base_model`)."""
    import tensorflow  # noqa: F401  (before RLlib: see agents/__init__.py)
    from ray.rllib.policy.policy import Policy

    from keras_simplicial.agents.model.rllib_model import ensure_tf2_behavior, register_agent_models

    ensure_tf2_behavior()
    register_agent_models()  # RLlib's catalog forgets custom models at every ray.shutdown()
    return Policy.from_checkpoint(str(Path(checkpoint) / "policies" / "default_policy"))
