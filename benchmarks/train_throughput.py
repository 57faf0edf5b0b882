"""Environment frames per second of IMPALA training, relational vs simplicial agent, one run.

    .venv/bin/python benchmarks/train_throughput.py [--seconds 60] [--rounds 2]

Both agents train with the paper's IMPALA settings (Table 1: unroll 40, batch 1280) on bridge
BoxWorld with the embedded local Ray: one env runner stepping `--num-envs` environments, the learner
in the driver. The agents take turns (relational, simplicial, relational, ...) so that both see the
same machine load; each turn warms up (XLA/tf.function tracing, the first batches) and then counts
the environment steps sampled and trained over `--seconds`. Reported: median frames/s of each
agent and the simplicial/relational ratio (the paper: 1.4e4 / 1.9e4 = 0.74).
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


def measure(agent, seconds, num_envs, warmup_s, jit_compile=True):
    from keras_simplicial.agents.train import algorithm_config, environment_steps

    arguments = {"env": "BridgeBoxWorld-v0", "agent": agent, "env_config": {},
                 "model_overrides": {"jit_compile": jit_compile},
                 "overrides": {"min_time_s_per_iteration": 2},
                 "num_env_runners": 1, "num_envs_per_env_runner": num_envs, "seed": 0}
    algorithm = algorithm_config(arguments).build_algo()
    try:
        started = time.time()
        while time.time() - started < warmup_s:
            algorithm.train()
        sampled_0, trained_0 = environment_steps(algorithm), trained_steps(algorithm)
        started = time.time()
        while time.time() - started < seconds:
            algorithm.train()
        elapsed = time.time() - started
        return {"sampled_fps": (environment_steps(algorithm) - sampled_0) / elapsed,
                "trained_fps": (trained_steps(algorithm) - trained_0) / elapsed}
    finally:
        algorithm.stop()


def trained_steps(algorithm):
    return int(algorithm._counters.get("num_env_steps_trained", 0))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measured time per turn")
    parser.add_argument("--warmup", type=float, default=30.0, help="warm-up time per turn")
    parser.add_argument("--rounds", type=int, default=2, help="turns per agent")
    parser.add_argument("--num-envs", type=int, default=32, help="environments per env runner")
    parser.add_argument("--no-jit", action="store_true",
                        help="run the agent models without XLA (custom_model_config jit_compile)")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)

    from keras_simplicial.agents.train import start_ray

    start_ray(num_env_runners=1)
    turns = {"relational": [], "simplicial": []}
    for round_index in range(args.rounds):
        for agent in ("relational", "simplicial"):
            result = measure(agent, args.seconds, args.num_envs, args.warmup,
                             jit_compile=not args.no_jit)
            turns[agent].append(result)
            print(f"round {round_index + 1} {agent:<10}  sampled {result['sampled_fps']:8.1f}  "
                  f"trained {result['trained_fps']:8.1f} frames/s", flush=True)

    summary = {agent: {key: statistics.median(t[key] for t in results)
                       for key in ("sampled_fps", "trained_fps")}
               for agent, results in turns.items()}
    ratio = {key: summary["simplicial"][key] / summary["relational"][key]
             for key in ("sampled_fps", "trained_fps")}
    print(f"\nmedian frames/s over {args.rounds} turns of {args.seconds:.0f} s, "
          f"{os.cpu_count()} CPUs, 1 env runner x {args.num_envs} envs, "
          f"XLA {'off' if args.no_jit else 'on'}")
    print(f"{'':<12}{'sampled':>10}{'trained':>10}")
    for agent in ("relational", "simplicial"):
        print(f"{agent:<12}{summary[agent]['sampled_fps']:>10.1f}"
              f"{summary[agent]['trained_fps']:>10.1f}")
    print(f"{'ratio s/r':<12}{ratio['sampled_fps']:>10.3f}{ratio['trained_fps']:>10.3f}"
          "   (paper 0.74, target >= 0.9)")
    if args.json:
        with open(args.json, "w") as stream:
            json.dump({"turns": turns, "median": summary, "ratio": ratio, "args": vars(args)},
                      stream, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
