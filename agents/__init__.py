"""Relational and simplicial agents (Section 4 of the paper), IMPALA training on Ray RLlib, and the
tools to look inside them.

    model/       the agent models (Keras 3), their RLlib wrapper, the agent with its attention
    rollout.py   how an agent plays a batch of boards (training's checks and the analysis alike)
    training/    IMPALA set-up and presets, the training loop, run directories and checkpoints
    analysis/    evaluation, explanations, the logic probe and every figure of one run
    imitation/   supervised learning of the step-optimal oracle's moves (DAgger), the
                 held-keys probe
    experiments/ sweeps of agents x seeds and the paper's comparison with its report
    commands/    each `keras-simplicial` command: its arguments beside the function that runs it
    atomic_files.py, ranges.py  the one atomic write; the valid ranges of hyperparameters
    provenance.py  the package version and git commit that a result file records

Imports run one way: training imports model and rollout; analysis imports training; imitation
imports analysis and training; experiments imports analysis and training; commands imports any of
them; none imports back, and no two modules import each other however far round.

The names below import from here (`from keras_simplicial.agents import build_agent_model`), each
when it is first used. Importing this package sets ``TF_USE_LEGACY_KERAS=1`` (unless the user set
it) before TensorFlow is imported: RLlib's TensorFlow policies build Keras-2 optimizers through
``tf.keras`` (``tf_keras``), while our models stay Keras 3. It imports nothing heavy itself, so
that the run's arguments (`training.run_arguments`) and the command line's parser load without
TensorFlow.

Every module that imports RLlib imports TensorFlow before it (tests/agents/test_layering.py checks
it): RLlib's `try_import_tf` turns TensorFlow's v2 behaviour off (eager execution, v2 shapes) when
it is the first to import TensorFlow, and our Keras 3 models need it on.
"""

import importlib
import importlib.abc
import importlib.util
import os
import sys

from keras_simplicial.extras import missing_extra

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_LAZY = {
    "AGENT_KINDS": "model.architecture",
    "PAPER_DEFAULTS": "model.architecture",
    "build_agent_model": "model.architecture",
    "KerasAgentModel": "model.rllib_model",
    "register_agent_models": "model.rllib_model",
    "AttentionAgent": "model.attention_agent",
    "entity_of_tile": "model.entities",
    "tile_of_entity": "model.entities",
    "impala_config": "training.rllib.impala",
    "PAPER_IMPALA_HYPERPARAMETERS": "training.presets",
    "PRESETS": "training.presets",
    "WinRateCallbacks": "training.rllib.callbacks",
    "RunArguments": "training.run_arguments",
    "TrainingCurve": "training.curve",
    "train": "training.train",
    "load_policy": "training.checkpoints",
    "load_attention_agent": "training.checkpoints",
    "play_episodes": "rollout",
    "play_episode": "analysis.episode",
    "evaluate_checkpoint": "analysis.evaluation",
    "explain_episode": "analysis.explanations",
    "logic_probe": "analysis.logic_probe",
    "plot_one_simplicial": "analysis.attention_figures",
    "plot_virtual_entities": "analysis.attention_figures",
    "plot_two_simplicial": "analysis.attention_figures",
    "save_episode_gif": "analysis.attention_figures",
    "plot_training_curves": "analysis.training_curves",
    "plot_per_type_win_rates": "analysis.win_rate_figures",
    "ReproduceOptions": "experiments.reproduce",
    "reproduce": "experiments.reproduce",
    "SweepOptions": "experiments.learning",
    "learning_sweep": "experiments.learning",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        try:
            module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        except ModuleNotFoundError as error:
            raise missing_extra(error, "agents", f"keras_simplicial.agents.{name}") from error
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Checkpoints pickle the classes of a run (the algorithm, its env runner, callbacks, policy and
# learner) by module path, so the modules that held them before the package was cut into model/,
# training/ and analysis/, and before RLlib's modules moved into training/rllib/, stay importable
# under their old names: old checkpoints still load and resume.
MOVED_MODULES = {
    "config": "training.rllib.impala",
    "batched_env_runner": "training.rllib.batched_env_runner",
    "callbacks": "training.rllib.callbacks",
    "diagnostics": "training.rllib.diagnostic_policy",
    "training.impala": "training.rllib.impala",
    "training.impala_torch": "training.rllib.impala_torch",
    "training.torch_learner": "training.rllib.torch_learner",
    "training.new_stack": "training.rllib.new_stack",
    "training.batched_env_runner": "training.rllib.batched_env_runner",
    "training.rllib_envs": "training.rllib.envs",
    "training.metrics": "training.rllib.callbacks",
    "training.diagnostics": "training.rllib.diagnostic_policy",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports `keras_simplicial.agents.<old>` as the module it moved to (`MOVED_MODULES`)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(__name__ + ".") and fullname[len(__name__) + 1 :] in MOVED_MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        old = spec.name[len(__name__) + 1 :]
        module = importlib.import_module(f"{__name__}.{MOVED_MODULES[old]}")
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module):
        # The import machinery has put the old name's spec on the module: give it its own back.
        module.__spec__ = self._own_spec


if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModuleFinder())
