"""`keras-simplicial reproduce` (agents/experiments): its options and the conclusion, set-up and
sections it draws from the numbers."""

import gzip
import json
import types
from pathlib import Path

import pytest

from keras_simplicial.agents.experiments import findings, report, setting, throughput
from keras_simplicial.agents.experiments.reproduce import ReproduceOptions
from keras_simplicial.agents.experiments.statistics import compare_seeds
from keras_simplicial.agents.model.model_config import PAPER_MODEL

AGENTS = ("relational", "simplicial")


def test_options(capsys):
    import keras_simplicial_cli
    from keras_simplicial.agents.experiments.reproduce import comparison_arguments
    from keras_simplicial.agents.training.presets import PRESETS
    from keras_simplicial.agents.training.run_arguments import RunArguments

    options = ReproduceOptions()
    assert options.preset == "bridge-small" and options.seeds == (1, 2, 3)
    assert options.arguments == RunArguments.from_preset("bridge-small")
    assert options.arguments.overrides["lr_schedule"] == [[0, 5e-4], [3_000_000, 5e-5]]
    # Repository paths are the Makefile's, not defaults of the installed package.
    assert (options.out, options.doc, options.figures) == (
        "runs/reproduce-bridge-small",
        "runs/reproduce-bridge-small/reproduction.md",
        "runs/reproduce-bridge-small/figures",
    )
    # Another length anneals the learning rate over the whole run.
    options = ReproduceOptions(stop_timesteps=1_500_000)
    assert options.arguments.overrides["lr_schedule"] == [[0, 5e-4], [1_500_000, 5e-5]]
    run = options.run_arguments("simplicial", 2)
    assert (run.agent, run.seed, run.overrides) == ("simplicial", 2, options.arguments.overrides)
    # A run argument given on top; an lr given alone replaces the schedule.
    given = comparison_arguments("bridge-small", 1_500_000, num_env_runners=2, overrides={"lr": 1})
    assert given.num_env_runners == 2 and "lr_schedule" not in given.overrides
    assert "lr_schedule" not in PRESETS["paper"]["overrides"]
    # The report names the command that made it, with the run arguments given on top.
    assert ReproduceOptions().command() == (
        "keras-simplicial reproduce --preset bridge-small --seeds 1 2 3 --stop-timesteps 3000000 "
        "--out runs/reproduce-bridge-small --doc runs/reproduce-bridge-small/reproduction.md "
        "--figures runs/reproduce-bridge-small/figures"
    )
    masked = comparison_arguments(
        "bridge-small", 1_500_000, env_config={"random_start": True}, mask_blocked_moves=True
    )
    command = ReproduceOptions(stop_timesteps=1_500_000, arguments=masked, probe_episodes=10)
    # Arguments that no command line of the preset gives are refused before anything trains.
    with pytest.raises(ValueError, match=r"env_config \(--env-config\) lacks \['cols', "):
        ReproduceOptions(arguments=RunArguments(env="BridgeBoxWorld-v0"))
    assert command.command().endswith(
        "--probe-episodes 10 --env-config '{\"random_start\": true}' --mask-blocked-moves"
    )
    with pytest.raises(ValueError, match="--stop-timesteps must be a positive number, got 0"):
        ReproduceOptions(stop_timesteps=0)
    with pytest.raises(ValueError, match="--preset must be one of"):
        ReproduceOptions(preset="huge")
    with pytest.raises(ValueError, match="at least 2 seeds"):
        ReproduceOptions(seeds=(1,))
    with pytest.raises(ValueError, match="--throughput-seconds must be a positive number"):
        ReproduceOptions(throughput_seconds=0)
    # The command answers bad options in one line, before anything is imported or trained.
    assert keras_simplicial_cli.main(["reproduce", "--seeds", "1", "--report-only"]) == 2
    assert "keras-simplicial reproduce: error: --seeds needs at least 2 seeds" in (
        capsys.readouterr().err
    )
    with pytest.raises(SystemExit):
        keras_simplicial_cli.main(["reproduce", "--preset", "huge"])
    assert "invalid choice: 'huge'" in capsys.readouterr().err


def test_conclusion_calls_an_agent_ahead_only_by_the_permutation_test():
    separated = compare_seeds([0.1, 0.2, 0.15], [0.8, 0.9, 0.85])
    tied = compare_seeds([0.2, 0.8, 0.5], [0.3, 0.7, 0.45])
    behind = compare_seeds([0.8, 0.9, 0.85], [0.1, 0.2, 0.15])
    overlap = compare_seeds([0.1, 0.5, 0.2], [0.45, 0.6, 0.7])
    fewer_steps = compare_seeds([2.0, 2.5, 2.2], [1.0, 1.2, 1.1], higher_is_better=False)
    five = compare_seeds([0.1, 0.2, 0.15, 0.12, 0.18], [0.8, 0.9, 0.85, 0.82, 0.88])
    text = report.conclusion(
        {
            "late win rate": separated,
            "best": tied,
            "final": behind,
            "curve": overlap,
            "steps to 0.9": fewer_steps,
            "five seeds": five,
        }
    )
    # 3 v 3 seeds: even every run above every other is not a lead, and no interval is given.
    assert "ahead by" not in text.split("On the five seeds")[0]
    assert "On the late win rate, every simplicial run is better than every other run, " in text
    assert "with 3 v 3 seeds is not significant (difference +0.700, p = 0.10, the smallest" in text
    assert "On the best, neither agent is ahead (difference -0.017, p = " in text
    assert "On the final, every relational run is better than every other run" in text
    assert "On the curve, neither agent is ahead" in text
    assert "On the steps to 0.9, every simplicial run is better than every other run" in text
    assert "interval" not in text.split("On the five seeds")[0]
    # 5 v 5 seeds: the permutation test can call it, with the bootstrap interval beside it.
    assert "On the five seeds, the simplicial agent is ahead by 0.700 (difference +0.700, 95% " in (
        text
    )
    assert "p = 0.01)." in text


def test_ahead_section_has_no_interval_below_five_seeds_and_names_runs_that_never_got_there():
    found = _findings(
        {("relational", 1): 0.99, ("relational", 2): 1.0, ("relational", 3): 0.995,
         ("simplicial", 1): 0.82, ("simplicial", 2): 1.0, ("simplicial", 3): 0.86},
    )  # fmt: skip
    for seed in (1, 3):
        found.runs[("simplicial", seed)]["sustained"]["0.9"] = None
    name = "steps to a sustained training win rate of 0.9 (millions)"
    found.comparisons = {
        name: compare_seeds([1.92, 0.82, 2.23], [3.0, 0.79, 3.0], higher_is_better=False)
    }
    text = "\n".join(report.ahead_section(found))
    assert "| measure | relational | simplicial | difference | p |" in text
    assert "interval [" not in text and "95% interval |" not in text
    assert f"| {name} | 1.657 | 2.263 (2 never) | +0.607 | 0.60 (0.10) |" in text
    assert "never: simplicial-seed1, simplicial-seed3" in text
    assert "smallest attainable p is 0.10" in text and "no difference can be significant" in text
    assert "Below 5 seeds per agent no bootstrap interval is given" in text


def test_best_sampled_report_plays_again_a_cached_report_without_ended_by(tmp_path, monkeypatch):
    from keras_simplicial.agents.analysis import evaluation
    from keras_simplicial.agents.training import checkpoints

    checkpoint = tmp_path / "checkpoints" / "iter_000010"
    checkpoint.mkdir(parents=True)  # its contents are never read: load_policy is replaced below
    old = {"checkpoint": str(checkpoint), "overall": {"episodes": 100, "win_rate": 0.5}}
    for mode in ("sampled", "greedy"):
        (tmp_path / f"evaluation_final_{mode}.json").write_text(json.dumps(old))
    played = []

    def evaluate_checkpoint(checkpoint, episodes, explore, output, policy):
        played.append(("sampled" if explore else "greedy", Path(output).name))
        report = {
            "checkpoint": str(checkpoint),
            "overall": {"episodes": episodes, "win_rate": 0.5, "ended_by": {"won": 0.5}},
        }
        Path(output).write_text(json.dumps(report))
        return types.SimpleNamespace(to_dict=lambda: report)

    monkeypatch.setattr(evaluation, "evaluate_checkpoint", evaluate_checkpoint)
    monkeypatch.setattr(checkpoints, "load_policy", lambda checkpoint: object())
    # The best checkpoint is the final one: its sampled report is cached as the final's.
    report = findings.best_sampled_report(tmp_path, checkpoint, 100)
    assert played == [("sampled", "evaluation_final_sampled.json")]
    assert report["overall"]["ended_by"] == {"won": 0.5}
    assert not (tmp_path / "evaluation_best_sampled.json").exists()
    # Now cached with why episodes ended: not played again.
    assert findings.best_sampled_report(tmp_path, checkpoint, 100) == report and len(played) == 1


def test_set_up_declares_every_deviation_from_the_paper():
    from keras_simplicial.agents.training.run_arguments import RunArguments

    rows, kept = setting.paper_deviations(ReproduceOptions(), {"CPU x 2"})
    deviations = {what: (ours, paper) for what, ours, paper in rows}
    assert deviations["board"] == ("5 x 6, N = 15 entities", "7 x 9, N = 40 entities")
    assert deviations["solution lengths"] == ("1", "1-3")
    limit, no_limit = deviations["episode limit"]
    assert limit.startswith("40 steps (shortest plans: 11.0 steps on average, at most 12, on ")
    assert no_limit == "none"
    assert deviations["2-simplicial logits"] == (
        'scaled by 1/48 (`simplicial_logit_scale="auto"`: simplicial_key_dim^-1)',
        "unscaled",
    )
    assert deviations["gain on the 2-simplicial branch"] == (
        'starts at 0 (`simplicial_gain_initializer="zeros"`)',
        "1",
    )
    assert deviations["discount gamma"] == ("0.9", "0.99")
    assert deviations["unroll length (steps)"] == ("10", "40")
    assert deviations["batch"] == (
        "320 steps, each trained on 2 times (`num_epochs`)",
        "1,280 steps, trained on once",
    )
    assert deviations["optimiser, learning rate"] == (
        "RMSProp, 0.0005 at step 0 to 5e-5 at step 3,000,000, linear in between",
        "RMSProp, 0.0002 constant",
    )
    assert deviations["entropy bonus"] == ("0.01", "0.005")
    # A new run clips the global norm, as the paper's code (RLlib 0.7) did: no deviation.
    assert "gradient clipping" not in deviations
    assert "start" not in deviations and "a move the board blocks" not in deviations
    assert "policy" not in deviations
    # What the runs were given on the command line is declared: here an env config and the mask.
    changed = ReproduceOptions(
        arguments=RunArguments.from_preset(
            "bridge-small",
            env_config={"random_start": True, "blocked_move_reward": -0.5},
            mask_blocked_moves=True,
        )
    )
    rows, _ = setting.paper_deviations(changed, {"CPU x 2"})
    deviations_of_the_env = {what: (ours, paper) for what, ours, paper in rows}
    assert deviations_of_the_env["start"] == ("random", "fixed")
    assert deviations_of_the_env["a move the board blocks"] == ("rewarded -0.5", "no cost")
    assert deviations_of_the_env["policy"] == (setting.MASKED_POLICY, setting.PAPER_POLICY)
    assert deviations["actors"][0] == (
        "64 boards sampled in the learner's process, on CPU x 2 (CPU model x logical CPUs)"
    )
    assert "63 workers per machine" in deviations["actors"][1]
    table_1_kept = {
        "decay": 0.99,
        "epsilon": 0.1,
        "momentum": 0.0,
        "vf_loss_coeff": 0.5,
        "vtrace_clip_pg_rho_threshold": 1.0,
        "vtrace_clip_rho_threshold": 1.0,
    }
    assert dict(kept) == {**table_1_kept, "grad_clip": 40.0}
    # At the paper's scale only the architecture (the block's two options and the presets' front
    # end, in PAPER_DEFAULTS's order) and the actors differ; with the paper's model, the actors.
    options = ReproduceOptions(preset="paper")
    rows, _ = setting.paper_deviations(options, {"CPU x 2"})
    front_end = ("conv_filters", "mlp_units", "entity_norm", "centre_pixels")
    assert [what for what, *_ in rows] == [
        "2-simplicial logits",
        "gain on the 2-simplicial branch",
        *(f"`{option}`" for option in front_end),
        "actors",
    ]
    paper = ReproduceOptions(
        preset="paper", arguments=RunArguments.from_preset("paper", model_overrides=PAPER_MODEL)
    )
    assert [what for what, *_ in setting.paper_deviations(paper, {"CPU x 2"})[0]] == ["actors"]


def test_an_option_given_its_papers_value_is_no_deviation_whatever_its_form():
    """run.json holds the paper's filters as a list, the defaults as a tuple: the same value."""
    spelt_out = {"conv_filters": [12, 24], "mlp_units": [256, 256, 256, 256]}
    rows = setting.architecture_deviations({**spelt_out, "simplicial_logit_scale": None})
    assert [what for what, *_ in rows] == ["gain on the 2-simplicial branch"]
    wider = setting.architecture_deviations({"conv_filters": [12, 48]})
    assert ("`conv_filters`", "`[12, 48]`", "`[12, 24]`") in wider


def test_the_recipe_rows_describe_what_the_runs_trained_with():
    """Read from each run's run.json: runs that clipped each variable's gradient declare it,
    whatever a new run would do; runs that differ are named with each value."""
    from keras_simplicial.agents.training.presets import PRESETS
    from keras_simplicial.agents.training.run_arguments import CLIP_EACH_VARIABLE, RunArguments

    # An earlier run.json: the preset's overrides without the clipping, which it did not record.
    preset = {
        k: v for k, v in PRESETS["bridge-small"]["overrides"].items() if k != CLIP_EACH_VARIABLE
    }
    earlier = RunArguments.from_json(
        {"env": "BridgeBoxWorld-v0", "agent": "relational", "overrides": preset}
    ).overrides
    new = RunArguments.from_preset("bridge-small", "relational").overrides
    assert earlier[CLIP_EACH_VARIABLE] is True and new[CLIP_EACH_VARIABLE] is False

    rows, kept = setting.runs_recipe_deviations(
        {"relational-seed1": earlier, "simplicial-seed1": earlier}
    )
    assert dict((what, (ours, paper)) for what, ours, paper in rows)["gradient clipping"] == (
        "each gradient tensor's norm to 40",
        "the global norm to 40",
    )
    assert "grad_clip" not in dict(kept)
    rows, kept = setting.runs_recipe_deviations({"relational-seed1": new})
    assert "gradient clipping" not in [what for what, *_ in rows]
    assert ("grad_clip", 40.0) in kept

    # Seeds added later to runs trained before: each value with its runs; the rest as one.
    rows, kept = setting.runs_recipe_deviations(
        {"relational-seed1": earlier, "simplicial-seed1": earlier, "relational-seed4": new}
    )
    deviations = {what: (ours, paper) for what, ours, paper in rows}
    assert deviations["gradient clipping"] == (
        "each gradient tensor's norm to 40 (relational-seed1, simplicial-seed1); "
        "the global norm to 40 (relational-seed4)",
        "the global norm to 40",
    )
    assert deviations["entropy bonus"] == ("0.01", "0.005")
    assert "grad_clip" not in dict(kept) and dict(kept)["decay"] == 0.99
    assert list(deviations) == [what for what, *_ in setting.recipe_deviations(earlier)[0]]


def test_the_set_up_is_the_runs_own_and_runs_of_another_setting_are_refused():
    """The puzzles and the policy are read from the runs' run.json, whatever `options` would
    train now; runs that do not share them are no comparison, and are named."""
    import dataclasses

    from keras_simplicial.agents.training.run_arguments import RunArguments

    plain = RunArguments.from_preset("bridge-small", "relational", seed=1)
    masked = RunArguments.from_preset(
        "bridge-small",
        "relational",
        seed=1,
        env_config={"random_start": True},
        mask_blocked_moves=True,
    )
    runs = {
        "relational-seed1": masked,
        "simplicial-seed1": dataclasses.replace(masked, agent="simplicial"),
    }
    rows, _ = setting.paper_deviations(ReproduceOptions(), {"CPU x 2"}, runs)
    deviations = {what: (ours, paper) for what, ours, paper in rows}
    assert deviations["start"] == ("random", "fixed")
    assert deviations["policy"] == (setting.MASKED_POLICY, setting.PAPER_POLICY)

    # An env config that writes a default out holds the same puzzles as one that leaves it out.
    explicit = dataclasses.replace(plain, env_config={**plain.env_config, "random_start": False})
    assert setting.shared_setting({"a": plain, "b": explicit}).env_config == plain.env_config
    with pytest.raises(
        ValueError,
        match=r"must share env, env_config, mask_blocked_moves and the architecture .*"
        r"relational-seed1: .*\"random_start\": true.*; simplicial-seed1: ",
    ):
        setting.shared_setting({"relational-seed1": masked, "simplicial-seed1": plain})


def test_throughput_is_measured_once_per_preset_and_cluster(tmp_path, monkeypatch):
    from keras_simplicial.agents.training.rllib import trainer
    from keras_simplicial.agents.training.run_arguments import RunArguments

    calls = []

    def measure(arguments, seconds, warmup_s, address=None):
        layout = (
            arguments.sampler,
            arguments.num_env_runners,
            arguments.num_envs_per_env_runner,
        )
        calls.append((arguments.env_config["rows"], arguments.agent, layout, seconds, warmup_s))
        return {"sampled_fps": {"relational": 3000.0, "simplicial": 2000.0}[arguments.agent]}

    def measured(preset, **changes):
        arguments = RunArguments.from_preset(preset, **changes)
        return throughput.measured_throughput(tmp_path, preset, arguments, seconds=30.0)

    monkeypatch.setattr(throughput, "measure_layout", measure)
    monkeypatch.setattr(trainer, "start_ray", lambda **kwargs: None)
    first = measured("bridge-small")
    assert first["frames_per_s"] == {"relational": 3000.0, "simplicial": 2000.0}
    # The runs' layout: the batched sampler of 64 boards in the driver, bridge-small's 5 rows.
    assert calls == [(5, agent, ("batched", 0, 64), 30.0, 15.0) for agent in AGENTS]
    assert json.loads((tmp_path / "throughput.json").read_text()) == first
    assert first["ray"] == "embedded local Ray" and first["machine"]
    # Stored: not measured again; another preset (or cluster, or layout) is.
    assert measured("bridge-small") == first
    assert len(calls) == 2
    assert measured("easy")["preset"] == "easy"
    assert len(calls) == 4
    again = measured("easy", num_env_runners=8)
    assert again["layout"]["num_env_runners"] == 8
    assert calls[-1][2] == ("batched", 8, 64)
    # Runs that mask blocked moves are timed masking them; a file written before runs could mask
    # timed every move, and stands for unmasked runs.
    assert measured("easy", num_env_runners=8, mask_blocked_moves=True)["mask_blocked_moves"]
    assert len(calls) == 8
    stored = json.loads((tmp_path / "throughput.json").read_text())
    del stored["mask_blocked_moves"]
    (tmp_path / "throughput.json").write_text(json.dumps(stored))
    assert measured("easy", num_env_runners=8, mask_blocked_moves=False)["preset"] == "easy"
    assert len(calls) == 8
    assert measured("easy", num_env_runners=8, mask_blocked_moves=True)["mask_blocked_moves"]
    assert len(calls) == 10
    # Another engine's runs are timed on it, through its own trainer; a file written before the
    # engine was recorded stands for the old stack's runs.
    monkeypatch.setattr(throughput, "measure_engine", measure)
    monkeypatch.setattr(throughput, "measure_layout", None)
    assert measured("easy", engine="keras")["engine"] == "keras"
    assert len(calls) == 12
    stored = json.loads((tmp_path / "throughput.json").read_text())
    stored.pop("engine")
    (tmp_path / "throughput.json").write_text(json.dumps(stored))
    assert measured("easy", engine="keras")["engine"] == "keras"
    assert len(calls) == 14


@pytest.mark.parametrize("engine", ["rllib-old", "rllib-new", "keras"])
def test_throughput_is_measured_on_the_cluster_of_the_runs(engine, tmp_path, monkeypatch):
    import ray

    from keras_simplicial.agents.training.rllib import trainer
    from keras_simplicial.agents.training.run_arguments import RunArguments

    started, measured_at = [], []
    monkeypatch.setattr(trainer, "start_ray", lambda **kwargs: started.append(kwargs))
    monkeypatch.setattr(ray, "shutdown", lambda: started.append("shutdown"))
    monkeypatch.setattr(
        throughput, "measure_layout", lambda arguments, seconds, warmup_s: {"sampled_fps": 1.0}
    )

    def measure_engine(arguments, seconds, warmup_s, address=None):
        measured_at.append(address)
        return {"sampled_fps": 1.0}

    monkeypatch.setattr(throughput, "measure_engine", measure_engine)
    arguments = RunArguments.from_preset("easy", engine=engine, num_env_runners=2)
    stored = throughput.measured_throughput(
        tmp_path, "easy", arguments, seconds=4.0, address="head:6379"
    )
    assert stored["ray"] == "head:6379" and stored["engine"] == engine
    if engine == "rllib-old":  # measure_layout builds its Algorithm on a Ray started here
        assert started == [
            {"address": "head:6379", "num_env_runners": 2, "api_stack": "old"},
            "shutdown",
        ]
        assert measured_at == []
    else:  # the trainer opens as train opens it: on the new stack's Ray, at the address
        assert measured_at == ["head:6379", "head:6379"]
        assert started == (["shutdown"] if engine == "rllib-new" else [])


def test_the_keras_engine_is_timed_through_its_own_trainer():
    from keras_simplicial.agents.training.run_arguments import RunArguments

    arguments = RunArguments.from_preset(
        "easy", "relational", engine="keras", num_envs_per_env_runner=4,
        overrides={"train_batch_size": 40}, model_overrides={"jit_compile": False},
    )  # fmt: skip
    assert throughput.measure_engine(arguments, seconds=0.5, warmup_s=0)["sampled_fps"] > 0


def _findings(late_rates):
    """Findings with only what `plateaus` and `scale_section` read: {(agent, seed): late rate}."""

    def ended(won):  # a third of the losses open the bridge, the rest run out of steps
        lost = 1 - won
        return {
            "won": won,
            "opened_bridge": lost / 3,
            "opened_wrong_box": 0.0,
            "out_of_steps": 2 * lost / 3,
        }

    def record(late):
        return {
            "late": late,
            "sustained": {"0.5": 500_000, "0.9": 1_000_000},
            "evaluations": {
                which: {"greedy": {"win_rate": min(1.0, late + 0.05)}}
                for which in ("best", "final")
            },
            "best_sampled_report": {
                "per_puzzle_type": {
                    "(1, 0, 0)": {"episodes": 500, "win_rate": 0.98, "ended_by": ended(0.98)},
                    "(1, 1, 2)": {
                        "episodes": 500,
                        "win_rate": 2 * late - 0.98,
                        "ended_by": ended(2 * late - 0.98),
                    },
                    "(2, 0, 0)": {"episodes": 0, "win_rate": 0.0},
                }
            },
        }

    return findings.Findings(
        setting=setting.SharedSetting("BridgeBoxWorld-v0", {}, False, {}),
        deviations=[],
        kept_from_table_1=[],
        runs={key: record(late) for key, late in late_rates.items()},
        comparisons={},
        per_type={},
        loss_causes={},
        random_rate=0.02,
        time_factor={},
        throughput={},
        curve_paths={},
        per_type_path=Path("x.png"),
        attention={},
    )


def test_plateaus_name_the_runs_held_below_0_9_and_the_type_they_lose():
    found = _findings(
        {("relational", 1): 0.99, ("simplicial", 1): 0.82, ("relational", 2): 1.0,
         ("simplicial", 2): 0.995},
    )  # fmt: skip
    [(agent, seed, late, puzzle_type, rate, losses, final)] = findings.plateaus(found)
    assert (agent, seed, late, puzzle_type) == ("simplicial", 1, 0.82, (1, 1, 2))
    assert rate == pytest.approx(0.66) and final == pytest.approx(0.87)
    assert losses == pytest.approx({"opened_bridge": 0.34 / 3, "out_of_steps": 0.68 / 3})
    text = "\n".join(report.scale_section(found))
    assert "simplicial-seed1 at 0.820 (its best checkpoint wins 0.660 of (1, 1, 2) puzzles, " in (
        text
    )
    assert "sampled; lost: opened bridge 0.113; lost: out of steps 0.227; its final " in text
    assert "final checkpoint 0.870 greedy)" in text and "left the plateau" not in text
    # A run whose final checkpoint passes 0.9 left the plateau at the end.
    found.runs[("simplicial", 1)]["evaluations"]["final"]["greedy"]["win_rate"] = 0.99
    text = "\n".join(report.scale_section(found))
    assert "final checkpoint 0.990 greedy, so it left the plateau in its last steps)" in text
    assert "0 of 2 relational and 1 of 2 simplicial runs" in text
    assert "stuck before the stage where the paper's agents part" in text

    found = _findings({("relational", 1): 0.95, ("simplicial", 1): 0.97})
    assert findings.plateaus(found) == []
    text = "\n".join(report.scale_section(found))
    assert "neither agent is held by a puzzle type" in text
    found.setting = setting.SharedSetting(
        "BridgeBoxWorld-v0",
        {"rows": 5, "cols": 6, "max_solution_length": 1, "max_steps": 40},
        False,
        {},
    )
    found.per_type = {"relational": {(1, 0, 0): (1.0, 0.0, []), (1, 1, 2): (1.0, 0.0, [])}}
    text = "\n".join(report.scale_section(found))
    assert "plays a 5 x 6 board with solution lengths up to 1 (puzzle types (1, 0, 0), " in text
    assert "a horizon of 40 steps" in text and "neither confirm nor refute" in text


def test_report_reads_packed_runs_and_names_the_runs_without_metrics(tmp_path):
    packed, plain, empty = (tmp_path / name for name in ("packed", "plain", "empty"))
    for run in (packed, plain, empty):
        run.mkdir()
    (packed / "metrics.csv.gz").write_bytes(gzip.compress(b"training_iteration\n1\n"))
    (plain / "metrics.csv").write_text("training_iteration\n1\n")
    run_dirs = {("relational", 1): packed, ("relational", 2): plain, ("simplicial", 1): empty}
    options = types.SimpleNamespace(figures=tmp_path / "figures")
    with pytest.raises(FileNotFoundError) as missing:
        findings.findings(options, run_dirs, throughput={})
    assert str(missing.value) == (
        "No run yet for [('simplicial', 1)]; run without --report-only first."
    )


@pytest.mark.slow
def test_trains_resumes_and_reports_from_the_runs_alone(tmp_path):
    import keras_simplicial_cli

    out, doc, figures = tmp_path / "runs", tmp_path / "reproduction.md", tmp_path / "figures"
    argv = [
        "--seeds", "1", "2", "--stop-timesteps", "15000", "--eval-episodes", "10",
        "--probe-episodes", "10", "--out", str(out), "--doc", str(doc), "--figures", str(figures),
        "--throughput-seconds", "4",
    ]  # fmt: skip
    assert keras_simplicial_cli.main(["reproduce", *argv]) == 0
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
    throughput = json.loads((out / "throughput.json").read_text())
    assert all(throughput["frames_per_s"][agent] > 0 for agent in ("relational", "simplicial"))
    assert "frames/s of both agents trained back to back on one machine" in text
    # Again, from the run directories alone, packed as committed runs are: nothing is trained
    # and the numbers are the same.
    doc.unlink()
    for run in out.glob("*-seed*"):
        assert keras_simplicial_cli.main(["pack-metrics", str(run)]) == 0
    assert keras_simplicial_cli.main(["reproduce", *argv, "--report-only"]) == 0
    assert doc.read_text() == text


def test_summary_counts_solved_runs_and_states_what_three_seeds_allow():
    found = _findings(
        {("relational", 1): 0.99, ("relational", 2): 1.0, ("relational", 3): 0.995,
         ("simplicial", 1): 0.82, ("simplicial", 2): 1.0, ("simplicial", 3): 0.97},
    )  # fmt: skip
    found.runs[("simplicial", 1)]["sustained"]["0.9"] = None
    found.comparisons = {
        "mean training win rate over the run": compare_seeds([0.6, 0.7, 0.65], [0.5, 0.72, 0.55]),
        "steps to a sustained training win rate of 0.9 (millions)": compare_seeds(
            [1.7, 0.8, 2.0], [1.8, 1.0, 2.9], higher_is_better=False
        ),
        "best checkpoint, greedy": compare_seeds([1.0, 1.0, 1.0], [0.85, 1.0, 0.99]),
    }
    assert set(found.comparisons) <= set(findings.MEASURES)
    text = "\n".join(report.summary_section(found))
    assert "the board (training win rate over the last tenth of the run at least 0.9)" in text
    assert "relational 3 of 3, simplicial 2 of 3;" in text
    assert "the next 200,000 steps average at least 0.9): relational 3 of 3, simplicial 2 of 3" in (
        text
    )
    assert "wins at least 0.9 greedily on fresh episodes: relational 3 of 3, " in text
    assert "simplicial 2 of 3." in text
    learn, end = text.split("- How early they learn: ")[1].split("- Where they end: ")
    assert "On the mean training win rate over the run, neither agent is ahead" in learn
    assert "sustained training win rate of 0.9 (millions), neither agent is ahead" in learn
    assert "best checkpoint, greedy" in end and "mean training win rate over the run" not in end
    assert "With 3 v 3 seeds the smallest attainable p is 0.10" in text
    assert "so no difference can be significant" in text


def test_per_type_section_shows_why_lost_episodes_ended():
    found = _findings({("relational", 1): 0.99, ("simplicial", 1): 0.82})
    reports = [
        {
            "agent": agent,
            "per_puzzle_type": {
                "(1, 1, 2)": {
                    "episodes": 500,
                    "win_rate": won,
                    "ended_by": {
                        "won": won,
                        "opened_bridge": 0.0,
                        "opened_wrong_box": 0.0,
                        "out_of_steps": 1 - won,
                    },
                },
                "(2, 0, 0)": {"episodes": 0, "win_rate": 0.0},
            },
        }
        for agent, won in (("relational", 0.99), ("simplicial", 0.68))
    ]
    found.loss_causes = findings.loss_causes(reports)
    found.per_type = {
        "relational": {(1, 1, 2): (0.99, 0.0, [0.99])},
        "simplicial": {(1, 1, 2): (0.68, 0.0, [0.68])},
    }
    text = "\n".join(report.per_type_section(ReproduceOptions(), found))
    assert (
        "| puzzle type | agent | win rate | lost: opened bridge | lost: opened wrong box | "
        "lost: out of steps |" in text
    )
    assert "| (1, 1, 2) | simplicial | 0.680 (0.000) | 0.000 | 0.000 | 0.320 |" in text
    assert "| (1, 1, 2) | relational | 0.990 (0.000) | 0.000 | 0.000 | 0.010 |" in text
