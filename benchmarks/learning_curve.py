"""Learning is shown, not assumed: both agents trained on an easy BoxWorld, curves recorded.

    .venv/bin/python benchmarks/learning_curve.py [--stop-timesteps 1000000 1500000] [--out benchmarks/runs]

Trains the relational and then the simplicial agent with the settings of `make train` (the `easy`
preset of `keras_simplicial.agents.config.PRESETS`, one env runner of 32 environments) and writes,
under `--out`:
each agent's run directory (metrics.csv, TensorBoard events, checkpoints), `learning_curves.png`
(fraction solved against environment steps, both agents) and `learning_curve.json` (the win rate at
the start and the end of training, the steps each agent needed to reach 0.5 and 0.8, and its final
and best checkpoints evaluated on `--eval-episodes` fresh episodes twice: acting as it trained,
sampling from its policy, and greedily, taking the most probable action; a policy that has not
learned where the player is can win by sampling a biased random walk and lose every greedy
episode). `--stop-timesteps` takes one length for all agents or one per agent, in order.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


def random_policy_win_rate(env_id, env_config, episodes=2000, seed=0):
    """The reference measured in the same run: uniformly random actions on the same puzzles."""
    import gymnasium
    import numpy as np

    import keras_simplicial.envs  # noqa: F401

    envs = gymnasium.make_vec(env_id, num_envs=64, vectorization_mode="vector_entry_point",
                              **env_config)
    envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    wins, finished = 0, 0
    skip = np.zeros(64, dtype=bool)
    while finished < episodes:
        _, _, terminated, truncated, infos = envs.step(rng.integers(0, 4, size=64))
        done = (terminated | truncated) & ~skip
        wins += int(np.sum(infos["is_success"] & done))
        finished += int(np.sum(done))
        skip = done
    envs.close()
    return wins / finished


def summarise(run_dir, window=5):
    from keras_simplicial.agents.run_directory import RunDirectory

    rows = [r for r in RunDirectory(run_dir).read_metrics() if r.get("win_rate") not in ("", None)]
    steps = [int(r["timesteps"]) for r in rows]
    wins = [float(r["win_rate"]) for r in rows]
    fps = sorted(float(r["frames_per_s"]) for r in rows)

    def first_reaching(level):
        for step, win in zip(steps, wins):
            if win >= level:
                return step
        return None

    head, tail = wins[:window], wins[-window:]
    return {
        "iterations": len(rows),
        "timesteps": steps[-1] if steps else 0,
        "win_rate_start": sum(head) / len(head) if head else None,
        "win_rate_end": sum(tail) / len(tail) if tail else None,
        "steps_to_0.5": first_reaching(0.5),
        "steps_to_0.8": first_reaching(0.8),
        "median_frames_per_s": fps[len(fps) // 2] if fps else None,
    }


def evaluate_checkpoints(summary, episodes):
    """Win rates of the run's final and (if it differs) best checkpoint, sampled and greedy."""
    from keras_simplicial.agents.evaluate import evaluate_checkpoint

    checkpoints = {"final": summary.checkpoint}
    if summary.best_checkpoint and summary.best_checkpoint != summary.checkpoint:
        checkpoints["best"] = summary.best_checkpoint
    results = {}
    for which, checkpoint in checkpoints.items():
        results[which] = {"checkpoint": checkpoint}
        for mode, explore in (("sampled", True), ("greedy", False)):
            report = evaluate_checkpoint(
                checkpoint, episodes=episodes, explore=explore,
                output=Path(summary.run_dir) / f"evaluation_{which}_{mode}.json")
            results[which][mode] = report["overall"]
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stop-timesteps", type=int, nargs="+", default=[1_000_000, 1_500_000],
                        help="environment steps: one for all agents, or one per agent")
    parser.add_argument("--out", default="benchmarks/runs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--agents", nargs="+", default=["relational", "simplicial"])
    parser.add_argument("--eval-episodes", type=int, default=1000,
                        help="episodes to evaluate each final checkpoint on (sampled and greedy)")
    args = parser.parse_args(argv)
    if len(args.stop_timesteps) not in (1, len(args.agents)):
        parser.error(f"--stop-timesteps takes 1 or {len(args.agents)} values (one per agent), "
                     f"got {len(args.stop_timesteps)}.")
    stop_timesteps = dict(zip(args.agents, args.stop_timesteps * len(args.agents)
                              if len(args.stop_timesteps) == 1 else args.stop_timesteps))

    import ray

    from keras_simplicial.agents.config import PRESETS
    from keras_simplicial.agents.plots import plot_training_curves
    from keras_simplicial.agents.train import train

    easy = PRESETS["easy"]
    out = Path(args.out) / time.strftime("learning-%Y%m%d-%H%M%S")
    results = {}
    for agent in args.agents:
        summary = train(easy["env"], agent, out=out / agent,
                        stop_timesteps=stop_timesteps[agent], env_config=easy["env_config"],
                        overrides=easy["overrides"],
                        num_env_runners=1, num_envs_per_env_runner=32, seed=args.seed,
                        checkpoint_every=25, progress="plain")
        ray.shutdown()
        results[agent] = {**summarise(summary.run_dir), "run_dir": summary.run_dir,
                          "evaluations": evaluate_checkpoints(summary, args.eval_episodes)}
    plot_training_curves([out / agent for agent in args.agents], out / "learning_curves.png")
    baseline = random_policy_win_rate(easy["env"], easy["env_config"])
    report = {"preset": easy, "random_policy_win_rate": baseline,
              "stop_timesteps": stop_timesteps, "seed": args.seed, "agents": results}
    (out / "learning_curve.json").write_text(json.dumps(report, indent=2) + "\n")

    print(f"\n{'agent':<12}{'win start':>10}{'win end':>9}{'to 0.5':>10}{'to 0.8':>10}"
          f"{'frames/s':>10}")
    for agent, r in results.items():
        print(f"{agent:<12}{r['win_rate_start']:>10.2f}{r['win_rate_end']:>9.2f}"
              f"{str(r['steps_to_0.5']):>10}{str(r['steps_to_0.8']):>10}"
              f"{r['median_frames_per_s']:>10.0f}")
    print(f"{'random':<12}{baseline:>10.2f}{baseline:>9.2f}   (uniformly random actions)")
    print(f"\n{'checkpoint':<32}{'sampled':>9}{'greedy':>9}   ({args.eval_episodes} episodes each)")
    for agent, r in results.items():
        for which, evaluation in r["evaluations"].items():
            name = f"{agent} {which} ({Path(evaluation['checkpoint']).name})"
            print(f"{name:<32}{evaluation['sampled']['win_rate']:>9.3f}"
                  f"{evaluation['greedy']['win_rate']:>9.3f}")
    print(f"\nWrote {out / 'learning_curves.png'} and {out / 'learning_curve.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
