"""IMPALA set up the way the paper trained its agents: Table 1's hyperparameters, the presets of
`keras-simplicial train --preset`, and `impala_config`, which puts them together.

    config = impala_config("BridgeBoxWorld-v0", "simplicial")
    algo = config.build_algo()

Everything is an ordinary RLlib `IMPALAConfig` on the old API stack (`framework="tf2"`, a
`TFModelV2`), so users override it the RLlib way: keyword arguments here, or `overrides`, a dict of
`IMPALAConfig` attribute names (what `--config '<json>'` passes).
"""

import queue

from ray.rllib.algorithms.impala import IMPALA, IMPALAConfig
from ray.rllib.policy.sample_batch import MultiAgentBatch

from keras_simplicial.agents.model.architecture import AGENT_KINDS, agent_hyperparameters
from keras_simplicial.agents.model.rllib_model import (
    MODEL_NAMES,
    register_agent_models,
    split_model_config,
)
from keras_simplicial.agents.ranges import (
    Boolean,
    Integer,
    OneOf,
    OrNone,
    Real,
    Schedule,
    check_ranges,
)
from keras_simplicial.agents.training.curve import SMOOTHING_EPISODES
from keras_simplicial.agents.training.metrics import WinRateCallbacks
from keras_simplicial.agents.training.rllib_envs import register_envs
from keras_simplicial.agents.training.run_arguments import (
    CLIP_EACH_VARIABLE,
    DEFAULT_NUM_ENV_RUNNERS,
    DEFAULT_NUM_ENVS_PER_ENV_RUNNER,
    DEFAULT_SAMPLER,
    SAMPLERS,
)
from keras_simplicial.envs import BRIDGE_BOX_WORLD_ID, ENV_IDS

# Table 1, plus what the paper's original code set and the paper does not print: the global norm
# of the gradient clipped at 40 (`CLIP_EACH_VARIABLE` false; RLlib 2.60's old stack would clip each
# variable's gradient at 40 instead), a value-loss coefficient of 0.5 and V-trace's importance
# weights clipped at 1.0. RLlib's tf2 RMSprop (tf.keras) updates x <- x - lr * g / sqrt(r + eps)
# with r <- decay * r + (1 - decay) * g^2: the form of Appendix D, with eps = 0.1 inside the root.
PAPER_IMPALA_HYPERPARAMETERS = {
    "entropy_coeff": 5e-3,
    "gamma": 0.99,
    "rollout_fragment_length": 40,
    "train_batch_size": 1280,
    "lr": 2e-4,
    "opt_type": "rmsprop",
    "momentum": 0.0,
    "epsilon": 0.1,
    "decay": 0.99,
    "grad_clip": 40.0,
    CLIP_EACH_VARIABLE: False,
    "vf_loss_coeff": 0.5,
    "vtrace_clip_rho_threshold": 1.0,
    "vtrace_clip_pg_rho_threshold": 1.0,
}


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
            from keras_simplicial.agents.training.diagnostics import DiagnosticImpalaTF2Policy

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


# `keras-simplicial train --preset easy` (what `make train` runs): BoxWorld reduced to its core,
# one loose key and the Gem box (solution length 1, no distractors) on a 3 x 6 board, at most 30
# steps (wandering counts as a loss; a uniformly random policy's win rate is measured beside every
# sweep). Tuned so both agents solve it on every seed (docs/benchmarks.md, "Learning the easy
# preset"; how: docs/history.md):
# - 320-step batches of 10-step unrolls, each trained on twice (`num_epochs`): many updates per
#   environment step on 2 cores;
# - Table 1's RMSProp (eps 0.1 inside the root) at 5e-4: Adam at 1e-3 made the policy swing
#   between iterations and forget where the player is;
# - gamma 0.9: with gamma 0.99 a Gem 5 or 10 steps away is worth nearly the same, so the value
#   and the advantages barely depend on the player's position; the policy stayed the same on every
#   tile for 2M steps (`keras-simplicial policy-map`). Episodes last at most 30 steps here;
# - the learning rate falls linearly to a tenth over the first 600,000 environment steps (IMPALA's
#   linear annealing, Espeholt et al. 2018, to a floor): at a constant 5e-4 solved policies lost
#   half their wins within 10,000 steps, late in the run, and a saved snapshot often played far
#   worse than the iteration's training win rate. The V-trace losses are sums over the batch, so
#   after solving the gradients stayed at the clip of 40 and updates kept their size.
# The acceptance runs in docs/benchmarks.md clipped each variable's gradient at 40 (RLlib 2.60's
# default); new runs clip the global norm, as the paper's code did (`PAPER_IMPALA_HYPERPARAMETERS`).
PRESETS = {
    "easy": {
        "env": "BoxWorld-v0",
        "env_config": {
            "rows": 3,
            "cols": 6,
            "max_solution_length": 1,
            "max_distractors": 0,
            "max_steps": 30,
        },
        "overrides": {
            "rollout_fragment_length": 10,
            "train_batch_size": 320,
            "num_epochs": 2,
            "opt_type": "rmsprop",
            "lr": 5e-4,
            "lr_schedule": [[0, 5e-4], [600_000, 5e-5]],  # environment steps
            "epsilon": 0.1,
            "decay": 0.99,
            "momentum": 0.0,
            "gamma": 0.9,
            "entropy_coeff": 0.01,
            # A metrics row (and a chance of a best checkpoint) every second, not
            # IMPALA's default 10 s.
            "min_time_s_per_iteration": 1,
        },
    },
    "paper": {"env": "BridgeBoxWorld-v0", "env_config": {}, "overrides": {}},
}
# `bridge-small` (`make reproduce-small`, docs/reproduction.md): bridge BoxWorld shrunk so that a
# run of 3M steps fits under an hour of 2 cores (docs/reproduction.md, "Per run"). The paper's 7 x 9
# board becomes 5 x 6 (4 key positions instead of 9, the Gem box always at the first; N = 15
# entities instead of 40: the 5 x 7 observation after two 2x2 valid convolutions is 3 x 5), solution
# length 1 instead of 1-3 (puzzle types (1,0,0) and (1,1,2), the type whose solving makes the
# paper's 0.85 plateau; a bridge in half of the episodes as in the paper), at most 40 steps instead
# of no limit (the report's set-up gives the oracle's shortest plans beside the limit, and a
# uniformly random policy's win rate). On 7 x 6 with solution lengths 1-2 (all seven types of
# length <= 2) the relational agent did not leave the random policy in 700,000 steps
# (docs/history.md, "Choosing bridge-small"). The easy preset's recipe, its learning rate annealed
# over a run's 3M steps instead of 600,000 (`keras-simplicial reproduce` stretches the schedule to
# the run's length when it is given another: `lr_schedule_over`).
PRESETS["bridge-small"] = {
    "env": "BridgeBoxWorld-v0",
    "env_config": {"rows": 5, "cols": 6, "max_solution_length": 1, "max_steps": 40},
    "overrides": {
        **PRESETS["easy"]["overrides"],
        "lr_schedule": [[0, 5e-4], [3_000_000, 5e-5]],  # environment steps
    },
}


# `bridge-medium`: the smallest bridge BoxWorld where the bridge's logic matters, the scale of the
# comparison in docs/bridge-medium.md. Solution lengths 1-2 (all seven puzzle types of length
# <= 2: at length 2 the bridge can share its lock colour with the correct top box, and in some
# types only the source/sink rule of Remark B.1 tells which box is the bridge), a bridge in half
# of the episodes, the paper's 20 colours, on the smallest board that holds 6 key positions:
# 7 x 6 (N = 25 entities). No step limit, as in the paper: a loss is then a wrong box, never
# wandering, and uniformly random play finds the Gem in about 0.74 of episodes (with a 60-step
# cap 0.02, with 120 steps 0.12: most of its episodes would end by the cap). The easy preset's
# recipe with two changes:
# - gamma 0.97: shortest length-2 plans take about 23 steps, and a Gem 40 steps away is still
#   worth 0.97^40 * 10 = 3 keys' reward (with gamma 0.9 a relational probe of 2.4M steps never
#   left random play: a Gem hundreds of steps away is invisible), while a step still costs 3% of
#   the value (with the paper's 0.99 the easy preset's value barely depended on position);
# - the learning rate falls from 5e-4 to 5e-5 over the first 20M environment steps, fixed in
#   absolute steps: a pilot and longer runs anneal alike up to any step they share.
PRESETS["bridge-medium"] = {
    "env": "BridgeBoxWorld-v0",
    "env_config": {"rows": 7, "cols": 6, "max_solution_length": 2},
    "overrides": {
        **PRESETS["easy"]["overrides"],
        "gamma": 0.97,
        "lr_schedule": [[0, 5e-4], [20_000_000, 5e-5]],  # environment steps
    },
}


def preset_overrides(preset, overrides=None):
    """The IMPALA overrides of a `PRESETS` entry with `overrides` (e.g. `--config`) on top.

    A learning rate given alone replaces the preset's schedule too: RLlib ignores `lr` whenever
    `lr_schedule` is set, so `{"lr": 1e-4}` would otherwise change nothing.
    """
    overrides = dict(overrides or {})
    merged = {**preset["overrides"], **overrides}
    if "lr" in overrides and "lr_schedule" not in overrides:
        merged.pop("lr_schedule", None)
    return merged


def lr_schedule_over(preset, timesteps):
    """The preset's `lr_schedule` with its steps scaled so that it ends at `timesteps` (a run of
    another length anneals over the whole run); None when the preset has no schedule."""
    schedule = preset["overrides"].get("lr_schedule")
    if not schedule:
        return None
    end = schedule[-1][0]
    return [[round(step * timesteps / end), lr] for step, lr in schedule]


# The valid range of each `IMPALAConfig` attribute that has one, checked before anything starts
# (RLlib trains on with a negative learning rate, a gamma above 1 or a zero batch).
_POSITIVE = Real(low=0, low_open=True)
_NON_NEGATIVE = Real(low=0)
CONFIG_RANGES = {
    "lr": _POSITIVE,
    "lr_schedule": Schedule(_POSITIVE),
    "gamma": Real(low=0, high=1, low_open=True),
    "entropy_coeff": _NON_NEGATIVE,
    "entropy_coeff_schedule": Schedule(_NON_NEGATIVE),
    "opt_type": OneOf(("adam", "rmsprop")),
    "epsilon": _POSITIVE,
    "decay": Real(low=0, high=1, high_open=True),
    "momentum": Real(low=0, high=1, high_open=True),
    "grad_clip": OrNone(_POSITIVE),
    CLIP_EACH_VARIABLE: Boolean(),
    "vf_loss_coeff": _NON_NEGATIVE,
    "vtrace_clip_rho_threshold": _POSITIVE,
    "vtrace_clip_pg_rho_threshold": _POSITIVE,
    "train_batch_size": Integer(1),
    "rollout_fragment_length": Integer(1),
    "num_epochs": Integer(1),
    "minibatch_buffer_size": Integer(1),
    "learner_queue_size": Integer(1),
    "learner_queue_timeout": _POSITIVE,
    "replay_proportion": _NON_NEGATIVE,
    "replay_buffer_num_slots": Integer(0),
    "broadcast_interval": Integer(1),
    "min_time_s_per_iteration": OrNone(_NON_NEGATIVE),
    "min_sample_timesteps_per_iteration": Integer(0),
    "metrics_num_episodes_for_smoothing": Integer(1),
    "num_env_runners": Integer(0),
    "num_envs_per_env_runner": Integer(1),
}


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


def impala_config(
    env=BRIDGE_BOX_WORLD_ID,
    agent="simplicial",
    *,
    env_config=None,
    model_overrides=None,
    num_env_runners=DEFAULT_NUM_ENV_RUNNERS,
    num_envs_per_env_runner=DEFAULT_NUM_ENVS_PER_ENV_RUNNER,
    seed=None,
    overrides=None,
    sampler=DEFAULT_SAMPLER,
):
    """IMPALA with the paper's hyperparameters for `agent` on `env`.

    Like the paper's code, it clips the global norm of the gradient at `grad_clip`;
    `overrides={"_tf_policy_handles_more_than_one_loss": True}` clips each variable's gradient
    separately instead (RLlib 2.60's default, what runs trained before this was recorded).

    Args:
        env: an id of `ENV_IDS`.
        agent: "relational" or "simplicial".
        env_config: constructor arguments of the environment (e.g. `{"max_solution_length": 1}`).
        model_overrides: architecture overrides for `build_agent_model` (e.g. `{"num_heads": 4}`),
            and `jit_compile` (default True: the model runs as one XLA computation).
        num_env_runners: rollout worker processes (the paper: 63 per machine); 0 (default)
            samples in the driver, beside the learner thread.
        num_envs_per_env_runner: boards each runner steps as one batch (default 64; the
            paper: 1).
        seed: seeds the env runners and the model initialisation.
        overrides: further `IMPALAConfig` attributes, e.g. `{"lr": 1e-4}`.
        sampler: "batched" (default: `BatchedEnvRunner` steps each runner's boards as one
            batch and computes the episode metrics itself) or "rllib" (RLlib's `SyncSampler`
            over one gymnasium env per board, with every RLlib episode callback).

    Returns:
        An `IMPALAConfig` on the old API stack with `framework="tf2"`.
    """
    if agent not in AGENT_KINDS:
        raise ValueError(f"agent must be one of {AGENT_KINDS}, got {agent!r}.")
    if env not in ENV_IDS:
        raise ValueError(f"env must be one of {ENV_IDS}, got {env!r}.")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}.")
    if int(num_env_runners) < 0:
        raise ValueError(f"num_env_runners must be >= 0, got {num_env_runners}.")
    if int(num_envs_per_env_runner) < 1:
        raise ValueError(f"num_envs_per_env_runner must be >= 1, got {num_envs_per_env_runner}.")
    architecture, _ = split_model_config(model_overrides)
    agent_hyperparameters(agent, **architecture)  # unknown or bad overrides fail here, named
    register_envs()
    register_agent_models()

    config = (
        IMPALAConfig(algo_class=ResilientIMPALA)
        .api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
        .framework("tf2", eager_tracing=True)
        .environment(env, env_config=dict(env_config or {}))
        .env_runners(
            num_env_runners=int(num_env_runners),
            num_envs_per_env_runner=int(num_envs_per_env_runner),
            rollout_fragment_length=PAPER_IMPALA_HYPERPARAMETERS["rollout_fragment_length"],
        )
        .training(
            **{
                k: v
                for k, v in PAPER_IMPALA_HYPERPARAMETERS.items()
                if k not in ("rollout_fragment_length", CLIP_EACH_VARIABLE)
            },
            model={
                "custom_model": MODEL_NAMES[agent],
                "custom_model_config": dict(model_overrides or {}),
            },
        )
        .experimental(**{CLIP_EACH_VARIABLE: PAPER_IMPALA_HYPERPARAMETERS[CLIP_EACH_VARIABLE]})
        # How long the learner thread waits for a batch before it looks at its stop flag again
        # (RLlib's default, 300 s, would hold `algorithm.stop()` that long; see `cleanup`).
        .training(learner_queue_timeout=1.0)
        .resources(num_gpus=0)
        .callbacks(WinRateCallbacks)
        .reporting(metrics_num_episodes_for_smoothing=SMOOTHING_EPISODES)
        .fault_tolerance(restart_failed_env_runners=True)
        .debugging(seed=seed, log_level="ERROR")
    )
    if sampler == "batched":
        from keras_simplicial.agents.training.batched_env_runner import BatchedEnvRunner

        config.env_runners(env_runner_cls=BatchedEnvRunner)
    if overrides:
        apply_overrides(config, overrides)
    return config
