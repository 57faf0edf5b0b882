"""The run directories committed under benchmarks/results/ stay usable by this version of the
package: their arguments read, their metrics read by the one curve rule, and either (a campaign
under way) their latest and best checkpoints intact, so `--resume` goes on from the latest, or (a
finished run, kept without RLlib's checkpoints) the policy of each checkpoint it holds probe
results of, exported as Keras weights, so that the probes (and the figures and diagnoses of the
best checkpoints) can be made again; and (slow) the policies they keep load with a model for the
board they trained on. The same for the DAgger runs (`keras-simplicial dagger`, finished): settings,
history, labelled episodes and models."""

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
# The probes whose results a run directory keeps (`probe_best.json`, `inventory_20M_final.json`):
# each names the checkpoint it probed, "best" or "final", by how its name ends.
PROBE_RESULTS = ("probe_*.json", "inventory_*.json")
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
    from keras_simplicial.agents.training.rllib.impala import impala_config

    run_file = RunDirectory(run_dir).run_file
    recorded = json.loads(run_file.read_text())["overrides"].get(CLIP_EACH_VARIABLE)
    if f"{run_dir.parent.name}/{run_dir.name}" in TRAINED_CLIPPING_EACH_VARIABLE:
        assert recorded is None
    arguments = RunArguments.read(run_file)
    each_variable = True if recorded is None else recorded
    assert arguments.overrides[CLIP_EACH_VARIABLE] is each_variable
    if arguments.api_stack == "new":  # the setting becomes the new stack's grad_clip_by
        from keras_simplicial.agents.training.rllib.impala_torch import new_stack_settings

        clip_by = new_stack_settings(arguments.overrides)["grad_clip_by"]
        assert clip_by == ("norm" if each_variable else "global_norm")
    else:
        assert getattr(impala_config(arguments), CLIP_EACH_VARIABLE) is each_variable
    rows, _ = runs_recipe_deviations({run_dir.name: arguments.overrides})
    declared = ("gradient clipping", "each gradient tensor's norm to 40", "the global norm to 40")
    assert (declared in rows) is each_variable


def kept_policies(run):
    """The policies a run directory keeps: its exported ones and, under way, its latest
    checkpoint."""
    return run.exported_policies() + ([run.latest_checkpoint()] if run.checkpoints() else [])


def probed(run):
    """The run's checkpoints ("best", "final") that it keeps probe results of."""
    names = [path.stem for pattern in PROBE_RESULTS for path in run.root.glob(pattern)]
    return {which for which in ("best", "final") if any(n.endswith(which) for n in names)}


@pytest.mark.parametrize("run_dir", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_committed_run_would_resume_or_keeps_the_policies_its_probes_played(run_dir):
    from keras_simplicial.agents.training.checkpoint_integrity import verify_checkpoint
    from keras_simplicial.agents.training.exported_policy import RUN_COPY, read_policy_record

    run = RunDirectory(run_dir)
    arguments = RunArguments.read(run.run_file)
    assert arguments.agent in AGENTS
    latest, best = run.named_checkpoints()
    assert latest is not None and best is not None
    if run.checkpoints():  # a campaign under way: it resumes from its latest checkpoint
        intact, damaged = run.resume_point()
        assert damaged == [] and intact == run.latest_checkpoint() and best.is_dir()
    named = {"best": best, "final": latest}
    for which in probed(run):  # their checkpoints, or once those are gone, their policies
        assert run.policy_of(named[which]).is_dir(), f"{run_dir}: the {which} policy is gone"
    for policy in run.exported_policies():
        verify_checkpoint(policy)
        assert read_policy_record(policy)["checkpoint"] == policy.name
        assert policy.name in (latest.name, best.name)
        assert RunArguments.read(policy / RUN_COPY) == arguments
    curve = TrainingCurve.read(run_dir)
    assert len(curve.steps) > 0 and curve.timesteps > 0


def test_the_probed_runs_are_found():
    probed_runs = {f"{run.parent.name}/{run.name}" for run in RUNS if probed(RunDirectory(run))}
    assert {f"bridge-small/{agent}-seed{seed}" for agent in AGENTS for seed in (1, 2, 3)} | {
        "bridge-medium-pilot/relational-seed1",
        "bridge-medium-pilot/simplicial-seed1",
        "bridge-medium-pilot-h120/relational-seed1",
    } <= probed_runs


@pytest.mark.slow
@pytest.mark.parametrize(
    "run_dir",
    [run for run in RUNS if kept_policies(RunDirectory(run))],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_the_policies_a_committed_run_keeps_load_for_its_board(run_dir):
    import gymnasium

    from keras_simplicial.agents.training.checkpoints import load_policy

    run = RunDirectory(run_dir)
    arguments = RunArguments.read(run.run_file)
    env = gymnasium.make(arguments.env, **arguments.env_config)
    for path in kept_policies(run):
        policy = load_policy(path)
        assert policy.observation_space.shape == env.observation_space.shape
        assert policy.model.kind == arguments.agent


@pytest.mark.parametrize("run_dir", DAGGER_RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_committed_dagger_run_keeps_its_history_episodes_and_models(run_dir):
    """The study has ended: its runs keep their models, history and labelled episodes, not the
    state only a resume needs (optimizer.npz and the state's copy of the model)."""
    from keras_simplicial.agents.imitation.dagger_directory import DaggerDirectory
    from keras_simplicial.agents.training.checkpoints import load_attention_agent

    directory = DaggerDirectory(run_dir)
    config = directory.read_config()
    history, state = directory.read_progress()
    assert state is not None and history["rounds"]
    assert {path.name for path in directory.state_dir.iterdir()} == {
        "episodes.npz",
        "progress.json",
    }
    with np.load(directory.state_dir / "episodes.npz") as episodes:
        assert int(episodes["lengths"].sum()) == history["rounds"][-1]["labelled_moves"]
    for path in (run_dir, run_dir / "best"):
        agent, arguments = load_attention_agent(path)
        assert agent.kind == config.agent == arguments.agent
