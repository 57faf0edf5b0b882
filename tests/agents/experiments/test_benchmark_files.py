"""What a benchmark writes (`experiments.benchmark_files`): its table and its figures, where asked,
the figures naming the code that measured them; every benchmark that writes figures writes them
through it; and the model a training benchmark measures."""

import argparse
import json
from pathlib import Path

import pytest

from keras_simplicial.agents.experiments.benchmark_files import (
    add_model_argument,
    add_output_arguments,
    write_outputs,
)
from keras_simplicial.agents.model.model_config import (
    FRONT_END_MODEL,
    with_architecture_defaults,
)
from keras_simplicial.agents.provenance import provenance
from keras_simplicial.agents.training.presets import PRESETS
from keras_simplicial.agents.training.run_arguments import RunArguments

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
TRAINING_BENCHMARKS = ("engine_overlap.py", "engine_throughput.py", "learner_step_backends.py")
TRAINING_BENCHMARKS += ("stack_throughput.py", "train_throughput.py")


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


def _model(argv):
    parser = argparse.ArgumentParser()
    add_model_argument(parser)
    return parser.parse_args(argv).model_config


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_training_benchmark_measures_the_model_of_its_committed_figures_by_default(preset):
    # The committed figures were measured when a preset gave no model: the architecture's
    # defaults, which the default model config gives back over any preset's model.
    arguments = RunArguments.from_preset(preset, "simplicial", model_overrides=_model([]))
    assert arguments.model_overrides == with_architecture_defaults({})


def test_a_training_benchmark_measures_the_model_it_is_given(capsys):
    assert _model(["--model-config", "front-end"]) == FRONT_END_MODEL
    assert _model(["--model-config", '{"num_heads": 4}']) == {"num_heads": 4}
    with pytest.raises(SystemExit):
        _model(["--model-config", "{not json"])
    assert "--model-config is not valid JSON" in capsys.readouterr().err


def test_every_benchmark_that_trains_a_preset_takes_the_model_it_measures():
    # front_end_cost.py measures its own candidates, written whole; engine_gpu.py, on a lent
    # machine, the preset's model unless its --model-config says otherwise.
    own_models = {"front_end_cost.py", "engine_gpu.py"}
    sources = {
        script.name: script.read_text(encoding="utf-8") for script in BENCHMARKS.glob("*.py")
    }
    starts = ("from_preset(", "benchmark_arguments(", '"--preset",')
    training = {
        name
        for name, source in sources.items()
        if name not in own_models and any(start in source for start in starts)
    }
    assert set(TRAINING_BENCHMARKS) <= training
    assert [
        name for name in sorted(training) if "add_model_argument(parser)" not in sources[name]
    ] == []
