"""A DAgger run round by round (`keras-simplicial summary OUT` of a DAgger run).

    print(dagger_rounds("benchmarks/results/bridge-medium-dagger/relational-seed1").to_markdown())

One row per round: labelled moves so far, epochs, the last epoch's training loss and accuracies
(training, held-out oracle states, and the learner's own new states before it trained on them),
then the greedy validation games: the win rate on the preset's puzzles and on its length-2 ones,
each length-2 type's win rate, and the share of length-2 games that loop at the Gem box holding
one of its two keys. Everything is read from the run's history.json.
"""

import dataclasses
import json
from pathlib import Path

from keras_simplicial.agents.analysis.results import Result, cell, markdown_table

LENGTH_TWO_TYPES = ("(2, 0, 0)", "(2, 1, 3)", "(2, 1, 4)", "(2, 2, 3)", "(2, 2, 4)")


def read_history(run_dir):
    path = Path(run_dir) / "history.json"
    if not path.is_file():
        raise FileNotFoundError(f"No DAgger history at {path}.")
    return json.loads(path.read_text(encoding="utf-8"))


def round_rows(history):
    """One dict per round that has finished its greedy games."""
    rows = []
    for entry in history["rounds"]:
        if "greedy" not in entry:
            continue
        last = entry["epochs"][-1] if entry["epochs"] else {}
        greedy = entry["greedy"]
        length2 = greedy.get("length2")
        row = {
            "round": entry["round"],
            "labelled_moves": entry["labelled_moves"],
            "epochs": len(entry["epochs"]),
            "loss": last.get("loss"),
            "train_accuracy": last.get("train_accuracy"),
            "held_out_accuracy": last.get("held_out_accuracy"),
            "accuracy_on_new_states": entry.get("accuracy_on_new_states"),
            "greedy_all": greedy["all"]["overall"]["win_rate"],
            "greedy_length2": length2["overall"]["win_rate"] if length2 else None,
        }
        if length2:
            per_type = length2["per_puzzle_type"]
            for name in LENGTH_TWO_TYPES:
                row[name] = per_type[name]["win_rate"] if name in per_type else None
            row["gem_box_one_key"] = length2["overall"]["loops"]["gem_box_one_key"]
        rows.append(row)
    return rows


@dataclasses.dataclass
class DaggerRounds(Result):
    """The rounds of the DAgger run in `run_dir` (`round_rows`) and its best round."""

    run_dir: str
    best_round: int
    rows: list

    def to_markdown(self):
        length2 = any(row["greedy_length2"] is not None for row in self.rows)
        header = ["round", "labelled moves", "epochs", "loss", "accuracy: train", "held-out"]
        header += ["new", "greedy win rate"]
        if length2:
            header += ["length 2", *LENGTH_TWO_TYPES, "Gem box, one key"]
        table = []
        for row in self.rows:
            cells = [
                f"{row['round']}" + (" (best)" if row["round"] == self.best_round else ""),
                f"{row['labelled_moves']:,}",
                str(row["epochs"]),
                cell(row["loss"], 4),
                cell(row["train_accuracy"]),
                cell(row["held_out_accuracy"]),
                cell(row["accuracy_on_new_states"]),
                cell(row["greedy_all"]),
            ]
            if length2:
                cells.append(cell(row["greedy_length2"]))
                cells += [cell(row.get(name)) for name in LENGTH_TWO_TYPES]
                cells.append(cell(row.get("gem_box_one_key")))
            table.append(cells)
        return (
            f"DAgger run {self.run_dir}: one row per round (greedy games on the validation "
            "boards)\n\n" + markdown_table(header, table)
        )


def dagger_rounds(run_dir):
    """The `DaggerRounds` of the run in `run_dir`, read from its history.json."""
    history = read_history(run_dir)
    best = (history.get("best") or {}).get("round")
    return DaggerRounds(str(run_dir), best, round_rows(history))
