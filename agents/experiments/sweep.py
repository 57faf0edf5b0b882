"""Runs of a sweep (agents x seeds in one folder): train or resume each, and evaluate its
checkpoints once.

    run_dir = sweep_run_dir(out, "simplicial", 3)          # OUT/simplicial-seed3
    train_or_resume(run_dir, arguments, stop_timesteps=3_000_000)
    evaluate_run(run_dir, episodes=1000)                    # best and final, sampled and greedy

Nothing is lost between sittings: a run directory that holds a run is resumed from its newest
intact checkpoint, one that reached its steps is left alone, and every evaluation is cached in
the run directory, keyed by the checkpoint's name (`checkpoint_key`), so the same command run
again picks up where it stopped. A finished run may be kept without its checkpoints (a few MB
each; the repository commits a sweep's finished runs so): its cached evaluations answer for them,
and where a checkpoint's policy was exported (`exported/iter_N`), it plays in its place.
"""

import json
import shutil
from pathlib import Path

from keras_simplicial.agents.training.run_directory import RunDirectory, iteration_of

# A run stops at the first iteration past its step target: at most one iteration's samples
# beyond it (about 10,000 steps on the easy preset).
SAMPLE_GRANULARITY = 20_000


class RunInterrupted(KeyboardInterrupt):
    """A run of a sweep stopped by Ctrl-C (checkpointed): the sweep stops before evaluating."""


def sweep_run_dir(out, agent, seed):
    """The run directory of `agent` with `seed` in the sweep folder `out`."""
    return Path(out) / f"{agent}-seed{seed}"


def trained_steps(run_dir):
    """Environment steps the run in `run_dir` has trained (0 without metrics)."""
    rows = RunDirectory(run_dir).read_metrics()
    return int(rows[-1]["timesteps"]) if rows else 0


def train_or_resume(
    run_dir, arguments, stop_timesteps, *, address=None, checkpoint_every=10, progress="plain"
):
    """Trains the run of `arguments` (a `RunArguments`) in `run_dir` up to `stop_timesteps`,
    resuming what is there; a run that got there already is left as it is.

    Raises `RunInterrupted` when Ctrl-C stopped the run (after its checkpoint): going on would
    evaluate "the best within N steps" of a run that never got there.
    """
    from keras_simplicial.agents.training import train as training

    run = RunDirectory(run_dir)
    if run.run_file.exists() and trained_steps(run_dir) >= stop_timesteps:
        return
    resume = run.run_file.exists() and run.latest_checkpoint() is not None
    if run.run_file.exists() and not resume:  # started but never checkpointed: start again
        shutil.rmtree(run_dir)
    summary = training.train(
        arguments,
        out=run_dir,
        stop_timesteps=int(stop_timesteps),
        resume=resume,
        address=address,
        checkpoint_every=checkpoint_every,
        progress=progress,
    )
    if summary.interrupted:
        raise RunInterrupted(
            f"Interrupted at {summary.timesteps:,} steps; run the same command to resume."
        )


def checkpoint_key(checkpoint):
    """What a cached result of a run's own checkpoint is keyed by: its name in the run's
    checkpoints folder (`iter_000120`), not its path, so that the caches of a run directory hold
    wherever it is cloned and however `--out` is spelled (relative or absolute)."""
    return Path(str(checkpoint)).name


def evaluate_checkpoints(run_dir, checkpoints, episodes, record_ended_by=()):
    """Win rates of `{name: checkpoint}` (checkpoints of the run in `run_dir`), sampled and
    greedy, cached in `evaluation_<name>_<mode>.json` (re-used while they name the same
    checkpoint, by `checkpoint_key`, and the same number of episodes). `record_ended_by`: the
    modes ("sampled", "greedy") whose cached reports must also say why episodes ended
    (`ended_by`); one written before evaluations recorded it is played again. A checkpoint under
    two names (the best one is the final one) is played once, and each name gets its files."""
    from keras_simplicial.agents.analysis import evaluation
    from keras_simplicial.agents.atomic_files import atomic_write_json
    from keras_simplicial.agents.training import checkpoints as loading

    results, done, reports = {}, {}, {}
    for which, checkpoint in checkpoints.items():
        key = checkpoint_key(checkpoint)
        if key in done:
            results[which] = results[done[key]]
            for mode in ("sampled", "greedy"):
                path = Path(run_dir) / f"evaluation_{which}_{mode}.json"
                atomic_write_json(path, reports[done[key], mode])
            continue
        done[key] = which
        results[which] = {"checkpoint": str(checkpoint)}
        missing = not Path(checkpoint).is_dir()
        policy = None
        for mode, explore in (("sampled", True), ("greedy", False)):
            path = Path(run_dir) / f"evaluation_{which}_{mode}.json"
            report = json.loads(path.read_text()) if path.exists() else None
            if (
                report is None
                or checkpoint_key(report.get("checkpoint", "")) != key
                or report["overall"]["episodes"] != episodes
                or (mode in record_ended_by and "ended_by" not in report["overall"])
            ):
                if missing:
                    raise FileNotFoundError(
                        f"{checkpoint} is not there, and {path} holds no {mode} evaluation of it "
                        f"on {episodes} episodes: evaluate it where the run's checkpoints are."
                    )
                policy = policy or loading.load_policy(checkpoint)
                report = evaluation.evaluate_checkpoint(
                    checkpoint, episodes=episodes, explore=explore, output=path, policy=policy
                ).to_dict()
            results[which][mode], reports[which, mode] = report["overall"], report
    return results


def evaluate_run(run_dir, episodes):
    """Win rates of the run's best and final checkpoints, sampled and greedy (cached)."""
    run = RunDirectory(run_dir)
    final = run.latest_checkpoint()
    best = run.best_checkpoint()
    best = best[0] if best else None
    if final is None:  # a finished run kept without its checkpoints: their exported policies
        final, best = (run.policy_of(checkpoint) for checkpoint in run.named_checkpoints())
    return evaluate_checkpoints(run_dir, {"final": final, "best": best or final}, episodes)


def evaluate_budget(run_dir, budget, episodes):
    """The best checkpoint of the run's first `budget` steps, sampled and greedy.

    Called when the run has just reached `budget` (before it goes on), so `best.json` names the
    best checkpoint of those steps; the evaluations are kept as
    `evaluation_within_<budget>_<mode>.json` and read back once the run has gone further. A run
    that went past `budget` without stopping there still has an answer when its overall best
    checkpoint was saved within `budget` steps (a later one replaces it only when strictly
    better); otherwise None.
    """
    run = RunDirectory(run_dir)
    steps_at = {int(row["training_iteration"]): int(row["timesteps"]) for row in run.read_metrics()}
    name = f"within_{budget}"
    path = Path(run_dir) / f"evaluation_{name}_greedy.json"
    best = run.best_checkpoint()
    checkpoint = best[0] if best else run.latest_checkpoint()
    if path.exists():
        recorded = json.loads(path.read_text())["checkpoint"]
        checkpoint = run.checkpoints_dir / checkpoint_key(recorded)
    elif checkpoint is None or (
        steps_at.get(iteration_of(checkpoint), budget + 1) > budget
        and trained_steps(run_dir) > budget + SAMPLE_GRANULARITY
    ):
        return None
    result = evaluate_checkpoints(run_dir, {name: checkpoint}, episodes)[name]
    return {
        **result,
        "budget": budget,
        "checkpoint_timesteps": steps_at.get(iteration_of(checkpoint)),
    }


def random_policy_win_rate(env_id, env_config, episodes=2000, seed=0):
    """The reference measured in the same run: uniformly random actions on the same puzzles."""
    import numpy as np

    from keras_simplicial.agents.rollout import episode_outcomes

    def uniform(observations):
        return np.zeros((len(observations), 4))

    outcomes = episode_outcomes(uniform, env_id, env_config, episodes, num_envs=64, seed=seed)
    return sum(outcome.won for outcome in outcomes) / len(outcomes)


def cached_json(path, checkpoint, compute):
    """`compute()` of the run's `checkpoint`, stored at `path` and reused while its "checkpoint"
    entry names the same one (`checkpoint_key`)."""
    from keras_simplicial.agents.atomic_files import atomic_write_json

    path, key = Path(path), checkpoint_key(checkpoint)
    if path.exists():
        stored = json.loads(path.read_text())
        if checkpoint_key(stored.get("checkpoint", "")) == key:
            return stored
    value = {**compute(), "checkpoint": key}
    atomic_write_json(path, value)
    return value
