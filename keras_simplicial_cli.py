"""`keras-simplicial`: train, evaluate, plot and play from the command line.

    keras-simplicial train --run IMPALA --env BridgeBoxWorld-v0 --agent simplicial --out runs/a
    keras-simplicial evaluate runs/a --episodes 1000
    keras-simplicial export-policy runs/a --best                      # as Keras weights, for good
    keras-simplicial plot runs/a runs/b --out curves.png
    keras-simplicial summary runs/a --every 1000000                     # why episodes end, per type
    keras-simplicial play --env BridgeBoxWorld-v0 --seed 3
    keras-simplicial visualize runs/a --seed 3 --step 18 --gif
    keras-simplicial explain runs/a --seed 3
    keras-simplicial probe runs/a --episodes 500
    keras-simplicial inventory runs/a                                   # does it read held keys?
    keras-simplicial policy-map runs/a --seed 0
    keras-simplicial imitate --preset bridge-medium --agent relational
    keras-simplicial dagger --agent simplicial --seed 1 --out runs/dagger-s1  # supervised, DAgger
    keras-simplicial plot-types a.json b.json c.json --types 1,1,2 2,2,4
    keras-simplicial reproduce --preset bridge-small --seeds 1 2 3     # the paper's comparison
    keras-simplicial sweep --preset easy --seeds 1 2 3 4 5             # learning over seeds

`train` mirrors the old `rllib train` command (RLlib 2.60 no longer ships one). Bad input ends the
program with exit status 2 and one line naming the problem, not a traceback (set
KERAS_SIMPLICIAL_DEBUG=1 to see the traceback); a command whose optional dependencies are not
installed says in one line which extra to install.

Each command's arguments and what it does live together in `keras_simplicial.agents.commands`,
one light module per group; this module builds the parser from them and runs the command. A
command imports what it needs when it runs, so `--help` and argument errors answer at once,
without TensorFlow; TensorFlow's C++ log lines are kept quiet unless `--verbose`.
"""

import argparse
import contextlib
import json
import os
import sys

# Level 3 (fatal only) unless the user chose one, before the package sets its default of 2: see
# `_tensorflow_start_up_lines`.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from keras_simplicial.agents.commands import COMMANDS  # noqa: E402
from keras_simplicial.agents.training.engine_record import EngineUnavailable  # noqa: E402
from keras_simplicial.extras import extra_of, missing_module  # noqa: E402


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and a pointer to --help), not the usage text."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser():
    parser = OneLineErrorParser(
        prog="keras-simplicial",
        description="The 2-simplicial Transformer: train, evaluate and inspect BoxWorld agents.",
    )
    subcommands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=OneLineErrorParser
    )
    for command in COMMANDS:
        subparser = subcommands.add_parser(
            command.name, help=command.help, description=command.description or command.help
        )
        command.arguments(subparser)
        subparser.add_argument("--verbose", action="store_true", help="show TensorFlow's log lines")
        # Under a name no flag can write (train has a --run flag, whose value is args.run).
        subparser.set_defaults(_command=command)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    command = args._command
    try:
        if command.environment is not None:  # before Keras: its backend is chosen on import
            os.environ.update(command.environment(args))
        # Loaded here, where its start-up lines are quiet, where it is installed: the Keras
        # engine trains on JAX without it (a command that needs it imports it, and a machine
        # without it gets the install line below).
        if command.extra == "agents":
            with _tensorflow_start_up_lines(shown=args.verbose), _unless_missing("tensorflow"):
                import tensorflow  # noqa: F401
        return command.run(args) or 0
    except ModuleNotFoundError as error:
        missing = missing_module(error)
        # Keras on PyTorch (the new API stack, `--api-stack new`) needs the [torch] extra too.
        extra = extra_of(error, command.extra)
        if extra is None or os.environ.get("KERAS_SIMPLICIAL_DEBUG"):
            raise
        print(
            f"keras-simplicial {command.name}: error: this command needs the [{extra}] "
            f"extra (no module named {missing!r}): pip install 'keras-simplicial[{extra}]'",
            file=sys.stderr,
        )
        return 1
    except (ValueError, FileNotFoundError, json.JSONDecodeError, EngineUnavailable) as error:
        if os.environ.get("KERAS_SIMPLICIAL_DEBUG"):
            raise
        print(f"keras-simplicial {command.name}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:  # a sweep's run says where it stopped
        detail = f" ({interrupt})" if str(interrupt) else ""
        print(f"keras-simplicial {command.name}: interrupted{detail}", file=sys.stderr)
        return 130


@contextlib.contextmanager
def _unless_missing(module):
    """Goes on where `module` itself is not installed (any other import error is raised)."""
    try:
        yield
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] != module:
            raise


@contextlib.contextmanager
def _tensorflow_start_up_lines(shown):
    """Unless `shown`: TensorFlow's C++ log level 3, and stderr closed while TensorFlow loads.

    Level 3 (fatal only) as in the Ray workers: at level 2 a machine without a GPU still gets
    "failed call to cuInit" as an error line. TensorFlow 2.21 writes its start-up lines (oneDNN,
    CUDA drivers) to file descriptor 2 before it reads its log level, so they are silenced at the
    descriptor while it loads. Python exceptions are unaffected.
    """
    if shown:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
