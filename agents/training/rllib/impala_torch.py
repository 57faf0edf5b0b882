"""IMPALA on RLlib's new API stack with PyTorch: the same agents, presets and run arguments as
`impala_config` (old stack), for `RunArguments(engine="rllib-new")`.

    config = torch_impala_config(RunArguments.from_preset("easy", "relational", engine="rllib-new"))
    algo = config.build_algo()          # KERAS_BACKEND=torch before Keras is imported

What carries over, and how:

- the model: `KerasAgentRLModule`, the unchanged model of `build_agent_model` (every
  `--model-config` option; `jit_compile` has no effect on PyTorch);
- the recipe: Table 1 and the preset's overrides (`--config`), checked against
  `presets.CONFIG_RANGES` as on the old stack. RMSProp with epsilon inside the root and losses
  summed over the batch (`KerasAgentIMPALALearner`); `lr_schedule` and `entropy_coeff_schedule`
  (old-stack names, counted in environment steps) become the new stack's `lr` and
  `entropy_coeff` schedules, which count environment steps too; the gradient clip caps the
  global norm, or each variable's norm where the run's overrides say `CLIP_EACH_VARIABLE`;
- sampling: each env runner steps `num_envs_per_env_runner` boards with one forward pass per
  step. `sampler="batched"` gives it all its boards as one `BoxWorldVectorEnv` (one numpy
  core, gymnasium's vector entry point); `"rllib"` as separate gymnasium envs;
- the learner: one, in the driver (`num_learners=0`): with no remote env runner the driver
  samples, then updates;
- episode metrics: `win`, `win/type_a_b_c` and `ended/...` of every episode, as means over the
  last 200 episodes (`EpisodeOutcomeCallbacks`, as the old stack's custom metrics);
- fault tolerance: RLlib's own settings, no private method overridden: a failed env runner is
  restarted after a second (`restart_failed_env_runners`), and the driver's env runner has boards
  of its own (`create_env_on_local_worker`) to sample while none is healthy.
"""

import collections
import functools
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import gymnasium  # noqa: E402
import tensorflow  # noqa: E402, F401  (before RLlib: see agents/__init__.py)
from ray.rllib.algorithms.impala import IMPALAConfig  # noqa: E402
from ray.rllib.callbacks.callbacks import RLlibCallback  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402
from ray.tune.registry import register_env  # noqa: E402

from keras_simplicial.agents.model.architecture import agent_hyperparameters  # noqa: E402
from keras_simplicial.agents.model.torch_rl_module import (  # noqa: E402
    KerasAgentRLModule,
    require_torch_backend,
)
from keras_simplicial.agents.ranges import check_ranges  # noqa: E402
from keras_simplicial.agents.training.curve import SMOOTHING_EPISODES  # noqa: E402
from keras_simplicial.agents.training.metric_rows import episode_metrics  # noqa: E402
from keras_simplicial.agents.training.presets import (  # noqa: E402
    CLIP_EACH_VARIABLE,
    CONFIG_RANGES,
    PAPER_IMPALA_HYPERPARAMETERS,
)
from keras_simplicial.agents.training.rllib.envs import validate_env_config  # noqa: E402
from keras_simplicial.agents.training.rllib.torch_learner import KerasAgentIMPALALearner  # noqa: E402
from keras_simplicial.agents.training.run_arguments import (  # noqa: E402
    RunArguments,
    with_engine_of_api_stack,
)
from keras_simplicial.envs import ENV_IDS, OUTCOMES  # noqa: E402

# How each `--sampler` gives an env runner its boards (gymnasium's vectorization modes).
VECTORIZE_MODES = {"batched": "vector_entry_point", "rllib": "sync"}
# Where the episode metrics go in an env runner's results (`result["env_runners"][...]`).
CUSTOM_METRICS = "custom_metrics"
# Old-stack schedule names -> the new stack's setting that takes a schedule.
SCHEDULES = {"lr_schedule": "lr", "entropy_coeff_schedule": "entropy_coeff"}


def new_stack_env_id(env_id):
    """The name `env_id` is registered under for the new stack (`register_new_stack_envs`)."""
    return f"keras_simplicial:{env_id}"


def register_new_stack_envs():
    """Registers `make_boxworld` of every id of `ENV_IDS` with RLlib, as `new_stack_env_id`
    (the old stack's creators, `rllib_envs.register_envs`, make one board only)."""
    for env_id in ENV_IDS:
        register_env(new_stack_env_id(env_id), functools.partial(make_boxworld, env_id))


def make_boxworld(env_id, env_context):
    """The env creator of the new stack: one board of `env_id`, or with `num_envs` in
    `env_context` (gymnasium's vector entry point) that many as one `BoxWorldVectorEnv`."""
    import keras_simplicial.envs  # noqa: F401  (registers the ids in this process)

    kwargs = dict(env_context)
    num_envs = kwargs.pop("num_envs", None)
    if num_envs is None:
        return gymnasium.make(env_id, **kwargs)
    return gymnasium.make_vec(
        env_id, num_envs=int(num_envs), vectorization_mode="vector_entry_point", **kwargs
    )


class EpisodeWindow:
    """The means of `episode_metrics` over the last `size` finished episodes, each metric over
    the episodes that have it (as the old stack's custom metrics: `win/type_1_0_0` averages the
    (1,0,0) episodes of the window), kept as running sums.

    Args:
        size: how many episodes the window holds (`metrics_num_episodes_for_smoothing`).
    """

    def __init__(self, size):
        if int(size) < 1:
            raise ValueError(f"size must be >= 1, got {size!r}.")
        self.episodes = collections.deque(maxlen=int(size))
        self.sums = collections.Counter()
        self.counts = collections.Counter()

    def add(self, metrics):
        """Adds one episode's `{name: value}` (the oldest leaves a full window)."""
        if len(self.episodes) == self.episodes.maxlen:
            for name, value in self.episodes[0].items():
                self.sums[name] -= value
                self.counts[name] -= 1
        self.episodes.append(dict(metrics))
        for name, value in metrics.items():
            self.sums[name] += value
            self.counts[name] += 1

    def means(self):
        """`{name: mean over the window's episodes that have it}`."""
        return {name: self.sums[name] / count for name, count in self.counts.items() if count}


class EpisodeOutcomeCallbacks(RLlibCallback):
    """Logs `episode_metrics` of the finished episodes from their last info (new API stack),
    under `result["env_runners"]["custom_metrics"]`, as the old stack reports them: means over the
    last `metrics_num_episodes_for_smoothing` episodes of the env runner (`EpisodeWindow`).

    RLlib 2.60's `MetricsLogger` empties a mean's values each time an env runner reports (its
    `MeanStats.reduce`), so a value logged per episode would average only that iteration's
    episodes, however large its `window`; the window is kept here instead and its means are
    logged at the end of each `sample()`.
    """

    def __init__(self):
        super().__init__()
        self.window = None

    def on_episode_end(self, *, episode, env_runner=None, metrics_logger=None, **kwargs):
        info = episode.get_infos(-1) or {}
        ended_by = info.get("ended_by")
        if ended_by is not None and not isinstance(ended_by, str):  # the vector env's index
            ended_by = OUTCOMES[int(ended_by)] if int(ended_by) >= 0 else None
        puzzle_type = info.get("puzzle_type")
        if puzzle_type is not None:
            puzzle_type = tuple(int(part) for part in puzzle_type)
        if self.window is None:
            size = SMOOTHING_EPISODES
            if env_runner is not None:
                size = int(env_runner.config.metrics_num_episodes_for_smoothing)
            self.window = EpisodeWindow(size)
        self.window.add(episode_metrics(bool(info.get("is_success", False)), puzzle_type, ended_by))

    def on_sample_end(self, *, env_runner=None, metrics_logger=None, samples=None, **kwargs):
        if self.window is None or metrics_logger is None:
            return
        for name, value in self.window.means().items():
            metrics_logger.log_value((CUSTOM_METRICS, name), value, reduce="mean", window=1)


def new_stack_settings(overrides):
    """The `IMPALAConfig` settings of old-stack IMPALA overrides (checked against
    `CONFIG_RANGES` by the caller): a schedule replaces the value it schedules
    (`SCHEDULES`), and `CLIP_EACH_VARIABLE` becomes `grad_clip_by`."""
    settings = dict(overrides)
    for old, new in SCHEDULES.items():
        schedule = settings.pop(old, None)
        if schedule:
            settings[new] = [[int(step), float(value)] for step, value in schedule]
    settings["grad_clip_by"] = "norm" if settings.pop(CLIP_EACH_VARIABLE, False) else "global_norm"
    return settings


def torch_impala_config(arguments=None, **fields):
    """IMPALA on RLlib's new API stack (PyTorch) with the paper's hyperparameters for the run of
    `arguments`.

    Args:
        arguments: a `RunArguments` (each of its fields is described there); None:
            `RunArguments(engine="rllib-new", **fields)`.
        **fields: fields of `RunArguments` which replace those of `arguments`.

    Returns:
        An `IMPALAConfig` on the new API stack with `framework="torch"`; every argument is
        checked before it returns (`ValueError` naming the one that is wrong). Building it needs
        Keras on PyTorch (KERAS_BACKEND=torch, before Keras is imported).
    """
    import dataclasses

    fields = with_engine_of_api_stack(fields)
    if arguments is None:
        arguments = RunArguments(**{"engine": "rllib-new", **fields})
    elif not isinstance(arguments, RunArguments):
        raise ValueError(f"arguments must be a RunArguments, got {arguments!r}.")
    elif fields:
        arguments = dataclasses.replace(arguments, **fields)
    validate_env_config(arguments.env, arguments.env_config)
    agent_hyperparameters(arguments.agent, **arguments.architecture)  # bad overrides fail, named
    config = IMPALAConfig()
    unknown = sorted(key for key in arguments.overrides if not hasattr(config, key))
    if unknown:
        raise ValueError(f"Unknown IMPALA config key(s) {unknown} in --config.")
    check_ranges(arguments.overrides, CONFIG_RANGES, "--config")
    require_torch_backend()
    register_new_stack_envs()
    config = (
        config.api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .framework("torch")
        .environment(new_stack_env_id(arguments.env), env_config=dict(arguments.env_config))
        .env_runners(
            num_env_runners=arguments.num_env_runners,
            num_envs_per_env_runner=arguments.num_envs_per_env_runner,
            gym_env_vectorize_mode=VECTORIZE_MODES[arguments.sampler],
            # While no remote env runner is healthy (one is being restarted), RLlib 2.60's IMPALA
            # samples with the driver's env runner, which has no env unless asked for one:
            # "SingleAgentEnvRunner ... doesn't have an env! Can't call `sample()` on it."
            create_env_on_local_worker=True,
        )
        .learners(num_learners=0, learner_class=KerasAgentIMPALALearner)
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=KerasAgentRLModule,
                model_config={"kind": arguments.agent, **arguments.model_overrides},
            )
        )
        .callbacks(EpisodeOutcomeCallbacks)
        .reporting(metrics_num_episodes_for_smoothing=SMOOTHING_EPISODES)
        # A crashed env runner comes back after a second, not RLlib's default minute.
        .fault_tolerance(restart_failed_env_runners=True, delay_between_env_runner_restarts_s=1.0)
        .debugging(seed=arguments.seed, log_level="ERROR")
    )
    config.update_from_dict(
        new_stack_settings({**PAPER_IMPALA_HYPERPARAMETERS, **arguments.overrides})
    )
    return config
