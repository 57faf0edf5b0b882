"""studies/bridge-small-every-run/reliability.py: the runs of a sweep that reach the target, per
agent."""

import json

import pytest

from keras_simplicial.agents.experiments import reliability as script


def write_run(sweep, agent, seed, best=None, within=None):
    run = sweep / f"{agent}-seed{seed}"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"agent": agent, "seed": seed}))
    for name, rate in (("best", best), ("within_500000", within)):
        if rate is not None:
            report = {"overall": {"win_rate": rate}}
            (run / f"evaluation_{name}_greedy.json").write_text(json.dumps(report))


def test_runs_are_counted_per_agent_against_the_target_and_unevaluated_ones_named(tmp_path):
    sweep = tmp_path / "stage"
    write_run(sweep, "simplicial", 1, best=0.883)
    write_run(sweep, "simplicial", 2, best=0.95)
    write_run(sweep, "simplicial", 3)  # still training
    write_run(sweep, "relational", 1, best=1.0)
    rows = script.tally("stage", script.sweep_runs(sweep), target=0.95)
    relational, simplicial = rows
    assert (relational["agent"], relational["reached"], relational["evaluated"]) == (
        "relational",
        1,
        1,
    )
    assert (simplicial["reached"], simplicial["evaluated"]) == (1, 2)
    assert simplicial["seeds_reaching"] == [2] and simplicial["others"] == {1: 0.883}
    assert simplicial["not_evaluated"] == [3]
    table = script.markdown(rows, 0.95, None)
    assert "| stage | simplicial | **1 of 2** | seed 1: 0.883 | seed 3 |" in table
    assert "runs whose best checkpoint wins >= 0.95 greedily" in table


def test_a_best_checkpoint_that_is_the_final_one_is_read_from_the_final_report(tmp_path):
    sweep = tmp_path / "stage"
    write_run(sweep, "simplicial", 1)
    run = sweep / "simplicial-seed1"
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "best.json").write_text(json.dumps({"checkpoint": "iter_001525"}))
    final = {"checkpoint": "/elsewhere/checkpoints/iter_001525", "overall": {"win_rate": 0.016}}
    (run / "evaluation_final_greedy.json").write_text(json.dumps(final))
    assert script.sweep_runs(sweep) == [("simplicial", 1, 0.016)]
    # A best checkpoint the final report is not about (training went on) is not evaluated yet.
    (run / "checkpoints" / "best.json").write_text(json.dumps({"checkpoint": "iter_001600"}))
    assert script.sweep_runs(sweep) == [("simplicial", 1, None)]


def test_a_budget_reads_the_best_checkpoint_within_it_and_the_figure_is_drawn(tmp_path):
    sweep = tmp_path / "easy"
    write_run(sweep, "relational", 1, best=1.0, within=0.685)
    write_run(sweep, "relational", 2, best=1.0, within=1.0)
    rows = script.tally("easy", script.sweep_runs(sweep, budget=500000), target=0.99)
    assert (rows[0]["reached"], rows[0]["others"]) == (1, {1: 0.685})
    assert "within 500,000 steps" in script.markdown(rows, 0.99, 500000)
    script.figure(rows, 0.99, tmp_path / "reliability.png")
    assert (tmp_path / "reliability.png").stat().st_size > 0


def test_bad_arguments_are_named(tmp_path, capsys):
    with pytest.raises(SystemExit):
        script.main(["no-label-here"])
    assert "expected LABEL=SWEEP_DIR" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match="holds no run directory"):
        script.main([f"x={tmp_path / 'empty'}"])
    with pytest.raises(SystemExit):
        script.main([f"x={tmp_path / 'empty'}", "--target", "1.5"])
    assert "--target must be a win rate in (0, 1]" in capsys.readouterr().err
