"""A DAgger run round by round, as a Markdown table (`keras-simplicial summary OUT`).

    print(rounds_markdown("benchmarks/results/bridge-medium-dagger/relational-seed1"))

One row per round: labelled moves so far, epochs, the last epoch's training loss and accuracies
(training, held-out oracle states, and the learner's own new states before it trained on them),
then the greedy validation games: the win rate on the preset's puzzles and on its length-2 ones,
each length-2 type's win rate, and the share of length-2 games that loop at the Gem box holding
one of its two keys. Everything is read from the run's history.json.
"""

import json
from pathlib import Path

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


def rounds_markdown(run_dir):
    """The table of `round_rows` for the run in `run_dir`, with the best round marked."""
    history = read_history(run_dir)
    rows = round_rows(history)
    best = (history.get("best") or {}).get("round")
    length2 = any(row["greedy_length2"] is not None for row in rows)
    titles = ["round", "labelled moves", "epochs", "loss", "accuracy: train", "held-out", "new"]
    titles += ["greedy win rate"] + (["length 2"] + list(LENGTH_TWO_TYPES) if length2 else [])
    titles += ["Gem box, one key"] if length2 else []
    lines = ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    for row in rows:
        cells = [
            f"{row['round']}" + (" (best)" if row["round"] == best else ""),
            f"{row['labelled_moves']:,}",
            str(row["epochs"]),
            _number(row["loss"], 4),
            _number(row["train_accuracy"]),
            _number(row["held_out_accuracy"]),
            _number(row["accuracy_on_new_states"]),
            _number(row["greedy_all"]),
        ]
        if length2:
            cells.append(_number(row["greedy_length2"]))
            cells += [_number(row.get(name)) for name in LENGTH_TWO_TYPES]
            cells.append(_number(row.get("gem_box_one_key")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _number(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"
