"""Entities and tiles (Section 6.1): which board tile each entity of the agents stands for.

The two unpadded 2x2 convolutions of Section 4.1 turn the [R, C+1] image (board plus inventory
column) into an [R-2, C-1] grid of N = (R-2)(C-1) entities, flattened row-major. Entity (r, s) of
that grid sees image rows r..r+2 and columns s..s+2, centred on tile (r+1, s+1); Section 6.1 states
the resulting correspondence as

    tile (y, x)  <->  entity  x + (C-1)(y-1) - 1,     (y, x) in [1, R-2] x [1, C-1],

(0-indexed tiles, C the number of board columns), implemented by `entity_of_tile` and
`tile_of_entity`. Entities N .. N+M-1 are the simplicial agent's virtual entities.
"""


def entity_grid_shape(observation_shape):
    """(R-2, C-1): the grid of standard entities for observations of shape (R, C+1, channels)."""
    rows, width = int(observation_shape[0]), int(observation_shape[1])
    if rows < 3 or width < 3:
        raise ValueError(
            f"observations must have at least 3 rows and 3 columns (board plus "
            f"inventory), got shape {tuple(observation_shape)}."
        )
    return rows - 2, width - 2


def entity_of_tile(y, x, rows, cols):
    """The entity index x + (C-1)(y-1) - 1 of tile (y, x) (Section 6.1).

    Args:
        y, x: 0-indexed tile row and column, with 1 <= y <= R-2 and 1 <= x <= C-1.
        rows, cols: R and C, the board's size without the inventory column.
    """
    if not (1 <= y <= rows - 2 and 1 <= x <= cols - 1):
        raise ValueError(
            f"tile (y, x) = ({y}, {x}) has no entity: Section 6.1 maps only "
            f"[1, {rows - 2}] x [1, {cols - 1}] on a {rows} x {cols} board."
        )
    return x + (cols - 1) * (y - 1) - 1


def tile_of_entity(index, rows, cols):
    """The tile (y, x) of standard entity `index`, the inverse of `entity_of_tile`."""
    count = (rows - 2) * (cols - 1)
    if not 0 <= index < count:
        raise ValueError(f"entity {index} is not a standard entity (0 <= i < {count}).")
    return index // (cols - 1) + 1, index % (cols - 1) + 1
