"""The Keras engine's IMPALA settings: Table 1, the preset's overrides and `--config`, checked.

    settings = engine_settings(arguments)
    scheduled(settings["lr_schedule"], timestep)

The settings keep RLlib's names, so a preset or a `--config` reads the same on every engine; a
key this engine does not read (one of RLlib's alone) is refused by name.
"""

import numpy as np

from keras_simplicial.agents.ranges import check_ranges
from keras_simplicial.agents.training.curve import SMOOTHING_EPISODES
from keras_simplicial.agents.training.presets import CONFIG_RANGES, PAPER_IMPALA_HYPERPARAMETERS
from keras_simplicial.agents.training.run_arguments import RunArguments

#: The IMPALA settings the engine reads (RLlib's names), with what a run trains with unless its
#: overrides say otherwise: Table 1, RLlib's IMPALA defaults for the schedules, the epochs and the
#: iteration's minimums, and the project's window of episodes for the reported means.
ENGINE_SETTINGS = {
    **PAPER_IMPALA_HYPERPARAMETERS,
    "lr_schedule": None,
    "entropy_coeff_schedule": None,
    "num_epochs": 1,
    "min_time_s_per_iteration": 10,
    "min_sample_timesteps_per_iteration": 0,
    "metrics_num_episodes_for_smoothing": SMOOTHING_EPISODES,
}


def engine_settings(arguments):
    """The IMPALA settings of a run on the Keras engine: `ENGINE_SETTINGS` with the run's
    overrides on top, every one checked (`ValueError` naming the argument)."""
    if not isinstance(arguments, RunArguments):
        raise ValueError(f"arguments must be a RunArguments, got {arguments!r}.")
    from keras_simplicial.agents.model.architecture import agent_hyperparameters
    from keras_simplicial.envs import make_vector_env

    overrides = dict(arguments.overrides)
    unknown = sorted(set(overrides) - set(ENGINE_SETTINGS))
    if unknown:
        raise ValueError(
            f"--config: the keras engine does not read {unknown} (RLlib's settings); it reads "
            f"{sorted(ENGINE_SETTINGS)}."
        )
    check_ranges(overrides, CONFIG_RANGES, "--config")
    settings = {**ENGINE_SETTINGS, **overrides}
    if settings["lr_schedule"] is None:
        settings["lr_schedule"] = [[0, settings["lr"]]]
    if settings["entropy_coeff_schedule"] is None:
        settings["entropy_coeff_schedule"] = [[0, settings["entropy_coeff"]]]
    if arguments.num_env_runners != 0:
        raise ValueError(
            "num_env_runners (--num-env-runners) must be 0 with the keras engine: it acts in its "
            f"own process, on num_envs_per_env_runner boards; got {arguments.num_env_runners}."
        )
    if arguments.sampler != "batched":
        raise ValueError(
            "sampler (--sampler) must be 'batched' with the keras engine (it steps all boards "
            f"as one batch), got {arguments.sampler!r}."
        )
    unroll, size = settings["rollout_fragment_length"], settings["train_batch_size"]
    boards = arguments.num_envs_per_env_runner
    if size % unroll or (boards * unroll) % size:
        raise ValueError(
            f"train_batch_size ({size}) must be a multiple of rollout_fragment_length ({unroll}), "
            f"and divide the steps of one act, num_envs_per_env_runner (--num-envs) x "
            f"rollout_fragment_length = {boards} x {unroll}: e.g. --num-envs "
            f"{max(1, size // unroll)}."
        )
    make_vector_env(arguments.env, 1, arguments.env_config)  # a bad env config fails, named
    agent_hyperparameters(arguments.agent, **arguments.architecture)  # bad overrides fail, named
    return settings


def scheduled(schedule, timestep):
    """The value of a piecewise linear `schedule` ([[step, value], ...]) at `timestep`, held
    constant past its ends (RLlib's `PiecewiseSchedule` with the last value outside)."""
    steps = [float(point[0]) for point in schedule]
    values = [float(point[1]) for point in schedule]
    return float(np.interp(float(timestep), steps, values))
