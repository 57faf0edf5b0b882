"""agents/analysis/comparison.py: the statistics of an agent-against-agent comparison."""

import numpy as np
import pytest

from keras_simplicial.agents.analysis.comparison import (
    compare_seeds,
    mean_win_rate_between,
    permutation_p_value,
)


def test_separated_groups_reach_the_smallest_p_value_their_sizes_allow():
    p, smallest = permutation_p_value([0.1, 0.2, 0.15], [0.8, 0.9, 0.85])
    assert smallest == pytest.approx(0.1)  # 2 of the 20 splits of 3 + 3 runs
    assert p == pytest.approx(0.1)
    p, smallest = permutation_p_value([0.1, 0.2, 0.15, 0.12, 0.11], [0.8, 0.9, 0.85, 0.7, 0.75])
    assert p == pytest.approx(2 / 252) and smallest == pytest.approx(2 / 252)


def test_overlapping_groups_are_not_significant():
    result = compare_seeds([0.2, 0.8, 0.5], [0.3, 0.7, 0.45])
    assert result.p_value > 0.5
    assert result.ci95[0] < 0 < result.ci95[1]
    assert result.difference == pytest.approx(np.mean([0.3, 0.7, 0.45]) - 0.5)


def test_difference_and_interval_point_the_same_way():
    result = compare_seeds([0.1, 0.2, 0.15], [0.8, 0.9, 0.85])
    assert result.difference == pytest.approx(0.7)
    assert 0.6 <= result.ci95[0] <= result.ci95[1] <= 0.8
    with pytest.raises(ValueError, match="at least 2 runs"):
        compare_seeds([0.1], [0.2, 0.3])


def test_the_leader_follows_the_direction_of_the_measure():
    win_rates = compare_seeds([0.1, 0.2, 0.15], [0.8, 0.9, 0.85])
    assert win_rates.leader == "b"
    steps = compare_seeds([1.0, 1.2, 1.1], [2.0, 2.5, 2.2], higher_is_better=False)
    assert steps.difference > 0 and steps.leader == "a"
    assert steps.to_json()["higher_is_better"] is False


def test_mean_win_rate_between_is_the_normalised_area():
    steps, wins = [0, 100, 200], [0.0, 1.0, 1.0]
    assert mean_win_rate_between(steps, wins, 0, 200) == pytest.approx(0.75, abs=0.01)
    assert mean_win_rate_between(steps, wins, 100, 200) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="end > start"):
        mean_win_rate_between(steps, wins, 5, 5)
