"""The trainability diagnosis (agents/model/trainability.py) and its remedies (`entity_norm`,
`centre_pixels`)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import argparse  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from keras_simplicial.agents.model.architecture import (  # noqa: E402
    PAPER_DEFAULTS,
    agent_hyperparameters,
    build_agent_model,
)
from keras_simplicial.agents.model.model_config import (  # noqa: E402
    FRONT_END_MODEL,
    MODEL_CONFIGS,
    PAPER_MODEL,
    PRE_FRONT_END_MODEL,
    PRESET_MODEL,
    with_architecture_defaults,
)
from keras_simplicial.agents.model.trainability import (  # noqa: E402
    FeatureHealth,
    first_flat_site,
    gradient_norms,
    site_statistics,
    sites,
)

OBSERVATION_SHAPE = (7, 7, 3)


def boards(batch=16, seed=0):
    """Random boards: a floor with a few coloured tiles, different on every board."""
    rng = np.random.default_rng(seed)
    x = np.full((batch,) + OBSERVATION_SHAPE, 199, np.float32)
    for b in range(batch):
        for _ in range(6):
            y, c = rng.integers(7), rng.integers(7)
            x[b, y, c] = rng.integers(0, 256, size=3)
    return x


def test_site_statistics_measure_state_dependence_entity_spread_and_dead_units():
    same = np.ones((8, 5, 4))  # every state, every entity the same
    stats = site_statistics(same, "entities")
    assert stats["state_sd"] == 0 and stats["entity_sd"] == 0 and stats["rms"] == 1
    rng = np.random.default_rng(0)
    varied = rng.normal(size=(64, 5, 4))
    assert site_statistics(varied, "entities")["state_sd"] > 0.8
    # Two virtual entities that vary are left out: the standard ones are still flat.
    mixed = np.concatenate([same, rng.normal(size=(8, 2, 4))], axis=1)
    assert site_statistics(mixed, "entities", num_virtual_entities=2)["state_sd"] == 0
    relu = np.maximum(rng.normal(size=(32, 6)), 0)
    relu[:, :3] = 0  # three units dead on every state
    assert site_statistics(relu, "relu")["dead"] == 0.5


@pytest.mark.parametrize("kind", ["relational", "simplicial"])
def test_feature_health_reads_every_site_in_the_signals_order(kind):
    model = build_agent_model(kind, OBSERVATION_SHAPE, 4)
    names = [name for name, _, _ in sites(model)]
    assert names == [
        "conv_1",
        "conv_2",
        "entity_projection",
        "entities",
        "block_1",
        "block_2",
        "pooled",
        "mlp_1",
        "mlp_2",
        "mlp_3",
        "mlp_4",
    ]
    row = FeatureHealth(model)(boards())
    assert 0 < row["entities/state_sd"] < 1 and row["mlp_4/dead"] < 1
    assert {"block_2/entity_sd", "pooled/rms", "conv_1/dead"} <= set(row)
    assert first_flat_site(row) is None


def test_first_flat_site_names_where_the_signal_dies_first():
    row = {"conv_1/state_sd": 0.2, "block_1/state_sd": 1e-5, "pooled/state_sd": 0.0}
    assert first_flat_site(row) == "block_1"
    assert first_flat_site({"a/state_sd": 0.5, "mlp_1/state_sd": 0.5, "mlp_1/dead": 1.0}) == "mlp_1"


def test_a_model_whose_output_ignores_the_board_is_flat_from_the_first_site():
    model = build_agent_model("relational", OBSERVATION_SHAPE, 4)
    for layer in ("conv_1",):
        kernel, bias = model.get_layer(layer).get_weights()
        model.get_layer(layer).set_weights([np.zeros_like(kernel), np.ones_like(bias)])
    row = FeatureHealth(model)(boards())
    assert first_flat_site(row) == "conv_1"


def test_feature_health_needs_a_batch_of_states():
    health = FeatureHealth(build_agent_model("relational", OBSERVATION_SHAPE, 4))
    with pytest.raises(ValueError, match="at least 2 states"):
        health(boards(batch=1))


def test_gradient_norms_sum_by_model_part():
    model = build_agent_model("relational", OBSERVATION_SHAPE, 4)
    variables = model.trainable_variables
    gradients = [np.ones(v.shape) for v in variables]
    norms = gradient_norms(variables, gradients)
    front = sum(
        int(np.prod(v.shape)) for v in variables if v.path.split("/")[0] in ("conv_1", "conv_2")
    ) + int(np.prod(model.get_layer("entity_projection").kernel.shape))
    assert norms["grad_norm/front_end"] == pytest.approx(np.sqrt(front))
    assert "grad_norm/one_simplicial" in norms and "grad_norm/mlp_heads" in norms


def test_entity_norm_normalises_the_board_features_before_the_position_code():
    model = build_agent_model("relational", OBSERVATION_SHAPE, 4, entity_norm=True)
    assert "entity_norm" in [layer.name for layer in model.layers]
    row = FeatureHealth(model)(boards())
    # Each entity's 62 board features have mean 0 and variance 1 after the norm.
    assert row["entity_norm/rms"] == pytest.approx(1.0, abs=0.05)
    assert "entity_norm" not in [
        layer.name for layer in build_agent_model("relational", OBSERVATION_SHAPE, 4).layers
    ]
    rebuilt = keras.Model.from_config(model.get_config())
    assert "entity_norm" in [layer.name for layer in rebuilt.layers]


def test_the_paper_model_config_turns_off_every_option_that_is_not_the_papers():
    assert MODEL_CONFIGS["paper"] == PAPER_MODEL
    assert set(PAPER_MODEL) <= set(PAPER_DEFAULTS)
    params = agent_hyperparameters("simplicial", **PAPER_MODEL)
    assert params["simplicial_logit_scale"] is None
    assert params["simplicial_gain_initializer"] == "ones"
    assert params["entity_norm"] is False
    assert params["mlp_kernel_initializer"] == "glorot_uniform"
    assert params["centre_pixels"] is False
    assert list(params["conv_filters"]) == [12, 24]
    assert list(params["mlp_units"]) == [256, 256, 256, 256]
    # It sets every option the presets' model sets, so that merged over it, it is the paper's.
    assert set(PRESET_MODEL) <= set(PAPER_MODEL)


def test_the_presets_earlier_model_is_the_architecture_s_defaults():
    """`pre-front-end` (and `with_architecture_defaults`, which fills in a run.json written before
    the presets gave a model) holds the architecture's defaults of every option the presets'
    model sets."""
    assert MODEL_CONFIGS["pre-front-end"] == PRE_FRONT_END_MODEL
    assert set(PRE_FRONT_END_MODEL) == set(PRESET_MODEL)
    for key, value in PRE_FRONT_END_MODEL.items():
        default = PAPER_DEFAULTS[key]
        assert (list(default) if isinstance(default, tuple) else default) == value, key
    assert with_architecture_defaults({"num_heads": 4}) == {**PRE_FRONT_END_MODEL, "num_heads": 4}


def test_centre_pixels_scales_the_board_to_minus_one_one_instead_of_zero_one():
    observations = np.array([[[[0, 255, 51]] * 7] * 7], np.float32)

    def first_pixel(model):
        scaled = keras.Model(model.input, model.get_layer("scale_pixels").output)
        return np.asarray(scaled(observations))[0, 0, 0]

    paper = build_agent_model("relational", OBSERVATION_SHAPE, 4)
    centred = build_agent_model("relational", OBSERVATION_SHAPE, 4, centre_pixels=True)
    np.testing.assert_allclose(first_pixel(paper), [0.0, 1.0, 0.2], atol=1e-6)
    np.testing.assert_allclose(first_pixel(centred), [-1.0, 1.0, -0.6], atol=1e-6)
    rebuilt = keras.Model.from_config(centred.get_config())
    np.testing.assert_allclose(first_pixel(rebuilt), [-1.0, 1.0, -0.6], atol=1e-6)
    with pytest.raises(ValueError, match="centre_pixels must be true or false"):
        agent_hyperparameters("simplicial", centre_pixels=1)


def test_entity_norm_must_be_true_or_false():
    with pytest.raises(ValueError, match="entity_norm must be true or false"):
        agent_hyperparameters("relational", entity_norm="yes")


def test_the_mlp_kernel_initializer_is_one_of_the_named_ones():
    model = build_agent_model(
        "relational", OBSERVATION_SHAPE, 4, mlp_kernel_initializer="he_normal"
    )
    assert model.get_layer("mlp_1").get_config()["kernel_initializer"]["class_name"] == "HeNormal"
    with pytest.raises(ValueError, match="mlp_kernel_initializer must be one of"):
        agent_hyperparameters("relational", mlp_kernel_initializer="orthogonal")


def test_model_config_on_the_command_line_takes_a_name_or_json():
    from keras_simplicial.agents.commands.arguments import json_object

    parse = json_object("--model-config")
    assert parse("paper") == PAPER_MODEL and parse("paper") is not PAPER_MODEL
    front_end = parse("front-end")
    assert front_end == FRONT_END_MODEL
    front_end["conv_filters"].append(256)  # a copy down to its lists: the named config stays
    assert FRONT_END_MODEL["conv_filters"] == [128, 128]
    assert parse('{"entity_norm": true}') == {"entity_norm": True}
    names = r"one of \['front-end', 'paper', 'pre-front-end'\]"
    with pytest.raises(argparse.ArgumentTypeError, match=names):
        parse("papers")


def test_the_front_end_model_config_builds_the_study_s_front_end_for_both_agents():
    for agent in ("relational", "simplicial"):
        params = agent_hyperparameters(agent, **FRONT_END_MODEL)
        assert params["entity_norm"] is True and params["centre_pixels"] is True
        assert list(params["mlp_units"]) == [256]
        assert list(params["conv_filters"]) == [128, 128]
