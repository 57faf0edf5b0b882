"""Training diagnostics: attention statistics and the model part of each variable."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from keras_simplicial.agents.model.architecture import build_agent_model  # noqa: E402
from keras_simplicial.agents.model.model_config import FRONT_END_MODEL  # noqa: E402
from keras_simplicial.agents.model.model_parts import model_part  # noqa: E402
from keras_simplicial.agents.training.attention_health import (  # noqa: E402
    AttentionHealth,
    score_statistics,
)

EASY_ENV = {"rows": 3, "cols": 6, "max_solution_length": 1, "max_distractors": 0}


def test_score_statistics_of_uniform_and_one_hot_distributions():
    uniform = np.full((2, 3, 4, 4), 1 / 16)
    assert score_statistics(uniform, axes=(-2, -1)) == pytest.approx((1.0, 1 / 16, 0.0))
    one_hot = np.zeros((2, 3, 4, 4))
    one_hot[..., 1, 2] = 1.0
    assert score_statistics(one_hot, axes=(-2, -1)) == pytest.approx((0.0, 1.0, 1.0))
    mixed = np.stack([uniform[0, 0], one_hot[0, 0]])  # one of each
    assert score_statistics(mixed, axes=(-2, -1)) == pytest.approx((0.5, (1 + 1 / 16) / 2, 0.5))


@pytest.mark.parametrize(
    "name,part",
    [
        ("simplicial_block/simplicial_attention/query_kernel:0", "simplicial_query_key"),
        ("simplicial_block/simplicial_attention/key2_kernel:0", "simplicial_query_key"),
        ("simplicial_block/simplicial_attention/B:0", "simplicial_value_B"),
        ("simplicial_block/simplicial_attention/value_kernel:0", "simplicial_value_B"),
        ("simplicial_block/simplicial_attention/value2_kernel:0", "simplicial_value_B"),
        ("transformer_block/attention/key_kernel:0", "one_simplicial"),
        ("simplicial_block/feedforward_hidden/kernel:0", "block_feedforward_norms"),
        ("simplicial_block/simplicial_norm/gamma:0", "block_feedforward_norms"),
        ("mlp_3/bias:0", "mlp_heads"),
        ("default_policy/value/kernel:0", "mlp_heads"),
        ("conv_2/kernel:0", "front_end"),
        ("virtual_entities/embeddings:0", "front_end"),
        ("entity_norm/gamma:0", "front_end"),
    ],
)
def test_every_agent_variable_has_a_part(name, part):
    assert model_part(name) == part


@pytest.mark.parametrize("model_config", [{}, FRONT_END_MODEL])
def test_every_variable_of_both_agents_is_in_a_named_part(model_config):
    for kind in ("relational", "simplicial"):
        model = build_agent_model(kind, (3, 7, 3), 4, **model_config)
        parts = {model_part(v.value.name) for v in model.trainable_weights}
        assert "other" not in parts, kind
        # The new stack names them by their Keras paths (`KerasAgentIMPALALearner`).
        assert {model_part(v.path) for v in model.trainable_weights} == parts, kind


def test_attention_health_of_a_fresh_simplicial_agent_is_not_saturated():
    keras.utils.set_random_seed(0)  # the probe has 16 boards: an unseeded model varies a lot
    model = build_agent_model("simplicial", (3, 7, 3), 4)
    health = AttentionHealth(model, "simplicial", {}, "BoxWorld-v0", EASY_ENV, num_boards=16)
    stats = health()
    assert {k for k in stats if k.startswith("attention/")} == {
        "attention/one_simplicial_entropy",
        "attention/simplicial_entropy",
        "attention/simplicial_max_prob",
        "attention/simplicial_saturated",
    }
    # Where the signal stands: the entities, both block iterations, the pooled vector, the MLP.
    assert {k for k in stats if k.startswith("trainability/")} == {
        "trainability/entities/state_sd",
        "trainability/block_1/state_sd",
        "trainability/block_2/state_sd",
        "trainability/pooled/state_sd",
        "trainability/mlp_dead",
    }
    assert 0.0 < stats["trainability/pooled/state_sd"] and 0.0 <= stats["trainability/mlp_dead"] < 1
    assert 0.0 <= stats["attention/simplicial_entropy"] <= 1.0
    assert stats["attention/simplicial_saturated"] < 0.5
    # The probe follows the model's weights: a huge routing kernel saturates the softmax.
    layer = model.get_layer("simplicial_block").simplicial_attention
    layer.query_kernel.assign(layer.query_kernel.numpy() * 50.0)
    assert health()["attention/simplicial_max_prob"] > stats["attention/simplicial_max_prob"]
    relational = build_agent_model("relational", (3, 7, 3), 4)
    stats = AttentionHealth(relational, "relational", {}, "BoxWorld-v0", EASY_ENV, 8)()
    assert {k for k in stats if k.startswith("attention/")} == {"attention/one_simplicial_entropy"}
    assert "trainability/block_2/state_sd" in stats
