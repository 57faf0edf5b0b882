"""What a training run leaves on disk, and how it is written so that nothing is lost.

    OUT/
      run.json              the run's arguments (`RunArguments`: read back by --resume, evaluate,
                            plot and the analysis commands)
      metrics.csv           one row per training iteration (metrics.csv.gz once packed: a
                            finished run's log at about a third of the size, read the same way)
      events/               TensorBoard event files
      checkpoints/
        iter_000012/        checkpoints (the engine's: RLlib's, or the Keras engine's weights and
                            optimizer state), each renamed into place only once complete, with
                            a copy of run.json and manifest.json (sizes and SHA-256 of its files)
        damaged-iter_N/     a checkpoint `--resume` found damaged, set aside (never deleted)
        latest              the name of the newest complete checkpoint
        best.json           the checkpoint that played best so far (never pruned): greedy win
                            rate of its saved weights, else training win rate
      exported/
        iter_000012/        a checkpoint's policy exported as Keras weights (`export_policy`,
                            `exported_policy`): what a finished run keeps of the checkpoints a
                            figure, probe or test plays, once its checkpoints are removed
      plots/win_rate.png    the training curve
      evaluation.json       win rates per puzzle type (after `--evaluate` or `evaluate`)
      machines.json         which machine and which code (commit, source hash) trained which
                            iterations (`record_machine`): frames/s
                            differ 2x between machines, so only those of one machine compare

Every file that a crash could leave half-written is written to a temporary name in the same
directory and then renamed over the old one (`atomic_files`; a checkpoint is a staging directory
renamed into place), but for the logs that grow a row at a time: metrics.csv and the TensorBoard
events are appended to, and a last row cut off by a crash is left out when read. What damage does
reach a file (a disk, a copy, a merge) is named in one line by the readers here, and `--resume`
goes on from what is intact (`resume_point`, `repair_for_resume`): a damaged file is set aside
under a `damaged-` or `.damaged` name, never deleted.

A finished run's metrics.csv can be packed (`pack_metrics`: gzipped, byte for byte the same rows,
for a repository's results). Every reader here reads either file; a run that trains again unpacks
it first (`unpack_metrics`), so the log it appends to is always plain text. Each step writes its
file atomically before removing the other, so a crash between them leaves both with the same
rows, and metrics.csv, the log that training appends to, is the one read.
"""

import csv
import gzip
import io
import json
import os
import platform
import shutil
import zlib
from pathlib import Path

from keras_simplicial.agents.atomic_files import (
    atomic_directory,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)
from keras_simplicial.agents.training.checkpoint_integrity import (
    verify_checkpoint,
    write_manifest,
)
from keras_simplicial.agents.training.exported_policy import exported_policy_dir

CHECKPOINT_PREFIX = "iter_"
DAMAGED_PREFIX = "damaged-"


def iteration_of(checkpoint):
    """The training iteration of a checkpoint named `iter_NNNNNN` (or of its exported policy),
    None for another name."""
    name = Path(str(checkpoint)).name
    digits = name[len(CHECKPOINT_PREFIX) :]
    return int(digits) if name.startswith(CHECKPOINT_PREFIX) and digits.isdigit() else None


def csv_text(rows, fields):
    """`rows` (dicts) as the text of a CSV file with the header `fields` (missing values empty)."""
    stream = io.StringIO()
    writer = csv.DictWriter(stream, fieldnames=fields, restval="")
    writer.writeheader()
    writer.writerows(rows)
    return stream.getvalue()


def this_machine():
    """What decides a run's frames/s here: "<CPU model> x <logical CPUs>"."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            model = next(
                (
                    line.split(":", 1)[1].strip()
                    for line in cpuinfo
                    if line.startswith("model name")
                ),
                "",
            )
    except OSError:  # no /proc/cpuinfo: not Linux
        model = ""
    return f"{model or platform.processor() or platform.machine()} x {os.cpu_count()}"


class RunDirectory:
    """The files of one training run under `root`."""

    def __init__(self, root):
        self.root = Path(root)
        self.run_file = self.root / "run.json"
        self.metrics_file = self.root / "metrics.csv"
        self.packed_metrics_file = self.root / "metrics.csv.gz"
        self.events_dir = self.root / "events"
        self.checkpoints_dir = self.root / "checkpoints"
        self.exported_dir = self.root / "exported"
        self.plots_dir = self.root / "plots"
        self.evaluation_file = self.root / "evaluation.json"
        self.machines_file = self.root / "machines.json"

    def create(self):
        for directory in (self.root, self.events_dir, self.checkpoints_dir, self.plots_dir):
            directory.mkdir(parents=True, exist_ok=True)
        return self

    # -- checkpoints -----------------------------------------------------------------------
    def save_checkpoint(self, algorithm, iteration, keep=3, win_rate=None, check=None):
        """Saves `algorithm` as `checkpoints/iter_NNNNNN` atomically; returns its path.

        The `keep` newest checkpoints stay, and so does the best one. Training can lose a solved
        policy (studies/easy-recipe/), so the best checkpoint is not always the last.

        Args:
            win_rate: the training win rate the saved weights earned (e.g. over the iterations
                since the last checkpoint), or None.
            check: `checkpoint path -> greedy win rate` of the saved weights (`GreedyCheck`),
                or None. With it, the best checkpoint is the one with the highest greedy win
                rate (ties: training win rate); without it, the highest training win rate.
        """
        final = self.checkpoints_dir / f"{CHECKPOINT_PREFIX}{iteration:06d}"
        with atomic_directory(final, prefix=".saving-") as staging:
            # Absolute: the new stack's Algorithm.save takes a relative path for a URI and fails.
            algorithm.save(str(staging.resolve()))
            if self.run_file.is_file():  # the arguments travel with the weights
                shutil.copyfile(self.run_file, staging / self.run_file.name)
            write_manifest(staging)  # last: the checkpoint is complete
        atomic_write_text(self.checkpoints_dir / "latest", final.name + "\n")
        candidate = {"checkpoint": final.name, "iteration": int(iteration)}
        candidate["win_rate"] = None if win_rate is None else float(win_rate)
        if check is not None:
            candidate["greedy_win_rate"] = float(check(final))
        best = self._read_best()
        if (check is not None or win_rate is not None) and (
            best is None or _rank(candidate) > _rank(best)
        ):
            self._write_best(candidate)
        self.prune_checkpoints(keep)
        return final

    def rescore_best(self, check):
        """Adds the greedy win rate to a best checkpoint chosen without one (an older run)."""
        best = self._read_best()
        found = self.best_checkpoint()
        if best is not None and found is not None and best.get("greedy_win_rate") is None:
            self._write_best({**best, "greedy_win_rate": float(check(found[0]))})

    def _write_best(self, record):
        atomic_write_json(self.best_file, record)

    @property
    def best_file(self):
        return self.checkpoints_dir / "best.json"

    def _read_best(self):
        """best.json's record, None without one; `ValueError` naming the file if damaged."""
        if not self.best_file.is_file():
            return None
        try:
            record = json.loads(self.best_file.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{self.best_file} is damaged: not valid JSON ({error}).") from None
        if not isinstance(record, dict) or not isinstance(record.get("checkpoint"), str):
            raise ValueError(
                f'{self.best_file} is damaged: expected {{"checkpoint": "iter_NNNNNN", ...}}, '
                f"got {type(record).__name__}."
            )
        return record

    def best_checkpoint(self):
        """(checkpoint path, its `best.json` record) of the best checkpoint so far, or None.

        The record holds `iteration`, `win_rate` (training, or None) and, when the run checks
        its checkpoints, `greedy_win_rate`.
        """
        best = self._read_best()
        if best is None or not (self.checkpoints_dir / best["checkpoint"]).is_dir():
            return None
        return self.checkpoints_dir / best["checkpoint"], best

    def latest_checkpoint(self):
        """The newest complete checkpoint, or None (the `latest` pointer if it names one)."""
        pointer = self.checkpoints_dir / "latest"
        try:
            name = pointer.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):  # missing or damaged: the names tell as well
            name = ""
        if name.startswith(CHECKPOINT_PREFIX) and "/" not in name:
            candidate = self.checkpoints_dir / name
            if candidate.is_dir():
                return candidate
        complete = self.checkpoints()
        return complete[-1] if complete else None

    def named_checkpoints(self):
        """(latest, best): the checkpoints that the `latest` pointer and best.json name, as
        paths, whether or not their folders are still there (None where a pointer is missing):
        what a finished run kept without its checkpoints still says of them."""
        pointer = self.checkpoints_dir / "latest"
        name = pointer.read_text(encoding="utf-8").strip() if pointer.is_file() else ""
        latest = self.checkpoints_dir / name if name.startswith(CHECKPOINT_PREFIX) else None
        best = self._read_best()
        return latest, None if best is None else self.checkpoints_dir / best["checkpoint"]

    def policy_of(self, checkpoint):
        """Where the policy of the run's `checkpoint` (a path, or None) is played from: the
        checkpoint while it is there, else its exported policy (`exported/<its name>`) if there
        is one, else the checkpoint's path as given."""
        if checkpoint is None or Path(checkpoint).is_dir():
            return checkpoint
        exported = exported_policy_dir(self.exported_dir / Path(checkpoint).name)
        return exported if exported is not None else checkpoint

    def best_policy(self):
        """(where the best checkpoint's policy is played from, its `best.json` record): the
        checkpoint, or once it is gone its exported policy (`policy_of`); None when neither is
        there."""
        best = self._read_best()
        if best is None:
            return None
        policy = self.policy_of(self.checkpoints_dir / best["checkpoint"])
        return (policy, best) if policy.is_dir() else None

    def exported_policies(self):
        """The run's exported policies (`exported/iter_N`), oldest first."""
        if not self.exported_dir.is_dir():
            return []
        return sorted(p for p in self.exported_dir.iterdir() if exported_policy_dir(p) == p)

    def resume_point(self):
        """(the newest intact checkpoint or None, [(damaged checkpoint, reason), ...] newer).

        The checkpoints newest first, whatever `latest` names: a crash between a checkpoint's
        rename into place and the pointer's update leaves `latest` one behind. Intact is what
        `verify_checkpoint` accepts.
        """
        damaged = []
        for checkpoint in reversed(self.checkpoints()):
            try:
                verify_checkpoint(checkpoint)
            except ValueError as error:
                damaged.append((checkpoint, str(error)))
                continue
            return checkpoint, damaged
        return None, damaged

    def set_aside(self, path):
        """Renames a damaged file or checkpoint out of the way (`damaged-iter_N`,
        `best.json.damaged`, ...), never over an earlier one; returns the new path."""
        path = Path(path)
        name = f"{DAMAGED_PREFIX}{path.name}" if path.is_dir() else f"{path.name}.damaged"
        target, count = path.with_name(name), 1
        while target.exists():
            target, count = path.with_name(f"{name}.{count}"), count + 1
        os.replace(path, target)
        return target

    def checkpoints(self):
        if not self.checkpoints_dir.is_dir():
            return []
        return sorted(
            p
            for p in self.checkpoints_dir.iterdir()
            if p.is_dir() and p.name.startswith(CHECKPOINT_PREFIX)
        )

    def prune_checkpoints(self, keep):
        """Deletes all but the `keep` newest checkpoints and the best one."""
        best = self._read_best()
        for stale in self.checkpoints()[:-keep]:
            if best is not None and stale.name == best["checkpoint"]:
                continue
            shutil.rmtree(stale, ignore_errors=True)
        for leftover in self.checkpoints_dir.glob(".saving-*"):
            shutil.rmtree(leftover, ignore_errors=True)

    # -- machines --------------------------------------------------------------------------
    def record_machine(self, from_iteration, machine=None):
        """Notes that the iterations after `from_iteration` train on `machine` (default: this
        one) with this process's code (`provenance()`: the commit and the source hash); entries
        of iterations that a resume from `from_iteration` throws away go."""
        from keras_simplicial.agents.provenance import provenance

        entries = [e for e in self.read_machines() if e["from_iteration"] < int(from_iteration)]
        entries.append(
            {
                "from_iteration": int(from_iteration),
                "machine": machine or this_machine(),
                "code": provenance(),
            }
        )
        atomic_write_json(self.machines_file, entries)

    def read_machines(self):
        """`record_machine`'s entries, oldest first ([] for a run from before they existed).

        Raises:
            ValueError: naming the file, when it is damaged.
        """
        if not self.machines_file.is_file():
            return []
        try:
            entries = json.loads(self.machines_file.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{self.machines_file} is damaged: {error}.") from None
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and "from_iteration" in e for e in entries
        ):
            raise ValueError(f"{self.machines_file} is damaged: not a list of machine entries.")
        return entries

    def machine_of(self, iteration, entries=None):
        """The machine that trained `iteration` (counted from 1), or None if unrecorded;
        `entries`: `read_machines()` read once by a caller that asks for many iterations."""
        machine = None
        for entry in self.read_machines() if entries is None else entries:
            if int(iteration) > entry["from_iteration"]:
                machine = entry["machine"]
        return machine

    # -- metrics ---------------------------------------------------------------------------
    def metrics_source(self):
        """The file the metrics are read from: metrics.csv, else metrics.csv.gz (packed), else
        None (no iteration logged yet)."""
        for path in (self.metrics_file, self.packed_metrics_file):
            if path.is_file():
                return path
        return None

    def _packed_metrics_bytes(self):
        try:
            return gzip.decompress(self.packed_metrics_file.read_bytes())
        except (OSError, EOFError, zlib.error) as error:  # not gzip, or cut off
            raise ValueError(f"it is not a whole gzip file ({error})") from None

    def _metrics_text(self, source):
        if source == self.packed_metrics_file:
            return self._packed_metrics_bytes().decode("utf-8")
        return source.read_text(encoding="utf-8")

    def read_metrics(self, partial_last_row=False):
        """The rows of metrics.csv, or of metrics.csv.gz when it is packed ([] without either),
        each a dict of strings.

        A last row cut off before its newline (a power cut while appending) is left out, and
        with `partial_last_row=True` reported: returns (rows, whether one was left out). Other
        damage raises `ValueError` naming the file and the line.
        """
        rows, partial = [], False
        source = self.metrics_source()
        if source is not None:
            try:
                text = self._metrics_text(source)
                if "\0" in text:
                    raise ValueError("it holds NUL bytes")
                if text and not text.endswith("\n"):
                    text, partial = text[: text.rfind("\n") + 1], True
                reader = csv.DictReader(text.splitlines(keepends=True))
                if text and not {"training_iteration", "timesteps"} <= set(reader.fieldnames):
                    raise ValueError("its header lacks training_iteration and timesteps")
                for row in reader:
                    if None in row or None in row.values():
                        raise ValueError(f"line {reader.line_num} has the wrong number of fields")
                    try:
                        int(row["training_iteration"]), int(row["timesteps"])
                    except ValueError:
                        raise ValueError(
                            f"line {reader.line_num} has no integer iteration and timesteps"
                        ) from None
                    rows.append(row)
            except (UnicodeDecodeError, csv.Error, ValueError) as error:
                raise ValueError(f"{source} is damaged: {error}.") from None
        return (rows, partial) if partial_last_row else rows

    def pack_metrics(self):
        """Gzips metrics.csv into metrics.csv.gz and removes metrics.csv: what a finished run
        keeps in a repository (a 20M-step run's 4 MB log packs to about 1.3 MB). The bytes are the
        same for the same log (no time stamp in the gzip header).

        Returns:
            (bytes before, bytes after), or None when there is no metrics.csv to pack.

        Raises:
            ValueError: naming the file, when metrics.csv is damaged (it stays as it is).
        """
        if not self.metrics_file.is_file():
            return None
        self.read_metrics()
        plain = self.metrics_file.read_bytes()
        packed = gzip.compress(plain, compresslevel=9, mtime=0)
        atomic_write_bytes(self.packed_metrics_file, packed)
        self.metrics_file.unlink()
        return len(plain), len(packed)

    def unpack_metrics(self):
        """Makes metrics.csv the log again where the run's metrics are packed (before a run
        trains on: rows are appended to plain text); a no-op otherwise.

        Returns:
            whether a packed log was unpacked.

        Raises:
            ValueError: naming metrics.csv.gz, when it is damaged (it stays as it is).
        """
        if not self.packed_metrics_file.is_file():
            return False
        if not self.metrics_file.is_file():  # else a crash left both: metrics.csv is the log
            try:
                plain = self._packed_metrics_bytes()
            except ValueError as error:
                raise ValueError(f"{self.packed_metrics_file} is damaged: {error}.") from None
            atomic_write_bytes(self.metrics_file, plain)  # the bytes that were packed
        self.packed_metrics_file.unlink()
        return True

    def repair_for_resume(self):
        """Sets aside what `--resume` cannot use and says so: a damaged metrics.csv (the run
        goes on with a new one), a damaged best.json, or one naming a checkpoint that is gone
        (the next checkpoints compete anew), and a damaged machines.json (a new record starts).
        A metrics.csv whose last row was cut off loses that row (`truncate_metrics` rewrites it).
        A packed log (metrics.csv.gz) is unpacked first, a damaged one set aside.

        Returns:
            one line per repair, for the user.
        """
        said = []
        try:
            if self.unpack_metrics():
                said.append(f"{self.packed_metrics_file}: unpacked to metrics.csv to go on.")
        except ValueError as error:
            kept = self.set_aside(self.packed_metrics_file)
            said.append(f"{error} Set aside as {kept.name}; new rows start a new metrics.csv.")
        try:
            _, partial = self.read_metrics(partial_last_row=True)
            if partial:
                said.append(f"{self.metrics_file}: its last row was cut off; it is dropped.")
        except ValueError as error:
            kept = self.set_aside(self.metrics_file)
            said.append(f"{error} Set aside as {kept.name}; new rows start a new metrics.csv.")
        try:
            best = self._read_best()
        except ValueError as error:
            kept = self.set_aside(self.best_file)
            said.append(f"{error} Set aside as {kept.name}; the best checkpoint is chosen anew.")
        else:
            if best is not None and not (self.checkpoints_dir / best["checkpoint"]).is_dir():
                kept = self.set_aside(self.best_file)
                said.append(
                    f"{self.best_file} names {best['checkpoint']}, which is gone (damaged); "
                    f"set aside as {kept.name}; the best checkpoint is chosen anew."
                )
        try:
            self.read_machines()
        except ValueError as error:
            kept = self.set_aside(self.machines_file)
            said.append(f"{error} Set aside as {kept.name}; a new record of machines starts.")
        return said

    def truncate_metrics(self, last_iteration):
        """Drops rows after `last_iteration` (written after the checkpoint a run resumes from)."""
        self.unpack_metrics()
        rows = [
            row for row in self.read_metrics() if int(row["training_iteration"]) <= last_iteration
        ]
        if not rows:
            if self.metrics_file.exists():
                self.metrics_file.unlink()
            return
        atomic_write_text(self.metrics_file, csv_text(rows, list(rows[0].keys())))


class MetricsLog:
    """Appends one row per iteration to metrics.csv (flushed) and to TensorBoard, and the
    iteration's timings (seconds per phase) to TensorBoard only, as `time/<phase>`."""

    def __init__(self, run_directory):
        self.run_directory = run_directory
        self._fields = None
        run_directory.unpack_metrics()
        existing = run_directory.read_metrics()
        if existing:
            self._fields = list(existing[0].keys())
        self._summary_writer = None

    def _writer(self):
        if self._summary_writer is None:
            from tensorboardX import SummaryWriter

            self._summary_writer = SummaryWriter(str(self.run_directory.events_dir))
        return self._summary_writer

    def append(self, row, timings=None):
        path = self.run_directory.metrics_file
        if self._fields is None:
            self._fields = list(row.keys())
        extra = [key for key in row if key not in self._fields]
        if extra:  # a new puzzle type appeared: rewrite the file with the wider header
            rows = self.run_directory.read_metrics()
            self._fields += extra
            atomic_write_text(path, csv_text(rows, self._fields))
        new_file = not path.exists()
        with open(path, "a", newline="", encoding="utf-8") as stream:
            writer = csv.DictWriter(stream, fieldnames=self._fields, restval="")
            if new_file:
                writer.writeheader()
            writer.writerow(row)
            stream.flush()
            os.fsync(stream.fileno())
        step = int(row["timesteps"])
        writer = self._writer()
        for key, value in row.items():
            if key in ("training_iteration", "timesteps") or value in ("", None):
                continue
            writer.add_scalar(key, float(value), step)
        for phase, seconds in (timings or {}).items():
            writer.add_scalar(f"time/{phase}", float(seconds), step)
        writer.flush()

    def close(self):
        if self._summary_writer is not None:
            self._summary_writer.close()


def _rank(record):
    """Orders best-checkpoint candidates: greedy win rate first, then training win rate."""
    greedy, training = record.get("greedy_win_rate"), record.get("win_rate")
    return (-1.0 if greedy is None else greedy, -1.0 if training is None else training)
