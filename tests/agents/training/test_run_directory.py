"""Checkpoint bookkeeping of a run directory: atomic saves, pruning, and the best checkpoint."""

import json
import os
from pathlib import Path

import pytest

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
    best, record = run.best_checkpoint()
    assert best.name == "iter_000020" and record["win_rate"] == 1.0
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


def test_with_a_check_the_best_is_the_checkpoint_that_plays_best_greedily(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    algorithm = FakeAlgorithm()
    # Training win rates can be high while the saved snapshot plays badly (docs/benchmarks.md).
    training = {10: 0.2, 20: 1.0, 30: 0.9, 40: None, 50: 0.99}
    greedy = {10: 0.1, 20: 0.5, 30: 1.0, 40: 0.3, 50: 1.0}
    checked = []

    def check(checkpoint):
        checked.append(checkpoint.name)
        assert (checkpoint / "state.json").is_file(), "checked after it was saved"
        return greedy[int(checkpoint.name.split("_")[1])]

    for iteration, win_rate in training.items():
        run.save_checkpoint(algorithm, iteration, keep=1, win_rate=win_rate, check=check)
    assert checked == [f"iter_{i:06d}" for i in training]
    best, record = run.best_checkpoint()
    # 30 and 50 both won every greedy episode; 50 has the higher training win rate.
    assert best.name == "iter_000050" and record["greedy_win_rate"] == 1.0
    assert record["win_rate"] == 0.99


def test_an_older_best_is_rescored_before_checked_ones_compete(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    algorithm = FakeAlgorithm()
    run.save_checkpoint(algorithm, 10, win_rate=1.0)  # chosen by training win rate only
    run.rescore_best(lambda checkpoint: 0.75)
    assert run.best_checkpoint()[1]["greedy_win_rate"] == 0.75
    run.save_checkpoint(algorithm, 20, win_rate=1.0, check=lambda checkpoint: 0.5)
    assert run.best_checkpoint()[0].name == "iter_000010"
    run.save_checkpoint(algorithm, 30, win_rate=0.2, check=lambda checkpoint: 0.8)
    assert run.best_checkpoint()[0].name == "iter_000030"


def test_prune_checkpoints_keeps_the_newest_and_the_best(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    for iteration, win_rate in ((1, 0.2), (2, 0.9), (3, 0.1), (4, 0.3)):
        run.save_checkpoint(FakeAlgorithm(), iteration, keep=3, win_rate=win_rate)
    run.prune_checkpoints(keep=1)
    assert [path.name for path in run.checkpoints()] == ["iter_000002", "iter_000004"]
    assert run.latest_checkpoint().name == "iter_000004"


def test_machines_are_recorded_per_stretch_of_iterations_and_a_resume_drops_the_lost_ones(
    tmp_path,
):
    from keras_simplicial.agents.training.run_directory import this_machine

    run = RunDirectory(tmp_path / "run").create()
    assert run.read_machines() == [] and run.machine_of(1) is None
    run.record_machine(0, "fast x 2")
    run.record_machine(40, "slow x 2")
    run.record_machine(70, "other x 16")
    # A resume from the checkpoint of iteration 60 throws iterations 61-70 away, and their entry.
    run.record_machine(60)
    assert [e["from_iteration"] for e in run.read_machines()] == [0, 40, 60]
    # Each stretch names the code that trained it, its commit and a hash of its sources.
    assert all(len(e["code"]["source_sha256"]) == 64 for e in run.read_machines())
    assert run.machine_of(40) == "fast x 2" and run.machine_of(41) == "slow x 2"
    assert run.machine_of(61) == this_machine()
    assert this_machine().endswith(f" x {os.cpu_count()}")


def test_what_is_written_atomically_is_readable_as_an_ordinary_file_would_be(tmp_path):
    """tempfile's private 0600 / 0700 do not reach the run: others on a shared file system can
    read its checkpoints, metrics and JSON files, as with open() and mkdir() under the umask."""
    from keras_simplicial.agents.atomic_files import (
        DIRECTORY_MODE,
        FILE_MODE,
        atomic_copy_file,
        atomic_write_text,
    )

    ordinary, ordinary_directory = tmp_path / "ordinary", tmp_path / "ordinary-directory"
    ordinary.write_text("x")
    ordinary_directory.mkdir()
    run = RunDirectory(tmp_path / "run").create()
    checkpoint = run.save_checkpoint(FakeAlgorithm(), 1, keep=1, win_rate=0.5)
    atomic_write_text(tmp_path / "result.json", "{}")
    atomic_copy_file(tmp_path / "result.json", tmp_path / "copy.json")

    def mode(path):
        return path.stat().st_mode & 0o777

    assert mode(checkpoint) == mode(ordinary_directory) == DIRECTORY_MODE
    for path in (
        tmp_path / "result.json",
        tmp_path / "copy.json",
        run.checkpoints_dir / "latest",
        run.checkpoints_dir / "best.json",
        checkpoint / "manifest.json",
    ):
        assert mode(path) == mode(ordinary) == FILE_MODE, path


def test_metrics_rows_widen_and_truncate_by_whole_rewrites(tmp_path):
    """A new puzzle type's column rewrites metrics.csv with the wider header, and a resume drops
    the rows after its checkpoint; both rewrite the file atomically (`atomic_files`)."""
    from keras_simplicial.agents.training.run_directory import MetricsLog

    run = RunDirectory(tmp_path / "run").create()
    log = MetricsLog(run)
    log.append({"training_iteration": 1, "timesteps": 100, "win_rate": 0.5})
    log.append({"training_iteration": 2, "timesteps": 200, "win_rate": 0.6, "win_rate/1_0_0": 1.0})
    log.append({"training_iteration": 3, "timesteps": 300, "win_rate": 0.7})
    log.close()
    rows = run.read_metrics()
    assert [row["win_rate/1_0_0"] for row in rows] == ["", "1.0", ""]
    run.truncate_metrics(2)
    assert [row["timesteps"] for row in run.read_metrics()] == ["100", "200"]
    assert run.read_metrics()[1]["win_rate/1_0_0"] == "1.0"
    assert not [path.name for path in run.root.iterdir() if path.name.startswith(".")]


def test_best_checkpoint_of_takes_a_checkpoint_or_a_runs_best(tmp_path):
    from keras_simplicial.agents.training.checkpoints import best_checkpoint_of

    run = RunDirectory(tmp_path / "run").create()
    algorithm = FakeAlgorithm()
    run.save_checkpoint(algorithm, 1, keep=2, win_rate=None)
    with pytest.raises(FileNotFoundError, match="has no best checkpoint"):
        best_checkpoint_of(tmp_path / "run")
    for iteration, win_rate in {2: 0.9, 3: 0.1}.items():
        run.save_checkpoint(algorithm, iteration, keep=2, win_rate=win_rate)
    assert best_checkpoint_of(tmp_path / "run").name == "iter_000002"
    checkpoint = run.latest_checkpoint()
    assert best_checkpoint_of(checkpoint) == checkpoint


def test_a_folder_written_atomically_replaces_the_old_one_whole_or_not_at_all(tmp_path):
    from keras_simplicial.agents.atomic_files import atomic_directory

    target = tmp_path / "iter_000002"
    with atomic_directory(target) as staging:
        (staging / "weights.npz").write_text("first")
    assert (target / "weights.npz").read_text() == "first"
    with pytest.raises(RuntimeError, match="crashed"):
        with atomic_directory(target) as staging:
            (staging / "weights.npz").write_text("half")
            raise RuntimeError("crashed while writing")
    assert (target / "weights.npz").read_text() == "first"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["iter_000002"]
    with atomic_directory(target) as staging:
        (staging / "other.json").write_text("{}")
    assert sorted(path.name for path in target.iterdir()) == ["other.json"]


def _logged_run(root, iterations=3):
    from keras_simplicial.agents.training.run_directory import MetricsLog

    run = RunDirectory(root).create()
    log = MetricsLog(run)
    for i in range(1, iterations + 1):
        log.append({"training_iteration": i, "timesteps": 100 * i, "win_rate": i / 10})
    log.close()
    return run


def test_a_packed_log_reads_as_its_rows_and_a_run_that_trains_on_unpacks_it(tmp_path):
    """pack_metrics gzips metrics.csv (the same bytes, the same gzip for the same log), every
    reader reads it, and appending a row (a resumed run) makes metrics.csv the log again."""
    import gzip

    from keras_simplicial.agents.training.run_directory import MetricsLog

    run = _logged_run(tmp_path / "run")
    plain, rows = run.metrics_file.read_bytes(), run.read_metrics()
    sizes = run.pack_metrics()
    assert sizes == (len(plain), run.packed_metrics_file.stat().st_size)
    assert not run.metrics_file.exists() and run.metrics_source() == run.packed_metrics_file
    assert gzip.decompress(run.packed_metrics_file.read_bytes()) == plain
    assert run.read_metrics() == rows and run.pack_metrics() is None  # nothing left to pack
    packed = run.packed_metrics_file.read_bytes()
    _logged_run(tmp_path / "again").pack_metrics()
    assert (tmp_path / "again" / "metrics.csv.gz").read_bytes() == packed  # no time stamp

    log = MetricsLog(run)
    log.append({"training_iteration": 4, "timesteps": 400, "win_rate": 0.4})
    log.close()
    assert not run.packed_metrics_file.exists()
    assert [row["timesteps"] for row in run.read_metrics()] == ["100", "200", "300", "400"]
    run.pack_metrics()
    run.truncate_metrics(2)  # a resume from iteration 2's checkpoint, on a packed log
    assert not run.packed_metrics_file.exists()
    assert [row["timesteps"] for row in run.read_metrics()] == ["100", "200"]


def test_a_crash_between_packing_steps_leaves_metrics_csv_the_log(tmp_path):
    """Both files left (the new one written, the old one not yet removed): metrics.csv is read,
    and packing or unpacking again ends with one file."""
    run = _logged_run(tmp_path / "run")
    plain = run.metrics_file.read_bytes()
    run.pack_metrics()
    assert run.unpack_metrics() and not run.packed_metrics_file.exists()
    assert run.metrics_file.read_bytes() == plain  # the log as it was, byte for byte
    run.pack_metrics()
    run.unpack_metrics()
    run.pack_metrics()
    (run.root / "metrics.csv").write_bytes(b"")  # stands in for a log that differs
    assert run.metrics_source() == run.metrics_file and run.read_metrics() == []
    assert run.unpack_metrics() and run.metrics_file.read_bytes() == b""
    assert not run.packed_metrics_file.exists()


def test_damaged_logs_are_named_and_neither_packed_nor_lost(tmp_path):
    run = _logged_run(tmp_path / "run")
    run.metrics_file.write_text("training_iteration,timesteps\n1,x\n")
    with pytest.raises(ValueError, match=r"metrics\.csv is damaged: line 2"):
        run.pack_metrics()
    assert run.metrics_file.is_file() and not run.packed_metrics_file.exists()

    run = _logged_run(tmp_path / "cut")
    run.pack_metrics()
    whole = run.packed_metrics_file.read_bytes()
    run.packed_metrics_file.write_bytes(whole[: len(whole) // 2])  # a copy cut off
    with pytest.raises(ValueError, match=r"metrics\.csv\.gz is damaged: it is not a whole gzip"):
        run.read_metrics()
    (said,) = run.repair_for_resume()
    assert "metrics.csv.gz is damaged" in said and "metrics.csv.gz.damaged" in said
    assert run.read_metrics() == [] and (run.root / "metrics.csv.gz.damaged").is_file()


def test_pack_metrics_checks_every_run_directory_before_packing_any(tmp_path, capsys):
    import keras_simplicial_cli as cli

    run = _logged_run(tmp_path / "run")
    run.run_file.write_text("{}")  # what makes it a run directory to the command
    assert cli.main(["pack-metrics", str(run.root), str(tmp_path / "nothing")]) == 2
    assert "RUN_DIR " + str(tmp_path / "nothing") in capsys.readouterr().err
    assert run.metrics_file.is_file()
    assert cli.main(["pack-metrics", str(run.root)]) == 0
    assert "metrics.csv.gz: 0.00 MB -> 0.00 MB" in capsys.readouterr().out
    assert cli.main(["pack-metrics", str(run.root)]) == 0
    assert "already packed" in capsys.readouterr().out


def test_resume_goes_on_from_the_newest_intact_checkpoint_whatever_latest_says(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    algorithm = FakeAlgorithm()
    for iteration in (10, 20):
        run.save_checkpoint(algorithm, iteration)
    # A crash after iter_000020 was renamed into place and before `latest` was rewritten.
    (run.checkpoints_dir / "latest").write_text("iter_000010\n")
    intact, damaged = run.resume_point()
    assert intact.name == "iter_000020" and damaged == []


def test_a_damaged_machines_record_is_named_and_set_aside_on_resume(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    run.record_machine(0, "fast x 2")
    run.machines_file.write_text('[{"from_iteration": 0, "mach')  # cut off
    with pytest.raises(ValueError, match=r"machines\.json is damaged"):
        run.read_machines()
    (said,) = run.repair_for_resume()
    assert "machines.json is damaged" in said and "machines.json.damaged" in said
    assert run.read_machines() == [] and (run.root / "machines.json.damaged").is_file()
    run.record_machine(0, "slow x 2")
    assert [e["machine"] for e in run.read_machines()] == ["slow x 2"]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"checkpoint_every": 0}, "checkpoint_every must be an integer >= 1, got 0"),
        ({"stop_seconds": 0}, "stop_seconds must be a number > 0 or None, got 0"),
        ({"stop_timesteps": 0}, "stop_timesteps must be a positive integer, got 0"),
        ({"check_episodes": -1}, "check_episodes must be an integer >= 0, got -1"),
    ],
)
def test_train_names_a_bad_argument_before_it_touches_the_run(tmp_path, changes, message):
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.train import train

    arguments = RunArguments.from_preset("easy", "relational", engine="keras")
    with pytest.raises(ValueError, match=message):
        train(arguments, out=tmp_path / "run", **{"stop_timesteps": 100, **changes})
    assert not (tmp_path / "run").exists()
