"""The layer benchmark's scripts, studies/simplicial-attention-tasks/run.py (quick mode, resuming)
and report.py (the page from fake results), each run as a command, the way the docs show them."""

import hashlib
import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from keras_simplicial.agents.provenance import provenance

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "studies" / "simplicial-attention-tasks"
TRAIN = STUDY / "run.py"
REPORT = STUDY / "report.py"
PREREGISTRATION = STUDY / "preregistration.md"


def run(script, *args, check=True):
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=environment,
    )
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.mark.integration
def test_quick_run_writes_one_json_per_run_and_resumes(tmp_path):
    out = tmp_path / "runs"
    args = ["--quick", "--out", out, "--tasks", "two-key", "--models", "dot-product"]
    first = run(TRAIN, *args, "--seeds", "3", "--threads", "1")
    path = out / "two-key--dot-product--seed3.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["task"] == "two-key" and record["model"] == "dot-product" and record["seed"] == 3
    assert record["quick"] is True and len(record["epochs"]) == 2
    assert record["endpoint"] == {
        "test_accuracy": record["epochs"][-1]["test_accuracy"],
        "epoch": 2,
    }
    assert all(0.0 <= row["test_accuracy"] <= 1.0 for row in record["epochs"])
    assert record["parameters"] > 0 and record["seconds_per_epoch"] > 0
    assert record["settings"]["positive_rate_train"] == 0.5
    expected_hash = hashlib.sha256(PREREGISTRATION.read_bytes()).hexdigest()
    assert record["preregistration_sha256"] == expected_hash
    assert record["provenance"] == provenance()  # the layers that trained it
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["runs"]["two-key/dot-product"]["parameters"] == record["parameters"]
    assert "1 to do" in first.stdout and path.name in first.stdout
    assert sorted(p.name for p in out.iterdir()) == ["plan.json", path.name]  # no temporary left

    before = path.read_bytes()
    # A plan written at another commit, planning the same runs, is kept: running a finished
    # campaign again leaves the checkout as it was.
    plan["provenance"] = {**plan["provenance"], "git_commit": "an earlier commit"}
    (out / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    planned_before = (out / "plan.json").read_bytes()
    again = run(TRAIN, *args, "--seeds", "3", "--dry-run")
    assert "1 runs planned, 1 done, 0 to do" in again.stdout
    again = run(TRAIN, *args, "--seeds", "3")
    assert "0 to do" in again.stdout and path.read_bytes() == before
    assert (out / "plan.json").read_bytes() == planned_before
    run(TRAIN, *args, "--seeds", "3", "4", "--dry-run")  # another plan: written
    assert json.loads((out / "plan.json").read_text(encoding="utf-8"))["seeds"] == [3, 4]

    refused = run(TRAIN, "--quick", check=False)  # not into the committed results folder
    assert refused.returncode != 0 and "--out" in refused.stderr


@pytest.mark.integration
def test_dry_run_plans_every_pre_registered_run(tmp_path):
    result = run(TRAIN, "--dry-run", "--out", tmp_path)
    assert "136 runs planned, 0 done, 136 to do" in result.stdout
    plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    counts = [entry["parameters"] for entry in plan["runs"].values()]
    for task in plan["tasks"]:
        reference = plan["runs"][f"{task}/dot-product"]["parameters"]
        for key, entry in plan["runs"].items():
            if key.startswith(f"{task}/"):
                assert abs(entry["parameters"] - reference) <= 0.1 * reference, key
    assert len(counts) == 17 and plan["seeds"] == list(range(1, 9))
    assert not list(tmp_path.glob("*--*.json"))  # trained nothing


def fake_run(task, model, seed, final, registered, epochs=4):
    curve = [0.5 + (final - 0.5) * (e + 1) / epochs for e in range(epochs)]
    return {
        "task": task,
        "model": model,
        "seed": seed,
        "endpoint": {"test_accuracy": final, "epoch": epochs},
        "parameters": 1000 if model == "dot-product" else 1010,
        "feedforward_dim": 8,
        "seconds_per_epoch": 1.0 if model == "dot-product" else 2.5,
        "epochs": [
            {
                "epoch": e + 1,
                "train_loss": 0.5,
                "train_accuracy": accuracy,
                "test_loss": 0.5,
                "test_accuracy": accuracy,
                "seconds": 1.0,
            }
            for e, accuracy in enumerate(curve)
        ],
        "environment": {"backend": "tensorflow", "keras": "3", "machine": "test"},
        "preregistration_sha256": registered,
    }


def write_results(folder, runs):
    folder.mkdir(parents=True, exist_ok=True)
    for record in runs:
        name = f"{record['task']}--{record['model']}--seed{record['seed']}.json"
        (folder / name).write_text(json.dumps(record), encoding="utf-8")


def report(
    tmp_path,
    runs,
    preregistration_text="the plan\n",
    first_campaign=(),
    pilot=(),
    secondary=(),
    checks=(),
):
    """The page and figures folder of report.py on fake runs: the primary's `runs`, the first
    campaign's, and the length-16 secondary's `pilot`, `secondary` and exploratory `checks` runs
    (its pre-registration's text: SECONDARY_TEXT)."""
    earlier = tmp_path / "first-campaign"
    write_results(earlier, first_campaign)
    secondary_results, secondary_pilot = tmp_path / "length-16" / "results", tmp_path / "pilot"
    write_results(secondary_results, secondary)
    write_results(secondary_pilot, pilot)
    checks_folder = tmp_path / "checks"
    write_results(checks_folder, checks)
    secondary_registration = tmp_path / "length-16-preregistration.md"
    secondary_registration.write_text(SECONDARY_TEXT, encoding="utf-8")
    preregistration = tmp_path / "preregistration.md"
    preregistration.write_text(preregistration_text, encoding="utf-8")
    results = tmp_path / "results"
    write_results(results, runs)
    results.mkdir(exist_ok=True)
    page = tmp_path / "docs" / "page.md"
    figures = tmp_path / "docs" / "figures"
    run(
        REPORT,
        "--results",
        results,
        "--page",
        page,
        "--figures",
        figures,
        "--preregistration",
        preregistration,
        "--first-campaign",
        earlier,
        "--secondary-results",
        secondary_results,
        "--secondary-pilot",
        secondary_pilot,
        "--secondary-preregistration",
        secondary_registration,
        "--checks",
        checks_folder,
    )
    return page.read_text(encoding="utf-8"), figures


SECONDARY_TEXT = "the secondary's plan\n"


def one_sided_p(treated, reference):
    """Independent of the report's code: numpy over every split."""
    pooled = np.array(treated + reference)
    observed = np.mean(treated) - np.mean(reference)
    hits = total = 0
    for chosen in itertools.combinations(range(16), 8):
        mask = np.zeros(16, bool)
        mask[list(chosen)] = True
        hits += pooled[mask].mean() - pooled[~mask].mean() >= observed - 1e-12
        total += 1
    return hits / total


def test_report_computes_the_pre_registered_test_from_the_runs(tmp_path):
    registered = hashlib.sha256(b"the plan\n").hexdigest()
    dot = [0.80, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86, 0.87]
    trilinear = [0.83, 0.846, 0.86, 0.875, 0.89, 0.905, 0.92, 0.935]
    runs = [fake_run("match3", "dot-product", s + 1, a, registered) for s, a in enumerate(dot)]
    runs += [
        fake_run("match3", "trilinear-pairs", s + 1, a, registered) for s, a in enumerate(trilinear)
    ]
    runs += [fake_run("two-key", "dot-product", s, 1.0, registered) for s in (1, 2, 3)]
    text, figures = report(tmp_path, runs)

    p = one_sided_p(trilinear, dot)
    assert 1 / 12870 < p < 0.05  # not the trivial extreme: the test counts splits
    difference = np.mean(trilinear) - np.mean(dot)
    holm = min(1.0, 13 * p)  # one comparison done: the first of 13 (missing ones count as 1)
    assert (
        f"| match3 | trilinear-pairs | {difference:+.3f} | {p:.4f} | {holm:.4f} | "
        f"{'**yes**' if holm <= 0.05 else 'no'} |"
    ) in text
    sd = np.std(trilinear, ddof=1)
    low, high = np.mean(trilinear) + np.array([-1, 1]) * 2.365 * sd / math.sqrt(8)
    assert (
        f"| trilinear-pairs | 8 of 8 | 1,010 | {np.mean(trilinear):.3f} [{low:.3f}, {high:.3f}]"
        in (text)
    )
    assert (
        "| match3 | simplicial-pairs | not tested yet: seeds done 0 of 8, dot-product 8 of 8"
        in (text)
    )
    assert (
        "| two-key | simplicial-pairs | not tested yet: seeds done 0 of 8, dot-product 3 of 8"
        in (text)
    )
    assert "| dot-product | 3 of 8 | 1,000 | 1.000 (one run)" not in text
    assert "| dot-product | 3 of 8 | 1,000 | 1.000 [1.000, 1.000]" in text
    assert "| match3 | trilinear-pairs | 2.50 | 2.50 |" in text  # seconds per epoch, ratio
    assert "### Match2 (the control)\n\nNo run of this task has finished yet." in text
    assert "![Held-out accuracy per epoch, match3](figures/match3.png)" in text
    assert sorted(path.name for path in figures.iterdir()) == ["match3.png", "two-key.png"]
    assert "Pre-registration changed" not in text and "Quick runs" not in text
    assert "No plan.json in the results folder yet" in text


def test_report_without_results_says_so_and_flags_another_preregistration(tmp_path):
    text, figures = report(tmp_path, [])
    assert "No run has finished yet" in text and "Nothing yet: no run has finished." in text
    assert "![" not in text and not figures.exists()
    assert "not tested yet: seeds done 0 of 8, dot-product 0 of 8" in text

    other = tmp_path / "other"
    other.mkdir()
    text, _ = report(other, [fake_run("match3", "dot-product", 1, 0.8, "an older text")])
    assert "Pre-registration changed" in text and "1 runs were made" in text


def test_report_names_the_layers_and_keeps_the_first_campaign_in_a_note(tmp_path):
    registered = hashlib.sha256(b"the plan\n").hexdigest()
    commit = "0123456789abcdef0123456789abcdef01234567"
    runs = [fake_run("match3", "dot-product", s, 0.80 + 0.01 * s, registered) for s in (1, 2)]
    for record in runs:
        record["provenance"] = {
            "package_version": "0.1.0",
            "git_commit": commit,
            "code_modified": False,
        }
    runs.append(fake_run("match3", "trilinear-pairs", 1, 0.9, registered))  # no provenance
    earlier = [fake_run("match3", "dot-product", s, 0.70, "old") for s in (1, 2, 3)]
    earlier += [fake_run("match2", "dot-product", 1, 0.99, "old")]
    text, _ = report(tmp_path, runs, first_campaign=earlier)
    assert (
        "**Which layers trained these runs** (recorded in each run's file): 2 runs by "
        "keras-simplicial 0.1.0 at commit 0123456789; 1 runs whose file names no commit."
    ) in text
    assert "Partial results" in text and "3 of the 136 planned runs have finished" in text
    assert "| match3 | dot-product | 0.700 (3) | 0.815 (2) | +0.115 |" in text
    assert "| match2 | dot-product | 0.990 (1) | not run yet |  |" in text
    assert "[first-campaign.md](first-campaign.md)" in text


def pilot_run(model, final, flat_from, epochs=60, seed=100, task="match3-16", registered=None):
    """A run whose held-out accuracy rises linearly from 0.5 to `final` at epoch `flat_from`, then
    stays there."""
    record = fake_run(task, model, seed, final, registered, epochs=epochs)
    for row in record["epochs"]:
        row["test_accuracy"] = 0.5 + (final - 0.5) * min(1.0, (row["epoch"] - 1) / (flat_from - 1))
    return record


def test_report_decides_the_secondary_pilot_by_its_rules_and_tests_its_own_family(tmp_path):
    # Plateaus by 20, 20, 40 and 30 epochs: go, the last of them.
    pilot = [
        pilot_run("dot-product", 0.70, 15),
        pilot_run("simplicial-pairs", 0.80, 12),
        pilot_run("simplicial-virtual", 0.75, 35),
        pilot_run("trilinear-pairs", 0.90, 25),
    ]
    registered = hashlib.sha256(SECONDARY_TEXT.encode()).hexdigest()
    dot = [0.70, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.77]
    trilinear = [0.73, 0.745, 0.76, 0.775, 0.79, 0.805, 0.82, 0.84]
    secondary = [
        fake_run("match3-16", "dot-product", s + 1, a, registered, epochs=40)
        for s, a in enumerate(dot)
    ]
    secondary += [
        fake_run("match3-16", "trilinear-pairs", s + 1, a, registered, epochs=40)
        for s, a in enumerate(trilinear)
    ]
    registered_primary = hashlib.sha256(b"the plan\n").hexdigest()
    primary = [fake_run("match3", "dot-product", 1, 0.8, registered_primary)]
    checks = [fake_run("match3-8-m197", "trilinear-pairs", seed, 0.6, None) for seed in (100, 101)]
    text, figures = report(tmp_path, primary, pilot=pilot, secondary=secondary, checks=checks)
    section = text[text.index("## Secondary, pre-registered: Match3 at length 16") :]
    assert "| trilinear-pairs | not run | 0.783 / 0.783 (8) | 0.600 / 0.600 (2) | not run |" in (
        section
    )
    assert "| dot-product | 0.800 / 0.800 (1) | 0.735 / 0.735 (8) | not run | not run |" in section
    assert "| dot-product | 0.629 | 0.700 | 0.700 | 0.700 | 0.700 | 0.700 | epoch 20 |" in section
    assert "| simplicial-virtual | 0.566 | 0.640 | 0.713 | 0.750 | 0.750 | 0.750 | epoch 40 |" in (
        section
    )
    assert "By the pre-registered rules: **go**, 40 epochs." in section
    p = one_sided_p(trilinear, dot)
    holm = min(1.0, 3 * p)  # its own family of 3, the two untested counting as p = 1
    difference = np.mean(trilinear) - np.mean(dot)
    assert f"| match3-16 | trilinear-pairs | {difference:+.3f} | {p:.4f} | {holm:.4f} |" in section
    assert "Holm's adjustment over the 3 comparisons" in section
    assert "16 of the 32 planned runs of the secondary have finished" in section
    assert "Pre-registration changed" not in section and "other than the pilot's" not in section
    assert (figures / "match3-16.png").exists()
    # The primary family is unchanged: 13 comparisons, none of them at length 16.
    assert "Holm's adjustment over the 13 comparisons" in text
    assert text.index("## What the numbers say") < text.index("- Match3 at length 16 (the")


def test_report_stops_the_secondary_on_a_no_go(tmp_path):
    pilot = [pilot_run(model, 0.52, 10) for model in ("dot-product", "simplicial-pairs")]
    text, _ = report(tmp_path, [], pilot=pilot)
    assert "The pilot is incomplete: no decision yet." in text
    pilot += [pilot_run(model, 0.53, 10) for model in ("simplicial-virtual", "trilinear-pairs")]
    other = tmp_path / "other"
    other.mkdir()
    text, _ = report(other, [], pilot=pilot)
    assert (
        "By the pre-registered rules: **no-go, nothing learned**: the campaign does not run."
        in (text)
    )
    ceiling = [
        pilot_run(model, 0.995, 30)
        for model in ("dot-product", "simplicial-pairs", "simplicial-virtual", "trilinear-pairs")
    ]
    third = tmp_path / "third"
    third.mkdir()
    text, _ = report(third, [], pilot=ceiling)
    assert "**no-go, ceiling**" in text


@pytest.mark.integration
def test_the_secondary_runs_alone_into_its_own_folder_once_its_epochs_are_fixed(tmp_path):
    mixed = run(TRAIN, "--tasks", "match3", "match3-16", "--dry-run", check=False)
    assert mixed.returncode != 0 and "run it alone (--tasks match3-16)" in mixed.stderr
    committed = run(TRAIN, "--tasks", "match3-16", "--epochs", "3", "--dry-run", check=False)
    assert committed.returncode != 0 and "give another --out" in committed.stderr
    bad = run(TRAIN, "--epochs", "0", "--out", tmp_path, "--dry-run", check=False)
    assert bad.returncode != 0 and "--epochs must be a positive integer, got 0" in bad.stderr
    result = run(TRAIN, "--tasks", "match3-16", "--epochs", "3", "--out", tmp_path, "--dry-run")
    assert "32 runs planned, 0 done, 32 to do" in result.stdout
    plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert plan["tasks"]["match3-16"]["length"] == 16 and plan["epochs"] == {"match3-16": 3}
    secondary = STUDY / "length-16-preregistration.md"
    assert plan["preregistration_sha256"] == hashlib.sha256(secondary.read_bytes()).hexdigest()
    assert 0.45 < plan["positive_rates_uniform"]["match3-16"] < 0.55


@pytest.mark.integration
def test_the_length_16_checks_run_one_change_each_and_are_marked_exploratory(tmp_path):
    refused = run(TRAIN, "--length-16-checks", "--epochs", "3", "--out", tmp_path, check=False)
    assert refused.returncode != 0 and "give it neither --epochs" in refused.stderr
    args = ["--length-16-checks", "--quick", "--out", tmp_path, "--models", "dot-product"]
    run(TRAIN, *args, "--seeds", "7", "--threads", "1")
    records = {
        path.name: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(tmp_path.glob("*.json"))
    }
    assert sorted(records) == [
        "match3-16-data4x--dot-product--seed7.json",
        "match3-8-m197--dot-product--seed7.json",
    ]
    length_8 = records["match3-8-m197--dot-product--seed7.json"]
    more_data = records["match3-16-data4x--dot-product--seed7.json"]
    assert length_8["settings"]["task"]["length"] == 8
    assert length_8["settings"]["task"]["modulus"] == 197
    assert more_data["settings"]["task"]["length"] == 16
    assert more_data["settings"]["train_size"] == 4 * length_8["settings"]["train_size"]
    assert all(r["exploratory"] and r["preregistration_sha256"] is None for r in records.values())
