"""studies/bridge-small-every-run/greedy_gap.py: the loops greedy play ends in, and whether
sampling meets them."""

import numpy as np
import pytest

from keras_simplicial.agents.experiments import greedy_gap as script
from keras_simplicial.envs import BRIDGE_BOX_WORLD_ID
from keras_simplicial.envs.core import LEFT

SMALL = {"rows": 5, "cols": 6, "max_solution_length": 1, "max_steps": 12}


class PushesLeft:
    """A policy that moves left with probability 0.8 (the others 0.2 / 3) and values every
    board at 2.0: from the fixed start (0, 0), greedy play pushes into the edge for ever."""

    kind = "fake"
    mask_blocked_moves = False

    def logits(self, observations):
        probabilities = np.full((len(observations), 4), 0.2 / 3)
        probabilities[:, LEFT] = 0.8
        return np.log(probabilities)

    def __call__(self, observations):
        return self.logits(observations), np.full(len(observations), 2.0), None


def test_the_loop_starts_at_the_repeated_observation_and_is_followed_by_the_product():
    observations = [b"a", b"b", b"c", b"d"]
    assert script.loop_start(observations, b"c") == 2
    with pytest.raises(ValueError, match="repeated observation"):
        script.loop_start(observations, b"e")
    probabilities = [np.array([0.5, 0.5]), np.array([0.9, 0.1]), np.array([0.2, 0.8])]
    follow = script.follow_probability(probabilities, [0, 0, 1], start=1)
    assert follow == pytest.approx(0.9 * 0.8)


def test_a_policy_pushing_into_the_edge_loops_there_and_sampling_meets_the_loop():
    won, lost = script.greedy_loops(PushesLeft(), BRIDGE_BOX_WORLD_ID, SMALL, episodes=3)
    assert won == 0 and len(lost) == 3
    assert [record["board_seed"] for record in sorted(lost, key=lambda r: r["board_seed"])] == [
        0,
        1,
        2,
    ]
    for record in lost:
        assert (record["loop"], record["loop_length"]) == ("edge", 1)
        assert record["follow_probability"] == pytest.approx(0.8, abs=1e-4)
        assert record["loop_value"] == pytest.approx(2.0)
    record = lost[0]
    rng = np.random.default_rng(0)
    wins, met = script.sampled_on_board(
        PushesLeft(),
        BRIDGE_BOX_WORLD_ID,
        SMALL,
        record["board_seed"],
        5,
        record["loop_observations"],
        rng,
    )
    assert met == 5  # the loop's state is the start: every sampled episode meets it
    assert 0 <= wins <= 5

    summary = script.summary("runs/x/checkpoints/iter_000007", 3, won, lost, [(wins, met, 5)])
    assert summary["loops_by_kind"] == {"edge": 3}
    assert summary["follow_probability"]["median"] == pytest.approx(0.8, abs=1e-4)
    assert summary["loops_followed_at_most_half_the_time"] == 0
    assert summary["sampled_on_lost_boards"]["met_a_loop_state"] == 1.0
    assert all("loop_observations" not in record for record in summary["lost"])
    table = script.markdown([summary])
    row = "| runs/x/iter_000007 | 0/3 | edge 3 | 1 | 0.80 (0.80-0.80) | 0/3 | 0.80 | 2.00 |"
    assert row in table


class RecordsPushesLeft(PushesLeft):
    """`PushesLeft` that keeps every observation it is asked about (one board at a time)."""

    def __init__(self):
        self.seen = []

    def logits(self, observations):
        self.seen.append(observations[0].tobytes())
        return super().logits(observations)


def test_greedy_play_that_skips_blocked_moves_never_stays_put_and_ends_at_a_repeat():
    agent = RecordsPushesLeft()
    won, cycles = script.greedy_unblocked(agent, BRIDGE_BOX_WORLD_ID, SMALL, episodes=1)
    # Greedy play pushes into the edge at once (`greedy_loops` above). Skipping blocked moves,
    # from (0, 0) (left and up blocked) it takes the first of the tied moves, right; from (0, 1)
    # left goes through, back to (0, 0): a cycle of two moves, and the board never stays put.
    assert (won, cycles) == (0, 1)
    assert len(agent.seen) == 2 and agent.seen[0] != agent.seen[1]
