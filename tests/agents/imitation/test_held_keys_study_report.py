"""studies/held-keys/report.py, run as a command the way its page shows it: the page and figure
from run records, the pilot's decision and the ladder's reading as the plan states them."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "studies" / "held-keys" / "report.py"


def record(model, rung, losses, accuracies, finished, cap=3, learning_rate=3e-4):
    agent, _, gain = model.partition("-gain-")
    curve = [
        {
            "updates": i,
            "examples_seen": 64 * i,
            "train_loss": loss,
            "train_accuracy": 0.5,
            "seen_pairs_accuracy": 0.5,
            "held_out_pairs_accuracy": accuracy,
            "seconds": float(i),
        }
        for i, (loss, accuracy) in enumerate(zip(losses, accuracies))
    ]
    reached = [row for row in curve if row["held_out_pairs_accuracy"] >= 0.9]
    endpoint = None
    if finished:
        endpoint = (
            {"reached": True, "updates": reached[0]["updates"], "examples_seen": 64}
            if reached
            else {"reached": False, "updates": cap, "examples_seen": 64 * cap}
        )
    return {
        "run": {
            "agent": agent,
            "gain": gain or None,
            "rung": rung,
            "seed": 1,
            "max_updates": cap,
            "learning_rate": learning_rate,
            "batch_size": 64,
            "target": 0.9,
        },
        "model": model,
        "finished": finished,
        "endpoint": endpoint,
        "seconds_per_update": 0.05,
        "curve": curve,
        "provenance": [
            {"package_version": "0.1.0", "git_commit": "abcdef0123" * 4, "code_modified": False}
        ],
    }


def write_page(results, page, figures):
    """Runs the report as its page shows it; returns the page's text."""
    subprocess.run(
        [sys.executable, str(REPORT), "--results", results, "--page", page, "--figures", figures],
        check=True,
        capture_output=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        timeout=300,
    )
    return page.read_text(encoding="utf-8")


def test_the_page_gives_the_decision_and_the_first_failing_rung(tmp_path):
    flat = ([0.6931] * 4, [0.5] * 4)
    runs = [
        record("relational", "board", *flat, finished=True),
        record("simplicial-gain-zeros", "board", *flat, finished=True),
        record("simplicial-gain-ones", "board", *flat, finished=True),
        record("relational", "gem-locks-only", [0.69, 0.3, 0.1, 0.05], [0.5, 0.7, 0.95, 0.97], 1),
        record("relational", "locks-marked", [0.69, 0.6, 0.6], [0.5, 0.6, 0.6], finished=False),
        record("simplicial-gain-ones", "gem-locks-only", *flat, finished=True),
        # The second stage: colours one-hot (the easiest rung), another learning rate.
        record("simplicial-gain-ones", "colours-one-hot", [0.69, 0.5, 0.2], [0.5, 0.8, 0.92], 1),
        record("simplicial-gain-ones", "gem-locks-only", [0.69, 0.6], [0.5, 0.6], 1, 2, 1e-3),
    ]
    results = tmp_path / "results"
    for run in runs:
        folder = results / f"{run['model']}--{run['run']['rung']}--{run['run']['learning_rate']}"
        folder.mkdir(parents=True)
        (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")
    page, figures = tmp_path / "page" / "README.md", tmp_path / "page" / "figures"
    text = write_page(results, page, figures)
    assert "Rule (pilot-plan.md, section 3), applied to the board runs: **no-go**" in text
    assert "1 of the 8 runs are unfinished" in text
    assert (
        "- relational: fails at **the Gem's lock tiles marked** (locks-marked): it has not "
        "learned it after 2 updates (unfinished) and left the constant prediction there; "
        "learned: gem-locks-only."
    ) in text
    assert (
        "- simplicial-gain-ones: fails at **only the Gem box and its locks** (gem-locks-only): "
        "it did not learn it within its cap of 3 updates and stayed at the constant prediction "
        "there; learned: colours-one-hot."
    ) in text
    assert (
        "- simplicial-gain-ones, only the Gem box and its locks (gem-locks-only) at 0.001: did "
        "not learn it within its cap of 2 updates, and left the constant prediction."
    ) in text
    assert "| colours-one-hot | 0.0003 | simplicial-gain-ones | 2 of 3 | 2 updates" in text
    assert (
        "| gem-locks-only | 0.0003 | relational | 3 of 3 | 2 updates (64 examples) | 0.0500 | "
        "0.0500 |"
    ) in text
    assert (
        "| board | 0.0003 | simplicial-gain-zeros | 3 of 3 | not reached (censored at 3) |"
    ) in text
    assert "abcdef0123 |" in text
    assert (figures / "curves.png").exists() and "](figures/curves.png)" in text


def comparison_record(model, seed, reached_at):
    """A finished comparison run (the board at 3e-5, cap 20,000): the target reached at
    `reached_at` updates, or censored (None)."""
    cap = 20_000
    run = record(model, "board", [0.69, 0.3], [0.5, 0.95 if reached_at else 0.6], True, cap, 3e-5)
    run["run"]["seed"] = seed
    run["endpoint"] = (
        {"reached": True, "updates": reached_at, "examples_seen": 64 * reached_at}
        if reached_at
        else {"reached": False, "updates": cap, "examples_seen": 64 * cap}
    )
    return run


def test_the_comparison_tests_each_simplicial_model_against_the_relational_one(tmp_path):
    results = tmp_path / "results"
    runs = [comparison_record("relational", seed, None) for seed in (2, 3, 4, 5, 6)]
    runs += [
        comparison_record("simplicial-gain-zeros", seed, 1_000 * seed) for seed in (2, 3, 4, 5, 6)
    ]
    runs += [comparison_record("simplicial-gain-ones", seed, None) for seed in (2, 3, 4, 5)]
    for run in runs:
        folder = results / f"{run['model']}--seed{run['run']['seed']}"
        folder.mkdir(parents=True)
        (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")
    page, figures = tmp_path / "page" / "README.md", tmp_path / "page" / "figures"
    text = write_page(results, page, figures)
    assert "## The comparison (comparison-plan.md)" in text
    assert "the comparison is not complete yet." in text  # gain ones lacks seed 6
    assert (
        "| simplicial-gain-zeros | 128,000 | 192,000 | 256,000 | 320,000 | 384,000 | 256,000 | "
        "5 of 5 |"
    ) in text
    assert "| relational | 1,280,000 (censored) |" in text
    assert "| simplicial-gain-ones | 1,280,000 (censored) |" in text and "| - | " in text
    assert "needs fewer examples" not in text  # no test before every seed is in

    # The last seed of gain ones: now both comparisons are tested.
    run = comparison_record("simplicial-gain-ones", 6, None)
    folder = results / "simplicial-gain-ones--seed6"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")
    text = write_page(results, page, figures)
    # Every zeros run below every relational run: p = 1/252, Holm x2.
    assert (
        "- simplicial-gain-zeros **needs fewer examples than the relational model**: one-sided "
        "exact permutation test p = 0.0040, Holm-adjusted over the two comparisons 0.0079"
    ) in text
    assert (
        "- simplicial-gain-ones is not shown to need fewer examples than the relational model: "
        "one-sided exact permutation test p = 1.0000"
    ) in text
