"""A Keras-engine checkpoint on disk: the model's weights and the optimizer's variables (numpy
arrays, backend independent: a run saved on TensorFlow resumes on JAX or PyTorch, and back), the
counters and the random generators (`KERAS_ENGINE_STATE`, the file that marks such a checkpoint).

    write_checkpoint(path, weights, optimizer_variables, state)
    state, weights, optimizer_variables = read_checkpoint(path)
    saved_weights(path)                  # the weights only, for the readers of every engine
"""

import json
from pathlib import Path

import numpy as np

#: The file that marks a checkpoint of this engine: its counters and random generators.
KERAS_ENGINE_STATE = "keras_engine.json"
WEIGHTS_FILE = "model_weights.npz"
OPTIMIZER_FILE = "optimizer_variables.npz"
CHECKPOINT_FORMAT = 1


def write_checkpoint(path, weights, optimizer_variables, state):
    """Writes a checkpoint into the directory `path` (made if missing): `weights` and
    `optimizer_variables` (lists of arrays) and `state` (a JSON-able dict: the counters and the
    random generators; its "format" is set here). Atomic together with the run's manifest when
    `RunDirectory.save_checkpoint` calls it."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    np.savez(path / WEIGHTS_FILE, *weights)
    np.savez(path / OPTIMIZER_FILE, *optimizer_variables)
    state = {"format": CHECKPOINT_FORMAT, **state}
    (path / KERAS_ENGINE_STATE).write_text(json.dumps(state) + "\n", encoding="utf-8")
    return path


def read_checkpoint(path):
    """(state, weights, optimizer variables) of `write_checkpoint`'s directory `path`."""
    state = read_engine_state(path)
    return state, _arrays(Path(path) / WEIGHTS_FILE), _arrays(Path(path) / OPTIMIZER_FILE)


def read_engine_state(checkpoint):
    """The `KERAS_ENGINE_STATE` record of a Keras-engine checkpoint; a `FileNotFoundError`
    naming the file where it is missing, a `ValueError` naming it where it is damaged."""
    path = Path(checkpoint) / KERAS_ENGINE_STATE
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: not a keras engine checkpoint.")
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is damaged: not valid JSON ({error}).") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(
            f"{path} is not a keras engine checkpoint of format {CHECKPOINT_FORMAT} "
            f"(format {state.get('format') if isinstance(state, dict) else None!r})."
        )
    return state


def _arrays(path):
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: not a keras engine checkpoint.")
    with np.load(path) as saved:
        return [saved[f"arr_{index}"] for index in range(len(saved.files))]


def saved_weights(checkpoint, keras_model=None):
    """The model weights of a Keras-engine checkpoint, in `model.weights` order (any backend:
    `keras_model.set_weights` takes them)."""
    read_engine_state(checkpoint)
    return _arrays(Path(checkpoint) / WEIGHTS_FILE)
