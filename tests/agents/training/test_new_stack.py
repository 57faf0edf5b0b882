"""The agents on RLlib's new API stack (`--api-stack new`: a TorchRLModule around the same Keras
model, IMPALA's PyTorch Learner): the run's arguments, the recipe carried over, a run trained,
resumed and evaluated from the command line, and RLlib restarting a killed env runner.

Keras chooses its backend once per process: what runs Keras on PyTorch runs in a subprocess."""

import json
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from fresh_process import run_cli, run_python, tiny_train_command  # noqa: E402

from keras_simplicial.agents.training.presets import CLIP_EACH_VARIABLE  # noqa: E402
from keras_simplicial.agents.training.run_arguments import RunArguments  # noqa: E402
from keras_simplicial.agents.training.run_directory import RunDirectory  # noqa: E402


def test_the_stack_is_a_run_argument_and_the_old_one_stays_the_default(tmp_path):
    assert RunArguments().api_stack == "old"
    assert RunArguments.from_preset("easy", api_stack="new").api_stack == "new"
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"env": "BoxWorld-v0", "agent": "relational"}))
    assert RunArguments.read(path).api_stack == "old"  # runs from before the new stack
    with pytest.raises(ValueError, match=r"api_stack \(--api-stack\) must be one of"):
        RunArguments.from_preset("easy", api_stack="newest")
    with pytest.raises(ValueError, match=r"engine \(--engine\) must be one of"):
        RunArguments(engine="newest")


def test_the_recipe_carries_over_in_the_new_stacks_names():
    from keras_simplicial.agents.training.rllib.impala_torch import new_stack_settings

    settings = new_stack_settings(
        {
            "lr": 5e-4,
            "lr_schedule": [[0, 5e-4], [600_000, 5e-5]],
            "entropy_coeff": 0.01,
            CLIP_EACH_VARIABLE: False,
        }
    )
    assert settings["lr"] == [[0, 5e-4], [600_000, 5e-5]]  # environment steps on both stacks
    assert settings["entropy_coeff"] == 0.01 and settings["grad_clip_by"] == "global_norm"
    assert CLIP_EACH_VARIABLE not in settings and "lr_schedule" not in settings
    assert new_stack_settings({CLIP_EACH_VARIABLE: True})["grad_clip_by"] == "norm"


def test_the_episode_window_averages_each_metric_over_the_episodes_that_have_it():
    from keras_simplicial.agents.training.rllib.impala_torch import EpisodeWindow

    window = EpisodeWindow(3)
    window.add({"win": 1.0, "win/type_1_0_0": 1.0})
    window.add({"win": 0.0, "win/type_2_0_0": 0.0})
    window.add({"win": 1.0, "win/type_1_0_0": 1.0})
    assert window.means() == {"win": 2 / 3, "win/type_1_0_0": 1.0, "win/type_2_0_0": 0.0}
    window.add({"win": 0.0, "win/type_1_0_0": 0.0})  # the first episode leaves
    assert window.means() == pytest.approx(
        {"win": 1 / 3, "win/type_1_0_0": 0.5, "win/type_2_0_0": 0.0}
    )
    window.add({"win": 0.0})  # the (2,0,0) episode leaves: no mean for its type
    assert set(window.means()) == {"win", "win/type_1_0_0"}
    with pytest.raises(ValueError, match="size must be >= 1"):
        EpisodeWindow(0)


class _Episode:
    def __init__(self, won):
        self.info = {"is_success": won, "puzzle_type": (1, 0, 0), "ended_by": "solved"}

    def get_infos(self, index):
        return self.info


def test_the_new_stacks_win_rate_spans_iterations_as_the_old_stacks_does():
    """RLlib 2.60 empties a logged mean at each report, however large its window; the callbacks
    keep the last 200 episodes across reports, as the old stack's custom metrics do."""
    from ray.rllib.utils.metrics.metrics_logger import MetricsLogger

    from keras_simplicial.agents.training.rllib.impala_torch import (
        CUSTOM_METRICS,
        EpisodeOutcomeCallbacks,
    )

    callbacks, ours, rllibs = EpisodeOutcomeCallbacks(), MetricsLogger(), MetricsLogger()
    reported = []
    for wins in ([True] * 30, [False] * 10):  # two iterations of one env runner
        for won in wins:
            callbacks.on_episode_end(episode=_Episode(won), metrics_logger=ours)
            rllibs.log_value(("win",), float(won), reduce="mean", window=200)
        callbacks.on_sample_end(metrics_logger=ours, samples=[])
        custom = ours.reduce()[CUSTOM_METRICS]  # Stats objects, as an env runner reports them
        reported.append(
            ({name: float(value) for name, value in custom.items()}, float(rllibs.reduce()["win"]))
        )
    assert reported[0][0]["win"] == 1.0 and reported[0][1] == 1.0
    assert reported[1][0]["win"] == pytest.approx(30 / 40)  # the window of the last 200 episodes
    assert reported[1][1] == 0.0  # RLlib's own window: this iteration's episodes only
    assert reported[1][0]["win/type_1_0_0"] == pytest.approx(30 / 40)


def test_each_builder_refuses_the_other_stack_by_name():
    from keras_simplicial.agents.training.rllib.impala import impala_config
    from keras_simplicial.agents.training.rllib.impala_torch import torch_impala_config

    with pytest.raises(ValueError, match=r"engine \(--engine\) is 'rllib-new'"):
        impala_config(api_stack="new")
    # This process runs Keras on TensorFlow: the new stack names the backend it needs.
    with pytest.raises(ValueError, match="KERAS_BACKEND=torch"):
        torch_impala_config(env="BoxWorld-v0", agent="relational")
    with pytest.raises(ValueError, match=r"no_such_key"):
        torch_impala_config(overrides={"no_such_key": 1})


def test_the_command_line_chooses_the_backend_before_keras(tmp_path):
    import argparse

    from keras_simplicial.agents.commands.training import keras_environment

    NEW_STACK_ENVIRONMENT = {"KERAS_BACKEND": "torch"}
    new = argparse.Namespace(api_stack="new", resume=False, out=None)
    old = argparse.Namespace(api_stack=None, resume=False, out=None)
    assert keras_environment(new) == NEW_STACK_ENVIRONMENT and keras_environment(old) == {}
    run = RunDirectory(tmp_path / "run").create()
    RunArguments(engine="rllib-new").write(run.run_file)
    resume = argparse.Namespace(api_stack=None, resume=True, out=str(run.root))
    assert keras_environment(resume) == NEW_STACK_ENVIRONMENT  # from the run's run.json


def test_rmsprop_is_tensorflows_with_epsilon_inside_the_root():
    import tensorflow as tf
    import torch

    from keras_simplicial.agents.training.rllib.torch_learner import RMSPropRootEpsilon

    rng = np.random.default_rng(0)
    start = rng.normal(size=(3, 4)).astype(np.float32)
    gradients = [rng.normal(size=(3, 4)).astype(np.float32) * 0.1 for _ in range(4)]
    for momentum in (0.0, 0.5):
        parameter = torch.nn.Parameter(torch.tensor(start))
        ours = RMSPropRootEpsilon([parameter], lr=0.01, decay=0.9, epsilon=0.1, momentum=momentum)
        variable = tf.Variable(start)
        theirs = tf.keras.optimizers.RMSprop(0.01, rho=0.9, momentum=momentum, epsilon=0.1)
        for gradient in gradients:
            parameter.grad = torch.tensor(gradient)
            ours.step()
            theirs.apply_gradients([(tf.constant(gradient), variable)])
        np.testing.assert_allclose(parameter.detach().numpy(), variable.numpy(), rtol=1e-5)


def vtrace_targets_of_one_unfinished_chunk(learner_class):
    """The V-trace targets that `learner_class.compute_loss_for_module` computes for one chunk of
    an unfinished episode as RLlib 2.60's connector lays it out: 3 steps of reward 0, then the
    appended bootstrap step (`LOSS_MASK` false, the last action and its log-probability copied),
    the values those of a Gem ahead (V_t = gamma V_{t+1}) under a uniform policy over 4 actions.
    """
    from types import SimpleNamespace

    import torch
    from ray.rllib.algorithms.impala.torch import impala_torch_learner
    from ray.rllib.core.columns import Columns
    from ray.rllib.models.torch.torch_distributions import TorchCategorical

    gamma = 0.9
    values = torch.tensor([0.729, 0.81, 0.9, 1.0])
    module = SimpleNamespace(
        unwrapped=lambda: module,
        get_train_action_dist_cls=lambda: TorchCategorical,
        compute_values=lambda batch, embeddings=None: values,
    )
    learner = learner_class.__new__(learner_class)
    learner._module = {"policy": module}
    learner.entropy_coeff_schedulers_per_module = {
        "policy": SimpleNamespace(get_current_value=lambda: 0.01)
    }
    learner.metrics = SimpleNamespace(log_dict=lambda *args, **kwargs: None)
    config = SimpleNamespace(
        get_rollout_fragment_length=lambda: 4,
        gamma=gamma,
        vtrace_clip_rho_threshold=1.0,
        vtrace_clip_pg_rho_threshold=1.0,
        vf_loss_coeff=0.5,
    )
    batch = {
        Columns.LOSS_MASK: torch.tensor([True, True, True, False]),
        Columns.ACTIONS: torch.tensor([0, 1, 2, 2]),
        Columns.ACTION_LOGP: torch.log(torch.full((4,), 0.25)),
        Columns.REWARDS: torch.zeros(4),
        Columns.TERMINATEDS: torch.tensor([False, False, False, False]),
    }
    fwd_out = {Columns.ACTION_DIST_INPUTS: torch.zeros(4, 4)}
    seen = {}
    vtrace = impala_torch_learner.vtrace_torch

    def recording_vtrace(**kwargs):
        seen["targets"], seen["advantages"] = vtrace(**kwargs)
        return seen["targets"], seen["advantages"]

    impala_torch_learner.vtrace_torch = recording_vtrace
    try:
        learner.compute_loss_for_module(
            module_id="policy", config=config, batch=batch, fwd_out=fwd_out
        )
    finally:
        impala_torch_learner.vtrace_torch = vtrace
    return seen["targets"].flatten().numpy(), seen["advantages"].flatten().numpy(), values.numpy()


def test_vtrace_bootstraps_an_unfinished_chunk_from_the_value_after_it():
    from ray.rllib.algorithms.impala.torch.impala_torch_learner import IMPALATorchLearner

    from keras_simplicial.agents.training.rllib.torch_learner import KerasAgentIMPALALearner

    # RLlib 2.60 as it comes: the appended step's TD error -V takes the bootstrap back out of
    # every target of the chunk; a Ray release that mends this fails here (then drop the mending).
    targets, advantages, values = vtrace_targets_of_one_unfinished_chunk(IMPALATorchLearner)
    np.testing.assert_allclose(targets[:3], 0.0, atol=1e-6)
    assert np.all(advantages[:3] < -0.7)
    # Ours: the targets are the values (every TD error is 0 on the way to the bootstrap value),
    # so are the advantages; the appended step's target is its value, the bootstrap.
    targets, advantages, values = vtrace_targets_of_one_unfinished_chunk(KerasAgentIMPALALearner)
    np.testing.assert_allclose(targets, values, atol=1e-6)
    np.testing.assert_allclose(advantages[:3], 0.0, atol=1e-6)


@pytest.mark.slow  # about a minute: the default suite keeps under 15 minutes on 2 cores
def test_a_new_stack_run_trains_resumes_and_evaluates_from_the_command_line(tmp_path):
    # `--out` relative to the working directory: RLlib's new-stack save took it for a URI.
    out = tmp_path / "run"
    train = tiny_train_command(
        "--api-stack", "new", config={"train_batch_size": 80, "min_time_s_per_iteration": 0}
    )
    # The command line sets KERAS_BACKEND itself (os.environ's, without it, is passed on).
    first = run_cli(*train, "--stop-timesteps", "300", cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert "steps/s (sampling" in first.stdout  # the progress line of the old stack
    run = RunDirectory(out)
    assert RunArguments.read(run.run_file).api_stack == "new"
    rows = run.read_metrics()
    for column in ("timesteps", "frames_per_s", "win_rate", "policy_loss", "vf_loss", "lr"):
        assert column in rows[0], column
    assert any(row["policy_loss"] for row in rows) and rows[-1]["lr"]
    # EpisodeOutcomeCallbacks (empty until the first episode has ended).
    win_rates = [float(row["win_rate"]) for row in rows if row["win_rate"] != ""]
    assert win_rates and all(0.0 <= rate <= 1.0 for rate in win_rates), rows
    # The clipped gradient's norm per model part, as on the old stack (none of it "other").
    parts = {"front_end", "one_simplicial", "block_feedforward_norms", "mlp_heads"}
    assert {
        name[len("grad_norm/") :] for name in rows[-1] if name.startswith("grad_norm/")
    } == parts
    assert all(float(rows[-1][f"grad_norm/{part}"]) > 0 for part in parts)
    best, record = run.best_checkpoint()
    assert "greedy_win_rate" in record and (best / "manifest.json").is_file()
    steps = int(rows[-1]["timesteps"])

    second = run_cli(
        *train[:-2], "--resume", "--out", "run", "--stop-timesteps", str(steps + 1), cwd=tmp_path
    )
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-3000:]
    assert "Resumed from" in second.stdout
    iterations = [int(row["training_iteration"]) for row in run.read_metrics()]
    assert iterations == list(range(1, len(iterations) + 1)) and len(iterations) > len(rows)
    assert int(run.read_metrics()[-1]["timesteps"]) > steps

    # `evaluate` runs Keras on TensorFlow and loads the module's Keras weights.
    evaluated = run_cli("evaluate", str(out), "--episodes", "4")
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    assert json.loads(run.evaluation_file.read_text())["overall"]["episodes"] == 4


KILL_AN_ENV_RUNNER = r"""
import os, signal, time
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.rllib.trainer import (
    build_algorithm, environment_steps, start_ray,
)
import ray

arguments = RunArguments.from_preset(
    "easy", "relational", api_stack="new", num_env_runners=1, num_envs_per_env_runner=4, seed=0,
    overrides={"train_batch_size": 80, "min_time_s_per_iteration": 0},
)
start_ray(num_env_runners=1, api_stack="new")
algorithm = build_algorithm(arguments)
algorithm.train()
group = algorithm.env_runner_group
(pid,) = group.foreach_env_runner(lambda runner: os.getpid(), local_env_runner=False)
os.kill(pid, signal.SIGKILL)
steps_after_kill = environment_steps(algorithm)
restarts, deadline = 0, time.time() + 300  # a new env runner loads TensorFlow and PyTorch
while time.time() < deadline:
    result = algorithm.train()
    restarts += result.get("fault_tolerance", {}).get("num_remote_worker_restarts", 0)
    healthy = group.num_healthy_remote_workers() == 1
    if restarts and healthy and environment_steps(algorithm) > steps_after_kill + 400:
        break
(new_pid,) = group.foreach_env_runner(lambda runner: os.getpid(), local_env_runner=False)
print("restarts", restarts, "healthy", group.num_healthy_remote_workers(), "new pid",
      new_pid != pid, "steps", environment_steps(algorithm) - steps_after_kill)
assert restarts > 0 and group.num_healthy_remote_workers() == 1 and new_pid != pid
assert environment_steps(algorithm) > steps_after_kill + 400
algorithm.stop()
ray.shutdown()
print("ok")
"""


@pytest.mark.slow
def test_rllib_restarts_a_killed_env_runner_and_training_goes_on():
    done = run_python(KILL_AN_ENV_RUNNER, backend="torch")
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), (
        done.stdout[-2000:] + done.stderr[-3000:]
    )
