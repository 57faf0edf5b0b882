"""Does a trained policy know where the player is? Its action probabilities on every free tile.

    .venv/bin/python benchmarks/policy_by_position.py CHECKPOINT [--seed 0]

Resets the run's environment with `--seed`, then moves the player (and nothing else) to each free
floor tile of that board and prints the policy's probabilities of left, up, right and down there,
and their standard deviation over the tiles. A policy that solves the board changes its action
with the tile; one that wins only by sampling a biased random walk gives nearly the same
probabilities everywhere (compare `keras-simplicial evaluate --greedy`).
"""

import argparse
import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

ACTIONS = ("left", "up", "right", "down")


def boards_with_player_on_each_floor_tile(observation, player, floor):
    """(tile, observation) for every floor tile of the board (the inventory column excluded)."""
    import numpy as np

    board = observation[:, :-1]
    (player_row, player_col), = np.argwhere(np.all(board == player, axis=-1))
    boards = []
    for row, col in np.argwhere(np.all(board == floor, axis=-1)):
        moved = observation.copy()
        moved[player_row, player_col] = floor
        moved[row, col] = player
        boards.append(((int(row), int(col)), moved))
    return boards


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a checkpoint directory or a run directory")
    parser.add_argument("--seed", type=int, default=0, help="the board: reset(seed=...)")
    args = parser.parse_args(argv)

    import gymnasium
    import numpy as np

    import keras_simplicial.envs  # noqa: F401
    from keras_simplicial.agents.evaluate import load_policy, resolve_checkpoint, run_directory_of
    from keras_simplicial.envs.palette import FLOOR_RGB, PLAYER_RGB

    checkpoint = resolve_checkpoint(args.checkpoint)
    run = run_directory_of(checkpoint)
    arguments = run.read_run() if run is not None else {}
    env = gymnasium.make(arguments.get("env", "BridgeBoxWorld-v0"),
                         **arguments.get("env_config", {}))
    observation, info = env.reset(seed=args.seed)
    boards = boards_with_player_on_each_floor_tile(observation, PLAYER_RGB, FLOOR_RGB)
    policy = load_policy(checkpoint)
    logits, _ = policy.model.base_model(np.stack([b for _, b in boards]).astype(np.float32))
    logits = np.asarray(logits)
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)

    print(f"board of seed {args.seed}, puzzle type {info['puzzle_type']}, nothing held")
    print(f"{'tile':<10}" + "".join(f"{name:>7}" for name in ACTIONS))
    for (tile, _), p in zip(boards, probabilities):
        print(f"{str(tile):<10}" + "".join(f"{x:>7.2f}" for x in p))
    print(f"{'std':<10}" + "".join(f"{x:>7.3f}" for x in probabilities.std(axis=0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
