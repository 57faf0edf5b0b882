"""Which of the easy preset's boards does a stalled run win? Board by board, greedily.

    .venv/bin/python studies/stack-parity/easy_stall_boards.py CHECKPOINT_OR_RUN_DIR [...]
        [--seeds 400] [--markdown FILE] [--json FILE]

The easy preset (one loose key and the Gem box on a 3 x 6 board) has only 40 distinct start
boards, so a training win rate that holds at about 0.5 can be a policy that wins a fixed half of
them. Per checkpoint (a run directory means its best checkpoint): the boards of
`reset(seed=0 ... seeds-1)`, each distinct start board played once greedily (greedy play is
deterministic), and

- the boards won, overall and by layout: the player's start and the tiles of the loose key and the
  Gem box's key (the easy preset's 40 boards are 2 layouts in 20 colourings each, the player
  starting at (0, 0));
- per layout, the greedy first move, and on the boards lost the move the episode ended repeating
  (the last one: against an edge it is the move the board does not allow).
"""

import argparse
import collections
import sys
from pathlib import Path

import numpy as np


def layout(player, key, gem_box):
    return f"player {player}, key {key}, Gem box {gem_box}"


def player_cell(observation, cols):
    from keras_simplicial.envs.palette import PLAYER_RGB

    rows, columns = np.nonzero(np.all(observation[:, :cols] == PLAYER_RGB, axis=-1))
    return int(rows[0]), int(columns[0])


def boards_of(checkpoint, seeds):
    """One record per distinct start board among the seeds: positions, greedy outcome, moves."""
    import gymnasium

    from keras_simplicial.agents.analysis.episode import play_episode
    from keras_simplicial.agents.training.checkpoints import environment_of, load_attention_agent
    from keras_simplicial.envs.core import ACTION_NAMES

    agent, arguments = load_attention_agent(checkpoint)
    env_id, env_config = environment_of(arguments)
    cols = env_config["cols"]
    env = gymnasium.make(env_id, **env_config)
    boards = {}
    for seed in range(seeds):
        signature = env.reset(seed=seed)[0].tobytes()  # the board play_episode(seed=seed) plays
        if signature in boards:
            continue
        record = play_episode(
            agent, env_id, env_config, seed=seed, greedy=True, record_attention=False
        )
        player = player_cell(record.observations[0], cols)
        key = next(box for box in record.puzzle.boxes if not box.locks).position
        gem_box = next(box for box in record.puzzle.boxes if box.locks).position
        boards[signature] = {
            "seed": seed,
            "player": player,
            "loose_key": tuple(key),
            "gem_box_key_tile": tuple(gem_box),
            "layout": layout(player, tuple(key), tuple(gem_box)),
            "won": bool(record.won),
            "first_move": ACTION_NAMES[int(record.actions[0])],
            "last_move": ACTION_NAMES[int(record.actions[-1])],
            "length": int(record.length),
        }
    return list(boards.values())


def counts(values):
    return ", ".join(f"{value} {n}" for value, n in collections.Counter(values).most_common())


def summary(checkpoint, boards):
    """The boards won, overall and per layout, with the greedy first moves and, on the boards
    lost, the move repeated at the end."""
    layouts = {}
    for name in sorted({b["layout"] for b in boards}):
        group = [b for b in boards if b["layout"] == name]
        layouts[name] = {
            "won": sum(b["won"] for b in group),
            "boards": len(group),
            "first_move": counts(b["first_move"] for b in group),
            "repeated_when_lost": counts(b["last_move"] for b in group if not b["won"]),
        }
    return {
        "checkpoint": str(checkpoint),
        "won": sum(b["won"] for b in boards),
        "boards": len(boards),
        "by_layout": layouts,
        "per_board": boards,
    }


def markdown(summaries):
    from keras_simplicial.agents.analysis.results import markdown_table

    header = ["checkpoint", "layout", "boards won", "first move", "move repeated at the end (lost)"]
    rows = []
    for s in summaries:
        parts = Path(s["checkpoint"]).parts
        name = "/".join(parts[-5:-2] + parts[-1:])
        for layout_name, group in s["by_layout"].items():
            rows.append(
                [
                    f"{name} ({s['won']}/{s['boards']})",
                    layout_name,
                    f"{group['won']}/{group['boards']}",
                    group["first_move"],
                    group["repeated_when_lost"] or "-",
                ]
            )
    return markdown_table(header, rows) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoints or run directories (best)")
    parser.add_argument("--seeds", type=int, default=400, help="boards reset(seed=0 ... seeds-1)")
    parser.add_argument("--markdown", default=None, help="also write the table here")
    parser.add_argument("--json", default=None, help="also write every board here")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be a positive integer, got {args.seeds}")
    from keras_simplicial.agents.training.checkpoints import best_checkpoint_of

    summaries = []
    for path in args.checkpoints:
        checkpoint = best_checkpoint_of(path)
        summaries.append(summary(checkpoint, boards_of(checkpoint, args.seeds)))
    from keras_simplicial.agents.analysis.results import save_report

    text = markdown(summaries)
    save_report(text, summaries, args.markdown, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
