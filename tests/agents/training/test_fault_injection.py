"""Fault injection: every file of a run damaged in every way, and what each command that reads it
does then.

A run's files: the checkpoint's (`policy_state.pkl`, `algorithm_state.pkl`, the two
`rllib_checkpoint.json`, `manifest.json` and the checkpoint's copy of `run.json`) and the run's own
(`run.json`, `metrics.csv`, `checkpoints/best.json`, the `checkpoints/latest` pointer). Damage:
truncated to half, random bytes, empty, missing, or a well-formed file of the wrong type.

A command *survives* a fault when it goes on from what is intact (exit 0), or ends with exit 2 and
one line naming the problem; never a traceback. *Nothing is lost* when every damaged file or
checkpoint is still there (in place or set aside as `damaged-*` / `*.damaged`) and a resumed run
went on from its newest intact checkpoint.

The default suite checks every fault against the functions every command reads through
(`resolve_checkpoint`, `RunDirectory.resume_point`, `read_metrics`, `run_arguments_of`) and a few
faults end to end. `-m slow` (`make fault-injection`) runs every command on every fault and
writes the counts that docs/benchmarks.md reports ("Reliability").
"""

import fcntl
import json
import os
import pickle
import shutil
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import keras_simplicial_cli as cli  # noqa: E402
from keras_simplicial.agents.training.checkpoints import (  # noqa: E402
    resolve_checkpoint,
    run_arguments_of,
)
from keras_simplicial.agents.training.run_directory import RunDirectory  # noqa: E402

QUICK = {"train_batch_size": 160, "min_time_s_per_iteration": 1}
EASY_ENV = {"max_solution_length": 1, "max_steps": 60}

POLICY_STATE = "policies/default_policy/policy_state.pkl"
# Files of the latest checkpoint, relative to it, and files of the run, relative to the run.
CHECKPOINT_FILES = (
    POLICY_STATE,
    "policies/default_policy/rllib_checkpoint.json",
    "algorithm_state.pkl",
    "rllib_checkpoint.json",
    "manifest.json",
    "run.json",
)
RUN_FILES = ("run.json", "metrics.csv", "checkpoints/best.json", "checkpoints/latest")
DAMAGES = ("truncated", "random_bytes", "empty", "missing", "wrong_type")


def damage(path, how):
    """Damages the file at `path` in the way `how` (one of `DAMAGES`)."""
    path = Path(path)
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "random_bytes":
        path.write_bytes(os.urandom(max(len(data), 64)))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "missing":
        path.unlink()
    elif how == "wrong_type":  # well-formed, but not what the reader expects
        if path.suffix == ".pkl":
            path.write_bytes(pickle.dumps([1, 2, 3]))
        elif path.suffix == ".json":
            path.write_text("[1, 2, 3]\n")
        elif path.suffix == ".csv":
            path.write_text('{"training_iteration": 1}\n')
        else:  # the latest pointer
            path.write_text("../../elsewhere\n")
    else:
        raise ValueError(f"how must be one of {DAMAGES}, got {how!r}.")


def faults():
    """(where, file, damage) of every fault: where is "checkpoint" (the latest one) or "run"."""
    return [("checkpoint", name, how) for name in CHECKPOINT_FILES for how in DAMAGES] + [
        ("run", name, how) for name in RUN_FILES for how in DAMAGES
    ]


def fault_id(fault):
    where, name, how = fault
    return f"{where}:{name.replace('/', '.')}:{how}"


def train_pristine(out):
    """A real run of two iterations into `out`, a checkpoint after each, trained by `train` (one
    iteration, then a resume of one iteration, however fast the machine is); Ray shut down."""
    import ray

    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.train import train

    steps = 1
    try:
        for resume in (False, True):
            steps = (
                1
                + train(
                    RunArguments(
                        env="BridgeBoxWorld-v0",
                        agent="relational",
                        env_config=EASY_ENV,
                        model_overrides={"jit_compile": False},
                        overrides=QUICK,
                        num_envs_per_env_runner=2,
                        seed=0,
                    ),
                    out=out,
                    stop_timesteps=steps,
                    resume=resume,
                    checkpoint_every=1,
                    check_episodes=2,
                    progress="none",
                ).timesteps
            )
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def pristine(tmp_path_factory):
    """The pristine run, trained once a session (every test copies it before damaging it). On
    pytest-xdist's workers the first that needs it trains it into the directory the workers'
    temporary directories share, under a lock, and the others read it: a module-scoped run was
    trained again each time worksteal moved this module's tests to a worker (three times, 109 s)."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        shared = tmp_path_factory.getbasetemp().parent
        out = shared / "fault-injection-pristine" / "run"
        with open(shared / "fault-injection-pristine.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (out.parent / "trained").exists():
                shutil.rmtree(out, ignore_errors=True)  # a failed attempt's
                train_pristine(out)
                (out.parent / "trained").touch()
    else:
        out = tmp_path_factory.mktemp("pristine") / "run"
        train_pristine(out)
    run = RunDirectory(out)
    assert len(run.checkpoints()) >= 2 and len(run.read_metrics()) >= 2
    return run


def damaged_copy(pristine, tmp_path, fault):
    """A copy of the pristine run with `fault` applied; returns (run, path of the damaged file)."""
    where, name, how = fault
    root = tmp_path / "run"
    shutil.copytree(pristine.root, root)
    run = RunDirectory(root)
    base = run.latest_checkpoint() if where == "checkpoint" else root
    path = base / name
    damage(path, how)
    return run, path


def kept(path):
    """Whether a damaged file (or the checkpoint holding it) is still there or set aside."""
    path = Path(path)
    candidates = [path, path.with_name(path.name + ".damaged")]
    for parent in path.parents:
        if parent.name.startswith("iter_"):
            candidates.append(parent.parent / f"damaged-{parent.name}" / path.relative_to(parent))
            break
    return any(candidate.exists() for candidate in candidates)


@pytest.mark.parametrize("fault", faults(), ids=fault_id)
def test_every_reader_names_the_damage_or_goes_on_from_what_is_intact(pristine, tmp_path, fault):
    where, name, how = fault
    run, path = damaged_copy(pristine, tmp_path, fault)
    checkpoints = run.checkpoints()
    latest = checkpoints[-1]

    # --resume: the newest intact checkpoint; the latest unless the fault is in it.
    intact, skipped = run.resume_point()
    latest_is_damaged = where == "checkpoint" and not (name == "manifest.json" and how == "missing")
    assert intact == (checkpoints[-2] if latest_is_damaged else latest)
    assert [checkpoint for checkpoint, _ in skipped] == ([latest] if latest_is_damaged else [])
    if latest_is_damaged:
        assert name in skipped[0][1] or "manifest.json" in skipped[0][1]

    # evaluate, visualize, explain, probe, policy-map: the latest checkpoint, or one line.
    if latest_is_damaged:
        with pytest.raises(ValueError, match="is damaged") as error:
            resolve_checkpoint(run.root)
        assert "\n" not in str(error.value) and str(checkpoints[-2]) in str(error.value)
    else:
        assert resolve_checkpoint(run.root) == latest
        assert run_arguments_of(latest).agent == "relational"  # a run.json copy stands in

    # plot, reports, --resume's metrics: every row, the cut-off last one left out, or one line.
    if name == "metrics.csv" and how in ("random_bytes", "wrong_type"):
        with pytest.raises(ValueError, match="metrics.csv is damaged"):
            run.read_metrics()
    else:
        rows, partial = run.read_metrics(partial_last_row=True)
        assert partial == (name == "metrics.csv" and how == "truncated")
        assert all(row["training_iteration"].isdigit() for row in rows)
    if name == "best.json" and how in ("truncated", "random_bytes", "empty", "wrong_type"):
        with pytest.raises(ValueError, match="best.json is damaged"):
            run.best_checkpoint()
    assert kept(path) or how == "missing"


def test_a_checkpoint_from_before_manifests_still_loads_and_its_damage_is_named(pristine, tmp_path):
    from keras_simplicial.agents.training.checkpoints import load_policy

    root = tmp_path / "run"
    shutil.copytree(pristine.root, root)
    run = RunDirectory(root)
    for checkpoint in run.checkpoints():
        (checkpoint / "manifest.json").unlink()
        (checkpoint / "run.json").unlink()
    latest = run.latest_checkpoint()
    assert resolve_checkpoint(root) == latest and load_policy(root).model.kind == "relational"
    damage(latest / POLICY_STATE, "truncated")
    with pytest.raises(ValueError, match="policy_state.pkl does not decode"):
        resolve_checkpoint(latest)
    damage(latest / "rllib_checkpoint.json", "wrong_type")
    assert run.resume_point()[0] == run.checkpoints()[-2]


def test_a_restored_algorithm_has_its_checkpoints_counters_and_weights(pristine):
    from keras_simplicial.agents.training.checkpoints import load_policy
    from keras_simplicial.agents.training.rllib.trainer import (
        build_algorithm,
        environment_steps,
        start_ray,
    )
    from keras_simplicial.agents.training.run_arguments import RunArguments

    checkpoint = pristine.latest_checkpoint()
    iteration = int(checkpoint.name.split("_")[1])
    row = {int(r["training_iteration"]): r for r in pristine.read_metrics()}[iteration]
    saved_weights = load_policy(checkpoint).get_weights()  # (re-registers the agent models)
    start_ray(num_env_runners=1)
    algorithm = build_algorithm(RunArguments.read(pristine.run_file), checkpoint)
    try:
        assert algorithm.iteration == iteration
        assert environment_steps(algorithm) == int(row["timesteps"])
        for restored, saved in zip(algorithm.get_policy().get_weights(), saved_weights):
            np.testing.assert_array_equal(restored, saved)
    finally:
        algorithm.stop()


def one_line_or_success(capsys, *args):
    """Runs the CLI in this process: (exit code, stdout, stderr); a traceback fails the test."""
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    assert code in (0, 2), (code, err[-2000:])
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return code, out, err


def test_resume_skips_a_damaged_checkpoint_and_evaluate_names_it(pristine, tmp_path, capsys):
    run, _ = damaged_copy(pristine, tmp_path, ("checkpoint", POLICY_STATE, "random_bytes"))
    latest, previous = run.checkpoints()[-1], run.checkpoints()[-2]
    code, _, err = one_line_or_success(capsys, "evaluate", str(run.root), "--episodes", "2")
    assert code == 2 and "policy_state.pkl does not match its SHA-256" in err
    assert str(previous) in err  # the newest intact one, to pass instead

    steps = int(run.read_metrics()[-1]["timesteps"])
    # The damaged checkpoint was the best one: the best is then chosen anew.
    run.best_file.write_text(json.dumps({"checkpoint": latest.name, "greedy_win_rate": 1.0}))
    code, out, _ = one_line_or_success(
        capsys, "train", "--resume", "--out", str(run.root), "--stop-timesteps", str(steps + 1)
    )
    assert code == 0
    assert f"Skipped {latest.name}" in out and f"Set aside as damaged-{latest.name}" in out
    assert f"Resumed from {previous}" in out
    assert f"names {latest.name}, which is gone" in out
    assert (run.checkpoints_dir / "best.json.damaged").is_file() and run.best_checkpoint()
    assert (run.checkpoints_dir / f"damaged-{latest.name}" / POLICY_STATE).is_file()
    iterations = [int(row["training_iteration"]) for row in run.read_metrics()]
    assert iterations == list(range(1, len(iterations) + 1))  # rows after the checkpoint redone


def test_resume_with_no_intact_checkpoint_says_so_in_one_line(pristine, tmp_path, capsys):
    run, _ = damaged_copy(pristine, tmp_path, ("run", "run.json", "random_bytes"))
    for checkpoint in run.checkpoints():
        damage(checkpoint / POLICY_STATE, "empty")
    code, _, err = one_line_or_success(
        capsys, "train", "--resume", "--out", str(run.root), "--stop-timesteps", "1000000"
    )
    assert code == 2 and "no intact checkpoint" in err
    assert all(checkpoint.is_dir() for checkpoint in run.checkpoints())  # nothing set aside


def test_resume_restores_run_json_and_sets_damaged_metrics_and_best_aside(
    pristine, tmp_path, capsys
):
    run, _ = damaged_copy(pristine, tmp_path, ("run", "run.json", "random_bytes"))
    damage(run.metrics_file, "random_bytes")
    damage(run.best_file, "wrong_type")
    code, out, _ = one_line_or_success(
        capsys, "train", "--resume", "--out", str(run.root), "--stop-timesteps", "1"
    )
    assert code == 0
    assert "Restored run.json from iter_" in out and (run.root / "run.json.damaged").is_file()
    assert "metrics.csv.damaged" in out and "best.json.damaged" in out
    assert json.loads(run.run_file.read_text())["agent"] == "relational"
    assert (run.root / "metrics.csv.damaged").is_file()
    assert (run.checkpoints_dir / "best.json.damaged").is_file()


def commands(run, scratch):
    """{name: CLI arguments} of every command that reads a run; `train --resume` last (it sets
    aside what is damaged, which the others must see as it was)."""
    root = str(run.root)
    return {
        "evaluate": ["evaluate", root, "--episodes", "2", "--output", f"{scratch}/e.json"],
        "visualize": ["visualize", root, "--max-steps", "5", "--out", f"{scratch}/figures"],
        "explain": ["explain", root, "--max-steps", "5"],
        "probe": ["probe", root, "--episodes", "2", "--max-steps", "5"],
        "policy-map": ["policy-map", root, "--out", f"{scratch}/policy.png"],
        "plot": ["plot", root, "--out", f"{scratch}/curves.png"],
        "train --resume": ["train", "--resume", "--out", root, "--stop-timesteps", "0"],
    }


@pytest.mark.slow
def test_every_command_on_every_fault(pristine, tmp_path, capsys):
    """The counts of docs/benchmarks.md, "Reliability" (`make fault-injection` writes them to
    $FAULT_INJECTION_REPORT)."""
    counts = {"faults": 0, "runs": 0, "went on": 0, "one-line error": 0, "nothing lost": 0}
    by_command = {}
    failures = []
    for index, fault in enumerate(faults()):
        run, path = damaged_copy(pristine, tmp_path / str(index), fault)
        steps = max((int(row["timesteps"]) for row in pristine.read_metrics()), default=0)
        intact, _ = run.resume_point()
        counts["faults"] += 1
        resumed = None
        for name, args in commands(run, tmp_path / str(index)).items():
            if name == "train --resume":
                args[-1] = str(steps + 1)  # one more iteration
            try:
                code = cli.main(args)
            except BaseException as error:  # a traceback: the failure this test counts
                code = f"{type(error).__name__}: {error}"
            out, err = capsys.readouterr()
            one_line = code == 2 and len(err.strip().splitlines()) == 1
            outcome = "went on" if code == 0 else "one-line error" if one_line else "failed"
            if outcome == "failed":
                failures.append((fault_id(fault), name, code, err[-500:]))
            if name == "train --resume" and code == 0:
                resumed = intact is not None and f"Resumed from {intact}" in out
            counts["runs"] += 1
            counts[outcome] = counts.get(outcome, 0) + 1
            by_command.setdefault(name, {}).setdefault(outcome, 0)
            by_command[name][outcome] += 1
        if (kept(path) or fault[2] == "missing") and resumed is not False:
            counts["nothing lost"] += 1
    report = {"counts": counts, "by_command": by_command, "failures": failures}
    destination = os.environ.get("FAULT_INJECTION_REPORT")
    if destination:
        Path(destination).write_text(json.dumps(report, indent=2) + "\n")
    with capsys.disabled():
        print("\n" + json.dumps(report, indent=2))
    assert not failures, failures
    assert counts["nothing lost"] == counts["faults"] == len(faults())
