"""The run directories committed under benchmarks/results/ stay usable by this version of the
package: their arguments read, their latest and best checkpoints intact (so `--resume` goes on
from the latest), their metrics read by the one curve rule, and (slow) their policies load with a
model for the board they trained on."""

from pathlib import Path

import pytest

from keras_simplicial.agents.training.curve import TrainingCurve
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"
RUNS = sorted(path.parent for path in RESULTS.glob("*/*/run.json"))


def test_the_committed_runs_are_found():
    names = {f"{run.parent.name}/{run.name}" for run in RUNS}
    assert "bridge-small/relational-seed1" in names and "bridge-small/simplicial-seed3" in names
    assert "bridge-medium-pilot/relational-seed1" in names


@pytest.mark.parametrize("run_dir", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_committed_run_reads_and_would_resume_from_its_latest_checkpoint(run_dir):
    run = RunDirectory(run_dir)
    arguments = RunArguments.read(run.run_file)
    assert arguments.agent in ("relational", "simplicial")
    intact, damaged = run.resume_point()
    assert damaged == [] and intact == run.latest_checkpoint()
    best = run.best_checkpoint()
    assert best is not None and best[0].is_dir()
    curve = TrainingCurve.read(run_dir)
    assert len(curve.steps) > 0 and curve.timesteps > 0


@pytest.mark.slow
@pytest.mark.parametrize("run_dir", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_committed_runs_policy_loads_for_its_board(run_dir):
    import gymnasium

    from keras_simplicial.agents.training.checkpoints import load_policy

    arguments = RunArguments.read(RunDirectory(run_dir).run_file)
    policy = load_policy(run_dir)
    env = gymnasium.make(arguments.env, **arguments.env_config)
    assert policy.observation_space.shape == env.observation_space.shape
    assert policy.model.kind == arguments.agent
