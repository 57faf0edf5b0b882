"""Checkpoint bookkeeping of a run directory: atomic saves, pruning, and the best checkpoint."""

import json
from pathlib import Path

from keras_simplicial.agents.training.run_directory import RunDirectory


class FakeAlgorithm:
    """Stands in for an RLlib Algorithm: `save(dir)` writes what a checkpoint holds."""

    def __init__(self):
        self.saves = 0

    def save(self, directory):
        self.saves += 1
        (Path(directory) / "policies").mkdir()
        (Path(directory) / "state.json").write_text(json.dumps({"save": self.saves}))


def test_the_best_checkpoint_survives_pruning_and_is_reported(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    algorithm = FakeAlgorithm()
    # A run that solves the task at iteration 20 and then loses it, as docs/benchmarks.md shows.
    win_rates = {10: 0.3, 20: 1.0, 30: 0.2, 40: 0.0, 50: None, 60: 0.6}
    for iteration, win_rate in win_rates.items():
        run.save_checkpoint(algorithm, iteration, keep=2, win_rate=win_rate)

    names = [path.name for path in run.checkpoints()]
    assert names == ["iter_000020", "iter_000050", "iter_000060"]
    assert run.latest_checkpoint().name == "iter_000060"
    best, win_rate = run.best_checkpoint()
    assert best.name == "iter_000020" and win_rate == 1.0
    assert json.loads((best / "state.json").read_text()) == {"save": 2}


def test_without_win_rates_there_is_no_best_and_pruning_keeps_the_newest(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    for iteration in (1, 2, 3, 4):
        run.save_checkpoint(FakeAlgorithm(), iteration, keep=3)
    assert [path.name for path in run.checkpoints()] == [
        "iter_000002",
        "iter_000003",
        "iter_000004",
    ]
    assert run.best_checkpoint() is None
    assert not list(run.checkpoints_dir.glob(".saving-*"))
