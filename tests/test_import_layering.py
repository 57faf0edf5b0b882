"""What each import loads: the environments and `play` run without Keras and TensorFlow, while the
layers still load by name and register with Keras however Keras comes to be imported (each case in
a fresh interpreter, where nothing has been imported yet)."""

import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import keras_simplicial_cli as cli
from keras_simplicial.envs import play

LAYERS = (
    "DotProductAttention",
    "SimplicialAttention",
    "TransformerBlock",
    "TwoSimplicialTransformerBlock",
    "VirtualEntities",
)
HEAVY = ("keras", "tensorflow", "keras_simplicial_cli")
# Prints which of them the script before it imported.
LOADED = f"\nprint('loaded:', [m for m in {HEAVY!r} if m in sys.modules])"


def run_python(script, timeout=120, cwd=None, **environment):
    """Runs `script` in a fresh interpreter; returns its stdout (it must succeed)."""
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **environment}
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=environment,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def loaded_after(script):
    """Which of `HEAVY` a fresh interpreter has imported after `script`, and its output."""
    out = run_python(textwrap.dedent(script) + LOADED)
    return out.rpartition("loaded: ")[2].strip(), out


def test_the_environments_load_neither_keras_nor_tensorflow():
    script = """
        import sys
        import gymnasium as gym
        import keras_simplicial.envs
        gym.make("BridgeBoxWorld-v0").reset(seed=0)
    """
    assert loaded_after(script)[0] == "[]"


def test_play_loads_neither_keras_nor_tensorflow():
    # python -m keras_simplicial.envs.play (without the command's module), then the command.
    script = """
        import io, sys
        from keras_simplicial.envs.play import command_line
        sys.stdin = io.StringIO("l l j q")
        assert command_line(["--seed", "1", "--env", "BoxWorld-v0"]) == 0
        assert "keras_simplicial_cli" not in sys.modules
        import keras_simplicial_cli
        sys.stdin = io.StringIO("q")
        assert keras_simplicial_cli.main(["play", "--seed", "3"]) == 0
        del sys.modules["keras_simplicial_cli"]
    """
    loaded, out = loaded_after(script)
    assert loaded == "[]" and "steps 3" in out and "steps 0" in out


def test_python_m_play_takes_the_options_of_the_command(monkeypatch, capsys):
    (command,) = (
        action
        for action in cli.build_parser()._subparsers._group_actions
        if "play" in action.choices
    )
    ours = {a.dest: a for a in command.choices["play"]._actions}
    theirs = {a.dest: a for a in play.build_parser()._actions}
    assert set(ours) - {"verbose"} == set(theirs)
    for dest, action in theirs.items():
        assert action.option_strings == ours[dest].option_strings, dest
        assert (action.default, action.choices) == (ours[dest].default, ours[dest].choices), dest
    argv = ["--env", "BoxWorld-v0", "--seed", "4", "--env-config", '{"max_solution_length": 2}']
    assert (
        vars(play.build_parser().parse_args(argv)).items()
        <= vars(cli.build_parser().parse_args(["play", *argv])).items()
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("q"))
    with pytest.raises(SystemExit) as exit_:
        play.command_line(["--env-config", '{"rows": 1}'])
    assert exit_.value.code == 2
    assert "error: rows must be an int >= 3, got 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    "first_import, backend",
    [
        ("from keras_simplicial import SimplicialAttention", "numpy"),
        ("import keras.ops", "numpy"),
        ("import keras_simplicial.simplicial_attention", "numpy"),  # a layer module imports Keras
        ("import tensorflow", "tensorflow"),  # TensorFlow imports Keras while it loads
    ],
)
def test_the_layers_load_by_name_and_register_with_keras(first_import, backend):
    # The backend does not matter to the registration; Keras loads twice as fast without TensorFlow.
    script = f"""
        import sys, warnings
        warnings.simplefilter("error")
        import keras_simplicial
        assert "keras" not in sys.modules and keras_simplicial.__version__
        assert set(keras_simplicial.__all__) <= set(dir(keras_simplicial))
        assert "keras" not in sys.modules
        {first_import}
        import keras
        for name in {LAYERS!r}:
            assert keras.saving.get_registered_object("keras_simplicial>" + name), name
        for name in keras_simplicial.__all__:
            assert getattr(keras_simplicial, name).__name__ == name
        loader = keras.__spec__.loader  # Keras's own, not the hook's
        assert loader is keras.__loader__ and type(loader).__module__ != "keras_simplicial"
        print("ok")
    """
    assert run_python(script, KERAS_BACKEND=backend).strip() == "ok"


def test_a_model_saved_elsewhere_loads_after_import_keras_simplicial(tmp_path):
    import keras

    from keras_simplicial import SimplicialAttention, TwoSimplicialTransformerBlock, VirtualEntities

    entities = keras.Input((5, 8))
    x = VirtualEntities(2)(entities)
    x = TwoSimplicialTransformerBlock(key_dim=4, simplicial_key_dim=3, feedforward_dim=8)(x)
    x = SimplicialAttention(num_heads=1, key_dim=3)(x, x)
    model = keras.Model(entities, x)
    inputs = np.random.default_rng(0).normal(size=(2, 5, 8)).astype("float32")
    np.save(tmp_path / "inputs.npy", inputs)
    np.save(tmp_path / "outputs.npy", np.asarray(model(inputs)))
    model.save(tmp_path / "model.keras")
    script = """
        import numpy as np
        import keras_simplicial
        import keras
        model = keras.models.load_model("model.keras")
        outputs = np.asarray(model(np.load("inputs.npy")))
        np.testing.assert_allclose(outputs, np.load("outputs.npy"), rtol=1e-5, atol=1e-6)
        print("ok")
    """
    assert run_python(script, cwd=tmp_path).strip() == "ok"
