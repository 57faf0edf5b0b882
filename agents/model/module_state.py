"""The Keras weights inside the state of a `KerasAgentRLModule` (new API stack), read without
RLlib or PyTorch.

    weights = keras_weights(module_state, keras_model)     # in `keras_model.weights` order
    keras_model.set_weights(weights)                       # on any Keras backend

A module's state is a torch state dict (as numpy arrays in a checkpoint's `module_state.pkl`)
whose Keras variables are keyed `<attribute>._torch_params.<variable.path>` (Keras 3's
`TorchLayer` tracks each variable under its path), so a model of the same architecture built on
any backend finds its weights by their paths.
"""

import numpy as np

#: A Keras variable's key in a module's state dict holds this, then the variable's path.
TORCH_PARAMS = "_torch_params."


def keras_weights(module_state, keras_model):
    """The weights of `keras_model` (a model of `build_agent_model`, any backend) found in the
    state dict of a `KerasAgentRLModule` of the same architecture, in `keras_model.weights` order
    (what `keras_model.set_weights` takes), as numpy arrays.

    Raises a `ValueError` naming the first variable that is missing or of another shape.
    """
    by_path = {}
    for key, value in module_state.items():
        if TORCH_PARAMS in key:
            by_path[key.split(TORCH_PARAMS, 1)[1]] = value
    weights = []
    for variable in keras_model.weights:
        if variable.path not in by_path:
            raise ValueError(
                f"the module state holds no {variable.path!r}: not a state of this agent's "
                f"model (found {len(by_path)} Keras variables)."
            )
        value = by_path[variable.path]
        value = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(
                f"{variable.path} has shape {tuple(value.shape)} in the module state, "
                f"{tuple(variable.shape)} in the model: pass the run's model_overrides."
            )
        weights.append(value)
    return weights
