"""studies/stack-parity/stack_parity.py: the rule written before the parity re-run, applied to
sweeps."""

import pytest
from sweep_reports import sweep_report

from keras_simplicial.agents.experiments import stack_parity as script

OLD = [200_000, 210_000, 220_000, 230_000, 240_000]
SEEDS = [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    "new_steps,within,final,verdict",
    [
        ([205_000, 215_000, 225_000, 235_000, 245_000], 1.0, 1.0, "new learns as well"),
        ([100_000, 110_000, 120_000, 130_000, 140_000], 1.0, 1.0, "new learns better"),
        ([300_000, 310_000, 320_000, 330_000, None], 1.0, 1.0, "old learns better"),  # p = 1/252
        ([100_000, 110_000, 120_000, 130_000, 140_000], 0.98, 1.0, "old learns better"),
        ([205_000, 215_000, 225_000, 235_000, 245_000], 1.0, 0.985, "old learns better"),
        ([205_000, 215_000, 225_000, 235_000, 245_000], None, 1.0, "old learns better"),
    ],
)
def test_the_verdict_follows_the_rule(new_steps, within, final, verdict):
    results = script.parity_verdict(
        sweep_report(OLD), sweep_report(new_steps, within, final), 600_000, SEEDS
    )
    assert results["relational"]["verdict"] == verdict
    if new_steps[-1] is None:
        assert results["relational"]["steps_to_0.99"]["new"][-1] == 600_000  # never: run length
        assert results["relational"]["p_new_later"] == pytest.approx(1 / 252)
    assert f"**{verdict}**" in script.verdict_table(results)


def test_an_agent_swept_on_one_stack_only_gets_no_verdict():
    results = script.parity_verdict(
        sweep_report(OLD), sweep_report(OLD, agents=("relational",)), 600_000, SEEDS
    )
    assert set(results) == {"relational"}


def test_no_verdict_until_every_seed_is_in_on_both_stacks():
    """The rule decides on 5 + 5 runs: with fewer, even runs that would pass are only interim."""
    faster = [100_000, 110_000, 120_000, 130_000, 140_000]
    results = script.parity_verdict(sweep_report(OLD[:1]), sweep_report(faster[:3]), 600_000, SEEDS)
    relational = results["relational"]
    assert not relational["complete"]
    assert relational["verdict"] == (
        "interim: old stack lacks seeds 2, 3, 4, 5; new stack lacks seeds 4, 5"
    )
    assert "**interim: old stack lacks seeds 2, 3, 4, 5" in script.verdict_table(results)
    complete = script.parity_verdict(sweep_report(OLD), sweep_report(faster), 600_000, SEEDS)
    assert complete["relational"]["complete"]
    assert complete["relational"]["verdict"] == "new learns better"


def test_the_summary_sweep_takes_in_seeds_finished_in_earlier_sittings(tmp_path):
    """`--seeds 2` in a later sitting must not drop seed 1 from the stack's table and verdict;
    a seed is taken in only when every agent's run of it has finished (else the summary sweep
    would train)."""
    for name in ("relational-seed1", "simplicial-seed1", "relational-seed3", "simplicial-seed3"):
        (tmp_path / name).mkdir()
    for name in ("relational-seed1", "simplicial-seed1", "relational-seed3"):
        (tmp_path / name / "evaluation_final_greedy.json").write_text("{}")
    assert script.finished_seeds(tmp_path, ("relational", "simplicial")) == {1}
    assert script.finished_seeds(tmp_path, ("relational",)) == {1, 3}


def test_a_sweep_committed_without_checkpoints_reads_back_as_its_learning_curve_json():
    """`runs_from_files` rebuilds the runs of the old stack's committed re-run from their files
    alone (no checkpoints there): the same endpoints and evaluations its sweep wrote."""
    import json
    from pathlib import Path

    sweep = Path(__file__).resolve().parents[3] / "benchmarks/results/stack-parity-rerun/old"
    written = json.loads((sweep / "learning_curve.json").read_text())["runs"]
    runs = script.runs_from_files(sweep)
    assert sorted(runs) == sorted(written)
    for name, run in runs.items():
        assert run["steps_to"] == written[name]["steps_to"]
        for which in ("best", "final"):
            for mode in ("greedy", "sampled"):
                assert (
                    run["evaluations"][which][mode]["win_rate"]
                    == written[name]["evaluations"][which][mode]["win_rate"]
                )
        assert run["budget_evaluations"].keys() == written[name]["budget_evaluations"].keys()
        for budget, evaluation in run["budget_evaluations"].items():
            assert evaluation["greedy"] == written[name]["budget_evaluations"][budget]["greedy"]


def test_the_verdict_names_the_engines_it_compares():
    results = script.parity_verdict(
        sweep_report(OLD),
        sweep_report(OLD[:2]),
        600_000,
        SEEDS,
        names=("the old stack", "the Keras engine"),
    )
    assert results["relational"]["verdict"] == "interim: the Keras engine lacks seeds 3, 4, 5"


def test_a_sweep_trains_the_model_of_the_committed_sweeps():
    """Re-run, the parity sweeps train the model their committed runs trained (the presets' model
    before the front end), whatever the presets' model is now."""
    import argparse
    import json
    from pathlib import Path

    import keras_simplicial_cli as cli
    from keras_simplicial.agents.commands.arguments import given_run_arguments
    from keras_simplicial.agents.model.model_config import with_architecture_defaults
    from keras_simplicial.agents.training.run_arguments import RunArguments

    results = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "stack-parity"
    given = argparse.Namespace(
        agents=["relational"], seeds=[1], stop_timesteps=600_000, eval_episodes=1000,
        out="runs", budget=None,
    )  # fmt: skip
    for stack in script.STACKS:
        command = script.sweep_command(stack, given)
        args = cli.build_parser().parse_args(command[command.index("sweep") :])
        model = RunArguments.from_preset(args.preset, **given_run_arguments(args)).model_overrides
        curve = json.loads((results / stack / "learning_curve.json").read_text(encoding="utf-8"))
        committed = curve["options"]["arguments"]["model_overrides"]
        assert model == with_architecture_defaults(committed), stack
