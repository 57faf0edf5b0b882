"""The `keras-simplicial` command: instant help and argument errors, quiet TensorFlow, `play`, the
flags generated from `RunArguments`, and one line naming the extra a command needs."""

import argparse
import contextlib
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import keras_simplicial_cli as cli

COMMAND = str(Path(sys.executable).parent / "keras-simplicial")
HEAVY = ("keras", "tensorflow", "ray", "gymnasium", "matplotlib")
# Runs the command in a fresh interpreter and reports which heavy modules it imported.
PROBE = (
    "import sys, keras_simplicial_cli\n"
    "try:\n    keras_simplicial_cli.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    f"print('imported:', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)"
)


def test_the_choices_repeat_their_homes():
    from keras_simplicial.agents.commands import arguments, inspection, training
    from keras_simplicial.agents.training import greedy_check, progress
    from keras_simplicial.agents.training.presets import PRESETS
    from keras_simplicial.envs.logic import STYLES

    assert set(arguments.PRESET_CHOICES) == set(PRESETS)
    assert training.DEFAULT_CHECK_EPISODES == greedy_check.DEFAULT_CHECK_EPISODES
    assert training.PROGRESS_CHOICES == progress.PROGRESS_MODES
    assert inspection.STYLE_CHOICES == STYLES


def subparser(name):
    parser = cli.build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices[name]


@pytest.mark.parametrize("command", ["train", "sweep", "reproduce"])
def test_every_run_argument_is_a_flag_generated_from_its_field(command):
    """A field added to RunArguments is a flag of train, sweep and reproduce with nothing else to
    write; sweep and reproduce vary the agent and the seed themselves."""
    import dataclasses

    from keras_simplicial.agents.commands.arguments import given_run_arguments
    from keras_simplicial.agents.training.run_arguments import RunArguments, declaration

    options = {option: a for a in subparser(command)._actions for option in a.option_strings}
    varied = () if command == "train" else ("agent", "seed")
    for field in dataclasses.fields(RunArguments):
        declared = declaration(field)
        if field.name in varied:
            assert options.get(declared.flag) is None or options[declared.flag].dest != field.name
            continue
        action = options[declared.flag]
        assert action.dest == field.name and action.default is None
        assert declared.help in action.help
    # Left out: None (the preset's or the default); given: the field's value, its range checked.
    argv = [command] + (["--seeds", "1", "2"] if command == "reproduce" else [])
    assert given_run_arguments(cli.build_parser().parse_args(argv)) == {}
    given = ["--num-env-runners", "2", "--config", '{"lr": 0.001}', "--sampler", "rllib"]
    assert given_run_arguments(cli.build_parser().parse_args([*argv, *given])) == {
        "num_env_runners": 2,
        "overrides": {"lr": 0.001},
        "sampler": "rllib",
    }
    for switch, value in (("--mask-blocked-moves", True), ("--no-mask-blocked-moves", False)):
        parsed = cli.build_parser().parse_args([*argv, switch])
        assert given_run_arguments(parsed) == {"mask_blocked_moves": value}
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args([*argv, "--num-env-runners", "-1"])


# A Python whose TensorFlow, Ray, gymnasium and matplotlib cannot be imported, as in the base
# install: a process of its own, so that no module an earlier test imported hides the block.
WITHOUT_EXTRAS = """
import builtins, sys
real_import = builtins.__import__
blocked = {"tensorflow", "ray", "gymnasium", "matplotlib"}
def without_extras(name, *args, **kwargs):
    if name.partition(".")[0] in blocked:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return real_import(name, *args, **kwargs)
builtins.__import__ = without_extras
import keras_simplicial_cli
sys.exit(keras_simplicial_cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    "argv, extra, modules",
    [
        (["train", "--preset", "easy"], "agents", ("tensorflow", "ray", "gymnasium", "matplotlib")),
        (["play"], "envs", ("gymnasium",)),
    ],
)
def test_a_command_without_its_extra_says_in_one_line_what_to_install(argv, extra, modules):
    """The base install (Keras and NumPy) has no TensorFlow, Ray or gymnasium: a command that
    needs them names the extra that brings them, in one line."""
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KERAS_BACKEND": "jax"},
    )
    assert result.returncode == 1, result.stderr[-2000:]
    (line,) = [line for line in result.stderr.splitlines() if "error:" in line]
    assert line.startswith(
        f"keras-simplicial {argv[0]}: error: this command needs the [{extra}] extra (no module "
        "named "
    ), line
    assert line.endswith(f"): pip install 'keras-simplicial[{extra}]'"), line
    assert any(f"no module named {module!r}" in line for module in modules), line
    assert "Traceback" not in result.stderr, result.stderr[-2000:]


def test_the_new_stack_without_torch_names_the_torch_extra(monkeypatch, capsys, tmp_path):
    import builtins

    real_import = builtins.__import__

    def without_torch(name, *args, **kwargs):
        if name.partition(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setenv("KERAS_BACKEND", os.environ.get("KERAS_BACKEND", "tensorflow"))
    monkeypatch.setattr(builtins, "__import__", without_torch)
    for module in [m for m in sys.modules if m.partition(".")[0] == "torch"]:
        monkeypatch.delitem(sys.modules, module)
    for module in [m for m in sys.modules if "torch" in m and m.startswith("keras_simplicial")]:
        monkeypatch.delitem(sys.modules, module)
    argv = ["train", "--preset", "easy", "--api-stack", "new", "--out", str(tmp_path / "run")]
    # RLlib's modules first imported while torch is hidden keep its torch stubs (`torch = None`)
    # for every later test (RLlib's `TorchCategorical` then fails): they go with this test, and
    # ours that imported them.
    imported_before = set(sys.modules)
    try:
        assert cli.main(argv) == 1
    finally:
        for module in set(sys.modules) - imported_before:
            if module.startswith(("ray.rllib", "keras_simplicial")):
                del sys.modules[module]
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "keras-simplicial train: error: this command needs the [torch] extra (no module named "
        "'torch'): pip install 'keras-simplicial[torch]'"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["train", "--help"],
        ["evaluate", "--help"],
        ["play", "--help"],
        ["visualize", "--help"],
        ["policy-map", "--help"],
        ["errors", "--help"],
        ["errors", "run", "--episodes", "0"],
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


def test_every_command_runs_its_own_function_whatever_its_flags(monkeypatch):
    """A flag's value never replaces the command (train has --run, as `make train` passes it)."""
    ran = []
    recorded = tuple(
        dataclasses.replace(command, run=lambda args, name=command.name: ran.append(name))
        for command in cli.COMMANDS
    )
    monkeypatch.setattr(cli, "COMMANDS", recorded)
    argv = ["train", "--run", "IMPALA", "--preset", "easy", "--agent", "relational"]
    argv += ["--stop-seconds", "900", "--stop-timesteps", "1000000", "--evaluate", "1000"]
    monkeypatch.setattr(cli, "_tensorflow_start_up_lines", lambda shown: contextlib.nullcontext())
    assert cli.main(argv) == 0 and ran == ["train"]


def test_a_runs_flags_read_back_give_its_arguments():
    """`run_argument_flags` writes the command line that `given_run_arguments` reads back: what
    a report says it was generated by makes the same runs."""
    import shlex

    from keras_simplicial.agents.commands.arguments import given_run_arguments
    from keras_simplicial.agents.training.run_arguments import RunArguments, run_argument_flags

    preset = RunArguments.from_preset("bridge-small", "simplicial")
    chosen = RunArguments.from_preset(
        "bridge-small",
        "simplicial",
        env_config={"random_start": True},
        mask_blocked_moves=True,
        overrides={"lr": 0.001},
        num_env_runners=2,
    )
    flags = run_argument_flags(chosen, preset, exclude=("agent", "seed"))
    assert run_argument_flags(preset, preset) == []
    assert "--mask-blocked-moves" in flags and "'{\"random_start\": true}'" in flags
    argv = ["train", "--preset", "bridge-small", *shlex.split(" ".join(flags))]
    given = given_run_arguments(cli.build_parser().parse_args(argv))
    assert RunArguments.from_preset("bridge-small", "simplicial", **given) == chosen
    masked = RunArguments.from_preset("bridge-small", "simplicial", mask_blocked_moves=True)
    assert run_argument_flags(preset, masked) == ["--no-mask-blocked-moves"]
    with pytest.raises(ValueError, match=r"env_config \(--env-config\) lacks \['cols', "):
        run_argument_flags(RunArguments(env="BridgeBoxWorld-v0"), preset)
