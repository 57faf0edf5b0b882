"""The Keras engine's room: IMPALA in one process, no Ray, on the process's Keras backend.

impala.py         KerasIMPALA: the loop (act, learn, report, checkpoint), top to bottom
learner_steps.py  the learner step on TensorFlow, JAX and PyTorch: IMPALA's update, compiled
settings.py       the run's IMPALA settings (Table 1, the preset, --config), checked
checkpoint.py     a checkpoint on disk: weights, optimizer variables, counters, generators

`KERAS_ENGINE` is the engine's record (`engines.ENGINES["keras"]`); its functions import the
engine's modules when called, so reading the record needs no Keras.
"""

from keras_simplicial.agents.training.engine_record import Engine


def engine_settings(arguments):
    """`settings.engine_settings`: the run's IMPALA settings, every one checked."""
    from keras_simplicial.agents.training.keras_engine.settings import engine_settings

    return engine_settings(arguments)


def open_keras_engine(arguments, settings, checkpoint=None, address=None):
    """`impala.open_keras_engine`: the run's `KerasIMPALA`, restored from `checkpoint`."""
    from keras_simplicial.agents.training.keras_engine.impala import open_keras_engine

    return open_keras_engine(arguments, settings, checkpoint, address)


def saved_weights(checkpoint, keras_model=None):
    """`checkpoint.saved_weights`: the model weights a checkpoint of this engine holds."""
    from keras_simplicial.agents.training.keras_engine.checkpoint import saved_weights

    return saved_weights(checkpoint, keras_model)


KERAS_ENGINE = Engine(
    name="keras",
    description="IMPALA in one process without Ray, on the process's Keras backend "
    "(TensorFlow by default, JAX on a GPU, or PyTorch)",
    keras_backend=None,
    requires=("keras", "gymnasium"),
    install='pip install keras gymnasium, and the backend: tensorflow, "jax[cuda12]" or torch',
    configure=engine_settings,
    open=open_keras_engine,
    checkpoint_marker="keras_engine.json",
    saved_weights=saved_weights,
    masks_blocked_moves=True,
    starts_from_policy=True,
)
