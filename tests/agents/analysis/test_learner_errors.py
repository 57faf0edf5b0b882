"""`keras-simplicial errors` (agents/analysis/learner_errors.py): greedy play judged move by move
by the step-optimal oracle, checked with policies whose every move is known."""

import json

import numpy as np
import pytest

from keras_simplicial.agents.analysis.learner_errors import KINDS, learner_errors
from keras_simplicial.agents.imitation.labelled_play import oracle_moves, play_labelled
from keras_simplicial.agents.rollout import episode_outcomes

ENV = "BridgeBoxWorld-v0"
LENGTH_2 = {"rows": 7, "cols": 6, "min_solution_length": 2, "max_solution_length": 2}
EPISODES = 40


def table_policy(table, default=0):
    """Logits [B, 4] that put the move `table` holds for an observation first (`default` for an
    observation it does not hold): a deterministic, memoryless policy."""

    def logits(observations):
        moves = [table.get(observation.tobytes(), default) for observation in observations]
        return np.eye(4, dtype=np.float32)[moves]

    return logits


@pytest.fixture(scope="module")
def oracle_table():
    """The moves of the oracle's own episodes on the boards `learner_errors` plays (seed 0 on):
    played greedily as a table, they are those episodes again."""
    played = play_labelled(
        oracle_moves(np.random.default_rng(0)), ENV, LENGTH_2, np.arange(EPISODES), horizon=100
    )
    table = {
        observation.tobytes(): int(action)
        for observation, action in zip(played.observations, played.actions)
    }
    return table, played


def test_the_oracle_s_own_moves_are_all_optimal_and_win_every_board(oracle_table):
    table, played = oracle_table
    result = learner_errors(table_policy(table), ENV, LENGTH_2, episodes=EPISODES, num_envs=8)
    assert (result.wins, result.lost) == (EPISODES, 0)
    assert result.moves == len(played) and result.accuracy == 1.0
    assert result.kinds == {"optimal": len(played), "detour": 0, "fatal": 0, "blocked": 0}
    assert result.first_errors == {} and result.won_with_wrong_moves == 0
    # The stages count the objects opened: a length-2 plan opens at least two before the Gem.
    assert {"0", "1", "2"} <= set(result.by_stage)


def test_one_wrong_move_is_found_where_it_was_made(oracle_table):
    table, played = oracle_table
    # On board 0, the first move that is not the only optimal one is replaced by a move that
    # walks into the board's edge or back: after it, the table knows nothing of the state, so
    # greedy play takes move 0 (up) from there.
    first = played.labels[: played.lengths[0]]
    step = int(np.flatnonzero(first.sum(axis=1) < 4)[0])
    wrong = int(np.flatnonzero(~first[step])[0])
    changed = dict(table)
    changed[played.observations[step].tobytes()] = wrong
    result = learner_errors(table_policy(changed), ENV, LENGTH_2, episodes=EPISODES, num_envs=8)
    wrong_moves = result.moves - result.kinds["optimal"]
    assert wrong_moves >= 1
    assert result.wins + result.lost == EPISODES and result.wins >= EPISODES - 1
    if result.lost:
        assert sum(result.first_errors.values()) == 1
    else:
        assert result.won_with_wrong_moves == 1
    assert sum(result.by_stage[s]["moves"] for s in result.by_stage) == result.moves


def test_every_lost_episode_has_a_first_wrong_move_and_the_outcomes_are_evaluate_s():
    rng = np.random.default_rng(5)
    weights = rng.normal(size=(7 * 7 * 3, 4)).astype(np.float32)

    def logits(observations):  # a fixed random function of the board: greedy play loops
        return observations.reshape(len(observations), -1)[:, : weights.shape[0]] @ weights

    result = learner_errors(logits, ENV, LENGTH_2, episodes=60, num_envs=16)
    outcomes = episode_outcomes(logits, ENV, LENGTH_2, 60, num_envs=16, greedy=True)
    assert result.wins == sum(outcome.won for outcome in outcomes)
    for label, entry in result.by_type.items():
        of_type = [o for o in outcomes if "(%d, %d, %d)" % o.puzzle_type == label]
        assert entry["episodes"] == len(of_type)
        assert entry["wins"] == sum(o.won for o in of_type)
    assert result.lost > 0 and sum(result.first_errors.values()) == result.lost
    # A move the board blocks ends greedy play in an obstacle loop; a wrong box ends it at once.
    obstacles = sum(o.loop not in (None, "cycle") for o in outcomes)
    assert result.kinds["blocked"] == obstacles
    wrong_box = sum(o.ended_by in ("opened_bridge", "opened_wrong_box") for o in outcomes)
    assert result.kinds["fatal"] <= wrong_box
    assert sum(result.kinds.values()) == result.moves
    for entry in result.by_stage.values():
        assert sum(entry[kind] for kind in KINDS) == pytest.approx(1.0)
    text = result.to_markdown()
    assert text.startswith("Greedy play on 60 fresh boards of BridgeBoxWorld-v0")
    assert "lost episodes" in text and "| stage | detour | fatal | blocked |" in text
    assert json.loads(json.dumps(result.to_dict()))["kinds"] == result.kinds
    assert result.code["source_sha256"] is not None  # the code that measured it
