"""The Keras engine (`--engine keras`): V-trace and the loss against RLlib's own on the same
inputs, its settings checked, a run trained, saved, resumed (on another backend too) and read
back, the PyTorch learner step against TensorFlow's on one batch, and the engines as records.

Keras chooses its backend once per process: what runs Keras on JAX or PyTorch runs in a
subprocess."""

import dataclasses
import json

import numpy as np
import pytest
from fresh_process import TINY_RUN, run_cli, run_python, tiny_train_command

from keras_simplicial.agents.training.engine_record import EngineUnavailable
from keras_simplicial.agents.training.engines import ENGINES, engine_named, engine_of_checkpoint
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory

TINY = TINY_RUN


def time_major_inputs(steps=6, boards=4, actions=4, seed=0):
    rng = np.random.default_rng(seed)
    terminateds = np.zeros((steps, boards), np.float32)
    terminateds[2, 1] = terminateds[5, 3] = terminateds[0, 2] = 1.0
    return {
        "logits": rng.normal(size=(steps, boards, actions)).astype(np.float32),
        "behaviour_logits": rng.normal(size=(steps, boards, actions)).astype(np.float32),
        "values": rng.normal(size=(steps, boards)).astype(np.float32),
        "actions": rng.integers(0, actions, size=(steps, boards)).astype(np.int32),
        "rewards": rng.normal(size=(steps, boards)).astype(np.float32),
        "terminateds": terminateds,
        "bootstrap_value": rng.normal(size=boards).astype(np.float32),
    }


def log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def chosen(log_probs, actions):
    return np.take_along_axis(log_probs, actions[..., None], axis=-1)[..., 0]


@pytest.mark.parametrize("clips", [(1.0, 1.0), (0.7, 2.0)])
def test_vtrace_matches_rllibs_on_the_same_inputs(clips):
    import tensorflow  # noqa: F401  (before RLlib)
    from ray.rllib.algorithms.impala import vtrace_tf

    from keras_simplicial.agents.training.vtrace import vtrace

    inputs = time_major_inputs()
    log_rhos = chosen(log_softmax(inputs["logits"]), inputs["actions"]) - chosen(
        log_softmax(inputs["behaviour_logits"]), inputs["actions"]
    )
    discounts = 0.9 * (1.0 - inputs["terminateds"])
    arguments = (log_rhos, discounts, inputs["rewards"], inputs["values"])
    ours = vtrace(*arguments, inputs["bootstrap_value"], *clips)
    theirs = vtrace_tf.from_importance_weights(
        *arguments,
        inputs["bootstrap_value"],
        clip_rho_threshold=clips[0],
        clip_pg_rho_threshold=clips[1],
    )
    np.testing.assert_allclose(np.asarray(ours[0]), theirs.vs.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        np.asarray(ours[1]), theirs.pg_advantages.numpy(), rtol=1e-5, atol=1e-5
    )


def test_the_loss_is_the_old_stacks_on_one_batch():
    import tensorflow as tf
    from ray.rllib.algorithms.impala.impala_tf_policy import VTraceLoss
    from ray.rllib.models.tf.tf_action_dist import Categorical

    from keras_simplicial.agents.training.vtrace import impala_loss

    inputs = time_major_inputs()
    target_log_probs = log_softmax(inputs["logits"])
    behaviour_logp = chosen(log_softmax(inputs["behaviour_logits"]), inputs["actions"])
    entropy = -(np.exp(target_log_probs) * target_log_probs).sum(-1)
    coefficients = {"vf_loss_coeff": 0.5, "entropy_coeff": 5e-3}
    theirs = VTraceLoss(
        actions=tf.constant(inputs["actions"][..., None]),
        actions_logp=tf.constant(chosen(target_log_probs, inputs["actions"])),
        actions_entropy=tf.constant(entropy),
        dones=tf.constant(inputs["terminateds"] > 0),
        behaviour_action_logp=tf.constant(behaviour_logp),
        behaviour_logits=[tf.constant(inputs["behaviour_logits"])],
        target_logits=[tf.constant(inputs["logits"])],
        discount=0.99,
        rewards=tf.constant(inputs["rewards"]),
        values=tf.constant(inputs["values"]),
        bootstrap_value=tf.constant(inputs["bootstrap_value"]),
        dist_class=Categorical,
        model=None,
        valid_mask=tf.ones(inputs["values"].shape, tf.bool),
        config={"_separate_vf_optimizer": False},
        **coefficients,
    )
    total, stats = impala_loss(
        inputs["logits"],
        inputs["values"],
        inputs["actions"],
        behaviour_logp,
        inputs["rewards"],
        inputs["terminateds"],
        inputs["bootstrap_value"],
        gamma=0.99,
        **coefficients,
    )
    close = {"rtol": 1e-5, "atol": 1e-5}
    np.testing.assert_allclose(float(total), float(theirs.total_loss), **close)
    np.testing.assert_allclose(float(stats["policy_loss"]), float(theirs.mean_pi_loss), **close)
    np.testing.assert_allclose(float(stats["vf_loss"]), float(theirs.mean_vf_loss), **close)
    np.testing.assert_allclose(float(stats["entropy"]), float(theirs.mean_entropy), **close)


def test_the_schedule_is_piecewise_linear_and_held_past_its_ends():
    from keras_simplicial.agents.training.keras_engine.settings import scheduled

    schedule = [[0, 5e-4], [600_000, 5e-5]]
    assert scheduled(schedule, 0) == 5e-4 and scheduled(schedule, 10**9) == 5e-5
    assert scheduled(schedule, 300_000) == pytest.approx(2.75e-4)
    assert scheduled([[0, 1e-3]], 12345) == 1e-3


def test_the_settings_are_the_presets_and_refuse_what_the_engine_does_not_read():
    from keras_simplicial.agents.training.keras_engine.settings import engine_settings

    easy = engine_settings(RunArguments.from_preset("easy", "relational", engine="keras"))
    assert easy["num_epochs"] == 2 and easy["lr_schedule"] == [[0, 5e-4], [600_000, 5e-5]]
    assert easy["grad_clip"] == 40.0 and easy["decay"] == 0.99 and easy["epsilon"] == 0.1
    for changes, message in (
        ({"overrides": {"learner_queue_size": 4}}, r"does not read \['learner_queue_size'\]"),
        ({"overrides": {"gamma": 1.5}}, "gamma"),
        ({"num_env_runners": 2}, r"num_env_runners \(--num-env-runners\) must be 0"),
        ({"sampler": "rllib"}, r"sampler \(--sampler\) must be 'batched'"),
        ({"num_envs_per_env_runner": 7}, r"e.g. --num-envs 32"),
    ):
        arguments = RunArguments.from_preset("easy", "relational", engine="keras", **changes)
        with pytest.raises(ValueError, match=message):
            engine_settings(arguments)


def test_the_engine_trains_saves_and_resumes_where_it_stopped(tmp_path):
    from keras_simplicial.agents.training.checkpoint_integrity import (
        DamagedCheckpointError,
        verify_checkpoint,
    )
    from keras_simplicial.agents.training.checkpoints import load_policy, saved_keras_weights
    from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA
    from keras_simplicial.agents.training.metric_rows import metrics_row

    arguments = RunArguments.from_preset("easy", "relational", engine="keras", seed=3, **TINY)
    engine = KerasIMPALA(arguments)
    for _ in range(3):
        iteration = engine.train()
    assert engine.iteration == 3 and engine.timesteps == 3 * 80 and engine.updates == 3 * 2 * 2
    assert (iteration.number, iteration.timesteps) == (3, 240)
    assert iteration.timings["act_s"] > 0 and iteration.timings["learn_s"] > 0
    row = metrics_row(iteration, started_at=0.0)
    assert iteration.learner["lr"] < 5e-4  # the preset's schedule, annealing
    assert row["timesteps"] == 240 and row["grad_gnorm"] > 0
    assert row["policy_loss"] != "" and row["vf_explained_var"] != ""
    assert {name for name in row if name.startswith("grad_norm/")} == {
        "grad_norm/front_end",
        "grad_norm/one_simplicial",
        "grad_norm/block_feedforward_norms",
        "grad_norm/mlp_heads",
    }

    run = RunDirectory(tmp_path / "run").create()
    arguments.write(run.run_file)
    checkpoint = run.save_checkpoint(engine, engine.iteration)
    assert engine_of_checkpoint(checkpoint) is ENGINES["keras"]
    verify_checkpoint(checkpoint)  # written with its manifest
    assert sum(f.stat().st_size for f in checkpoint.iterdir()) < 16 * 2**20
    weights = engine.model.get_weights()
    for saved, current in zip(saved_keras_weights(checkpoint, engine.model), weights):
        np.testing.assert_array_equal(saved, current)
    assert len(load_policy(checkpoint).get_weights()) == len(weights)  # evaluate reads it

    resumed = KerasIMPALA(arguments).restore(checkpoint)
    assert (resumed.iteration, resumed.timesteps, resumed.updates) == (3, 240, 12)
    for restored, saved in zip(resumed.model.get_weights(), weights):
        np.testing.assert_array_equal(restored, saved)
    for restored, saved in zip(
        resumed.learner.optimizer.variables, engine.learner.optimizer.variables
    ):
        np.testing.assert_array_equal(np.asarray(restored), np.asarray(saved))
    assert resumed.rng.bit_generator.state == engine.rng.bit_generator.state
    resumed.train()
    assert resumed.iteration == 4 and resumed.timesteps == 320

    with open(checkpoint / "model_weights.npz", "r+b") as stream:
        stream.seek(100)
        stream.write(b"\0" * 8)
    with pytest.raises(DamagedCheckpointError, match="model_weights.npz"):
        verify_checkpoint(checkpoint)
    other = dataclasses.replace(arguments, agent="simplicial")
    with pytest.raises(ValueError, match="another agent or board"):
        KerasIMPALA(other).restore(run.save_checkpoint(engine, 9))


def test_a_new_run_starts_from_a_saved_policys_weights_and_refuses_another_model(tmp_path, capsys):
    from keras_simplicial.agents.training.keras_engine.impala import (
        KerasIMPALA,
        open_keras_engine,
    )
    from keras_simplicial.agents.training.train import train

    arguments = RunArguments.from_preset("easy", "relational", engine="keras", seed=3, **TINY)
    trained = KerasIMPALA(arguments)
    trained.train()
    run = RunDirectory(tmp_path / "run").create()
    arguments.write(run.run_file)
    checkpoint = run.save_checkpoint(trained, trained.iteration)

    started = dataclasses.replace(arguments, seed=4, init_policy=str(checkpoint))
    engine = open_keras_engine(started, None)
    for mine, saved in zip(engine.model.get_weights(), trained.model.get_weights(), strict=True):
        np.testing.assert_array_equal(mine, saved)
    fresh = KerasIMPALA(dataclasses.replace(started, init_policy=None))
    assert not all(
        np.array_equal(a, b) for a, b in zip(fresh.model.get_weights(), engine.model.get_weights())
    )
    assert engine.iteration == engine.timesteps == int(engine.learner.optimizer.iterations) == 0
    summary = train(started, out=tmp_path / "started", stop_timesteps=40, check_episodes=0)
    assert "Started from the weights of " + str(checkpoint) in capsys.readouterr().out
    assert summary.timesteps == 80  # and learns from there
    assert RunArguments.read(tmp_path / "started" / "run.json").init_policy == str(checkpoint)

    with pytest.raises(ValueError, match="is a relational agent; the run trains a simplicial"):
        open_keras_engine(dataclasses.replace(started, agent="simplicial"), None)
    # The preset's model spelt out in another form is the same model; without its entity norm,
    # another one.
    spelt_out = {**started.model_overrides, "mlp_units": (256,), "num_heads": 2}
    open_keras_engine(dataclasses.replace(started, model_overrides=spelt_out), None)
    other = {**started.model_overrides, "entity_norm": False}
    with pytest.raises(ValueError, match=r"another architecture: entity_norm True \(run: False\)"):
        open_keras_engine(dataclasses.replace(started, model_overrides=other), None)
    wider = {**arguments.env_config, "cols": arguments.env_config["cols"] + 1}
    with pytest.raises(ValueError, match="sees boards of shape"):
        open_keras_engine(dataclasses.replace(started, env_config=wider), None)
    missing = dataclasses.replace(started, init_policy=str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match=r"init_policy \(--init-policy\): No checkpoint"):
        train(missing, out=tmp_path / "failed", stop_timesteps=40)
    assert not (tmp_path / "failed" / "run.json").exists()  # so the same command can run again


def test_masked_moves_are_masked_in_acting_and_in_the_loss():
    from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA

    arguments = RunArguments.from_preset(
        "bridge-small", "relational", engine="keras", seed=0, mask_blocked_moves=True, **TINY
    )
    engine = KerasIMPALA(arguments)
    batch = engine.act()
    assert batch["allowed"].shape == (10, 8, 4)
    taken = np.take_along_axis(batch["allowed"], batch["actions"][..., None], axis=-1)
    assert taken.all()  # no blocked move is ever sampled
    assert np.isfinite([s["policy_loss"] for s in engine.learn(batch)]).all()


def test_every_engine_is_one_record_that_says_what_to_install(tmp_path):
    assert set(ENGINES) == {"rllib-old", "rllib-new", "keras"}
    with pytest.raises(ValueError, match=r"engine \(--engine\) must be one of"):
        engine_named("ray")
    lacking = dataclasses.replace(ENGINES["keras"], requires=("no_such_module_here",))
    with pytest.raises(EngineUnavailable, match="needs no_such_module_here.*pip install keras"):
        lacking.require()
    ENGINES["keras"].require()
    for engine in ENGINES.values():
        checkpoint = tmp_path / engine.name
        (checkpoint / engine.checkpoint_marker).mkdir(parents=True)
        assert engine_of_checkpoint(checkpoint) is engine
    assert engine_of_checkpoint(tmp_path) is None
    # An earlier run.json (api_stack, no engine) reads as the engine it trained with.
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"env": "BoxWorld-v0", "agent": "relational", "api_stack": "new"}))
    assert RunArguments.read(path).engine == "rllib-new"
    with pytest.raises(ValueError, match="give one"):
        RunArguments.from_preset("easy", engine="keras", api_stack="old")


def test_an_engine_whose_modules_are_missing_says_what_to_install(tmp_path, monkeypatch, capsys):
    import importlib.util

    import keras_simplicial_cli as cli

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "ray" else real_find_spec(name, *args),
    )
    out = tmp_path / "run"
    assert cli.main(["train", "--preset", "easy", "--engine", "rllib-old", "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "keras-simplicial train: error: The rllib-old engine needs ray, which this Python lacks: "
        'pip install "keras-simplicial[agents]" (TensorFlow, Ray RLlib).'
    )
    assert not out.exists()  # nothing started


def test_the_worked_example_of_a_new_run_argument_covers_every_engine():
    from pathlib import Path

    text = (Path(__file__).parents[3] / "docs" / "development.md").read_text(encoding="utf-8")
    example = text[text.index("## A new run argument") :]
    example = example[: example.index("\n## ")]
    for engine in ENGINES.values():
        builder = engine.configure.__name__
        assert f"`{engine.name}`, `{builder}`" in example, engine.name


@pytest.mark.integration
def test_a_run_trained_on_tensorflow_resumes_on_jax_without_tensorflow_or_ray(tmp_path):
    import keras

    from keras_simplicial.agents.training.train import train

    assert keras.backend.backend() == "tensorflow"
    # Compiled (XLA on TensorFlow, jax.jit on JAX): JAX without jit runs op by op, minutes here.
    arguments = RunArguments.from_preset(
        "easy", "relational", engine="keras", seed=1, **{**TINY, "model_overrides": {}}
    )
    summary = train(
        arguments, out=tmp_path / "run", stop_timesteps=160, check_episodes=2, progress="none"
    )
    assert summary.timesteps == 160 and summary.iterations == 2
    run = RunDirectory(tmp_path / "run")
    assert [int(row["timesteps"]) for row in run.read_metrics()] == [80, 160]
    assert run.read_metrics()[-1]["attention/one_simplicial_entropy"]
    assert float(run.read_metrics()[-1]["trainability/pooled/state_sd"]) > 0  # where it stands
    best, record = run.best_checkpoint()
    assert "greedy_win_rate" in record and (best / "manifest.json").is_file()
    run.pack_metrics()  # as a finished run is committed: the resume unpacks it

    # As on a lent GPU machine: JAX, and neither TensorFlow nor Ray.
    resumed = run_cli(
        "train", "--resume", "--out", "run", "--stop-timesteps", "240", "--check-episodes", "2",
        "--progress", "none", backend="jax", cwd=tmp_path, without=("tensorflow", "ray"),
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    assert "Resumed from" in resumed.stdout and "Keras on jax" in resumed.stdout
    assert "metrics.csv.gz: unpacked to metrics.csv" in resumed.stdout
    assert [int(row["timesteps"]) for row in run.read_metrics()] == [80, 160, 240]
    assert not run.packed_metrics_file.exists()


@pytest.mark.integration
def test_a_run_trained_on_torch_without_tensorflow_or_ray_resumes_on_tensorflow(tmp_path):
    from keras_simplicial.agents.training.keras_engine.checkpoint import read_engine_state
    from keras_simplicial.agents.training.train import train

    train_command = tiny_train_command(
        "--engine", "keras", "--model-config", json.dumps(TINY["model_overrides"]),
        config=TINY["overrides"],
    )  # fmt: skip
    trained = run_cli(
        *train_command, "--stop-timesteps", "160", backend="torch", cwd=tmp_path,
        without=("tensorflow", "ray"),
    )  # fmt: skip
    assert trained.returncode == 0, trained.stdout[-2000:] + trained.stderr[-3000:]
    assert "Keras on torch" in trained.stdout
    run = RunDirectory(tmp_path / "run")
    rows = run.read_metrics()
    assert [int(row["timesteps"]) for row in rows] == [80, 160]
    for name in ("policy_loss", "vf_loss", "entropy", "grad_gnorm", "grad_norm/mlp_heads"):
        assert all(np.isfinite(float(row[name])) for row in rows), name
    best, record = run.best_checkpoint()
    assert "greedy_win_rate" in record and read_engine_state(best)["backend"] == "torch"

    summary = train(out=tmp_path / "run", resume=True, stop_timesteps=240, progress="none",
                    check_episodes=2)  # fmt: skip
    assert summary.timesteps == 240
    assert [int(row["timesteps"]) for row in run.read_metrics()] == [80, 160, 240]


TORCH_LEARNS_ON_THE_SAVED_BATCH = """
import json, sys
from pathlib import Path
import keras
import numpy as np
from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA
from keras_simplicial.agents.training.run_arguments import RunArguments
assert keras.backend.backend() == "torch"
folder = Path(sys.argv[1])
engine = KerasIMPALA(RunArguments.read(folder / "run.json")).restore(folder / "checkpoint")
with np.load(folder / "batch.npz") as saved:
    batch = dict(saved)
stats = engine.learner.learn(batch, 1e-2, 0.01)
np.savez(folder / "updated.npz", *engine.model.get_weights())
(folder / "stats.json").write_text(json.dumps(stats))
"""


@pytest.mark.integration
def test_the_torch_learner_step_is_the_tensorflow_one_on_the_same_weights_and_batch(tmp_path):
    from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA
    from keras_simplicial.agents.training.presets import CLIP_EACH_VARIABLE

    # Masked moves and a global norm clipped at 1 (the gradient's is about 10): every branch of
    # the step, the optimizer's clipping and RMSProp's velocities (one update before) included.
    overrides = {**TINY["overrides"], "grad_clip": 1.0, CLIP_EACH_VARIABLE: False}
    arguments = RunArguments.from_preset(
        "easy", "simplicial", engine="keras", seed=2, mask_blocked_moves=True,
        **{**TINY, "overrides": overrides},
    )  # fmt: skip
    engine = KerasIMPALA(arguments)
    engine.learn(engine.act())
    batch = engine.act()
    arguments.write(tmp_path / "run.json")
    engine.save(tmp_path / "checkpoint")
    np.savez(tmp_path / "batch.npz", **batch)
    done = run_python(TORCH_LEARNS_ON_THE_SAVED_BATCH, str(tmp_path), backend="torch")
    assert done.returncode == 0, done.stderr[-3000:]

    before = engine.model.get_weights()
    ours = engine.learner.learn(batch, 1e-2, 0.01)
    theirs = json.loads((tmp_path / "stats.json").read_text())
    assert set(theirs) == set(ours)
    for name, value in ours.items():
        assert theirs[name] == pytest.approx(value, rel=1e-4, abs=1e-6), name
    assert ours["grad_gnorm"] == pytest.approx(1.0)  # clipped
    with np.load(tmp_path / "updated.npz") as saved:
        updated = [saved[f"arr_{index}"] for index in range(len(saved.files))]
    moved = 0.0
    for start, tensorflow_weights, torch_weights in zip(
        before, engine.model.get_weights(), updated, strict=True
    ):
        np.testing.assert_allclose(
            torch_weights - start, tensorflow_weights - start, rtol=1e-3, atol=1e-6
        )
        moved = max(moved, float(np.abs(tensorflow_weights - start).max()))
    assert moved > 1e-3  # the update is far above the tolerance


JAX_FORWARD_FOLLOWS_THE_WEIGHTS = """
import numpy as np
import keras
from keras_simplicial.agents.model.architecture import build_agent_model
from keras_simplicial.agents.training.checkpoints import keras_logits_and_values
model = build_agent_model("relational", (5, 7, 3), 4)
forward = keras_logits_and_values(model)
x = np.random.default_rng(0).integers(0, 255, (3, 5, 7, 3)).astype(np.uint8)
before = np.asarray(forward(x)[0])
model.set_weights([w * 0 for w in model.get_weights()])
after = np.asarray(forward(x)[0])
assert keras.backend.backend() == "jax"
assert not np.allclose(before, after) and np.allclose(after, 0), (before, after)

from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA
from keras_simplicial.agents.training.run_arguments import RunArguments
arguments = RunArguments.from_preset("easy", "relational", engine="keras", seed=3, **%r)
engine = KerasIMPALA(arguments)
start = engine.model.get_weights()
engine.train()
learnt = engine.keras_model().get_weights()
assert max(float(np.abs(a - b).max()) for a, b in zip(start, learnt)) > 1e-4
"""


@pytest.mark.integration
def test_the_greedy_check_and_the_diagnostics_on_jax_follow_the_weights():
    # Each checkpoint's greedy check sets its weights into one model: a compiled forward pass
    # that took the first weights as constants would score every checkpoint alike. And JAX's
    # learner step learns on arrays of its own: the metrics' attention and trainability sites
    # read the model, which must be given the learnt weights first (`keras_model`).
    result = run_python(JAX_FORWARD_FOLLOWS_THE_WEIGHTS % (TINY,), backend="jax")
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.slow  # two fresh interpreters that load TensorFlow: about a minute on 2 cores
def test_the_command_line_trains_on_tensorflow_and_resumes_on_jax(tmp_path):
    train = tiny_train_command(
        "--engine", "keras", "--model-config", json.dumps(TINY["model_overrides"]),
        config=TINY["overrides"],
    )  # fmt: skip
    first = run_cli(*train, "--stop-timesteps", "160", cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert "Keras on tensorflow; no Ray" in first.stdout
    run = RunDirectory(tmp_path / "run")
    assert RunArguments.read(run.run_file).engine == "keras"
    rows = run.read_metrics()
    assert [int(row["timesteps"]) for row in rows] == [80, 160]
    assert rows[-1]["policy_loss"] and rows[-1]["lr"]

    second = run_cli(
        "train", "--resume", "--out", "run", "--stop-timesteps", "240", "--check-episodes", "4",
        backend="jax", cwd=tmp_path,
    )  # fmt: skip
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-3000:]
    assert "Resumed from" in second.stdout and "Keras on jax" in second.stdout
    assert [int(row["timesteps"]) for row in run.read_metrics()] == [80, 160, 240]
    evaluated = run_cli("evaluate", "run", "--episodes", "4", cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    assert json.loads(run.evaluation_file.read_text())["overall"]["episodes"] == 4
