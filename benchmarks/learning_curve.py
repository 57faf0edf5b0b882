"""Learning is shown, not assumed: both agents trained on an easy bridge BoxWorld, curves recorded.

    .venv/bin/python benchmarks/learning_curve.py [--stop-timesteps 600000] [--out benchmarks/runs]

Trains the relational and then the simplicial agent with the same settings as `make train` (the
paper's IMPALA hyperparameters, one env runner on this machine) and writes, under `--out`:
each agent's run directory (metrics.csv, TensorBoard events, checkpoints), `learning_curves.png`
(fraction solved against environment steps, both agents) and `learning_curve.json` (the win rate at
the start and the end of training, and the steps each agent needed to reach 0.5 and 0.8).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

# The easy configuration of `make train`: bridge BoxWorld on the smallest board that holds a
# two-key puzzle with a bridge (5 x 6 plus the inventory column), solution length 1, a bridge in
# half of the episodes, and a cap of 50 steps so that wandering counts as a loss.
EASY_ENV_CONFIG = {"rows": 5, "cols": 6, "max_solution_length": 1, "max_steps": 50}


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stop-timesteps", type=int, default=600_000)
    parser.add_argument("--out", default="benchmarks/runs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--agents", nargs="+", default=["relational", "simplicial"])
    args = parser.parse_args(argv)

    import ray

    from keras_simplicial.agents.plots import plot_training_curves
    from keras_simplicial.agents.train import train

    out = Path(args.out) / time.strftime("learning-%Y%m%d-%H%M%S")
    results = {}
    for agent in args.agents:
        summary = train("BridgeBoxWorld-v0", agent, out=out / agent,
                        stop_timesteps=args.stop_timesteps, env_config=EASY_ENV_CONFIG,
                        num_env_runners=1, num_envs_per_env_runner=32, seed=args.seed,
                        checkpoint_every=25, progress="plain")
        ray.shutdown()
        results[agent] = {**summarise(summary.run_dir), "run_dir": summary.run_dir}
    plot_training_curves([out / agent for agent in args.agents], out / "learning_curves.png")
    report = {"env": "BridgeBoxWorld-v0", "env_config": EASY_ENV_CONFIG,
              "stop_timesteps": args.stop_timesteps, "seed": args.seed, "agents": results}
    (out / "learning_curve.json").write_text(json.dumps(report, indent=2) + "\n")

    print(f"\n{'agent':<12}{'win start':>10}{'win end':>9}{'to 0.5':>10}{'to 0.8':>10}"
          f"{'frames/s':>10}")
    for agent, r in results.items():
        print(f"{agent:<12}{r['win_rate_start']:>10.2f}{r['win_rate_end']:>9.2f}"
              f"{str(r['steps_to_0.5']):>10}{str(r['steps_to_0.8']):>10}"
              f"{r['median_frames_per_s']:>10.0f}")
    print(f"\nWrote {out / 'learning_curves.png'} and {out / 'learning_curve.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
