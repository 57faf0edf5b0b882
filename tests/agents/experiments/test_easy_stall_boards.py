"""studies/stack-parity/easy_stall_boards.py: a stalled run's greedy wins, board by board."""

import numpy as np

from keras_simplicial.agents.experiments import easy_stall_boards as script


def board(won, key, first, last="left"):
    return {
        "won": won,
        "layout": script.layout((0, 0), key, (1, 5 - key[1])),
        "first_move": first,
        "last_move": last,
    }


def test_boards_are_tallied_by_layout_with_the_moves_of_wins_and_losses():
    boards = [
        board(True, (1, 1), "right", last="up"),
        board(True, (1, 1), "right", last="up"),
        board(False, (1, 4), "left"),
        board(True, (1, 4), "down", last="up"),
    ]
    summary = script.summary("runs/x/checkpoints/iter_000001", boards)
    assert (summary["won"], summary["boards"]) == (3, 4)
    first, second = summary["by_layout"].values()
    assert (first["won"], first["boards"], first["repeated_when_lost"]) == (2, 2, "")
    assert (second["won"], second["boards"]) == (1, 2)
    assert second["first_move"] == "left 1, down 1" and second["repeated_when_lost"] == "left 1"
    table = script.markdown([summary])
    assert (
        "| runs/x/iter_000001 (3/4) | player (0, 0), key (1, 4), Gem box (1, 1) | 1/2 "
        "| left 1, down 1 | left 1 |" in table
    )


def test_the_player_is_found_by_its_colour_on_the_board_not_the_inventory():
    from keras_simplicial.envs.palette import PLAYER_RGB

    observation = np.zeros((3, 7, 3), np.uint8)
    observation[1, 4] = PLAYER_RGB
    observation[0, 6] = PLAYER_RGB  # the inventory column: not the board
    assert script.player_cell(observation, cols=6) == (1, 4)
