"""What a benchmark in `benchmarks/` writes besides its printout: its Markdown table
(`--markdown FILE`) and its figures (`--json FILE`), each written atomically, the figures naming
the code that measured them (`provenance`), as every result file does.

    parser = argparse.ArgumentParser(description=...)
    add_output_arguments(parser)
    args = parser.parse_args(argv)
    ...
    write_outputs(args, table, {"backend": backend, "results": results})
"""

from keras_simplicial.agents.atomic_files import atomic_write_json, atomic_write_text
from keras_simplicial.agents.provenance import provenance


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
