"""The trainability study's rule (plan.md, section 3) on made-up records: which candidates
qualify, their scores, which go to the confirmation, and the runs it plans."""

from keras_simplicial.agents.imitation.trainability_study import (
    CANDIDATES,
    CONFIRMATION_SEEDS,
    MODELS,
    candidate_scores,
    chosen_for_confirmation,
    planned,
    screen_runs,
)


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
    extra = runs[len(screen_runs()) :]
    assert len(extra) == 2 * len(MODELS) * (len(CONFIRMATION_SEEDS) - 1)
    assert {run.seed for _, run in extra} == set(CONFIRMATION_SEEDS) - {1}


def test_nothing_is_confirmed_before_the_screen_finishes_or_when_none_qualifies():
    records = screen({})
    assert chosen_for_confirmation(records) == []
    assert len(planned(records)) == len(screen_runs())
    del records[screen_runs()[0][1].name]
    assert chosen_for_confirmation(records) == []
    assert len(CANDIDATES) * 2 * len(MODELS) == len(screen_runs())
