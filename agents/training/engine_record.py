"""`Engine`: the record of one engine that trains a run, what `train`, the checkpoint readers and
the command line look up instead of asking which engine at every turn.

Each engine's record lives in its own room, beside its code (`keras_engine/__init__.py`,
`rllib/__init__.py`); `engines.ENGINES` gathers them. A record's functions import their engine's
modules when called, so reading the records (the command line's `--help`, the run's arguments)
needs neither TensorFlow nor Ray. This module imports nothing of the package.
"""

import dataclasses
import importlib.util
import os
from pathlib import Path
from typing import Callable, Optional

#: The Keras backend an engine without a backend of its own runs on when KERAS_BACKEND is not
#: set: on a CPU the TensorFlow step is the fastest of the three (docs/benchmarks.md, "The Keras
#: engine").
DEFAULT_KERAS_BACKEND = "tensorflow"


class EngineUnavailable(ImportError):
    """An engine whose modules this Python lacks; its message says, in one line, what to
    install."""


@dataclasses.dataclass(frozen=True)
class Engine:
    """One engine that trains a run.

    Attributes:
        name: the value of `RunArguments.engine` (`--engine`).
        description: one line for `--help` and the docs.
        keras_backend: the Keras backend its processes must run (set before Keras is imported),
            or None: the process's own (`KERAS_BACKEND`, else `DEFAULT_KERAS_BACKEND`).
        requires: the modules it imports (a missing one is named by `require`).
        install: what to install when one is missing.
        configure: `(arguments) -> config`: builds its configuration and checks every argument
            (`ValueError` naming the one that is wrong).
        open: `(arguments, config, checkpoint, address) -> trainer` (a `train.Trainer`), restored
            from `checkpoint` when given.
        checkpoint_marker: a path only its checkpoints hold (relative to the checkpoint).
        saved_weights: `(checkpoint, keras_model) -> weights` in `keras_model.weights` order.
        api_stack: RLlib's API stack it trains on ("old", "new"), None for none.
        masks_blocked_moves: whether it can mask the board's blocked moves out of the policy
            (`--mask-blocked-moves`, with the batched sampler).
        load_policy: `(checkpoint) -> policy` where its checkpoints restore as a policy object
            of their own (the old stack's RLlib TF2 `Policy`), None where they hold Keras
            weights only (`checkpoints.SavedKerasPolicy` plays those).
        starts_from_policy: whether a new run can start from a saved policy's weights
            (`--init-policy`).
    """

    name: str
    description: str
    keras_backend: Optional[str]
    requires: tuple
    install: str
    configure: Callable
    open: Callable
    checkpoint_marker: str
    saved_weights: Callable
    api_stack: Optional[str] = None
    masks_blocked_moves: bool = False
    load_policy: Optional[Callable] = None
    starts_from_policy: bool = False

    def process_backend(self):
        """The Keras backend a process training with this engine runs."""
        return self.keras_backend or os.environ.get("KERAS_BACKEND", DEFAULT_KERAS_BACKEND)

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

    def holds(self, checkpoint):
        """Whether `checkpoint` (a directory) was written by this engine."""
        return (Path(checkpoint) / self.checkpoint_marker).exists()
