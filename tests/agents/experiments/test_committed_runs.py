"""The run directories committed under benchmarks/results/ stay usable by this version of the
package: their arguments read, their latest and best checkpoints intact (so `--resume` goes on
from the latest), their metrics read by the one curve rule, and (slow) their policies load with a
model for the board they trained on. The same for the DAgger runs (`keras-simplicial dagger`):
settings, resumable state and models."""

import json
from pathlib import Path

import numpy as np
import pytest

from keras_simplicial.agents.training.curve import TrainingCurve
from keras_simplicial.agents.training.run_arguments import CLIP_EACH_VARIABLE, RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"
# Training runs (IMPALA) and supervised runs (DAgger: a dagger.json beside the run.json).
DAGGER_RUNS = sorted(path.parent for path in RESULTS.glob("*/*/dagger.json"))
RUNS = sorted(
    path.parent for path in RESULTS.glob("*/*/run.json") if path.parent not in DAGGER_RUNS
)
AGENTS = ("relational", "simplicial")
# The runs reported in studies/bridge-small-reproduction/ and studies/bridge-medium/: trained
# clipping each variable's gradient, before run.json recorded the clipping.
TRAINED_CLIPPING_EACH_VARIABLE = {
    *(f"bridge-small/{agent}-seed{seed}" for agent in AGENTS for seed in (1, 2, 3)),
    *(f"bridge-medium-pilot/{agent}-seed1" for agent in AGENTS),
    "bridge-medium-pilot-h120/relational-seed1",
}


def test_the_committed_runs_are_found():
    names = {f"{run.parent.name}/{run.name}" for run in RUNS}
    assert TRAINED_CLIPPING_EACH_VARIABLE <= names


@pytest.mark.parametrize("run_dir", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_committed_run_resumes_with_the_gradient_clipping_it_trained_with(run_dir):
    """A run.json that records no gradient clipping was written before runs recorded it, when
    every run clipped each variable's gradient (RLlib 2.60's default): such a run resumes with
    it, and the reports declare it. A later run resumes with what it records, on either stack."""
    from keras_simplicial.agents.experiments.setting import runs_recipe_deviations
    from keras_simplicial.agents.training.impala import impala_config

    run_file = RunDirectory(run_dir).run_file
    recorded = json.loads(run_file.read_text())["overrides"].get(CLIP_EACH_VARIABLE)
    if f"{run_dir.parent.name}/{run_dir.name}" in TRAINED_CLIPPING_EACH_VARIABLE:
        assert recorded is None
    arguments = RunArguments.read(run_file)
    each_variable = True if recorded is None else recorded
    assert arguments.overrides[CLIP_EACH_VARIABLE] is each_variable
    if arguments.api_stack == "new":  # the setting becomes the new stack's grad_clip_by
        from keras_simplicial.agents.training.impala_torch import new_stack_settings

        clip_by = new_stack_settings(arguments.overrides)["grad_clip_by"]
        assert clip_by == ("norm" if each_variable else "global_norm")
    else:
        assert getattr(impala_config(arguments), CLIP_EACH_VARIABLE) is each_variable
    rows, _ = runs_recipe_deviations({run_dir.name: arguments.overrides})
    declared = ("gradient clipping", "each gradient tensor's norm to 40", "the global norm to 40")
    assert (declared in rows) is each_variable


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


@pytest.mark.parametrize("run_dir", DAGGER_RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_committed_dagger_run_would_resume_and_its_models_load(run_dir):
    from keras_simplicial.agents.imitation.dagger_directory import DaggerDirectory
    from keras_simplicial.agents.training.checkpoints import load_attention_agent

    directory = DaggerDirectory(run_dir)
    config = directory.read_config()
    history, state = directory.read_progress()
    assert state is not None and history["rounds"]
    assert {"policy.keras", "optimizer.npz", "episodes.npz"} <= {
        path.name for path in directory.state_dir.iterdir()
    }
    with np.load(directory.state_dir / "episodes.npz") as episodes:
        assert int(episodes["lengths"].sum()) == history["rounds"][-1]["labelled_moves"]
    for path in (run_dir, run_dir / "best"):
        agent, arguments = load_attention_agent(path)
        assert agent.kind == config.agent == arguments.agent
