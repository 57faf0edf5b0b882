"""The `keras-simplicial` command: instant help and argument errors, quiet TensorFlow, `play`."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import keras_simplicial_cli as cli

COMMAND = str(Path(sys.executable).parent / "keras-simplicial")
HEAVY = ("keras_simplicial", "keras", "tensorflow", "ray", "gymnasium", "matplotlib")
# Runs the command in a fresh interpreter and reports which heavy modules it imported.
PROBE = (
    "import sys, keras_simplicial_cli\n"
    "try:\n    keras_simplicial_cli.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    f"print('imported:', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)"
)


def test_the_choices_repeat_their_homes():
    from keras_simplicial.agents.model.architecture import AGENT_KINDS
    from keras_simplicial.agents.training import greedy_check, progress, run_arguments
    from keras_simplicial.agents.training.impala import PRESETS
    from keras_simplicial.envs import ENV_IDS
    from keras_simplicial.envs.logic import STYLES

    assert cli.ENV_CHOICES == ENV_IDS
    assert cli.AGENT_CHOICES == AGENT_KINDS
    assert set(cli.PRESET_CHOICES) == set(PRESETS)
    assert cli.SAMPLER_CHOICES == run_arguments.SAMPLERS
    assert cli.DEFAULT_SAMPLER == run_arguments.DEFAULT_SAMPLER
    assert cli.DEFAULT_NUM_ENV_RUNNERS == run_arguments.DEFAULT_NUM_ENV_RUNNERS
    assert cli.DEFAULT_NUM_ENVS_PER_ENV_RUNNER == run_arguments.DEFAULT_NUM_ENVS_PER_ENV_RUNNER
    assert cli.DEFAULT_CHECK_EPISODES == greedy_check.DEFAULT_CHECK_EPISODES
    assert cli.PROGRESS_CHOICES == progress.PROGRESS_MODES
    assert cli.STYLE_CHOICES == STYLES


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["train", "--help"],
        ["evaluate", "--help"],
        ["play", "--help"],
        ["visualize", "--help"],
        ["policy-map", "--help"],
        ["train", "--agent", "foo"],
        ["play", "--env", "CartPole-v1"],
        ["evaluate"],
        ["probe", "run", "--episodes", "-3"],
        ["nonsense"],
    ],
)
def test_help_and_argument_errors_answer_at_once_without_importing_tensorflow(args):
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60
    )
    elapsed = time.perf_counter() - started
    assert "imported: []" in result.stderr, result.stderr
    assert elapsed < 2.0, elapsed  # ~0.1 s unloaded; the import check above is the real guard
    if "--help" in args:
        assert result.stdout.startswith("usage: keras-simplicial")
    else:
        error = result.stderr.strip().splitlines()[0]
        assert error.startswith("keras-simplicial") and "error:" in error, result.stderr


def test_the_console_script_is_the_light_module():
    result = subprocess.run(
        [COMMAND, "train", "--help"], capture_output=True, text=True, timeout=60
    )
    assert (
        result.returncode == 0
        and "--preset {paper,easy,bridge-small,bridge-medium}" in result.stdout
    )
    assert "--verbose" in result.stdout and result.stderr == ""


def test_play_takes_its_arguments_and_tensorflow_stays_quiet():
    # The documented command (docs/environments.md), with keys from stdin.
    result = subprocess.run(
        [COMMAND, "play", "--env", "BridgeBoxWorld-v0", "--seed", "3"],
        input="l l j q",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "steps 3" in result.stdout and "Γ:" in result.stdout
    assert result.stderr == ""  # no oneDNN / CUDA driver lines
    bad = subprocess.run(
        [COMMAND, "play", "--env-config", '{"rows": 1}'],
        input="q",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == "keras-simplicial play: error: rows must be an int >= 3, got 1"


def test_python_m_play_is_the_same_command():
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    result = subprocess.run(
        [sys.executable, "-m", "keras_simplicial.envs.play", "--seed", "1", "--env", "BoxWorld-v0"],
        input="l l j q",
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert result.returncode == 0 and "steps 3" in result.stdout, result.stderr
