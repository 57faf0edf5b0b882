"""Every analysis figure of Section 6 and Appendices B and C, from a checkpoint or a fresh model.

    python examples/analysis_figures.py                       # freshly initialised agents
    python examples/analysis_figures.py runs/simplicial-a runs/relational-a --out figures

With checkpoints (run directories or checkpoint directories), the figures show those agents and the
training curves of their runs; without, randomly initialised agents stand in (useful to see what
each figure shows, not what a trained agent does) and the training curves are skipped. Writes to
--out: the three attention figures of one step (Section 6.1), the episode as a GIF, per-puzzle-type
win rates of both agents (Figures 10 and 11), training curves with the time-adjusted axis (Figures
4-6, Appendix C); prints the proof tree of one episode (Appendix B) and the logic probe table.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from keras_simplicial.agents.analysis.attention_figures import save_episode_gif, save_figures  # noqa: E402
from keras_simplicial.agents.analysis.episode import play_episode  # noqa: E402
from keras_simplicial.agents.analysis.evaluation import summarise
from keras_simplicial.agents.analysis.explanations import explain_episode, format_explanation  # noqa: E402
from keras_simplicial.agents.analysis.logic_probe import logic_probe  # noqa: E402
from keras_simplicial.agents.analysis.training_curves import plot_training_curves  # noqa: E402
from keras_simplicial.agents.analysis.win_rate_figures import plot_per_type_win_rates  # noqa: E402
from keras_simplicial.agents.model.architecture import build_agent_model  # noqa: E402
from keras_simplicial.agents.model.attention_agent import AttentionAgent  # noqa: E402
from keras_simplicial.agents.rollout import episode_outcomes  # noqa: E402
from keras_simplicial.agents.training.checkpoints import load_attention_agent  # noqa: E402
from keras_simplicial.agents.training.run_arguments import RunArguments  # noqa: E402

FRESH_ENV = ("BridgeBoxWorld-v0", {"max_solution_length": 2, "max_steps": 40})


def fresh_agents(seed=0):
    """A randomly initialised relational and simplicial agent (no checkpoint needed)."""
    import keras

    keras.utils.set_random_seed(seed)
    return [
        (
            AttentionAgent(build_agent_model(kind, (7, 10, 3), 4), kind),
            RunArguments(env=FRESH_ENV[0], agent=kind, env_config=FRESH_ENV[1]),
            None,
        )
        for kind in ("relational", "simplicial")
    ]


def per_type_report(agent, env_id, env_config, episodes, seed):
    """An evaluation report (as `keras-simplicial evaluate` writes) of `episodes` episodes."""
    results = episode_outcomes(agent.logits, env_id, env_config, episodes, seed=seed)
    return {"agent": agent.kind, **summarise(results)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="*", help="run or checkpoint directories")
    parser.add_argument("--out", default="analysis_figures")
    parser.add_argument("--seed", type=int, default=3, help="the episode to draw")
    parser.add_argument("--step", type=int, default=None, help="the step to draw (default last)")
    parser.add_argument(
        "--episodes",
        type=int,
        default=40,
        help="episodes per agent for the per-type win rates and the probe",
    )
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    if args.checkpoints:
        agents = []
        for path in args.checkpoints:
            agent, arguments = load_attention_agent(path)
            run_dir = (
                Path(path) if (Path(path) / "run.json").is_file() else Path(path).parent.parent
            )
            agents.append((agent, arguments, run_dir if (run_dir / "run.json").is_file() else None))
    else:
        print("No checkpoint given: using freshly initialised agents.")
        agents = fresh_agents()

    reports = []
    for agent, arguments, _ in agents:
        env_id, env_config = arguments.env, arguments.env_config
        record = play_episode(agent, env_id, env_config, seed=args.seed)
        print(
            f"\n{agent.kind}: puzzle type {record.puzzle_type}, {record.length} steps, "
            f"{record.outcome()}"
        )
        for path in save_figures(record, out / agent.kind, step=args.step, sharpen=2.0):
            print(f"  saved {path}")
        gif = out / agent.kind / f"seed{args.seed}_episode.gif"
        save_episode_gif(record, gif, sharpen=2.0, max_frames=60)
        print(f"  saved {gif}")
        print(format_explanation(explain_episode(record)))
        print(logic_probe(agent, env_id, env_config, episodes=args.episodes).to_markdown())
        # Per-type win rates of "several checkpoints": here three disjoint sets of boards.
        for part in range(3):
            reports.append(
                per_type_report(
                    agent, env_id, env_config, args.episodes // 3, seed=1000 * (part + 1)
                )
            )

    path = out / "win_rate_per_type.png"
    plot_per_type_win_rates(reports, path)
    print(f"\nsaved {path}")
    run_dirs = [run_dir for _, _, run_dir in agents if run_dir is not None]
    if run_dirs:
        for time_adjusted in (False, True):
            path = out / f"training_curves{'_time_adjusted' if time_adjusted else ''}.png"
            plot_training_curves(run_dirs, path, per_run_panels=True, time_adjusted=time_adjusted)
            print(f"saved {path}")
    else:
        print("training curves need training runs: keras-simplicial train ..., then pass them.")


if __name__ == "__main__":
    main()
