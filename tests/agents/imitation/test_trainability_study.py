"""The trainability study's rules on made-up records: which candidates qualify, their scores,
which go to the confirmation (plan.md, section 3), the front end's decision (front-end-plan.md,
section 4), and the runs it plans; and the front end's answer in the committed results, which
`--model-config front-end` names."""

from pathlib import Path

from keras_simplicial.agents.imitation.trainability_study import (
    CANDIDATES,
    CONFIRMATION_SEEDS,
    FRONT_END_CANDIDATES,
    FRONT_END_SEEDS,
    GOAL_UPDATES,
    MODELS,
    candidate_config,
    candidate_scores,
    chosen_for_confirmation,
    front_end_decision,
    front_end_runs,
    load_records,
    planned,
    screen_runs,
)
from keras_simplicial.agents.model.model_config import MODEL_CONFIGS


def record(updates):
    """A finished run that reached the target at `updates` (None: censored)."""
    return {
        "finished": True,
        "endpoint": {"reached": updates is not None, "updates": updates or 2_000},
    }


def screen(reached):
    """Records of every screen run: `reached[(candidate, agent, rate)]` updates, else censored."""
    return {
        run.name: record(reached.get((candidate, run.agent, run.learning_rate)))
        for candidate, run in screen_runs()
    }


def test_a_candidate_qualifies_only_when_both_models_reach_the_target_at_one_rate():
    records = screen(
        {
            ("entity_norm", "relational", 3e-4): 1_500,
            ("entity_norm", "simplicial", 1e-3): 750,  # not both at one rate
            ("one_mlp_layer", "relational", 3e-4): 1_750,
            ("one_mlp_layer", "simplicial", 3e-4): 1_000,
            ("one_mlp_layer", "relational", 1e-3): 1_250,
            ("one_mlp_layer", "simplicial", 1e-3): 1_250,
        }
    )
    scores = candidate_scores(records)
    assert set(scores) == {"one_mlp_layer"}
    # The better rate: the smaller larger-of-two (1,250 at 1e-3 against 1,750 at 3e-4).
    assert scores["one_mlp_layer"] == (1_250, 2_500, 1e-3)
    assert chosen_for_confirmation(records) == [("one_mlp_layer", 1e-3)]


def test_the_two_best_go_to_the_confirmation_and_it_plans_new_seeds_only():
    reached = {}
    for candidate, score in (
        ("entity_norm", 1_000),
        ("entity_norm+he_mlp", 750),
        ("defaults", 500),
    ):
        for agent in MODELS:
            reached[(candidate, agent, 3e-4)] = score
    records = screen(reached)
    assert chosen_for_confirmation(records) == [("defaults", 3e-4), ("entity_norm+he_mlp", 3e-4)]
    runs = planned(records)
    extra = runs[len(screen_runs()) : -len(front_end_runs())]
    assert len(extra) == 2 * len(MODELS) * (len(CONFIRMATION_SEEDS) - 1)
    assert {run.seed for _, run in extra} == set(CONFIRMATION_SEEDS) - {1}


def test_nothing_is_confirmed_before_the_screen_finishes_or_when_none_qualifies():
    records = screen({})
    assert chosen_for_confirmation(records) == []
    assert len(planned(records)) == len(screen_runs()) + len(front_end_runs())
    del records[screen_runs()[0][1].name]
    assert chosen_for_confirmation(records) == []
    assert len(CANDIDATES) * 2 * len(MODELS) == len(screen_runs())


def front_end(updates):
    """Records of every front-end run: `updates[candidate]` is a list of the 10 runs' updates to
    the target (None: censored), in `front_end_runs`' order; a missing candidate: all at 500."""
    counters, records = {}, {}
    for candidate, run in front_end_runs():
        index = counters.setdefault(candidate, 0)
        counters[candidate] += 1
        records[run.name] = record(updates.get(candidate, [500] * 10)[index])
    return records


def test_the_front_end_runs_every_candidate_on_five_fresh_seeds_at_the_goals_rate():
    runs = front_end_runs()
    assert len(runs) == len(FRONT_END_CANDIDATES) * len(FRONT_END_SEEDS) * len(MODELS)
    assert {run.seed for _, run in runs}.isdisjoint({1, 2, 3})
    assert {run.learning_rate for _, run in runs} == {3e-4}
    assert len({run.name for _, run in runs}) == len(runs)
    conv_128 = [run for c, run in runs if c == "remedy+centre_pixels+conv_128"][0]
    assert conv_128.model_overrides() == {
        "entity_norm": True,
        "mlp_units": [256],
        "centre_pixels": True,
        "conv_filters": [128, 128],
    }


def test_the_front_end_answer_is_the_goal_meeting_candidate_with_the_smallest_worst_run():
    slow = [500] * 9 + [GOAL_UPDATES + 250]  # one run misses the goal, though within the cap
    records = front_end(
        {
            "remedy": [None] * 10,
            "remedy+centre_pixels": slow,
            "remedy+centre_pixels+conv_64": [750] * 9 + [1_000],
            "remedy+centre_pixels+conv_128": [500] * 5 + [1_000] * 5,
        }
    )
    decision = front_end_decision(records)
    assert decision["meets_goal"] == [
        "remedy+centre_pixels+conv_64",
        "remedy+centre_pixels+conv_128",
    ]
    # Both worst runs at 1,000: the smaller median (750 against 750) ties, then the earlier row.
    assert decision["answer"] == "remedy+centre_pixels+conv_64"
    records = front_end(
        {
            "remedy": [1_000] * 10,
            "remedy+centre_pixels": [750] * 10,
            "remedy+centre_pixels+conv_64": [500] * 9 + [1_000],
            "remedy+centre_pixels+conv_128": [500] * 9 + [750],
        }
    )
    assert front_end_decision(records)["answer"] == "remedy+centre_pixels+conv_128"


def test_the_front_end_decides_nothing_until_every_run_has_finished_and_may_find_none():
    records = front_end({c: [None] * 10 for c, _ in FRONT_END_CANDIDATES})
    assert front_end_decision(records) == {
        "meets_goal": [],
        "answer": None,
        "runs": {c: [None] * 10 for c, _ in FRONT_END_CANDIDATES},
    }
    del records[front_end_runs()[-1][1].name]
    assert front_end_decision(records) is None


def test_the_front_end_model_config_is_the_answer_of_the_committed_front_end_runs():
    results = Path(__file__).resolve().parents[3] / "studies" / "trainability" / "results"
    decision = front_end_decision(load_records(results))
    assert decision is not None and decision["answer"] == "remedy+centre_pixels+conv_128"
    assert MODEL_CONFIGS["front-end"] == candidate_config(decision["answer"])
