"""The suite's tiers (docs/development.md): `make test` runs the default suite, `make
test-integration` the checks marked `integration` (they start fresh interpreters), and CI
(`.ci/run`) runs both, so splitting the suite left nothing unchecked in CI."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def recipe(target):
    """The lines of the Makefile's recipe for `target`."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_ci_runs_the_default_suite_and_then_the_integration_tier():
    commands = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert commands.index("make test") < commands.index("make test-integration"), commands


def test_the_tiers_select_complementary_markers(pytestconfig):
    assert any('pytest -m "not slow and not integration" tests' in line for line in recipe("test"))
    assert any(
        'pytest -m "integration and not slow" tests' in line for line in recipe("test-integration")
    )
    declared = [marker.split(":")[0] for marker in pytestconfig.getini("markers")]
    assert {"slow", "integration"} <= set(declared), declared
