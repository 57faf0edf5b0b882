"""Sweeps (agents/experiments/sweep.py): which checkpoint counts as "the best within N steps",
cached evaluations, and a sweep that stops where a run was interrupted."""

import csv
import json
import types
from pathlib import Path

import pytest

from keras_simplicial.agents.experiments import sweep


def make_run(root, iterations, steps_per_iteration, best_iteration):
    """A run directory as `train` leaves it: metrics, checkpoints, `best.json`."""
    root.mkdir()
    with open(root / "metrics.csv", "w", newline="") as stream:
        writer = csv.DictWriter(
            stream,
            ["training_iteration", "timesteps", "time_s", "frames_per_s", "episodes", "win_rate"],
        )
        writer.writeheader()
        for iteration in range(1, iterations + 1):
            writer.writerow(
                {
                    "training_iteration": iteration,
                    "timesteps": iteration * steps_per_iteration,
                    "time_s": iteration,
                    "frames_per_s": 1000,
                    "episodes": 300,
                    "win_rate": 0.5,
                }
            )
    checkpoints = root / "checkpoints"
    checkpoints.mkdir()
    for iteration in {best_iteration, iterations}:
        (checkpoints / f"iter_{iteration:06d}").mkdir()
    (checkpoints / "latest").write_text(f"iter_{iterations:06d}\n")
    (checkpoints / "best.json").write_text(
        json.dumps(
            {
                "checkpoint": f"iter_{best_iteration:06d}",
                "iteration": best_iteration,
                "win_rate": 1.0,
            }
        )
    )
    return root


@pytest.fixture
def evaluated(monkeypatch):
    """Replaces the evaluation by a record of which checkpoint it was asked for."""
    asked = []

    def fake(run_dir, checkpoints, episodes):
        asked.extend(checkpoints.values())
        return {
            name: {"checkpoint": str(c), "greedy": {"win_rate": 1.0}, "sampled": {"win_rate": 1.0}}
            for name, c in checkpoints.items()
        }

    monkeypatch.setattr(sweep, "evaluate_checkpoints", fake)
    return asked


def test_a_run_stopped_at_the_budget_uses_its_best_checkpoint(evaluated, tmp_path):
    run = make_run(tmp_path / "run", iterations=30, steps_per_iteration=10_000, best_iteration=20)
    result = sweep.evaluate_budget(run, 300_000, episodes=10)
    assert Path(evaluated[0]).name == "iter_000020"
    assert result["checkpoint_timesteps"] == 200_000 and result["budget"] == 300_000


def test_a_run_past_the_budget_reads_the_checkpoint_evaluated_at_the_budget(evaluated, tmp_path):
    run = make_run(tmp_path / "run", iterations=60, steps_per_iteration=10_000, best_iteration=55)
    (run / "checkpoints" / "iter_000025").mkdir()
    (run / "evaluation_within_300000_greedy.json").write_text(
        json.dumps({"checkpoint": str(run / "checkpoints" / "iter_000025")})
    )
    result = sweep.evaluate_budget(run, 300_000, episodes=10)
    assert Path(evaluated[0]).name == "iter_000025"
    assert result["checkpoint_timesteps"] == 250_000


def test_a_run_past_the_budget_without_a_record(evaluated, tmp_path):
    # The overall best was saved within the budget: it was the best at the budget too.
    early = make_run(
        tmp_path / "early", iterations=60, steps_per_iteration=10_000, best_iteration=28
    )
    assert sweep.evaluate_budget(early, 300_000, episodes=10)["checkpoint_timesteps"] == 280_000
    # Saved after the budget: which checkpoint was best at the budget is lost.
    late = make_run(tmp_path / "late", iterations=60, steps_per_iteration=10_000, best_iteration=45)
    assert sweep.evaluate_budget(late, 300_000, episodes=10) is None
    assert [Path(c).name for c in evaluated] == ["iter_000028"]


def test_an_interrupted_run_stops_the_sweep_before_any_evaluation(evaluated, monkeypatch, tmp_path):
    """A Ctrl-C inside one run must not let the budgets be evaluated at the steps it reached."""
    from keras_simplicial.agents.training import train as train_module
    from keras_simplicial.agents.training.run_arguments import RunArguments

    def interrupted_train(arguments, **kwargs):
        return train_module.TrainingSummary(
            run_dir=str(kwargs["out"]),
            checkpoint="",
            metrics_csv="",
            tensorboard_dir="",
            timesteps=82_560,
            iterations=31,
            win_rate=0.1,
            interrupted=True,
        )

    monkeypatch.setattr(train_module, "train", interrupted_train)
    arguments = RunArguments.from_preset("easy", "simplicial", seed=1)
    with pytest.raises(sweep.RunInterrupted, match="Interrupted at 82,560 steps"):
        sweep.train_or_resume(tmp_path / "run", arguments, 300_000)
    assert evaluated == []


def test_cached_evaluations_hold_wherever_the_run_directory_is(tmp_path, monkeypatch):
    """Reports name their checkpoint by absolute path (the machine that wrote them); a clone
    elsewhere, or a relative --out, must find them by the checkpoint's name."""
    from keras_simplicial.agents.analysis import evaluation
    from keras_simplicial.agents.training import checkpoints

    run = make_run(tmp_path / "run", iterations=30, steps_per_iteration=10_000, best_iteration=20)
    for mode in ("sampled", "greedy"):
        (run / f"evaluation_best_{mode}.json").write_text(
            json.dumps(
                {
                    "checkpoint": "/elsewhere/run/checkpoints/iter_000020",
                    "overall": {"episodes": 10, "win_rate": 0.75},
                }
            )
        )
    evaluated = []

    def evaluate(checkpoint, episodes, explore, output, policy):
        evaluated.append((Path(checkpoint).name, explore))
        report = {"checkpoint": str(checkpoint), "overall": {"episodes": episodes, "win_rate": 0.5}}
        return types.SimpleNamespace(to_dict=lambda: report)

    monkeypatch.setattr(evaluation, "evaluate_checkpoint", evaluate)
    monkeypatch.setattr(checkpoints, "load_policy", lambda checkpoint: object())
    monkeypatch.chdir(tmp_path)
    relative = Path("run") / "checkpoints" / "iter_000020"
    result = sweep.evaluate_checkpoints("run", {"best": relative}, episodes=10)
    assert evaluated == [] and result["best"]["greedy"]["win_rate"] == 0.75
    # Another checkpoint, or another number of episodes, is evaluated anew.
    sweep.evaluate_checkpoints("run", {"best": Path("run/checkpoints/iter_000030")}, episodes=10)
    sweep.evaluate_checkpoints("run", {"best": relative}, episodes=20)
    assert evaluated == [
        ("iter_000030", True),
        ("iter_000030", False),
        ("iter_000020", True),
        ("iter_000020", False),
    ]
    assert sweep.checkpoint_key("/a/b/checkpoints/iter_000020") == "iter_000020"


def test_a_best_checkpoint_that_is_the_final_one_is_played_once_and_has_its_own_files(
    tmp_path, monkeypatch
):
    """Every reader of a run directory finds `evaluation_best_*.json`, also where the best
    checkpoint is the final one (played once, its reports written under both names)."""
    from keras_simplicial.agents.analysis import evaluation
    from keras_simplicial.agents.training import checkpoints

    run = make_run(tmp_path / "run", iterations=30, steps_per_iteration=10_000, best_iteration=30)
    evaluated = []

    def evaluate(checkpoint, episodes, explore, output, policy):
        evaluated.append(explore)
        report = {"checkpoint": str(checkpoint), "overall": {"episodes": episodes, "win_rate": 0.5}}
        Path(output).write_text(json.dumps(report, indent=2) + "\n")
        return types.SimpleNamespace(to_dict=lambda: report)

    monkeypatch.setattr(evaluation, "evaluate_checkpoint", evaluate)
    monkeypatch.setattr(checkpoints, "load_policy", lambda checkpoint: object())
    result = sweep.evaluate_run(run, episodes=10)
    assert evaluated == [True, False] and result["best"] == result["final"]
    for mode in ("sampled", "greedy"):
        final = json.loads((run / f"evaluation_final_{mode}.json").read_text())
        assert json.loads((run / f"evaluation_best_{mode}.json").read_text()) == final
        assert final["checkpoint"].endswith("iter_000030")


def test_a_finished_run_kept_without_its_checkpoints_is_reported_from_its_evaluations(tmp_path):
    """The repository commits a sweep's finished runs without their checkpoints (a few MB each);
    the same sweep run again must report them, not fail or train them again."""
    import shutil

    run = make_run(tmp_path / "run", iterations=60, steps_per_iteration=10_000, best_iteration=55)
    for which, name in (("final", "iter_000060"), ("best", "iter_000055")):
        for mode, rate in (("sampled", 0.9), ("greedy", 1.0)):
            (run / f"evaluation_{which}_{mode}.json").write_text(
                json.dumps(
                    {
                        "checkpoint": f"/elsewhere/run/checkpoints/{name}",
                        "overall": {"episodes": 10, "win_rate": rate},
                    }
                )
            )
    shutil.rmtree(run / "checkpoints" / "iter_000055")
    shutil.rmtree(run / "checkpoints" / "iter_000060")
    result = sweep.evaluate_run(run, episodes=10)
    assert result["final"]["greedy"]["win_rate"] == 1.0
    assert Path(result["best"]["checkpoint"]).name == "iter_000055"
    # Another number of episodes would need the checkpoint itself: the error says so.
    with pytest.raises(FileNotFoundError, match="iter_000060 is not there"):
        sweep.evaluate_run(run, episodes=20)


def test_an_exported_policy_plays_in_place_of_its_checkpoint_once_it_is_gone(tmp_path, monkeypatch):
    """A finished run keeps the policies a figure or probe plays as Keras weights
    (`exported/iter_N`): a report that needs one played again plays it, under the cache key of
    its checkpoint, and what was kept of neither still fails by name."""
    import shutil

    from keras_simplicial.agents.analysis import evaluation
    from keras_simplicial.agents.training import checkpoints
    from keras_simplicial.agents.training.exported_policy import POLICY_RECORD, POLICY_WEIGHTS
    from keras_simplicial.agents.training.run_directory import RunDirectory

    run = make_run(tmp_path / "run", iterations=60, steps_per_iteration=10_000, best_iteration=55)
    shutil.rmtree(run / "checkpoints" / "iter_000055")
    shutil.rmtree(run / "checkpoints" / "iter_000060")

    def exported(name):  # its files are never read here: the evaluation is replaced below
        folder = run / "exported" / name
        folder.mkdir(parents=True)
        (folder / POLICY_WEIGHTS).write_bytes(b"")
        (folder / POLICY_RECORD).write_text(json.dumps({"checkpoint": name}))
        return folder

    best = exported("iter_000055")  # the final checkpoint is not exported, at first
    played = []

    def evaluate(checkpoint, episodes, explore, output, policy):
        played.append(Path(checkpoint).relative_to(run).as_posix())
        report = {"checkpoint": str(checkpoint), "overall": {"episodes": episodes, "win_rate": 1}}
        Path(output).write_text(json.dumps(report))
        return types.SimpleNamespace(to_dict=lambda: report)

    monkeypatch.setattr(evaluation, "evaluate_checkpoint", evaluate)
    monkeypatch.setattr(checkpoints, "load_policy", lambda checkpoint: object())
    assert RunDirectory(run).best_policy()[0] == best
    assert sweep.checkpoint_key(best) == "iter_000055"
    result = sweep.evaluate_checkpoints(run, {"best": best}, episodes=10)
    assert played == ["exported/iter_000055"] * 2 and result["best"]["greedy"]["win_rate"] == 1
    with pytest.raises(FileNotFoundError, match="iter_000060 is not there"):
        sweep.evaluate_run(run, episodes=10)
    final = exported("iter_000060")
    result = sweep.evaluate_run(run, episodes=10)  # the best one's evaluations are cached
    assert played == ["exported/iter_000055"] * 2 + ["exported/iter_000060"] * 2
    assert Path(result["final"]["checkpoint"]) == final
