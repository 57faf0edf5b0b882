"""IMPALA on RLlib with our agents: a few real iterations on the embedded local Ray."""

import math
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from keras_simplicial.agents.training.metric_rows import metrics_row  # noqa: E402
from keras_simplicial.agents.training.presets import (  # noqa: E402
    PAPER_IMPALA_HYPERPARAMETERS,
    PRESETS,
)
from keras_simplicial.agents.training.rllib.impala import impala_config  # noqa: E402
from keras_simplicial.agents.training.rllib.results import old_stack_iteration  # noqa: E402
from keras_simplicial.agents.training.rllib.trainer import start_ray  # noqa: E402
from keras_simplicial.agents.training.run_arguments import CLIP_EACH_VARIABLE  # noqa: E402

# Small batches so that an iteration takes a second or two on 2 cores.
QUICK = {"train_batch_size": 160, "min_time_s_per_iteration": 1}
EASY_ENV = {"max_solution_length": 1, "max_steps": 60}


def quick_algorithm(agent, model_config=None):
    """IMPALA for `agent` on small easy boards, one env runner of 4 boards, batches of 160;
    `model_config` as `--model-config` (XLA unless it says `jit_compile: false`)."""
    config = impala_config(
        env="BridgeBoxWorld-v0",
        agent=agent,
        env_config=EASY_ENV,
        num_env_runners=1,
        num_envs_per_env_runner=4,
        seed=1,
        overrides=QUICK,
        model_overrides=model_config or {},
    )
    return config.build_algo()


def learner_policy(overrides, model_overrides=None):
    """The relational agent's IMPALA policy as the learner holds it, on easy boards, without Ray."""
    from keras_simplicial.agents.training.rllib.diagnostic_policy import DiagnosticImpalaTF2Policy
    from keras_simplicial.envs.single_env import BoxWorldEnv

    config = impala_config(
        env="BoxWorld-v0",
        agent="relational",
        env_config=EASY_ENV,
        overrides=overrides,
        model_overrides=model_overrides or {},
    )
    env = BoxWorldEnv(**EASY_ENV)
    return DiagnosticImpalaTF2Policy(env.observation_space, env.action_space, config.to_dict())


@pytest.fixture(scope="module")
def ray_session():
    import ray

    start_ray(num_env_runners=1)
    yield ray
    ray.shutdown()


@pytest.mark.integration
def test_joining_ray_again_registers_models_and_envs_under_the_new_job():
    """Ray's registry remembers the first job's id; a driver that joins a cluster again is a new
    job whose env runners look models up under its own id (a stale prefix stands in for that)."""
    import ray
    from ray.tune.registry import _global_registry

    from keras_simplicial.envs import BRIDGE_BOX_WORLD_ID

    def registered_under_this_job():
        assert _global_registry.prefix == ray.get_runtime_context().get_job_id()
        for kind in ("relational", "simplicial"):
            assert _global_registry.contains("rllib_model", f"{kind}_agent")
        assert _global_registry.contains("env_creator", BRIDGE_BOX_WORLD_ID)

    ray.shutdown()
    _global_registry._prefix = "an earlier job"
    start_ray(num_env_runners=0)
    try:
        registered_under_this_job()
    finally:
        ray.shutdown()
    # Ray started by the user: start_ray joins it as it is and registers all the same.
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    _global_registry._prefix = "an earlier job"
    try:
        start_ray(num_env_runners=0)
        registered_under_this_job()
    finally:
        ray.shutdown()


def test_config_carries_table_1_and_rmsprop():
    config = impala_config(env="BridgeBoxWorld-v0", agent="simplicial")
    assert config.env_runner_cls.__name__ == "BatchedEnvRunner"
    assert impala_config(sampler="rllib").env_runner_cls is None
    assert config.framework_str == "tf2"
    assert not config.enable_rl_module_and_learner
    for key, value in PAPER_IMPALA_HYPERPARAMETERS.items():
        assert getattr(config, key) == value, key
    assert config.model["custom_model"] == "simplicial_agent"


def test_a_runs_config_clips_as_its_run_json_says(tmp_path):
    """A new run clips the global norm; a run.json written before runs recorded it resumes
    clipping each variable, as it trained; a choice given in the overrides is kept."""
    import json

    from keras_simplicial.agents.training.run_arguments import RunArguments

    def clips_each_variable(arguments):
        return getattr(impala_config(arguments), CLIP_EACH_VARIABLE)

    new = RunArguments.from_preset("bridge-small", "simplicial", seed=1)
    assert clips_each_variable(new) is False
    # An earlier run.json: the preset's overrides without the clipping, which it did not record.
    preset = PRESETS["bridge-small"]["overrides"]
    earlier = {
        **new.to_json(),
        "overrides": {k: v for k, v in preset.items() if k != CLIP_EACH_VARIABLE},
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(earlier))
    assert clips_each_variable(RunArguments.read(path)) is True
    for chosen in (True, False):
        config = {CLIP_EACH_VARIABLE: chosen}
        assert (
            clips_each_variable(RunArguments.from_preset("easy", "relational", overrides=config))
            is chosen
        )
        path.write_text(json.dumps({**earlier, "overrides": config}))
        assert clips_each_variable(RunArguments.read(path)) is chosen
    with pytest.raises(ValueError, match=f"{CLIP_EACH_VARIABLE} must be true or false"):
        impala_config(overrides={CLIP_EACH_VARIABLE: "false"})


def test_config_rejects_bad_input():
    with pytest.raises(ValueError, match=r"agent \(--agent\) must be one of"):
        impala_config(agent="transformer")
    with pytest.raises(ValueError, match=r"env \(--env\) must be one of"):
        impala_config(env="CartPole-v1")
    with pytest.raises(ValueError, match="Unknown IMPALA config key"):
        impala_config(overrides={"learning_rate_typo": 1e-3})
    with pytest.raises(ValueError, match=r"sampler \(--sampler\) must be one of"):
        impala_config(sampler="vectorised")
    with pytest.raises(ValueError, match=r"num_env_runners \(--num-env-runners\) must be an "):
        impala_config(num_env_runners=-1)
    with pytest.raises(ValueError, match="arguments must be a RunArguments"):
        impala_config("BridgeBoxWorld-v0")


def test_a_learning_rate_given_alone_replaces_the_presets_schedule():
    from keras_simplicial.agents.training.presets import PRESETS, preset_overrides

    easy = PRESETS["easy"]
    assert preset_overrides(easy)["lr_schedule"] == easy["overrides"]["lr_schedule"]
    mine = preset_overrides(easy, {"lr": 1e-4})
    assert mine["lr"] == 1e-4 and "lr_schedule" not in mine
    schedule = [[0, 1e-4], [100, 1e-5]]
    assert preset_overrides(easy, {"lr": 1e-4, "lr_schedule": schedule})["lr_schedule"] == schedule
    assert preset_overrides(easy, {"gamma": 0.8})["lr_schedule"] == easy["overrides"]["lr_schedule"]


def test_a_presets_schedule_stretched_over_another_run_length():
    from keras_simplicial.agents.training.presets import PRESETS, lr_schedule_over

    assert lr_schedule_over(PRESETS["easy"], 1_200_000) == [[0, 5e-4], [1_200_000, 5e-5]]
    assert lr_schedule_over(PRESETS["paper"], 1_000) is None


@pytest.mark.parametrize("num_epochs", [1, 2])
def test_lr_schedule_counts_environment_steps(num_epochs):
    """RLlib counts steps trained (each pass of `num_epochs`); the schedule reads env steps."""
    schedule = [[0, 1e-3], [1000, 1e-4]]
    policy = learner_policy({"num_epochs": num_epochs, "lr": 1e-3, "lr_schedule": schedule})
    assert math.isclose(float(policy._optimizer.learning_rate), 1e-3, rel_tol=1e-6)
    environment_steps = 500
    policy.on_global_var_update({"timestep": environment_steps * num_epochs})
    assert math.isclose(float(policy._optimizer.learning_rate), 5.5e-4, rel_tol=1e-6)
    policy.on_global_var_update({"timestep": 5000 * num_epochs})
    assert math.isclose(float(policy._optimizer.learning_rate), 1e-4, rel_tol=1e-6)


# RLlib's loop is the same for both agents (each agent's model: tests/agents/model); the
# simplicial agent has every part the relational one has and more, so the integration tier
# (`make test-integration`, which CI runs) trains it and `-m slow` trains the relational one too.
# That run leaves out XLA: compiling the simplicial model took 55 of the test's 94 s on a slow
# machine of ours (2026-11-30), and the compiled forward pass and its gradient are checked for
# both agents in test_models.py; `-m slow` trains both agents with it, as runs do by default.
@pytest.mark.parametrize(
    "agent, jit_compile",
    [
        pytest.param("relational", True, marks=pytest.mark.slow),
        pytest.param("simplicial", True, marks=pytest.mark.slow),
        pytest.param("simplicial", False, marks=pytest.mark.integration),
    ],
)
def test_a_few_iterations_train_with_finite_losses_and_sync_weights(
    ray_session, agent, jit_compile
):
    algorithm = quick_algorithm(agent, {"jit_compile": jit_compile})
    try:
        policy = algorithm.get_policy()
        optimizer = policy._optimizer
        assert type(optimizer).__name__ == "RMSprop"
        assert math.isclose(float(optimizer.rho), 0.99) and math.isclose(optimizer.epsilon, 0.1)
        initial = [w.copy() for w in policy.get_weights()]
        trained_steps = 0
        rows = []
        for _ in range(30):
            result = algorithm.train()
            rows.append(metrics_row(old_stack_iteration(result), 0.0))
            trained_steps = int(
                result.get("num_env_steps_trained_lifetime")
                or result["info"].get("num_env_steps_trained")
                or 0
            )
            if trained_steps >= 3 * QUICK["train_batch_size"] and rows[-1]["policy_loss"] != "":
                break
        assert trained_steps >= 3 * QUICK["train_batch_size"], "the learner consumed batches"
        last = rows[-1]
        for key in ("policy_loss", "vf_loss", "entropy"):
            assert last[key] != "" and math.isfinite(float(last[key])), key
        # Why episodes ended: shares of the four outcomes, overall and per puzzle type.
        ended = [row for row in rows if row.get("ended/won", "") != ""][-1]
        outcomes = ("won", "opened_bridge", "opened_wrong_box", "out_of_steps")
        assert math.isclose(sum(ended[f"ended/{o}"] for o in outcomes), 1.0, abs_tol=1e-3)
        assert any(key.startswith("ended/out_of_steps/1_") for key in ended)
        # Gradient norms per part of the model (model_parts.MODEL_PARTS) are in every row.
        parts = ["front_end", "one_simplicial", "block_feedforward_norms", "mlp_heads"]
        if agent == "simplicial":
            parts += ["simplicial_query_key", "simplicial_value_B"]
        for part in parts:
            norm = last[f"grad_norm/{part}"]
            assert norm != "" and math.isfinite(float(norm)) and float(norm) > 0.0, part
        weights = policy.get_weights()
        assert all(np.all(np.isfinite(w)) for w in weights)
        assert any(not np.array_equal(a, b) for a, b in zip(initial, weights)), (
            "training changed the weights"
        )

        # Rollout workers act with the learner's latest weights after a sync. The learner thread
        # would go on training the batches still queued: stop it first, so the weights hold still.
        algorithm._learner_thread.stopped = True
        algorithm._learner_thread.join(timeout=120)
        algorithm.env_runner_group.sync_weights()
        remote = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: runner.get_policy().get_weights(), local_env_runner=False
        )
        assert remote, "there is a remote env runner"
        for runner_weights in remote:
            assert len(runner_weights) == len(weights)
            for a, b in zip(runner_weights, policy.get_weights()):
                np.testing.assert_array_equal(a, b)
        # ... and their forward pass computes with them: same logits as the learner's policy.
        probe = np.random.default_rng(0).integers(0, 256, (5, 7, 10, 3)).astype(np.uint8)

        def logits_of(runner_policy):
            _, _, fetches = runner_policy.compute_actions(probe, explore=False)
            return fetches["action_dist_inputs"]

        remote_logits = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: logits_of(runner.get_policy()), local_env_runner=False
        )
        for runner_logits in remote_logits:
            np.testing.assert_allclose(runner_logits, logits_of(policy), rtol=1e-5, atol=1e-5)

        # A policy restored from this state (what resuming a run does) gets RMSProp's mean
        # squares too, not zeros: RLlib alone skips them on a policy that has not trained yet.
        from ray.rllib.policy.policy import Policy

        state = policy.get_state()
        saved = [np.asarray(v) for v in state["_optimizer_variables"]]
        assert len(saved) > 1 and any(np.any(v != 0) for v in saved[1:])
        restored = Policy.from_state(state)
        assert type(restored).__mro__[1].__name__ == type(policy).__mro__[1].__name__
        values = [np.asarray(v) for v in restored._optimizer.variables()]
        assert len(values) == len(saved)
        for value, expected in zip(values, saved):
            np.testing.assert_array_equal(value, expected)
    finally:
        learner_thread = algorithm._learner_thread
        algorithm.stop()
    # A learner thread left running inside a TF update aborts the process when it exits.
    assert not learner_thread.is_alive(), "algorithm.stop() stops the learner thread"


@pytest.mark.parametrize("each_tensor", [False, True])
def test_gradient_clipping_the_global_norm_by_default_or_each_tensor(each_tensor):
    """IMPALA clips the global norm of the gradient, as the paper's code did; with
    `_tf_policy_handles_more_than_one_loss` true each variable's gradient separately (RLlib
    2.60's default, with which the committed runs trained). One update of the learner's policy
    on a batch of random boards: the clipping is the policy's optimizer's, whichever process
    holds it (the env runners never clip)."""
    clip = 1e-3  # far below any real gradient: every variable's gradient is at the cap
    overrides = {"grad_clip": clip, **QUICK}
    if each_tensor:
        overrides[CLIP_EACH_VARIABLE] = True
    # Without XLA: the clipping is the optimizer's, and XLA is trained with in
    # test_a_few_iterations_train_with_finite_losses_and_sync_weights.
    policy = learner_policy(overrides, {"jit_compile": False})
    batch = policy._get_dummy_batch_from_view_requirements(
        2 * policy.config["rollout_fragment_length"]
    )
    # Boards of random colours, so that every variable's gradient is nonzero (on zeros the
    # convolutions' kernels get none, and a zero gradient is not clipped up to the cap).
    rng = np.random.default_rng(0)
    for column in ("obs", "new_obs"):
        batch[column] = rng.integers(0, 256, batch[column].shape).astype(batch[column].dtype)
    batch["actions"] = rng.integers(0, policy.action_space.n, batch["actions"].shape)
    norm = policy.learn_on_batch(batch)["grad_gnorm"]
    variables = len(policy.model.trainable_variables())
    if each_tensor:
        # One norm per loss (IMPALA has one): the norm of the per-variable capped gradients.
        (norm,) = norm
        assert math.isclose(float(norm), clip * math.sqrt(variables), rel_tol=1e-3), norm
    else:
        assert math.isclose(float(norm), clip, rel_tol=1e-3), norm
