"""The ladder on no-go (studies/trainability/ladder-plan.md), read from its run directories: rung 1,
tie-aware DAgger with the front end's model (results/bridge-medium-dagger/AGENT-seed1), and rung 2,
RL started from each rung-1 model that wins `PASSES` of the length-2 episodes
(results/bridge-medium-from-dagger/AGENT-seed1). The study's report.py writes the page's section
from these; run-ladder.sh asks `rung_1_passed` before it starts a rung-2 run. After rung 1, where
it stops the ladder: where its models err (errors-plan.md, `errors_reading`) and the label curve
(label-curve-plan.md, results/label-curve/AGENT-share-S, which run-label-curve.sh trains); after
that, its share-1.0 runs again with colour permutations (colour-permutations-plan.md,
results/colour-permutations/AGENT-share-1.0, run-colour-permutations.sh).

    rung_1 = dagger_runs("studies/trainability/results/bridge-medium-dagger")
    rung_1_answer(rung_1)      # {"answer": "rung 2" or "stop", "passed": [...]}, or None (open)
    rung_2 = rung_2_runs("studies/trainability/results/bridge-medium-from-dagger", rung_1)
    rung_2_answer(rung_2[0])   # "kept", "lost" or None (still training)
    errors_reading(rung_1[0])  # errors-plan.md's readings of a rung-1 run's errors, or None
    curve = label_curve_runs("studies/trainability/results/label-curve")
    label_curve_answer(curve, "relational")  # "grows", "flat", "neither", or None (open)
    permuted = label_curve_runs("studies/trainability/results/colour-permutations")
    colour_permutations_answer(permuted, curve, "relational")  # "helps", "no help", "neither"
"""

import json
from pathlib import Path

from keras_simplicial.agents.analysis.results import cell
from keras_simplicial.agents.experiments.trainability_rl import RECENT, rl_runs, type_label
from keras_simplicial.agents.training.run_arguments import AGENTS

PASSES = 0.9  # ladder-plan.md, rung 1: the best model's greedy win rate on 1,000 length-2 episodes
KEEPS = 0.9  # ladder-plan.md, rung 2: the final checkpoint's, on the same episodes
RUNG_2_STEPS = 5_000_000  # ladder-plan.md, rung 2 (run-ladder.sh trains this many)
# The evaluations run-ladder.sh writes (`keras-simplicial evaluate --greedy --episodes 1000
# --env-config '{"min_solution_length": 2}'`): of rung 1's best model, of rung 2's checkpoints.
BEST_LENGTH_2 = "evaluation_best_greedy_length2.json"
FINAL_LENGTH_2 = "evaluation_final_greedy_length2.json"
# errors-plan.md: where rung 1's best model errs (`keras-simplicial errors`, the same episodes as
# BEST_LENGTH_2), and how that is read when rung 1 stops the ladder.
ERRORS = "errors_best_length2.json"
# label-curve-plan.md: the shares of a rung-1 run's labelled episodes fresh models train on, and
# the differences of the length-2 greedy win rate that read the curve.
LABEL_SHARES = (0.25, 0.5, 1.0)
GROWS = 0.05  # W(1.0) - W(0.5) and W(0.5) - W(0.25) both at least this: the labels limit it
FLAT = 0.02  # W(1.0) - W(0.5) below this: twice the labels do not help
# colour-permutations-plan.md: the permuted run's length-2 greedy win rate minus the label
# curve's share-1.0 run's.
PERMUTATIONS_HELP = 0.05  # at least this: renamed states stand in for new labels
PERMUTATIONS_NO_HELP = 0.02  # below this: they do not
OFF_PATH_GAP = 0.05  # held-out oracle-state accuracy minus own-state accuracy above this: off path
ONE_DECISION = 0.5  # a (stage, kind) cell holding this share of lost episodes' first wrong moves


def read_json(path):
    path = Path(path)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def rung_1_passed(evaluation_file):
    """Whether a rung-1 model's length-2 evaluation (`BEST_LENGTH_2`) wins at least `PASSES`."""
    return read_json(evaluation_file)["overall"]["win_rate"] >= PASSES


def dagger_runs(folder):
    """One dict per DAgger run of rung 1 (`OUT` of `keras-simplicial dagger`): agent, seed, the
    rounds planned and complete, the labelled moves so far and their cap, the best round and its
    validation score (greedy on 500 length-2 boards), and `length_2`: the best model's evaluation
    on 1,000 fresh length-2 episodes (None until the run has finished and been evaluated);
    `held_out_accuracy`, the best round's last epoch's on the held-out oracle states; `errors`,
    the best model's `keras-simplicial errors` result on those episodes (None until measured)."""
    runs = []
    for run_dir in sorted(Path(folder).glob("*-seed*")):
        config = read_json(run_dir / "dagger.json")
        if config is None:  # not started yet
            continue
        history = read_json(run_dir / "history.json") or {"rounds": [], "best": None}
        complete = [r for r in history["rounds"] if "greedy" in r]
        best = history.get("best")
        best_round = None if best is None else history["rounds"][best["round"]]
        runs.append(
            {
                "agent": config["agent"],
                "seed": config["seed"],
                "rounds": len(complete),
                "planned_rounds": config["rounds"] + 1,  # round 0, the oracle's own episodes
                "labelled_moves": complete[-1]["labelled_moves"] if complete else 0,
                "max_labelled_moves": config["max_labelled_moves"],
                "best_round": None if best is None else best["round"],
                "best_validation": None if best is None else best["score"],
                "length_2": read_json(run_dir / BEST_LENGTH_2),
                "held_out_accuracy": None
                if best_round is None
                else best_round["epochs"][-1]["held_out_accuracy"],
                "errors": read_json(run_dir / ERRORS),
            }
        )
    return runs


def rung_1_answer(runs):
    """ladder-plan.md, rung 1, once every agent's best model is evaluated on length 2 (None
    before): "rung 2" for the agents whose model wins at least `PASSES` (`passed`), "stop" when
    neither does."""
    rates = {r["agent"]: r["length_2"]["overall"]["win_rate"] for r in runs if r["length_2"]}
    if not set(AGENTS) <= set(rates):
        return None
    passed = [agent for agent in AGENTS if rates[agent] >= PASSES]
    return {"answer": "rung 2" if passed else "stop", "passed": passed}


def commonest_first_error(errors):
    """("stage/kind", share of the lost episodes) of the commonest first wrong move in a
    `keras-simplicial errors` result; (None, 0.0) without a lost episode."""
    first, count = max(errors["first_errors"].items(), key=lambda item: item[1], default=(None, 0))
    return first, count / errors["lost"] if errors["lost"] else 0.0


def errors_reading(run):
    """errors-plan.md's two readings of a rung-1 run's errors, None before they are measured:
    {"gap": held-out oracle-state accuracy minus the accuracy on its own states, "off_path": gap
    above `OFF_PATH_GAP`, "first_error": the commonest first wrong move of a lost episode
    ("stage/kind"), "first_error_share": its share of them, "one_decision": that share at least
    `ONE_DECISION`}."""
    errors = run["errors"]
    if errors is None or run["held_out_accuracy"] is None:
        return None
    gap = run["held_out_accuracy"] - errors["accuracy"]
    first, share = commonest_first_error(errors)
    return {
        "gap": gap,
        "off_path": gap > OFF_PATH_GAP,
        "first_error": first,
        "first_error_share": share,
        "one_decision": share >= ONE_DECISION,
    }


def errors_lines(runs):
    """errors-plan.md's part of the trainability page: each rung-1 run's readings, its
    `keras-simplicial errors` tables, and, once rung 1 has stopped the ladder, what they say."""
    measured = [run for run in runs if errors_reading(run) is not None]
    if not measured:
        return ["Not measured yet (`run-ladder.sh` measures each rung-1 run once it has finished)."]
    lines = [
        "| agent | seed | accuracy on its own states | on the held-out oracle states (best round) "
        f"| gap | off the path (gap > {OFF_PATH_GAP}) | commonest first wrong move of a lost "
        f"episode (stage/kind) | one decision (share >= {ONE_DECISION}) | won with a wrong "
        "move |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ordered = sorted(measured, key=lambda r: (AGENTS.index(r["agent"]), r["seed"]))
    for run in ordered:
        reading, errors = errors_reading(run), run["errors"]
        lines.append(
            f"| {run['agent']} | {run['seed']} | {errors['accuracy']:.3f} | "
            f"{run['held_out_accuracy']:.3f} | {reading['gap']:.3f} | "
            f"{'yes' if reading['off_path'] else 'no'} | {reading['first_error'] or '-'}: "
            f"{reading['first_error_share']:.3f} | {'yes' if reading['one_decision'] else 'no'} | "
            f"{errors['won_with_wrong_moves']} of {errors['wins']} won |"
        )
    lines += errors_tables(ordered)
    answer = rung_1_answer(runs)
    if answer is not None and answer["answer"] == "stop" and len(ordered) == len(runs):
        off = [run["agent"] for run in ordered if errors_reading(run)["off_path"]]
        one = [run["agent"] for run in ordered if errors_reading(run)["one_decision"]]
        lines += [
            "",
            "**What the errors say** (errors-plan.md, rung 1 having stopped the ladder): "
            + (f"off the oracle's path: {', '.join(off)}; " if off else "off the path: neither; ")
            + (f"one decision: {', '.join(one)}." if one else "one decision: neither.")
            + (
                " Neither reading holds: the wrong moves are spread over the stages and kinds, "
                "and the learner's own states are predicted about as well as the oracle's."
                if not off and not one
                else ""
            )
            + " The next step is planned in its own file before its runs.",
        ]
    return lines


def errors_tables(runs):
    """`keras-simplicial errors`'s tables of each of `runs` (dicts with "agent", "seed" and
    "errors", its result as saved), each under its name."""
    from keras_simplicial.agents.analysis.learner_errors import LearnerErrors

    lines = []
    for run in runs:
        fields = {k: v for k, v in run["errors"].items() if k in LearnerErrors.__dataclass_fields__}
        lines += [
            "",
            f"{run['agent']} seed {run['seed']}:",
            "",
            LearnerErrors(**fields).to_markdown(),
        ]
    return lines


def rl_errors_lines(folder):
    """errors-plan.md's description of RL runs in `folder` (AGENT-seedN/errors_best_length2.json,
    their best policies on the same episodes): a row per run, then its tables; read by no rule."""
    runs = []
    for run_dir in sorted(Path(folder).glob("*-seed*")):
        errors = read_json(run_dir / ERRORS)
        if errors is not None:
            agent, seed = run_dir.name.rsplit("-seed", 1)
            runs.append({"agent": agent, "seed": int(seed), "errors": errors})
    if not runs:
        return ["Not measured."]
    runs.sort(key=lambda r: (AGENTS.index(r["agent"]), r["seed"]))
    lines = [
        "| agent | seed | won | accuracy on its own states | commonest first wrong move of a "
        "lost episode (stage/kind) | won with a wrong move |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        errors = run["errors"]
        first, share = commonest_first_error(errors)
        lines.append(
            f"| {run['agent']} | {run['seed']} | {errors['wins'] / errors['episodes']:.3f} | "
            f"{errors['accuracy']:.3f} | {first or '-'}: {share:.3f} | "
            f"{errors['won_with_wrong_moves']} of {errors['wins']} won |"
        )
    return lines + errors_tables(runs)


def label_curve_epochs(share, full_epochs=12):
    """label-curve-plan.md: the most epochs of the run on `share` of the labels, so that every
    share gets the updates of `full_epochs` (a DAgger round's cap) over all of them."""
    return round(full_epochs / share)


def label_curve_runs(folder):
    """One dict per run of label-curve-plan.md (`folder`/AGENT-share-S): agent, share, labelled
    moves, the last epoch's training and held-out accuracy (None before its round ends), and the
    greedy length-2 win rate and own-state accuracy of its model on rung 1's 1,000 episodes
    (None until measured)."""
    runs = []
    for run_dir in sorted(Path(folder).glob("*-share-*")):
        config = read_json(run_dir / "dagger.json")
        if config is None:
            continue
        history = read_json(run_dir / "history.json") or {"rounds": []}
        done = [r for r in history["rounds"] if "greedy" in r]
        last = done[0]["epochs"][-1] if done else None
        evaluation, errors = read_json(run_dir / BEST_LENGTH_2), read_json(run_dir / ERRORS)
        runs.append(
            {
                "agent": config["agent"],
                "share": config["labels_share"],
                "labelled_moves": done[0]["labelled_moves"] if done else None,
                "train_accuracy": None if last is None else last["train_accuracy"],
                "held_out_accuracy": None if last is None else last["held_out_accuracy"],
                "length_2": None if evaluation is None else evaluation["overall"]["win_rate"],
                "own_state_accuracy": None if errors is None else errors["accuracy"],
            }
        )
    return sorted(runs, key=lambda r: (AGENTS.index(r["agent"]), r["share"]))


def label_curve_answer(runs, agent):
    """label-curve-plan.md's reading of `agent`'s curve once every share is evaluated (None
    before): "grows", "flat" or "neither" (reported as it is)."""
    rates = {r["share"]: r["length_2"] for r in runs if r["agent"] == agent}
    if set(rates) != set(LABEL_SHARES) or None in rates.values():
        return None
    quarter, half, whole = (rates[share] for share in LABEL_SHARES)
    # Win rates are counts over 1,000 episodes: differences rounded, so that 0.45 - 0.40 is 0.05.
    first, last = round(half - quarter, 9), round(whole - half, 9)
    if last >= GROWS and first >= GROWS:
        return "grows"
    if last < FLAT:
        return "flat"
    return "neither"


def label_curve_lines(runs, rung_1):
    """label-curve-plan.md's part of the trainability page: a row per run, each agent's reading,
    and rung 1's model beside the fresh one on all its labels."""
    if not runs:
        return ["Not started (`run-label-curve.sh`: only once rung 1 has stopped the ladder)."]
    lines = [
        "| agent | share | labelled moves | training accuracy | held-out accuracy (oracle states) "
        "| length 2, greedy (1,000 episodes) | accuracy on its own states |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        moves = "-" if run["labelled_moves"] is None else f"{run['labelled_moves']:,}"
        lines.append(
            f"| {run['agent']} | {run['share']} | {moves} | {cell(run['train_accuracy'])} | "
            f"{cell(run['held_out_accuracy'])} | {cell(run['length_2'])} | "
            f"{cell(run['own_state_accuracy'])} |"
        )
    rung_1_rates = {
        r["agent"]: r["length_2"]["overall"]["win_rate"] for r in rung_1 if r["length_2"]
    }
    lines.append("")
    for agent in AGENTS:
        answer = label_curve_answer(runs, agent)
        beside = (
            f" Rung 1's model, which saw the same labels over its rounds, won "
            f"{rung_1_rates[agent]:.3f}."
            if agent in rung_1_rates
            else ""
        )
        lines.append(
            f"- {agent}: "
            + ("open: not every share evaluated." if answer is None else f"**{answer}**.")
            + beside
        )
    return lines


def colour_permutations_due(curve):
    """colour-permutations-plan.md: whether its runs are due once the label curve (`curve`,
    `label_curve_runs`) is read for every agent: True when some agent's curve is not "flat",
    False when every one is, None while a curve is open."""
    answers = [label_curve_answer(curve, agent) for agent in AGENTS]
    if None in answers:
        return None
    return any(answer != "flat" for answer in answers)


def colour_permutations_answer(permuted, curve, agent):
    """colour-permutations-plan.md's reading for `agent` once its permuted run (`permuted`, the
    `label_curve_runs` of results/colour-permutations) and the curve's share-1.0 run are
    evaluated (None before): "helps", "no help" or "neither" (reported as it is)."""

    def whole(runs):
        rates = [r["length_2"] for r in runs if r["agent"] == agent and r["share"] == 1.0]
        return rates[0] if rates else None

    with_permutations, without = whole(permuted), whole(curve)
    if with_permutations is None or without is None:
        return None
    gain = round(with_permutations - without, 9)  # counts over 1,000 episodes, as the curve's
    if gain >= PERMUTATIONS_HELP:
        return "helps"
    if gain < PERMUTATIONS_NO_HELP:
        return "no help"
    return "neither"


def colour_permutations_lines(permuted, curve):
    """colour-permutations-plan.md's part of the trainability page: each agent's permuted run
    beside the label curve's share-1.0 run, and the reading."""
    due = colour_permutations_due(curve)
    if not permuted:
        if due is False:
            return ["Not run: both label curves are flat (colour-permutations-plan.md)."]
        return [
            "Not started (`run-colour-permutations.sh`: once a label curve is read and not flat)."
        ]
    lines = [
        "| agent | labelled moves | colour permutations | training accuracy | held-out accuracy "
        "(oracle states) | length 2, greedy (1,000 episodes) | accuracy on its own states |",
        "|---|---|---|---|---|---|---|",
    ]
    pairs = [(agent, label, runs) for agent in AGENTS for label, runs in
             (("no (label curve)", curve), ("yes", permuted))]  # fmt: skip
    for agent, label, runs in pairs:
        for run in runs:
            if run["agent"] != agent or run["share"] != 1.0:
                continue
            moves = "-" if run["labelled_moves"] is None else f"{run['labelled_moves']:,}"
            lines.append(
                f"| {run['agent']} | {moves} | {label} | {cell(run['train_accuracy'])} | "
                f"{cell(run['held_out_accuracy'])} | {cell(run['length_2'])} | "
                f"{cell(run['own_state_accuracy'])} |"
            )
    lines.append("")
    for agent in AGENTS:
        answer = colour_permutations_answer(permuted, curve, agent)
        lines.append(
            f"- {agent}: " + ("open: not evaluated yet." if answer is None else f"**{answer}**.")
        )
    return lines


def rung_2_runs(folder, rung_1):
    """One dict per rung-2 run, as `rl_runs` reads a training run, with the length-2 win rates of
    its start (rung 1's best model, from `rung_1`: `dagger_runs`), its best and its final
    checkpoint (None where not evaluated yet) and the final checkpoint's whole report."""
    starts = {(r["agent"], r["seed"]): r["length_2"] for r in rung_1}
    runs = []
    for run in rl_runs(folder):
        start = starts.get((run["agent"], run["seed"]))
        final = read_json(Path(folder) / f"{run['agent']}-seed{run['seed']}" / FINAL_LENGTH_2)
        runs.append(
            {
                **run,
                "start_length_2": None if start is None else start["overall"]["win_rate"],
                "best_length_2": run["evaluations"].get("best_greedy_length2"),
                "final_length_2": None if final is None else final["overall"]["win_rate"],
                "final_report": final,
            }
        )
    return runs


def rung_2_answer(run):
    """ladder-plan.md, rung 2: "kept" when the final checkpoint wins at least `KEEPS` of the
    length-2 episodes greedily, "lost" when it wins less (its start won at least `PASSES`: only
    such a start runs), None before its evaluation."""
    if run["final_length_2"] is None:
        return None
    return "kept" if run["final_length_2"] >= KEEPS else "lost"


def rung_1_lines(runs, script="run-ladder.sh"):
    """Rung 1's part of the trainability page: a row per DAgger run, the best models' length-2
    evaluations per puzzle type and why their episodes ended, then the answer."""
    if not runs:
        return [f"Not started yet (`studies/trainability/{script}`, after bridge-small)."]
    from keras_simplicial.agents.analysis.evaluation import evaluation_table

    lines = [
        "| agent | seed | rounds | labelled moves | best round: length 2 on 500 validation "
        f"boards | best model: length 2 on 1,000 fresh episodes | at least {PASSES} |",
        "|---|---|---|---|---|---|---|",
    ]
    ordered = sorted(runs, key=lambda r: (AGENTS.index(r["agent"]), r["seed"]))
    for run in ordered:
        evaluation = run["length_2"]
        win_rate = None if evaluation is None else evaluation["overall"]["win_rate"]
        best = (
            "-"
            if run["best_round"] is None
            else f"round {run['best_round']}: {run['best_validation']:.3f}"
        )
        lines.append(
            f"| {run['agent']} | {run['seed']} | {run['rounds']} of {run['planned_rounds']} | "
            f"{run['labelled_moves']:,} (cap {run['max_labelled_moves']:,}) | {best} | "
            f"{cell(win_rate)} | "
            f"{'running' if win_rate is None else 'yes' if win_rate >= PASSES else 'no'} |"
        )
    evaluated = [run for run in ordered if run["length_2"]]
    if evaluated:
        lines += [
            "",
            "How each best model's 1,000 length-2 episodes ended (greedily; "
            "`keras-simplicial evaluate`'s table):",
            "",
        ]
        for run in evaluated:
            lines += [
                f"{run['agent']} seed {run['seed']}:",
                "",
                evaluation_table(run["length_2"]),
                "",
            ]
    answer = rung_1_answer(runs)
    lines += [
        "",
        "**Rung 1's answer**: "
        + (
            "open: not every agent's best model has been evaluated on length 2."
            if answer is None
            else f"rung 2 for {' and '.join(answer['passed'])}: supervision learns the "
            f"length-2 puzzles (at least {PASSES} greedily)."
            if answer["passed"]
            else f"the ladder stops: neither best model wins {PASSES} of the length-2 episodes "
            "greedily, so the model, with the front end, does not learn a length-2 plan from "
            "this supervision; the next step is supervised, not RL."
        ),
    ]
    return lines


def rung_2_lines(runs, rung_1):
    """Rung 2's part of the trainability page: a row per RL run started from a rung-1 model, the
    recent training win rate of each length-2 puzzle type, then each run's answer."""
    answer = rung_1_answer(rung_1)
    if answer is None or not answer["passed"]:
        return ["Runs only for an agent whose rung-1 model passes (none yet)."]
    if not runs:
        return ["Not started yet (`studies/trainability/run-ladder.sh`)."]
    types = sorted({t for run in runs for t in run["recent_by_type"] if t[0] == 2})
    lines = [
        "| agent | seed | steps | "
        + " | ".join(type_label(t) for t in types)
        + " | length 2 greedy: start, best, final | answer |",
        "|---|---|---|" + "---|" * len(types) + "---|---|",
    ]
    for run in sorted(runs, key=lambda r: (AGENTS.index(r["agent"]), r["seed"])):
        by_type = run["recent_by_type"]
        verdict = rung_2_answer(run)
        lines.append(
            f"| {run['agent']} | {run['seed']} | {run['steps']:,} of {RUNG_2_STEPS:,} | "
            + " | ".join(f"{by_type[t]:.2f}" if t in by_type else "-" for t in types)
            + f" | {cell(run['start_length_2'])}, {cell(run['best_length_2'])}, "
            f"{cell(run['final_length_2'])} | {verdict or 'running'} |"
        )
    lines += [
        "",
        f"The puzzle types' columns: the training win rate, the mean of the last {RECENT} "
        "iterations that played the type.",
        "",
    ]
    from keras_simplicial.agents.analysis.evaluation import evaluation_table

    for run in (run for run in runs if run["final_report"]):
        lines += [
            f"How the {run['agent']} run's final checkpoint's 1,000 length-2 episodes ended "
            "(greedily; its start's are rung 1's table):",
            "",
            evaluation_table(run["final_report"]),
            "",
        ]
    for run in runs:
        verdict = rung_2_answer(run)
        if verdict == "kept":
            lines.append(
                f"- {run['agent']}: **kept** (the final checkpoint at least {KEEPS}): RL holds "
                "the solution, so finding it is what stopped the pilots: exploration."
            )
        elif verdict == "lost":
            lines.append(
                f"- {run['agent']}: **lost** (the final checkpoint below {KEEPS} from a start at "
                f"{cell(run['start_length_2'])}): RL's own updates undo the solution; rung 3 "
                "separates the value function from the credit over two keys."
            )
    return lines


# What the session that made a run without a code record said of its code; no file of the run says
# it.
UNRECORDED_CODE = {
    "bridge-medium-dagger/relational-seed1": "trained in a clean checkout of 00c4726, by its "
    "session's note",
}


def unrecorded_dagger_lines(folder):
    """A note on the DAgger runs under `folder` that hold no code.json: DAgger runs recorded no
    code before it existed, and none is added after the fact."""
    runs = sorted(
        path.parent.relative_to(folder).as_posix()
        for path in Path(folder).rglob("dagger.json")
        if not (path.parent / "code.json").exists()
    )
    if not runs:
        return []
    said = [f"{run} was {UNRECORDED_CODE[run]}." for run in runs if run in UNRECORDED_CODE]
    return [
        f"No code record: {', '.join(runs)}. DAgger runs wrote none before code.json existed "
        "(`DaggerDirectory.record_code`), and none has been added after the fact."
        + "".join(f" {sentence}" for sentence in said),
        "",
    ]
