"""The directory of a DAgger run, written so that a crash at any moment loses at most an epoch.

    OUT/run.json             the model and its environment (`RunArguments`, as a training run's)
    OUT/dagger.json          the run's `DaggerConfig`
    OUT/history.json         per round: labelled moves, epochs (loss, accuracies), greedy games
    OUT/code.json            which code (commit, source hash) trained from which round and epoch
                             on (`record_code`), one entry per process that trained
    OUT/policy.keras         the model after the last complete round (`evaluate OUT`)
    OUT/best/policy.keras    the model of the round with the best greedy validation score
    OUT/state/LATEST         names the newest state folder, OUT/state/<n>/: policy.keras,
                             optimizer.npz, episodes.npz (board seeds and moves), progress.json

A state folder is complete before LATEST names it, and LATEST is replaced atomically; older
folders are removed after. `keras-simplicial dagger --resume --out OUT` continues from LATEST,
and first makes again what a round writes after its state (OUT/policy.keras, OUT/best/), which a
crash between the two would have left behind (`complete_round`).
"""

import json
import shutil
from pathlib import Path

from keras_simplicial.agents.atomic_files import (
    atomic_copy_file,
    atomic_write_json,
    atomic_write_text,
)
from keras_simplicial.agents.imitation.dagger_config import DaggerConfig
from keras_simplicial.agents.training.checkpoints import KERAS_POLICY_FILE

STATE_POINTER = "LATEST"


class DaggerDirectory:
    """Reads and writes the files of a DAgger run in `out`."""

    def __init__(self, out):
        self.out = Path(out)
        self.config_file = self.out / "dagger.json"
        self.run_file = self.out / "run.json"
        self.history_file = self.out / "history.json"
        self.code_file = self.out / "code.json"
        self.policy_file = self.out / KERAS_POLICY_FILE
        self.best_dir = self.out / "best"
        self.states = self.out / "state"

    @property
    def exists(self):
        return self.config_file.is_file()

    def start(self, config):
        """Writes a new run's dagger.json and run.json; a run already there must have been started
        with the same config (a resume reads it with `read_config`)."""
        if self.exists:
            stored = self.read_config()
            if stored != config:
                changed = sorted(
                    name
                    for name, value in config.to_json().items()
                    if stored.to_json()[name] != value
                )
                raise ValueError(
                    f"{self.out} holds a DAgger run with other settings ({', '.join(changed)}); "
                    "resume it as it is (--resume) or choose another --out."
                )
            return stored
        if not isinstance(config, DaggerConfig):
            raise TypeError(f"config must be a DaggerConfig, got {type(config).__name__}.")
        self.out.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.config_file, config.to_json())
        config.run_arguments().write(self.run_file)
        return config

    def record_code(self, state):
        """Notes that this process's code (`provenance()`: the commit and the source hash) trains
        the run from `state` (`read_progress`'s; None for a new run) on; entries of processes that
        started at or after that point saved nothing a resume keeps, and go."""
        from keras_simplicial.agents.provenance import provenance

        at = _position(state)
        entries = [e for e in self.read_code() if _position(e) < at]
        entries.append({**_fields(state), "code": provenance()})
        atomic_write_json(self.code_file, entries, indent=1)

    def read_code(self):
        """`record_code`'s entries, oldest first ([] for a run from before they existed).

        Raises:
            ValueError: naming the file, when it is damaged.
        """
        if not self.code_file.is_file():
            return []
        try:
            entries = json.loads(self.code_file.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{self.code_file} is damaged: {error}.") from None
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and {"round", "collected", "epoch", "code"} <= set(e)
            for e in entries
        ):
            raise ValueError(f"{self.code_file} is damaged: not a list of code entries.")
        return entries

    def extend(self, config):
        """Rewrites dagger.json of a run continued with more rounds or labelled moves."""
        atomic_write_json(self.config_file, config.to_json())

    def read_config(self):
        if not self.exists:
            raise FileNotFoundError(f"No DAgger run at {self.out} (no dagger.json).")
        return DaggerConfig.from_json(json.loads(self.config_file.read_text(encoding="utf-8")))

    @property
    def state_dir(self):
        """The newest complete state folder, or None."""
        pointer = self.states / STATE_POINTER
        if not pointer.is_file():
            return None
        return self.states / pointer.read_text(encoding="utf-8").strip()

    def read_progress(self):
        """(history, state) of the newest state folder; a new run's ({"rounds": [], "best":
        None}, None)."""
        state_dir = self.state_dir
        if state_dir is None:
            return {"rounds": [], "best": None}, None
        progress = json.loads((state_dir / "progress.json").read_text(encoding="utf-8"))
        return progress["history"], progress["state"]

    def save_state(self, learner, episodes, history, state):
        """A new state folder with everything a resume needs, then LATEST pointed at it."""
        previous = self.state_dir
        number = int(previous.name) + 1 if previous is not None else 0
        folder = self.states / f"{number:06d}"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        learner.save(folder)
        episodes.save(folder / "episodes.npz")
        atomic_write_json(folder / "progress.json", {"history": history, "state": state}, indent=1)
        atomic_write_text(self.states / STATE_POINTER, folder.name + "\n")
        atomic_write_json(self.history_file, history, indent=1)
        for old in self.states.iterdir():
            if old.is_dir() and old != folder:
                shutil.rmtree(old)

    def finished(self, config, history, state):
        """Whether the newest state (`read_progress`) is the end of a run set up by `config`:
        every round done, or the labelled moves at `config.max_labelled_moves` after a round."""
        if state is None or state["collected"]:
            return False
        if state["round"] > config.rounds:
            return True
        return bool(history["rounds"]) and (
            history["rounds"][-1]["labelled_moves"] >= config.max_labelled_moves
        )

    def complete_round(self, history, state):
        """What `save_round` writes after a round's state, made from that state: OUT/policy.keras,
        and OUT/best/ where the round was the best. Does nothing unless the newest state is a
        round's end (`collected` false, a round done). Idempotent: a resume calls it."""
        state_dir = self.state_dir
        if state_dir is None or state is None or state["collected"] or state["round"] < 1:
            return
        model = state_dir / KERAS_POLICY_FILE
        atomic_copy_file(model, self.policy_file)
        best = history.get("best")
        best_file = self.best_dir / "best.json"
        if best is not None and best["round"] == state["round"] - 1:
            stored = best_file.read_text(encoding="utf-8") if best_file.is_file() else None
            if stored is None or json.loads(stored) != best:
                self.best_dir.mkdir(exist_ok=True)
                atomic_copy_file(model, self.best_dir / KERAS_POLICY_FILE)
                atomic_write_json(best_file, best)

    def save_round(self, learner, episodes, history, state, is_best):
        """The state after a complete round, its model as OUT/policy.keras and, if it is the best
        so far, as OUT/best/policy.keras."""
        self.save_state(learner, episodes, history, state)
        atomic_copy_file(self.state_dir / KERAS_POLICY_FILE, self.policy_file)
        if is_best:
            self.best_dir.mkdir(exist_ok=True)
            atomic_copy_file(self.state_dir / KERAS_POLICY_FILE, self.best_dir / KERAS_POLICY_FILE)
            atomic_write_json(self.best_dir / "best.json", history["best"])


def _fields(state):
    """Where a run stands: {"round", "collected" (its moves are in), "epoch"}; a new run's for
    None."""
    state = state or {"round": 0, "collected": False, "epoch": 0}
    return {
        "round": int(state["round"]),
        "collected": bool(state["collected"]),
        "epoch": int(state["epoch"]) if state["collected"] else 0,
    }


def _position(state):
    """`_fields` as a tuple that orders a run's points in time."""
    fields = _fields(state)
    return fields["round"], fields["collected"], fields["epoch"]
