"""The Keras 3 agent models of `architecture.py` as an RLlib `TorchRLModule` (new API stack).

    spec = RLModuleSpec(module_class=KerasAgentRLModule, model_config={"kind": "simplicial"})
    module = KerasAgentRLModule(observation_space=..., action_space=..., model_config={...})
    module.keras_model                      # the model of `build_agent_model`, unchanged
    keras_weights(module.get_state(), keras_model)   # its weights for any model (module_state.py)

With the PyTorch backend (KERAS_BACKEND=torch, chosen before Keras is imported) a Keras layer is
a `torch.nn.Module` whose variables are `torch.nn.Parameter`s, tracked under each variable's path
(`<prefix>_torch_params.<variable.path>`: Keras 3's `TorchLayer`). The module keeps the agent
model as its attribute `keras_model`, so `parameters()` are exactly the model's trainable
weights, the Learner's optimizer updates the very tensors the forward pass reads, and RLlib's
weight sync (`get_state` / `set_state`, a torch state dict) carries them to the env runners.

The model's two outputs are the policy and the value heads:

    obs [B, R, C+1, 3] (uint8)  ->  keras_model  ->  logits [B, A]  (ACTION_DIST_INPUTS)
                                                 ->  value  [B, 1]  (compute_values: [B])

One forward pass serves both in training: `_forward_train` returns the value as the batch's
`embeddings`, which RLlib's IMPALA/APPO learners hand back to `compute_values`. TensorFlow is
loaded beside PyTorch (RLlib and the package import it), with its v2 behaviour on
(`ensure_tf2_behavior`).
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import tensorflow  # noqa: E402, F401  (before RLlib: see agents/__init__.py)
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.apis import ValueFunctionAPI  # noqa: E402
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule  # noqa: E402

from keras_simplicial.agents.model.architecture import AGENT_KINDS  # noqa: E402
from keras_simplicial.agents.model.model_config import split_model_config  # noqa: E402
from keras_simplicial.agents.model.rllib_model import ensure_tf2_behavior  # noqa: E402


def require_torch_backend(what="the new API stack"):
    """Raises a `ValueError` unless Keras runs on PyTorch (KERAS_BACKEND=torch)."""
    import keras

    backend = keras.backend.backend()
    if backend != "torch":
        raise ValueError(
            f"{what} needs Keras on PyTorch, but Keras was imported with the {backend!r} "
            "backend: set KERAS_BACKEND=torch before Keras (or TensorFlow) is imported "
            "(`keras-simplicial train --api-stack new` does)."
        )


class KerasAgentRLModule(TorchRLModule, ValueFunctionAPI):
    """A relational or simplicial agent (Section 4.1) as an RLlib `TorchRLModule`.

    `model_config` (a dict): `kind` ("relational" or "simplicial") and any architecture override
    of `build_agent_model` (e.g. `{"num_heads": 4}`); `jit_compile` is accepted and has no effect
    here (it is XLA's, on TensorFlow).

    Attributes:
        kind: "relational" or "simplicial".
        keras_model: the agent model, `obs [B, R, C+1, 3] -> [logits [B, A], value [B, 1]]`.
    """

    def setup(self):
        from keras_simplicial.agents.model.architecture import build_agent_model

        require_torch_backend("KerasAgentRLModule")
        # RLlib switches TensorFlow's v2 behaviour off in a process where it imports TensorFlow
        # first (an env runner, a learner): Keras's preprocessing layers (`Rescaling`) would then
        # take every call for a tf.data graph and compute in TensorFlow, even on PyTorch.
        ensure_tf2_behavior()
        config = dict(self.model_config or {})
        kind = config.pop("kind", None)
        if kind not in AGENT_KINDS:
            raise ValueError(f"model_config['kind'] must be one of {AGENT_KINDS}, got {kind!r}.")
        architecture, _ = split_model_config(config, "model_config")
        self.kind = kind
        self.keras_model = build_agent_model(
            kind,
            self.observation_space.shape,
            int(self.action_space.n),
            **architecture,
        )

    def logits_and_values(self, observations):
        """`(logits [B, A], value [B, 1])` of observations [B, R, C+1, 3] (any dtype)."""
        logits, value = self.keras_model(observations.float())
        return logits, value

    def _forward(self, batch, **kwargs):
        logits, _ = self.logits_and_values(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch, **kwargs):
        logits, value = self.logits_and_values(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: value}

    def compute_values(self, batch, embeddings=None):
        """The value head [B] (or [B, T]): `embeddings` when `_forward_train` gave them."""
        if embeddings is None:
            _, embeddings = self.logits_and_values(batch[Columns.OBS])
        return embeddings.squeeze(-1)
