"""The terminal play function, driven without a terminal."""

import io
import sys

import gymnasium as gym
import pytest

from keras_simplicial.envs.play import main, parse_keys, play_keys


def test_parse_keys_understands_names_letters_and_arrows():
    assert parse_keys("left up\n") == ["left", "up"]
    assert parse_keys("hjkl ? r q") == ["left", "down", "up", "right", "hint", "reset", "quit"]
    assert parse_keys("\x1b[A\x1b[B\x1b[C\x1b[D") == ["up", "down", "right", "left"]
    assert parse_keys("x z") == []


def test_play_keys_wins_with_hints_and_shows_the_proof_tree():
    env = gym.make(
        "BridgeBoxWorld-v0", render_mode="ansi", max_solution_length=1, bridge_probability=0.0
    )
    out = io.StringIO()
    stats = play_keys(env, ["?"] * 40 + ["l", "q", "l"], out, seed=4)
    text = out.getvalue()
    assert stats["episodes"] == 1 and stats["wins"] == 1 and stats["return"] == 12.0
    assert "Gem obtained!" in text and "proof tree:" in text and "⊢ 𝔾" in text
    assert "inventory [" in text and "Γ: " in text and "the episode is over" in text


def test_play_keys_moves_the_player():
    env = gym.make("BridgeBoxWorld-v0", render_mode="ansi")
    out = io.StringIO()
    stats = play_keys(env, ["right", "right", "down", "reset", "q"], out, seed=0)
    assert stats["steps"] == 3 and "new puzzle" in out.getvalue()


def test_main_reads_keys_from_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("l l j q"))
    assert main("BoxWorld-v0", seed=1, env_config={"max_solution_length": 2}) == 0
    assert "steps 3" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(ValueError, match="rows must be an int >= 3"):
        main(env_config={"rows": 1})
    with pytest.raises(ValueError, match="--env must be one of"):
        main("CartPole-v1")
