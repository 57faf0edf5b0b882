"""Play an episode of (bridge) BoxWorld in the terminal.

Arrow keys or h/j/k/l move (left/down/up/right as in vi), ``?`` takes one step of the oracle's
shortest plan, ``r`` starts a new puzzle, ``q`` quits. The board is drawn with 24-bit ANSI colours,
with the inventory, the reward and the axioms Gamma of the episode; when an episode ends its proof
tree (Appendix B) is shown.

On a terminal keys are read in raw mode (termios); otherwise (a pipe, a test) ``stdin`` is read as
text of key names or characters, e.g. ``"l l j ? q"`` or ``"right down"``. `play_keys()` plays
a list of keys directly. ``keras-simplicial play`` and ``python -m keras_simplicial.envs.play`` run
`main()`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Iterable, Iterator, List, Optional, TextIO

import gymnasium as gym

from . import BRIDGE_BOX_WORLD_ID, ENV_IDS
from .core import ACTION_NAMES
from .oracle import greedy_action

ACTION_OF_KEY = {name: action for action, name in enumerate(ACTION_NAMES)}
KEY_NAMES = {
    "h": "left",
    "j": "down",
    "k": "up",
    "l": "right",
    "a": "left",
    "w": "up",
    "d": "right",
    "s": "down",
    "?": "hint",
    "r": "reset",
    "q": "quit",
    "\x1b[D": "left",
    "\x1b[A": "up",
    "\x1b[C": "right",
    "\x1b[B": "down",
    "\x03": "quit",
}
COMMANDS = ("left", "up", "right", "down", "hint", "reset", "quit")
HELP = "move: arrows or h/j/k/l   ?: hint   r: new puzzle   q: quit"


def key_name(token: str) -> Optional[str]:
    """The command of a key or key name (``"h"``, ``"\\x1b[D"``, ``"left"``), or ``None``."""
    token = token.strip() if len(token) > 1 and not token.startswith("\x1b") else token
    if token.lower() in COMMANDS:
        return token.lower()
    return KEY_NAMES.get(token)


def parse_keys(text: str) -> List[str]:
    """Commands in ``text``: whitespace-separated names, or single characters and escape codes."""
    commands = []
    for word in text.split():
        if key_name(word) in COMMANDS and len(word) > 1 and not word.startswith("\x1b"):
            commands.append(key_name(word))
            continue
        i = 0
        while i < len(word):
            step = 3 if word.startswith("\x1b[", i) else 1
            name = key_name(word[i : i + step])
            if name is not None:
                commands.append(name)
            i += step
    return commands


def _raw_keys(stream: TextIO) -> Iterator[str]:
    """Keys from a terminal in raw mode (restored on exit)."""
    import termios
    import tty

    fd = stream.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        while True:
            ch = os.read(fd, 1).decode(errors="ignore")
            if ch == "\x1b":
                ch += os.read(fd, 2).decode(errors="ignore")
            name = key_name(ch)
            if name is not None:
                yield name
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _screen(env, message: str, interactive: bool) -> str:
    base = env.unwrapped
    clear = "\x1b[H\x1b[2J" if interactive else ""
    gamma = base.puzzle().format_gamma()
    text = clear + base.render() + f"Γ: {gamma}\n{HELP}\n"
    return text + (message + "\n" if message else "")


def play_keys(
    env,
    keys: Iterable[str],
    out: TextIO = sys.stdout,
    seed: Optional[int] = None,
    interactive: bool = False,
) -> dict:
    """Play ``keys`` (command names or keys) on ``env`` (made with ``render_mode="ansi"``).

    Returns ``{"episodes", "wins", "return", "steps"}`` over the session.
    """
    sep = "\r\n" if interactive else "\n"
    env.reset(seed=seed)
    stats = {"episodes": 0, "wins": 0, "return": 0.0, "steps": 0}
    out.write(_screen(env, "", interactive).replace("\n", sep))
    over = False
    for key in keys:
        command = key if key in COMMANDS else key_name(key)
        if command is None:
            continue
        if command == "quit":
            break
        if command == "reset":
            env.reset()
            over = False
            out.write(_screen(env, "new puzzle", interactive).replace("\n", sep))
            continue
        if over:
            out.write(f"the episode is over: r for a new puzzle, q to quit{sep}")
            continue
        action = ACTION_OF_KEY.get(command)
        if command == "hint":
            action = greedy_action(env.unwrapped)
            if action is None:
                out.write(f"no plan: the Gem is unobtainable{sep}")
                continue
        _, reward, terminated, truncated, info = env.step(action)
        stats["steps"] += 1
        stats["return"] += reward
        message = ""
        if terminated or truncated:
            over = True
            stats["episodes"] += 1
            stats["wins"] += bool(info["is_success"])
            verdict = (
                "Gem obtained!"
                if info["is_success"]
                else (
                    "a bridge/distractor: the Gem is unobtainable" if terminated else "out of steps"
                )
            )
            message = (
                f"{verdict} puzzle type {info['puzzle_type']}\nproof tree:\n"
                f"{env.unwrapped.proof_tree().format()}\n"
                "press r for a new puzzle, q to quit"
            )
        out.write(_screen(env, message, interactive).replace("\n", sep))
    out.flush()
    return stats


def main(
    env_id: str = BRIDGE_BOX_WORLD_ID, seed: Optional[int] = None, env_config: Optional[dict] = None
) -> int:
    """``keras-simplicial play``: plays ``env_id`` on the terminal, or with keys read from stdin.

    Returns the exit status; a bad ``env_id`` or ``env_config`` raises ``ValueError``.
    """
    if env_id not in ENV_IDS:
        raise ValueError(f"--env must be one of {ENV_IDS}, got {env_id!r}")
    env = gym.make(env_id, **{**dict(env_config or {}), "render_mode": "ansi"})
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    keys = _raw_keys(sys.stdin) if interactive else parse_keys(sys.stdin.read())
    stats = play_keys(env, keys, sys.stdout, seed=seed, interactive=interactive)
    print(
        f"episodes {stats['episodes']}, wins {stats['wins']}, return {stats['return']:+g}, "
        f"steps {stats['steps']}"
    )
    return 0


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not valid JSON ({error.msg}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The options of ``keras-simplicial play``, for ``python -m keras_simplicial.envs.play``.

    They repeat the command's (keras_simplicial_cli), which cannot import them from here without
    loading gymnasium for ``--help``, and which this module must not import (the command imports
    this module); tests/test_import_layering.py checks that the two agree.
    """
    parser = argparse.ArgumentParser(
        prog="python -m keras_simplicial.envs.play",
        description="Arrow keys or h/j/k/l move, ? takes a step of the shortest plan, r draws a "
        "new puzzle, q quits. Without a terminal, keys are read from stdin.",
    )
    parser.add_argument(
        "--env", default=BRIDGE_BOX_WORLD_ID, choices=ENV_IDS, help="default: %(default)s"
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of the first puzzle")
    parser.add_argument(
        "--env-config",
        type=_json_object,
        default={},
        help="JSON object of environment arguments, e.g. '{\"max_solution_length\": 2}'",
    )
    return parser


def command_line(argv: Optional[List[str]] = None) -> int:
    """``python -m keras_simplicial.envs.play [--env ID] [--seed N] [--env-config JSON]``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return main(args.env, seed=args.seed, env_config=args.env_config)
    except ValueError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")


if __name__ == "__main__":
    sys.exit(command_line())
