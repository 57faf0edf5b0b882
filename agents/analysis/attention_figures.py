"""Attention figures of Section 6.1 for one recorded episode (`episode.EpisodeRecord`).

- `plot_one_simplicial(record, step)`: the 1-simplicial attention of every head and block
  iteration as query-by-key heat maps (rows: query entity i, columns: key entity j; Figure 6).
- `plot_virtual_entities(record, step)`: the 1-simplicial attention of each virtual entity and
  head multiplied into the pixels of the board region [1, R-2] x [1, C-1], each entity on the tile
  Section 6.1 assigns it (Figures 7-9, second and third columns); `sharpen=2` multiplies the
  logits by 2 as the paper does "for visibility in print".
- `plot_two_simplicial(record, step)`: the 2-simplicial attention A^i_{j,k} with query entities i
  as columns and key pairs (j, k) of virtual entities as rows in lexicographic order
  (1,1), (1,2), (2,1), (2,2) (Figures 7-9); every column sums to one.
- `save_episode_gif(record, path)`: the whole episode, board and attention side by side.

Every figure has the board beside the attention, titled with the puzzle type (a, b, c) of
Section 6, the step and the action taken. Figures are drawn with the Agg backend, so all of this
works without a display; save them as PNG or PDF with `figure.savefig`.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import cm, colors, patches  # noqa: E402

from keras_simplicial.agents.analysis.episode import ACTION_ARROWS  # noqa: E402
from keras_simplicial.agents.model.entities import entity_of_tile, tile_of_entity  # noqa: E402
from keras_simplicial.envs.core import ACTION_NAMES  # noqa: E402

HEATMAP = "viridis"


def puzzle_type_text(puzzle_type):
    """ "(3, 2, 5)" for a bridge puzzle, "(2, -, -), no bridge" otherwise (Section 6)."""
    a, b, c = (int(v) for v in puzzle_type)
    return f"({a}, {b}, {c})" if b > 0 else f"({a}, -, -), no bridge"


def check_step(record, step):
    """The decision index `step` of `record` (negative: from the end); ValueError if absent."""
    if record.length == 0:
        raise ValueError("the episode has no decisions to show.")
    if step is None:
        step = record.length - 1
    given = step = int(step)
    if step < 0:
        step += record.length
    if not 0 <= step < record.length:
        raise ValueError(
            f"--step must be in [-{record.length}, {record.length - 1}] (the episode has "
            f"{record.length} decisions; negative counts from the end), got {given}."
        )
    if not record.attention:
        raise ValueError("the episode was played without recording attention.")
    return step


def sharpen_attention(probabilities, factor):
    """softmax(factor * logits) from softmax(logits): p^factor renormalised over the last axis."""
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if factor == 1:
        return probabilities
    powered = np.power(np.clip(probabilities, 1e-300, None), float(factor))
    return powered / powered.sum(axis=-1, keepdims=True)


def virtual_attention_on_board(observation, attention_row, sharpen=1.0):
    """The board region [1, R-2] x [1, C-1] with each tile's pixels multiplied by the attention of
    its entity (Section 6.1 mapping), scaled so that the most attended tile keeps its colour.

    Args:
        observation: [R, C+1, 3] uint8 board.
        attention_row: attention of one query over the N + M keys (only the N standard ones are
            drawn; the mass on virtual keys is reported by `plot_virtual_entities`).
        sharpen: multiply the logits by this factor first (the paper uses 2 in print).

    Returns:
        (image [R-2, C-1, 3] floats in [0, 1], weights [R-2, C-1] of the standard entities).
    """
    rows, cols = observation.shape[0], observation.shape[1] - 1
    num_entities = (rows - 2) * (cols - 1)
    row = sharpen_attention(attention_row, sharpen)
    weights = np.zeros((rows - 2, cols - 1))
    for index in range(num_entities):
        y, x = tile_of_entity(index, rows, cols)
        weights[y - 1, x - 1] = row[index]
    pixels = observation[1 : rows - 1, 1:cols].astype(np.float64) / 255.0
    peak = weights.max()
    scale = weights / peak if peak > 0 else weights
    return pixels * scale[..., None], weights


# -- panels: draw once, then `update(step)` --------------------------------------------------------
class BoardPanel:
    """The board with the entity grid of Section 6.1 (entity indices on their tiles)."""

    def __init__(self, axis, record, label_entities=True):
        self.axis, self.record = axis, record
        observation = record.observations[0]
        rows, width = observation.shape[:2]
        cols = width - 1
        self.image = axis.imshow(observation, interpolation="nearest")
        axis.axvline(cols - 0.5, color="black", linewidth=1.5)
        axis.add_patch(
            patches.Rectangle(
                (0.5, 0.5),
                cols - 1,
                rows - 2,
                fill=False,
                edgecolor="white",
                linewidth=0.8,
                linestyle="--",
            )
        )
        if label_entities:
            for y in range(1, rows - 1):
                for x in range(1, cols):
                    axis.text(
                        x,
                        y,
                        str(entity_of_tile(y, x, rows, cols)),
                        ha="center",
                        va="center",
                        fontsize=5,
                        color="black",
                        alpha=0.55,
                    )
        axis.set_xticks(range(width))
        axis.set_yticks(range(rows))
        axis.tick_params(labelsize=6)
        axis.set_xlabel("x (tile column; last: inventory)", fontsize=7)
        axis.set_ylabel("y (tile row)", fontsize=7)

    def update(self, step):
        record = self.record
        self.image.set_data(record.observations[step])
        action = record.actions[step]
        outcome = record.outcome() if step == record.length - 1 else ""
        title = (
            f"{record.kind} agent, puzzle type {puzzle_type_text(record.puzzle_type)}\n"
            f"step {step} of {record.length}: action {ACTION_ARROWS[action]} "
            f"({ACTION_NAMES[action]}), {outcome}"
        )
        self.axis.set_title(title.rstrip(", "), fontsize=8)


class OneSimplicialPanel:
    """Heat map of the 1-simplicial attention of one head and block iteration (query x key)."""

    def __init__(self, figure, axis, record, iteration, head, vmax=None):
        self.axis, self.record = axis, record
        self.iteration, self.head, self.vmax = iteration, head, vmax
        attention = record.attention[0]
        size = attention.one_simplicial[iteration].shape[-1]
        self.image = axis.imshow(
            np.zeros((size, size)),
            cmap=HEATMAP,
            vmin=0.0,
            vmax=vmax or 1.0,
            interpolation="nearest",
            aspect="equal",
        )
        self.colourbar = figure.colorbar(self.image, ax=axis, fraction=0.046, pad=0.03)
        self.colourbar.ax.tick_params(labelsize=6)
        n, m = attention.num_entities, attention.num_virtual
        if m:
            for position in (n - 0.5,):
                axis.axhline(position, color="white", linewidth=0.6)
                axis.axvline(position, color="white", linewidth=0.6)
        width = record.observations.shape[2] - 2
        ticks = list(range(0, n, width)) + ([n] if m else [])
        axis.set_xticks(ticks)
        axis.set_yticks(ticks)
        axis.tick_params(labelsize=6)
        axis.set_xlabel("key entity j", fontsize=7)
        axis.set_ylabel("query entity i", fontsize=7)
        axis.set_title(f"1-simplicial, iteration {iteration + 1}, head {head + 1}", fontsize=8)

    def matrix(self, step):
        return self.record.attention[step].one_simplicial[self.iteration][self.head]

    def update(self, step):
        matrix = self.matrix(step)
        self.image.set_data(matrix)
        if self.vmax is None:
            self.image.set_clim(0.0, max(float(matrix.max()), 1e-6))


class VirtualEntityPanel:
    """One virtual entity's 1-simplicial attention (one head) multiplied into the board pixels."""

    def __init__(self, figure, axis, record, iteration, virtual, head, sharpen=1.0):
        self.axis, self.record = axis, record
        self.iteration, self.virtual, self.head, self.sharpen = iteration, virtual, head, sharpen
        observation = record.observations[0]
        rows, cols = observation.shape[0], observation.shape[1] - 1
        self.n = record.attention[0].num_entities
        # Tile coordinates on the axes: tile (y, x) is centred on (x, y).
        self.image = axis.imshow(
            np.zeros((rows - 2, cols - 1, 3)),
            interpolation="nearest",
            extent=(0.5, cols - 0.5, rows - 1.5, 0.5),
        )
        self.mappable = cm.ScalarMappable(norm=colors.Normalize(0.0, 1.0), cmap="gray")
        self.colourbar = figure.colorbar(self.mappable, ax=axis, fraction=0.046, pad=0.03)
        self.colourbar.ax.tick_params(labelsize=6)
        self.colourbar.set_label(
            "attention" + (" (sharpened)" if sharpen != 1 else "") + " = brightness", fontsize=6
        )
        axis.set_xticks(range(1, cols))
        axis.set_yticks(range(1, rows - 1))
        axis.tick_params(labelsize=6)
        axis.set_xlabel("x", fontsize=7)
        axis.set_ylabel("y", fontsize=7)
        self.note = axis.text(0.0, -0.3, "", transform=axis.transAxes, fontsize=6, va="top")

    def update(self, step):
        record = self.record
        query = self.n + self.virtual
        row = record.attention[step].one_simplicial[self.iteration][self.head][query]
        image, weights = virtual_attention_on_board(record.observations[step], row, self.sharpen)
        self.image.set_data(np.clip(image, 0.0, 1.0))
        peak = float(weights.max())
        self.mappable.set_clim(0.0, max(peak, 1e-6))
        index = int(np.argmax(row[: self.n]))
        sharpened = f", logits x{self.sharpen:g}" if self.sharpen != 1 else ""
        self.axis.set_title(
            f"virtual entity {query} (z = {self.virtual + 1}), head "
            f"{self.head + 1}\niteration {self.iteration + 1}{sharpened}",
            fontsize=8,
        )
        tile = tile_of_entity(index, record.observations.shape[1], record.observations.shape[2] - 1)
        self.note.set_text(
            f"max {row[index]:.3f}: entity {index}, tile {tile}\n"
            f"on virtual entities: {row[self.n :].sum():.3f} (unsharpened)"
        )


class TwoSimplicialPanel:
    """A^i_{j,k}: query entities i as columns, key pairs (j, k) lexicographically as rows."""

    def __init__(self, figure, axis, record, iteration, head=0, vmax=1.0):
        self.axis, self.record = axis, record
        self.iteration, self.head, self.vmax = iteration, head, vmax
        attention = record.attention[0]
        n, m = attention.num_entities, attention.num_virtual
        self.pairs = [(j, k) for j in range(1, m + 1) for k in range(1, m + 1)]
        self.image = axis.imshow(
            np.zeros((m * m, n)),
            cmap=HEATMAP,
            vmin=0.0,
            vmax=vmax or 1.0,
            interpolation="nearest",
            aspect="auto",
        )
        self.colourbar = figure.colorbar(self.image, ax=axis, fraction=0.046, pad=0.03)
        self.colourbar.ax.tick_params(labelsize=6)
        axis.set_yticks(range(m * m))
        axis.set_yticklabels([f"({j}, {k})" for j, k in self.pairs])
        width = record.observations.shape[2] - 2
        axis.set_xticks(range(0, n, width))
        axis.tick_params(labelsize=6)
        axis.set_xlabel("query entity i", fontsize=7)
        axis.set_ylabel("key pair (j, k)", fontsize=7)

    def matrix(self, step):
        """[M*M, N]: row (j, k) in lexicographic order, column i."""
        scores = self.record.attention[step].two_simplicial[self.iteration][self.head]
        return scores.reshape(scores.shape[0], -1).T

    def update(self, step):
        matrix = self.matrix(step)
        self.image.set_data(matrix)
        if self.vmax is None:
            self.image.set_clim(0.0, max(float(matrix.max()), 1e-6))
        winners = np.bincount(matrix.argmax(axis=0), minlength=len(self.pairs))
        generic = int(winners.argmax())
        self.axis.set_title(
            f"2-simplicial, iteration {self.iteration + 1}, head {self.head + 1}: generic pair "
            f"{self.pairs[generic]} ({winners[generic]} of {matrix.shape[1]} queries)",
            fontsize=8,
        )


# -- figures -------------------------------------------------------------------------------------
def _figure_with_board(record, rows, cols, panel_size=(3.3, 2.9), board_width=1.25):
    figure = plt.figure(
        figsize=(panel_size[0] * (cols + board_width), max(3.2, panel_size[1] * rows))
    )
    grid = figure.add_gridspec(rows, cols + 1, width_ratios=[board_width] + [1] * cols)
    board = BoardPanel(figure.add_subplot(grid[:, 0]), record)
    return figure, grid, board


def _draw(figure, panels, step):
    for panel in panels:
        panel.update(step)
    figure.tight_layout()
    return figure


def _require_simplicial(record, what):
    if record.kind != "simplicial":
        raise ValueError(f"{what} exists only for the simplicial agent (this is {record.kind}).")


def plot_one_simplicial(record, step=None):
    """Figure 6: 1-simplicial attention of every block iteration (rows) and head (columns)."""
    step = check_step(record, step)
    attention = record.attention[step]
    iterations = len(attention.one_simplicial)
    heads = attention.one_simplicial[0].shape[0]
    figure, grid, board = _figure_with_board(record, iterations, heads)
    panels = [board] + [
        OneSimplicialPanel(figure, figure.add_subplot(grid[t, 1 + h]), record, t, h)
        for t in range(iterations)
        for h in range(heads)
    ]
    figure.suptitle(
        "1-simplicial attention (rows: query entity i, columns: key entity j)", fontsize=9
    )
    return _draw(figure, panels, step)


def plot_virtual_entities(record, step=None, iteration=0, sharpen=1.0):
    """Figures 7-9: each virtual entity's 1-simplicial attention in `iteration`, on the board."""
    _require_simplicial(record, "virtual-entity attention")
    step = check_step(record, step)
    attention = record.attention[step]
    if not 0 <= iteration < len(attention.one_simplicial):
        raise ValueError(
            f"iteration must be in [0, {len(attention.one_simplicial) - 1}], got {iteration}."
        )
    heads = attention.one_simplicial[0].shape[0]
    figure, grid, board = _figure_with_board(
        record, attention.num_virtual, heads, panel_size=(3.3, 2.6)
    )
    panels = [board] + [
        VirtualEntityPanel(
            figure, figure.add_subplot(grid[z, 1 + h]), record, iteration, z, h, sharpen
        )
        for z in range(attention.num_virtual)
        for h in range(heads)
    ]
    figure.suptitle(
        "1-simplicial attention of the virtual entities multiplied into the board "
        "(Section 6.1 entity-to-tile mapping)",
        fontsize=9,
    )
    return _draw(figure, panels, step)


def plot_two_simplicial(record, step=None):
    """Figures 7-9: 2-simplicial attention of every block iteration and 2-simplicial head."""
    _require_simplicial(record, "2-simplicial attention")
    step = check_step(record, step)
    attention = record.attention[step]
    iterations = len(attention.two_simplicial)
    heads = attention.two_simplicial[0].shape[0]
    figure, grid, board = _figure_with_board(
        record, iterations * heads, 1, panel_size=(6.5, 2.2), board_width=0.7
    )
    panels = [board] + [
        TwoSimplicialPanel(figure, figure.add_subplot(grid[t * heads + h, 1]), record, t, h)
        for t in range(iterations)
        for h in range(heads)
    ]
    figure.suptitle(
        "2-simplicial attention (columns: query entity i, rows: key pairs (j, k) of "
        "virtual entities)",
        fontsize=9,
    )
    return _draw(figure, panels, step)


def save_figures(record, out_dir, step=None, formats=("png",), sharpen=1.0, dpi=150):
    """Writes every figure of the agent's kind for `step` to `out_dir`; returns the paths."""
    from pathlib import Path

    step = check_step(record, step)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = {"one_simplicial": plot_one_simplicial(record, step)}
    if record.kind == "simplicial":
        figures["virtual_entities"] = plot_virtual_entities(record, step, sharpen=sharpen)
        figures["two_simplicial"] = plot_two_simplicial(record, step)
    paths = []
    for name, figure in figures.items():
        for extension in formats:
            path = out_dir / f"seed{record.seed}_step{step:03d}_{name}.{extension}"
            figure.savefig(path, dpi=dpi)
            paths.append(path)
        plt.close(figure)
    return paths


# -- the episode as a GIF ----------------------------------------------------------------------
def episode_animation(record, sharpen=1.0):
    """(figure, panels) of the GIF frame: the board, then for the simplicial agent the virtual
    entities' attention in the first iteration and the 2-simplicial attention of the last one; for
    the relational agent the 1-simplicial heads of every iteration. The 2-simplicial and
    1-simplicial heat maps share one colour scale over the whole episode, so frames compare; the
    virtual entities' panels are scaled to each frame's peak."""
    check_step(record, 0)
    attention = record.attention[0]
    iterations = len(attention.one_simplicial)
    heads = attention.one_simplicial[0].shape[0]
    if record.kind == "simplicial":
        m = attention.num_virtual
        figure = plt.figure(figsize=(3.0 * (1.2 + heads) + 5.5, 2.5 * m + 0.4))
        grid = figure.add_gridspec(m, heads + 2, width_ratios=[1.2] + [1] * heads + [1.9])
        panels = [BoardPanel(figure.add_subplot(grid[:, 0]), record)]
        panels += [
            VirtualEntityPanel(figure, figure.add_subplot(grid[z, 1 + h]), record, 0, z, h, sharpen)
            for z in range(m)
            for h in range(heads)
        ]
        panels.append(
            TwoSimplicialPanel(
                figure,
                figure.add_subplot(grid[:, heads + 1]),
                record,
                len(attention.two_simplicial) - 1,
                0,
                vmax=1.0,
            )
        )
    else:
        figure = plt.figure(figsize=(3.0 * (1.2 + heads), 2.6 * iterations + 0.4))
        grid = figure.add_gridspec(iterations, heads + 1, width_ratios=[1.2] + [1] * heads)
        panels = [BoardPanel(figure.add_subplot(grid[:, 0]), record)]
        for t in range(iterations):
            for h in range(heads):
                peak = max(float(a.one_simplicial[t][h].max()) for a in record.attention)
                panels.append(
                    OneSimplicialPanel(
                        figure, figure.add_subplot(grid[t, 1 + h]), record, t, h, vmax=peak
                    )
                )
    return figure, panels


def save_episode_gif(record, path, fps=4, dpi=80, sharpen=1.0, max_frames=None):
    """Writes the episode (every decision, up to `max_frames`) as an animated GIF; returns the
    number of frames."""
    from PIL import Image

    figure, panels = episode_animation(record, sharpen)
    frames = []
    count = record.length if max_frames is None else min(record.length, int(max_frames))
    for step in range(count):
        for panel in panels:
            panel.update(step)
        if step == 0:
            figure.tight_layout()
        figure.set_dpi(dpi)
        figure.canvas.draw()
        frames.append(Image.fromarray(np.asarray(figure.canvas.buffer_rgba())[..., :3].copy()))
    plt.close(figure)
    palette = [frame.quantize(colors=255, method=Image.Quantize.MEDIANCUT) for frame in frames]
    palette[0].save(
        path,
        save_all=True,
        append_images=palette[1:],
        duration=int(1000 / fps),
        loop=0,
        optimize=False,
    )
    return len(frames)
