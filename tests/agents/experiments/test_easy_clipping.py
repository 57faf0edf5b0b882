"""studies/easy-recipe/easy_clipping.py: the rule that decides the easy preset's gradient clipping,
read against the acceptance table it compares with."""

from pathlib import Path

import pytest
from sweep_reports import sweep_report

from keras_simplicial.agents.experiments import easy_clipping as script

ROOT = Path(__file__).resolve().parents[3]


def test_the_per_variable_runs_are_read_from_the_acceptance_table():
    steps = script.per_variable_steps(ROOT / "docs" / "benchmarks.md")
    assert set(steps) == {"relational", "simplicial"}
    assert sorted(steps["relational"]) == [1, 2, 3, 4, 5]
    assert steps["relational"][1] == 235_520 and steps["simplicial"][5] == 275_840


@pytest.mark.parametrize(
    "steps,within,final,worse",
    [
        ([100_000] * 5, 1.0, 1.0, False),  # faster, targets met
        ([500_000, 510_000, 520_000, 530_000, None], 1.0, 1.0, True),  # slower: p = 1/252
        ([100_000] * 5, 0.98, 1.0, True),  # a must target missed
        ([100_000] * 5, 1.0, 0.94, True),
    ],
)
def test_an_agent_learns_worse_when_slower_or_short_of_a_target(steps, within, final, worse):
    reference = {agent: dict(enumerate([200_000] * 5, 1)) for agent in ("relational", "simplicial")}
    reference["relational"][1] = 190_000  # ties only at the mean's level would be degenerate
    results = script.verdict(sweep_report(steps, within, final), reference, 600_000)
    assert results["relational"]["learns_worse"] is worse
    if steps[0] == 500_000:
        assert results["relational"]["p_global_slower"] == pytest.approx(1 / 252)
        assert results["relational"]["global_steps_to_0.99"][-1] == 600_000  # never: run length
    assert ("keeps per-variable" in script.markdown(results)) is worse
