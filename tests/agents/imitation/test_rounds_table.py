"""A DAgger run's rounds as a Markdown table, read from its history.json."""

import json

import pytest

from keras_simplicial.agents.imitation.rounds_table import dagger_rounds, round_rows


def greedy_games(win_rate, per_type, gem_box_one_key):
    return {
        "overall": {"win_rate": win_rate, "loops": {"gem_box_one_key": gem_box_one_key}},
        "per_puzzle_type": {name: {"win_rate": rate} for name, rate in per_type.items()},
    }


HISTORY = {
    "best": {"round": 1, "score": 0.5},
    "rounds": [
        {
            "round": 0,
            "labelled_moves": 1000,
            "accuracy_on_new_states": None,
            "epochs": [{"loss": 0.9, "train_accuracy": 0.5, "held_out_accuracy": 0.45}],
            "greedy": {
                "all": greedy_games(0.25, {}, 0.0),
                "length2": greedy_games(0.125, {"(2, 0, 0)": 0.25, "(2, 2, 4)": 0.0}, 0.5),
            },
        },
        {
            "round": 1,
            "labelled_moves": 3500,
            "accuracy_on_new_states": 0.75,
            "epochs": [{"loss": 0.5, "train_accuracy": 0.8, "held_out_accuracy": 0.7}] * 2,
            "greedy": {
                "all": greedy_games(0.75, {}, 0.0),
                "length2": greedy_games(0.5, {"(2, 0, 0)": 0.75, "(2, 2, 4)": 0.25}, 0.125),
            },
        },
        {"round": 2, "labelled_moves": 5000, "epochs": []},  # still training: no row
    ],
}


def test_one_row_per_finished_round_with_each_length_two_type(tmp_path):
    (tmp_path / "history.json").write_text(json.dumps(HISTORY))
    rows = round_rows(HISTORY)
    assert [row["round"] for row in rows] == [0, 1]
    assert rows[1]["(2, 2, 4)"] == 0.25 and rows[1]["(2, 1, 3)"] is None
    result = dagger_rounds(tmp_path)
    assert result.to_dict()["best_round"] == 1
    lines = result.to_markdown().splitlines()[2:]
    assert len(lines) == 4 and "(2, 2, 4)" in lines[0] and "Gem box, one key" in lines[0]
    assert lines[3].startswith("| 1 (best) | 3,500 | 2 | 0.5000 | 0.800 | 0.700 | 0.750 | 0.750 |")
    assert lines[3].endswith("| 0.500 | 0.750 | - | - | - | 0.250 | 0.125 |")
    with pytest.raises(FileNotFoundError, match="No DAgger history"):
        dagger_rounds(tmp_path / "elsewhere")
