"""MkDocs hook: the page ``cli.md``, written at build time from the argument parser.

Every command's usage, description and options come from the parser that `keras-simplicial`
itself uses, so the reference cannot drift from ``--help``.
"""

import argparse

from mkdocs.structure.files import File

import keras_simplicial_cli

PAGE = "cli.md"


def on_files(files, config):
    files.append(File.generated(config, PAGE, content=cli_reference()))
    return files


def cli_reference(parser=None):
    """The Markdown of the command-line reference."""
    parser = parser or keras_simplicial_cli.build_parser()
    lines = [
        "# Command-line reference",
        "",
        f"`{parser.prog}`: {parser.description}",
        "",
        "This page is generated from the argument parser of `keras-simplicial` "
        "(`keras_simplicial_cli.build_parser()`) when the documentation is built; "
        f"`{parser.prog} COMMAND --help` prints the same.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    subparsers = _subcommands(parser)
    summaries = {action.dest: action.help for action in _subparsers_action(parser)._choices_actions}
    for name in subparsers:
        lines.append(f"| [`{name}`](#{name}) | {_cell(summaries.get(name) or '')} |")
    for name, subparser in subparsers.items():
        lines += ["", f"## `{name}` {{#{name}}}", ""]
        lines.append(_text(subparser.description or summaries.get(name) or ""))
        usage = subparser.format_usage().removeprefix("usage: ").strip()
        lines += ["", "```text", usage, "```", ""]
        lines += _options_table(subparser)
    return "\n".join(lines) + "\n"


def _subparsers_action(parser):
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def _subcommands(parser):
    return dict(_subparsers_action(parser).choices)


def _options_table(parser):
    # In a div of its own so that docs/stylesheets/extra.css keeps option names on one line.
    rows = [
        '<div class="cli-options" markdown>',
        "",
        "| argument | default | meaning |",
        "|---|---|---|",
    ]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if action.option_strings:
            name = ", ".join(f"`{option}`" for option in action.option_strings)
            metavar = "" if action.choices else _metavar(action)  # the choices are listed
            if metavar:
                name += f" `{metavar}`"
        else:
            name = f"`{_metavar(action)}`"
        meaning = action.help % {"default": action.default} if action.help else ""
        if action.choices and not isinstance(action.choices, dict):
            meaning += f" (one of: {', '.join(f'`{choice}`' for choice in action.choices)})"
        rows.append(f"| {name} | {_default(action)} | {_cell(meaning.strip())} |")
    return rows + ["", "</div>"]


def _metavar(action):
    if action.nargs == 0:
        return ""
    metavar = action.metavar or (action.dest if not action.option_strings else action.dest.upper())
    return f"{metavar} ..." if action.nargs in ("+", "*") else metavar


def _default(action):
    if (
        action.nargs == 0
        or action.default in (None, argparse.SUPPRESS)
        or not action.option_strings
    ):
        return ""
    value = action.default
    if isinstance(value, list):
        value = " ".join(str(item) for item in value)
    return f"`{value}`" if value not in ("", {}) else ""


def _text(text):
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _cell(text):
    return _text(text).replace("|", "\\|").replace("\n", " ")
