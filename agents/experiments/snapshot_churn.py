"""How far a run's training win rate is from what its weights play at any one moment.

Restores a run's checkpoint (weights, optimizer state, counters), trains on for `--iterations`
iterations as `train` would, and after each one plays the weights of that moment on
`--episodes` fresh boards, sampled and greedily. Nothing is written to the run directory.

    .venv/bin/python studies/easy-recipe/snapshot_churn.py RUN_DIR [--checkpoint CKPT] \
        [--iterations 25]

A training win rate averages the episodes of many versions of the weights (the learner updates
them while the boards play); when the snapshots' win rates jump between iterations while the
training win rate stays high, the policy churns, and the checkpoint a run saves is a lottery
(docs/benchmarks.md, "Snapshots churn").
"""

import argparse
import os
import statistics

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a run directory written by `keras-simplicial train`")
    parser.add_argument("--checkpoint", default=None, help="default: the run's latest")
    parser.add_argument("--iterations", type=int, default=25)
    parser.add_argument("--episodes", type=int, default=128)
    args = parser.parse_args(argv)
    if args.iterations < 1 or args.episodes < 1:
        parser.error("--iterations and --episodes must be >= 1")

    import numpy as np
    import ray

    from keras_simplicial.agents.analysis.evaluation import policy_logits
    from keras_simplicial.agents.rollout import episode_outcomes
    from keras_simplicial.agents.training.metric_rows import metrics_row
    from keras_simplicial.agents.training.rllib.results import old_stack_iteration
    from keras_simplicial.agents.training.rllib.trainer import build_algorithm, start_ray
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.run_directory import RunDirectory

    run = RunDirectory(args.run_dir)
    arguments = RunArguments.read(run.run_file)
    checkpoint = args.checkpoint or run.latest_checkpoint()
    if checkpoint is None:
        parser.error(f"no checkpoint in {run.checkpoints_dir}")
    start_ray(num_env_runners=arguments.num_env_runners)
    algorithm = build_algorithm(arguments, checkpoint)
    policy = algorithm.get_policy()

    def snapshot_win_rate(greedy):
        outcomes = episode_outcomes(
            policy_logits(policy),
            arguments.env,
            arguments.env_config,
            args.episodes,
            num_envs=min(64, args.episodes),
            seed=1,
            greedy=greedy,
        )
        return float(np.mean([outcome.won for outcome in outcomes]))

    print(f"{arguments.agent} agent, {checkpoint}")
    print("iteration  steps    training win rate  snapshot sampled  snapshot greedy")
    training, sampled, greedy = [], [], []
    try:
        for _ in range(args.iterations):
            row = metrics_row(old_stack_iteration(algorithm.train()), 0.0)
            training.append(row["win_rate"] if row["win_rate"] != "" else float("nan"))
            sampled.append(snapshot_win_rate(False))
            greedy.append(snapshot_win_rate(True))
            print(
                f"{row['training_iteration']:9d}  {row['timesteps']:7,d}  {training[-1]:17.3f}"
                f"  {sampled[-1]:16.3f}  {greedy[-1]:15.3f}",
                flush=True,
            )
    finally:
        algorithm.stop()
        ray.shutdown()
    for name, values in (("training", training), ("sampled", sampled), ("greedy", greedy)):
        finite = [v for v in values if v == v]
        print(
            f"{name:>8}: mean {statistics.mean(finite):.3f}, min {min(finite):.3f}, "
            f"iterations >= 0.99: {sum(v >= 0.99 for v in finite)}/{len(finite)}"
        )


if __name__ == "__main__":
    main()
