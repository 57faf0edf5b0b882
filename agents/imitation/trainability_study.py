"""The trainability study's plan (studies/trainability/): every run its plan fixes, in one place.

The held-keys probe (`held_keys_budget`) showed every agent model sitting on the constant
prediction at Adam's 3e-4. This study screens remedies, each a named architecture option of
`--model-config`, on the same probe: the screen (stage 1: every candidate, both learning rates,
one seed), then the confirmation (stage 2: the candidates the screen picks, three seeds), then
the front end (stage 3: the screen's candidate with front-end options, five fresh seeds). The
settings below are fixed by studies/trainability/plan.md and front-end-plan.md, each written and
committed before its runs; the study's run.py trains `planned()`, its report.py reads the same
settings from here.
"""

import json
import statistics
from pathlib import Path

from keras_simplicial.agents.imitation.held_keys_budget import BudgetRun

# ----------------------------------------------------------------- fixed by plan.md (section 2)
TRAIN_SIZE = 32_000
TEST_SIZE = 1_000
EVAL_EVERY = 250
CAP = 2_000  # updates: twice the goal's 1,000
GOAL_UPDATES = 1_000  # the goal: 0.9 on held-out pairs within 64,000 examples
TARGET = 0.9
# Both agents, given the same change; the simplicial agent with its default gain ("zeros").
MODELS = ("relational", "simplicial")
# Each candidate: its name and its architecture options (`--model-config`) on the defaults.
CANDIDATES = (
    ("defaults", {}),
    ("entity_norm", {"entity_norm": True}),
    ("entity_norm+he_mlp", {"entity_norm": True, "mlp_kernel_initializer": "he_normal"}),
    ("one_mlp_layer", {"mlp_units": [256]}),
    ("entity_norm+one_mlp_layer", {"entity_norm": True, "mlp_units": [256]}),
)
SCREEN_RATES = (3e-4, 1e-3)
SCREEN_SEED = 1
# ----------------------------------------------------------------- fixed by plan.md (section 3)
CONFIRMATION_SEEDS = (1, 2, 3)
CONFIRMED = 2  # how many candidates the screen sends to the confirmation
# ---------------------------------------------------------- fixed by front-end-plan.md (2 and 3)
REMEDY = dict(CANDIDATES)["entity_norm+one_mlp_layer"]  # the screen's answer, the RL campaigns'
FRONT_END_CANDIDATES = (
    ("remedy", REMEDY),
    ("remedy+centre_pixels", {**REMEDY, "centre_pixels": True}),
    ("remedy+centre_pixels+conv_64", {**REMEDY, "centre_pixels": True, "conv_filters": [64, 64]}),
    (
        "remedy+centre_pixels+conv_128",
        {**REMEDY, "centre_pixels": True, "conv_filters": [128, 128]},
    ),
)
FRONT_END_RATE = 3e-4
FRONT_END_SEEDS = (4, 5, 6, 7, 8)  # fresh: the exploration that chose the candidates used 1-3


def candidate_config(name):
    """The architecture options of the candidate `name` (of the screen or of the front end)."""
    for candidate, config in CANDIDATES + FRONT_END_CANDIDATES:
        if candidate == name:
            return dict(config)
    names = [c for c, _ in CANDIDATES + FRONT_END_CANDIDATES]
    raise ValueError(f"candidate must be one of {names}, got {name!r}.")


def budget_run(agent, candidate, learning_rate, seed):
    """The `BudgetRun` of one agent, candidate, learning rate and seed of this study."""
    return BudgetRun(
        agent=agent,
        rung="board",
        train_size=TRAIN_SIZE,
        max_updates=CAP,
        learning_rate=learning_rate,
        eval_every=EVAL_EVERY,
        test_size=TEST_SIZE,
        target=TARGET,
        seed=seed,
        model_config=candidate_config(candidate) or None,
    )


def screen_runs():
    """Stage 1: every candidate, model and learning rate of the screen, on its one seed."""
    return [
        (candidate, budget_run(agent, candidate, rate, SCREEN_SEED))
        for candidate, _ in CANDIDATES
        for rate in SCREEN_RATES
        for agent in MODELS
    ]


def confirmation_runs(chosen):
    """Stage 2: each (candidate, learning rate) of `chosen`, every model, every confirmation seed
    (seed 1's runs are the screen's own)."""
    return [
        (candidate, budget_run(agent, candidate, rate, seed))
        for candidate, rate in chosen
        for seed in CONFIRMATION_SEEDS
        for agent in MODELS
    ]


def front_end_runs():
    """Stage 3: every front-end candidate, model and seed, at the goal's learning rate."""
    return [
        (candidate, budget_run(agent, candidate, FRONT_END_RATE, seed))
        for candidate, _ in FRONT_END_CANDIDATES
        for seed in FRONT_END_SEEDS
        for agent in MODELS
    ]


# ----------------------------------------------------------------------- the runs and the rule
def load_records(results):
    """{run name: run.json} of every run folder under `results`."""
    records = {}
    for path in sorted(Path(results).glob("*/run.json")):
        records[path.parent.name] = json.loads(path.read_text(encoding="utf-8"))
    return records


def updates_to_target(record):
    """The updates at which a finished run first reached the target, None if censored."""
    endpoint = record.get("endpoint") if record else None
    if not endpoint or not endpoint["reached"]:
        return None
    return endpoint["updates"]


def screen_complete(records):
    return all(run.name in records and records[run.name]["finished"] for _, run in screen_runs())


def candidate_scores(records):
    """{candidate: (score, sum, rate)} of each candidate that qualifies (plan.md, section 3): both
    models at 0.9 within the cap at a learning rate; its better rate's larger and summed updates."""
    by_key = {(c, run.agent, run.learning_rate): records.get(run.name) for c, run in screen_runs()}
    scores = {}
    for candidate, _ in CANDIDATES:
        options = []
        for rate in SCREEN_RATES:
            updates = [updates_to_target(by_key[(candidate, agent, rate)]) for agent in MODELS]
            if all(u is not None for u in updates):
                options.append((max(updates), sum(updates), SCREEN_RATES.index(rate), rate))
        if options:
            score, total, _, rate = min(options)
            scores[candidate] = (score, total, rate)
    return scores


def chosen_for_confirmation(records):
    """[(candidate, rate)] that plan.md's rule sends to the confirmation, best first; [] until the
    screen has finished (or when no candidate qualifies)."""
    if not screen_complete(records):
        return []
    scores = candidate_scores(records)
    order = [c for c, _ in CANDIDATES]
    ranked = sorted(scores, key=lambda c: (scores[c][0], scores[c][1], order.index(c)))
    return [(candidate, scores[candidate][2]) for candidate in ranked[:CONFIRMED]]


def front_end_decision(records):
    """front-end-plan.md, section 4, once every front-end run has finished (else None):
    {"meets_goal": [candidates whose 10 runs all reach 0.9 within GOAL_UPDATES], "answer": the
    best of them or None, "runs": {candidate: [updates to 0.9 or None, ...]}}."""
    by_candidate = {}
    for candidate, run in front_end_runs():
        record = records.get(run.name)
        if record is None or not record["finished"]:
            return None
        by_candidate.setdefault(candidate, []).append(updates_to_target(record))
    order = [c for c, _ in FRONT_END_CANDIDATES]
    meets = [c for c in order if all(u is not None and u <= GOAL_UPDATES for u in by_candidate[c])]

    def rank(candidate):
        updates = by_candidate[candidate]
        return (max(updates), statistics.median(updates), order.index(candidate))

    answer = min(meets, key=rank) if meets else None
    return {"meets_goal": meets, "answer": answer, "runs": by_candidate}


def planned(records):
    """[(candidate, BudgetRun)] of the study: the screen, then (once it has finished) the
    confirmation's runs on seeds the screen did not use, then the front end's runs (fixed by their
    own plan, not chosen by the screen)."""
    runs = screen_runs()
    names = {run.name for _, run in runs}
    for candidate, run in confirmation_runs(chosen_for_confirmation(records)) + front_end_runs():
        if run.name not in names:
            runs.append((candidate, run))
            names.add(run.name)
    return runs
