"""The analysis commands on real RLlib checkpoints (one relational and one simplicial, saved
without training): visualize, explain, probe, plot-types, and their one-line errors."""

import json
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import keras_simplicial_cli as cli  # noqa: E402

QUICK = {"train_batch_size": 160, "min_time_s_per_iteration": 1}
EASY_ENV = {"max_solution_length": 1, "max_steps": 60}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    import ray

    from keras_simplicial.agents.training.rllib.trainer import WORKER_ENV_VARS, build_algorithm
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.run_directory import RunDirectory

    root = tmp_path_factory.mktemp("checkpoints")
    # address="local": a private Ray even if another Ray cluster runs on this machine.
    ray.init(
        address="local",
        num_cpus=1,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": dict(WORKER_ENV_VARS)},
        logging_level="ERROR",
    )
    saved = {}
    try:
        for kind in ("relational", "simplicial"):
            arguments = RunArguments(
                env="BridgeBoxWorld-v0",
                agent=kind,
                env_config=EASY_ENV,
                model_overrides={"jit_compile": False},  # XLA: test_models, test_training
                overrides=QUICK,
                num_env_runners=0,
                num_envs_per_env_runner=2,
                seed=0,
            )
            run = RunDirectory(root / kind).create()
            arguments.write(run.run_file)
            algorithm = build_algorithm(arguments)
            try:
                saved[kind] = run.save_checkpoint(algorithm, 0)
            finally:
                algorithm.stop()
    finally:
        ray.shutdown()
    return saved


def test_loaded_attention_agent_acts_like_the_rllib_policy(checkpoints):
    from keras_simplicial.agents.training.checkpoints import load_attention_agent, load_policy

    for kind, checkpoint in checkpoints.items():
        agent, arguments = load_attention_agent(checkpoint.parent.parent)
        assert agent.kind == kind and arguments.env_config == EASY_ENV
        observations = np.random.default_rng(0).integers(0, 256, (4, 7, 10, 3)).astype(np.uint8)
        _, _, fetches = load_policy(checkpoint).compute_actions(observations, explore=False)
        logits, _, attention = agent(observations)
        np.testing.assert_allclose(logits, fetches["action_dist_inputs"], rtol=1e-5, atol=1e-5)
        assert attention.one_simplicial[0].shape[-1] == (42 if kind == "simplicial" else 40)


def test_the_exported_policy_gives_the_checkpoints_logits(checkpoints, tmp_path):
    """`export-policy` writes RLlib's policy as Keras weights that play as RLlib's policy does,
    read by the same loaders, without RLlib."""
    from keras_simplicial.agents.training.checkpoints import load_attention_agent, load_policy

    observations = np.random.default_rng(2).integers(0, 256, (8, 7, 10, 3)).astype(np.uint8)
    for kind, checkpoint in checkpoints.items():
        assert cli.main(["export-policy", str(checkpoint), "--out", str(tmp_path / kind)]) == 0
        exported = load_policy(tmp_path / kind)
        assert exported.model.kind == kind
        _, _, fetches = load_policy(checkpoint).compute_actions(observations, explore=False)
        logits = np.asarray(exported.model.logits_and_values(observations)[0])
        np.testing.assert_allclose(logits, fetches["action_dist_inputs"], rtol=1e-5, atol=1e-5)
        agent, arguments = load_attention_agent(tmp_path / kind)
        assert arguments.env_config == EASY_ENV
        np.testing.assert_allclose(agent(observations)[0], logits, rtol=1e-5, atol=1e-5)


def test_greedy_check_plays_the_saved_weights(checkpoints):
    from keras_simplicial.agents.analysis.evaluation import policy_logits
    from keras_simplicial.agents.rollout import episode_outcomes
    from keras_simplicial.agents.training.checkpoints import load_policy, run_arguments_of
    from keras_simplicial.agents.training.greedy_check import CHECK_SEED, GreedyCheck

    for checkpoint in checkpoints.values():
        arguments = run_arguments_of(checkpoint)
        check = GreedyCheck(arguments, episodes=8)
        win_rate = check(checkpoint)
        # Its model holds the checkpoint's weights in the right places: the policy's logits.
        policy = load_policy(checkpoint)
        observations = np.random.default_rng(1).integers(0, 256, (4, 7, 10, 3)).astype(np.uint8)
        np.testing.assert_allclose(
            check._logits(observations), policy_logits(policy)(observations), atol=1e-5
        )
        outcomes = episode_outcomes(
            policy_logits(policy),
            arguments.env,
            arguments.env_config,
            8,
            seed=CHECK_SEED,
            greedy=True,
        )
        assert win_rate == np.mean([outcome.won for outcome in outcomes])
    with pytest.raises(ValueError, match="episodes must be >= 1"):
        GreedyCheck(arguments, episodes=0)


def test_visualize_writes_the_figures_and_gif(checkpoints, tmp_path, capsys):
    out = tmp_path / "figures"
    code = cli.main(
        [
            "visualize",
            str(checkpoints["simplicial"]),
            "--seed",
            "3",
            "--step",
            "2",
            "--out",
            str(out),
            "--gif",
            "--max-steps",
            "6",
            "--sharpen",
            "2",
        ]
    )
    assert code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "seed3_episode.gif",
        "seed3_step002_one_simplicial.png",
        "seed3_step002_two_simplicial.png",
        "seed3_step002_virtual_entities.png",
    ]
    printed = capsys.readouterr().out
    assert "simplicial agent, seed 3: puzzle type (1, 1, 2), 6 steps" in printed
    assert "(6 frames)" in printed


def test_explain_prints_the_proof_tree_and_the_rule(checkpoints, capsys):
    code = cli.main(["explain", str(checkpoints["relational"]), "--seed", "3", "--greedy"])
    assert code == 0
    printed = capsys.readouterr().out
    for expected in (
        "relational agent, BridgeBoxWorld-v0 seed 3 (greedy actions)",
        "Axioms Gamma |- G:",
        "Proof tree of the behaviour",
        "Outcome:",
        "Source/sink rule (Remark B.1)",
        "conclusion: the bridge is C",
        "(correct)",
        "the actual bridge: C",
    ):
        assert expected in printed, printed


def test_probe_prints_and_saves_the_table(checkpoints, tmp_path, capsys):
    output = tmp_path / "probe.json"
    code = cli.main(
        [
            "probe",
            str(checkpoints["simplicial"]),
            "--episodes",
            "16",
            "--num-envs",
            "8",
            "--max-steps",
            "30",
            "--output",
            str(output),
        ]
    )
    assert code == 0
    assert "rule locates the bridge" in capsys.readouterr().out
    table = json.loads(output.read_text())
    assert table["episodes"] == 16
    assert sum(row["episodes"] for row in table["rows"].values()) == table["bridge_episodes"]


def test_plot_types_from_evaluation_reports(tmp_path, capsys):
    paths = []
    for k, agent in enumerate(["relational", "simplicial", "simplicial"]):
        path = tmp_path / f"e{k}.json"
        path.write_text(
            json.dumps(
                {
                    "agent": agent,
                    "per_puzzle_type": {"(1, 1, 2)": {"episodes": 5, "wins": k, "win_rate": k / 5}},
                }
            )
        )
        paths.append(str(path))
    out = tmp_path / "types.pdf"
    assert cli.main(["plot-types", *paths, "--types", "1,1,2", "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"%PDF"


@pytest.mark.parametrize(
    "args, message",
    [
        (["visualize", "/no/such/run"], "No checkpoint at"),
        (["explain", "/no/such/run"], "No checkpoint at"),
        (["plot-types", "/no/such.json"], "No evaluation report"),
        (["plot-types", "{here}", "--types", "1,2"], "three integers"),
    ],
)
def test_bad_input_is_one_line(args, message, tmp_path, capsys):
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"agent": "relational", "per_puzzle_type": {}}))
    args = [a.replace("{here}", str(path)) for a in args]
    assert cli.main(args) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and message in error[0], error


def test_visualize_rejects_a_step_outside_the_episode(checkpoints, tmp_path, capsys):
    code = cli.main(
        [
            "visualize",
            str(checkpoints["relational"]),
            "--seed",
            "3",
            "--step",
            "50",
            "--max-steps",
            "5",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert "--step must be in [-5, 4]" in capsys.readouterr().err


def test_evaluate_reports_win_rates_per_puzzle_type_with_intervals(checkpoints, tmp_path, capsys):
    from keras_simplicial.agents.analysis.evaluation import summarise, wilson_interval
    from keras_simplicial.agents.rollout import EpisodeOutcome

    output = tmp_path / "evaluation.json"
    code = cli.main(
        [
            "evaluate",
            str(checkpoints["relational"]),
            "--episodes",
            "40",
            "--num-envs",
            "8",
            "--max-episode-steps",
            "30",
            "--output",
            str(output),
        ]
    )
    assert code == 0
    report = json.loads(output.read_text())
    assert report["agent"] == "relational" and report["env_config"] == EASY_ENV
    per_type = report["per_puzzle_type"]
    assert sum(entry["episodes"] for entry in per_type.values()) == 40
    assert report["overall"]["episodes"] == 40
    assert set(per_type) <= {"(1, 0, 0)", "(1, 1, 2)"}  # solution length 1 puzzles only
    for entry in list(per_type.values()) + [report["overall"]]:
        low, high = entry["ci95"]
        assert low <= entry["win_rate"] <= high
        assert entry["win_rate"] == entry["wins"] / entry["episodes"]
    printed = capsys.readouterr().out
    assert "puzzle type" in printed and "overall" in printed and str(output) in printed

    # The interval itself, and the summary of hand-made outcomes.
    low, high = wilson_interval(8, 10)
    assert 0.49 < low < 0.5 and 0.94 < high < 0.95
    summary = summarise(
        [
            EpisodeOutcome((1, 0, 0), True, 5, "won"),
            EpisodeOutcome((1, 0, 0), False, 9, "out_of_steps"),
            EpisodeOutcome((1, 1, 2), True, 7, "won"),
            EpisodeOutcome((1, 1, 2), False, 3, "opened_bridge"),
        ]
    )
    assert summary["per_puzzle_type"]["(1, 0, 0)"]["win_rate"] == 0.5
    assert summary["overall"]["wins"] == 2 and summary["mean_episode_length"] == 6.0
    assert summary["per_puzzle_type"]["(1, 1, 2)"]["ended_by"] == {
        "won": 0.5,
        "opened_bridge": 0.5,
        "opened_wrong_box": 0.0,
        "out_of_steps": 0.0,
    }
    assert summary["overall"]["ended_by"]["out_of_steps"] == 0.25
    assert "loops" not in summary["overall"]  # sampled play: no loops to name


def test_a_greedy_report_names_what_its_looping_episodes_repeated():
    from keras_simplicial.agents.analysis.evaluation import evaluation_table, summarise
    from keras_simplicial.agents.rollout import LOOPS, EpisodeOutcome

    outcomes = [
        EpisodeOutcome((2, 0, 0), True, 25, "won"),
        EpisodeOutcome((2, 0, 0), False, 500, "out_of_steps", "gem_box_one_key"),
        EpisodeOutcome((2, 0, 0), False, 500, "out_of_steps", "gem_box_one_key"),
        EpisodeOutcome((2, 1, 3), False, 500, "out_of_steps", "cycle"),
        EpisodeOutcome((2, 1, 3), False, 500, "out_of_steps", "closed_lock"),
        EpisodeOutcome((2, 1, 3), False, 500, "out_of_steps", "closed_wrong_box"),
        EpisodeOutcome((2, 1, 3), False, 500, "opened_wrong_box", "edge"),
    ]
    report = summarise(outcomes, loops=True)
    assert set(report["overall"]["loops"]) == set(LOOPS)
    assert report["per_puzzle_type"]["(2, 0, 0)"]["loops"]["gem_box_one_key"] == round(2 / 3, 4)
    assert report["per_puzzle_type"]["(2, 1, 3)"]["loops"]["cycle"] == 0.25
    assert report["overall"]["loops"]["key_tile"] == 0.0
    table = [line.strip("|").split(" | ") for line in evaluation_table(report).splitlines()]
    titles = ["loops: Gem 1 key", "loops: wrong box", "loops: blocked", "loops: cycle"]
    assert [cell.strip() for cell in table[0][-4:]] == titles
    type_213 = next(row for row in table if row[0].strip() == "(2, 1, 3)")
    assert [c.strip() for c in type_213[-4:]] == ["0.000", "0.250", "0.500", "0.250"]  # lock, edge
    overall = next(row for row in table if row[0].strip() == "overall")
    assert [c.strip() for c in overall[-4:]] == ["0.286", "0.143", "0.286", "0.143"]


def test_env_config_is_merged_over_the_runs_and_a_board_of_another_size_is_named(
    checkpoints, tmp_path, capsys
):
    output = tmp_path / "bridges.json"
    args = ["evaluate", str(checkpoints["relational"]), "--episodes", "8", "--num-envs", "4"]
    merged = ["--env-config", '{"bridge_probability": 1.0}', "--output", str(output)]
    assert cli.main([*args, *merged]) == 0
    report = json.loads(output.read_text())
    assert report["env_config"] == {**EASY_ENV, "bridge_probability": 1.0}
    assert set(report["per_puzzle_type"]) == {"(1, 1, 2)"}  # the run's length 1, all bridged
    capsys.readouterr()

    for command in (args, ["policy-map", str(checkpoints["simplicial"])]):
        assert cli.main([*command, "--env-config", '{"cols": 6}']) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1
        assert "give a 7 x 6 board, but the agent was trained on 7 x 9 boards" in error


def test_a_relative_run_directory_resolves_to_an_absolute_checkpoint(checkpoints, monkeypatch):
    from keras_simplicial.agents.training.checkpoints import load_policy, resolve_checkpoint

    checkpoint = checkpoints["relational"]
    monkeypatch.chdir(checkpoint.parent.parent.parent)
    resolved = resolve_checkpoint("relational")  # as `make train` prints it: relative to the cwd
    assert resolved.is_absolute() and resolved == checkpoint.resolve()
    assert load_policy("relational").model.kind == "relational"


def test_policy_map_prints_each_tile_and_draws_the_board(checkpoints, tmp_path, capsys):
    out = tmp_path / "policy.png"
    code = cli.main(
        ["policy-map", str(checkpoints["simplicial"]), "--seed", "2", "--out", str(out)]
    )
    assert code == 0 and out.stat().st_size > 0
    printed = capsys.readouterr().out
    assert "Board of seed 2" in printed and printed.count("| (") > 10
    std_line = [line for line in printed.splitlines() if line.startswith("| std |")]
    assert len(std_line) == 1 and len(std_line[0].strip("|").split("|")) == 5


def test_policy_map_tells_a_position_aware_policy_from_a_constant_one():
    from keras_simplicial.agents.analysis.policy_map import policy_map
    from keras_simplicial.envs.palette import PLAYER_RGB

    def constant(observations):
        return np.tile([0.0, 1.0, 2.0, 3.0], (len(observations), 1))

    def go_right_on_the_left_half(observations):
        on_player = np.all(observations[:, :, :-1] == PLAYER_RGB, axis=-1)
        column = np.argwhere(on_player)[:, 2]
        return np.stack(
            [
                np.zeros(len(column)),
                np.zeros(len(column)),
                np.where(column < 4, 5.0, -5.0),
                np.zeros(len(column)),
            ],
            axis=1,
        )

    flat = policy_map(constant, "BridgeBoxWorld-v0", EASY_ENV, seed=1)
    assert len(flat.tiles) == len(set(flat.tiles)) > 20
    np.testing.assert_allclose(flat.probabilities.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(flat.spread(), 0.0, atol=1e-7)
    aware = policy_map(go_right_on_the_left_half, "BridgeBoxWorld-v0", EASY_ENV, seed=1)
    assert aware.spread()[2] > 0.4
    for (_row, col), p in zip(aware.tiles, aware.probabilities):
        assert (p[2] > 0.9) == (col < 4)
