"""`--mask-blocked-moves`: the policy chooses among the moves the board lets through, when the
batched sampler samples and when the learner computes its loss."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import keras_simplicial.envs  # noqa: E402,F401
from keras_simplicial.agents.model.rllib_model import ALLOWED_MOVES  # noqa: E402
from keras_simplicial.agents.rollout import BLOCKED_MOVE_LOGIT  # noqa: E402
from keras_simplicial.agents.training.impala import impala_config  # noqa: E402
from keras_simplicial.agents.training.train import start_ray  # noqa: E402

ENV_ID = "BoxWorld-v0"
# A small board with short episodes: the edge blocks a move on most tiles.
ENV_CONFIG = {"rows": 3, "cols": 6, "max_solution_length": 1, "max_distractors": 0, "max_steps": 12}
BOARDS, HORIZON, SEED = 4, 16, 5


@pytest.fixture(scope="module")
def algorithm():
    import ray

    start_ray(num_env_runners=0)
    config = impala_config(
        env=ENV_ID,
        agent="relational",
        env_config=ENV_CONFIG,
        num_env_runners=0,
        num_envs_per_env_runner=BOARDS,
        seed=SEED,
        mask_blocked_moves=True,
        model_overrides={"jit_compile": False},
        overrides={"rollout_fragment_length": HORIZON, "train_batch_size": BOARDS * HORIZON},
    )
    algorithm = config.build_algo()
    yield algorithm
    algorithm.stop()
    ray.shutdown()


def test_the_sampler_chooses_only_allowed_moves_and_says_which_they_were(algorithm):
    runner = algorithm.env_runner
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


def test_the_column_holds_the_moves_each_board_allowed(algorithm):
    """A single env with board b's seed, replaying b's actions, allows what the column says."""
    runner = algorithm.env_runner
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


def test_the_learner_masks_its_logits_with_the_column(algorithm):
    import tensorflow as tf

    policy = algorithm.get_policy()
    batch = algorithm.env_runner.sample().policy_batches["default_policy"]
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
