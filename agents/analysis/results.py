"""The one shape of a result that a command prints or saves.

    result = logic_probe(agent, env_id, env_config)
    print(result.to_markdown())         # what the command prints
    json.dump(result.to_dict(), f)      # what `--output` writes (JSON types only)

Every analysis result is a dataclass with these two methods (`Result`): the evaluation, the logic
and inventory probes, the policy map, a run's summary, the imitation check, the held-keys curve
and a sweep's report. `to_dict()` is each field as JSON (the dataclass's fields, unless the
result says otherwise); `to_markdown()` is Markdown: its tables (`markdown_table`), most
with a line before them saying what was measured.
"""

import abc
import dataclasses

from keras_simplicial.agents.atomic_files import atomic_write_json, atomic_write_text


class Result(abc.ABC):
    """A dataclass result with `to_dict()` (JSON) and `to_markdown()` (what a command prints);
    a result without `to_markdown()` cannot be instantiated."""

    def to_dict(self):
        return dataclasses.asdict(self)

    @abc.abstractmethod
    def to_markdown(self):
        """What the command prints: a line saying what was measured, then a table."""


def markdown_table(header, rows):
    """A Markdown table of `header` (column titles) and `rows` (lists of cells, as text)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, cells)) + " |" for cells in rows])


def cell(value, digits=3):
    """A number as a table's cell: `digits` decimals, "-" for None or NaN."""
    if value is None or value != value:
        return "-"
    return f"{value:.{digits}f}"


def save_report(text, data, markdown=None, json_path=None):
    """What a benchmark script reports: prints `text` (its Markdown table) and writes it to
    `markdown` and `data` (JSON types) to `json_path`, each atomically, where a path is given."""
    print(text)
    if markdown:
        atomic_write_text(markdown, text)
    if json_path:
        atomic_write_json(json_path, data, indent=1)
