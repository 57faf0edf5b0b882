"""The ladder's rungs (agents/experiments/trainability_ladder.py, ladder-plan.md) read from copies
of committed runs: the earlier DAgger pilot's runs stand for rung 1's, the first bridge-medium
pilot's for rung 2's; the evaluations that decide are rewritten to the win rates each case needs."""

import json
import shutil
from pathlib import Path

import pytest
from study_scripts import FAKE_CLI, fake_venv

from keras_simplicial.agents.experiments.trainability_ladder import (
    BEST_LENGTH_2,
    ERRORS,
    FINAL_LENGTH_2,
    LABEL_SHARES,
    colour_permutations_answer,
    colour_permutations_due,
    colour_permutations_lines,
    dagger_runs,
    errors_lines,
    errors_reading,
    label_curve_answer,
    label_curve_lines,
    label_curve_runs,
    rl_errors_lines,
    rung_1_answer,
    rung_1_lines,
    rung_1_passed,
    rung_2_answer,
    rung_2_lines,
    rung_2_runs,
)

ROOT = Path(__file__).resolve().parents[3]
DAGGER = ROOT / "benchmarks" / "results" / "bridge-medium-dagger"
PILOT = ROOT / "studies" / "trainability" / "results" / "bridge-medium-pilot"


def evaluation(agent, win_rate):
    """The committed DAgger run's length-2 evaluation of its best model, winning `win_rate`."""
    report = json.loads(
        (DAGGER / f"{agent}-seed1" / "evaluation_best_length2_greedy.json").read_text()
    )
    report["overall"]["win_rate"] = win_rate
    return report


def rung_1(tmp_path, agents=("relational", "simplicial"), win_rates=None):
    """A rung-1 folder with the committed DAgger runs' history and config; each agent's best
    model evaluated to `win_rates[agent]` (no evaluation where absent: still training)."""
    folder = tmp_path / "bridge-medium-dagger"
    for agent in agents:
        run = folder / f"{agent}-seed1"
        run.mkdir(parents=True)
        for name in ("dagger.json", "history.json", "run.json"):
            shutil.copy(DAGGER / f"{agent}-seed1" / name, run)
        if win_rates and agent in win_rates:
            (run / BEST_LENGTH_2).write_text(json.dumps(evaluation(agent, win_rates[agent])))
    return folder


def test_rung_1_reads_each_dagger_runs_progress_and_its_best_model(tmp_path):
    (tmp_path / "bridge-medium-dagger" / "simplicial-seed1").mkdir(parents=True)  # not started
    runs = dagger_runs(rung_1(tmp_path, agents=("relational",)))
    assert len(runs) == 1
    (run,) = runs
    assert (run["agent"], run["seed"], run["rounds"], run["planned_rounds"]) == (
        "relational",
        1,
        9,
        9,
    )
    assert run["labelled_moves"] == 214_514 and run["max_labelled_moves"] == 600_000
    assert (run["best_round"], run["best_validation"]) == (8, 0.336)
    assert run["length_2"] is None
    lines = rung_1_lines(runs)
    assert lines[2] == (
        "| relational | 1 | 9 of 9 | 214,514 (cap 600,000) | round 8: 0.336 | - | running |"
    )
    assert lines[-1] == (
        "**Rung 1's answer**: open: not every agent's best model has been evaluated on length 2."
    )


def test_a_round_still_training_is_not_counted(tmp_path):
    folder = rung_1(tmp_path, agents=("relational",))
    history_file = folder / "relational-seed1" / "history.json"
    history = json.loads(history_file.read_text())
    history["rounds"].append({"round": 9, "epochs": [{"loss": 0.2}]})  # no greedy check yet
    history_file.write_text(json.dumps(history))
    (run,) = dagger_runs(folder)
    assert run["rounds"] == 9 and run["labelled_moves"] == 214_514


@pytest.mark.parametrize(
    "win_rates, answer",
    [
        ({"relational": 0.321}, None),  # the simplicial model not evaluated yet
        ({"relational": 0.321, "simplicial": 0.368}, {"answer": "stop", "passed": []}),
        ({"relational": 0.9, "simplicial": 0.368}, {"answer": "rung 2", "passed": ["relational"]}),
        (
            {"relational": 0.95, "simplicial": 0.91},
            {"answer": "rung 2", "passed": ["relational", "simplicial"]},
        ),
    ],
)
def test_rung_1_answers_once_both_best_models_are_evaluated(tmp_path, win_rates, answer):
    runs = dagger_runs(rung_1(tmp_path, win_rates=win_rates))
    assert rung_1_answer(runs) == answer
    last = rung_1_lines(runs)[-1]
    if answer is None:
        assert "open" in last
    elif answer["passed"]:
        assert last.startswith(f"**Rung 1's answer**: rung 2 for {' and '.join(answer['passed'])}")
    else:
        assert "the ladder stops" in last


def test_rung_1_tables_each_evaluated_model_and_run_ladder_asks_the_same_rule(tmp_path):
    folder = rung_1(tmp_path, win_rates={"relational": 0.321, "simplicial": 0.9})
    lines = rung_1_lines(dagger_runs(folder))
    assert lines[2].endswith("| round 8: 0.336 | 0.321 | no |")
    assert lines[3].endswith("| round 8: 0.340 | 0.900 | yes |")
    table = lines[lines.index("relational seed 1:") + 2].splitlines()
    assert [row.split(" | ")[0] for row in table[2:]] == [
        "| (2, 0, 0)",
        "| (2, 1, 3)",
        "| (2, 1, 4)",
        "| (2, 2, 3)",
        "| (2, 2, 4)",
        "| overall",
    ]
    assert not rung_1_passed(folder / "relational-seed1" / BEST_LENGTH_2)
    assert rung_1_passed(folder / "simplicial-seed1" / BEST_LENGTH_2)


def rung_2(tmp_path, agent="simplicial", best=None, final=None):
    """A rung-2 folder holding a copy of the committed pilot run of `agent` (its checkpoints
    left out), its best and final checkpoints evaluated on length 2 to `best` and `final`."""
    run = tmp_path / "bridge-medium-from-dagger" / f"{agent}-seed1"
    shutil.copytree(
        PILOT / f"{agent}-seed1", run, ignore=shutil.ignore_patterns("checkpoints", "exported")
    )
    (run / BEST_LENGTH_2).unlink(missing_ok=True)
    for name, win_rate in ((BEST_LENGTH_2, best), (FINAL_LENGTH_2, final)):
        if win_rate is not None:
            (run / name).write_text(json.dumps(evaluation(agent, win_rate)))
    return run.parent


def test_rung_2_keeps_or_loses_the_start_by_its_final_checkpoint(tmp_path):
    start = dagger_runs(rung_1(tmp_path, win_rates={"relational": 0.5, "simplicial": 0.93}))
    (running,) = rung_2_runs(rung_2(tmp_path / "a"), start)
    assert running["start_length_2"] == 0.93 and running["final_length_2"] is None
    assert rung_2_answer(running) is None
    (kept,) = rung_2_runs(rung_2(tmp_path / "b", best=0.97, final=0.9), start)
    assert (kept["best_length_2"], kept["final_length_2"]) == (0.97, 0.9)
    assert rung_2_answer(kept) == "kept"
    (lost,) = rung_2_runs(rung_2(tmp_path / "c", best=0.95, final=0.4), start)
    assert rung_2_answer(lost) == "lost"

    lines = rung_2_lines([lost], start)
    assert lines[0].startswith("| agent | seed | steps | (2,0,0) |")  # length-2 types only
    assert "(1,1,2)" not in lines[0]
    assert lines[2].startswith("| simplicial | 1 | 20,") and " of 5,000,000 |" in lines[2]
    assert lines[2].endswith("| 0.930, 0.950, 0.400 | lost |")
    assert any("final checkpoint's 1,000 length-2 episodes" in line for line in lines)
    assert lines[-1].startswith("- simplicial: **lost**")
    assert rung_2_lines([kept], start)[-1].startswith("- simplicial: **kept**")


def test_rung_2_waits_for_a_model_that_passes_rung_1(tmp_path):
    undecided = dagger_runs(rung_1(tmp_path / "a", win_rates={"relational": 0.95}))
    assert rung_2_lines([], undecided) == [
        "Runs only for an agent whose rung-1 model passes (none yet)."
    ]
    failed = dagger_runs(rung_1(tmp_path / "b", win_rates={"relational": 0.5, "simplicial": 0.5}))
    assert rung_2_lines([], failed)[0].startswith("Runs only for an agent")
    passed = dagger_runs(rung_1(tmp_path / "c", win_rates={"relational": 0.95, "simplicial": 0.5}))
    assert rung_2_lines([], passed) == ["Not started yet (`studies/trainability/run-ladder.sh`)."]


COMMITTED_RUNG_1 = ROOT / "studies" / "trainability" / "results" / "bridge-medium-dagger"


def errors_with(first_errors, lost, accuracy):
    """The committed relational rung-1 run's errors, with its first wrong moves, lost episodes
    and own-state accuracy replaced."""
    errors = json.loads((COMMITTED_RUNG_1 / "relational-seed1" / ERRORS).read_text())
    return {**errors, "first_errors": first_errors, "lost": lost, "accuracy": accuracy}


def test_the_errors_are_read_by_errors_plan_s_two_rules(tmp_path):
    folder = rung_1(tmp_path, win_rates={"relational": 0.5, "simplicial": 0.4})
    runs = dagger_runs(folder)
    # The earlier runs' best round (8 of both), its last epoch.
    assert [run["held_out_accuracy"] for run in runs] == [0.9512, 0.9435]
    assert errors_reading(runs[0]) is None and errors_lines(runs)[0].startswith("Not measured")
    cases = {
        # 0.9512 - 0.88 > 0.05: off the path; no cell holds half the first wrong moves.
        "relational": errors_with({"1/detour": 40, "2/detour": 30, "3/blocked": 30}, 100, 0.88),
        # On the path (a gap of 0.0235); half of them at stage 2, detours: one decision.
        "simplicial": errors_with({"2/detour": 50, "3/fatal": 50}, 100, 0.92),
    }
    for agent, errors in cases.items():
        (folder / f"{agent}-seed1" / ERRORS).write_text(json.dumps(errors))
    runs = dagger_runs(folder)
    relational, simplicial = (errors_reading(run) for run in runs)
    assert relational["off_path"] and not relational["one_decision"]
    assert (relational["first_error"], relational["first_error_share"]) == ("1/detour", 0.4)
    assert simplicial["one_decision"] and not simplicial["off_path"]
    lines = errors_lines(runs)
    assert lines[2].startswith("| relational | 1 | 0.880 | 0.951 | 0.071 | yes | 1/detour: 0.400 |")
    assert lines[-1].startswith(
        "**What the errors say** (errors-plan.md, rung 1 having stopped the ladder): off the "
        "oracle's path: relational; one decision: simplicial."
    )
    # While rung 1 has not stopped the ladder, they are shown and not read.
    (folder / "simplicial-seed1" / BEST_LENGTH_2).write_text(
        json.dumps(evaluation("simplicial", 0.95))
    )
    assert not any(
        line.startswith("**What the errors say**") for line in errors_lines(dagger_runs(folder))
    )


def test_the_committed_rung_1_errors_are_the_evaluation_s_episodes():
    (run,) = [r for r in dagger_runs(COMMITTED_RUNG_1) if r["agent"] == "relational"]
    assert run["errors"]["wins"] == run["length_2"]["overall"]["wins"]
    for label, entry in run["errors"]["by_type"].items():
        assert entry["wins"] == run["length_2"]["per_puzzle_type"][label]["wins"]


def test_the_rl_pilots_errors_are_described_beside_their_evaluation(tmp_path):
    folder = ROOT / "studies" / "trainability" / "results" / "bridge-medium-front-end-pilot"
    lines = rl_errors_lines(folder)
    for agent, line in zip(("relational", "simplicial"), lines[2:4]):
        evaluation = json.loads((folder / f"{agent}-seed1" / BEST_LENGTH_2).read_text())
        assert line.startswith(f"| {agent} | 1 | {evaluation['overall']['win_rate']:.3f} | 0.")
    assert "relational seed 1:" in lines and "simplicial seed 1:" in lines
    assert rl_errors_lines(tmp_path) == ["Not measured."]


def curve_run(folder, agent, share, win_rate=None):
    """A label-curve run in `folder` with the committed relational rung-1 run's round 0 as its
    one round and, where given, its length-2 evaluation winning `win_rate`."""
    source = COMMITTED_RUNG_1 / "relational-seed1"
    run = folder / f"{agent}-share-{share}"
    run.mkdir(parents=True)
    config = {**json.loads((source / "dagger.json").read_text()), "agent": agent, "rounds": 0}
    (run / "dagger.json").write_text(json.dumps({**config, "labels_share": share}))
    history = json.loads((source / "history.json").read_text())
    (run / "history.json").write_text(json.dumps({**history, "rounds": history["rounds"][:1]}))
    if win_rate is not None:
        (run / BEST_LENGTH_2).write_text(json.dumps(evaluation(agent, win_rate)))


@pytest.mark.parametrize(
    "rates, answer",
    [
        ((0.40, 0.45, 0.50), "grows"),
        ((0.40, 0.50, 0.51), "flat"),
        ((0.40, 0.43, 0.49), "neither"),  # the last doubling adds 0.06, the first only 0.03
        ((0.40, 0.45, None), None),  # the whole share not evaluated yet
    ],
)
def test_the_label_curve_is_read_by_its_plan(tmp_path, rates, answer):
    folder = tmp_path / "label-curve"
    for share, rate in zip(LABEL_SHARES, rates):
        curve_run(folder, "relational", share, rate)
    runs = label_curve_runs(folder)
    assert [run["share"] for run in runs] == list(LABEL_SHARES)
    assert runs[0]["labelled_moves"] == 30_308 and runs[0]["held_out_accuracy"] == 0.9638
    assert label_curve_answer(runs, "relational") == answer
    assert label_curve_answer(runs, "simplicial") is None
    rung_1_runs = dagger_runs(rung_1(tmp_path, win_rates={"relational": 0.321}))
    lines = label_curve_lines(runs, rung_1_runs)
    assert lines[2].startswith("| relational | 0.25 | 30,308 | 0.985 | 0.964 | 0.400 | - |")
    relational = next(line for line in lines if line.startswith("- relational: "))
    assert (f"**{answer}**." if answer else "open") in relational
    assert relational.endswith(
        "Rung 1's model, which saw the same labels over its rounds, won 0.321."
    )


def label_curve(root, win_rates):
    """run-label-curve.sh in a copy of the study at `root` whose rung-1 runs' best models won
    `win_rates` and whose keras-simplicial is `FAKE_CLI`; returns (its output, the commands it
    ran)."""
    import os
    import subprocess

    study = root / "studies" / "trainability"
    if not study.exists():
        study.mkdir(parents=True)
        shutil.copy(ROOT / "studies" / "trainability" / "run-label-curve.sh", study)
        rung_1(study / "results", win_rates=win_rates)
        fake_venv(root, cli=FAKE_CLI)
    log = root / "log"
    log.unlink(missing_ok=True)
    done = subprocess.run(["bash", str(study / "run-label-curve.sh")], text=True,
                          capture_output=True, env={**os.environ, "LOG": str(log)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    ran = log.read_text().splitlines() if log.exists() else []
    return done.stdout, ran


def test_the_label_curve_runs_only_once_rung_1_has_stopped_the_ladder(tmp_path):
    output, ran = label_curve(tmp_path / "passed", {"relational": 0.95, "simplicial": 0.4})
    assert ran == [] and "Rung 1's answer is 'rung 2', not 'stop'" in output
    output, ran = label_curve(tmp_path / "open", {"relational": 0.4})
    assert ran == [] and "'open'" in output
    _, ran = label_curve(tmp_path / "stopped", {"relational": 0.4, "simplicial": 0.3})
    commands = [line.split()[0] for line in ran]
    assert commands == ["dagger", "evaluate", "errors"] * 6
    trained = [line for line in ran if line.startswith("dagger")]
    assert (
        "--labels-from studies/trainability/results/bridge-medium-dagger/relational-seed1"
        in (trained[0])
    )
    assert [line.split("--labels-share ")[1].split()[0] for line in trained] == [
        str(share) for share in LABEL_SHARES
    ] * 2
    epochs = [line.split("--max-epochs ")[1].split()[0] for line in trained]
    assert epochs == ["48", "24", "12"] * 2  # the same updates for every share
    _, ran = label_curve(tmp_path / "stopped", {})  # again: each run resumed, nothing measured
    assert ran == [f"dagger --resume --out {line.split('--out ')[1]}" for line in trained]


def curves(folder, relational, simplicial):
    """Label-curve runs in `folder` whose length-2 win rates per share are the two tuples."""
    for agent, rates in (("relational", relational), ("simplicial", simplicial)):
        for share, rate in zip(LABEL_SHARES, rates):
            curve_run(folder, agent, share, rate)
    return label_curve_runs(folder)


@pytest.mark.parametrize(
    "relational, simplicial, due",
    [
        ((0.40, 0.45, 0.50), (0.40, 0.50, 0.51), True),  # grows, flat
        ((0.40, 0.43, 0.49), (0.40, 0.50, 0.51), True),  # neither, flat
        ((0.40, 0.50, 0.51), (0.30, 0.40, 0.41), False),  # flat, flat
        ((0.40, 0.45, 0.50), (0.40, 0.50, None), None),  # simplicial's curve open
    ],
)
def test_colour_permutations_are_due_once_the_curves_are_read_and_one_is_not_flat(
    tmp_path, relational, simplicial, due
):
    assert colour_permutations_due(curves(tmp_path, relational, simplicial)) is due
    if due is False:
        assert colour_permutations_lines([], label_curve_runs(tmp_path)) == [
            "Not run: both label curves are flat (colour-permutations-plan.md)."
        ]


@pytest.mark.parametrize(
    "permuted, answer",
    [(0.55, "helps"), (0.519, "no help"), (0.52, "neither"), (0.45, "no help"), (None, None)],
)
def test_colour_permutations_are_read_against_the_curve_s_whole_share(tmp_path, permuted, answer):
    curve = curves(tmp_path / "label-curve", (0.40, 0.45, 0.50), (0.30, 0.35, 0.40))
    curve_run(tmp_path / "colour-permutations", "relational", 1.0, permuted)
    runs = label_curve_runs(tmp_path / "colour-permutations")
    assert colour_permutations_answer(runs, curve, "relational") == answer
    assert colour_permutations_answer(runs, curve, "simplicial") is None  # not run yet
    lines = colour_permutations_lines(runs, curve)
    assert lines[2].startswith("| relational | 30,308 | no (label curve) | 0.985 | 0.964 | 0.500 |")
    assert lines[3].startswith("| relational | 30,308 | yes | 0.985 | 0.964 | ")
    assert lines[4].startswith("| simplicial | 30,308 | no (label curve) |")
    assert (
        "- relational: " + (f"**{answer}**." if answer else "open: not evaluated yet.")
    ) in lines


def colour_permutations(root, relational, simplicial):
    """run-colour-permutations.sh in a copy of the study at `root` whose label-curve runs won
    `relational` and `simplicial` per share and whose keras-simplicial is `FAKE_CLI`; returns
    (its output, the commands it ran)."""
    import os
    import subprocess

    study = root / "studies" / "trainability"
    if not study.exists():
        study.mkdir(parents=True)
        shutil.copy(ROOT / "studies" / "trainability" / "run-colour-permutations.sh", study)
        curves(study / "results" / "label-curve", relational, simplicial)
        fake_venv(root, cli=FAKE_CLI)
    log = root / "log"
    log.unlink(missing_ok=True)
    done = subprocess.run(["bash", str(study / "run-colour-permutations.sh")], text=True,
                          capture_output=True, env={**os.environ, "LOG": str(log)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, log.read_text().splitlines() if log.exists() else []


def test_the_colour_permutations_run_the_curve_s_whole_share_again_with_the_augmentation(tmp_path):
    output, ran = colour_permutations(tmp_path / "flat", (0.4, 0.5, 0.51), (0.3, 0.4, 0.41))
    assert ran == [] and "The label curve reads 'flat'" in output
    output, ran = colour_permutations(tmp_path / "open", (0.4, 0.45, 0.5), (0.3, 0.4, None))
    assert ran == [] and "'open'" in output
    _, ran = colour_permutations(tmp_path / "due", (0.4, 0.45, 0.5), (0.3, 0.4, 0.41))
    assert [line.split()[0] for line in ran] == ["dagger", "evaluate", "errors"] * 2
    trained = [line for line in ran if line.startswith("dagger")]
    for agent, line in zip(("relational", "simplicial"), trained):
        for words in (
            f"--agent {agent} --seed 1 --rounds 0",
            f"--labels-from studies/trainability/results/bridge-medium-dagger/{agent}-seed1",
            "--labels-share 1.0 --max-epochs 12 --augment colour-permutations",
            f"--out studies/trainability/results/colour-permutations/{agent}-share-1.0",
        ):
            assert words in line
    _, ran = colour_permutations(tmp_path / "due", (), ())  # again: each run resumed
    assert ran == [f"dagger --resume --out {line.split('--out ')[1]}" for line in trained]
