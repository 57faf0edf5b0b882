"""Is one agent ahead of the other over a few seeds, and with what confidence?

The paper compares four runs per agent by their mean and standard deviation (Figure 4). With
3-5 runs per agent, `compare_seeds` adds what a reader needs to weigh a gap: the difference of the
means, a bootstrap 95% interval for it (runs resampled within each agent) and the exact
permutation p-value of "the labels do not matter" (every split of the pooled runs into two groups
of the same sizes; with 3 runs each the smallest two-sided p-value possible is 0.1).
"""

import dataclasses
import itertools
import statistics

import numpy as np


@dataclasses.dataclass(frozen=True)
class SeedComparison:
    """`b` minus `a` over runs: means, difference, bootstrap interval, permutation p-value."""

    a: tuple
    b: tuple
    mean_a: float
    mean_b: float
    difference: float
    ci95: tuple
    p_value: float
    min_p_value: float
    higher_is_better: bool = True

    @property
    def leader(self):
        """The group whose mean is the better one, "a" or "b", by `higher_is_better`."""
        return "b" if (self.difference > 0) == self.higher_is_better else "a"

    def to_json(self):
        return dataclasses.asdict(self)


def permutation_p_value(a, b):
    """Exact two-sided p-value of |mean(b) - mean(a)| under random relabelling of the runs,
    and the smallest p-value these group sizes allow."""
    pooled = np.asarray(tuple(a) + tuple(b), dtype=float)
    observed = abs(np.mean(b) - np.mean(a))
    splits = list(itertools.combinations(range(len(pooled)), len(a)))
    extreme = 0
    for chosen in splits:
        mask = np.zeros(len(pooled), bool)
        mask[list(chosen)] = True
        if abs(pooled[~mask].mean() - pooled[mask].mean()) >= observed - 1e-12:
            extreme += 1
    # The observed split and its mirror (when sizes are equal) are always "as extreme".
    smallest = (2 if len(a) == len(b) else 1) / len(splits)
    return extreme / len(splits), smallest


def bootstrap_interval(a, b, resamples=10_000, seed=0):
    """95% percentile interval of mean(b) - mean(a), each group resampled with replacement."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(a, float), np.asarray(b, float)
    means_a = rng.choice(a, size=(resamples, len(a))).mean(axis=1)
    means_b = rng.choice(b, size=(resamples, len(b))).mean(axis=1)
    low, high = np.percentile(means_b - means_a, [2.5, 97.5])
    return float(low), float(high)


def compare_seeds(a, b, higher_is_better=True):
    """Compares per-run values `b` against `a` (e.g. simplicial against relational); with
    `higher_is_better=False` (steps to a win rate) the smaller mean is the better one."""
    a, b = tuple(float(x) for x in a), tuple(float(x) for x in b)
    if len(a) < 2 or len(b) < 2:
        raise ValueError(
            f"compare_seeds needs at least 2 runs per group, got {len(a)} and {len(b)}."
        )
    p_value, smallest = permutation_p_value(a, b)
    return SeedComparison(
        a=a,
        b=b,
        mean_a=statistics.mean(a),
        mean_b=statistics.mean(b),
        difference=statistics.mean(b) - statistics.mean(a),
        ci95=bootstrap_interval(a, b),
        p_value=p_value,
        min_p_value=smallest,
        higher_is_better=bool(higher_is_better),
    )


def mean_win_rate_between(steps, wins, start, end):
    """The training win rate averaged over environment steps in [start, end] (the area under
    the curve divided by its width; the curve is linear between iterations)."""
    steps, wins = np.asarray(steps, float), np.asarray(wins, float)
    if len(steps) == 0 or end <= start:
        raise ValueError(
            f"need a curve and end > start, got {len(steps)} points, [{start}, {end}]."
        )
    grid = np.linspace(start, end, 512)
    return float(np.interp(grid, steps, wins).mean())
