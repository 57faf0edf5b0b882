"""Tile colours of (bridge) BoxWorld, Section 3 of the paper.

Key colours are the ``num_colours`` hues of an HSV circle (footnote in Section 5: saturation 0.7,
brightness 0.8, hue 18k degrees for k = 0..19 with the default 20 colours). The colour of a key is
its index into this palette; which indices a puzzle uses is drawn afresh every episode.
"""

from __future__ import annotations

import colorsys

import numpy as np

FLOOR_RGB = (199, 199, 199)
PLAYER_RGB = (127, 127, 127)
EMPTY_SLOT_RGB = (10, 10, 10)
GEM_RGB = (255, 255, 255)

SATURATION = 0.7
VALUE = 0.8


def make_palette(num_colours: int) -> np.ndarray:
    """The ``(num_colours, 3)`` uint8 palette: hue ``360 k / num_colours`` degrees, S 0.7, V 0.8."""
    if not isinstance(num_colours, (int, np.integer)) or num_colours < 1:
        raise ValueError(f"num_colours must be a positive int, got {num_colours!r}")
    rgb = [colorsys.hsv_to_rgb(k / num_colours, SATURATION, VALUE) for k in range(num_colours)]
    return np.rint(np.asarray(rgb) * 255).astype(np.uint8)


PALETTE = make_palette(20)
"""The paper's 20 key colours, ``(20, 3)`` uint8, hue 18k degrees."""
