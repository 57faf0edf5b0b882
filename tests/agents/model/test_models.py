"""The agent models of Section 4.1 and their RLlib wrapper, without Ray."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_simplicial import TwoSimplicialTransformerBlock  # noqa: E402
from keras_simplicial.agents.model.architecture import PAPER_DEFAULTS, build_agent_model  # noqa: E402

OBSERVATION_SHAPE = (7, 10, 3)


def observations(batch=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(batch,) + OBSERVATION_SHAPE).astype("float32")


def test_the_defaults_every_committed_run_rebuilds_from_stay_as_they_are():
    # run.json records only a run's model_overrides, and every run, policy and checkpoint is
    # rebuilt from these defaults plus them: a changed default would load an old run into another
    # model (another shape, or silently another input scale). A new default for new runs is
    # written into their run.json instead, as the gradient clipping's was (run_arguments.py).
    assert PAPER_DEFAULTS == {
        "conv_filters": (12, 24),
        "entity_dim": 64,
        "num_heads": 2,
        "key_dim": 32,
        "num_simplicial_heads": 1,
        "simplicial_key_dim": 48,
        "num_virtual_entities": 2,
        "feedforward_dim": 64,
        "num_block_iterations": 2,
        "mlp_units": (256, 256, 256, 256),
        "layer_norm_epsilon": 1e-5,
        "simplicial_logit_scale": "auto",
        "simplicial_gain_initializer": "zeros",
        "entity_norm": False,
        "mlp_kernel_initializer": "glorot_uniform",
        "centre_pixels": False,
    }


@pytest.mark.parametrize("kind", ["relational", "simplicial"])
def test_outputs_and_entities_follow_section_5_1(kind):
    model = build_agent_model(kind, OBSERVATION_SHAPE, 4)
    logits, value = model(observations())
    assert logits.shape == (3, 4) and value.shape == (3, 1)
    # (R-2)(C-1) = 5 * 8 = 40 entities of width 64, plus 2 virtual ones for the simplicial agent.
    assert model.get_layer("entities").output.shape[1:] == (40, 64)
    block_name = "transformer_block" if kind == "relational" else "simplicial_block"
    block = model.get_layer(block_name)
    expected_entities = 40 + (2 if kind == "simplicial" else 0)
    assert block.output.shape[1:] == (expected_entities, 64)


@pytest.mark.parametrize("kind", ["relational", "simplicial"])
def test_block_weights_are_shared_between_the_two_iterations(kind):
    model = build_agent_model(kind, OBSERVATION_SHAPE, 4)
    blocks = [layer for layer in model.layers if layer.name.endswith("_block")]
    assert len(blocks) == 1, "one block instance, applied twice"
    assert len(blocks[0]._inbound_nodes) == 2


def test_simplicial_agent_has_one_2_simplicial_head_of_48_and_two_virtual_entities():
    model = build_agent_model("simplicial", OBSERVATION_SHAPE, 4, return_attention_scores=True)
    outputs = model(observations(batch=2))
    # logits, value, then (1-simplicial, 2-simplicial) scores of each of the two iterations
    assert len(outputs) == 2 + 2 * PAPER_DEFAULTS["num_block_iterations"]
    one_simplicial, two_simplicial = outputs[2], outputs[3]
    assert one_simplicial.shape == (2, 2, 42, 42)
    assert two_simplicial.shape == (2, 1, 40, 2, 2)
    np.testing.assert_allclose(np.sum(two_simplicial, axis=(-2, -1)), 1.0, atol=1e-5)
    block = model.get_layer("simplicial_block")
    assert isinstance(block, TwoSimplicialTransformerBlock)
    # B: H (x) H -> H with dim H = 48 is the largest weight of the block.
    assert max(int(np.prod(w.shape)) for w in block.weights) == 48**3


def test_summary_lists_every_layer_with_parameters(capsys):
    model = build_agent_model("simplicial", OBSERVATION_SHAPE, 4)
    model.summary()
    text = capsys.readouterr().out
    for name in (
        "conv_1",
        "conv_2",
        "entity_projection",
        "position_code",
        "virtual_entities",
        "simplicial_block",
        "max_pool_entities",
        "mlp_4",
        "logits",
        "value",
    ):
        assert name in text
    assert f"{model.count_params():,}" in text


def test_overrides_and_bad_arguments():
    model = build_agent_model("relational", OBSERVATION_SHAPE, 4, num_heads=4, mlp_units=(32,))
    assert model.get_layer("mlp_1").units == 32
    with pytest.raises(ValueError, match="kind must be one of"):
        build_agent_model("hopfield", OBSERVATION_SHAPE, 4)
    with pytest.raises(ValueError, match="Unknown agent hyperparameter"):
        build_agent_model("relational", OBSERVATION_SHAPE, 4, num_layers=3)
    with pytest.raises(ValueError, match="num_actions"):
        build_agent_model("relational", OBSERVATION_SHAPE, 0)
    with pytest.raises(ValueError, match="num_virtual_entities"):
        build_agent_model("simplicial", OBSERVATION_SHAPE, 4, num_virtual_entities=0)
    with pytest.raises(ValueError, match=r"simplicial_gain_initializer must be one of \('ones'"):
        build_agent_model("simplicial", OBSERVATION_SHAPE, 4, simplicial_gain_initializer="one")
    zero_gain = build_agent_model(
        "simplicial", OBSERVATION_SHAPE, 4, simplicial_gain_initializer="zeros"
    )
    block = zero_gain.get_layer("simplicial_block")
    assert not np.any(np.asarray(block.simplicial_norm.gamma))


@pytest.mark.parametrize("jit_compile", [True, False])
@pytest.mark.parametrize("kind", ["relational", "simplicial"])
def test_tf_model_v2_exposes_the_variables_the_forward_pass_uses(kind, jit_compile):
    from ray.rllib.models import ModelCatalog

    from keras_simplicial.agents.model.rllib_model import (
        MODEL_NAMES,
        KerasAgentModel,
        register_agent_models,
    )

    register_agent_models()  # the catalog forgets custom models at ray.shutdown()

    observation_space = gymnasium.spaces.Box(0, 255, OBSERVATION_SHAPE, np.uint8)
    action_space = gymnasium.spaces.Discrete(4)
    model = ModelCatalog.get_model_v2(
        observation_space,
        action_space,
        4,
        {"custom_model": MODEL_NAMES[kind], "custom_model_config": {"jit_compile": jit_compile}},
        framework="tf2",
    )
    assert isinstance(model, KerasAgentModel) and model.kind == kind
    assert model._traced_model._jit_compile is jit_compile
    variables = model.trainable_variables()
    assert variables and all(isinstance(v, tf.Variable) for v in variables)
    assert len(variables) == len(model.base_model.trainable_weights)
    with tf.GradientTape() as tape:
        logits, _ = model({"obs": tf.constant(observations())}, [], None)
        loss = tf.reduce_sum(logits) + tf.reduce_sum(model.value_function())
    gradients = tape.gradient(loss, variables)
    assert all(g is not None for g in gradients), "every variable reaches the loss"
    # The compiled forward pass computes what the Keras model computes.
    eager_logits, eager_value = model.base_model(observations())
    np.testing.assert_allclose(logits.numpy(), np.asarray(eager_logits), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        model.value_function().numpy(), np.asarray(eager_value)[:, 0], rtol=1e-4, atol=1e-5
    )
    # set_weights through the exposed variables changes what the model computes
    before = logits.numpy()
    for variable in variables:
        variable.assign(variable * 0.5)
    after, _ = model({"obs": tf.constant(observations())}, [], None)
    assert not np.allclose(before, after.numpy())
