"""The commands that run experiments of many runs or rounds, each resumable: `sweep` (learning over
seeds), `reproduce` (the paper's comparison and its report) and `dagger` (supervised rounds).

`sweep` and `reproduce` take the flags of every `RunArguments` field but the agent and the seed,
which they vary, generated as for `train`.
"""

from pathlib import Path

from keras_simplicial.agents.commands.arguments import (
    PRESET_CHOICES,
    Command,
    add_address_argument,
    add_preset_argument,
    add_run_arguments,
    given_run_arguments,
    json_object,
    positive_int,
)
from keras_simplicial.agents.commands.training import keras_environment
from keras_simplicial.agents.imitation.colour_permutation import AUGMENTATIONS
from keras_simplicial.agents.training.run_arguments import AGENTS

# The settings of `keras-simplicial dagger` given as counts, by flag (DaggerConfig's fields, whose
# defaults apply when a flag is left out).
DAGGER_COUNTS = (
    ("--oracle-episodes", "boards the oracle plays in round 0"),
    ("--episodes-per-round", "boards the learner plays each round, half greedy, half sampled"),
    ("--horizon", "the most moves of an episode played for labels"),
    ("--max-labelled-moves", "no new round once this many moves are labelled"),
    ("--max-epochs", "epochs of a round at most"),
    ("--batch-size", "Adam's minibatch"),
    ("--validation-episodes", "greedy games after each round"),
)
# What sweeps and comparisons vary run by run: not flags of theirs.
VARIED = ("agent", "seed")


def dagger_arguments(parser):
    parser.add_argument("--out", required=True, help="the run directory")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out")
    parser.add_argument("--agent", default=None, choices=AGENTS)
    parser.add_argument("--preset", default=None, choices=PRESET_CHOICES)
    parser.add_argument(
        "--env-config",
        type=json_object("--env-config"),
        default=None,
        help="JSON object of environment arguments over the preset's",
    )
    parser.add_argument(
        "--model-config",
        type=json_object("--model-config"),
        default=None,
        help="JSON object of architecture overrides merged over the preset's model, or the name "
        "of a model config, as for train",
    )
    parser.add_argument("--seed", type=int, default=None, help="initialisation, boards, shuffling")
    for flag, what in DAGGER_COUNTS:
        parser.add_argument(flag, type=positive_int, default=None, help=what)
    parser.add_argument(
        "--rounds", type=int, default=None, help="learner rounds after round 0 (0: cloning only)"
    )
    parser.add_argument("--learning-rate", type=float, default=None, help="Adam's, each round")
    parser.add_argument(
        "--labels-from",
        default=None,
        metavar="RUN",
        help="round 0 trains on the labelled episodes of this DAgger run instead of new oracle "
        "games (same environment)",
    )
    parser.add_argument(
        "--labels-share",
        type=float,
        default=None,
        help="the share of --labels-from's episodes taken, in (0, 1] (default 1)",
    )
    parser.add_argument(
        "--augment",
        default=None,
        choices=AUGMENTATIONS,
        help="train on the labelled states as they are (none, the default) or on each with its "
        "key colours permuted afresh in every batch (colour-permutations: the same optimal moves)",
    )


def given_dagger_settings(args):
    """{field: value} of the `DaggerConfig` settings given in `args` (those left out are None)."""
    import dataclasses

    from keras_simplicial.agents.imitation.dagger_config import DaggerConfig

    values = {**vars(args), "model_overrides": args.model_config}
    return {
        field.name: values[field.name]
        for field in dataclasses.fields(DaggerConfig)
        if values.get(field.name) is not None
    }


def dagger(args):
    import dataclasses

    from keras_simplicial.agents.imitation.dagger import DaggerConfig, run_dagger
    from keras_simplicial.agents.imitation.dagger_directory import DaggerDirectory

    given = given_dagger_settings(args)
    directory = DaggerDirectory(args.out)
    if args.resume:
        config = directory.read_config()
        extendable = {"rounds", "max_labelled_moves"}
        fixed = sorted(name for name in given if name not in extendable)
        if fixed:
            raise ValueError(
                f"--resume continues the run as it was set up; only --rounds and "
                f"--max-labelled-moves may change, got {', '.join(fixed)}."
            )
        if given:
            config = dataclasses.replace(config, **given)
            directory.extend(config)
    elif directory.exists:
        raise ValueError(
            f"--out {args.out} already holds a DAgger run: pass --resume to continue it."
        )
    else:
        config = DaggerConfig.from_preset(**given)
    history = run_dagger(config, args.out)
    best = history.get("best")
    print(
        f"DAgger run in {args.out}: latest model {directory.policy_file}"
        + (f", best (round {best['round']}) {directory.best_dir}" if best else "")
    )
    return 0


def sweep_arguments(parser):
    add_preset_argument(parser, default="easy")
    parser.add_argument("--agents", nargs="+", default=list(AGENTS), choices=AGENTS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--stop-timesteps", type=positive_int, default=600_000)
    parser.add_argument(
        "--budget",
        type=positive_int,
        nargs="+",
        default=[],
        help="also stop each run at these step counts and evaluate the best checkpoint so far "
        "(the best 'within N steps'), then go on; budgets at or above --stop-timesteps are "
        "the run's end",
    )
    parser.add_argument("--out", default="runs/learning-easy", help="the run directories")
    add_run_arguments(parser, exclude=VARIED)
    add_address_argument(parser)
    parser.add_argument("--checkpoint-every", type=positive_int, default=5)
    parser.add_argument("--eval-episodes", type=positive_int, default=1000)
    parser.add_argument("--markdown", default=None, help="also write the table here")


def sweep(args):
    from keras_simplicial.agents.atomic_files import atomic_write_text
    from keras_simplicial.agents.experiments.learning import SweepOptions, learning_sweep
    from keras_simplicial.agents.training.run_arguments import RunArguments

    options = SweepOptions(
        preset=args.preset,
        agents=tuple(args.agents),
        seeds=tuple(args.seeds),
        stop_timesteps=args.stop_timesteps,
        budgets=tuple(args.budget),
        out=args.out,
        arguments=RunArguments.from_preset(args.preset, **given_run_arguments(args)),
        checkpoint_every=args.checkpoint_every,
        eval_episodes=args.eval_episodes,
        address=args.address,
    )
    report = learning_sweep(options)
    text = report.to_markdown()
    print("\n" + text)
    if args.markdown:
        atomic_write_text(args.markdown, text + "\n")
    out = Path(options.out)
    print(f"\nWrote {out / 'learning_curves.png'} and {out / 'learning_curve.json'}")
    return 0


def reproduce_arguments(parser):
    add_preset_argument(parser, default="bridge-small")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[1, 2, 3], help="at least 2 seeds per agent"
    )
    parser.add_argument(
        "--stop-timesteps",
        type=positive_int,
        default=3_000_000,
        help="steps per run; the preset's learning-rate schedule is stretched to end there",
    )
    parser.add_argument(
        "--out", default=None, help="the run directories (default: runs/reproduce-<preset>)"
    )
    parser.add_argument(
        "--doc", default=None, help="the report, Markdown (default: OUT/reproduction.md)"
    )
    parser.add_argument(
        "--figures", default=None, help="the report's figures (default: OUT/figures)"
    )
    parser.add_argument("--eval-episodes", type=positive_int, default=1000)
    parser.add_argument("--probe-episodes", type=positive_int, default=1000)
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="skip training; report on the runs there (Appendix C's frames/s are still "
        "measured where OUT/throughput.json is missing or was measured for another setting)",
    )
    add_run_arguments(parser, exclude=VARIED)
    add_address_argument(parser)
    parser.add_argument("--checkpoint-every", type=positive_int, default=5)
    parser.add_argument(
        "--throughput-seconds",
        type=float,
        default=60.0,
        help="seconds each agent trains, after up to 20 s of warm-up, for Appendix C's "
        "frames/s, on the runs' engine; measured into OUT/throughput.json and again when the "
        "preset, engine, cluster, layout or masking differ (delete it to re-measure)",
    )


def reproduce(args):
    from keras_simplicial.agents.experiments.reproduce import (
        ReproduceOptions,
        comparison_arguments,
    )
    from keras_simplicial.agents.experiments.reproduce import reproduce as run

    run(
        ReproduceOptions(
            preset=args.preset,
            seeds=tuple(args.seeds),
            stop_timesteps=args.stop_timesteps,
            out=args.out,
            doc=args.doc,
            figures=args.figures,
            eval_episodes=args.eval_episodes,
            probe_episodes=args.probe_episodes,
            report_only=args.report_only,
            address=args.address,
            arguments=comparison_arguments(
                args.preset, args.stop_timesteps, **given_run_arguments(args)
            ),
            checkpoint_every=args.checkpoint_every,
            throughput_seconds=args.throughput_seconds,
        )
    )
    return 0


COMMANDS = (
    Command(
        "sweep",
        sweep_arguments,
        sweep,
        "learning over seeds: agents x seeds trained on a preset (resumable), their "
        "curves and their best and final checkpoints evaluated",
        environment=keras_environment,
    ),
    Command(
        "reproduce",
        reproduce_arguments,
        reproduce,
        "the paper's comparison (Figure 3) at a preset: both agents x seeds trained "
        "(resumable), then the report from the run directories",
        description="Phase 1 trains (or resumes) the relational and the simplicial agent for "
        "every seed, one run at a time; phase 2 writes the report (--doc) and its figures "
        "from the run directories alone. Run it again to continue where it stopped.",
        environment=keras_environment,
    ),
    Command(
        "dagger",
        dagger_arguments,
        dagger,
        "can the agent hold the plan? tie-aware DAgger: it learns the step-optimal "
        "oracle's moves on the states it reaches itself (resumable)",
        description="Round 0 labels the oracle's own episodes; each later round plays the "
        "learner (greedily and sampled) on fresh boards, labels every state it reaches with the "
        "set of optimal actions, and trains on all labels so far to a plateau. Settings left "
        "out take DaggerConfig's defaults (docs/analysis.md). Writes OUT/policy.keras and "
        "OUT/best/policy.keras, which evaluate, inventory and the figures read.",
    ),
)
