"""agents/experiments/statistics.py: the statistics of an agent-against-agent comparison."""

import numpy as np
import pytest

from keras_simplicial.agents.experiments.statistics import (
    MIN_RUNS_FOR_BOOTSTRAP,
    compare_seeds,
    first_sustained_step,
    fisher_exact_one_sided,
    mean_win_rate_between,
    one_sided_permutation_p_value,
    permutation_p_value,
    sampled_one_sided_permutation_p_value,
)


def test_separated_groups_reach_the_smallest_p_value_their_sizes_allow():
    p, smallest = permutation_p_value([0.1, 0.2, 0.15], [0.8, 0.9, 0.85])
    assert smallest == pytest.approx(0.1)  # 2 of the 20 splits of 3 + 3 runs
    assert p == pytest.approx(0.1)
    p, smallest = permutation_p_value([0.1, 0.2, 0.15, 0.12, 0.11], [0.8, 0.9, 0.85, 0.7, 0.75])
    assert p == pytest.approx(2 / 252) and smallest == pytest.approx(2 / 252)


def test_overlapping_groups_are_not_significant():
    result = compare_seeds([0.2, 0.8, 0.5], [0.3, 0.7, 0.45])
    assert result.p_value > 0.5 and not result.significant and not result.separated
    assert result.difference == pytest.approx(np.mean([0.3, 0.7, 0.45]) - 0.5)
    wide = compare_seeds([0.2, 0.8, 0.5, 0.6, 0.3], [0.3, 0.7, 0.45, 0.5, 0.4])
    assert wide.ci95[0] < 0 < wide.ci95[1]


def test_no_bootstrap_interval_below_five_runs_and_no_significance_with_three():
    assert MIN_RUNS_FOR_BOOTSTRAP == 5
    separated = compare_seeds([0.1, 0.2, 0.15], [0.8, 0.9, 0.85])
    assert separated.ci95 is None and separated.to_json()["ci95"] is None
    # Every run of b beats every run of a, and still 3 v 3 runs cannot reach p <= 0.05.
    assert separated.separated and separated.p_value == pytest.approx(0.1)
    assert not separated.significant and not separated.can_be_significant
    assert compare_seeds([0.1, 0.2, 0.15, 0.3], [0.8, 0.9, 0.85, 0.7, 0.6]).ci95 is None


def test_difference_and_interval_point_the_same_way_from_five_runs():
    result = compare_seeds([0.1, 0.2, 0.15, 0.12, 0.18], [0.8, 0.9, 0.85, 0.82, 0.88])
    assert result.difference == pytest.approx(0.7)
    assert 0.6 <= result.ci95[0] <= result.ci95[1] <= 0.8
    assert result.significant and result.can_be_significant
    assert result.p_value == pytest.approx(2 / 252)
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


def test_a_sustained_level_needs_the_next_window_to_average_it():
    steps = np.arange(0, 1_000_001, 10_000)
    wins = np.where(steps >= 400_000, 0.95, 0.3)
    wins[steps == 100_000] = 0.95  # touched once, then fallen back

    def window_mean(start):
        return mean_win_rate_between(steps, wins, start, start + 200_000)

    # Not the step that touched 0.9 once: the first whose next 200,000 steps average 0.9, a little
    # before the rise (the curve is linear between iterations).
    start = first_sustained_step(steps, wins, 0.9, 200_000)
    assert 300_000 < start <= 400_000
    assert window_mean(start) >= 0.9 > window_mean(start - 10_000)
    assert first_sustained_step(steps, wins, 0.99, 200_000) is None
    # A run that reached the level too late to average it over a whole window never reached it.
    assert first_sustained_step(steps, wins, 0.9, 700_000) is None
    assert first_sustained_step([], [], 0.9, 200_000) is None


def test_the_sampled_permutation_test_estimates_the_exact_one():
    treated = [600_000, 362_240, 216_960, 195_200, 220_160, 410_000]
    reference = [405_760, 204_160, 571_520, 184_320, 177_920, 150_000]
    exact, _ = one_sided_permutation_p_value(treated, reference)
    p, error = sampled_one_sided_permutation_p_value(treated, reference, resamples=50_000)
    assert 0 < error < 0.003 and abs(p - exact) < 4 * error
    # Separated groups: only the observed labelling is as extreme (1 of C(10, 5) = 252).
    p, _ = sampled_one_sided_permutation_p_value([5, 6, 7, 8, 9], [0, 1, 2, 3, 4], 20_000)
    assert p == pytest.approx(1 / 252, abs=0.002)
    assert sampled_one_sided_permutation_p_value([1, 2], [1, 2], 1_000, seed=3) == (
        sampled_one_sided_permutation_p_value([1, 2], [1, 2], 1_000, seed=3)
    )
    with pytest.raises(ValueError, match="need a run each"):
        sampled_one_sided_permutation_p_value([], [1.0])


def test_fisher_s_exact_test_counts_the_tables_at_least_as_lopsided():
    # 3 of 5 against 0 of 5: C(5,3) C(5,0) / C(10,3) = 10 / 120.
    assert fisher_exact_one_sided(3, 5, 0, 5) == pytest.approx(10 / 120)
    assert fisher_exact_one_sided(0, 5, 3, 5) == pytest.approx(1.0)
    # One stall in 15 against none in 15: half of the ways to place one stall.
    assert fisher_exact_one_sided(1, 15, 0, 15) == pytest.approx(0.5)
    # Equal to the exact permutation test on 0/1 outcomes (the same conditional test).
    a, b = [1, 1, 0, 0, 0], [0, 0, 0, 1, 0]
    assert fisher_exact_one_sided(2, 5, 1, 5) == pytest.approx(
        one_sided_permutation_p_value(a, b)[0]
    )
    with pytest.raises(ValueError, match="group b needs whole numbers"):
        fisher_exact_one_sided(1, 5, 6, 5)
