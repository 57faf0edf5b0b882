"""Pictures of a board: an upscaled RGB array of crisp (nearest-neighbour) tiles, and ANSI text."""

from __future__ import annotations

import numpy as np

DEFAULT_TILE_SIZE = 16


def upscale(observation: np.ndarray, tile_size: int = DEFAULT_TILE_SIZE) -> np.ndarray:
    """Repeat every tile ``tile_size`` times along both axes: ``(rows*t, (cols+1)*t, 3)`` uint8."""
    if isinstance(tile_size, bool) or not isinstance(tile_size, (int, np.integer)) or tile_size < 1:
        raise ValueError(f"tile_size must be an int >= 1, got {tile_size!r}")
    return np.repeat(np.repeat(observation, tile_size, axis=-3), tile_size, axis=-2)


def ansi(observation: np.ndarray, status: str = "") -> str:
    """The observation as rows of 24-bit-colour ANSI blocks (two characters a tile), ``status``.

    A gap separates the board from the inventory column, as on the screen in Figure 1.
    """
    lines = []
    for row in observation:
        cells = [f"\x1b[48;2;{r};{g};{b}m  " for r, g, b in row.tolist()]
        lines.append("".join(cells[:-1]) + "\x1b[0m " + cells[-1] + "\x1b[0m")
    if status:
        lines.append(status)
    return "\n".join(lines) + "\n"
