"""Is one agent ahead of the other over a few seeds, and with what confidence?

The paper compares four runs per agent by their mean and standard deviation (Figure 3). With
a few runs per agent, `compare_seeds` adds what a reader needs to weigh a gap: the difference of
the means and the exact permutation p-value of "the labels do not matter" (every split of the
pooled runs into two groups of the same sizes; with 3 runs each the smallest two-sided p-value
possible is 0.1, so no difference between 3 and 3 runs can be significant at 0.05). From
`MIN_RUNS_FOR_BOOTSTRAP` runs per group on it also gives a bootstrap 95% interval (runs resampled
within each agent); below that the interval is left out: resampling n runs per group spreads the
difference of the means by sqrt((n - 1) / n) of its standard error, and its percentiles ignore the
heavy tails of so few runs (Student's t over 3 + 3 runs puts 97.5% at 2.78 standard errors, not
1.96), so with 3 runs per group it is 1.96 * 0.82 / 2.78 = 0.58 times as wide as a t interval.

`first_sustained_step` tells when a training curve reached a level to stay: the first step from
which the win rate averaged over the next `window` environment steps is at least the level, so a
run that touches it once and falls back has not reached it.
"""

import dataclasses
import itertools
import math
import statistics

import numpy as np

MIN_RUNS_FOR_BOOTSTRAP = 5  # fewer runs per group: no bootstrap interval (see above)
SIGNIFICANCE_LEVEL = 0.05  # a permutation p-value at most this calls one group ahead


@dataclasses.dataclass(frozen=True)
class SeedComparison:
    """`b` minus `a` over runs: means, difference, permutation p-value and, from
    `MIN_RUNS_FOR_BOOTSTRAP` runs per group, a bootstrap 95% interval (None below)."""

    a: tuple
    b: tuple
    mean_a: float
    mean_b: float
    difference: float
    ci95: tuple | None
    p_value: float
    min_p_value: float
    higher_is_better: bool = True

    @property
    def leader(self):
        """The group whose mean is the better one, "a" or "b", by `higher_is_better`."""
        return "b" if (self.difference > 0) == self.higher_is_better else "a"

    @property
    def significant(self):
        """Whether the permutation test calls the `leader` ahead (p <= `SIGNIFICANCE_LEVEL`)."""
        return self.p_value <= SIGNIFICANCE_LEVEL

    @property
    def can_be_significant(self):
        """Whether these group sizes allow a significant difference at all."""
        return self.min_p_value <= SIGNIFICANCE_LEVEL

    @property
    def separated(self):
        """Whether every run of the leader beats every run of the other group: the permutation
        p-value is then the smallest the group sizes allow."""
        return self.p_value <= self.min_p_value + 1e-9

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


def one_sided_permutation_p_value(treated, reference):
    """Exact one-sided p-value of mean(treated) - mean(reference) > 0 under relabelling: the share
    of all C(n_t + n_r, n_t) splits of the pooled runs whose difference is at least the observed
    one; and the smallest p-value these sizes allow (1 / that number of splits)."""
    pooled = [float(value) for value in (*treated, *reference)]
    total, n = sum(pooled), len(treated)
    observed = statistics.mean(treated) - statistics.mean(reference)
    splits = extreme = 0
    for chosen in itertools.combinations(range(len(pooled)), n):
        group = sum(pooled[i] for i in chosen)
        difference = group / n - (total - group) / len(reference)
        extreme += difference >= observed - 1e-12
        splits += 1
    return extreme / splits, 1 / splits


def sampled_one_sided_permutation_p_value(treated, reference, resamples=200_000, seed=0):
    """`one_sided_permutation_p_value` estimated from `resamples` random relabellings (seeded),
    where the C(n_t + n_r, n_t) splits are too many to enumerate (15 + 15 runs: 155 million).

    Returns (p, standard error): p = (k + 1) / (resamples + 1), k the relabellings whose
    difference of the means is at least the observed one (the observed labelling counts as one
    more, so p is never 0), and the binomial standard error of that share."""
    pooled = np.asarray([*treated, *reference], dtype=float)
    n, total = len(treated), pooled.sum()
    if n < 1 or len(reference) < 1 or int(resamples) < 1:
        raise ValueError(
            "treated and reference need a run each and resamples must be positive, got "
            f"{len(treated)}, {len(reference)} and {resamples!r}."
        )
    observed = pooled[:n].mean() - pooled[n:].mean()
    rng = np.random.default_rng(seed)
    extreme, left = 0, int(resamples)
    while left:
        chunk = min(left, 20_000)
        relabelled = rng.permuted(np.broadcast_to(pooled, (chunk, len(pooled))), axis=1)
        group = relabelled[:, :n].sum(axis=1)
        difference = group / n - (total - group) / len(reference)
        extreme += int((difference >= observed - 1e-9).sum())
        left -= chunk
    p = (extreme + 1) / (int(resamples) + 1)
    return p, math.sqrt(p * (1 - p) / int(resamples))


def fisher_exact_one_sided(events_a, runs_a, events_b, runs_b):
    """Fisher's exact test that group a has events (stalled runs, say) more often than group b:
    the probability, given the total number of events, that a random choice of `runs_a` of the
    pooled runs holds at least `events_a` of them (the hypergeometric upper tail)."""
    for name, events, runs in (("a", events_a, runs_a), ("b", events_b, runs_b)):
        if not (isinstance(events, int) and isinstance(runs, int) and 0 <= events <= runs):
            raise ValueError(
                f"group {name} needs whole numbers 0 <= events <= runs, got {events!r} of {runs!r}."
            )
    runs, events = runs_a + runs_b, events_a + events_b
    total = math.comb(runs, runs_a)
    tail = sum(
        math.comb(events, k) * math.comb(runs - events, runs_a - k)
        for k in range(events_a, min(events, runs_a) + 1)
    )
    return tail / total


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
    `higher_is_better=False` (steps to a win rate) the smaller mean is the better one. The
    bootstrap interval is None unless both groups have `MIN_RUNS_FOR_BOOTSTRAP` runs."""
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
        ci95=bootstrap_interval(a, b) if min(len(a), len(b)) >= MIN_RUNS_FOR_BOOTSTRAP else None,
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


def first_sustained_step(steps, wins, level, window):
    """The first step of the curve (an iteration's) from which the win rate averaged over the
    next `window` environment steps is at least `level`, or None when no such window ends within
    the curve (never sustained, or too close to the end of the run to tell)."""
    steps = np.asarray(steps, float)
    for start in steps[steps + window <= steps[-1]] if len(steps) else ():
        if mean_win_rate_between(steps, wins, start, start + window) >= level:
            return int(start)
    return None


def holm_adjusted(p_values):
    """Holm's step-down adjustment of a family of p-values, in their order: the i-th smallest of
    m is multiplied by (m - i + 1), made non-decreasing, and capped at 1. A test is rejected at
    level alpha (the family-wise error rate) iff its adjusted p-value is at most alpha."""
    p_values = [float(p) for p in p_values]
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
