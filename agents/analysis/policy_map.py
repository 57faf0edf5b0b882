"""Does a policy know where the player is? Its action probabilities on every free tile of a board.

One board (`reset(seed=...)`), the player moved (and nothing else changed) to each free floor
tile, the policy's probabilities of left, up, right and down there. A policy that solves the
board changes its action with the tile; one that wins only by sampling a biased random walk gives
nearly the same probabilities everywhere (a small standard deviation over the tiles).
"""

import dataclasses

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from keras_simplicial.agents.analysis.results import Result, markdown_table  # noqa: E402
from keras_simplicial.envs.core import ACTION_DELTAS, ACTION_NAMES  # noqa: E402
from keras_simplicial.envs.palette import FLOOR_RGB, PLAYER_RGB  # noqa: E402


@dataclasses.dataclass
class PolicyMap(Result):
    """Action probabilities [tiles, 4] of a policy with the player on each floor tile."""

    observation: np.ndarray
    tiles: list
    probabilities: np.ndarray
    seed: int
    puzzle_type: tuple

    def spread(self):
        """Standard deviation of each action's probability over the tiles."""
        return self.probabilities.std(axis=0)

    def to_dict(self):
        """The board, each floor tile with its action probabilities, and their spread."""
        return {
            "seed": int(self.seed),
            "puzzle_type": list(self.puzzle_type),
            "actions": list(ACTION_NAMES),
            "tiles": [list(map(int, tile)) for tile in self.tiles],
            "probabilities": np.round(self.probabilities, 4).tolist(),
            "std": np.round(self.spread(), 4).tolist(),
        }

    def to_markdown(self):
        rows = [
            [str(tuple(tile)), *(f"{x:.2f}" for x in p)]
            for tile, p in zip(self.tiles, self.probabilities)
        ]
        rows.append(["std", *(f"{x:.3f}" for x in self.spread())])
        return (
            f"Board of seed {self.seed}, puzzle type {self.puzzle_type}, nothing held:\n\n"
            + markdown_table(["tile", *ACTION_NAMES], rows)
        )


def boards_with_player_on_each_floor_tile(observation):
    """(tile, observation) for every floor tile of the board (the inventory column excluded)."""
    board = observation[:, :-1]
    ((player_row, player_col),) = np.argwhere(np.all(board == PLAYER_RGB, axis=-1))
    boards = []
    for row, col in np.argwhere(np.all(board == FLOOR_RGB, axis=-1)):
        moved = observation.copy()
        moved[player_row, player_col] = FLOOR_RGB
        moved[row, col] = PLAYER_RGB
        boards.append(((int(row), int(col)), moved))
    return boards


def policy_map(logits_fn, env_id, env_config, seed=0):
    """The `PolicyMap` of `logits_fn` (observations [B, R, C+1, 3] float -> logits [B, 4])."""
    import gymnasium

    import keras_simplicial.envs  # noqa: F401

    env = gymnasium.make(env_id, **dict(env_config or {}))
    observation, info = env.reset(seed=seed)
    (start_tile,) = [
        tuple(int(v) for v in rc)
        for rc in np.argwhere(np.all(observation[:, :-1] == PLAYER_RGB, axis=-1))
    ]
    boards = [(start_tile, observation)] + boards_with_player_on_each_floor_tile(observation)
    logits = np.asarray(logits_fn(np.stack([b for _, b in boards]).astype(np.float32)))
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
    return PolicyMap(
        observation,
        [t for t, _ in boards],
        probabilities,
        seed,
        tuple(int(v) for v in info["puzzle_type"]),
    )


def plot_policy_map(result, path, title=None):
    """The board with, on each free tile, one arrow per action of length its probability."""
    board = result.observation
    figure, axis = plt.subplots(figsize=(0.9 * board.shape[1] + 1.5, 0.9 * board.shape[0] + 1.2))
    shown = board.copy()
    shown[np.all(board[:, :-1] == PLAYER_RGB, axis=-1).nonzero()] = FLOOR_RGB
    axis.imshow(shown, interpolation="nearest")
    for (row, col), p in zip(result.tiles, result.probabilities):
        best = int(np.argmax(p))
        for action, (d_row, d_col) in enumerate(ACTION_DELTAS):
            length = 0.45 * float(p[action])
            if length < 0.02:
                continue
            axis.arrow(
                col,
                row,
                d_col * length,
                d_row * length,
                width=0.04,
                head_width=0.14,
                head_length=min(0.12, length),
                length_includes_head=True,
                color="black" if action == best else "dimgray",
            )
    start_row, start_col = result.tiles[0]
    axis.add_patch(plt.Circle((start_col, start_row), 0.12, color="tab:red", zorder=3))
    spread = " ".join(f"{n} {s:.2f}" for n, s in zip(ACTION_NAMES, result.spread()))
    axis.set_title(title or f"policy on each tile, board of seed {result.seed}", fontsize=10)
    axis.set_xlabel(f"std over tiles: {spread}  (red: start)", fontsize=8)
    axis.set_xticks(range(board.shape[1]))
    axis.set_yticks(range(board.shape[0]))
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
