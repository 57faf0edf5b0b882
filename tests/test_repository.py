"""What the clone holds: no file that git ignores is tracked, no RLlib checkpoint (optimizer state
included: a finished run keeps the policies its pages, figures and tests play as Keras weights,
`keras-simplicial export-policy`), and the committed results within their size budget
(docs/development.md, "Results and the clone's size"). Files awaiting their removal commit are
exempt from all three."""

import fnmatch
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ("benchmarks/results/", "studies/")
# The results' budget in the tree, in bytes, counted without the files awaiting removal.
RESULTS_BUDGET = 60_000_000
# Finished runs' RLlib checkpoints still tracked: removed in later commits, because one
# submission's diff can carry only so many deleted bytes (docs/development.md). Nothing reads them:
# the four runs' pages, figures, probes and tests play their exported policies (exported/iter_N).
AWAITING_REMOVAL = (
    "benchmarks/results/bridge-small-every-run/stage-e/*/checkpoints/iter_*",
    "benchmarks/results/bridge-small/*/checkpoints/iter_*",
    "benchmarks/results/bridge-small-new-stack/*/checkpoints/iter_*",
    "benchmarks/results/bridge-medium-pilot/*/checkpoints/iter_*",
    "benchmarks/results/bridge-medium-pilot-h120/*/checkpoints/iter_*",
)


def _awaiting_removal(path):
    return any(fnmatch.fnmatch(path, pattern) for pattern in AWAITING_REMOVAL)


def _git(*args):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")


def _tracked():
    return [path for path in _git("ls-files", "-z") if path]


def test_no_tracked_file_is_ignored_by_git():
    ignored = [path for path in _git("ls-files", "-z", "-ci", "--exclude-standard") if path]
    assert [path for path in ignored if not _awaiting_removal(path)] == []


def test_no_rllib_checkpoint_is_tracked():
    checkpoints = [
        path
        for path in _tracked()
        if path.startswith(RESULTS) and ("/checkpoints/iter_" in path or path.endswith(".pkl"))
    ]
    assert [path for path in checkpoints if not _awaiting_removal(path)] == []


def test_the_committed_results_stay_within_their_budget():
    sizes = [
        (ROOT / path).stat().st_size
        for path in _tracked()
        if path.startswith(RESULTS) and not _awaiting_removal(path) and (ROOT / path).exists()
    ]
    assert sum(sizes) <= RESULTS_BUDGET, f"{sum(sizes) / 1e6:.1f} MB > {RESULTS_BUDGET / 1e6} MB"
