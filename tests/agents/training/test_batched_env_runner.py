"""The batched env runner returns what RLlib's sampler would, laid out as IMPALA's V-trace reads,
and masks the moves the board blocks when the run asks it to (`--mask-blocked-moves`)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import keras_simplicial.envs  # noqa: E402,F401
from keras_simplicial.agents.model.rllib_model import ALLOWED_MOVES  # noqa: E402
from keras_simplicial.agents.rollout import BLOCKED_MOVE_LOGIT  # noqa: E402
from keras_simplicial.agents.training.rllib.envs import BoxWorldRLlibVectorEnv  # noqa: E402
from keras_simplicial.agents.training.rllib.impala import impala_config  # noqa: E402
from keras_simplicial.agents.training.rllib.trainer import start_ray  # noqa: E402

ENV_ID = "BoxWorld-v0"
# Short episodes (a 12-step limit on a small board), so a fragment crosses episode ends.
ENV_CONFIG = {"rows": 3, "cols": 6, "max_solution_length": 1, "max_distractors": 0, "max_steps": 12}
BOARDS, HORIZON, SEED = 4, 16, 5


@pytest.fixture(scope="module")
def ray_session():
    import ray

    start_ray(num_env_runners=0)
    yield
    ray.shutdown()


def small_algorithm(**fields):
    """IMPALA of the relational agent on `BOARDS` small boards, `HORIZON`-step fragments."""
    config = impala_config(
        env=ENV_ID,
        agent="relational",
        env_config=ENV_CONFIG,
        num_env_runners=0,
        num_envs_per_env_runner=BOARDS,
        seed=SEED,
        model_overrides={"jit_compile": False},
        overrides={"rollout_fragment_length": HORIZON, "train_batch_size": BOARDS * HORIZON},
        **fields,
    )
    return config.build_algo()


@pytest.fixture(scope="module")
def algorithm(ray_session):
    algorithm = small_algorithm()
    yield algorithm
    algorithm.stop()


def rows_of(batch, board):
    return slice(board * HORIZON, (board + 1) * HORIZON)


def test_batch_has_rllib_columns_and_dtypes(algorithm):
    runner = algorithm.env_runner
    assert type(runner).__name__ == "BatchedEnvRunner"
    batch = runner.sample().policy_batches["default_policy"]
    assert batch.count == BOARDS * HORIZON
    expected = {
        "obs": np.uint8,
        "new_obs": np.uint8,
        "actions": np.int32,
        "rewards": np.float32,
        "terminateds": np.bool_,
        "truncateds": np.bool_,
        "eps_id": np.int64,
        "unroll_id": np.int64,
        "agent_index": np.int64,
        "t": np.int64,
        "action_logp": np.float32,
        "action_dist_inputs": np.float32,
        "vf_preds": np.float32,
        "values_bootstrapped": np.float32,
    }
    assert set(batch.keys()) == set(expected)
    for column, dtype in expected.items():
        assert batch[column].dtype == dtype, column
        assert len(batch[column]) == BOARDS * HORIZON, column
    assert batch["obs"].shape[1:] == (3, 7, 3)


def test_each_board_is_one_contiguous_trajectory_that_the_env_replays(algorithm):
    """Board b fills rows b*T .. b*T+T-1; a single env with b's seed replays them exactly."""
    runner = algorithm.env_runner
    # A fresh runner state: reseed the boards as the runner does at start.
    seeds = [runner.worker_index * 1000 + i + runner.seed for i in range(BOARDS)]
    runner.env.vector_reset(seeds=seeds)
    runner._pending = None
    runner._board_episodes.lengths[:] = 0
    batch = runner.sample().policy_batches["default_policy"]
    ended = 0
    for board in range(BOARDS):
        rows = rows_of(batch, board)
        env = gym.make(ENV_ID, **ENV_CONFIG)
        obs, _ = env.reset(seed=seeds[board])
        for t, row in enumerate(range(rows.start, rows.stop)):
            np.testing.assert_array_equal(batch["obs"][row], obs, err_msg=f"board {board} t {t}")
            obs, reward, terminated, truncated, _ = env.step(int(batch["actions"][row]))
            np.testing.assert_array_equal(batch["new_obs"][row], obs)
            assert batch["rewards"][row] == reward
            assert batch["terminateds"][row] == terminated
            assert batch["truncateds"][row] == truncated
            if terminated or truncated:
                ended += 1
                obs, _ = env.reset()
                if t + 1 < HORIZON:  # a new episode: new id, its step counter starts at 0
                    assert batch["eps_id"][row + 1] != batch["eps_id"][row]
                    assert batch["t"][row + 1] == 0
            elif t + 1 < HORIZON:
                assert batch["eps_id"][row + 1] == batch["eps_id"][row]
                assert batch["t"][row + 1] == batch["t"][row] + 1
        assert len(set(batch["unroll_id"][rows])) == 1
    assert ended >= BOARDS, "every board finished at least one 12-step episode in 16 steps"
    assert len(set(batch["unroll_id"])) == BOARDS


def test_behaviour_columns_and_bootstrap_values(algorithm):
    batch = algorithm.env_runner.sample().policy_batches["default_policy"]
    logits = batch["action_dist_inputs"]
    largest = logits.max(1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits - largest).sum(1, keepdims=True)) - largest
    np.testing.assert_allclose(
        batch["action_logp"], log_probs[np.arange(len(logits)), batch["actions"]], atol=1e-5
    )
    for board in range(BOARDS):
        bootstrapped = batch["values_bootstrapped"][rows_of(batch, board)]
        assert np.all(bootstrapped[:-1] == 0.0)
        if batch["terminateds"][rows_of(batch, board)][-1]:
            assert bootstrapped[-1] == 0.0
    # The forward pass behind the values is the policy's own.
    policy = algorithm.get_policy()
    first = slice(0, HORIZON)
    expected_logits, expected_values = policy.model.logits_and_values(batch["obs"][first])
    np.testing.assert_allclose(logits[first], expected_logits.numpy(), atol=1e-4)
    np.testing.assert_allclose(batch["vf_preds"][first], expected_values.numpy()[:, 0], atol=1e-4)


def test_metrics_report_every_finished_episode(algorithm):
    runner = algorithm.env_runner
    runner.get_metrics()  # drop what earlier tests left
    batch = runner.sample().policy_batches["default_policy"]
    metrics = runner.get_metrics()
    finished = int(np.sum(batch["terminateds"] | batch["truncateds"]))
    assert len(metrics) == finished
    for episode in metrics:
        assert episode.custom_metrics["win"] in (0.0, 1.0)
        (type_key,) = [k for k in episode.custom_metrics if k.startswith("win/type_")]
        assert episode.custom_metrics[type_key] == episode.custom_metrics["win"]
        assert 1 <= episode.episode_length <= ENV_CONFIG["max_steps"]
        won = episode.custom_metrics["win"] == 1.0
        assert (episode.episode_reward >= 10.0) == won
    assert set(metrics[-1].perf_stats) == {
        "mean_inference_ms",
        "mean_env_wait_ms",
        "mean_action_processing_ms",
        "mean_raw_obs_processing_ms",
    }
    assert runner.get_metrics() == []


def test_greedy_when_not_exploring_and_sampled_otherwise(algorithm):
    runner = algorithm.env_runner
    logits = np.asarray([[0.0, 3.0, 1.0, -1.0], [2.0, 0.0, 0.0, 5.0]], np.float32)
    actions, logp = runner._choose(logits, explore=False)
    np.testing.assert_array_equal(actions, [1, 3])
    np.testing.assert_allclose(
        np.exp(logp),
        [np.exp(3) / np.exp(logits[0]).sum(), np.exp(5) / np.exp(logits[1]).sum()],
        rtol=1e-5,
    )
    counts = np.zeros(4)
    for _ in range(2000):
        counts[runner._choose(logits[:1], explore=True)[0][0]] += 1
    probabilities = np.exp(logits[0]) / np.exp(logits[0]).sum()
    np.testing.assert_allclose(counts / counts.sum(), probabilities, atol=0.04)


def test_samples_larger_than_the_train_batch_are_cut_into_whole_unrolls(algorithm):
    """A sample of 2 x train_batch_size rows becomes two train batches, not one twice the size."""
    from ray.rllib.policy.sample_batch import concat_samples

    runner = algorithm.env_runner
    sample = concat_samples([runner.sample(), runner.sample()])
    assert sample.count == 2 * algorithm.config.train_batch_size
    algorithm._batch_being_built, algorithm.data_to_place_on_learner = [], []
    algorithm._concatenate_batches_and_pre_queue([sample])
    queued = algorithm.data_to_place_on_learner
    try:
        assert [b.count for b in queued] == [algorithm.config.train_batch_size] * 2
        rows = sample.policy_batches["default_policy"]
        for index, piece in enumerate(queued):
            piece = piece.policy_batches["default_policy"]
            start = index * algorithm.config.train_batch_size
            np.testing.assert_array_equal(piece["obs"], rows["obs"][start : start + len(piece)])
            np.testing.assert_array_equal(
                piece["unroll_id"][::HORIZON], np.unique(piece["unroll_id"])
            )
    finally:
        algorithm.data_to_place_on_learner = []


def test_rllib_vector_env_steps_all_boards_without_autoreset():
    env = BoxWorldRLlibVectorEnv(ENV_ID, 3, ENV_CONFIG)
    observations, infos = env.vector_reset(seeds=[0, 1, 2])
    assert len(observations) == 3 and observations[0].shape == (3, 7, 3)
    single = gym.make(ENV_ID, **ENV_CONFIG)
    expected, _ = single.reset(seed=1)
    np.testing.assert_array_equal(observations[1], expected)
    for _ in range(ENV_CONFIG["max_steps"]):
        observations, rewards, terminateds, truncateds, infos = env.vector_step([2, 2, 2])
        expected, reward, terminated, truncated, _ = single.step(2)
        np.testing.assert_array_equal(observations[1], expected)
        if terminated or truncated:
            break
    assert truncateds[1] or terminateds[1]
    obs, info = env.reset_at(1)
    np.testing.assert_array_equal(obs, single.reset()[0])
    assert set(info) == {"puzzle_type", "solvable", "is_success", "solution_length", "ended_by"}
    with pytest.raises(ValueError, match="env must be one of"):
        BoxWorldRLlibVectorEnv("CartPole-v1", 2)


# --mask-blocked-moves: the policy chooses among the moves the board lets through, when the
# sampler samples and when the learner computes its loss.
@pytest.fixture(scope="module")
def masked_algorithm(ray_session):
    algorithm = small_algorithm(mask_blocked_moves=True)
    yield algorithm
    algorithm.stop()


def test_the_sampler_chooses_only_allowed_moves_and_says_which_they_were(masked_algorithm):
    runner = masked_algorithm.env_runner
    assert runner.policy_map["default_policy"].model.mask_blocked_moves
    batch = runner.sample().policy_batches["default_policy"]
    allowed = batch[ALLOWED_MOVES]
    assert allowed.dtype == np.float32 and allowed.shape == (BOARDS * HORIZON, 4)
    assert set(np.unique(allowed)) <= {0.0, 1.0}
    assert (allowed == 0).any(), "the edges of a 3 x 6 board block moves"
    rows = np.arange(len(allowed))
    assert (allowed[rows, batch["actions"]] == 1).all()
    logits = batch["action_dist_inputs"]
    assert (logits[allowed == 0] == BLOCKED_MOVE_LOGIT).all()
    assert (logits[allowed == 1] > BLOCKED_MOVE_LOGIT / 2).all()
    assert np.isfinite(batch["action_logp"]).all()


def test_the_column_holds_the_moves_each_board_allowed(masked_algorithm):
    """A single env with board b's seed, replaying b's actions, allows what the column says."""
    runner = masked_algorithm.env_runner
    seeds = [runner.worker_index * 1000 + i + runner.seed for i in range(BOARDS)]
    runner.env.vector_reset(seeds=seeds)
    runner._pending = None
    batch = runner.sample().policy_batches["default_policy"]
    for board in range(BOARDS):
        env = gym.make(ENV_ID, **ENV_CONFIG)
        env.reset(seed=seeds[board])
        core = env.unwrapped.core
        for row in range(board * HORIZON, (board + 1) * HORIZON):
            np.testing.assert_array_equal(batch[ALLOWED_MOVES][row], core.allowed_moves()[0])
            _, _, terminated, truncated, _ = env.step(int(batch["actions"][row]))
            if terminated or truncated:
                env.reset()


def test_the_learner_masks_its_logits_with_the_column(masked_algorithm):
    import tensorflow as tf

    policy = masked_algorithm.get_policy()
    batch = masked_algorithm.env_runner.sample().policy_batches["default_policy"]
    allowed = batch[ALLOWED_MOVES]
    logits, _ = policy.model(
        {"obs": tf.constant(batch["obs"]), ALLOWED_MOVES: tf.constant(allowed)}
    )
    raw, _ = policy.model.logits_and_values(batch["obs"])
    logits, raw = logits.numpy(), raw.numpy()
    np.testing.assert_array_equal(logits[allowed == 0], BLOCKED_MOVE_LOGIT)
    np.testing.assert_allclose(logits[allowed == 1], raw[allowed == 1], atol=1e-5)
    # The loss on the sampled batch is finite (no 0 * inf in the entropy) and the update runs.
    before = [w.copy() for w in policy.get_weights()]
    stats = policy.learn_on_batch(batch)["learner_stats"]
    for name in ("policy_loss", "entropy", "vf_loss"):
        assert np.isfinite(stats[name]), name
    after = policy.get_weights()
    assert any(not np.array_equal(a, b) for a, b in zip(before, after))
    # Over the allowed moves only: at most log(number allowed) of a row, below log(4) on average.
    assert stats["entropy"] < np.log(4)
