"""Attention figures, GIF, training curves and per-type win rates, from freshly initialised models
(no Ray): what is drawn is checked against the attention and the data, not only that a file is
there."""

import json
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from keras_simplicial.agents.analysis.attention_figures import (  # noqa: E402
    plot_one_simplicial,
    plot_two_simplicial,
    plot_virtual_entities,
    save_episode_gif,
    save_figures,
    sharpen_attention,
    virtual_attention_on_board,
)
from keras_simplicial.agents.analysis.episode import play_episode  # noqa: E402
from keras_simplicial.agents.model.architecture import build_agent_model  # noqa: E402
from keras_simplicial.agents.model.attention_agent import AttentionAgent  # noqa: E402
from keras_simplicial.agents.model.entities import entity_grid_shape, entity_of_tile, tile_of_entity  # noqa: E402

OBSERVATION_SHAPE = (7, 10, 3)
ENV_CONFIG = {"max_steps": 12}


@pytest.fixture(scope="module")
def agents():
    import keras

    keras.utils.set_random_seed(0)
    return {
        kind: AttentionAgent(build_agent_model(kind, OBSERVATION_SHAPE, 4), kind)
        for kind in ("relational", "simplicial")
    }


@pytest.fixture(scope="module")
def records(agents):
    return {
        kind: play_episode(agent, env_config=ENV_CONFIG, seed=5) for kind, agent in agents.items()
    }


# -- entities and tiles (Section 6.1) ------------------------------------------------------------
def test_entity_of_tile_is_the_papers_formula_and_inverts():
    rows, cols = 7, 9
    assert entity_grid_shape(OBSERVATION_SHAPE) == (5, 8)
    # Section 6.1: the rightmost column (next to the inventory) is 7, 15, 23, 31; 39 the corner.
    assert [entity_of_tile(y, 8, rows, cols) for y in (1, 2, 3, 4, 5)] == [7, 15, 23, 31, 39]
    assert entity_of_tile(1, 1, rows, cols) == 0
    for index in range(40):
        y, x = tile_of_entity(index, rows, cols)
        assert entity_of_tile(y, x, rows, cols) == index == x + (cols - 1) * (y - 1) - 1
    for bad in [(0, 1), (6, 1), (1, 0), (1, 9)]:
        with pytest.raises(ValueError, match="has no entity"):
            entity_of_tile(*bad, rows, cols)
    with pytest.raises(ValueError):
        tile_of_entity(40, rows, cols)


def test_an_entity_sees_the_tiles_around_its_tile(agents):
    """The two valid 2x2 convolutions: changing tile (y, x) changes entity_of_tile(y, x), and only
    entities whose tiles are within one step of (y, x)."""
    import keras

    model = agents["relational"].model
    entities = keras.Model(model.input, model.get_layer("entities").output)
    base = np.full((1,) + OBSERVATION_SHAPE, 199, np.float32)
    before = np.asarray(entities(base))[0]
    for y, x in [(1, 1), (3, 4), (5, 8), (2, 7)]:
        changed_board = base.copy()
        changed_board[0, y, x] = (255, 0, 0)
        after = np.asarray(entities(changed_board))[0]
        changed = set(np.flatnonzero(np.abs(after - before).max(axis=1) > 1e-6))
        assert entity_of_tile(y, x, 7, 9) in changed
        for index in changed:
            ty, tx = tile_of_entity(index, 7, 9)
            assert abs(ty - y) <= 1 and abs(tx - x) <= 1, (y, x, index)


# -- the attention of a model ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["relational", "simplicial"])
def test_attention_agent_copies_weights_and_returns_probabilities(agents, kind):
    agent = agents[kind]
    observations = np.random.default_rng(1).integers(0, 256, (3,) + OBSERVATION_SHAPE)
    logits, value, attention = agent(observations.astype(np.uint8))
    expected_logits, expected_value = agent.base_model(observations.astype(np.float32))
    np.testing.assert_allclose(logits, np.asarray(expected_logits), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(value, np.asarray(expected_value)[:, 0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(agent.logits(observations), logits, rtol=1e-5, atol=1e-5)
    size = 40 + (2 if kind == "simplicial" else 0)
    assert len(attention.one_simplicial) == 2
    for scores in attention.one_simplicial:
        assert scores.shape == (3, 2, size, size)
        np.testing.assert_allclose(scores.sum(axis=-1), 1.0, atol=1e-5)
        if kind == "simplicial":  # standard entities attend to standard entities only
            np.testing.assert_allclose(scores[:, :, :40, 40:], 0.0, atol=1e-7)
    if kind == "simplicial":
        assert len(attention.two_simplicial) == 2
        for scores in attention.two_simplicial:
            assert scores.shape == (3, 1, 40, 2, 2)
            np.testing.assert_allclose(scores.sum(axis=(-2, -1)), 1.0, atol=1e-5)
    else:
        assert attention.two_simplicial == []


def test_attention_agent_rejects_mismatched_overrides(agents):
    with pytest.raises(ValueError, match="model_overrides"):
        AttentionAgent(agents["simplicial"].base_model, "simplicial", {"feedforward_dim": 32})


def test_episodes_are_reproducible_and_consistent(agents, records):
    record = records["simplicial"]
    again = play_episode(agents["simplicial"], env_config=ENV_CONFIG, seed=5)
    np.testing.assert_array_equal(record.actions, again.actions)
    assert record.length == len(record.attention) == len(record.rewards) == 12  # max_steps
    assert record.observations.shape == (13,) + OBSERVATION_SHAPE
    assert len(record.held) == len(record.opened) == 13
    np.testing.assert_allclose(record.probabilities.sum(axis=1), 1.0)
    assert record.outcome() in ("won", "opened the bridge", "step limit")


# -- figures ---------------------------------------------------------------------------------------
def _heat_maps(figure):
    return [axis for axis in figure.axes if axis.get_xlabel() in ("key entity j", "query entity i")]


@pytest.mark.parametrize("kind", ["relational", "simplicial"])
def test_one_simplicial_figure_draws_every_head_and_iteration(records, kind):
    record = records[kind]
    figure = plot_one_simplicial(record, step=3)
    heat_maps = _heat_maps(figure)
    assert len(heat_maps) == 4  # 2 iterations x 2 heads
    for axis in heat_maps:
        assert axis.get_ylabel() == "query entity i"
        t, h = (
            int(axis.get_title().split("iteration ")[1][0]) - 1,
            int(axis.get_title().split("head ")[1][0]) - 1,
        )
        drawn = np.asarray(axis.images[0].get_array())
        expected = record.attention[3].one_simplicial[t][h]
        np.testing.assert_allclose(drawn, expected)
        np.testing.assert_allclose(drawn.sum(axis=1), 1.0, atol=1e-5)  # rows are distributions
    board = figure.axes[0]
    assert "puzzle type" in board.get_title() and "step 3 of 12" in board.get_title()
    np.testing.assert_array_equal(board.images[0].get_array(), record.observations[3])
    # Each tile of [1, R-2] x [1, C-1] carries its entity index.
    labels = {text.get_text(): text.get_position() for text in board.texts}
    assert labels["7"] == (8, 1) and labels["39"] == (8, 5)


def test_virtual_attention_multiplies_the_board_pixels():
    observation = np.random.default_rng(2).integers(0, 256, OBSERVATION_SHAPE).astype(np.uint8)
    row = np.zeros(42)
    row[entity_of_tile(3, 4, 7, 9)] = 0.5
    row[entity_of_tile(1, 1, 7, 9)] = 0.25
    row[41] = 0.25
    image, weights = virtual_attention_on_board(observation, row)
    assert image.shape == (5, 8, 3)
    np.testing.assert_allclose(image[2, 3], observation[3, 4] / 255.0)  # the peak keeps colour
    np.testing.assert_allclose(image[0, 0], observation[1, 1] / 255.0 * 0.5)
    mask = np.ones((5, 8), bool)
    mask[2, 3] = mask[0, 0] = False
    assert np.all(image[mask] == 0)
    assert weights[2, 3] == 0.5
    # Sharpening by 2 is softmax(2 * logits).
    logits = np.random.default_rng(3).normal(size=42)
    p = np.exp(logits) / np.exp(logits).sum()
    q = np.exp(2 * logits) / np.exp(2 * logits).sum()
    np.testing.assert_allclose(sharpen_attention(p, 2.0), q, rtol=1e-10)


def test_virtual_entity_figure(records):
    record = records["simplicial"]
    figure = plot_virtual_entities(record, step=-1, iteration=0, sharpen=2.0)
    panels = [axis for axis in figure.axes if axis.get_title().startswith("virtual entity")]
    assert len(panels) == 4  # 2 virtual entities x 2 heads
    for axis in panels:
        query = int(axis.get_title().split()[2])
        head = int(axis.get_title().split("head ")[1][0]) - 1
        expected, _ = virtual_attention_on_board(
            record.observations[-2], record.attention[-1].one_simplicial[0][head][query], 2.0
        )
        np.testing.assert_allclose(np.asarray(axis.images[0].get_array()), expected, atol=1e-6)
        assert "logits x2" in axis.get_title()
        assert axis.get_xlabel() == "x" and axis.get_ylabel() == "y"
    with pytest.raises(ValueError, match="only for the simplicial agent"):
        plot_virtual_entities(records["relational"])


def test_two_simplicial_figure_columns_are_distributions_over_key_pairs(records):
    import dataclasses

    # A random model's 2-simplicial attention is nearly one-hot; random distributions over the
    # pairs make the order of the rows (j, k) observable.
    record = records["simplicial"]
    rng = np.random.default_rng(4)
    pairs = rng.dirichlet(np.ones(4), size=(2, 1, 40)).reshape(2, 1, 40, 2, 2)
    first = dataclasses.replace(record.attention[0], two_simplicial=[pairs[0], pairs[1]])
    record = dataclasses.replace(record, attention=[first] + record.attention[1:])
    figure = plot_two_simplicial(record, step=0)
    panels = [axis for axis in figure.axes if axis.get_title().startswith("2-simplicial")]
    assert len(panels) == 2
    for t, axis in enumerate(panels):
        drawn = np.asarray(axis.images[0].get_array())
        assert drawn.shape == (4, 40)
        np.testing.assert_allclose(drawn.sum(axis=0), 1.0, atol=1e-5)
        scores = record.attention[0].two_simplicial[t][0]  # [N, M, M]
        np.testing.assert_allclose(drawn[1], scores[:, 0, 1])  # row (1, 2) is A^i_{1,2}
        np.testing.assert_allclose(drawn[2], scores[:, 1, 0])  # row (2, 1) is A^i_{2,1}
        assert [t.get_text() for t in axis.get_yticklabels()] == [
            "(1, 1)",
            "(1, 2)",
            "(2, 1)",
            "(2, 2)",
        ]
        assert axis.get_xlabel() == "query entity i" and axis.get_ylabel() == "key pair (j, k)"
    with pytest.raises(ValueError, match="--step must be in"):
        plot_two_simplicial(record, step=99)


def test_saved_figures_and_gif(records, tmp_path):
    import matplotlib.image
    from PIL import Image

    paths = save_figures(records["simplicial"], tmp_path, step=2, formats=("png", "pdf"))
    assert sorted(p.name for p in paths) == sorted(
        f"seed5_step002_{name}.{ext}"
        for name in ("one_simplicial", "virtual_entities", "two_simplicial")
        for ext in ("png", "pdf")
    )
    image = matplotlib.image.imread(paths[0])
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 600
    assert all(p.read_bytes()[:4] == b"%PDF" for p in paths if p.suffix == ".pdf")
    assert [p.name for p in save_figures(records["relational"], tmp_path / "r", step=0)] == [
        "seed5_step000_one_simplicial.png"
    ]
    for kind in ("simplicial", "relational"):
        gif = tmp_path / f"{kind}.gif"
        assert save_episode_gif(records[kind], gif, max_frames=5) == 5
        with Image.open(gif) as animation:
            assert animation.n_frames == 5 and animation.is_animated


# -- training curves and per-type win rates --------------------------------------------------------
def _fake_run(root, agent, fps, win_rates, step=1000):
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.run_directory import RunDirectory

    run = RunDirectory(root).create()
    RunArguments(env="BridgeBoxWorld-v0", agent=agent).write(run.run_file)
    # Every row ends `SMOOTHING_EPISODES` episodes (200), so every win rate counts.
    lines = ["training_iteration,timesteps,time_s,episodes,frames_per_s,win_rate"]
    lines += [
        f"{i + 1},{(i + 1) * step},{10.0 * (i + 1)},200,{fps if i else fps / 10},{rate}"
        for i, rate in enumerate(win_rates)
    ]
    run.metrics_file.write_text("\n".join(lines) + "\n")
    return root


def test_training_curves_mean_std_per_run_panels_and_time_adjustment(tmp_path):
    from keras_simplicial.agents.analysis.training_curves import (
        load_curve,
        plot_training_curves,
        time_adjustment,
    )

    runs = [
        _fake_run(tmp_path / "r1", "relational", 1900, [0.1, 0.3, 0.5, 0.7]),
        _fake_run(tmp_path / "r2", "relational", 1900, [0.3, 0.5, 0.7, 0.9]),
        _fake_run(tmp_path / "s1", "simplicial", 1400, [0.2, 0.4, 0.6, 0.8]),
    ]
    # The median ignores the slow first (warm-up) iteration.
    assert load_curve(runs[0])[3] == 1900
    factor, _ = time_adjustment([load_curve(r) for r in runs])
    assert factor["relational"] == 1.0 and factor["simplicial"] == pytest.approx(1.9 / 1.4)

    figure = plot_training_curves(runs, tmp_path / "plain.png", per_run_panels=True)
    summary, *panels = figure.axes
    assert summary.get_ylabel() == "fraction solved" and summary.get_xlabel() == "environment steps"
    mean_line = next(l for l in summary.get_lines() if l.get_label().startswith("relational"))
    np.testing.assert_allclose(np.interp([1000, 4000], *mean_line.get_data()), [0.2, 0.8])
    assert len(panels) == 3 and {p.get_title().split(":")[0] for p in panels} == {
        "relational",
        "simplicial",
    }

    figure = plot_training_curves(runs, tmp_path / "adjusted.pdf", time_adjusted=True)
    (summary,) = figure.axes
    assert "time-adjusted" in summary.get_xlabel()
    simplicial = next(l for l in summary.get_lines() if l.get_label().startswith("simplicial"))
    assert simplicial.get_xdata().max() == pytest.approx(4000 * 1.9 / 1.4)
    assert (tmp_path / "adjusted.pdf").read_bytes()[:4] == b"%PDF"

    # Speeds measured elsewhere (both agents on one machine) replace the runs' medians.
    figure = plot_training_curves(
        runs,
        tmp_path / "measured.png",
        time_adjusted=True,
        frames_per_s={"relational": 3000, "simplicial": 1000},
    )
    simplicial = next(l for l in figure.axes[0].get_lines() if "simplicial" in l.get_label())
    assert simplicial.get_xdata().max() == pytest.approx(4000 * 3.0)
    assert "steps x 3.00" in simplicial.get_label()
    with pytest.raises(ValueError, match="frames_per_s must name every agent.*'simplicial'"):
        plot_training_curves(
            runs, tmp_path / "x.png", time_adjusted=True, frames_per_s={"relational": 3000}
        )


def test_appendix_c_factors():
    from keras_simplicial.agents.analysis.training_curves import appendix_c_factors

    factors = appendix_c_factors({"relational": 1900.0, "simplicial": 1400.0, "other": 0.0})
    assert factors == {"relational": 1.0, "simplicial": pytest.approx(1.9 / 1.4), "other": 1.0}
    assert appendix_c_factors({}) == {}


def test_time_adjustment_compares_frames_per_s_of_one_machine_only(tmp_path):
    from keras_simplicial.agents.analysis.training_curves import (
        frames_per_s_by_machine,
        load_curve,
        shared_machine,
        time_adjustment,
    )
    from keras_simplicial.agents.training.run_directory import RunDirectory

    # Both agents ran on machine "A"; the relational run also went on, twice as fast, on "B".
    runs = [
        _fake_run(tmp_path / "r1", "relational", 2000, [0.1] * 4),
        _fake_run(tmp_path / "r2", "relational", 4000, [0.1] * 4),
        _fake_run(tmp_path / "s1", "simplicial", 1000, [0.1] * 4),
    ]
    for run in runs[:1] + runs[2:]:
        RunDirectory(run).record_machine(0, "A")
    RunDirectory(runs[1]).record_machine(0, "B")
    RunDirectory(runs[0]).record_machine(3, "B")
    machines = [frames_per_s_by_machine(run) for run in runs]
    assert machines[1] == {"B": 4000} and machines[2] == {"A": 1000}
    assert set(machines[0]) == {"A", "B"}
    curves = [load_curve(run) for run in runs]
    assert shared_machine(curves, machines) == "A"
    factor, speed = time_adjustment(curves, machines)
    assert speed == {"relational": 2000, "simplicial": 1000} and factor["simplicial"] == 2.0
    # No machine ran both agents: every run counts; a run from before machines were recorded.
    assert shared_machine(curves[1:], machines[1:]) is None
    _, speed = time_adjustment(curves[1:], machines[1:])
    assert speed == {"relational": 4000, "simplicial": 1000}
    old = _fake_run(tmp_path / "old", "relational", 3000, [0.1] * 3)
    assert frames_per_s_by_machine(old) == {"unrecorded": 3000}
    # A run without a measured frames/s does not pull its agent's mean down.
    unmeasured = [("relational", None, None, 0.0), ("relational", None, None, 2000.0)]
    factor, speed = time_adjustment([*unmeasured, ("simplicial", None, None, 1000.0)])
    assert speed == {"relational": 2000.0, "simplicial": 1000.0} and factor["simplicial"] == 2.0
    factor, speed = time_adjustment([("relational", None, None, 0.0)])
    assert speed == {"relational": 0.0} and factor == {"relational": 1.0}


def test_per_type_win_rates_mean_and_std_side_by_side(tmp_path):
    from keras_simplicial.agents.analysis.evaluation import puzzle_type_label
    from keras_simplicial.agents.analysis.win_rate_figures import (
        load_evaluations,
        parse_puzzle_type,
        plot_per_type_win_rates,
    )

    def report(agent, rates):
        return {
            "agent": agent,
            "per_puzzle_type": {
                name: {"episodes": 10, "wins": int(rate * 10), "win_rate": rate}
                for name, rate in rates.items()
            },
        }

    files = []
    for k, (agent, rates) in enumerate(
        [
            ("relational", {"(1, 1, 2)": 0.2, "(2, 2, 4)": 0.5}),
            ("relational", {"(1, 1, 2)": 0.4, "(2, 2, 4)": 0.7}),
            ("simplicial", {"(1, 1, 2)": 0.9, "(2, 2, 4)": 0.6, "(3, 3, 5)": 0.1}),
        ]
    ):
        path = tmp_path / f"evaluation_{k}.json"
        path.write_text(json.dumps(report(agent, rates)))
        files.append(path)
    assert (
        parse_puzzle_type("3,3,5")
        == parse_puzzle_type("(3, 3, 5)")
        == parse_puzzle_type("335")
        == (3, 3, 5)
    )
    with pytest.raises(ValueError, match="three integers"):
        parse_puzzle_type("3,3")
    # The key evaluation reports (and `errors`) write is the one read back.
    assert puzzle_type_label(np.array([1, 1, 2])) == "(1, 1, 2)"
    assert parse_puzzle_type(puzzle_type_label((2, 0, 0))) == (2, 0, 0)
    with pytest.raises(ValueError, match=r"no puzzle type with episodes among \[\(3, 3, 6\)\]"):
        plot_per_type_win_rates(load_evaluations(files), puzzle_types=[(3, 3, 6)])
    figure = plot_per_type_win_rates(
        load_evaluations(files), tmp_path / "types.png", puzzle_types=[(1, 1, 2), (2, 2, 4)]
    )
    (axis,) = figure.axes
    assert [t.get_text() for t in axis.get_xticklabels()] == ["(1, 1, 2)", "(2, 2, 4)"]
    assert axis.get_ylabel() == "win rate"
    bars = {
        container.get_label(): [bar.get_height() for bar in container]
        for container in axis.containers
        if hasattr(container, "patches")
    }
    relational = next(v for k, v in bars.items() if k.startswith("relational"))
    simplicial = next(v for k, v in bars.items() if k.startswith("simplicial"))
    np.testing.assert_allclose(relational, [0.3, 0.6])
    np.testing.assert_allclose(simplicial, [0.9, 0.6])
    error_bars = [c for c in axis.containers if type(c).__name__ == "ErrorbarContainer"]
    segments = error_bars[0].lines[2][0].get_segments()
    np.testing.assert_allclose([s[1][1] - s[0][1] for s in segments], [0.2, 0.2])  # 2 std
    with pytest.raises(FileNotFoundError, match="No evaluation report"):
        load_evaluations([tmp_path / "missing.json"])
