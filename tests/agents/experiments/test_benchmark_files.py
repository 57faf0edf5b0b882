"""What a benchmark writes (`experiments.benchmark_files`): its table and its figures, where asked,
the figures naming the code that measured them; and every benchmark that writes figures writes
them through it."""

import argparse
import json
from pathlib import Path

from keras_simplicial.agents.experiments.benchmark_files import add_output_arguments, write_outputs
from keras_simplicial.agents.provenance import provenance

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


def _arguments(argv):
    parser = argparse.ArgumentParser()
    add_output_arguments(parser)
    return parser.parse_args(argv)


def test_the_table_and_the_figures_with_the_code_that_measured_them(tmp_path):
    table, figures = tmp_path / "out" / "t.md", tmp_path / "out" / "t.json"
    args = _arguments(["--markdown", str(table), "--json", str(figures)])
    written = write_outputs(args, "| a |\n|---|", {"backend": "tensorflow", "results": [1.5]})
    assert table.read_text(encoding="utf-8") == "| a |\n|---|\n"
    record = json.loads(figures.read_text(encoding="utf-8"))
    assert record == written
    assert record["backend"] == "tensorflow" and record["results"] == [1.5]
    assert record["code"]["source_sha256"] == provenance()["source_sha256"]
    assert sorted(p.name for p in table.parent.iterdir()) == ["t.json", "t.md"]  # no temporaries


def test_nothing_is_written_unless_asked(tmp_path):
    write_outputs(_arguments([]), "| a |\n", {"results": []})
    write_outputs(_arguments(["--json", str(tmp_path / "t.json")]), "| a |\n", {"results": []})
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]


def test_every_benchmark_writing_figures_names_its_code():
    # The ways a record names its code: write_outputs (engine_benchmark calls it), or its own
    # "code" entry.
    naming = ("write_outputs(", "engine_benchmark(", '"code": provenance(')
    writing = [
        script
        for script in sorted(BENCHMARKS.glob("*.py"))
        if any(
            w in script.read_text(encoding="utf-8")
            for w in (
                "write_outputs(",
                "engine_benchmark(",
                "_json(",
                "json.dump(",
                "write_text(json",
            )
        )
    ]
    assert {
        "engine_throughput.py",
        "engine_overlap.py",
        "front_end_cost.py",
        "engine_gpu.py",
        "fused_kernel_cost.py",
    } <= {s.name for s in writing}
    for script in writing:
        text = script.read_text(encoding="utf-8")
        assert "json.dump(" not in text and "write_text(json" not in text, script.name
        assert any(name in text for name in naming), (
            f"{script.name} writes figures without their code"
        )
