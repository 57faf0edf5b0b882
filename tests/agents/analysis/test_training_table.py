"""`keras-simplicial summary`: a run's training per window of steps, per puzzle type and outcome."""

import json

import keras_simplicial_cli as cli
from keras_simplicial.agents.analysis.training_table import format_training_table, training_windows
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory

COLUMNS = (
    "training_iteration,timesteps,time_s,episodes,episode_len_mean,entropy,win_rate,"
    "win_rate/1_0_0,win_rate/2_1_3,ended/won,ended/opened_bridge,ended/opened_wrong_box,"
    "ended/out_of_steps,ended/opened_bridge/2_1_3"
)


def _run(root):
    run = RunDirectory(root).create()
    RunArguments(env="BridgeBoxWorld-v0", agent="relational").write(run.run_file)
    rows = [
        "1,400,1,100,400,1.2,0.9,1.0,0.0,0.9,0.1,0.0,0.0,1.0",  # 100 episodes: does not count
        "2,800,2,200,300,1.0,0.7,1.0,0.4,0.7,0.3,0.0,0.0,0.6",
        "3,1200,3,200,100,0.6,0.8,1.0,0.6,0.8,0.1,0.0,0.1,0.2",
        "4,2400,4,200,50,0.4,0.9,1.0,0.8,0.9,0.1,0.0,0.0,0.2",
    ]
    run.metrics_file.write_text("\n".join([COLUMNS, *rows]) + "\n")
    return root


def test_windows_average_the_counted_rows_per_type_and_outcome(tmp_path):
    first, second = training_windows(_run(tmp_path / "run"), every=1000)[:2]
    assert (first.start, first.end, first.rows) == (0, 1000, 1)
    assert first.win_rate == 0.7 and first.per_type == {(1, 0, 0): 1.0, (2, 1, 3): 0.4}
    assert first.bridge_opened == 0.6 and first.ended["opened_bridge"] == 0.3
    assert (second.start, second.rows, second.episode_length) == (1000, 1, 100)
    assert second.ended["out_of_steps"] == 0.1
    # The window 2000-3000 holds row 4; 3000 and on hold none and are left out.
    assert [w.start for w in training_windows(tmp_path / "run", every=1000)] == [0, 1000, 2000]

    table = format_training_table(training_windows(tmp_path / "run", every=1000))
    header, rule, row, *_ = table.splitlines()
    assert "(1,0,0) | (2,1,3)" in header and "ended: opened bridge" in header
    assert row.startswith("| 0-0.001 | 0.700 | 1.00 | 0.40 | 0.70 | 0.30 | 0.00 | 0.00 | 0.60 |")


def test_summary_command_prints_the_table_and_names_bad_input(tmp_path, capsys):
    run = _run(tmp_path / "run")
    output = tmp_path / "summary.json"
    assert cli.main(["summary", str(run), "--every", "1000", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| steps (M) | win rate |") and "| 0.002-0.003 | 0.900 |" in out
    saved = json.loads(output.read_text())
    assert saved["run_dir"] == str(run) and saved["windows"][-1]["end"] == 3000
    assert cli.main(["summary", str(tmp_path / "none")]) == 2
    assert "run.json is missing" in capsys.readouterr().err


def test_saved_evaluations_are_tabled_per_puzzle_type(tmp_path, capsys):
    import json

    from keras_simplicial.agents.analysis.training_table import (
        format_evaluation_table,
        run_evaluations,
    )

    run = _run(tmp_path / "run")

    def entry(rate, bridge, loops):
        ended = {"won": rate, "opened_bridge": bridge, "out_of_steps": loops}
        return {"episodes": 10, "win_rate": rate, "ended_by": ended}

    report = {
        "checkpoint": str(run / "checkpoints" / "iter_000004"),
        "overall": entry(0.5, 0.25, 0.25),
        "per_puzzle_type": {"(1, 0, 0)": entry(1.0, 0.0, 0.0), "(2, 1, 3)": entry(0.0, 0.5, 0.5)},
    }
    (run / "evaluation_best_greedy.json").write_text(json.dumps(report))
    (run / "evaluation.json").write_text("{}")  # not an evaluation report: left out
    reports = run_evaluations(run)
    assert list(reports) == ["best_greedy"]
    header, _, row = format_evaluation_table(reports).splitlines()
    assert "| (1, 0, 0) | (2, 1, 3) |" in header
    assert row == "| best_greedy | iter_000004 | 10 | 0.500 | 1.000 | 0.000 | 0.250 / 0.250 |"

    assert cli.main(["summary", str(run)]) == 0
    assert "| best_greedy | iter_000004 |" in capsys.readouterr().out

    loops = {"edge": 0.0, "key_tile": 0.05, "closed_lock": 0.05, "gem_box_one_key": 0.2}
    report["overall"]["loops"] = {**loops, "closed_wrong_box": 0.1, "cycle": 0.0}
    (run / "evaluation_final_greedy.json").write_text(json.dumps(report))
    header, _, best, final = format_evaluation_table(run_evaluations(run)).splitlines()
    assert header.endswith("| greedy loops: Gem box with 1 key / wrong box / blocked / cycle |")
    assert best.endswith("| 0.250 / 0.250 | - |")  # saved before loops were recorded
    assert final.endswith("| 0.250 / 0.250 | 0.200 / 0.100 / 0.100 / 0.000 |")
    # `evaluate`'s default file, which `train --evaluate` writes for the last checkpoint.
    (run / "evaluation.json").write_text(json.dumps(report))
    assert list(run_evaluations(run)) == ["best_greedy", "final_greedy", "last"]
