"""The engines that train a run, one record each: what `train`, the checkpoint readers and the
command line look up once, instead of asking which engine at every turn.

    engine = ENGINES[arguments.engine]       # or engine_named("keras")
    engine.require()                         # ImportError in one line: what to install
    config = engine.configure(arguments)     # every argument checked before anything starts
    trainer = engine.open(arguments, config, checkpoint=None, address=None)
    engine_of_checkpoint("runs/a/checkpoints/iter_000010").name

Three engines train the same agents (`build_agent_model`), presets and `RunArguments`:

- `rllib-old`: IMPALA on RLlib's old API stack (`impala.impala_config`), Keras on TensorFlow, the
  run's sampling in Ray env runners beside a learner thread: the reference every committed
  result was trained with;
- `rllib-new`: IMPALA on RLlib's new API stack (`impala_torch.torch_impala_config`), Keras on
  PyTorch;
- `keras`: one process, no Ray (`keras_engine.KerasIMPALA`): the batched environment acts, then one
  learner step per train batch, on the process's Keras backend (TensorFlow by default, JAX on a
  GPU, or PyTorch).

Each record names its functions as "module:attribute" strings, imported when first used: this
module imports nothing of the package, so the run's arguments and the command line's parser read
it without TensorFlow, and nothing here imports back what imports it.

A new engine is one more record here (its config builder, how it opens a trainer, how its
checkpoints are recognised and their Keras weights read, its Keras backend, what it needs
installed); `train` and the readers need no new branch.
"""

import dataclasses
import importlib
import importlib.util
import os
from pathlib import Path
from typing import Optional

#: The Keras backend the `keras` engine runs on when KERAS_BACKEND is not set: on a CPU the
#: TensorFlow step is the fastest of the three backends (docs/benchmarks.md, "The Keras engine").
KERAS_ENGINE_DEFAULT_BACKEND = "tensorflow"


class EngineUnavailable(ImportError):
    """An engine whose modules this Python lacks; its message says, in one line, what to
    install."""


def _attribute(path):
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


@dataclasses.dataclass(frozen=True)
class Engine:
    """One engine that trains a run.

    Attributes:
        name: the value of `RunArguments.engine` (`--engine`).
        description: one line for `--help` and the docs.
        keras_backend: the Keras backend its processes must run (set before Keras is imported),
            or None: the process's own (`KERAS_BACKEND`, else `KERAS_ENGINE_DEFAULT_BACKEND`).
        requires: the modules it imports (a missing one is named by `require`).
        install: what to install when one is missing.
        configure: "module:function", `(arguments) -> config`: builds its configuration and
            checks every argument (`ValueError` naming the one that is wrong).
        open: "module:function", `(arguments, config, checkpoint, address) -> trainer` (see
            `train.Trainer`), restored from `checkpoint` when given.
        checkpoint_marker: a path only its checkpoints hold (relative to the checkpoint).
        saved_weights: "module:function", `(checkpoint, keras_model) -> weights` in
            `keras_model.weights` order.
        api_stack: RLlib's API stack it trains on ("old", "new"), None for none.
    """

    name: str
    description: str
    keras_backend: Optional[str]
    requires: tuple
    install: str
    configure: str
    open: str
    checkpoint_marker: str
    saved_weights: str
    api_stack: Optional[str] = None

    def process_backend(self):
        """The Keras backend a process training with this engine runs."""
        return self.keras_backend or os.environ.get("KERAS_BACKEND", KERAS_ENGINE_DEFAULT_BACKEND)

    def missing(self):
        """The modules of `requires` (and the Keras backend's) this Python cannot import."""
        wanted = list(self.requires)
        if self.process_backend() not in wanted:
            wanted.append(self.process_backend())
        return [name for name in wanted if importlib.util.find_spec(name) is None]

    def require(self):
        """Raises `EngineUnavailable` (an ImportError), in one line, naming what to install when
        a module is missing."""
        missing = self.missing()
        if missing:
            raise EngineUnavailable(
                f"The {self.name} engine needs {', '.join(missing)}, which this Python lacks: "
                f"{self.install}."
            )

    def build_config(self, arguments):
        return _attribute(self.configure)(arguments)

    def open_trainer(self, arguments, config, checkpoint=None, address=None):
        return _attribute(self.open)(arguments, config, checkpoint, address)

    def holds(self, checkpoint):
        """Whether `checkpoint` (a directory) was written by this engine."""
        return (Path(checkpoint) / self.checkpoint_marker).exists()

    def read_saved_weights(self, checkpoint, keras_model):
        return _attribute(self.saved_weights)(checkpoint, keras_model)


_PACKAGE = "keras_simplicial.agents.training"
_RLLIB_INSTALL = 'pip install "keras-simplicial[agents]" (TensorFlow, Ray RLlib)'

ENGINES = {
    engine.name: engine
    for engine in (
        Engine(
            name="rllib-old",
            description="IMPALA on RLlib's old API stack, Keras on TensorFlow (the reference)",
            keras_backend="tensorflow",
            requires=("tensorflow", "ray"),
            install=_RLLIB_INSTALL,
            configure=f"{_PACKAGE}.impala:impala_config",
            open=f"{_PACKAGE}.train:open_rllib",
            checkpoint_marker="policies",
            saved_weights=f"{_PACKAGE}.checkpoints:saved_policy_weights",
            api_stack="old",
        ),
        Engine(
            name="rllib-new",
            description="IMPALA on RLlib's new API stack, Keras on PyTorch",
            keras_backend="torch",
            requires=("tensorflow", "ray", "torch"),
            install=_RLLIB_INSTALL + " and PyTorch",
            configure=f"{_PACKAGE}.impala_torch:torch_impala_config",
            open=f"{_PACKAGE}.train:open_rllib",
            checkpoint_marker="learner_group",
            saved_weights=f"{_PACKAGE}.checkpoints:saved_module_weights",
            api_stack="new",
        ),
        Engine(
            name="keras",
            description="IMPALA in one process without Ray, on the process's Keras backend "
            "(TensorFlow by default, JAX on a GPU, or PyTorch)",
            keras_backend=None,
            requires=("keras", "gymnasium"),
            install="pip install keras gymnasium, and the backend: tensorflow, "
            '"jax[cuda12]" or torch',
            configure=f"{_PACKAGE}.keras_engine:engine_settings",
            open=f"{_PACKAGE}.keras_engine:open_keras_engine",
            checkpoint_marker="keras_engine.json",
            saved_weights=f"{_PACKAGE}.keras_engine:saved_weights",
        ),
    )
}
ENGINE_NAMES = tuple(ENGINES)
#: The engine of each RLlib API stack, for `--api-stack` and the run.json files written before
#: `engine` existed (they hold `api_stack`).
API_STACK_ENGINES = {"old": "rllib-old", "new": "rllib-new"}


def engine_named(name):
    """The `Engine` named `name`; a `ValueError` naming the accepted ones otherwise."""
    if name not in ENGINES:
        raise ValueError(f"engine (--engine) must be one of {list(ENGINE_NAMES)}, got {name!r}.")
    return ENGINES[name]


def engine_of_checkpoint(checkpoint):
    """The `Engine` that wrote `checkpoint` (a directory), or None when none did."""
    return next((engine for engine in ENGINES.values() if engine.holds(checkpoint)), None)
