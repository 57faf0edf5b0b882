"""The one shape of a result: a dataclass with to_dict() and to_markdown()."""

import dataclasses

import pytest

from keras_simplicial.agents.analysis.results import Result, cell, markdown_table


def test_a_result_must_say_how_it_prints():
    @dataclasses.dataclass
    class Unprintable(Result):
        value: float

    with pytest.raises(TypeError, match="to_markdown"):
        Unprintable(1.0)

    @dataclasses.dataclass
    class Printable(Result):
        value: float

        def to_markdown(self):
            return markdown_table(["value"], [[cell(self.value)]])

    result = Printable(0.5)
    assert result.to_dict() == {"value": 0.5}
    assert result.to_markdown().splitlines() == ["| value |", "|---|", "| 0.500 |"]
