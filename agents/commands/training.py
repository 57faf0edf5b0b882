"""`keras-simplicial train`: a new run, or `--resume` of one, then its curve and, if asked, its
evaluation; `keras-simplicial export-policy`: a checkpoint's trained policy as Keras weights, what
a finished run keeps once its checkpoints are removed; `keras-simplicial pack-metrics`: a finished
run's metrics.csv gzipped.

The run's own flags (`--env`, `--agent`, `--config`, `--seed`, ...) are generated from the fields
of `RunArguments`; the others say how long and how to run.
"""

from pathlib import Path

from keras_simplicial.agents.commands.arguments import (
    Command,
    add_preset_argument,
    add_run_arguments,
    given_run_arguments,
    non_negative_int,
    positive_int,
)

# The progress displays of training/progress.py and the greedy check's default episodes
# (training/greedy_check.py), repeated here so that `--help` loads neither (a test keeps them
# equal).
PROGRESS_CHOICES = ("auto", "rich", "plain", "none")
DEFAULT_CHECK_EPISODES = 128


def train_arguments(parser):
    parser.add_argument(
        "--run",
        default="IMPALA",
        choices=("IMPALA",),
        help="the algorithm (default: IMPALA, as in the paper; --engine says what trains it)",
    )
    add_preset_argument(parser, default="paper")
    add_run_arguments(parser)
    parser.add_argument(
        "--stop-timesteps",
        type=positive_int,
        default=5_500_000_000,
        help="the run's environment steps in all, a resumed run's included (default: the "
        "paper's 5.5e9)",
    )
    parser.add_argument(
        "--stop-seconds", type=float, default=None, help="also stop after this much wall-clock time"
    )
    parser.add_argument(
        "--out", default=None, help="run directory (default: runs/<agent>-<env>-<time>)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out from its last checkpoint, with its own arguments",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="join the Ray cluster at this address (default: start a local Ray; the keras "
        "engine runs without Ray and refuses it)",
    )
    parser.add_argument(
        "--checkpoint-every",
        type=positive_int,
        default=10,
        help="iterations between checkpoints (default: 10)",
    )
    parser.add_argument(
        "--check-episodes",
        type=non_negative_int,
        default=DEFAULT_CHECK_EPISODES,
        metavar="EPISODES",
        help="greedy episodes each checkpoint's saved weights play; the best checkpoint is the "
        f"one that wins most (default: {DEFAULT_CHECK_EPISODES}; 0: the best by training win "
        "rate)",
    )
    parser.add_argument(
        "--evaluate",
        type=non_negative_int,
        default=0,
        metavar="EPISODES",
        help="after training (not after an interrupt), evaluate the final checkpoint "
        "(evaluation.json), and the best where it is another (evaluation_best.json), on this "
        "many episodes",
    )
    parser.add_argument("--progress", default="auto", choices=PROGRESS_CHOICES)


def run_engine(out):
    """The `engine` of the run in `out` (its run.json, else its newest checkpoint's copy), or
    None where neither reads."""
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.run_directory import RunDirectory

    run = RunDirectory(out)
    candidates = [run.run_file]
    if run.checkpoints_dir.is_dir():
        candidates += [checkpoint / "run.json" for checkpoint in reversed(run.checkpoints())]
    for candidate in candidates:
        try:
            return RunArguments.read(candidate).engine
        except (ValueError, FileNotFoundError):
            continue
    return None


def keras_environment(args):
    """The environment a training command runs in, set before Keras is imported: the Keras
    backend of the run's engine (`Engine.process_backend`: TensorFlow for rllib-old, PyTorch for
    rllib-new; KERAS_BACKEND, else TensorFlow, for keras), read from `--engine`/`--api-stack` or,
    with `--resume`, the run.json of the run it continues."""
    from keras_simplicial.agents.training.engines import ENGINES
    from keras_simplicial.agents.training.run_arguments import with_engine_of_api_stack

    given = {"engine": getattr(args, "engine", None), "api_stack": getattr(args, "api_stack", None)}
    name = with_engine_of_api_stack({k: v for k, v in given.items() if v is not None}).get("engine")
    if getattr(args, "resume", False) and args.out:
        name = run_engine(args.out)
    if name not in ENGINES:
        return {}
    return {"KERAS_BACKEND": ENGINES[name].process_backend()}


def default_out(arguments):
    import time

    env = arguments.env.split("-")[0].lower()
    return f"runs/{arguments.agent}-{env}-{time.strftime('%Y%m%d-%H%M%S')}"


def best_scores(summary):
    """How the best checkpoint played: greedily (its saved weights) and while training."""
    scores = []
    if summary.best_greedy_win_rate is not None:
        scores.append(f"greedy win rate {summary.best_greedy_win_rate:.2f}")
    if summary.best_win_rate is not None:
        scores.append(f"win rate {summary.best_win_rate:.2f} while training")
    return ", ".join(scores)


def train(args):
    from keras_simplicial.agents.analysis.training_curves import plot_training_curves
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.run_directory import RunDirectory
    from keras_simplicial.agents.training.train import train as train_run

    if args.resume and not args.out:
        raise ValueError("--resume needs --out, the run directory to continue.")
    arguments = None
    if not args.resume:
        arguments = RunArguments.from_preset(args.preset, **given_run_arguments(args))
    summary = train_run(
        arguments,
        out=args.out or default_out(arguments),
        stop_timesteps=args.stop_timesteps,
        resume=args.resume,
        address=args.address,
        checkpoint_every=args.checkpoint_every,
        check_episodes=args.check_episodes,
        stop_seconds=args.stop_seconds,
        progress=args.progress,
    )
    plot = RunDirectory(summary.run_dir).plots_dir / "win_rate.png"
    plot_training_curves([summary.run_dir], plot)
    state = "interrupted" if summary.interrupted else "finished"
    print(
        f"\nTraining {state} after {summary.timesteps:,} steps ({summary.iterations} iterations)."
    )
    print(f"  checkpoint:   {summary.checkpoint}")
    if summary.best_checkpoint and summary.best_checkpoint != summary.checkpoint:
        print(f"  best:         {summary.best_checkpoint} ({best_scores(summary)})")
    print(f"  metrics:      {summary.metrics_csv}")
    print(f"  TensorBoard:  tensorboard --logdir {summary.tensorboard_dir}")
    print(f"  plot:         {plot}")
    print(f"  resume with:  keras-simplicial train --resume --out {summary.run_dir}")
    if args.evaluate and not summary.interrupted:
        evaluate_after_training(summary, args.evaluate)
    return 0


def evaluate_after_training(summary, episodes):
    """Evaluates the last checkpoint, and the best one where it is another, on `episodes`."""
    from keras_simplicial.agents.analysis.evaluation import evaluate_checkpoint

    checkpoints = [("last", summary.checkpoint, None)]
    if summary.best_checkpoint and summary.best_checkpoint != summary.checkpoint:
        best_output = Path(summary.run_dir) / "evaluation_best.json"
        checkpoints.append(("best", summary.best_checkpoint, best_output))
    for which, checkpoint, output in checkpoints:
        print(f"\nEvaluating the {which} checkpoint on {episodes} episodes ...")
        report = evaluate_checkpoint(checkpoint, episodes=episodes, output=output)
        print(report.to_markdown())
        print(f"  evaluation:   {report.output}")


def export_policy_arguments(parser):
    parser.add_argument(
        "checkpoint",
        help="a checkpoint directory, or a run directory: its latest checkpoint (--best: its best)",
    )
    parser.add_argument(
        "--best", action="store_true", help="a run directory's best checkpoint (its best.json)"
    )
    parser.add_argument(
        "--out",
        default=None,
        help="the folder to write (default: the run's exported/<checkpoint name>)",
    )


def export_policy(args):
    from keras_simplicial.agents.training.checkpoints import best_checkpoint_of
    from keras_simplicial.agents.training.checkpoints import export_policy as export

    checkpoint = best_checkpoint_of(args.checkpoint) if args.best else args.checkpoint
    print(f"Exported {export(checkpoint, out=args.out)}")
    return 0


def pack_metrics_arguments(parser):
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories to pack")


def pack_metrics(args):
    from keras_simplicial.agents.training.run_directory import RunDirectory

    runs = [RunDirectory(path) for path in args.runs]
    for run in runs:  # all checked before any is packed
        if not run.run_file.is_file():
            raise ValueError(f"RUN_DIR {run.root}: not a run directory (it has no run.json).")
    for run in runs:
        sizes = run.pack_metrics()
        if sizes is None:
            packed = run.packed_metrics_file.is_file()
            print(f"{run.root}: {'already packed' if packed else 'no metrics.csv'}")
        else:
            print(f"{run.packed_metrics_file}: {sizes[0] / 1e6:.2f} MB -> {sizes[1] / 1e6:.2f} MB")
    return 0


COMMANDS = (
    Command(
        "train",
        train_arguments,
        train,
        help="train an agent with IMPALA, on RLlib or the Keras engine (or --resume a run)",
        description="Trains a new run of the preset with the flags given on top (written to "
        "OUT/run.json), or continues the run in --out with --resume (its run.json's arguments; "
        "only how long and how to run come from the command line).",
        environment=keras_environment,
    ),
    Command(
        "export-policy",
        export_policy_arguments,
        export_policy,
        "a checkpoint's trained policy as Keras weights, without RLlib's optimizer state, for "
        "every command that takes a checkpoint",
        description="Writes the agent model's weights (policy.weights.h5), what they are "
        "(policy.json: the checkpoint, its iteration and steps, the engine), a copy of the run's "
        "run.json and a manifest to one folder, by default OUT/exported/<checkpoint name> in the "
        "checkpoint's run. evaluate, visualize, explain, probe, inventory and policy-map take "
        "that folder where they take a checkpoint; sweep, reproduce and the studies' scripts "
        "that take a run's best checkpoint play it in place of a checkpoint that is gone.",
    ),
    Command(
        "pack-metrics",
        pack_metrics_arguments,
        pack_metrics,
        "gzip finished runs' metrics.csv (about a third of the size) for a repository's results",
        description="Replaces each run's metrics.csv with metrics.csv.gz, the same bytes gzipped. "
        "Every command and report reads either; train --resume unpacks it before the run goes on. "
        "A damaged metrics.csv is named and left as it is.",
        extra=None,
    ),
)
