"""`BatchedEnvRunner`: an old-stack RLlib env runner that steps all of its boards as one batch.

RLlib's `RolloutWorker` samples through `SyncSampler`: per step it walks every sub-environment in
Python (observation preprocessing, one agent collector per episode, callbacks, action unbatching).
On BoxWorld's small boards that bookkeeping, about 0.5 ms per board-step, costs more than the
model and the environment together (docs/benchmarks.md, "Training throughput (IMPALA, both
agents)"). This runner keeps RLlib's worker (policy, weight sync, fault tolerance, metrics
plumbing) and replaces only `sample()`:

    for t in 0 .. T-1:                       T = rollout_fragment_length, B = boards
        logits, value = model(obs_t)         one forward pass of all B boards
        (blocked moves' logits masked)       if the model masks them (`--mask-blocked-moves`)
        a_t ~ softmax(logits)                sampled in numpy (greedy if `explore=False`)
        step the core with a_t               one numpy step of all B boards
        reset the boards whose episode ended
    bootstrap value V(obs_T)                 the forward pass that also starts the next fragment

and returns the batch RLlib's sampler would (the same columns and dtypes), laid out board-major:
row `b * T + t` is board `b` at step `t`, so IMPALA's V-trace, which cuts the batch into columns
of T rows (`_make_time_major`), sees each board's T consecutive steps. `terminateds` marks
episode ends (V-trace stops the return there), as in RLlib; a time-limit truncation continues
into the next episode's value, as RLlib's V-trace does inside a fragment.

A model that masks the moves the board blocks (`KerasAgentModel.mask_blocked_moves`) gets each
step's allowed moves (`BoxWorldCore.allowed_moves`) in the batch column `ALLOWED_MOVES`, which its
forward pass reads in the learner; here the same mask is applied before sampling, so the behaviour
logits V-trace reads (`ACTION_DIST_INPUTS`) are the masked ones too.

Episode metrics are computed from the core's arrays, not by callbacks: every finished episode
reports its return, length and `episode_metrics` (`board_episodes.BoardEpisodes`: win, per puzzle
type, why it ended), the metrics `WinRateCallbacks` gives RLlib's sampler, so results, CSVs and
plots read the same.
Per-step timings land in `result["env_runners"]["sampler_perf"]` under RLlib's own names
(`mean_env_wait_ms`, `mean_inference_ms`, `mean_action_processing_ms`,
`mean_raw_obs_processing_ms`), per step of all boards.
"""

import time

import numpy as np
import tensorflow as tf
from ray.rllib.evaluation.metrics import RolloutMetrics
from ray.rllib.evaluation.rollout_worker import RolloutWorker
from ray.rllib.policy.sample_batch import DEFAULT_POLICY_ID, SampleBatch

from keras_simplicial.agents.model.rllib_model import ALLOWED_MOVES
from keras_simplicial.agents.rollout import mask_logits, sample_actions
from keras_simplicial.agents.training.board_episodes import BoardEpisodes
from keras_simplicial.agents.training.rllib.envs import BoxWorldRLlibVectorEnv

# Seeds of board i of env runner w: RLlib's per-env rule (`worker * 1000 + vector_index + seed`),
# so that both paths start from the same puzzles.
SEED_STRIDE_PER_RUNNER = 1000


class BatchedEnvRunner(RolloutWorker):
    """A `RolloutWorker` whose `sample()` steps `num_envs_per_env_runner` boards as one batch.

    Use it through `impala_config(..., sampler="batched")` (the default). Its env is a
    `BoxWorldRLlibVectorEnv` built from the algorithm config's `env`, `env_config` and
    `num_envs_per_env_runner`.
    """

    def __init__(self, *, env_creator, config, **kwargs):
        env_id, num_boards = config.env, int(config.num_envs_per_env_runner)

        def batched_env_creator(env_context):
            return BoxWorldRLlibVectorEnv(env_id, num_boards, dict(env_context))

        super().__init__(env_creator=batched_env_creator, config=config, **kwargs)
        self._metrics = []
        self._timings = {}
        if self.env is None:  # the driver's local runner when remote runners sample
            return
        self.core = self.env.core
        seeds = (
            None
            if self.seed is None
            else [
                self.worker_index * SEED_STRIDE_PER_RUNNER + i + self.seed
                for i in range(num_boards)
            ]
        )
        self.env.vector_reset(seeds=seeds)
        self._rng = np.random.default_rng(None if self.seed is None else self.seed + 7919)
        self._board_episodes = BoardEpisodes(self.core)
        self._episode_id = self._new_episode_ids(num_boards)
        self._next_unroll_id = 0
        self._pending = None  # (logits, values) of the current observations

    # -- RLlib's EnvRunner API ----------------------------------------------------------------
    def sample(self, **kwargs):
        if self.env is None:
            raise ValueError(
                "This env runner has no environment (the driver's local runner "
                "while remote env runners sample); call sample() on a remote one."
            )
        batch = self._sample_fragment().as_multi_agent()
        self.callbacks.on_sample_end(worker=self, samples=batch)
        self.output_writer.write(batch)
        if self.config.compress_observations:
            batch.compress(bulk=self.config.compress_observations == "bulk")
        return batch

    def get_metrics(self):
        metrics, self._metrics = self._metrics, []
        return metrics

    # -- one rollout fragment of every board --------------------------------------------------
    def _sample_fragment(self):
        core, boards = self.core, self.core.num_boards
        horizon = int(self.config.rollout_fragment_length)
        obs_shape = core.obs.shape[1:]
        obs = np.empty((horizon, boards) + obs_shape, np.uint8)
        new_obs = np.empty_like(obs)
        actions = np.empty((horizon, boards), np.int32)
        rewards = np.empty((horizon, boards), np.float32)
        terminateds = np.empty((horizon, boards), bool)
        truncateds = np.empty((horizon, boards), bool)
        logits = np.empty((horizon, boards, 4), np.float32)
        logp = np.empty((horizon, boards), np.float32)
        values = np.empty((horizon, boards), np.float32)
        masking = self.policy_map[DEFAULT_POLICY_ID].model.mask_blocked_moves
        allowed = np.ones((horizon, boards, 4), bool)
        episode_ids = np.empty((horizon, boards), np.int64)
        steps = np.empty((horizon, boards), np.int64)
        timings = {
            "inference": 0.0,
            "env_wait": 0.0,
            "action_processing": 0.0,
            "raw_obs_processing": 0.0,
        }
        if self._pending is None:
            self._pending = self._forward(core.obs, timings)

        for t in range(horizon):
            started = time.perf_counter()
            obs[t] = core.obs
            logits[t], values[t] = self._pending
            if masking:
                allowed[t] = core.allowed_moves()
                logits[t] = mask_logits(logits[t], allowed[t])
            actions[t], logp[t] = self._choose(logits[t], self.config.explore)
            episode_ids[t] = self._episode_id
            steps[t] = self._board_episodes.lengths
            after_actions = time.perf_counter()
            timings["action_processing"] += after_actions - started

            rewards[t], terminateds[t], truncateds[t], _ = core.step(actions[t], autoreset=False)
            after_step = time.perf_counter()
            timings["env_wait"] += after_step - after_actions

            new_obs[t] = core.obs
            self._end_episodes(rewards[t], terminateds[t] | truncateds[t])
            timings["raw_obs_processing"] += time.perf_counter() - after_step
            self._pending = self._forward(core.obs, timings)

        # Bootstrap value of each board's fragment: V(obs_T), 0 after a termination.
        bootstrapped = np.zeros((horizon, boards), np.float32)
        bootstrapped[-1] = np.where(terminateds[-1], 0.0, self._pending[1])
        unroll_ids = self._next_unroll_id + np.arange(boards, dtype=np.int64)
        self._next_unroll_id += boards
        self._record_timings(timings, horizon)

        def board_major(array):
            return np.ascontiguousarray(np.swapaxes(array, 0, 1)).reshape(
                (boards * horizon,) + array.shape[2:]
            )

        columns = {ALLOWED_MOVES: board_major(allowed).astype(np.float32)} if masking else {}
        return SampleBatch(
            {
                **columns,
                SampleBatch.OBS: board_major(obs),
                SampleBatch.NEXT_OBS: board_major(new_obs),
                SampleBatch.ACTIONS: board_major(actions),
                SampleBatch.REWARDS: board_major(rewards),
                SampleBatch.TERMINATEDS: board_major(terminateds),
                SampleBatch.TRUNCATEDS: board_major(truncateds),
                SampleBatch.EPS_ID: board_major(episode_ids),
                SampleBatch.UNROLL_ID: np.repeat(unroll_ids, horizon),
                SampleBatch.AGENT_INDEX: np.zeros(boards * horizon, np.int64),
                SampleBatch.T: board_major(steps),
                SampleBatch.ACTION_LOGP: board_major(logp),
                SampleBatch.ACTION_DIST_INPUTS: board_major(logits),
                SampleBatch.VF_PREDS: board_major(values),
                SampleBatch.VALUES_BOOTSTRAPPED: board_major(bootstrapped),
            }
        )

    def _forward(self, observations, timings):
        started = time.perf_counter()
        policy = self.policy_map[DEFAULT_POLICY_ID]
        logits, values = policy.model.logits_and_values(tf.constant(observations))
        result = logits.numpy(), values.numpy().reshape(-1)
        timings["inference"] += time.perf_counter() - started
        return result

    def _choose(self, logits, explore):
        """Actions and their log-probabilities under softmax(logits) (argmax if not `explore`)."""
        return sample_actions(logits, self._rng, explore)

    def _end_episodes(self, reward, done):
        """Counts one step; reports and resets the boards whose episode ended this step."""
        ended, reports = self._board_episodes.step(reward, done)
        for episode_return, episode_length, metrics in reports:
            self._metrics.append(
                RolloutMetrics(
                    episode_length=episode_length,
                    episode_reward=episode_return,
                    custom_metrics=metrics,
                    perf_stats=dict(self._timings),
                )
            )
        self._episode_id[ended] = self._new_episode_ids(ended.size)

    def _new_episode_ids(self, count):
        return np.random.randint(0, np.iinfo(np.int64).max, size=count, dtype=np.int64)

    def _record_timings(self, timings, horizon):
        self._timings = {
            f"mean_{name}_ms": 1000.0 * seconds / horizon for name, seconds in timings.items()
        }
