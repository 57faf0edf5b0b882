"""The valid ranges of --config and --model-config values."""

import math

import pytest

from keras_simplicial.agents.model.architecture import MODEL_RANGES, PAPER_DEFAULTS
from keras_simplicial.agents.ranges import (
    Boolean,
    Integer,
    OneOf,
    OrNone,
    Real,
    Schedule,
    Sequence,
    check_ranges,
)
from keras_simplicial.agents.training.presets import (
    CONFIG_RANGES,
    PAPER_IMPALA_HYPERPARAMETERS,
    PRESETS,
)


@pytest.mark.parametrize(
    "rule, good, bad",
    [
        (Real(low=0, low_open=True), [1e-9, 3, 2.5], [0, -1, math.nan, math.inf, True, "1"]),
        (Real(low=0, high=1, low_open=True), [1, 0.5], [0, 1.01]),
        (Real(low=0, high=1, high_open=True), [0, 0.99], [1, -0.1]),
        (Integer(1), [1, 640], [0, 2.0, 2.5, True, "3"]),
        (OrNone(Real(low=0, low_open=True)), [None, 40.0], [0, -40]),
        (OneOf(("adam", "rmsprop")), ["adam"], ["sgd", 1]),
        (Boolean(), [True, False], [0, 1, "false", None]),
        (Sequence(Integer(1)), [[256, 256], (12, 24)], [[], [256, "a"], 256]),
        (
            Schedule(Real(low=0, low_open=True)),
            [None, [[0, 5e-4], [600_000, 5e-5]]],
            [[], [[0, 1e-3], [10, -1]], [[10, 1e-3], [0, 1e-4]], [[0.5, 1e-3]], [[0, 1, 2]]],
        ),
    ],
)
def test_each_rule_accepts_its_range_only(rule, good, bad):
    assert all(rule.accepts(value) for value in good), good
    assert not any(rule.accepts(value) for value in bad), [v for v in bad if rule.accepts(v)]
    assert rule.describe()


def test_every_preset_and_the_paper_are_in_range():
    for name, preset in PRESETS.items():
        check_ranges(preset["overrides"], CONFIG_RANGES, f"preset {name}")
    check_ranges(PAPER_IMPALA_HYPERPARAMETERS, CONFIG_RANGES, "Table 1")
    check_ranges(PAPER_DEFAULTS, MODEL_RANGES, "Section 4.1")


def test_a_value_out_of_range_is_named_with_its_range():
    with pytest.raises(ValueError) as error:
        check_ranges({"gamma": 1.5, "lr": -1}, CONFIG_RANGES, "--config")
    assert str(error.value) == "--config: lr must be a finite number > 0, got -1."
