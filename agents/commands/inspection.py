"""The commands that look at an agent: `evaluate` and the looks inside (`plot`, `summary`,
`visualize`, `explain`, `probe`, `inventory`, `plot-types`, `policy-map`, `errors`) and the
questions asked of fresh models (`imitate`, `held-keys`, `held-keys-budget`).

What they print and what `--output` writes is one analysis result (`analysis/results.py`): its
`to_markdown()` and its `to_dict()`.
"""

from pathlib import Path

from keras_simplicial.agents.commands.arguments import (
    Command,
    add_agent_argument,
    add_env_config_argument,
    add_model_config_argument,
    add_preset_argument,
    positive_int,
    save_result,
)
from keras_simplicial.agents.training.run_arguments import ENVS

# The sequent styles of keras_simplicial.envs.logic (STYLES), repeated so that `--help` loads no
# gymnasium (a test keeps them equal).
STYLE_CHOICES = ("unicode", "ascii", "latex")


def add_checkpoint_argument(parser):
    parser.add_argument(
        "checkpoint",
        help="a checkpoint directory, a run directory (its latest), an exported policy "
        "(export-policy) or a Keras policy (a DAgger run's policy.keras or its folder)",
    )


def add_episode_arguments(parser):
    """How the episodes of a look inside are played: greedily or sampled, how long, on what."""
    parser.add_argument(
        "--greedy",
        action="store_true",
        help="take the most likely action (default: sample from the policy)",
    )
    parser.add_argument(
        "--max-steps",
        type=positive_int,
        default=None,
        help="stop an episode after this many steps (default: the run's max_steps, else 500)",
    )
    add_env_config_argument(parser)


def add_output_argument(parser, what="the result"):
    parser.add_argument("--output", default=None, help=f"also write {what} here (JSON)")


def load_agent(args):
    """(agent, env id, env config) of the checkpoint of `args`: its run's env, with `--env-config`
    merged over the run's env config."""
    from keras_simplicial.agents.training.checkpoints import (
        check_observation_shape,
        environment_of,
        load_attention_agent,
    )

    agent, arguments = load_attention_agent(args.checkpoint)
    env_id, env_config = environment_of(arguments, None, args.env_config)
    check_observation_shape(agent.observation_shape, env_id, env_config)
    return agent, env_id, env_config


def evaluate_arguments(parser):
    add_checkpoint_argument(parser)
    parser.add_argument("--episodes", type=positive_int, default=1000)
    parser.add_argument(
        "--env", default=None, choices=ENVS, help="default: the environment the run trained on"
    )
    add_env_config_argument(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-envs", type=positive_int, default=32)
    parser.add_argument(
        "--max-episode-steps",
        type=positive_int,
        default=None,
        help="the step limit of an episode (default: the run's max_steps, else 500)",
    )
    parser.add_argument("--greedy", action="store_true", help="take the most likely action")
    parser.add_argument(
        "--output",
        default=None,
        help="JSON report path (default: <run>/evaluation.json for a checkpoint of a run "
        "directory; otherwise printed only)",
    )


def evaluate(args):
    from keras_simplicial.agents.analysis.evaluation import evaluate_checkpoint

    report = evaluate_checkpoint(
        args.checkpoint,
        episodes=args.episodes,
        env_id=args.env,
        env_config=args.env_config,
        seed=args.seed,
        num_envs=args.num_envs,
        max_episode_steps=args.max_episode_steps,
        explore=not args.greedy,
        output=args.output,
    )
    print(report.to_markdown())
    if report.output:
        print(f"Saved {report.output}")
    return 0


def plot_arguments(parser):
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("--out", default="training_curves.png", help="PNG or PDF path")
    parser.add_argument("--per-run", action="store_true", help="add one panel per run")
    parser.add_argument(
        "--time-adjusted",
        action="store_true",
        help="rescale steps by measured frames/s (Appendix C)",
    )


def plot(args):
    from keras_simplicial.agents.analysis.training_curves import plot_training_curves

    plot_training_curves(
        args.run_dirs, args.out, per_run_panels=args.per_run, time_adjusted=args.time_adjusted
    )
    print(f"Saved {args.out}")
    return 0


def summary_arguments(parser):
    parser.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument(
        "--every",
        type=positive_int,
        default=1_000_000,
        help="window width in environment steps (default 1000000; a DAgger run prints its rounds)",
    )
    add_output_argument(parser)


def summary(args):
    from pathlib import Path

    from keras_simplicial.agents.analysis.training_table import run_summary

    if (Path(args.run_dir) / "dagger.json").is_file():  # a supervised run: its rounds
        from keras_simplicial.agents.imitation.rounds_table import dagger_rounds

        result = dagger_rounds(args.run_dir)
    else:
        result = run_summary(args.run_dir, every=args.every)
    print(result.to_markdown())
    save_result(result, args.output)
    return 0


def visualize_arguments(parser):
    add_checkpoint_argument(parser)
    parser.add_argument("--seed", type=int, default=0, help="the episode's board (default 0)")
    parser.add_argument(
        "--step",
        type=int,
        default=None,
        help="the decision to draw, 0-based; negative counts from the end (default: the last)",
    )
    parser.add_argument(
        "--out", default="attention", help="directory for the figures (default: ./attention)"
    )
    parser.add_argument(
        "--format",
        nargs="+",
        default=["png"],
        choices=("png", "pdf", "svg"),
        dest="formats",
        help="file formats (default: png)",
    )
    parser.add_argument(
        "--gif", action="store_true", help="also write the whole episode as an animated GIF"
    )
    parser.add_argument("--fps", type=float, default=4.0, help="GIF frames per second")
    parser.add_argument(
        "--sharpen",
        type=float,
        default=1.0,
        help="multiply the virtual entities' logits by this factor (the paper "
        "uses 2 in print; default 1: none)",
    )
    add_episode_arguments(parser)


def visualize(args):
    from keras_simplicial.agents.analysis.attention_figures import save_episode_gif, save_figures
    from keras_simplicial.agents.analysis.episode import play_episode

    agent, env_id, env_config = load_agent(args)
    record = play_episode(
        agent, env_id, env_config, seed=args.seed, greedy=args.greedy, max_steps=args.max_steps
    )
    print(
        f"{agent.kind} agent, seed {args.seed}: puzzle type {record.puzzle_type}, "
        f"{record.length} steps, {record.outcome()}"
    )
    for path in save_figures(
        record, args.out, step=args.step, formats=args.formats, sharpen=args.sharpen
    ):
        print(f"Saved {path}")
    if args.gif:
        path = Path(args.out) / f"seed{args.seed}_episode.gif"
        frames = save_episode_gif(record, path, fps=args.fps, sharpen=args.sharpen)
        print(f"Saved {path} ({frames} frames)")
    return 0


def explain_arguments(parser):
    add_checkpoint_argument(parser)
    parser.add_argument("--seed", type=int, default=0, help="the episode's board (default 0)")
    parser.add_argument(
        "--style",
        default="unicode",
        choices=STYLE_CHOICES,
        help="notation of the sequents; latex also prints a bussproofs tree",
    )
    add_episode_arguments(parser)


def explain(args):
    from keras_simplicial.agents.analysis.episode import play_episode
    from keras_simplicial.agents.analysis.explanations import explain_episode, format_explanation

    agent, env_id, env_config = load_agent(args)
    record = play_episode(
        agent,
        env_id,
        env_config,
        seed=args.seed,
        greedy=args.greedy,
        max_steps=args.max_steps,
        record_attention=False,
    )
    explanation = explain_episode(record)
    print(format_explanation(explanation, args.style))
    if args.style == "latex":
        print("\n" + explanation.proof_tree.latex())
    return 0


def probe_arguments(parser):
    add_checkpoint_argument(parser)
    parser.add_argument("--episodes", type=positive_int, default=500)
    parser.add_argument("--seed", type=int, default=0, help="first board seed (default 0)")
    parser.add_argument(
        "--num-envs", type=positive_int, default=32, help="boards played in lockstep (default 32)"
    )
    parser.add_argument(
        "--board-only",
        action="store_true",
        help="apply the rule to the boxes on the board only, not to held keys",
    )
    add_output_argument(parser, "the table")
    add_episode_arguments(parser)


def probe(args):
    from keras_simplicial.agents.analysis.logic_probe import logic_probe

    agent, env_id, env_config = load_agent(args)
    result = logic_probe(
        agent,
        env_id,
        env_config,
        episodes=args.episodes,
        seed=args.seed,
        num_envs=args.num_envs,
        greedy=args.greedy,
        max_steps=args.max_steps,
        include_held=not args.board_only,
    )
    print(result.to_markdown())
    save_result(result, args.output)
    return 0


def inventory_arguments(parser):
    add_checkpoint_argument(parser)
    parser.add_argument("--episodes", type=positive_int, default=200)
    parser.add_argument("--seed", type=int, default=0, help="first board seed (default 0)")
    parser.add_argument(
        "--num-envs", type=positive_int, default=32, help="boards played in lockstep (default 32)"
    )
    parser.add_argument(
        "--max-states",
        type=positive_int,
        default=10_000,
        help="distinct states holding a key probed, at most (default 10000)",
    )
    add_output_argument(parser)
    add_episode_arguments(parser)


def inventory(args):
    from keras_simplicial.agents.analysis.inventory_probe import inventory_probe

    agent, env_id, env_config = load_agent(args)
    result = inventory_probe(
        agent.logits,
        env_id,
        env_config,
        episodes=args.episodes,
        seed=args.seed,
        num_envs=args.num_envs,
        greedy=args.greedy,
        max_steps=args.max_steps,
        max_states=args.max_states,
        mask_blocked_moves=agent.mask_blocked_moves,
    )
    print(result.to_markdown())
    save_result(result, args.output)
    return 0


def plot_types_arguments(parser):
    parser.add_argument(
        "reports",
        nargs="+",
        metavar="EVALUATION",
        help="evaluation.json files (or run directories holding one)",
    )
    parser.add_argument(
        "--types",
        nargs="+",
        default=None,
        metavar="A,B,C",
        help="puzzle types to show, e.g. 1,1,2 2,2,4 (default: all)",
    )
    parser.add_argument("--out", default="win_rate_per_type.png", help="PNG or PDF path")
    parser.add_argument("--title", default=None)


def plot_types(args):
    from keras_simplicial.agents.analysis.win_rate_figures import (
        load_evaluations,
        parse_puzzle_type,
        plot_per_type_win_rates,
    )

    types = [parse_puzzle_type(text) for text in args.types] if args.types else None
    reports = load_evaluations(args.reports)
    plot_per_type_win_rates(reports, args.out, puzzle_types=types, title=args.title)
    print(f"Saved {args.out}")
    return 0


def policy_map_arguments(parser):
    add_checkpoint_argument(parser)
    parser.add_argument("--seed", type=int, default=0, help="the board: reset(seed=...)")
    add_env_config_argument(parser)
    parser.add_argument("--out", default="policy_map.png", help="PNG, PDF or SVG path")
    add_output_argument(parser, "the probabilities")


def policy_map(args):
    from keras_simplicial.agents.analysis.policy_map import plot_policy_map
    from keras_simplicial.agents.analysis.policy_map import policy_map as compute

    agent, env_id, env_config = load_agent(args)
    result = compute(agent.logits, env_id, env_config, seed=args.seed)
    print(result.to_markdown())
    plot_policy_map(result, args.out, title=f"{agent.kind} agent, board of seed {args.seed}")
    print(f"Saved {args.out}")
    save_result(result, args.output)
    return 0


def errors_arguments(parser):
    add_checkpoint_argument(parser)
    parser.add_argument("--episodes", type=positive_int, default=1000)
    parser.add_argument(
        "--seed", type=int, default=0, help="the boards: episode k is reset(seed=SEED + k)"
    )
    parser.add_argument("--num-envs", type=positive_int, default=32)
    add_env_config_argument(parser)
    add_output_argument(parser)


def errors(args):
    from keras_simplicial.agents.analysis.learner_errors import learner_errors

    agent, env_id, env_config = load_agent(args)
    result = learner_errors(
        agent.logits,
        env_id,
        env_config,
        episodes=args.episodes,
        seed=args.seed,
        num_envs=args.num_envs,
        mask_blocked_moves=agent.mask_blocked_moves,
    )
    print(result.to_markdown())
    save_result(result, args.output)
    return 0


def imitate_arguments(parser):
    add_preset_argument(parser, default="bridge-medium")
    add_agent_argument(parser)
    parser.add_argument(
        "--episodes", type=positive_int, default=4000, help="demonstration boards (4000)"
    )
    parser.add_argument("--epochs", type=positive_int, default=8, help="passes over them (8)")
    parser.add_argument(
        "--games", type=positive_int, default=1000, help="fresh boards played greedily (1000)"
    )
    add_model_config_argument(parser, default={})
    parser.add_argument("--seed", type=int, default=0, help="initialisation and shuffling")
    add_output_argument(parser)


def imitate(args):
    from keras_simplicial.agents.analysis.imitation import imitation_check

    return _supervised_check(
        imitation_check, args, episodes=args.episodes, epochs=args.epochs, games=args.games
    )


def _supervised_check(check, args, **options):
    """Runs `check` (a fresh model of `--agent` trained on the `--preset`'s boards) with the
    `--model-config` and `--seed` of `args`, prints its result and saves it (`--output`)."""
    from keras_simplicial.agents.training.presets import PRESETS

    preset = PRESETS[args.preset]
    result = check(
        args.agent,
        preset["env"],
        preset["env_config"],
        model_overrides=args.model_config,
        seed=args.seed,
        **options,
    )
    print(result.to_markdown())
    save_result(result, args.output)
    return 0


# held_keys_curve's test_size, repeated so that `--help` loads no gymnasium (a test keeps them
# equal).
HELD_KEYS_TEST_SIZE = 2000


def held_keys_arguments(parser):
    from keras_simplicial.agents.imitation.plateau import PlateauSchedule

    add_agent_argument(parser)
    add_preset_argument(parser, default="bridge-medium")
    parser.add_argument(
        "--sizes",
        type=positive_int,
        nargs="+",
        default=[250, 1000, 4000, 16000],
        help="training-set sizes, a fresh model each (250 1000 4000 16000)",
    )
    parser.add_argument(
        "--max-updates",
        type=positive_int,
        default=PlateauSchedule.max_updates,
        help="cap on Adam updates per model; each trains to a plateau before it "
        f"({PlateauSchedule.max_updates})",
    )
    parser.add_argument(
        "--flat-updates",
        type=positive_int,
        default=PlateauSchedule.flat_updates,
        help="updates a model may stay at the constant prediction (loss log 2) before a fresh "
        f"one replaces it ({PlateauSchedule.flat_updates})",
    )
    parser.add_argument(
        "--starts",
        type=positive_int,
        default=PlateauSchedule.starts,
        help=f"fresh models per size at most ({PlateauSchedule.starts})",
    )
    parser.add_argument(
        "--test-size",
        type=positive_int,
        default=HELD_KEYS_TEST_SIZE,
        help=f"states in each test set (fresh boards, held-out pairs) ({HELD_KEYS_TEST_SIZE})",
    )
    add_model_config_argument(parser, default={})
    parser.add_argument("--seed", type=int, default=0, help="pairs held out, states, models")
    add_output_argument(parser)


def held_keys(args):
    from keras_simplicial.agents.imitation.held_keys import FLAT_LOSS, held_keys_curve
    from keras_simplicial.agents.imitation.plateau import PlateauSchedule

    schedule = PlateauSchedule(
        max_updates=args.max_updates,
        flat_loss=FLAT_LOSS,
        flat_updates=args.flat_updates,
        starts=args.starts,
    )
    return _supervised_check(
        held_keys_curve,
        args,
        sizes=tuple(args.sizes),
        test_size=args.test_size,
        schedule=schedule,
    )


# The choices of keras_simplicial.agents.imitation.held_keys_budget (RUNGS, GAINS), repeated so that
# `--help` loads no TensorFlow (a test keeps them equal).
HELD_KEYS_RUNGS = ("board", "locks-marked", "gem-locks-only", "colours-one-hot")
HELD_KEYS_GAINS = ("zeros", "ones")


def held_keys_budget_arguments(parser):
    parser.add_argument(
        "folder", help="the run's folder: its checkpoint and run.json (resumed if there)"
    )
    parser.add_argument("--agent", choices=("relational", "simplicial"), default="relational")
    parser.add_argument(
        "--gain",
        choices=HELD_KEYS_GAINS,
        default=None,
        help="the simplicial agent's simplicial_gain_initializer (default: the agent's, "
        '"zeros"; "ones" is the paper\'s block)',
    )
    parser.add_argument(
        "--rung",
        choices=HELD_KEYS_RUNGS,
        default="board",
        help="the board as the model sees it: the probe itself, the Gem's lock tiles marked in a "
        "fourth channel, only the Gem box and its locks shown, or those with each colour one "
        "channel of its own (board)",
    )
    parser.add_argument(
        "--train-size", type=positive_int, default=16_000, help="training states (16000)"
    )
    parser.add_argument(
        "--max-updates", type=positive_int, default=100_000, help="cap on updates (100000)"
    )
    parser.add_argument(
        "--eval-every", type=positive_int, default=500, help="updates between evaluations (500)"
    )
    parser.add_argument(
        "--test-size", type=positive_int, default=1_000, help="states per test set (1000)"
    )
    parser.add_argument(
        "--target",
        type=float,
        default=0.9,
        help="held-out-pair accuracy that ends the run: the endpoint (0.9)",
    )
    parser.add_argument(
        "--learning-rate", type=float, default=3e-4, help="Adam's fixed learning rate (3e-4)"
    )
    parser.add_argument("--seed", type=int, default=0, help="pairs held out, states, model")
    parser.add_argument("--data", default=None, help="folder caching the states of a seed")
    parser.add_argument(
        "--updates-now",
        type=positive_int,
        default=None,
        help="stop after about this many updates (resume later); default: to the end",
    )


def held_keys_budget(args):
    from keras_simplicial.agents.imitation.held_keys_budget import BudgetRun, train_budget

    run = BudgetRun(
        agent=args.agent,
        gain=args.gain,
        rung=args.rung,
        train_size=args.train_size,
        max_updates=args.max_updates,
        eval_every=args.eval_every,
        test_size=args.test_size,
        target=args.target,
        learning_rate=args.learning_rate,
        seed=args.seed,
    )
    record = train_budget(
        run, args.folder, data_dir=args.data, updates_now=args.updates_now, log=print
    )
    endpoint = record["endpoint"]
    if endpoint is None:
        print(f"{run.name}: stopped at {record['curve'][-1]['updates']:,} updates; run again")
    elif endpoint["reached"]:
        print(
            f"{run.name}: held-out pairs at {run.target} after {endpoint['updates']:,} updates "
            f"({endpoint['examples_seen']:,} examples seen)"
        )
    else:
        print(f"{run.name}: held-out pairs below {run.target} at the cap, {run.max_updates:,}")
    return 0


COMMANDS = (
    Command("evaluate", evaluate_arguments, evaluate, "win rates per puzzle type of a checkpoint"),
    Command("plot", plot_arguments, plot, "training curves of one or more runs"),
    Command(
        "summary",
        summary_arguments,
        summary,
        "a run's training per window of steps (win rate per puzzle type, why episodes "
        "ended) and its saved evaluations, as Markdown tables",
    ),
    Command(
        "visualize",
        visualize_arguments,
        visualize,
        "attention figures of one episode (Section 6.1), optionally a GIF",
    ),
    Command(
        "explain",
        explain_arguments,
        explain,
        "the proof tree of one episode's behaviour (Appendix B) and the "
        "source/sink rule (Remark B.1) versus what the agent did",
    ),
    Command(
        "probe",
        probe_arguments,
        probe,
        "logic probe: bridge avoidance when the source/sink rule locates the "
        "bridge versus when it cannot",
    ),
    Command(
        "inventory",
        inventory_arguments,
        inventory,
        "does the policy read its inventory? its actions with the held keys hidden or "
        "recoloured, and at the Gem box holding one of its two keys",
    ),
    Command(
        "plot-types",
        plot_types_arguments,
        plot_types,
        "win rate per puzzle type from evaluation reports (Figures 10, 11)",
    ),
    Command(
        "policy-map",
        policy_map_arguments,
        policy_map,
        "the policy's action probabilities with the player on each free tile "
        "of one board: does it know where it is?",
    ),
    Command(
        "errors",
        errors_arguments,
        errors,
        "where greedy play leaves the shortest way to the Gem: each move on the policy's own "
        "states judged by the step-optimal oracle, per stage and puzzle type, and the first "
        "wrong move of each lost episode",
    ),
    Command(
        "imitate",
        imitate_arguments,
        imitate,
        "can the agent represent the solution? train it, supervised, on the "
        "shortest-plan player's moves and play it greedily",
    ),
    Command(
        "held-keys",
        held_keys_arguments,
        held_keys,
        "can the architecture tell which two keys it holds? fresh models trained on "
        "states holding the Gem's two lock colours or one of them, tested on held-out pairs",
    ),
    Command(
        "held-keys-budget",
        held_keys_budget_arguments,
        held_keys_budget,
        "the held-keys probe at a budget: one model for up to a cap of updates, resumable, "
        "until its held-out-pair accuracy reaches the target",
    ),
)
