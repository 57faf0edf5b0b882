"""What the engine benchmarks measure (`benchmarks/engine_throughput.py`, `engine_gpu.py`), at a
tiny size on this CPU: the engine's frames/s and where its time goes, a run packed into one
archive and unpacked, and a run trained towards a target in windows that resume."""

import argparse
import json

import pytest

from keras_simplicial.agents.experiments.engine_throughput import (
    BENCHMARK_BOARDS,
    add_engine_arguments,
    benchmark_arguments,
    engine_benchmark,
    engine_figures,
    overlap_figures,
    pack_run,
    train_to_target,
    unpack_run,
)
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory

TINY = {
    "num_envs_per_env_runner": 4,
    "overrides": {"train_batch_size": 40, "min_time_s_per_iteration": 0},
    "model_overrides": {"jit_compile": False},
}


def _benchmark_parser():
    from keras_simplicial.agents.experiments.benchmark_files import add_output_arguments

    parser = argparse.ArgumentParser()
    add_engine_arguments(parser, presets=["easy", "bridge-small"], seconds=15.0)
    add_output_arguments(parser)
    return parser


def test_an_engine_benchmark_measures_each_preset_and_agent_and_writes_its_table(tmp_path, capsys):
    table, figures = tmp_path / "t.md", tmp_path / "t.json"
    args = _benchmark_parser().parse_args(
        [
            "--agents",
            "simplicial",
            "--seconds",
            "2",
            "--markdown",
            str(table),
            "--json",
            str(figures),
        ]
    )
    assert args.presets == ["easy", "bridge-small"] and args.seconds == 2.0
    asked = []

    def measure(preset, agent):
        asked.append((preset, agent))
        return [{"frames_per_s": 10.0 * len(asked)}, {"frames_per_s": 1.0}]

    def markdown(results, backend):
        return "\n".join(f"{r['preset']} {r['agent']} {r['frames_per_s']}" for r in results)

    results = engine_benchmark(args, measure, markdown)
    assert asked == [("easy", "simplicial"), ("bridge-small", "simplicial")]
    assert [(r["preset"], r["frames_per_s"]) for r in results] == [
        ("easy", 10.0), ("easy", 1.0), ("bridge-small", 20.0), ("bridge-small", 1.0),
    ]  # fmt: skip
    printed = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in printed[:4]] == results
    assert table.read_text(encoding="utf-8").splitlines() == printed[4:8]
    record = json.loads(figures.read_text(encoding="utf-8"))
    assert record["results"] == results and record["seconds"] == 2.0
    assert record["boards"] == BENCHMARK_BOARDS and "source_sha256" in record["code"]


def test_an_engine_benchmark_names_a_preset_it_does_not_know(capsys):
    with pytest.raises(SystemExit):
        _benchmark_parser().parse_args(["--presets", "huge"])
    assert "--presets" in capsys.readouterr().err


def test_an_engine_benchmark_measures_the_keras_engine_on_the_presets_recipe():
    arguments = benchmark_arguments("bridge-small", "simplicial", {"num_heads": 4})
    reference = RunArguments.from_preset("bridge-small", "simplicial")
    assert arguments.engine == "keras" and arguments.seed == 1
    assert arguments.num_envs_per_env_runner == BENCHMARK_BOARDS
    assert arguments.model_overrides == {**reference.model_overrides, "num_heads": 4}
    assert arguments.env_config == reference.env_config
    assert arguments.overrides == {**reference.overrides, "min_time_s_per_iteration": 0}


def test_the_engines_frames_per_s_and_where_its_time_goes():
    arguments = RunArguments.from_preset("easy", "relational", engine="keras", seed=0, **TINY)
    figures = engine_figures(arguments, seconds=0.5, repeats=2)
    assert figures["boards"] == 4 and figures["train_batch_size"] == 40
    assert figures["frames_per_s"] > 0 and 0 < figures["acting_share"] < 1
    assert figures["learn_ms"] > 0 and figures["act_ms"] > 0
    assert figures["environment_frames_per_s"] > figures["frames_per_s"]
    # The limit: 2 epochs of a 40-step batch and a 4-board acting pass per 40 + 4 frames.
    per_frame = 2 * figures["learn_ms"] / 40 + figures["act_ms"] / 4
    assert figures["limit_frames_per_s"] == pytest.approx(1e3 / per_frame)


def test_the_engine_taking_turns_against_acting_in_a_second_thread():
    arguments = RunArguments.from_preset("easy", "relational", engine="keras", seed=0, **TINY)
    figures = overlap_figures(arguments, seconds=0.3, rounds=2)
    assert figures["boards"] == 4 and len(figures["rounds"]) == 2
    for name in ("turns_frames_per_s", "overlap_frames_per_s"):
        assert all(r[name] > 0 for r in figures["rounds"])
        assert figures[name] == pytest.approx(sum(r[name] for r in figures["rounds"]) / 2)
    ratio = figures["overlap_frames_per_s"] / figures["turns_frames_per_s"]
    assert figures["overlap_over_turns"] == pytest.approx(ratio)


def test_a_run_travels_as_one_archive(tmp_path):
    run = RunDirectory(tmp_path / "here" / "run").create()
    RunArguments(agent="relational").write(run.run_file)
    (run.checkpoints_dir / "latest").write_text("iter_000001\n")
    size = pack_run(run.root, tmp_path / "run.tar.gz")
    assert size == (tmp_path / "run.tar.gz").stat().st_size > 0
    unpacked = unpack_run(tmp_path / "run.tar.gz", tmp_path / "there")
    assert unpacked == tmp_path / "there" / "run"
    assert RunArguments.read(unpacked / "run.json").agent == "relational"
    assert (unpacked / "checkpoints" / "latest").read_text() == "iter_000001\n"


@pytest.mark.slow  # two sittings of a run with greedy checks: about a minute on 2 cores
def test_a_run_trains_towards_its_target_in_windows_that_resume(tmp_path):
    arguments = RunArguments.from_preset("easy", "relational", engine="keras", seed=0, **TINY)
    options = {"check_episodes": 2, "checkpoint_every": 1, "progress": "none"}
    first = train_to_target(
        arguments, tmp_path / "run", target=1.01, seconds=1e6, chunk_steps=40,
        max_timesteps=40, archive=tmp_path / "run.tar.gz", **options,
    )  # fmt: skip
    assert first["timesteps"] == 40 and not first["reached"]
    # The next window starts from the archive alone, elsewhere.
    run_dir = unpack_run(tmp_path / "run.tar.gz", tmp_path / "next")
    second = train_to_target(arguments, run_dir, target=0.0, seconds=1e6, chunk_steps=40, **options)
    assert second["reached"] and second["timesteps"] == 80
    assert [int(r["timesteps"]) for r in RunDirectory(run_dir).read_metrics()] == [40, 80]
