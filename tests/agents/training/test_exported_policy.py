"""A checkpoint's policy exported as Keras weights (`keras-simplicial export-policy`): the
checkpoint's weights and what they are, played wherever the checkpoint is, in its place once a
finished run's checkpoints are gone, and named when damaged. On a Keras-engine checkpoint (no
Ray); tests/agents/analysis/test_analysis_cli.py exports RLlib's."""

import json
import shutil

import numpy as np
import pytest
from fresh_process import TINY_RUN

import keras_simplicial_cli as cli
from keras_simplicial.agents.training.checkpoints import (
    best_checkpoint_of,
    export_policy,
    load_attention_agent,
    load_policy,
    resolve_checkpoint,
    run_arguments_of,
    saved_keras_weights,
)
from keras_simplicial.agents.training.exported_policy import (
    POLICY_RECORD,
    POLICY_WEIGHTS,
    RUN_COPY,
    exported_policy_dir,
)
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory

TINY = TINY_RUN


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A Keras-engine run with one checkpoint (the best), untrained (its weights are the
    model's first ones), named as at iteration 7 with its row in metrics.csv."""
    from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA

    arguments = RunArguments.from_preset("easy", "simplicial", engine="keras", seed=2, **TINY)
    engine = KerasIMPALA(arguments)
    run = RunDirectory(tmp_path_factory.mktemp("runs") / "run").create()
    arguments.write(run.run_file)
    run.metrics_file.write_text("training_iteration,timesteps\n6,480\n7,560\n")
    checkpoint = run.save_checkpoint(engine, 7, win_rate=0.5)
    return run, checkpoint, arguments, 560


@pytest.fixture
def run_copy(trained_run, tmp_path):
    run, _, arguments, timesteps = trained_run
    shutil.copytree(run.root, tmp_path / "run")
    return RunDirectory(tmp_path / "run"), arguments, timesteps


def observations(seed=0):
    return np.random.default_rng(seed).integers(0, 256, (6, 3, 7, 3)).astype(np.uint8)


def test_the_exported_policy_holds_the_checkpoints_weights_and_says_what_they_are(run_copy, capsys):
    run, arguments, timesteps = run_copy
    checkpoint = run.latest_checkpoint()
    assert cli.main(["export-policy", str(run.root), "--best"]) == 0
    exported = run.exported_dir / checkpoint.name
    assert f"Exported {exported.resolve()}" in capsys.readouterr().out
    assert {path.name for path in exported.iterdir()} == {
        POLICY_WEIGHTS,
        POLICY_RECORD,
        RUN_COPY,
        "manifest.json",
    }
    record = json.loads((exported / POLICY_RECORD).read_text())
    assert record["checkpoint"] == checkpoint.name and record["iteration"] == 7
    assert record["timesteps"] == timesteps and record["engine"] == "keras"
    assert record["source"].endswith(f"run/checkpoints/{checkpoint.name}")
    assert record["exported_by"]["package_version"]
    assert run_arguments_of(exported) == arguments

    policy, original = load_policy(exported), load_policy(checkpoint)
    for loaded, saved in zip(
        policy.get_weights(), saved_keras_weights(checkpoint, original.base_model)
    ):
        np.testing.assert_array_equal(loaded, saved)
    np.testing.assert_array_equal(
        np.asarray(policy.logits_and_values(observations())[0]),
        np.asarray(original.logits_and_values(observations())[0]),
    )
    agent, read = load_attention_agent(exported / POLICY_RECORD)  # a file of it names it too
    assert agent.kind == "simplicial" and read == arguments
    np.testing.assert_allclose(
        agent(observations(1))[0], load_attention_agent(checkpoint)[0](observations(1))[0]
    )


def test_a_run_kept_without_its_checkpoints_plays_their_exported_policies(run_copy):
    run, _, _ = run_copy
    checkpoint = run.latest_checkpoint()
    exported = export_policy(checkpoint)
    assert exported == run.exported_dir / checkpoint.name
    shutil.rmtree(checkpoint)
    assert run.best_checkpoint() is None and run.exported_policies() == [exported]
    assert run.best_policy()[0] == exported == best_checkpoint_of(run.root)
    assert run.policy_of(checkpoint) == exported
    assert run.policy_of(run.checkpoints_dir / "iter_000009") == run.checkpoints_dir / "iter_000009"
    with pytest.raises(FileNotFoundError, match=f"exported policies: {exported}"):
        resolve_checkpoint(run.root)  # the latest checkpoint is gone: which is meant is not said
    assert resolve_checkpoint(exported) == exported.resolve()


def test_a_damaged_exported_policy_is_named_and_never_half_loaded(run_copy):
    from keras_simplicial.agents.training.checkpoint_integrity import DamagedCheckpointError

    run, _, _ = run_copy
    exported = export_policy(run.latest_checkpoint(), out=run.root.parent / "elsewhere")
    weights = exported / POLICY_WEIGHTS
    damaged = bytearray(weights.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    weights.write_bytes(bytes(damaged))
    with pytest.raises(DamagedCheckpointError, match=f"{POLICY_WEIGHTS} does not match"):
        load_policy(exported)
    (exported / "manifest.json").unlink()
    with pytest.raises(DamagedCheckpointError, match="manifest.json is missing"):
        load_attention_agent(exported)


def test_what_cannot_be_exported_is_refused_in_one_line(run_copy, tmp_path, capsys):
    run, _, _ = run_copy
    exported = export_policy(run.latest_checkpoint())
    with pytest.raises(ValueError, match="is an exported policy already"):
        export_policy(exported)
    alone = tmp_path / "alone"
    shutil.copytree(run.latest_checkpoint(), alone)
    assert exported_policy_dir(alone) is None
    assert cli.main(["export-policy", str(alone)]) == 2
    assert "is not in a run directory (OUT/checkpoints/iter_N): give --out" in (
        capsys.readouterr().err
    )
    assert exported_policy_dir(export_policy(alone, out=tmp_path / "out")) == tmp_path / "out"
