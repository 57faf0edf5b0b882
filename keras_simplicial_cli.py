"""`keras-simplicial`: train, evaluate, plot and play from the command line.

    keras-simplicial train --run IMPALA --env BridgeBoxWorld-v0 --agent simplicial --out runs/a
    keras-simplicial evaluate runs/a --episodes 1000
    keras-simplicial plot runs/a runs/b --out curves.png
    keras-simplicial summary runs/a --every 1000000                     # why episodes end, per type
    keras-simplicial play --env BridgeBoxWorld-v0 --seed 3
    keras-simplicial visualize runs/a --seed 3 --step 18 --gif
    keras-simplicial explain runs/a --seed 3
    keras-simplicial probe runs/a --episodes 500
    keras-simplicial inventory runs/a                                   # does it read held keys?
    keras-simplicial policy-map runs/a --seed 0
    keras-simplicial imitate --preset bridge-medium --agent relational
    keras-simplicial dagger --agent simplicial --seed 1 --out runs/dagger-s1  # supervised, DAgger
    keras-simplicial plot-types a.json b.json c.json --types 1,1,2 2,2,4
    keras-simplicial reproduce --preset bridge-small --seeds 1 2 3     # the paper's comparison
    keras-simplicial sweep --preset easy --seeds 1 2 3 4 5             # learning over seeds

`train` mirrors the old `rllib train` command (RLlib 2.60 no longer ships one). Bad input ends the
program with exit status 2 and one line naming the problem, not a traceback (set
KERAS_SIMPLICIAL_DEBUG=1 to see the traceback).

This module holds the commands' arguments; what each command does is in
`keras_simplicial.agents.commands`, whose import loads Keras and TensorFlow (seconds), except for
`play`, which needs the environments only (`LIGHT_COMMANDS`). The module lives outside the
`keras_simplicial` package so that `--help` and argument errors answer at once: only the command
that runs imports what it needs. TensorFlow's C++ log lines are kept quiet unless `--verbose`.
"""

import argparse
import contextlib
import json
import os
import sys

# argparse needs these before anything heavy is imported, so they repeat facts whose home is in
# the package (tests/agents/test_cli.py checks that they match): the ids of keras_simplicial.envs
# (ENV_IDS), the agents (AGENT_KINDS), the presets (PRESETS), the samplers and the run defaults
# (run_arguments.py), the progress displays (progress.py) and the sequent styles (envs.logic).
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
RUN_CHOICES = ("IMPALA",)
ENV_CHOICES = ("BridgeBoxWorld-v0", "BoxWorld-v0")
AGENT_CHOICES = ("relational", "simplicial")
PRESET_CHOICES = ("paper", "easy", "bridge-small", "bridge-medium")
SAMPLER_CHOICES = ("batched", "rllib")
DEFAULT_SAMPLER = "batched"
DEFAULT_NUM_ENV_RUNNERS = 0
DEFAULT_NUM_ENVS_PER_ENV_RUNNER = 64
DEFAULT_CHECK_EPISODES = 128
PROGRESS_CHOICES = ("auto", "rich", "plain", "none")
STYLE_CHOICES = ("unicode", "ascii", "latex")


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and a pointer to --help), not the usage text."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parse_json_object(text, argument):
    """Parses a JSON object given on the command line, naming `argument` when it is malformed."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{argument} is not valid JSON ({error.msg} at position {error.pos}): {text!r}"
        ) from None
    if not isinstance(value, dict):
        raise ValueError(f"{argument} must be a JSON object like '{{\"lr\": 1e-4}}', got {text!r}")
    return value


def _json_object(argument):
    def parse(text):
        try:
            return parse_json_object(text, argument)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _positive_int(text):
    try:
        value = int(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def build_parser():
    parser = OneLineErrorParser(
        prog="keras-simplicial",
        description="The 2-simplicial Transformer: train, evaluate and inspect BoxWorld agents.",
    )
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=OneLineErrorParser
    )

    train = commands.add_parser("train", help="train an agent with IMPALA on Ray RLlib")
    train.add_argument(
        "--run",
        default="IMPALA",
        choices=RUN_CHOICES,
        help="the RLlib algorithm (default: IMPALA, as in the paper)",
    )
    train.add_argument(
        "--preset",
        default="paper",
        choices=PRESET_CHOICES,
        help="starting point: 'paper' (bridge BoxWorld, Table 1); 'easy' "
        "(BoxWorld on a 3 x 6 board, one key and the Gem, 30 steps, smaller "
        "batches; what `make train` runs); 'bridge-small' (5 x 6, solution length 1, "
        "40 steps); 'bridge-medium' (7 x 6, solution lengths 1-2, no step limit); "
        "--env-config and --config add to it",
    )
    train.add_argument(
        "--env",
        default=None,
        choices=ENV_CHOICES,
        help="default: the preset's (paper: BridgeBoxWorld-v0)",
    )
    train.add_argument("--agent", default="simplicial", choices=AGENT_CHOICES)
    train.add_argument(
        "--config",
        type=_json_object("--config"),
        default={},
        help="JSON object of IMPALAConfig overrides on top of the preset's, e.g. "
        '\'{"lr": 1e-4, "train_batch_size": 640}\'; unknown keys and values outside their '
        "range (lr > 0, gamma in (0, 1], sizes >= 1, ...: impala.CONFIG_RANGES) are refused before "
        "anything starts; an lr given without lr_schedule replaces the preset's schedule too",
    )
    train.add_argument(
        "--env-config",
        type=_json_object("--env-config"),
        default={},
        help="JSON object of environment arguments, e.g. '{\"max_solution_length\": 1}'",
    )
    train.add_argument(
        "--model-config",
        type=_json_object("--model-config"),
        default={},
        help="JSON object of architecture overrides, e.g. '{\"num_heads\": 4}' (ranges checked: "
        "architecture.MODEL_RANGES), and jit_compile (default true: the model runs as one XLA "
        "computation; false for TensorFlow's graph executor)",
    )
    train.add_argument(
        "--stop-timesteps",
        type=_positive_int,
        default=5_500_000_000,
        help="environment steps to train for (default: the paper's 5.5e9)",
    )
    train.add_argument(
        "--stop-seconds", type=float, default=None, help="also stop after this much wall-clock time"
    )
    train.add_argument(
        "--num-env-runners",
        type=_non_negative_int,
        default=DEFAULT_NUM_ENV_RUNNERS,
        help="rollout worker processes (default: %(default)s, the driver samples "
        "beside the learner thread: fastest on a few cores; on a cluster, one "
        "per CPU)",
    )
    train.add_argument(
        "--num-envs-per-env-runner",
        type=_positive_int,
        default=DEFAULT_NUM_ENVS_PER_ENV_RUNNER,
        help="boards each runner steps as one batch (default: %(default)s)",
    )
    train.add_argument(
        "--sampler",
        default=DEFAULT_SAMPLER,
        choices=SAMPLER_CHOICES,
        help="'batched' (default): each env runner steps its boards as one batch; "
        "'rllib': RLlib's per-env sampler (slower on small boards, runs every "
        "RLlib episode callback)",
    )
    train.add_argument("--seed", type=int, default=None)
    train.add_argument(
        "--out", default=None, help="run directory (default: runs/<agent>-<env>-<time>)"
    )
    train.add_argument(
        "--resume", action="store_true", help="continue the run in --out from its last checkpoint"
    )
    train.add_argument(
        "--address",
        default=None,
        help="join the Ray cluster at this address (default: start a local Ray)",
    )
    train.add_argument(
        "--checkpoint-every",
        type=_positive_int,
        default=10,
        help="iterations between checkpoints (default: 10)",
    )
    train.add_argument(
        "--check-episodes",
        type=_non_negative_int,
        default=DEFAULT_CHECK_EPISODES,
        metavar="EPISODES",
        help="greedy episodes each checkpoint's saved weights play; the best checkpoint is the "
        f"one that wins most (default: {DEFAULT_CHECK_EPISODES}; 0: the best by training win "
        "rate)",
    )
    train.add_argument(
        "--evaluate",
        type=_non_negative_int,
        default=0,
        metavar="EPISODES",
        help="after training, evaluate the final checkpoint on this many episodes",
    )
    train.add_argument("--progress", default="auto", choices=PROGRESS_CHOICES)

    evaluate = commands.add_parser("evaluate", help="win rates per puzzle type of a checkpoint")
    evaluate.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    evaluate.add_argument("--episodes", type=_positive_int, default=1000)
    evaluate.add_argument(
        "--env",
        default=None,
        choices=ENV_CHOICES,
        help="default: the environment the run trained on",
    )
    evaluate.add_argument(
        "--env-config",
        type=_json_object("--env-config"),
        default=None,
        help="JSON object of environment arguments, merged over the run's "
        "(e.g. '{\"min_solution_length\": 2}')",
    )
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--num-envs", type=_positive_int, default=32)
    evaluate.add_argument(
        "--max-episode-steps",
        type=_positive_int,
        default=None,
        help="the step limit of an episode (default: the run's max_steps, else 500)",
    )
    evaluate.add_argument("--greedy", action="store_true", help="take the most likely action")
    evaluate.add_argument(
        "--output", default=None, help="JSON report path (default: <run>/evaluation.json)"
    )

    plot = commands.add_parser("plot", help="training curves of one or more runs")
    plot.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    plot.add_argument("--out", default="training_curves.png", help="PNG or PDF path")
    plot.add_argument("--per-run", action="store_true", help="add one panel per run")
    plot.add_argument(
        "--time-adjusted",
        action="store_true",
        help="rescale steps by measured frames/s (Appendix C)",
    )

    summary = commands.add_parser(
        "summary",
        help="a run's training per window of steps (win rate per puzzle type, why episodes "
        "ended) and its saved evaluations, as Markdown tables",
    )
    summary.add_argument("run_dir", metavar="RUN_DIR")
    summary.add_argument(
        "--every",
        type=_positive_int,
        default=1_000_000,
        help="window width in environment steps (default 1000000)",
    )

    visualize = commands.add_parser(
        "visualize", help="attention figures of one episode (Section 6.1), optionally a GIF"
    )
    visualize.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    visualize.add_argument("--seed", type=int, default=0, help="the episode's board (default 0)")
    visualize.add_argument(
        "--step",
        type=int,
        default=None,
        help="the decision to draw, 0-based; negative counts from the end (default: the last)",
    )
    visualize.add_argument(
        "--out", default="attention", help="directory for the figures (default: ./attention)"
    )
    visualize.add_argument(
        "--format",
        nargs="+",
        default=["png"],
        choices=("png", "pdf", "svg"),
        dest="formats",
        help="file formats (default: png)",
    )
    visualize.add_argument(
        "--gif", action="store_true", help="also write the whole episode as an animated GIF"
    )
    visualize.add_argument("--fps", type=float, default=4.0, help="GIF frames per second")
    visualize.add_argument(
        "--sharpen",
        type=float,
        default=1.0,
        help="multiply the virtual entities' logits by this factor (the paper "
        "uses 2 in print; default 1: none)",
    )
    _add_episode_arguments(visualize)

    explain = commands.add_parser(
        "explain",
        help="the proof tree of one episode's behaviour (Appendix B) and the "
        "source/sink rule (Remark B.1) versus what the agent did",
    )
    explain.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    explain.add_argument("--seed", type=int, default=0, help="the episode's board (default 0)")
    explain.add_argument(
        "--style",
        default="unicode",
        choices=STYLE_CHOICES,
        help="notation of the sequents; latex also prints a bussproofs tree",
    )
    _add_episode_arguments(explain)

    probe = commands.add_parser(
        "probe",
        help="logic probe: bridge avoidance when the source/sink rule locates the "
        "bridge versus when it cannot",
    )
    probe.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    probe.add_argument("--episodes", type=_positive_int, default=500)
    probe.add_argument("--seed", type=int, default=0, help="first board seed (default 0)")
    probe.add_argument(
        "--num-envs", type=_positive_int, default=32, help="boards played in lockstep (default 32)"
    )
    probe.add_argument(
        "--board-only",
        action="store_true",
        help="apply the rule to the boxes on the board only, not to held keys",
    )
    probe.add_argument("--output", default=None, help="also write the table as JSON")
    _add_episode_arguments(probe)

    inventory = commands.add_parser(
        "inventory",
        help="does the policy read its inventory? its actions with the held keys hidden or "
        "recoloured, and at the Gem box holding one of its two keys",
    )
    inventory.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    inventory.add_argument("--episodes", type=_positive_int, default=200)
    inventory.add_argument("--seed", type=int, default=0, help="first board seed (default 0)")
    inventory.add_argument(
        "--num-envs", type=_positive_int, default=32, help="boards played in lockstep (default 32)"
    )
    inventory.add_argument(
        "--max-states",
        type=_positive_int,
        default=10_000,
        help="distinct states holding a key probed, at most (default 10000)",
    )
    inventory.add_argument("--output", default=None, help="also write the result as JSON")
    _add_episode_arguments(inventory)

    plot_types = commands.add_parser(
        "plot-types", help="win rate per puzzle type from evaluation reports (Figures 10, 11)"
    )
    plot_types.add_argument(
        "reports",
        nargs="+",
        metavar="EVALUATION",
        help="evaluation.json files (or run directories holding one)",
    )
    plot_types.add_argument(
        "--types",
        nargs="+",
        default=None,
        metavar="A,B,C",
        help="puzzle types to show, e.g. 1,1,2 2,2,4 (default: all)",
    )
    plot_types.add_argument("--out", default="win_rate_per_type.png", help="PNG or PDF path")
    plot_types.add_argument("--title", default=None)

    policy = commands.add_parser(
        "policy-map",
        help="the policy's action probabilities with the player on each free tile "
        "of one board: does it know where it is?",
    )
    policy.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    policy.add_argument("--seed", type=int, default=0, help="the board: reset(seed=...)")
    policy.add_argument(
        "--env-config",
        type=_json_object("--env-config"),
        default=None,
        help="JSON object of environment arguments, merged over the run's "
        "(e.g. '{\"min_solution_length\": 2}')",
    )
    policy.add_argument("--out", default="policy_map.png", help="PNG, PDF or SVG path")

    imitate = commands.add_parser(
        "imitate",
        help="can the agent represent the solution? train it, supervised, on the "
        "shortest-plan player's moves and play it greedily",
    )
    imitate.add_argument("--preset", default="bridge-medium", choices=PRESET_CHOICES)
    imitate.add_argument("--agent", default="relational", choices=AGENT_CHOICES)
    imitate.add_argument(
        "--episodes", type=_positive_int, default=4000, help="demonstration boards (4000)"
    )
    imitate.add_argument("--epochs", type=_positive_int, default=8, help="passes over them (8)")
    imitate.add_argument(
        "--games", type=_positive_int, default=1000, help="fresh boards played greedily (1000)"
    )
    imitate.add_argument(
        "--model-config",
        type=_json_object("--model-config"),
        default={},
        help="JSON object of architecture overrides, as for train",
    )
    imitate.add_argument("--seed", type=int, default=0, help="initialisation and shuffling")
    imitate.add_argument("--output", default=None, help="also write the result here (JSON)")

    dagger = commands.add_parser(
        "dagger",
        help="can the agent hold the plan? tie-aware DAgger: it learns the step-optimal "
        "oracle's moves on the states it reaches itself (resumable)",
        description="Round 0 labels the oracle's own episodes; each later round plays the "
        "learner (greedily and sampled) on fresh boards, labels every state it reaches with the "
        "set of optimal actions, and trains on all labels so far to a plateau. Settings left "
        "out take DaggerConfig's defaults (docs/analysis.md). Writes OUT/policy.keras and "
        "OUT/best/policy.keras, which evaluate, inventory and the figures read.",
    )
    dagger.add_argument("--out", required=True, help="the run directory")
    dagger.add_argument("--resume", action="store_true", help="continue the run in --out")
    dagger.add_argument("--agent", default=None, choices=AGENT_CHOICES)
    dagger.add_argument("--preset", default=None, choices=PRESET_CHOICES)
    dagger.add_argument(
        "--env-config",
        type=_json_object("--env-config"),
        default=None,
        help="JSON object of environment arguments over the preset's",
    )
    dagger.add_argument(
        "--model-config",
        type=_json_object("--model-config"),
        default=None,
        help="JSON object of architecture overrides, as for train",
    )
    dagger.add_argument("--seed", type=int, default=None, help="initialisation, boards, shuffling")
    for flag, what in DAGGER_COUNTS:
        dagger.add_argument(flag, type=_positive_int, default=None, help=what)
    dagger.add_argument(
        "--rounds", type=int, default=None, help="learner rounds after round 0 (0: cloning only)"
    )
    dagger.add_argument("--learning-rate", type=float, default=None, help="Adam's, each round")

    held_keys = commands.add_parser(
        "held-keys",
        help="can the architecture tell which two keys it holds? fresh models trained on "
        "states holding the Gem's two lock colours or one of them, tested on held-out pairs",
    )
    held_keys.add_argument("--agent", default="relational", choices=AGENT_CHOICES)
    held_keys.add_argument("--preset", default="bridge-medium", choices=PRESET_CHOICES)
    held_keys.add_argument(
        "--sizes",
        type=_positive_int,
        nargs="+",
        default=[250, 1000, 4000, 16000],
        help="training-set sizes, a fresh model each (250 1000 4000 16000)",
    )
    held_keys.add_argument(
        "--updates", type=_positive_int, default=3000, help="Adam updates per model (3000)"
    )
    held_keys.add_argument(
        "--model-config",
        type=_json_object("--model-config"),
        default={},
        help="JSON object of architecture overrides, as for train",
    )
    held_keys.add_argument("--seed", type=int, default=0, help="pairs held out, states, models")
    held_keys.add_argument("--output", default=None, help="also write the result here (JSON)")

    reproduce = commands.add_parser(
        "reproduce",
        help="the paper's comparison (Figure 4) at a preset: both agents x seeds trained "
        "(resumable), then the report from the run directories",
        description="Phase 1 trains (or resumes) the relational and the simplicial agent for "
        "every seed, one run at a time; phase 2 writes the report (--doc) and its figures "
        "from the run directories alone. Run it again to continue where it stopped.",
    )
    reproduce.add_argument("--preset", default="bridge-small", choices=PRESET_CHOICES)
    reproduce.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    reproduce.add_argument(
        "--stop-timesteps",
        type=_positive_int,
        default=3_000_000,
        help="steps per run; the preset's learning-rate schedule is stretched to end there",
    )
    reproduce.add_argument(
        "--out", default="benchmarks/results/bridge-small", help="the run directories"
    )
    reproduce.add_argument("--doc", default="docs/reproduction.md", help="the report (Markdown)")
    reproduce.add_argument("--figures", default="docs/figures/reproduction")
    reproduce.add_argument("--eval-episodes", type=_positive_int, default=1000)
    reproduce.add_argument("--probe-episodes", type=_positive_int, default=1000)
    reproduce.add_argument(
        "--report-only", action="store_true", help="skip training; report on the runs there"
    )
    _add_cluster_arguments(reproduce)
    reproduce.add_argument("--checkpoint-every", type=_positive_int, default=5)
    reproduce.add_argument(
        "--throughput-seconds",
        type=float,
        default=60.0,
        help="seconds each agent trains for Appendix C's frames/s; measured once into "
        "OUT/throughput.json, delete it to re-measure",
    )

    sweep = commands.add_parser(
        "sweep",
        help="learning over seeds: agents x seeds trained on a preset (resumable), their "
        "curves and their best and final checkpoints evaluated",
    )
    sweep.add_argument("--preset", default="easy", choices=PRESET_CHOICES)
    sweep.add_argument("--agents", nargs="+", default=list(AGENT_CHOICES), choices=AGENT_CHOICES)
    sweep.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    sweep.add_argument("--stop-timesteps", type=_positive_int, default=600_000)
    sweep.add_argument(
        "--budget",
        type=_positive_int,
        nargs="+",
        default=[],
        help="also stop each run at these step counts and evaluate the best checkpoint so far "
        "(the best 'within N steps'), then go on",
    )
    sweep.add_argument("--out", default="runs/learning-easy", help="the run directories")
    sweep.add_argument(
        "--config",
        type=_json_object("--config"),
        default={},
        help="JSON object of IMPALAConfig overrides on top of the preset's",
    )
    sweep.add_argument(
        "--model-config",
        type=_json_object("--model-config"),
        default={},
        help="JSON object of architecture overrides",
    )
    sweep.add_argument("--sampler", default=DEFAULT_SAMPLER, choices=SAMPLER_CHOICES)
    _add_cluster_arguments(sweep)
    sweep.add_argument("--checkpoint-every", type=_positive_int, default=5)
    sweep.add_argument("--eval-episodes", type=_positive_int, default=1000)
    sweep.add_argument("--markdown", default=None, help="also write the table here")

    play = commands.add_parser(
        "play",
        help="play (bridge) BoxWorld yourself in the terminal",
        description="Arrow keys or h/j/k/l move, ? takes a step of the shortest plan, r draws a "
        "new puzzle, q quits. Without a terminal, keys are read from stdin, e.g. "
        "echo 'l l j q' | keras-simplicial play",
    )
    play.add_argument(
        "--env", default=ENV_CHOICES[0], choices=ENV_CHOICES, help="default: %(default)s"
    )
    play.add_argument("--seed", type=int, default=None, help="seed of the first puzzle")
    play.add_argument(
        "--env-config",
        type=_json_object("--env-config"),
        default={},
        help="JSON object of environment arguments, e.g. '{\"max_solution_length\": 2}'",
    )
    for command in commands.choices.values():
        command.add_argument("--verbose", action="store_true", help="show TensorFlow's log lines")
    return parser


def _add_cluster_arguments(parser):
    parser.add_argument(
        "--address", default=None, help="a running Ray cluster (HOST:PORT) to train on"
    )
    parser.add_argument(
        "--num-env-runners",
        type=_non_negative_int,
        default=DEFAULT_NUM_ENV_RUNNERS,
        help="remote env runners (0: sample in the driver, best on 2 cores)",
    )
    parser.add_argument(
        "--num-envs",
        type=_positive_int,
        default=DEFAULT_NUM_ENVS_PER_ENV_RUNNER,
        help="boards per env runner",
    )


def _add_episode_arguments(parser):
    parser.add_argument(
        "--greedy",
        action="store_true",
        help="take the most likely action (default: sample from the policy)",
    )
    parser.add_argument(
        "--max-steps",
        type=_positive_int,
        default=None,
        help="stop an episode after this many steps (default: the run's max_steps, else 500)",
    )
    parser.add_argument(
        "--env-config",
        type=_json_object("--env-config"),
        default=None,
        help="JSON object of environment arguments, merged over the run's "
        "(e.g. '{\"min_solution_length\": 2}')",
    )


def _play(args):
    from keras_simplicial.envs.play import main as play

    return play(args.env, seed=args.seed, env_config=args.env_config)


# Commands that need the environments only: they run without keras_simplicial.agents, whose import
# loads Keras and TensorFlow.
LIGHT_COMMANDS = {"play": _play}


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        if args.command in LIGHT_COMMANDS:
            return LIGHT_COMMANDS[args.command](args) or 0
        with _tensorflow_start_up_lines(shown=args.verbose):
            from keras_simplicial.agents import commands  # loads Keras and TensorFlow
        return commands.COMMANDS[args.command](args) or 0
    except (ValueError, FileNotFoundError, json.JSONDecodeError) as error:
        if os.environ.get("KERAS_SIMPLICIAL_DEBUG"):
            raise
        print(f"keras-simplicial {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:  # a sweep's run says where it stopped
        detail = f" ({interrupt})" if str(interrupt) else ""
        print(f"keras-simplicial {args.command}: interrupted{detail}", file=sys.stderr)
        return 130


@contextlib.contextmanager
def _tensorflow_start_up_lines(shown):
    """Unless `shown`: TensorFlow's C++ log level 3, and stderr closed while TensorFlow loads.

    Level 3 (fatal only) as in the Ray workers: at level 2 a machine without a GPU still gets
    "failed call to cuInit" as an error line. TensorFlow 2.21 writes its start-up lines (oneDNN,
    CUDA drivers) to file descriptor 2 before it reads its log level, so they are silenced at the
    descriptor while it loads. Python exceptions are unaffected.
    """
    if shown:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
        yield
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
