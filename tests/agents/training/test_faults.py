"""Nothing is lost: a run killed mid-way resumes, and a killed rollout worker is replaced."""

import json
import os
import signal
import subprocess
import sys
import time

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import pytest  # noqa: E402

from keras_simplicial.agents.training.run_directory import RunDirectory  # noqa: E402

QUICK = {"train_batch_size": 160, "min_time_s_per_iteration": 1}
EASY_ENV = {"max_solution_length": 1, "max_steps": 60}


def cli(*args):
    return [sys.executable, "-m", "keras_simplicial_cli", *args]


# XLA (the default) is tested in test_models (the compiled forward pass and its gradient) and in
# test_training's `-m slow` runs of RLlib's loop; these tests are about faults, and compiling the
# model in every process they start would double their time.
NO_XLA = {"jit_compile": False}


def train_command(out, stop_timesteps, *extra):
    return cli(
        "train",
        "--agent",
        "relational",
        "--env-config",
        json.dumps(EASY_ENV),
        "--config",
        json.dumps(QUICK),
        "--model-config",
        json.dumps(NO_XLA),
        "--num-envs-per-env-runner",
        "4",
        "--stop-timesteps",
        str(stop_timesteps),
        "--checkpoint-every",
        "1",
        "--progress",
        "plain",
        "--out",
        str(out),
        *extra,
    )


def wait_for(predicate, timeout_s, process=None):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if predicate():
            return True
        if process is not None and process.poll() is not None:
            return predicate()
        time.sleep(0.5)
    return False


@pytest.mark.integration
def test_killed_run_resumes_from_its_last_checkpoint(tmp_path):
    out = tmp_path / "run"
    run = RunDirectory(out)
    log = open(tmp_path / "first.log", "w")
    first = subprocess.Popen(
        train_command(out, 10_000_000), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        assert wait_for(
            lambda: (
                len(run.checkpoints()) >= 1 and int(run.latest_checkpoint().name.split("_")[1]) >= 2
            ),
            300,
            first,
        ), (tmp_path / "first.log").read_text()[-3000:]
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # a crash: no chance to clean up
        first.wait()
    checkpoint = run.latest_checkpoint()
    iteration = int(checkpoint.name.split("_")[1])
    row = {int(r["training_iteration"]): r for r in run.read_metrics()}[iteration]
    steps_at_checkpoint = int(row["timesteps"])

    # The restored counters are the checkpoint's (below); its weights: test_fault_injection.py.
    # `--resume` continues the same run: iterations and timesteps carry on, no duplicate rows.
    # ... also when --out is a relative path (RLlib restores from absolute paths only).
    second = subprocess.run(
        train_command(out.relative_to(tmp_path), steps_at_checkpoint + 1, "--resume"),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert (
        f"Resumed from {checkpoint.relative_to(tmp_path)} (iteration {iteration}, "
        f"{steps_at_checkpoint:,} environment steps)"
    ) in second.stdout
    iterations = [int(r["training_iteration"]) for r in run.read_metrics()]
    assert iterations == list(range(1, len(iterations) + 1)), iterations
    resumed = run.read_metrics()[iteration:]  # the rows after the checkpoint
    assert int(resumed[0]["training_iteration"]) == iteration + 1
    # The counters carry on from the checkpoint (an iteration may sample nothing on a busy machine).
    steps = [steps_at_checkpoint] + [int(row["timesteps"]) for row in resumed]
    assert steps == sorted(steps) and steps[-1] > steps_at_checkpoint
    assert int(run.latest_checkpoint().name.split("_")[1]) > iteration
    # Whatever checkpoint scored best so far was kept through the pruning of both runs.
    if run.best_file.is_file():
        best, _ = run.best_checkpoint()
        assert best in run.checkpoints()


# End to end through RLlib's fault tolerance (a minute or more on 2 cores): `make test-all`.
@pytest.mark.slow
def test_a_killed_rollout_worker_is_replaced_and_training_goes_on():
    import ray

    from keras_simplicial.agents.training.rllib.trainer import (
        build_algorithm,
        environment_steps,
        start_ray,
    )
    from keras_simplicial.agents.training.run_arguments import RunArguments

    arguments = RunArguments(
        env="BridgeBoxWorld-v0",
        agent="relational",
        env_config=EASY_ENV,
        model_overrides=NO_XLA,
        overrides=QUICK,
        num_env_runners=1,
        num_envs_per_env_runner=4,
        seed=0,
        sampler="batched",
    )
    start_ray(num_env_runners=1)
    try:
        algorithm = build_algorithm(arguments)
        try:
            algorithm.train()
            group = algorithm.env_runner_group
            (pid,) = group.foreach_env_runner(lambda runner: os.getpid(), local_env_runner=False)
            os.kill(pid, signal.SIGKILL)
            steps_after_kill = environment_steps(algorithm)
            restarted = False
            for _ in range(60):
                result = algorithm.train()
                restarted = restarted or result.get("num_remote_worker_restarts", 0) > 0
                if restarted and environment_steps(algorithm) > steps_after_kill + 320:
                    break
            assert restarted, "RLlib restarted the dead env runner"
            assert group.num_healthy_remote_workers() == 1
            (new_pid,) = group.foreach_env_runner(
                lambda runner: os.getpid(), local_env_runner=False
            )
            assert new_pid != pid
            assert environment_steps(algorithm) > steps_after_kill + 320, "sampling went on"
        finally:
            algorithm.stop()
    finally:
        ray.shutdown()


def test_cli_rejects_bad_input_with_one_line(tmp_path, capsys):
    cases = [
        (["train", "--env", "Pong-v5"], "--env: invalid choice"),
        (["train", "--agent", "hopfield"], "--agent: invalid choice"),
        (["train", "--config", "{lr: 1}"], "--config is not valid JSON"),
        (["train", "--env-config", json.dumps({"rows": -3}), "--out", str(tmp_path / "r")], "rows"),
        (
            ["train", "--config", json.dumps({"no_such_key": 1}), "--out", str(tmp_path / "r2")],
            "no_such_key",
        ),
        (
            [
                "train",
                "--model-config",
                json.dumps({"num_hedas": 4}),
                "--out",
                str(tmp_path / "r3"),
            ],
            "num_hedas",
        ),
        (
            [
                "train",
                "--model-config",
                json.dumps({"jit_compile": "yes"}),
                "--out",
                str(tmp_path / "r4"),
            ],
            "jit_compile",
        ),
        (
            ["train", "--config", json.dumps({"lr": -1}), "--out", str(tmp_path / "r5")],
            "--config: lr must be a finite number > 0, got -1.",
        ),
        (
            [
                "train",
                "--model-config",
                json.dumps({"num_heads": 0}),
                "--out",
                str(tmp_path / "r6"),
            ],
            "--model-config: num_heads must be an integer >= 1, got 0.",
        ),
        (["evaluate", str(tmp_path / "missing")], "No checkpoint at"),
        (["train", "--resume", "--out", str(tmp_path / "empty")], "run.json is missing"),
    ]
    # Two cases as the user meets them, in a process of their own (an argument the parser refuses,
    # one the run's checks refuse after TensorFlow loaded); the rest in this process, where each
    # costs no TensorFlow start-up (about 14 s a process on 2 cores).
    in_a_process = {0, 7}
    for index, (args, message) in enumerate(cases):
        if index in in_a_process:
            result = subprocess.run(
                cli(*args),
                capture_output=True,
                text=True,
                timeout=300,
                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
            )
            returncode, stderr = result.returncode, result.stderr
        else:
            returncode, stderr = _run_in_this_process(args, capsys)
        assert returncode == 2, (args, stderr[-2000:])
        errors = [line for line in stderr.splitlines() if "error:" in line]
        assert len(errors) == 1 and message in errors[0], (args, stderr[-2000:])
        assert "Traceback" not in stderr, (args, stderr[-2000:])


def _run_in_this_process(args, capsys):
    """`keras-simplicial ARGS` through the command's own `main`: (exit status, stderr). The
    variables a command sets for its run (its Keras backend) are put back afterwards."""
    import keras_simplicial_cli

    saved = dict(os.environ)
    capsys.readouterr()
    try:
        returncode = keras_simplicial_cli.main(args)
    except SystemExit as exit:  # the parser's own errors
        returncode = exit.code
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return returncode, capsys.readouterr().err
