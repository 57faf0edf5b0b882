"""benchmarks/reproduce_small.py: its arguments and the conclusion it draws from the numbers."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce_small.py"


@pytest.fixture(scope="module")
def reproduce():
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("reproduce_small", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_arguments(reproduce, capsys):
    from keras_simplicial.agents.training.impala import PRESETS

    args = reproduce.parse_args([])
    assert args.preset == "bridge-small" and args.seeds == [1, 2, 3]
    assert args.config == {"lr_schedule": PRESETS["bridge-small"]["overrides"]["lr_schedule"]}
    # Another length anneals the learning rate over the whole run.
    args = reproduce.parse_args(["--stop-timesteps", "1500000"])
    assert args.config == {"lr_schedule": [[0, 5e-4], [1_500_000, 5e-5]]}
    with pytest.raises(SystemExit):
        reproduce.parse_args(["--stop-timesteps", "0"])
    assert "--stop-timesteps must be a positive" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        reproduce.parse_args(["--preset", "huge"])
    assert "--preset must be one of" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        reproduce.parse_args(["--seeds", "1"])
    assert "at least 2 seeds" in capsys.readouterr().err


def test_conclusion_follows_the_numbers(reproduce):
    from keras_simplicial.agents.analysis.comparison import compare_seeds

    ahead = compare_seeds([0.1, 0.2, 0.15], [0.8, 0.9, 0.85])
    tied = compare_seeds([0.2, 0.8, 0.5], [0.3, 0.7, 0.45])
    behind = compare_seeds([0.8, 0.9, 0.85], [0.1, 0.2, 0.15])
    overlap = compare_seeds([0.1, 0.5, 0.2], [0.45, 0.6, 0.7])
    fewer_steps = compare_seeds([2.0, 2.5, 2.2], [1.0, 1.2, 1.1], higher_is_better=False)
    text = reproduce.conclusion(
        {
            "late win rate": ahead,
            "best": tied,
            "final": behind,
            "curve": overlap,
            "steps to 0.9": fewer_steps,
        }
    )
    assert "the simplicial agent is ahead by 0.700 on every seed" in text
    assert "p = 0.10, the smallest p these runs allow" in text
    assert "On the best, neither agent is ahead (difference -0.017" in text
    assert "On the final, the relational agent is ahead by 0.700 on every seed" in text
    assert "On the curve, the simplicial agent is ahead on average but the runs overlap" in text
    assert "On the steps to 0.9, the simplicial agent is ahead by 1.133 on every seed" in text


def _findings(reproduce, late_rates):
    """Findings with only what `plateaus` and `scale_section` read: {(agent, seed): late rate}."""

    def record(late):
        return {
            "late": late,
            "best_sampled_report": {
                "per_puzzle_type": {
                    "(1, 0, 0)": {"episodes": 500, "win_rate": 0.98},
                    "(1, 1, 2)": {"episodes": 500, "win_rate": 2 * late - 0.98},
                    "(2, 0, 0)": {"episodes": 0, "win_rate": 0.0},
                }
            },
        }

    return reproduce.Findings(
        preset={},
        runs={key: record(late) for key, late in late_rates.items()},
        comparisons={},
        per_type={},
        random_rate=0.02,
        time_factor={},
        frames_per_s={},
        speed_machine=None,
        curve_paths={},
        per_type_path=Path("x.png"),
        attention={},
    )


def test_plateaus_name_the_runs_held_below_0_9_and_the_type_they_lose(reproduce):
    found = _findings(
        reproduce,
        {("relational", 1): 0.99, ("simplicial", 1): 0.82, ("relational", 2): 1.0,
         ("simplicial", 2): 0.995},
    )  # fmt: skip
    [(agent, seed, late, puzzle_type, rate)] = reproduce.plateaus(found)
    assert (agent, seed, late, puzzle_type) == ("simplicial", 1, 0.82, (1, 1, 2))
    assert rate == pytest.approx(0.66)
    text = "\n".join(reproduce.scale_section(found))
    assert "simplicial-seed1 at 0.820 (its best checkpoint wins 0.660 of (1, 1, 2)" in text
    assert "here it holds 1 simplicial run(s) out of 2 relational, 2 simplicial" in text

    found = _findings(reproduce, {("relational", 1): 0.95, ("simplicial", 1): 0.97})
    assert reproduce.plateaus(found) == []
    assert "neither agent holds at a plateau" in "\n".join(reproduce.scale_section(found))


@pytest.mark.slow
def test_trains_resumes_and_reports_from_the_runs_alone(reproduce, tmp_path):
    out, doc, figures = tmp_path / "runs", tmp_path / "reproduction.md", tmp_path / "figures"
    argv = [
        "--seeds", "1", "2", "--stop-timesteps", "15000", "--eval-episodes", "10",
        "--probe-episodes", "10", "--out", str(out), "--doc", str(doc), "--figures", str(figures),
    ]  # fmt: skip
    assert reproduce.main(argv) == 0
    text = doc.read_text()
    for agent in ("relational", "simplicial"):
        for seed in (1, 2):
            assert f"| {agent}-seed{seed} |" in text
            assert (out / f"{agent}-seed{seed}" / "probe_best.json").exists()
    for section in ("## Learning curves", "## Which agent is ahead", "## Logic probe"):
        assert section in text
    for name in ("learning_curves", "learning_curves_per_run", "learning_curves_time_adjusted"):
        assert (figures / f"{name}.png").exists()
    assert (figures / "simplicial_best_two_simplicial.png").exists()
    assert (figures / "relational_best_one_simplicial.png").exists()
    # Again, from the run directories alone: nothing is trained and the numbers are the same.
    doc.unlink()
    assert reproduce.main(argv + ["--report-only"]) == 0
    assert doc.read_text() == text
