"""The trainability study's RL campaigns (agents/experiments/trainability_rl.py): the training win
rate per puzzle type, the length-2 evaluation and pilot-plan.md's go/no-go rule, on a copy of a
committed run; front-end-rl-plan.md's rule for what the pilots lead to; the answers its scripts
ask report.py for before they run; and run-campaigns.sh, which runs them in the plan's order."""

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from study_scripts import FAKE_CLI, fake_venv

from keras_simplicial.agents.experiments.trainability_rl import (
    campaign_finished,
    campaign_holds,
    easy_check_decision,
    last_type,
    length_2_lines,
    meets_easy_targets,
    next_campaign,
    pilot_decision,
    pilot_lines,
    rl_runs,
    site_lines,
    types_at,
)
from keras_simplicial.agents.training.run_directory import RunDirectory

ROOT = Path(__file__).resolve().parents[3]
STUDY = ROOT / "studies" / "trainability"
COMMITTED = STUDY / "results" / "bridge-small" / "relational-seed3"


def run(agent, length_2=None):
    evaluations = {} if length_2 is None else {"best_greedy_length2": length_2}
    return {"agent": agent, "seed": 1, "steps": 1, "evaluations": evaluations, "recent_by_type": {}}


def test_the_pilot_goes_when_one_best_checkpoint_reaches_0_9_on_length_2():
    assert pilot_decision([]) is None
    # Nothing is decided until both runs are evaluated: the next step waits for the whole pilot.
    assert pilot_decision([run("relational", 0.91)]) is None
    assert pilot_decision([run("relational", 0.91), run("simplicial")]) is None
    assert pilot_decision([run("relational", 0.91), run("simplicial", 0.1)]) == "go"
    assert pilot_decision([run("relational", 0.89), run("simplicial")]) is None
    assert pilot_decision([run("relational", 0.89), run("simplicial", 0.9)]) == "go"
    assert pilot_decision([run("relational", 0.89), run("simplicial", 0.2)]) == "no-go"


def test_the_pilot_table_reads_a_runs_puzzle_types_and_its_length_2_evaluation(tmp_path):
    folder = tmp_path / "relational-seed1"
    shutil.copytree(COMMITTED, folder, ignore=shutil.ignore_patterns("checkpoints", "exported"))
    evaluation = json.loads((folder / "evaluation_best_greedy.json").read_text())
    evaluation["overall"]["win_rate"] = 0.5
    (folder / "evaluation_best_greedy_length2.json").write_text(json.dumps(evaluation))
    (tmp_path / "simplicial-seed1").mkdir()  # a run that failed to open: no run.json, not a run

    (found,) = rl_runs(tmp_path)
    by_type = found["recent_by_type"]
    assert list(by_type) == [(1, 0, 0), (1, 1, 2)]
    assert 0.8 < by_type[(1, 1, 2)] < by_type[(1, 0, 0)] <= 1.0
    lines = pilot_lines([found])
    assert lines[0].startswith("| run | steps | (1,0,0) | (1,1,2) |")
    assert "| relational seed 3 | 3,004,800 of 20,000,000 |" in lines[2]
    assert lines[2].endswith("| 0.862, 0.941 | 0.853, 0.901 | 0.500 |")
    assert lines[-1].startswith("**Decision**: open")


def test_a_puzzle_type_holds_a_level_over_recent_iterations_not_on_one_lucky_one():
    # (1,0,0) is learnt from iteration 10; (1,1,2) sits at 0.6 with one lucky iteration at 1.0
    # and is learnt from iteration 120; a type that an iteration does not play leaves a blank.
    rows = []
    for i in range(200):
        easy = 1.0 if i >= 10 else 0.2
        bridge = 1.0 if i >= 120 or i == 60 else 0.6
        rows.append(
            {
                "timesteps": str(100 * (i + 1)),
                "win_rate/1_0_0": "" if i % 2 else str(easy),
                "win_rate/1_1_2": str(bridge),
            }
        )
    at = types_at(rows, 0.9, iterations=10)
    # The first window of ten at 0.9 or more: 0.6 twice and 1.0 eight times (iterations 118-127).
    assert at[(1, 1, 2)] == 100 * (127 + 1)
    # Ten played iterations (even ones): 0.2 once and 1.0 nine times (iterations 8-26).
    assert at[(1, 0, 0)] == 100 * (26 + 1)
    assert types_at(rows[:100], 0.9, iterations=10) == {(1, 0, 0): 2700, (1, 1, 2): None}
    # The type that held 0.9 last, or one that never did; nothing for a run without types.
    assert last_type({"types_at_0.9": at}) == ((1, 1, 2), 12800)
    assert last_type({"types_at_0.9": {(1, 0, 0): 2700, (1, 1, 2): None}}) == ((1, 1, 2), None)
    assert last_type({"types_at_0.9": {}}) is None and last_type({}) is None
    # A committed run whose (1,1,2) type never held 0.9 over the page's 50 iterations.
    rows = RunDirectory(COMMITTED).read_metrics()
    assert last_type({"types_at_0.9": types_at(rows, 0.9)}) == ((1, 1, 2), None)


def test_the_length_2_episodes_say_how_they_ended_and_what_their_loops_repeated(tmp_path):
    folder = tmp_path / "simplicial-seed1"
    shutil.copytree(COMMITTED, folder, ignore=shutil.ignore_patterns("checkpoints", "exported"))
    assert length_2_lines(rl_runs(tmp_path)) == []  # not evaluated on length 2 yet
    evaluation = json.loads((folder / "evaluation_best_greedy.json").read_text())
    evaluation["overall"].update(
        win_rate=0.25,
        ended_by={"won": 0.25, "opened_bridge": 0.15, "opened_wrong_box": 0.0, "out_of_steps": 0.6},
        loops={"gem_box_one_key": 0.3, "closed_wrong_box": 0.1, "edge": 0.02, "key_tile": 0.03},
    )
    (folder / "evaluation_best_greedy_length2.json").write_text(json.dumps(evaluation))
    run_json = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**run_json, "agent": "simplicial", "seed": 1}))

    lines = length_2_lines(rl_runs(tmp_path))
    assert lines[2:4] == ["simplicial seed 1:", ""] and lines[-1] == ""
    table = lines[4].splitlines()
    assert table[0].startswith("| puzzle type | episodes | win rate | 95% interval | lost: bridge")
    assert "loops: Gem 1 key" in table[0]
    # A row per puzzle type, then all of them; the moves the board blocks (edges, key tiles) are
    # one column, as evaluate prints them.
    assert [row.split(" | ")[0] for row in table[2:]] == ["| (1, 0, 0)", "| (1, 1, 2)", "| overall"]
    assert table[-1].endswith("| 0.150 | 0.000 | 0.600 | 0.300 | 0.100 | 0.050 | 0.000 |")


def test_the_trainability_sites_are_read_over_the_second_half_of_a_run(tmp_path):
    folder = tmp_path / "relational-seed3"
    shutil.copytree(COMMITTED, folder, ignore=shutil.ignore_patterns("checkpoints", "exported"))
    RunDirectory(folder).unpack_metrics()  # committed packed, as every finished run
    lines = (folder / "metrics.csv").read_text().splitlines()
    header = lines[0].split(",")
    column = header.index("trainability/block_2/state_sd")
    rows = [line.split(",") for line in lines[1:]]
    half = len(rows) // 2
    for number, row in enumerate(rows):  # the first half 9.0, the second 0.5 but its last 0.1
        row[column] = "9.0" if number < half else "0.1" if number == len(rows) - 1 else "0.5"
    (folder / "metrics.csv").write_text("\n".join([lines[0], *map(",".join, rows)]) + "\n")

    (found,) = rl_runs(tmp_path)
    assert found["late_sites"]["block_2"] == 0.5
    # The relational agent's parts: no 2-simplicial gradient norms.
    parts = {"grad front end", "grad 1-simp", "grad block rest", "grad MLP, heads"}
    assert set(found["late_sites"]) == {"block_1", "block_2", "pooled", "MLP dead"} | parts
    front_end = [float(row[header.index("grad_norm/front_end")]) for row in rows]
    assert found["late_sites"]["grad front end"] == statistics.median(front_end[half:])
    # A run with the remedy's entity norm, made before its gradient counted in the front end.
    assert found["gradient_apart"] is True
    counted = {**found, "seed": 4, "gradient_apart": False}
    assert "in every run here: they logged its gradient apart" in site_lines([found])[0]
    assert "in these runs: relational seed 3: they" in site_lines([found, counted])[0]
    assert "entity_norm" not in site_lines([counted])[0]
    table = site_lines([found, {**found, "seed": 9, "late_sites": {}}])  # seed 9: no columns
    assert table[2] == (
        "| agent | seed | block_1 | block_2 | pooled | MLP dead | grad front end | grad 1-simp "
        "| grad 2-simp q/k | grad 2-simp v/B | grad block rest | grad MLP, heads | best: greedy |"
    )
    assert table[4].startswith("| relational | 3 | ") and "| 0.50 |" in table[4]
    assert "| - | - |" in table[4]  # no 2-simplicial parts
    assert table[4].endswith("| 0.862 |") and table[5:] == [""]
    assert site_lines([{**found, "late_sites": {}}]) == []


def test_the_front_end_pilot_decides_the_model_and_both_pilots_the_campaign():
    assert next_campaign(None, "go", True) is None  # the first pilot still open
    assert next_campaign("go", None, True) is None
    assert next_campaign("no-go", "go", False) is None  # bridge-small with the front end runs first
    assert next_campaign("no-go", "go", True) == ("comparison", "front end")
    assert next_campaign("go", "go", True) == ("comparison", "front end")
    assert next_campaign("go", "no-go", True) == ("comparison", "remedy")
    assert next_campaign("no-go", "no-go", True) == ("ladder", "front end")


def test_a_bridge_small_campaign_finishes_with_every_seed_of_both_agents_evaluated():
    runs = [
        {"agent": agent, "seed": seed, "evaluations": {"best_greedy": 1.0}}
        for agent in ("relational", "simplicial")
        for seed in range(1, 9)
    ]
    assert campaign_finished(runs)
    runs[-1]["evaluations"] = {}  # simplicial seed 8 still training
    assert not campaign_finished(runs)
    assert not campaign_finished(runs[:8])


def test_a_bridge_small_campaign_holds_when_every_run_of_both_agents_learns():
    runs = [
        {"agent": agent, "seed": seed, "evaluations": {"best_greedy": 0.95}}
        for agent in ("relational", "simplicial")
        for seed in range(1, 9)
    ]
    assert campaign_holds(runs) == "holds"
    runs[3]["evaluations"] = {"best_greedy": 0.899}
    assert campaign_holds(runs) == "does-not-hold"
    runs[-1]["evaluations"] = {}  # a run still training: nothing is decided
    assert campaign_holds(runs) is None


def test_the_easy_check_holds_when_every_run_meets_both_acceptance_targets():
    def easy(agent, seed, within=1.0, final=1.0):
        evaluations = {"within_500000_greedy": within, "final_greedy": final}
        return {"agent": agent, "seed": seed, "evaluations": evaluations}

    runs = [easy(agent, seed) for agent in ("relational", "simplicial") for seed in range(1, 6)]
    assert easy_check_decision(runs) == "holds"
    assert meets_easy_targets(easy("relational", 1, within=0.99, final=0.95))
    assert not meets_easy_targets(easy("relational", 1, within=0.989))
    runs[2] = easy("relational", 3, final=0.949)
    assert easy_check_decision(runs) == "does-not-hold"
    del runs[-1]["evaluations"]["final_greedy"]  # simplicial seed 5 still training
    assert meets_easy_targets(runs[-1]) is None and easy_check_decision(runs) is None
    assert easy_check_decision(runs[:5]) is None


def test_a_runs_budget_evaluations_are_read_with_its_others(tmp_path):
    source = ROOT / "benchmarks" / "results" / "stack-parity-rerun" / "new" / "relational-seed1"
    shutil.copytree(source, tmp_path / "relational-seed1", ignore=shutil.ignore_patterns("checkp*"))
    (found,) = rl_runs(tmp_path)
    within = json.loads((source / "evaluation_within_500000_greedy.json").read_text())
    assert found["evaluations"]["within_500000_greedy"] == within["overall"]["win_rate"]
    assert {"best_greedy", "final_sampled", "within_100000_sampled"} <= set(found["evaluations"])


def report(*flags):
    result = subprocess.run(
        [sys.executable, str(STUDY / "report.py"), *flags],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_the_pilots_outcomes_run_only_on_their_decision():
    expected = pilot_decision(rl_runs(STUDY / "results" / "bridge-medium-pilot")) or "open"
    assert report("--pilot-decision") == expected + "\n"
    answer = json.loads(report("--campaign"))
    assert set(answer) == {"campaign", "model_config"}
    if answer["campaign"] == "wait":
        assert answer["model_config"] is None
    else:
        assert answer["model_config"]["entity_norm"] is True
    for name, kind in (
        ("run-bridge-medium-comparison.sh", "comparison"),
        ("run-ladder.sh", "ladder"),
    ):
        script = (STUDY / name).read_text()
        assert "report.py --campaign" in script and f"!= {kind} ]" in script
        assert '--model-config "$MODEL"' in script
    for name, flag, runs in (
        ("run-bridge-medium-front-end-pilot.sh", "--pilot-decision", "run-bridge-medium-pilot.sh"),
        ("run-bridge-small-front-end.sh", "--front-end-pilot-decision", "run-bridge-small.sh"),
    ):
        script = (STUDY / name).read_text()
        assert f"report.py {flag})" in script and "= open ]" in script
        assert "report.py --front-end-config)" in script
        assert f"exec bash studies/trainability/{runs}" in script
        assert '--model-config "$MODEL"' in (STUDY / runs).read_text()
    front_end = json.loads(report("--front-end-config"))
    assert front_end["centre_pixels"] is True and front_end["conv_filters"] == [128, 128]


STEPS = (
    "run-bridge-medium-pilot.sh",
    "run-bridge-medium-front-end-pilot.sh",
    "run-bridge-small-front-end.sh",
    "run-easy-front-end.sh",
)


def chain(tmp_path, campaign, refusing=None):
    """run-campaigns.sh in a copy of the study whose step scripts only log their names (the one
    named `refusing` exits 1 as a script does before its step may start) and whose report.py
    answers `campaign`; returns (exit status, the steps run in order)."""
    study = tmp_path / "studies" / "trainability"
    study.mkdir(parents=True)
    shutil.copy(STUDY / "run-campaigns.sh", study)
    log = tmp_path / "log"
    ladder = ("run-ladder.sh", "run-label-curve.sh", "run-colour-permutations.sh")
    for name in (*STEPS, "run-bridge-medium-comparison.sh", *ladder):
        status = 1 if name == refusing else 0
        (study / name).write_text(f'echo {name} >> "{log}"\nexit {status}\n')
    answer = json.dumps({"campaign": campaign, "model_config": None})
    (study / "report.py").write_text(f"print({answer!r})\n")
    fake_venv(tmp_path)
    done = subprocess.run(["bash", str(study / "run-campaigns.sh")], capture_output=True)
    return done.returncode, log.read_text().split() if log.exists() else []


def test_the_campaigns_run_in_the_plans_order_and_stop_at_a_step_that_refuses(tmp_path):
    assert chain(tmp_path / "a", "comparison") == (0, [*STEPS, "run-bridge-medium-comparison.sh"])
    assert chain(tmp_path / "b", "ladder") == (
        0,
        [*STEPS, "run-ladder.sh", "run-label-curve.sh", "run-colour-permutations.sh"],
    )
    assert chain(tmp_path / "g", "ladder", refusing="run-label-curve.sh") == (
        1,
        [*STEPS, "run-ladder.sh", "run-label-curve.sh"],
    )
    assert chain(tmp_path / "f", "ladder", refusing="run-ladder.sh") == (
        1,
        [*STEPS, "run-ladder.sh"],
    )
    assert chain(tmp_path / "c", "wait") == (1, list(STEPS))
    assert chain(tmp_path / "d", "ladder", refusing=STEPS[1]) == (1, list(STEPS[:2]))
    assert chain(tmp_path / "e", "ladder", refusing=STEPS[3]) == (1, list(STEPS))


def easy_check(root, decision):
    """run-easy-front-end.sh in a copy of the study at `root` whose report.py answers
    `decision` for bridge-small with the front end and whose keras-simplicial logs its calls;
    returns (exit status, the calls)."""
    study = root / "studies" / "trainability"
    study.mkdir(parents=True)
    shutil.copy(STUDY / "run-easy-front-end.sh", study)
    (study / "report.py").write_text(
        "import sys\nassert sys.argv[1:] == ['--bridge-small-front-end-decision']\n"
        f"print({decision!r})\n"
    )
    log = root / "log"
    fake_venv(root, cli=f'#!/bin/sh\necho "$@" >> "{log}"\n')
    done = subprocess.run(["bash", str(study / "run-easy-front-end.sh")], capture_output=True)
    return done.returncode, log.read_text().splitlines() if log.exists() else []


def test_the_easy_check_runs_only_once_bridge_small_with_the_front_end_has_held(tmp_path):
    assert easy_check(tmp_path / "open", "open") == (1, [])
    assert easy_check(tmp_path / "not", "does-not-hold") == (0, [])  # the chain goes on
    assert easy_check(tmp_path / "odd", "maybe") == (1, [])
    status, (call,) = easy_check(tmp_path / "holds", "holds")
    assert status == 0 and call.startswith("sweep --preset easy --engine rllib-old ")
    for words in (
        "--agents relational simplicial --seeds 1 2 3 4 5",
        "--stop-timesteps 600000 --budget 300000 500000 --model-config front-end",
        "--eval-episodes 1000 --out studies/trainability/results/easy-front-end",
    ):
        assert words in call


def ladder(root, win=0.95):
    """run-ladder.sh in a copy of the study at `root` (made on the first call) whose report.py
    calls for the ladder and whose keras-simplicial is `FAKE_CLI`; returns the commands it ran."""
    study = root / "studies" / "trainability"
    if not study.exists():
        study.mkdir(parents=True)
        shutil.copy(STUDY / "run-ladder.sh", study)
        answer = json.dumps({"campaign": "ladder", "model_config": {"centre_pixels": True}})
        (study / "report.py").write_text(f"print({answer!r})\n")
        fake_venv(root, cli=FAKE_CLI)
    log = root / "log"
    log.unlink(missing_ok=True)
    environment = {**os.environ, "LOG": str(log), "WIN": str(win)}
    done = subprocess.run(["bash", str(study / "run-ladder.sh")], env=environment, text=True,
                          capture_output=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [line.split()[0] + (" --resume" if "--resume" in line else "") for line in
            log.read_text().splitlines()]  # fmt: skip


def test_the_ladder_resumes_its_rungs_and_leaves_finished_runs_as_they_are(tmp_path):
    runs = tmp_path / "studies" / "trainability" / "results" / "bridge-medium-from-dagger"
    first = ladder(tmp_path)
    assert first == ["dagger", "evaluate", "errors"] * 2 + ["train", "evaluate", "evaluate"] * 2
    assert ladder(tmp_path) == ["dagger --resume"] * 2  # all finished: nothing trains again
    cut = runs / "relational-seed1"  # cut off before its first checkpoint: started again
    shutil.rmtree(cut / "checkpoints")
    (cut / "metrics.csv").unlink()
    for name in ("evaluation_best_greedy_length2.json", "evaluation_final_greedy_length2.json"):
        (cut / name).unlink()
    assert ladder(tmp_path) == ["dagger --resume"] * 2 + ["train", "evaluate", "evaluate"]
    (runs / "simplicial-seed1" / "metrics.csv").write_text("training_iteration,timesteps\n1,10\n")
    assert ladder(tmp_path) == ["dagger --resume"] * 2 + ["train --resume"]
    # No rung 2; the errors are measured on each rung-1 run all the same (errors-plan.md).
    assert ladder(tmp_path / "failed", win=0.5) == ["dagger", "evaluate", "errors"] * 2


def test_a_dagger_run_without_a_code_record_is_named(tmp_path):
    from keras_simplicial.agents.experiments.trainability_ladder import unrecorded_dagger_lines

    (tmp_path / "dagger").mkdir()
    (tmp_path / "dagger" / "dagger.json").write_text("{}")
    (tmp_path / "dagger" / "code.json").write_text("[]")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "dagger.json").write_text("{}")
    (line, _) = unrecorded_dagger_lines(tmp_path)
    assert line.startswith("No code record: old. DAgger runs wrote none")
