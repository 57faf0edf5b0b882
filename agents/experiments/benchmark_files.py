"""What a benchmark in `benchmarks/` writes besides its printout: its Markdown table
(`--markdown FILE`) and its figures (`--json FILE`), each written atomically, the figures naming
the code that measured them (`provenance`), as every result file does; and the model a training
benchmark measures (`--model-config`).

    parser = argparse.ArgumentParser(description=...)
    add_model_argument(parser)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    ...
    write_outputs(args, table, {"backend": backend, "model_config": args.model_config, ...})
"""

from keras_simplicial.agents.atomic_files import atomic_write_json, atomic_write_text
from keras_simplicial.agents.provenance import provenance

# The model the training benchmarks measure unless `--model-config` says otherwise: the model of
# their committed figures (docs/benchmarks.md), the presets' model before the front end became
# it (`model_config.PRE_FRONT_END_MODEL`). The front end's cost against it: front_end_cost.py.
BENCHMARK_MODEL = "pre-front-end"


def add_model_argument(parser):
    """Adds `--model-config` to `parser`: the model measured, merged over the preset's, as
    `keras-simplicial train --model-config` takes it (a JSON object or the name of a model
    config); parsed to a dict, `BENCHMARK_MODEL`'s by default."""
    import argparse

    from keras_simplicial.agents.model.model_config import parse_model_config

    def model_config(text):
        try:
            return parse_model_config(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parser.add_argument(
        "--model-config",
        type=model_config,
        default=BENCHMARK_MODEL,
        help=f"the model measured, a JSON object or a named model config (default: "
        f"{BENCHMARK_MODEL}, the model of the committed figures)",
    )


def add_output_arguments(parser, table="table"):
    """Adds `--markdown FILE` (the `table`) and `--json FILE` (the figures) to `parser`."""
    parser.add_argument(
        "--markdown", default=None, metavar="FILE", help=f"also write the {table} to this file"
    )
    parser.add_argument(
        "--json",
        default=None,
        metavar="FILE",
        help="also write the figures, and the code that measured them, to this file",
    )


def write_outputs(args, text, record):
    """Writes `text` to `args.markdown` and `record` with its `"code"` (`provenance()`) to
    `args.json`, each where it is given, atomically. Returns the record as written."""
    written = {**record, "code": provenance()}
    if args.markdown:
        atomic_write_text(args.markdown, text if text.endswith("\n") else text + "\n")
    if args.json:
        atomic_write_json(args.json, written, indent=1)
    return written
