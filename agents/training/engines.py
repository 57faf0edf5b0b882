"""The engines that train a run, gathered from their rooms: one `Engine` record each.

    engine = ENGINES[arguments.engine]       # or engine_named("keras")
    engine.require()                         # ImportError in one line: what to install
    config = engine.configure(arguments)     # every argument checked before anything starts
    trainer = engine.open(arguments, config, None, None)
    engine_of_checkpoint("runs/a/checkpoints/iter_000010").name

Three engines train the same agents (`build_agent_model`), presets and `RunArguments`:

- `keras` (`keras_engine/`): IMPALA in one process, no Ray: the batched environment acts, then
  one learner step per train batch, on the process's Keras backend (TensorFlow by default, JAX on
  a GPU, or PyTorch);
- `rllib-old` (`rllib/`): IMPALA on RLlib's old API stack, Keras on TensorFlow, the run's
  sampling in Ray env runners beside a learner thread: the reference the earlier committed
  results were trained with;
- `rllib-new` (`rllib/`): IMPALA on RLlib's new API stack, Keras on PyTorch.

A new engine is a new room with its record (`engine_record.Engine`); `train` and the readers need
no new branch: what differs between engines is a field of the record.
"""

from keras_simplicial.agents.training.keras_engine import KERAS_ENGINE
from keras_simplicial.agents.training.rllib import NEW_STACK_ENGINE, OLD_STACK_ENGINE

ENGINES = {engine.name: engine for engine in (OLD_STACK_ENGINE, NEW_STACK_ENGINE, KERAS_ENGINE)}
ENGINE_NAMES = tuple(ENGINES)
#: The engine of each RLlib API stack, for `--api-stack` and the run.json files written before
#: `engine` existed (they hold `api_stack`).
API_STACK_ENGINES = {engine.api_stack: name for name, engine in ENGINES.items() if engine.api_stack}


def engine_named(name):
    """The `Engine` named `name`; a `ValueError` naming the accepted ones otherwise."""
    if name not in ENGINES:
        raise ValueError(f"engine (--engine) must be one of {list(ENGINE_NAMES)}, got {name!r}.")
    return ENGINES[name]


def engine_of_checkpoint(checkpoint):
    """The `Engine` that wrote `checkpoint` (a directory), or None when none did."""
    return next((engine for engine in ENGINES.values() if engine.holds(checkpoint)), None)
