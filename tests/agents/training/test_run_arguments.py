"""RunArguments: run.json written and read back, also the run.json files of earlier versions."""

import dataclasses
import json

import pytest

from keras_simplicial.agents.training.run_arguments import CLIP_EACH_VARIABLE, RunArguments
from keras_simplicial.agents.training.run_directory import RunDirectory

# A run.json as written before the batched sampler existed: no "sampler" key, and no gradient
# clipping in its overrides (runs clipped each variable's gradient then).
EARLIER_RUN = {
    "agent": "relational",
    "env": "BoxWorld-v0",
    "env_config": {
        "cols": 6,
        "max_distractors": 0,
        "max_solution_length": 1,
        "max_steps": 30,
        "rows": 3,
    },
    "model_overrides": {},
    "num_env_runners": 0,
    "num_envs_per_env_runner": 64,
    "overrides": {"lr": 0.001, "opt_type": "adam"},
    "seed": 1,
}


def test_written_and_read_back(tmp_path):
    run = RunDirectory(tmp_path / "run").create()
    arguments = RunArguments(
        env="BoxWorld-v0",
        agent="relational",
        env_config={"rows": 3},
        overrides={"lr": 1e-3},
        seed=7,
    )
    arguments.write(run.run_file)
    assert RunArguments.read(run.run_file) == arguments
    text = run.run_file.read_text()
    # The file format of earlier versions: every field, keys sorted, two-space indent.
    assert json.loads(text) == {
        "agent": "relational",
        "engine": "rllib-old",
        "env": "BoxWorld-v0",
        "env_config": {"rows": 3},
        "init_policy": None,
        "mask_blocked_moves": False,
        "model_overrides": {},
        "num_env_runners": 0,
        "num_envs_per_env_runner": 64,
        "overrides": {"lr": 1e-3, CLIP_EACH_VARIABLE: False},
        "sampler": "batched",
        "seed": 7,
    }
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"


def test_an_earlier_run_json_still_loads_with_the_sampler_it_used(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(EARLIER_RUN, indent=2, sort_keys=True) + "\n")
    arguments = RunArguments.read(path)
    assert arguments.sampler == "rllib" and RunArguments().sampler == "batched"
    assert arguments.env_config == EARLIER_RUN["env_config"] and arguments.seed == 1


def test_masking_blocked_moves_is_a_run_argument_of_the_batched_old_stack(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(EARLIER_RUN))
    assert RunArguments.read(path).mask_blocked_moves is False  # runs before it played every move
    masked = RunArguments.from_preset("bridge-small", "simplicial", mask_blocked_moves=True)
    masked.write(path)
    assert RunArguments.read(path).mask_blocked_moves is True
    assert RunArguments.from_preset("bridge-small", "simplicial").mask_blocked_moves is False
    with pytest.raises(
        ValueError, match=r"mask_blocked_moves \(--mask-blocked-moves\) must be true"
    ):
        RunArguments(mask_blocked_moves=1)
    for other in ({"engine": "rllib-new"}, {"sampler": "rllib"}):
        with pytest.raises(ValueError, match=r"needs an engine of \['rllib-old', 'keras'\]"):
            RunArguments(mask_blocked_moves=True, **other)
    assert RunArguments(mask_blocked_moves=True, engine="keras").mask_blocked_moves


def test_a_run_starts_from_a_saved_policy_on_the_engine_that_can(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(EARLIER_RUN))
    assert RunArguments.read(path).init_policy is None  # runs before it started from random
    started = RunArguments.from_preset("easy", "relational", engine="keras", init_policy="a/best")
    started.write(path)
    assert RunArguments.read(path).init_policy == "a/best"
    with pytest.raises(ValueError, match=r"init_policy \(--init-policy\) must be a non-empty"):
        RunArguments(engine="keras", init_policy=" ")
    for engine in ("rllib-old", "rllib-new"):
        with pytest.raises(ValueError, match=r"init_policy .* needs an engine of \['keras'\]"):
            RunArguments(engine=engine, init_policy="a/best")


def test_a_new_run_records_that_it_clips_the_global_norm(tmp_path):
    path = tmp_path / "run.json"
    for arguments in (
        RunArguments(env="BoxWorld-v0", agent="relational", overrides={"lr": 1e-3}),
        RunArguments.from_preset("bridge-medium", "simplicial", seed=1),
    ):
        assert arguments.overrides[CLIP_EACH_VARIABLE] is False
        arguments.write(path)
        assert json.loads(path.read_text())["overrides"][CLIP_EACH_VARIABLE] is False
        assert RunArguments.read(path).overrides[CLIP_EACH_VARIABLE] is False


def test_an_earlier_run_json_resumes_clipping_each_variable(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(EARLIER_RUN))
    arguments = RunArguments.read(path)
    assert arguments.overrides == {**EARLIER_RUN["overrides"], CLIP_EACH_VARIABLE: True}
    # A new run of the same arguments would clip the global norm: the difference is named.
    new = RunArguments(**EARLIER_RUN, sampler="rllib")
    assert new.differences(arguments) == [f"overrides ({CLIP_EACH_VARIABLE})"]
    # Written back (a run.json restored from a checkpoint's copy), it says so explicitly.
    arguments.write(path)
    assert json.loads(path.read_text())["overrides"][CLIP_EACH_VARIABLE] is True


@pytest.mark.parametrize("each_variable", [True, False])
def test_a_chosen_clipping_is_kept_new_or_earlier(tmp_path, each_variable):
    chosen = {CLIP_EACH_VARIABLE: each_variable}
    path = tmp_path / "run.json"
    arguments = RunArguments.from_preset("easy", "relational", overrides=chosen)
    assert arguments.overrides[CLIP_EACH_VARIABLE] is each_variable
    arguments.write(path)
    assert RunArguments.read(path) == arguments
    path.write_text(json.dumps({**EARLIER_RUN, "overrides": chosen}))
    assert RunArguments.read(path).overrides == chosen


@pytest.mark.parametrize(
    "change, message",
    [
        ({"sampeler": "rllib"}, r"unknown key\(s\) \['sampeler'\]; accepted: \['env', 'agent'"),
        ({"agent": None, "_drop": "agent"}, r"lacks the key\(s\) \['agent'\]"),
        ({"env_config": [1, 2]}, r"env_config \(--env-config\) must be a JSON object"),
        ({"num_env_runners": -1}, r"num_env_runners \(--num-env-runners\) must be an integer >= 0"),
        ({"sampler": "fast"}, r"sampler \(--sampler\) must be one of \('batched', 'rllib'\)"),
    ],
)
def test_a_bad_run_json_names_the_problem(tmp_path, change, message):
    data = {**EARLIER_RUN, **change}
    data.pop(data.pop("_drop", "_none"), None)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        RunArguments.read(path)


def test_a_directory_without_run_json_is_not_a_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a training run"):
        RunArguments.read(tmp_path / "run.json")


def test_a_preset_gives_the_environment_and_the_recipe_and_changes_go_on_top():
    from keras_simplicial.agents.training.presets import PRESETS

    easy = PRESETS["easy"]
    arguments = RunArguments.from_preset("easy", "relational", seed=3, env_config={"rows": 4})
    assert (arguments.env, arguments.agent, arguments.seed) == ("BoxWorld-v0", "relational", 3)
    assert arguments.env_config == {**easy["env_config"], "rows": 4}
    assert arguments.overrides == easy["overrides"]  # its clipping included
    # None is "not given" (the command line's flags left out): the preset's, else the default.
    assert RunArguments.from_preset("easy", env=None, seed=None) == RunArguments.from_preset("easy")
    assert RunArguments.from_preset("easy").agent == RunArguments().agent == "simplicial"
    with pytest.raises(ValueError, match=r"unknown run argument\(s\) \['sead'\]"):
        RunArguments.from_preset("easy", sead=1)
    with pytest.raises(ValueError, match="--preset must be one of"):
        RunArguments.from_preset("huge")


def test_a_preset_holds_only_fields_it_may_give_and_a_value_given_replaces_its_own():
    from keras_simplicial.agents.training.presets import PRESETS
    from keras_simplicial.agents.training.run_arguments import preset_given_fields

    assert {"env", "env_config", "model_overrides", "overrides"} <= set(preset_given_fields())
    for name, preset in PRESETS.items():
        assert set(preset) <= set(preset_given_fields()), name
    replaced = RunArguments.from_preset("easy", env="BridgeBoxWorld-v0")
    assert replaced.env == "BridgeBoxWorld-v0"
    assert replaced.env_config == PRESETS["easy"]["env_config"]


def test_a_preset_gives_its_model_and_the_model_config_goes_on_top():
    from keras_simplicial.agents.model.model_config import (
        FRONT_END_MODEL,
        PAPER_MODEL,
        PRE_FRONT_END_MODEL,
        PRESET_MODEL,
    )
    from keras_simplicial.agents.training.presets import PRESETS

    assert PRESET_MODEL == FRONT_END_MODEL
    for name in PRESETS:
        assert RunArguments.from_preset(name).model_overrides == PRESET_MODEL, name
    given = RunArguments.from_preset("easy", model_overrides={"num_heads": 4, "entity_norm": False})
    assert given.model_overrides == {**PRESET_MODEL, "num_heads": 4, "entity_norm": False}
    # A named config gives each option the preset's model sets, so it is that model whole.
    assert RunArguments.from_preset("easy", model_overrides=PAPER_MODEL).model_overrides == {
        **PAPER_MODEL
    }
    earlier = RunArguments.from_preset("bridge-small", model_overrides=PRE_FRONT_END_MODEL)
    assert earlier.model_overrides == PRE_FRONT_END_MODEL
    # The run's model is its own copy: changing it leaves the preset as it is.
    given.model_overrides["conv_filters"].append(8)
    assert PRESETS["easy"]["model_overrides"]["conv_filters"] == [128, 128]


def test_a_run_json_of_the_presets_earlier_model_loads_as_it_trained(tmp_path):
    """Written before the presets gave a model, a run.json holds only what its --model-config
    changed of the architecture's defaults: read back, it is those changes alone (the model it
    trained), and the command line that makes it from a preset names the earlier model whole."""
    from keras_simplicial.agents.model.model_config import PRE_FRONT_END_MODEL, PRESET_MODEL
    from keras_simplicial.agents.training.run_arguments import run_argument_flags

    path = tmp_path / "run.json"
    path.write_text(json.dumps({**EARLIER_RUN, "model_overrides": {"num_heads": 4}}))
    arguments = RunArguments.read(path)
    assert arguments.model_overrides == {"num_heads": 4}
    a_preset_s = dataclasses.replace(arguments, model_overrides=dict(PRESET_MODEL))
    flags = run_argument_flags(arguments, a_preset_s)
    assert flags[0] == "--model-config" and len(flags) == 2
    assert json.loads(flags[1].strip("'")) == {**PRE_FRONT_END_MODEL, "num_heads": 4}


def test_the_model_config_is_split_once():
    arguments = RunArguments(model_overrides={"num_heads": 4, "jit_compile": False})
    assert arguments.architecture == {"num_heads": 4} and arguments.jit_compile is False
    assert RunArguments().jit_compile is True
    with pytest.raises(ValueError, match="jit_compile must be true or false"):
        RunArguments(model_overrides={"jit_compile": "no"})


def test_every_field_declares_a_flag_a_default_a_range_and_help():
    from keras_simplicial.agents.training.run_arguments import declaration

    flags = []
    for field in dataclasses.fields(RunArguments):
        declared = declaration(field)
        assert declared.flag.startswith("--") and declared.help, field.name
        default = getattr(RunArguments(), field.name)
        assert declared.rule.accepts(default), field.name
        flags += declared.flags
    assert len(flags) == len(set(flags))


def test_the_light_copies_of_the_env_ids_and_agents_are_their_homes():
    from keras_simplicial.agents.model.architecture import AGENT_KINDS
    from keras_simplicial.agents.training.run_arguments import AGENTS, ENVS
    from keras_simplicial.envs import ENV_IDS

    assert ENVS == ENV_IDS and AGENTS == AGENT_KINDS


def test_each_preset_says_which_norm_it_clips():
    """The easy preset clips each variable's gradient (global-norm clipping missed its acceptance
    target, docs/benchmarks.md); the bridge presets clip the global norm, as the paper's code."""
    from keras_simplicial.agents.training.presets import PRESETS

    each_variable = {
        name: RunArguments.from_preset(name, "relational").overrides[CLIP_EACH_VARIABLE]
        for name in PRESETS
    }
    assert each_variable == {
        "easy": True,
        "paper": False,
        "bridge-small": False,
        "bridge-medium": False,
    }
    # A run's --config still chooses.
    chosen = RunArguments.from_preset("easy", "relational", overrides={CLIP_EACH_VARIABLE: False})
    assert chosen.overrides[CLIP_EACH_VARIABLE] is False
