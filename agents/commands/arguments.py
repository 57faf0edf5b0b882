"""What the commands share: the `Command` record, the parsers of argument values, the flags
generated from `RunArguments`, and the argument groups several commands take.

Light: nothing here imports Keras, TensorFlow, RLlib or gymnasium, so that `--help` and argument
errors answer at once.
"""

import argparse
import dataclasses
from typing import Callable

from keras_simplicial.agents.model.model_config import parse_model_config
from keras_simplicial.agents.ranges import (
    Boolean,
    Integer,
    JsonObject,
    OneOf,
    OrNone,
    Text,
    parse_json_object,
)
from keras_simplicial.agents.training.presets import PRESETS
from keras_simplicial.agents.training.run_arguments import (
    AGENTS,
    API_STACKS,
    RunArguments,
    declaration,
    with_engine_of_api_stack,
)

PRESET_CHOICES = ("paper", *(name for name in PRESETS if name != "paper"))


@dataclasses.dataclass(frozen=True)
class Command:
    """One `keras-simplicial` command.

    Attributes:
        name: what the user types.
        arguments: `arguments(parser)` adds its arguments to its `argparse` parser.
        run: `run(args)` runs it (imports what it needs when it runs); returns the exit status.
        help: one line for the list of commands.
        description: what `COMMAND --help` says above the options (default: `help`).
        extra: the optional dependencies it needs (setup.py's extras): "agents" (TensorFlow,
            RLlib, matplotlib, ...: loaded, quietly, before it runs), "envs" (gymnasium) or
            None (the package alone).
        environment: None, or `environment(args)` -> {variable: value}, the environment
            variables it needs set before Keras or TensorFlow is imported (the Keras backend of
            a run's API stack: `training.keras_environment`).
    """

    name: str
    arguments: Callable
    run: Callable
    help: str
    description: str = None
    extra: str = "agents"
    environment: Callable = None


def json_object(argument):
    """An argparse type: a JSON object, or a one-line error naming `argument`; for
    `--model-config`, a name of `model_config.MODEL_CONFIGS` (e.g. "paper") too
    (`model_config.parse_model_config`)."""

    def parse(text):
        try:
            if argument == "--model-config":
                return parse_model_config(text)
            return parse_json_object(text, argument)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def text(flag):
    """An argparse type: a non-empty string (`ranges.Text`), e.g. a path."""

    def parse(value):
        if not Text().accepts(value):
            raise argparse.ArgumentTypeError(f"{flag} expects a non-empty string, got {value!r}")
        return value

    return parse


def integer(low=None):
    """An argparse type: an integer >= `low` (None: any); `1e6` reads as 1000000."""

    def parse(text):
        expected = "an integer" if low is None else f"an integer >= {low}"
        try:
            value = float(text)
            if not value.is_integer():
                raise ValueError
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return int(value)

    return parse


positive_int = integer(1)
non_negative_int = integer(0)


def _value_options(rule, flag):
    """The argparse options (`type`, `choices`, `metavar`) that read a value of `rule`."""
    if isinstance(rule, OrNone):
        return _value_options(rule.rule, flag)
    if isinstance(rule, OneOf):
        return {"choices": rule.choices}
    if isinstance(rule, JsonObject):
        return {"type": json_object(flag), "metavar": "JSON"}
    if isinstance(rule, Integer):
        return {"type": integer(rule.low)}
    if isinstance(rule, Boolean):
        return {"action": argparse.BooleanOptionalAction}
    if isinstance(rule, Text):
        return {"type": text(flag)}
    raise TypeError(f"no command-line reading of {rule!r} ({flag}): add one here")


def add_run_arguments(parser, exclude=()):
    """Adds a flag for every field of `RunArguments` but those named in `exclude`, generated
    from the fields' declarations (`run_argument`). A flag left out is None: the preset's value
    or the field's default (`RunArguments.from_preset`)."""
    for field in dataclasses.fields(RunArguments):
        if field.name in exclude:
            continue
        declared = declaration(field)
        if declared.given_by_preset:
            default = "the preset's"
        elif field.default_factory is not dataclasses.MISSING or field.default is None:
            default = "none"
        else:
            default = field.default
        parser.add_argument(
            *declared.flags,
            dest=field.name,
            default=None,
            help=f"{declared.help} (default: {default})",
            **_value_options(declared.rule, declared.flag),
        )
        if field.name == "engine":
            parser.add_argument(
                "--api-stack",
                dest="api_stack",
                default=None,
                choices=API_STACKS,
                help="RLlib's API stack: 'old' is --engine rllib-old, 'new' --engine rllib-new "
                "(the flag of earlier versions)",
            )


def given_run_arguments(args):
    """{field: value} of the `RunArguments` flags given in `args` (those left out are None);
    `--api-stack` gives the engine it names (`with_engine_of_api_stack`)."""
    given = {
        field.name: getattr(args, field.name)
        for field in dataclasses.fields(RunArguments)
        if getattr(args, field.name, None) is not None
    }
    if getattr(args, "api_stack", None) is not None:
        given["api_stack"] = args.api_stack
    return with_engine_of_api_stack(given)


def add_preset_argument(parser, default):
    parser.add_argument(
        "--preset",
        default=default,
        choices=PRESET_CHOICES,
        help="the recipe and environment the runs start from: 'paper' (bridge BoxWorld, Table "
        "1); 'easy' (BoxWorld on a 3 x 6 board, one key and the Gem, 30 steps, smaller batches; "
        "what `make train` runs); 'bridge-small' (5 x 6, solution length 1, 40 steps); "
        "'bridge-medium' (7 x 6, solution lengths 1-2, no step limit) (default: %(default)s)",
    )


def add_agent_argument(parser, default="relational"):
    parser.add_argument("--agent", default=default, choices=AGENTS)


def add_model_config_argument(parser, default=None):
    parser.add_argument(
        "--model-config",
        type=json_object("--model-config"),
        default=default,
        help="JSON object of architecture overrides on the architecture's defaults (not on a "
        "preset's model, as train's), or the name of a model config (e.g. 'front-end', the "
        "presets' model)",
    )


def add_env_config_argument(parser):
    parser.add_argument(
        "--env-config",
        type=json_object("--env-config"),
        default=None,
        help="JSON object of environment arguments, merged over the run's (e.g. "
        "'{\"min_solution_length\": 2}'); with an --env other than the run's, taken as it is",
    )


def add_address_argument(parser):
    parser.add_argument(
        "--address",
        default=None,
        help="a running Ray cluster (HOST:PORT) to train on (not with the keras engine)",
    )


def save_result(result, output):
    """Writes `result.to_dict()` to `output` as JSON (atomically), if the command was given
    one."""
    if output:
        from keras_simplicial.agents.atomic_files import atomic_write_json

        atomic_write_json(output, result.to_dict())
        print(f"Saved {output}")
