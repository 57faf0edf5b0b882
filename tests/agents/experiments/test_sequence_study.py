"""The sequence study's models and seed runs (agents/experiments/sequence_study.py)."""

import json

import pytest

from keras_simplicial.agents.experiments import sequence_study
from keras_simplicial.agents.experiments.statistics import holm_adjusted

SETTINGS = sequence_study.Settings(
    tasks={
        "match3": ("causal_match3", {"length": 6, "modulus": 7}),
        "recall": ("pair_recall", {"num_keys": 4, "num_values": 4, "num_queries": 1}),
    },
    epochs=1,
    train_size=32,
    test_size=16,
    width=8,
    key_dim=4,
    simplicial_key_dim=4,
    simplicial_value_dim=4,
    feedforward_dim=16,
    window=(3, 2),
    jit_compile=False,
)


@pytest.mark.parametrize("model_name", list(sequence_study.MODELS))
def test_models_have_the_dot_product_models_parameters(model_name):
    width, count = sequence_study.matched_feedforward(SETTINGS, model_name, 6, 7, 2)
    target = sequence_study.matched_feedforward(SETTINGS, "dot-product", 6, 7, 2)[1]
    model = sequence_study.build_model(SETTINGS, model_name, width, 6, 7, 2)
    assert model.count_params() == count
    assert abs(count - target) <= SETTINGS.tolerance * target


@pytest.mark.slow
def test_a_seed_trains_the_same_after_other_seeds():
    """The compiled model is reused across seeds: seed 2 after seed 1 is seed 2 alone."""
    after = dict(sequence_study.train_runs(SETTINGS, "recall", "simplicial-window", [1, 2]))
    alone = dict(sequence_study.train_runs(SETTINGS, "recall", "simplicial-window", [2]))
    assert after[2]["epochs"][0]["train_loss"] == pytest.approx(alone[2]["epochs"][0]["train_loss"])
    assert after[2]["endpoint"] == alone[2]["endpoint"]
    record = after[1]
    assert record["task"] == "recall" and record["seed"] == 1
    assert 0.0 <= record["endpoint"]["test_accuracy"] <= 1.0
    assert record["environment"]["keras_simplicial"]
    json.dumps(record)  # a run record is JSON


def test_bad_model_and_task():
    with pytest.raises(ValueError, match="model"):
        sequence_study.check_model("attention")
    with pytest.raises(ValueError, match="task"):
        sequence_study.task_data(SETTINGS, "match2", 4, 0, "train")


def test_holm_adjusted():
    # Sorted 0.01, 0.02, 0.04, 0.30 of 4: 0.04, 0.06, 0.08, 0.30, in the input's order.
    assert holm_adjusted([0.04, 0.01, 0.30, 0.02]) == pytest.approx([0.08, 0.04, 0.30, 0.06])
    assert holm_adjusted([0.5, 0.6]) == pytest.approx([1.0, 1.0])


def _record(task, model, seed, accuracy, seconds):
    return {
        "task": task,
        "model": model,
        "seed": seed,
        "endpoint": {"test_accuracy": accuracy, "epoch": 10},
        "chance": 0.5,
        "seconds_per_epoch": seconds,
    }


def test_summarise_tests_every_model_against_dot_product_with_holm():
    records = []
    for seed in range(1, 9):
        records.append(_record("a", "dot-product", seed, 0.50 + 0.001 * seed, 1.0))
        records.append(_record("a", "simplicial", seed, 0.70 + 0.001 * seed, 3.0))  # separated
        records.append(_record("a", "trilinear", seed, 0.50 + 0.001 * (9 - seed), 2.0))
    rows = {row.model: row for row in sequence_study.summarise(records)}
    assert list(rows) == ["dot-product", "simplicial", "trilinear"]
    assert rows["dot-product"].decision == "reference"
    simplicial, trilinear = rows["simplicial"], rows["trilinear"]
    assert simplicial.cost_ratio == pytest.approx(3.0) and trilinear.cost_ratio == 2.0
    # 8 + 8 separated seeds: p = 2 / C(16, 8); Holm over the 2 tests doubles the smaller one.
    assert simplicial.comparison.p_value == pytest.approx(2 / 12870)
    assert simplicial.holm_p_value == pytest.approx(4 / 12870)
    assert simplicial.decision == "better"
    assert trilinear.comparison.p_value == pytest.approx(1.0)
    assert trilinear.decision == "no difference shown"
