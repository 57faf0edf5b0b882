"""What each `keras-simplicial` command does; `keras_simplicial_cli` parses its arguments.

Each command imports what it needs when it runs, so that a command loads only its own part of the
package (training: Ray and RLlib; figures: matplotlib).
"""

import json
from pathlib import Path


def _load_agent(args):
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


def _save_result(result, output):
    """Writes `result.to_json()` to `output` (atomically), if the command was given one."""
    if output:
        from keras_simplicial.agents.training.run_directory import atomic_write_text

        atomic_write_text(output, json.dumps(result.to_json(), indent=2) + "\n")
        print(f"Saved {output}")


def _default_out(agent, env):
    import time

    return f"runs/{agent}-{env.split('-')[0].lower()}-{time.strftime('%Y%m%d-%H%M%S')}"


def best_scores(summary):
    """How the best checkpoint played: greedily (its saved weights) and while training."""
    scores = []
    if summary.best_greedy_win_rate is not None:
        scores.append(f"greedy win rate {summary.best_greedy_win_rate:.2f}")
    if summary.best_win_rate is not None:
        scores.append(f"win rate {summary.best_win_rate:.2f} while training")
    return ", ".join(scores)


def command_train(args):
    from keras_simplicial.agents.analysis.training_curves import plot_training_curves
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.run_directory import RunDirectory
    from keras_simplicial.agents.training.train import train

    if args.resume and not args.out:
        raise ValueError("--resume needs --out, the run directory to continue.")
    arguments = None
    if not args.resume:
        arguments = RunArguments.from_preset(
            args.preset,
            args.agent,
            env=args.env,
            env_config=args.env_config,
            config=args.config,
            model_config=args.model_config,
            seed=args.seed,
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
            sampler=args.sampler,
        )
    out = args.out or _default_out(args.agent, arguments.env)
    summary = train(
        arguments,
        out=out,
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
        from keras_simplicial.agents.analysis.evaluation import evaluate_checkpoint, format_report

        print(f"\nEvaluating the last checkpoint on {args.evaluate} episodes ...")
        report = evaluate_checkpoint(summary.checkpoint, episodes=args.evaluate)
        print(format_report(report))
        print(f"  evaluation:   {report['output']}")
        if summary.best_checkpoint and summary.best_checkpoint != summary.checkpoint:
            best_output = Path(summary.run_dir) / "evaluation_best.json"
            print(f"\nEvaluating the best checkpoint on {args.evaluate} episodes ...")
            report = evaluate_checkpoint(
                summary.best_checkpoint, episodes=args.evaluate, output=best_output
            )
            print(format_report(report))
            print(f"  evaluation:   {report['output']}")
    return 0


def command_evaluate(args):
    from keras_simplicial.agents.analysis.evaluation import evaluate_checkpoint, format_report

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
    print(format_report(report))
    if "output" in report:
        print(f"Saved {report['output']}")
    return 0


def command_plot(args):
    from keras_simplicial.agents.analysis.training_curves import plot_training_curves

    plot_training_curves(
        args.run_dirs, args.out, per_run_panels=args.per_run, time_adjusted=args.time_adjusted
    )
    print(f"Saved {args.out}")
    return 0


def command_summary(args):
    from keras_simplicial.agents.analysis.training_table import (
        format_evaluation_table,
        format_training_table,
        run_evaluations,
        training_windows,
    )

    print(format_training_table(training_windows(args.run_dir, every=args.every)))
    evaluations = run_evaluations(args.run_dir)
    if evaluations:
        print()
        print(format_evaluation_table(evaluations))
    return 0


def command_visualize(args):
    from keras_simplicial.agents.analysis.attention_figures import save_episode_gif, save_figures
    from keras_simplicial.agents.analysis.episode import play_episode

    agent, env_id, env_config = _load_agent(args)
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


def command_explain(args):
    from keras_simplicial.agents.analysis.episode import play_episode
    from keras_simplicial.agents.analysis.explanations import explain_episode, format_explanation

    agent, env_id, env_config = _load_agent(args)
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


def command_probe(args):
    from keras_simplicial.agents.analysis.logic_probe import format_probe_table, logic_probe

    agent, env_id, env_config = _load_agent(args)
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
    print(format_probe_table(result))
    _save_result(result, args.output)
    return 0


def command_inventory(args):
    from keras_simplicial.agents.analysis.inventory_probe import inventory_probe

    agent, env_id, env_config = _load_agent(args)
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
    )
    print(result.format())
    _save_result(result, args.output)
    return 0


def command_plot_types(args):
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


def command_policy_map(args):
    from keras_simplicial.agents.analysis.policy_map import plot_policy_map, policy_map

    agent, env_id, env_config = _load_agent(args)
    result = policy_map(agent.logits, env_id, env_config, seed=args.seed)
    print(result.format())
    plot_policy_map(result, args.out, title=f"{agent.kind} agent, board of seed {args.seed}")
    print(f"Saved {args.out}")
    return 0


def command_imitate(args):
    from keras_simplicial.agents.analysis.imitation import imitation_check
    from keras_simplicial.agents.training.impala import PRESETS

    preset = PRESETS[args.preset]
    result = imitation_check(
        args.agent,
        preset["env"],
        preset["env_config"],
        episodes=args.episodes,
        epochs=args.epochs,
        games=args.games,
        model_overrides=args.model_config,
        seed=args.seed,
    )
    print(result.format())
    _save_result(result, args.output)
    return 0


def command_dagger(args):
    import dataclasses

    from keras_simplicial.agents.imitation.dagger import DaggerConfig, run_dagger
    from keras_simplicial.agents.imitation.dagger_directory import DaggerDirectory

    values = {**vars(args), "model_overrides": args.model_config}
    given = {
        field.name: values[field.name]
        for field in dataclasses.fields(DaggerConfig)
        if values.get(field.name) is not None
    }
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
        config = DaggerConfig(**given)
    history = run_dagger(config, args.out)
    best = history.get("best")
    print(
        f"DAgger run in {args.out}: latest model {directory.policy_file}"
        + (f", best (round {best['round']}) {directory.best_dir}" if best else "")
    )
    return 0


def command_held_keys(args):
    from keras_simplicial.agents.imitation.held_keys import held_keys_curve
    from keras_simplicial.agents.training.impala import PRESETS

    preset = PRESETS[args.preset]
    curve = held_keys_curve(
        args.agent,
        preset["env"],
        preset["env_config"],
        sizes=tuple(args.sizes),
        updates=args.updates,
        model_overrides=args.model_config,
        seed=args.seed,
    )
    print(curve.format())
    _save_result(curve, args.output)
    return 0


def command_reproduce(args):
    from keras_simplicial.agents.experiments.reproduce import ReproduceOptions, reproduce

    reproduce(
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
            num_env_runners=args.num_env_runners,
            num_envs=args.num_envs,
            checkpoint_every=args.checkpoint_every,
            throughput_seconds=args.throughput_seconds,
        )
    )
    return 0


def command_sweep(args):
    from keras_simplicial.agents.experiments.learning import (
        SweepOptions,
        learning_sweep,
        sweep_table,
    )
    from keras_simplicial.agents.training.run_directory import atomic_write_text

    options = SweepOptions(
        preset=args.preset,
        agents=tuple(args.agents),
        seeds=tuple(args.seeds),
        stop_timesteps=args.stop_timesteps,
        budgets=tuple(args.budget),
        out=args.out,
        config=args.config,
        model_config=args.model_config,
        sampler=args.sampler,
        num_env_runners=args.num_env_runners,
        num_envs=args.num_envs,
        checkpoint_every=args.checkpoint_every,
        eval_episodes=args.eval_episodes,
        address=args.address,
    )
    report = learning_sweep(options)
    text = sweep_table(report)
    print("\n" + text)
    if args.markdown:
        atomic_write_text(args.markdown, text + "\n")
    out = Path(options.out)
    print(f"\nWrote {out / 'learning_curves.png'} and {out / 'learning_curve.json'}")
    return 0


def command_play(args):
    from keras_simplicial.envs.play import main as play

    return play(args.env, seed=args.seed, env_config=args.env_config)


COMMANDS = {
    "train": command_train,
    "evaluate": command_evaluate,
    "plot": command_plot,
    "summary": command_summary,
    "play": command_play,
    "visualize": command_visualize,
    "explain": command_explain,
    "probe": command_probe,
    "inventory": command_inventory,
    "plot-types": command_plot_types,
    "policy-map": command_policy_map,
    "imitate": command_imitate,
    "dagger": command_dagger,
    "held-keys": command_held_keys,
    "reproduce": command_reproduce,
    "sweep": command_sweep,
}
