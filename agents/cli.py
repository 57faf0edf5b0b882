"""`keras-simplicial`: train, evaluate, plot and play from the command line.

    keras-simplicial train --run IMPALA --env BridgeBoxWorld-v0 --agent simplicial --out runs/a
    keras-simplicial evaluate runs/a --episodes 1000
    keras-simplicial plot runs/a runs/b --out curves.png
    keras-simplicial play --env BridgeBoxWorld-v0 --seed 3
    keras-simplicial visualize runs/a --seed 3 --step 18 --gif
    keras-simplicial explain runs/a --seed 3
    keras-simplicial probe runs/a --episodes 500
    keras-simplicial policy-map runs/a --seed 0
    keras-simplicial plot-types a.json b.json c.json --types 1,1,2 2,2,4

`train` mirrors the old `rllib train` command (RLlib 2.60 no longer ships one). Bad input ends the
program with exit status 2 and one line naming the problem, not a traceback (set
KERAS_SIMPLICIAL_DEBUG=1 to see the traceback).
"""

import argparse
import json
import os
import sys
from pathlib import Path

RUN_CHOICES = ("IMPALA",)
ENV_CHOICES = ("BridgeBoxWorld-v0", "BoxWorld-v0")
AGENT_CHOICES = ("relational", "simplicial")


class UsageError(Exception):
    """A problem with the user's input: printed as one line, exit status 2."""


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and a pointer to --help), not the usage text."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parse_json_object(text, argument):
    """Parses a JSON object given on the command line, naming `argument` when it is malformed."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{argument} is not valid JSON ({error.msg} at position {error.pos}): "
                         f"{text!r}") from None
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
        description="The 2-simplicial Transformer: train, evaluate and inspect BoxWorld agents.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=OneLineErrorParser)

    train = commands.add_parser("train", help="train an agent with IMPALA on Ray RLlib")
    train.add_argument("--run", default="IMPALA", choices=RUN_CHOICES,
                       help="the RLlib algorithm (default: IMPALA, as in the paper)")
    train.add_argument("--preset", default="paper", choices=("paper", "easy"),
                       help="starting point: 'paper' (bridge BoxWorld, Table 1) or 'easy' "
                            "(BoxWorld on a 3 x 6 board, one key and the Gem, 30 steps, smaller "
                            "batches; what `make train` runs); --env-config and --config add to it")
    train.add_argument("--env", default=None, choices=ENV_CHOICES,
                       help="default: the preset's (paper: BridgeBoxWorld-v0)")
    train.add_argument("--agent", default="simplicial", choices=AGENT_CHOICES)
    train.add_argument("--config", type=_json_object("--config"), default={},
                       help="JSON object of IMPALAConfig overrides, e.g. '{\"lr\": 1e-4}'")
    train.add_argument("--env-config", type=_json_object("--env-config"), default={},
                       help="JSON object of environment arguments, e.g. "
                            "'{\"max_solution_length\": 1}'")
    train.add_argument("--model-config", type=_json_object("--model-config"), default={},
                       help="JSON object of architecture overrides, e.g. '{\"num_heads\": 4}'")
    train.add_argument("--stop-timesteps", type=_positive_int, default=5_500_000_000,
                       help="environment steps to train for (default: the paper's 5.5e9)")
    train.add_argument("--stop-seconds", type=float, default=None,
                       help="also stop after this much wall-clock time")
    train.add_argument("--num-env-runners", type=_non_negative_int, default=0,
                       help="rollout worker processes (default: 0, the driver samples beside "
                            "the learner thread: fastest on a few cores; on a cluster, one per "
                            "CPU)")
    train.add_argument("--num-envs-per-env-runner", type=_positive_int, default=64,
                       help="boards each runner steps as one batch (default: 64)")
    train.add_argument("--sampler", default="batched", choices=("batched", "rllib"),
                       help="'batched' (default): each env runner steps its boards as one batch; "
                            "'rllib': RLlib's per-env sampler (slower on small boards, runs every "
                            "RLlib episode callback)")
    train.add_argument("--seed", type=int, default=None)
    train.add_argument("--out", default=None,
                       help="run directory (default: runs/<agent>-<env>-<time>)")
    train.add_argument("--resume", action="store_true",
                       help="continue the run in --out from its last checkpoint")
    train.add_argument("--address", default=None,
                       help="join the Ray cluster at this address (default: start a local Ray)")
    train.add_argument("--checkpoint-every", type=_positive_int, default=10,
                       help="iterations between checkpoints (default: 10)")
    train.add_argument("--evaluate", type=_non_negative_int, default=0, metavar="EPISODES",
                       help="after training, evaluate the final checkpoint on this many episodes")
    train.add_argument("--progress", default="auto", choices=("auto", "rich", "plain", "none"))

    evaluate = commands.add_parser("evaluate", help="win rates per puzzle type of a checkpoint")
    evaluate.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    evaluate.add_argument("--episodes", type=_positive_int, default=1000)
    evaluate.add_argument("--env", default=None, choices=ENV_CHOICES,
                          help="default: the environment the run trained on")
    evaluate.add_argument("--env-config", type=_json_object("--env-config"), default=None)
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--num-envs", type=_positive_int, default=32)
    evaluate.add_argument("--max-episode-steps", type=_positive_int, default=500)
    evaluate.add_argument("--greedy", action="store_true", help="take the most likely action")
    evaluate.add_argument("--output", default=None,
                          help="JSON report path (default: <run>/evaluation.json)")

    plot = commands.add_parser("plot", help="training curves of one or more runs")
    plot.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    plot.add_argument("--out", default="training_curves.png", help="PNG or PDF path")
    plot.add_argument("--per-run", action="store_true", help="add one panel per run")
    plot.add_argument("--time-adjusted", action="store_true",
                      help="rescale steps by measured frames/s (Appendix C)")

    visualize = commands.add_parser(
        "visualize", help="attention figures of one episode (Section 6.1), optionally a GIF")
    visualize.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    visualize.add_argument("--seed", type=int, default=0, help="the episode's board (default 0)")
    visualize.add_argument("--step", type=int, default=None,
                           help="the decision to draw, 0-based; negative counts from the end "
                                "(default: the last)")
    visualize.add_argument("--out", default="attention",
                           help="directory for the figures (default: ./attention)")
    visualize.add_argument("--format", nargs="+", default=["png"], choices=("png", "pdf", "svg"),
                           dest="formats", help="file formats (default: png)")
    visualize.add_argument("--gif", action="store_true",
                           help="also write the whole episode as an animated GIF")
    visualize.add_argument("--fps", type=float, default=4.0, help="GIF frames per second")
    visualize.add_argument("--sharpen", type=float, default=1.0,
                           help="multiply the virtual entities' logits by this factor (the paper "
                                "uses 2 in print; default 1: none)")
    _add_episode_arguments(visualize)

    explain = commands.add_parser(
        "explain", help="the proof tree of one episode's behaviour (Appendix B) and the "
                        "source/sink rule (Remark B.1) versus what the agent did")
    explain.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    explain.add_argument("--seed", type=int, default=0, help="the episode's board (default 0)")
    explain.add_argument("--style", default="unicode", choices=("unicode", "ascii", "latex"),
                         help="notation of the sequents; latex also prints a bussproofs tree")
    _add_episode_arguments(explain)

    probe = commands.add_parser(
        "probe", help="logic probe: bridge avoidance when the source/sink rule locates the "
                      "bridge versus when it cannot")
    probe.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    probe.add_argument("--episodes", type=_positive_int, default=500)
    probe.add_argument("--seed", type=int, default=0, help="first board seed (default 0)")
    probe.add_argument("--num-envs", type=_positive_int, default=32,
                       help="boards played in lockstep (default 32)")
    probe.add_argument("--board-only", action="store_true",
                       help="apply the rule to the boxes on the board only, not to held keys")
    probe.add_argument("--output", default=None, help="also write the table as JSON")
    _add_episode_arguments(probe)

    plot_types = commands.add_parser(
        "plot-types", help="win rate per puzzle type from evaluation reports (Figures 10, 11)")
    plot_types.add_argument("reports", nargs="+", metavar="EVALUATION",
                            help="evaluation.json files (or run directories holding one)")
    plot_types.add_argument("--types", nargs="+", default=None, metavar="A,B,C",
                            help="puzzle types to show, e.g. 1,1,2 2,2,4 (default: all)")
    plot_types.add_argument("--out", default="win_rate_per_type.png", help="PNG or PDF path")
    plot_types.add_argument("--title", default=None)

    policy = commands.add_parser(
        "policy-map", help="the policy's action probabilities with the player on each free tile "
                           "of one board: does it know where it is?")
    policy.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    policy.add_argument("--seed", type=int, default=0, help="the board: reset(seed=...)")
    policy.add_argument("--env-config", type=_json_object("--env-config"), default=None,
                        help="JSON object of environment arguments (default: the run's)")
    policy.add_argument("--out", default="policy_map.png", help="PNG, PDF or SVG path")

    play = commands.add_parser("play", help="play an episode yourself in the terminal",
                               add_help=False)
    play.add_argument("play_args", nargs=argparse.REMAINDER)
    return parser


def _add_episode_arguments(parser):
    parser.add_argument("--greedy", action="store_true",
                        help="take the most likely action (default: sample from the policy)")
    parser.add_argument("--max-steps", type=_positive_int, default=None,
                        help="stop an episode after this many steps (default: the run's "
                             "max_steps, else 500)")
    parser.add_argument("--env-config", type=_json_object("--env-config"), default=None,
                        help="JSON object of environment arguments (default: the run's)")


def _load_agent(args):
    from keras_simplicial.agents.attention import load_attention_agent

    agent, arguments = load_attention_agent(args.checkpoint)
    env_config = arguments["env_config"] if args.env_config is None else args.env_config
    return agent, arguments["env"], env_config


def _default_out(agent, env):
    import time

    return f"runs/{agent}-{env.split('-')[0].lower()}-{time.strftime('%Y%m%d-%H%M%S')}"


def command_train(args):
    from keras_simplicial.agents.config import PRESETS
    from keras_simplicial.agents.train import train

    preset = PRESETS[args.preset]
    env = args.env or preset["env"]
    env_config = {**preset["env_config"], **args.env_config}
    overrides = {**preset["overrides"], **args.config}
    out = args.out or _default_out(args.agent, env)
    if args.resume and not args.out:
        raise UsageError("--resume needs --out, the run directory to continue.")
    summary = train(
        env=env, agent=args.agent, out=out, stop_timesteps=args.stop_timesteps,
        env_config=env_config, model_overrides=args.model_config, overrides=overrides,
        num_env_runners=args.num_env_runners,
        num_envs_per_env_runner=args.num_envs_per_env_runner, seed=args.seed,
        resume=args.resume, address=args.address, checkpoint_every=args.checkpoint_every,
        stop_seconds=args.stop_seconds, progress=args.progress, sampler=args.sampler,
    )
    state = "interrupted" if summary.interrupted else "finished"
    print(f"\nTraining {state} after {summary.timesteps:,} steps ({summary.iterations} iterations).")
    print(f"  checkpoint:   {summary.checkpoint}")
    if summary.best_checkpoint and summary.best_checkpoint != summary.checkpoint:
        print(f"  best:         {summary.best_checkpoint} (win rate {summary.best_win_rate:.2f} "
              "while training)")
    print(f"  metrics:      {summary.metrics_csv}")
    print(f"  TensorBoard:  tensorboard --logdir {summary.tensorboard_dir}")
    print(f"  plot:         {summary.plot}")
    print(f"  resume with:  keras-simplicial train --resume --out {summary.run_dir}")
    if args.evaluate and not summary.interrupted:
        from keras_simplicial.agents.evaluate import evaluate_checkpoint, format_report

        print(f"\nEvaluating the last checkpoint on {args.evaluate} episodes ...")
        report = evaluate_checkpoint(summary.checkpoint, episodes=args.evaluate)
        print(format_report(report))
        print(f"  evaluation:   {report['output']}")
        if summary.best_checkpoint and summary.best_checkpoint != summary.checkpoint:
            best_output = Path(summary.run_dir) / "evaluation_best.json"
            print(f"\nEvaluating the best checkpoint on {args.evaluate} episodes ...")
            report = evaluate_checkpoint(summary.best_checkpoint, episodes=args.evaluate,
                                         output=best_output)
            print(format_report(report))
            print(f"  evaluation:   {report['output']}")
    return 0


def command_evaluate(args):
    from keras_simplicial.agents.evaluate import evaluate_checkpoint, format_report

    report = evaluate_checkpoint(args.checkpoint, episodes=args.episodes, env_id=args.env,
                                 env_config=args.env_config, seed=args.seed,
                                 num_envs=args.num_envs, max_episode_steps=args.max_episode_steps,
                                 explore=not args.greedy, output=args.output)
    print(format_report(report))
    if "output" in report:
        print(f"Saved {report['output']}")
    return 0


def command_plot(args):
    from keras_simplicial.agents.plots import plot_training_curves

    plot_training_curves(args.run_dirs, args.out, per_run_panels=args.per_run,
                         time_adjusted=args.time_adjusted)
    print(f"Saved {args.out}")
    return 0


def command_visualize(args):
    from keras_simplicial.agents.attention_maps import save_episode_gif, save_figures
    from keras_simplicial.agents.episode import play_episode

    agent, env_id, env_config = _load_agent(args)
    record = play_episode(agent, env_id, env_config, seed=args.seed, greedy=args.greedy,
                          max_steps=args.max_steps)
    print(f"{agent.kind} agent, seed {args.seed}: puzzle type {record.puzzle_type}, "
          f"{record.length} steps, {record.outcome()}")
    for path in save_figures(record, args.out, step=args.step, formats=args.formats,
                             sharpen=args.sharpen):
        print(f"Saved {path}")
    if args.gif:
        from pathlib import Path

        path = Path(args.out) / f"seed{args.seed}_episode.gif"
        frames = save_episode_gif(record, path, fps=args.fps, sharpen=args.sharpen)
        print(f"Saved {path} ({frames} frames)")
    return 0


def command_explain(args):
    from keras_simplicial.agents.episode import play_episode
    from keras_simplicial.agents.explain import explain_episode, format_explanation

    agent, env_id, env_config = _load_agent(args)
    record = play_episode(agent, env_id, env_config, seed=args.seed, greedy=args.greedy,
                          max_steps=args.max_steps, record_attention=False)
    explanation = explain_episode(record)
    print(format_explanation(explanation, args.style))
    if args.style == "latex":
        print("\n" + explanation.proof_tree.latex())
    return 0


def command_probe(args):
    from keras_simplicial.agents.explain import format_probe_table, logic_probe

    agent, env_id, env_config = _load_agent(args)
    result = logic_probe(agent, env_id, env_config, episodes=args.episodes, seed=args.seed,
                         num_envs=args.num_envs, greedy=args.greedy, max_steps=args.max_steps,
                         include_held=not args.board_only)
    print(format_probe_table(result))
    if args.output:
        from keras_simplicial.agents.run_directory import atomic_write_text

        atomic_write_text(args.output, json.dumps(result.to_json(), indent=2) + "\n")
        print(f"Saved {args.output}")
    return 0


def command_plot_types(args):
    from keras_simplicial.agents.win_rate_figures import (
        load_evaluations, parse_puzzle_type, plot_per_type_win_rates)

    types = [parse_puzzle_type(text) for text in args.types] if args.types else None
    reports = load_evaluations(args.reports)
    plot_per_type_win_rates(reports, args.out, puzzle_types=types, title=args.title)
    print(f"Saved {args.out}")
    return 0


def command_policy_map(args):
    from keras_simplicial.agents.policy_map import plot_policy_map, policy_map

    agent, env_id, env_config = _load_agent(args)
    result = policy_map(agent.logits, env_id, env_config, seed=args.seed)
    print(result.format())
    plot_policy_map(result, args.out, title=f"{agent.kind} agent, board of seed {args.seed}")
    print(f"Saved {args.out}")
    return 0


def command_play(args):
    from keras_simplicial.envs.play import main as play_main

    return play_main(args.play_args)


COMMANDS = {"train": command_train, "evaluate": command_evaluate, "plot": command_plot,
            "play": command_play, "visualize": command_visualize, "explain": command_explain,
            "probe": command_probe, "plot-types": command_plot_types,
            "policy-map": command_policy_map}


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args) or 0
    except (UsageError, ValueError, FileNotFoundError, json.JSONDecodeError) as error:
        if os.environ.get("KERAS_SIMPLICIAL_DEBUG"):
            raise
        print(f"keras-simplicial {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"keras-simplicial {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
