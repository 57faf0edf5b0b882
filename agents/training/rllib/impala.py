"""IMPALA set up the way the paper trained its agents: `impala_config` puts a run's arguments
(`RunArguments`) on Table 1's hyperparameters and the presets (`presets.py`), and
`ResilientIMPALA` is the algorithm it builds.

    config = impala_config(RunArguments.from_preset("easy", "relational", seed=1))
    config = impala_config(env="BridgeBoxWorld-v0", agent="simplicial")   # RunArguments(...)
    algo = config.build_algo()

Everything is an ordinary RLlib `IMPALAConfig` on the old API stack (`framework="tf2"`, a
`TFModelV2`), so users override it the RLlib way: `overrides`, a dict of `IMPALAConfig` attribute
names (what `--config '<json>'` passes).
"""

import dataclasses
import queue

import tensorflow  # noqa: F401  (before RLlib: see agents/__init__.py)
from ray.rllib.algorithms.impala import IMPALA, IMPALAConfig
from ray.rllib.policy.sample_batch import MultiAgentBatch

from keras_simplicial.agents.model.architecture import agent_hyperparameters
from keras_simplicial.agents.model.rllib_model import (
    MASK_BLOCKED_MOVES,
    MODEL_NAMES,
    register_agent_models,
)
from keras_simplicial.agents.ranges import check_ranges
from keras_simplicial.agents.training.curve import SMOOTHING_EPISODES
from keras_simplicial.agents.training.presets import (
    CLIP_EACH_VARIABLE,
    CONFIG_RANGES,
    PAPER_IMPALA_HYPERPARAMETERS,
)
from keras_simplicial.agents.training.rllib import OLD_STACK_ENGINE
from keras_simplicial.agents.training.rllib.callbacks import WinRateCallbacks
from keras_simplicial.agents.training.rllib.envs import register_envs, validate_env_config
from keras_simplicial.agents.training.run_arguments import RunArguments, with_engine_of_api_stack


class ResilientIMPALA(IMPALA):
    """IMPALA that keeps training while its only env runner is being restarted.

    While no remote env runner is healthy, RLlib 2.60 samples with the local env runner (id 0),
    then asks for a weight sync of "remote worker 0" and fails with `Unknown actor id: 0`. The
    local env runner already holds the learner's weights, so it is left out of the sync.
    """

    def _update_workers_old_api_stack(self, workers_that_need_updates, policy_ids=None):
        remote = {worker_id for worker_id in workers_that_need_updates if worker_id != 0}
        super()._update_workers_old_api_stack(
            workers_that_need_updates=remote, policy_ids=policy_ids
        )

    def _concatenate_batches_and_pre_queue(self, batches):
        """Cuts samples larger than the train batch into train batches, at board boundaries.

        RLlib's old stack queues whatever one `sample()` returns as one train batch once it is
        at least `train_batch_size`; a runner of 64 boards x 10 steps would thus train on 640
        steps per update when 320 were asked for. A batched runner's sample holds each board's
        unroll in consecutive rows (`BatchedEnvRunner`), so cutting every `train_batch_size`
        rows (a multiple of the unroll) keeps whole unrolls together.
        """
        size, unroll = int(self.config.train_batch_size), int(self.config.rollout_fragment_length)
        if self.config.env_runner_cls is None:  # RLlib's sampler: no board-major layout
            return super()._concatenate_batches_and_pre_queue(batches)
        pieces = []
        for batch in batches:
            policy_batches = getattr(batch, "policy_batches", {})
            if (
                len(policy_batches) == 1
                and batch.count > size
                and size % unroll == 0
                and batch.count % size == 0
            ):
                ((policy_id, rows),) = policy_batches.items()
                pieces += [
                    MultiAgentBatch({policy_id: rows.slice(start, start + size)}, size)
                    for start in range(0, batch.count, size)
                ]
            else:
                pieces.append(batch)
        super()._concatenate_batches_and_pre_queue(pieces)

    def _place_processed_samples_on_learner_thread_queue(self):
        """Queues every train batch, waiting while the learner's queue is full.

        RLlib waits only for the last batch of an iteration and drops the others when the queue
        is full (`num_times_learner_queue_full`): with several train batches per sample, as a
        batched runner gives, half the sampled steps could be thrown away. Waiting instead
        makes sampling keep the learner's pace.
        """
        for batch in self.data_to_place_on_learner:
            while True:
                if not self._learner_thread.is_alive():
                    raise RuntimeError("The learner thread died while training!")
                try:
                    self._learner_thread.inqueue.put(batch, block=True, timeout=1.0)
                    break
                except queue.Full:
                    continue
            self._counters["num_samples_added_to_queue"] += (
                batch.agent_steps() if self.config.count_steps_by == "agent_steps" else batch.count
            )
        self.data_to_place_on_learner.clear()

    @classmethod
    def get_default_policy_class(cls, config):
        """IMPALA's TF2 policy that also reports gradient norms per model part (tf2 only)."""
        if config.framework_str == "tf2":
            from keras_simplicial.agents.training.rllib.diagnostic_policy import (
                DiagnosticImpalaTF2Policy,
            )

            return DiagnosticImpalaTF2Policy
        return super().get_default_policy_class(config)

    def cleanup(self):
        """Stops the learner thread between two updates, then what RLlib stops.

        RLlib 2.60 never stops the old stack's learner thread, a daemon: if the interpreter exits
        while it is inside a TensorFlow update, the process aborts (SIGABRT) after all its work
        is done. The thread checks `stopped` after each update and each empty-queue wait of
        `learner_queue_timeout` seconds (`impala_config` sets 1 s), so the join is short.
        """
        learner = getattr(self, "_learner_thread", None)
        if learner is not None and learner.is_alive():
            learner.stopped = True
            learner.join(timeout=float(self.config.learner_queue_timeout) + 120.0)
        super().cleanup()


def apply_overrides(config, overrides):
    """Sets `IMPALAConfig` attributes from a dict, refusing names the config does not have and
    values outside `CONFIG_RANGES`."""
    if not isinstance(overrides, dict):
        raise ValueError(f"config overrides must be a JSON object, got {type(overrides).__name__}.")
    unknown = sorted(key for key in overrides if not hasattr(config, key))
    if unknown:
        raise ValueError(f"Unknown IMPALA config key(s) {unknown} in --config.")
    check_ranges(overrides, CONFIG_RANGES, "--config")
    config.update_from_dict(overrides)
    return config


def impala_config(arguments=None, **fields):
    """IMPALA with the paper's hyperparameters for the run of `arguments`.

    Like the paper's code, it clips the global norm of the gradient at `grad_clip`;
    `overrides={"_tf_policy_handles_more_than_one_loss": True}` clips each variable's gradient
    separately instead (RLlib 2.60's default, what runs trained before this was recorded).

    Args:
        arguments: a `RunArguments` (each of its fields is described there); None:
            `RunArguments(**fields)`.
        **fields: fields of `RunArguments`, e.g. `agent="relational", num_env_runners=4`, which
            replace those of `arguments`.

    Returns:
        An `IMPALAConfig` on the old API stack with `framework="tf2"`; every argument is
        checked before it returns (`ValueError` naming the one that is wrong).
    """
    fields = with_engine_of_api_stack(fields)
    if arguments is None:
        arguments = RunArguments(**fields)
    elif not isinstance(arguments, RunArguments):
        raise ValueError(f"arguments must be a RunArguments, got {arguments!r}.")
    elif fields:
        arguments = dataclasses.replace(arguments, **fields)
    if arguments.engine != OLD_STACK_ENGINE.name:
        raise ValueError(
            "impala_config builds IMPALA on RLlib's old API stack (the engine "
            f"{OLD_STACK_ENGINE.name!r}), but engine (--engine) is {arguments.engine!r}: its own "
            f"config builder is engines.ENGINES[{arguments.engine!r}].configure."
        )
    validate_env_config(arguments.env, arguments.env_config)
    agent_hyperparameters(arguments.agent, **arguments.architecture)  # bad overrides fail, named
    register_envs()
    register_agent_models()

    config = (
        IMPALAConfig(algo_class=ResilientIMPALA)
        .api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
        .framework("tf2", eager_tracing=True)
        .environment(arguments.env, env_config=dict(arguments.env_config))
        .env_runners(
            num_env_runners=arguments.num_env_runners,
            num_envs_per_env_runner=arguments.num_envs_per_env_runner,
            rollout_fragment_length=PAPER_IMPALA_HYPERPARAMETERS["rollout_fragment_length"],
        )
        .training(
            **{
                k: v
                for k, v in PAPER_IMPALA_HYPERPARAMETERS.items()
                if k not in ("rollout_fragment_length", CLIP_EACH_VARIABLE)
            },
            model={
                "custom_model": MODEL_NAMES[arguments.agent],
                "custom_model_config": {
                    **arguments.model_overrides,
                    **({MASK_BLOCKED_MOVES: True} if arguments.mask_blocked_moves else {}),
                },
            },
        )
        .experimental(**{CLIP_EACH_VARIABLE: PAPER_IMPALA_HYPERPARAMETERS[CLIP_EACH_VARIABLE]})
        # How long the learner thread waits for a batch before it looks at its stop flag again
        # (RLlib's default, 300 s, would hold `algorithm.stop()` that long; see `cleanup`).
        .training(learner_queue_timeout=1.0)
        .resources(num_gpus=0)
        .callbacks(WinRateCallbacks)
        .reporting(metrics_num_episodes_for_smoothing=SMOOTHING_EPISODES)
        # A crashed env runner comes back after a second, not RLlib's default minute.
        .fault_tolerance(restart_failed_env_runners=True, delay_between_env_runner_restarts_s=1.0)
        .debugging(seed=arguments.seed, log_level="ERROR")
    )
    if arguments.sampler == "batched":
        from keras_simplicial.agents.training.rllib.batched_env_runner import BatchedEnvRunner

        config.env_runners(env_runner_cls=BatchedEnvRunner)
    apply_overrides(config, arguments.overrides)
    return config
