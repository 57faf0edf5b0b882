"""Win rates of a trained agent per puzzle type, with confidence intervals.

    report = evaluate_checkpoint("runs/demo/checkpoints/iter_000120", episodes=1000)

The policy is loaded from the checkpoint alone (no Ray cluster), and plays `episodes` episodes on
the run's environment through the batched vector env. Every environment plays the same fixed
number of episodes, so short episodes are not over-represented. Episodes are capped at
`max_episode_steps` (a capped episode counts as lost), because the paper's environment has no
step limit and an untrained policy may never finish.
"""

import json
import math
from pathlib import Path

import numpy as np

from keras_simplicial.agents.run_directory import RunDirectory, atomic_write_text


def wilson_interval(wins, total, z=1.96):
    """The Wilson score interval of a binomial proportion (95% for z = 1.96)."""
    if total == 0:
        return (0.0, 1.0)
    p = wins / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def resolve_checkpoint(path):
    """A checkpoint directory, or a run directory (-> its latest checkpoint), as an absolute path
    (RLlib reads checkpoints through pyarrow, which takes a relative path for a URI)."""
    path = Path(path).resolve()
    if (path / "policies").is_dir():
        return path
    if (path / "run.json").is_file():
        latest = RunDirectory(path).latest_checkpoint()
        if latest is not None:
            return latest
    raise FileNotFoundError(f"No checkpoint at {path} (expected an RLlib checkpoint directory "
                            "with policies/, or a run directory with checkpoints/).")


def run_directory_of(checkpoint):
    """The run directory a checkpoint belongs to (OUT/checkpoints/iter_N -> OUT)."""
    checkpoint = Path(checkpoint)
    candidate = checkpoint.parent.parent
    return RunDirectory(candidate) if (candidate / "run.json").is_file() else None


def load_policy(checkpoint):
    """The RLlib TF2 policy of a checkpoint, with its Keras agent model at `policy.model`."""
    from ray.rllib.policy.policy import Policy

    from keras_simplicial.agents.rllib_model import ensure_tf2_behavior, register_agent_models

    ensure_tf2_behavior()
    register_agent_models()  # RLlib's catalog forgets custom models at every ray.shutdown()
    checkpoint = resolve_checkpoint(checkpoint)
    return Policy.from_checkpoint(str(checkpoint / "policies" / "default_policy"))


def play_episodes(policy, env_id, env_config, episodes, num_envs=32, seed=0,
                  max_episode_steps=500, explore=True):
    """Plays `episodes` episodes; returns a list of (puzzle_type, won, length)."""
    import gymnasium

    import keras_simplicial.envs  # noqa: F401

    num_envs = max(1, min(int(num_envs), int(episodes)))
    quota = np.full(num_envs, episodes // num_envs)
    quota[: episodes % num_envs] += 1
    config = dict(env_config)
    config["max_steps"] = config.get("max_steps") or max_episode_steps
    envs = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point",
                              **config)
    observations, infos = envs.reset(seed=seed)
    lengths = np.zeros(num_envs, dtype=np.int64)
    results = []
    finished = np.zeros(num_envs, dtype=np.int64)
    skip_next = np.zeros(num_envs, dtype=bool)  # the autoreset step after an episode ends
    while (finished < quota).any():
        actions, _, _ = policy.compute_actions(observations, explore=explore)
        observations, rewards, terminated, truncated, infos = envs.step(np.asarray(actions))
        lengths += ~skip_next
        done = (terminated | truncated) & ~skip_next
        for index in np.flatnonzero(done):
            if finished[index] < quota[index]:
                puzzle_type = tuple(int(v) for v in infos["puzzle_type"][index])
                results.append((puzzle_type, bool(infos["is_success"][index]),
                                int(lengths[index])))
                finished[index] += 1
            lengths[index] = 0
        skip_next = done
    envs.close()
    return results


def summarise(results):
    """Win rate overall and per puzzle type, each with a 95% Wilson interval."""
    def entry(outcomes):
        wins, total = int(sum(outcomes)), len(outcomes)
        low, high = wilson_interval(wins, total)
        return {"episodes": total, "wins": wins, "win_rate": wins / total if total else 0.0,
                "ci95": [round(low, 4), round(high, 4)]}

    by_type = {}
    for puzzle_type, won, _ in results:
        by_type.setdefault(puzzle_type, []).append(won)
    return {
        "overall": entry([won for _, won, _ in results]),
        "mean_episode_length": float(np.mean([length for *_, length in results])) if results
        else 0.0,
        "per_puzzle_type": {"(%d, %d, %d)" % puzzle_type: entry(outcomes)
                            for puzzle_type, outcomes in sorted(by_type.items())},
    }


def evaluate_checkpoint(checkpoint, episodes=1000, env_id=None, env_config=None, seed=0,
                        num_envs=32, max_episode_steps=500, explore=True, output=None,
                        policy=None):
    """Evaluates a checkpoint (or a run directory's latest one) and writes a JSON report.

    The environment defaults to the one the run trained on (from its run.json). The report goes
    to `output`, or to the run's evaluation.json. `policy`: the checkpoint's policy if already
    loaded (`load_policy`), to evaluate it several ways without loading it again.
    """
    if int(episodes) < 1:
        raise ValueError(f"episodes must be a positive integer, got {episodes!r}.")
    checkpoint = resolve_checkpoint(checkpoint)
    run = run_directory_of(checkpoint)
    arguments = run.read_run() if run is not None else {}
    env_id = env_id or arguments.get("env", "BridgeBoxWorld-v0")
    env_config = dict(arguments.get("env_config", {}) if env_config is None else env_config)
    policy = policy or load_policy(checkpoint)
    results = play_episodes(policy, env_id, env_config, int(episodes), num_envs=num_envs,
                            seed=seed, max_episode_steps=max_episode_steps, explore=explore)
    report = {
        "checkpoint": str(checkpoint),
        "agent": arguments.get("agent"),
        "env": env_id,
        "env_config": env_config,
        "seed": seed,
        "explore": explore,
        "max_episode_steps": max_episode_steps,
        **summarise(results),
    }
    if output is None and run is not None:
        output = run.evaluation_file
    if output is not None:
        atomic_write_text(output, json.dumps(report, indent=2) + "\n")
        report["output"] = str(output)
    return report


def format_report(report):
    """A small table: puzzle type, episodes, win rate and its 95% interval."""
    lines = [f"{'puzzle type':<14}{'episodes':>9}{'win rate':>10}   95% interval"]
    rows = list(report["per_puzzle_type"].items()) + [("overall", report["overall"])]
    for name, entry in rows:
        low, high = entry["ci95"]
        lines.append(f"{name:<14}{entry['episodes']:>9}{entry['win_rate']:>10.3f}   "
                     f"[{low:.3f}, {high:.3f}]")
    return "\n".join(lines)
