"""The held-keys probe at a learning budget: nested training sets, the ladder's views of a board,
the endpoint, and an exact resume."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import json  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from keras_simplicial.agents.imitation.held_keys_budget import (  # noqa: E402
    BudgetRun,
    cached_states,
    checkpoint_folder,
    colour_channels,
    finished,
    ladder_view,
    one_hot_colours,
    train_budget,
)
from keras_simplicial.envs.palette import FLOOR_RGB, GEM_RGB  # noqa: E402


def test_a_smaller_training_set_is_a_prefix_of_a_larger_one(tmp_path):
    run = BudgetRun(train_size=24, test_size=8)
    large = cached_states(run, "train", 24, tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 1
    small = cached_states(run, "train", 10)  # drawn afresh, no cache
    assert np.array_equal(small[0], large[0][:10]) and np.array_equal(small[1], large[1][:10])
    cached = cached_states(run, "train", 10, tmp_path)  # from the cache
    assert np.array_equal(cached[0], small[0])


def test_the_ladder_shows_the_gem_locks_marked_or_alone(tmp_path):
    observations, _ = cached_states(BudgetRun(), "train", 40, tmp_path)
    assert ladder_view(observations, "board") is observations
    gem = (observations[:, :, :-1] == GEM_RGB).all(axis=-1)
    marked = ladder_view(observations, "locks-marked")
    assert marked.shape == observations.shape[:-1] + (4,)
    assert np.array_equal(marked[..., :3], observations)
    mark = marked[..., 3]
    assert set(np.unique(mark)) == {0, 255} and not mark[:, :, -1].any()  # not the inventory
    for k in range(len(observations)):
        rows, cols = np.nonzero(gem[k])
        assert len(rows) >= 1
        assert sorted(zip(*np.nonzero(mark[k]))) == sorted(zip(rows, cols + 1))
    alone = ladder_view(observations, "gem-locks-only")
    kept = gem.copy()
    kept[:, :, 1:] |= gem[:, :, :-1]
    board, original = alone[:, :, :-1], observations[:, :, :-1]
    assert np.array_equal(board[kept], original[kept])
    assert (board[~kept] == FLOOR_RGB).all()
    assert np.array_equal(alone[:, :, -1], observations[:, :, -1])  # the held keys kept
    with pytest.raises(ValueError, match="rung must be one of"):
        ladder_view(observations, "pixels")

    # Each cell's colour as a channel of its own: the gem-locks-only view, one-hot.
    num_colours = 20  # bridge-medium's
    one_hot = ladder_view(observations, "colours-one-hot", num_colours)
    assert one_hot.shape == observations.shape[:-1] + (4 + num_colours,)
    assert set(np.unique(one_hot)) == {0, 255} and (one_hot.sum(axis=-1) == 255).all()
    channels = colour_channels(num_colours)
    assert np.array_equal(channels[one_hot.argmax(axis=-1)], alone)
    # The board's own colours are all known too (keys, locks, player, floor, the Gem).
    assert one_hot_colours(observations, num_colours).shape[-1] == 24
    with pytest.raises(ValueError, match="needs num_colours"):
        ladder_view(observations, "colours-one-hot")
    with pytest.raises(ValueError, match=r"the colour \(1, 2, 3\), which is none of"):
        one_hot_colours(np.full((1, 2, 2, 3), (1, 2, 3), np.uint8), num_colours)


def test_bad_runs_are_refused_with_the_accepted_values():
    with pytest.raises(ValueError, match="agent must be one of"):
        BudgetRun(agent="transformer")
    with pytest.raises(ValueError, match=r"preset must be one of \[.*'bridge-medium'"):
        BudgetRun(preset="bridge-huge")
    with pytest.raises(ValueError, match="gain must be None or, for the simplicial agent"):
        BudgetRun(agent="relational", gain="ones")
    with pytest.raises(ValueError, match="max_updates must be a positive integer"):
        BudgetRun(max_updates=0)
    with pytest.raises(ValueError, match="target must be in"):
        BudgetRun(target=0.4)
    assert BudgetRun(agent="simplicial", gain="ones").name == (
        "simplicial-gain-ones--board--n16000--seed0"
    )
    assert BudgetRun(learning_rate=1e-3).name == "relational--board--n16000--seed0--lr0.001"
    with pytest.raises(ValueError, match="learning_rate > 0"):
        BudgetRun(learning_rate=0.0)


def test_the_endpoint_is_the_first_evaluation_at_the_target_or_censored():
    run = BudgetRun(max_updates=30, eval_every=10, target=0.9)

    def rows(accuracies):
        return [
            {"updates": 10 * i, "examples_seen": 640 * i, "held_out_pairs_accuracy": a}
            for i, a in enumerate(accuracies)
        ]

    from keras_simplicial.agents.imitation.held_keys_budget import _endpoint

    assert not finished(rows([0.5, 0.6]), run)
    assert finished(rows([0.5, 0.95]), run) and finished(rows([0.5, 0.6, 0.7, 0.8]), run)
    assert _endpoint(rows([0.5, 0.95, 0.97]), run) == {
        "reached": True,
        "updates": 10,
        "examples_seen": 640,
    }
    assert _endpoint(rows([0.5, 0.6, 0.7, 0.8]), run)["reached"] is False


def weights_of(folder):
    return [np.load(path) for path in sorted((folder / "checkpoint").glob("*.npy"))]


@pytest.mark.slow  # three models built and compiled: about a minute on 2 shared cores
@pytest.mark.parametrize("agent, gain, rung", [("relational", None, "locks-marked")])
def test_a_run_stopped_between_evaluations_resumes_exactly(tmp_path, agent, gain, rung):
    run = BudgetRun(
        agent=agent, gain=gain, rung=rung, train_size=32, test_size=16, max_updates=6, eval_every=2
    )
    data = tmp_path / "data"
    whole = train_budget(run, tmp_path / "whole", data_dir=data)
    assert whole["finished"] and [row["updates"] for row in whole["curve"]] == [0, 2, 4, 6]
    assert whole["endpoint"]["reached"] in (True, False)
    part = train_budget(run, tmp_path / "parts", data_dir=data, updates_now=2)
    assert not part["finished"] and part["endpoint"] is None and part["curve"][-1]["updates"] == 2
    resumed = train_budget(run, tmp_path / "parts", data_dir=data)  # a new model, restored
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]
    assert strip(resumed["curve"]) == strip(whole["curve"])
    for a, b in zip(weights_of(tmp_path / "whole"), weights_of(tmp_path / "parts")):
        assert np.array_equal(a, b)
    saved = json.loads((tmp_path / "parts" / "run.json").read_text())
    assert saved["provenance"][0]["package_version"] and saved["model"] == "relational"
    assert checkpoint_folder(tmp_path / "parts" / "checkpoint") is not None
    again = train_budget(run, tmp_path / "parts", data_dir=data)  # finished: nothing to do
    assert strip(again["curve"]) == strip(whole["curve"])
    with pytest.raises(ValueError, match="holds another run"):
        train_budget(BudgetRun(train_size=33), tmp_path / "parts", data_dir=data)
    (tmp_path / "rl").mkdir()
    (tmp_path / "rl" / "run.json").write_text('{"agent": "relational"}')  # a training run's
    with pytest.raises(ValueError, match=r"rl/run\.json is not a held-keys-budget record"):
        train_budget(run, tmp_path / "rl", data_dir=data)


def test_the_command_choices_are_the_module_s():
    from keras_simplicial.agents.commands import inspection
    from keras_simplicial.agents.imitation.held_keys_budget import GAINS, RUNGS

    assert inspection.HELD_KEYS_RUNGS == RUNGS and inspection.HELD_KEYS_GAINS == GAINS


@pytest.mark.slow  # two models built and compiled: a minute or more on 2 shared cores
def test_the_command_trains_and_resumes_a_run(tmp_path, capsys):
    import keras_simplicial_cli as cli

    argv = ["held-keys-budget", str(tmp_path / "run"), "--train-size", "16", "--test-size", "8"]
    argv += ["--max-updates", "2", "--eval-every", "1", "--data", str(tmp_path / "data")]
    assert cli.main(argv + ["--updates-now", "1"]) == 0
    assert "stopped at 1 updates; run again" in capsys.readouterr().out
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "relational--board--n16--seed0: held-out pairs" in out
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [row["updates"] for row in record["curve"]] == [0, 1, 2] and record["finished"]
    with pytest.raises(SystemExit):
        cli.main(["held-keys-budget", str(tmp_path / "x"), "--rung", "pixels"])


def record(rung, losses, accuracies, finished=True, target=0.9):
    curve = [
        {"train_loss": loss, "held_out_pairs_accuracy": accuracy}
        for loss, accuracy in zip(losses, accuracies)
    ]
    return {"run": {"rung": rung, "target": target}, "curve": curve, "finished": finished}


def test_the_pilot_decision_and_the_ladder_follow_the_plan():
    from keras_simplicial.agents.imitation.held_keys_budget import (
        first_failing_rung,
        left_constant,
        pilot_decision,
    )

    flat = record("board", [0.693, 0.6931], [0.5, 0.5])
    leaving = record("board", [0.693, 0.65], [0.5, 0.6])  # 0.65 < 0.95 log 2 = 0.6585
    almost = record("board", [0.693, 0.66], [0.5, 0.5])
    success = record("board", [0.693, 0.1], [0.5, 0.92])
    assert not left_constant(almost) and left_constant(leaving)
    assert pilot_decision([flat, flat, success]) == "go"
    assert pilot_decision([flat, leaving, flat]) == "extend"
    assert pilot_decision([flat, flat, almost]) == "no-go"
    assert pilot_decision([flat, {**flat, "finished": False}]) == "open"
    assert pilot_decision([flat, {**leaving, "finished": False}]) == "open"
    assert pilot_decision([]) == "open"
    rungs = {
        "gem-locks-only": record("gem-locks-only", [0.69, 0.05], [0.5, 0.95]),
        "locks-marked": record("locks-marked", [0.69, 0.6], [0.5, 0.7], finished=False),
        "board": flat,
    }
    assert first_failing_rung(rungs) == ("locks-marked", False)
    assert first_failing_rung({"board": success}) == (None, True)
    assert first_failing_rung({"gem-locks-only": flat}) == ("gem-locks-only", True)
