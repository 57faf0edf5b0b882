"""The arguments of a training run, declared once: one typed object that the command line, IMPALA
and the run's run.json all read.

    arguments = RunArguments.from_preset("easy", "relational", seed=1)   # a preset + changes
    arguments = RunArguments(env="BoxWorld-v0", agent="relational", env_config={"rows": 3})
    train(arguments, out="runs/demo", stop_timesteps=1_000_000)
    arguments.write(run.run_file)           # run = RunDirectory(out): OUT/run.json
    RunArguments.read(run.run_file)         # also the run.json files of earlier versions

Each field carries its flag, its default, its range and its help (`run_argument`):

- the flags of `keras-simplicial train`, and of `sweep` and `reproduce` (all but the agent and the
  seed, which they vary), are generated from the fields;
- every engine's config builder (`engines.ENGINES`: `impala_config`, `torch_impala_config`,
  `keras_engine.engine_settings`) takes the whole object, `train`, the sweeps, the comparison
  and the throughput measurements pass it on whole;
- run.json stores every field.

A new run argument is a field here (and, in `EARLIER_RUN_DEFAULTS`, what runs written before it
used), what it does in each engine's config builder (or, where an engine cannot honour it, its
refusal by name), and a test: docs/development.md shows one.

`--resume`, `evaluate`, `plot` and the analysis commands read a run back from its run.json, so its
keys are a file format. Every run's overrides say which gradient norm `grad_clip` caps
(`CLIP_EACH_VARIABLE`): a new run clips the global norm, as the paper's code did; a run.json
written before runs recorded it resumes clipping each variable's gradient, as it trained. A new
run of a preset records its model whole (the preset's, `model_config.PRESET_MODEL`, with
`--model-config` over it); a run.json written before holds only what its --model-config changed of
the architecture's defaults, which have not changed, and loads as it trained.

This module imports neither Keras nor TensorFlow nor RLlib: `keras-simplicial train --help` reads
it.
"""

import copy
import dataclasses
import json
import numbers
import shlex
from pathlib import Path
from typing import Optional

from keras_simplicial.agents.atomic_files import atomic_write_text
from keras_simplicial.agents.model.model_config import (
    split_model_config,
    with_architecture_defaults,
)
from keras_simplicial.agents.ranges import Boolean, Integer, JsonObject, OneOf, OrNone, Text
from keras_simplicial.agents.training.engines import API_STACK_ENGINES, ENGINE_NAMES, ENGINES
from keras_simplicial.agents.training.presets import (
    CLIP_EACH_VARIABLE,
    PRESETS,
    preset_overrides,
)

# The ids of keras_simplicial.envs (ENV_IDS) and the agents of model/architecture.py (AGENT_KINDS),
# repeated so that the flags are generated without gymnasium or Keras (a test keeps them equal).
ENVS = ("BridgeBoxWorld-v0", "BoxWorld-v0")
AGENTS = ("relational", "simplicial")
# How env runners sample: "batched" steps all of a runner's boards as one batch
# (`BatchedEnvRunner`); "rllib" is RLlib's own sampler over one gymnasium env per board.
SAMPLERS = ("batched", "rllib")
# RLlib's API stacks, the older name of the two RLlib engines (`--api-stack old|new`, and the key
# `api_stack` of run.json files written before `engine` existed): `engines.API_STACK_ENGINES`.
API_STACKS = tuple(API_STACK_ENGINES)
# The Keras backend of each API stack's processes (`engines.ENGINES[...].keras_backend`).

# What a new run trains with unless its overrides say otherwise: the global norm clipped, as in
# `PAPER_IMPALA_HYPERPARAMETERS`.
NEW_RUN_OVERRIDES = {CLIP_EACH_VARIABLE: False}
# Fields that run.json files written by earlier versions lack, and the value those runs used.
EARLIER_RUN_DEFAULTS = {
    "sampler": "rllib",  # runs written before the batched sampler existed used RLlib's
    "engine": "rllib-old",  # runs written before the engines existed trained on RLlib's old stack
    "mask_blocked_moves": False,  # runs written before it could mask played every move
    "init_policy": None,  # runs written before it started from random weights
}
# IMPALA settings that the overrides of run.json files written by earlier versions lack, and the
# value those runs trained with.
EARLIER_RUN_OVERRIDES = {
    CLIP_EACH_VARIABLE: True,  # runs written before it was recorded clipped each variable
}
# The fields every run.json has had from the start: a file without one is not a run's.
REQUIRED_IN_RUN_JSON = ("env", "agent")


@dataclasses.dataclass(frozen=True)
class RunArgument:
    """How one field of `RunArguments` appears on the command line.

    Attributes:
        flags: its option strings, the first its name.
        help: what it does, for `--help`.
        rule: its range (a rule of `keras_simplicial.agents.ranges`), checked when the
            arguments are made.
        given_by_preset: whether a preset gives it (`RunArguments.from_preset`): then the
            command line's default is the preset's, and a JSON object given is merged over the
            preset's.
    """

    flags: tuple
    help: str
    rule: object
    given_by_preset: bool = False

    @property
    def flag(self):
        return self.flags[0]


def run_argument(default=dataclasses.MISSING, *, flags, help, rule, factory=None, **options):
    """A field of `RunArguments` with its declaration (`RunArgument`) as metadata."""
    declaration = RunArgument(tuple(flags), help, rule, **options)
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={"run_argument": declaration})
    return dataclasses.field(default=default, metadata={"run_argument": declaration})


def declaration(field):
    """The `RunArgument` of a field of `RunArguments`."""
    return field.metadata["run_argument"]


def preset_given_fields():
    """The names of the fields of `RunArguments` a preset may give (`given_by_preset`)."""
    return [
        field.name
        for field in dataclasses.fields(RunArguments)
        if declaration(field).given_by_preset
    ]


@dataclasses.dataclass(frozen=True)
class RunArguments:
    """What a run trains, on what, and how it samples; each field declares its flag, default,
    range and help (`run_argument`).

    Attributes:
        env: an id of `keras_simplicial.envs.ENV_IDS`.
        agent: "relational" or "simplicial".
        env_config: constructor arguments of the environment (e.g. `{"max_solution_length": 1}`).
        model_overrides: architecture overrides of the agent model (e.g. `{"num_heads": 4}`) on
            `architecture.PAPER_DEFAULTS`, and `jit_compile` (default true: the model runs as
            one XLA computation). A preset gives its model (`model_config.PRESET_MODEL`), with
            `--model-config` merged over it.
        overrides: further `IMPALAConfig` attributes (a preset's and `--config`'s), always with
            `CLIP_EACH_VARIABLE` (false, the global norm, unless given).
        num_env_runners: rollout worker processes (the paper: 63 per machine); 0 samples in the
            driver, beside the learner thread.
        num_envs_per_env_runner: boards each runner steps as one batch (the paper: 1).
        seed: seeds the env runners and the model initialisation (None: unseeded).
        sampler: one of `SAMPLERS`.
        engine: one of `engines.ENGINE_NAMES`: what trains the run (`engines.ENGINES`).
        mask_blocked_moves: the policy chooses among the moves the board lets through only
            (`BoxWorldCore.allowed_moves`), in training and in play: a change to the paper's
            agent, whose policy also pushes against walls and closed locks.
        init_policy: a saved policy whose weights a new run starts from instead of a random
            initialisation (anything `evaluate` plays: a checkpoint, a run directory, an
            exported policy, a supervised run's policy.keras), of the same agent and
            architecture; None starts from random weights. A resumed run restores its own
            checkpoint and does not read it again.
    """

    env: str = run_argument(
        ENVS[0],
        flags=("--env",),
        rule=OneOf(ENVS),
        given_by_preset=True,
        help="the environment",
    )
    agent: str = run_argument(
        "simplicial", flags=("--agent",), rule=OneOf(AGENTS), help="the agent model"
    )
    env_config: dict = run_argument(
        factory=dict,
        flags=("--env-config",),
        rule=JsonObject(),
        given_by_preset=True,
        help="JSON object of environment arguments merged over the preset's, e.g. "
        "'{\"max_solution_length\": 1}'",
    )
    model_overrides: dict = run_argument(
        factory=dict,
        flags=("--model-config",),
        rule=JsonObject(),
        given_by_preset=True,
        help="JSON object of architecture overrides merged over the preset's model (the "
        "trainability study's front end, model_config.PRESET_MODEL), e.g. '{\"num_heads\": 4}' "
        "(ranges checked: architecture.MODEL_RANGES), or the name of a model config "
        "(model_config.MODEL_CONFIGS: 'paper', the paper's model exactly; 'front-end'; "
        "'pre-front-end', the presets' model before the front end); and jit_compile (default "
        "true: the model runs as one XLA computation, jax.jit on JAX; false for TensorFlow's "
        "graph executor, no jit on JAX; on PyTorch, the keras engine and rllib-new run eager "
        "whatever it says)",
    )
    overrides: dict = run_argument(
        factory=dict,
        flags=("--config",),
        rule=JsonObject(),
        given_by_preset=True,
        help="JSON object of IMPALAConfig overrides on top of the preset's, e.g. "
        '\'{"lr": 1e-4, "train_batch_size": 640}\'; unknown keys and values outside their '
        "range (lr > 0, gamma in (0, 1], sizes >= 1, ...: presets.CONFIG_RANGES) are refused "
        "before anything starts; an lr given without lr_schedule replaces the preset's schedule "
        "too",
    )
    # On a few cores the fastest layout is no remote env runner: the driver samples its boards as
    # one batch while IMPALA's learner thread trains beside it, in one process and one TensorFlow
    # thread pool (docs/benchmarks.md, "Training throughput"). A cluster run asks for N runners.
    num_env_runners: int = run_argument(
        0,
        flags=("--num-env-runners",),
        rule=Integer(0),
        help="rollout worker processes (0: the driver samples, beside the learner thread on "
        "rllib-old, fastest on a few cores; on a cluster, one per CPU); the keras engine "
        "takes 0 only",
    )
    num_envs_per_env_runner: int = run_argument(
        64,
        flags=("--num-envs-per-env-runner", "--num-envs"),
        rule=Integer(1),
        help="boards each runner steps (as one batch with --sampler batched; as separate "
        "gymnasium envs with rllib)",
    )
    seed: Optional[int] = run_argument(
        None,
        flags=("--seed",),
        rule=OrNone(Integer(None)),
        help="seeds the env runners and the model initialisation (none: unseeded)",
    )
    sampler: str = run_argument(
        "batched",
        flags=("--sampler",),
        rule=OneOf(SAMPLERS),
        help="'batched': each env runner steps its boards as one batch; 'rllib': RLlib's "
        "per-env sampler (slower on small boards, runs every RLlib episode callback; not on the "
        "keras engine)",
    )
    engine: str = run_argument(
        "rllib-old",
        flags=("--engine",),
        rule=OneOf(ENGINE_NAMES),
        help="what trains the run: 'rllib-old' (RLlib's old API stack, Keras on TensorFlow, the "
        "reference), 'rllib-new' (RLlib's new API stack, Keras on PyTorch) or 'keras' (one "
        "process without Ray, on the process's Keras backend: TensorFlow unless KERAS_BACKEND "
        "says jax or torch); --api-stack old|new names the first two",
    )
    mask_blocked_moves: bool = run_argument(
        False,
        flags=("--mask-blocked-moves",),
        rule=Boolean(),
        help="mask the moves the board blocks (walls, key tiles, locks whose key is not held) out "
        "of the policy, in training and in play: a change to the paper's agent (old API stack, "
        "batched sampler; the rllib-old or keras engine)",
    )
    init_policy: Optional[str] = run_argument(
        None,
        flags=("--init-policy",),
        rule=OrNone(Text()),
        help="start from the weights of this saved policy instead of random ones: a checkpoint, "
        "a run directory, an exported policy or a supervised run's policy.keras (e.g. "
        "OUT/best of keras-simplicial dagger), of the same agent and --model-config; the "
        "optimizer starts new (the keras engine)",
    )

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value, rule = getattr(self, field.name), declaration(field).rule
            if not rule.accepts(value):
                raise ValueError(
                    f"{field.name} ({declaration(field).flag}) must be {rule.describe()}, "
                    f"got {value!r}."
                )
            if isinstance(value, dict):
                object.__setattr__(self, field.name, dict(value))
            elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, field.name, int(value))
        if self.mask_blocked_moves and (
            not ENGINES[self.engine].masks_blocked_moves or self.sampler != "batched"
        ):
            masking = [name for name, engine in ENGINES.items() if engine.masks_blocked_moves]
            raise ValueError(
                f"mask_blocked_moves (--mask-blocked-moves) needs an engine of {masking} and the "
                "sampler 'batched' (the sampler that gives the policy each board's allowed "
                f"moves), got engine {self.engine!r} and sampler {self.sampler!r}."
            )
        if self.init_policy is not None and not ENGINES[self.engine].starts_from_policy:
            starting = [name for name, engine in ENGINES.items() if engine.starts_from_policy]
            raise ValueError(
                f"init_policy (--init-policy) needs an engine of {starting}, got engine "
                f"{self.engine!r}."
            )
        object.__setattr__(self, "overrides", {**NEW_RUN_OVERRIDES, **self.overrides})
        architecture, jit_compile = split_model_config(self.model_overrides)
        object.__setattr__(self, "_architecture", architecture)
        object.__setattr__(self, "_jit_compile", jit_compile)

    @property
    def api_stack(self):
        """RLlib's API stack the run trains on ("old", "new"), None for the Keras engine."""
        return ENGINES[self.engine].api_stack

    @property
    def architecture(self):
        """The architecture overrides of `build_agent_model`: `model_overrides` without
        `jit_compile`."""
        return dict(self._architecture)

    @property
    def jit_compile(self):
        """Whether the agent model runs as one XLA computation (`model_overrides`, default
        True)."""
        return self._jit_compile

    @classmethod
    def from_preset(cls, preset, agent=None, **changes):
        """The arguments of a run of the preset named `preset` (`PRESETS`) with `changes` on top.

        `changes` are fields of `RunArguments` (None: not given). The preset gives the fields
        declared `given_by_preset` that it holds (`env`, `env_config`, `model_overrides`,
        `overrides`, and any other such field): a value given replaces the preset's, but an
        `env_config` is merged over its env config, `model_overrides` over its model and
        `overrides` over its IMPALA overrides (`preset_overrides`: an lr alone replaces its
        schedule too).
        """
        if preset not in PRESETS:
            raise ValueError(f"--preset must be one of {sorted(PRESETS)}, got {preset!r}.")
        changes = with_engine_of_api_stack(changes)
        names = [field.name for field in dataclasses.fields(cls)]
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise ValueError(f"unknown run argument(s) {unknown}; accepted: {names}.")
        given = {
            name: value for name, value in {**changes, "agent": agent}.items() if value is not None
        }
        chosen = PRESETS[preset]
        by_preset = {name: chosen[name] for name in preset_given_fields() if name in chosen}
        return cls(
            **{
                **by_preset,
                **given,
                "env_config": {**chosen["env_config"], **dict(given.get("env_config") or {})},
                "model_overrides": copy.deepcopy(
                    {**chosen["model_overrides"], **dict(given.get("model_overrides") or {})}
                ),
                "overrides": preset_overrides(chosen, given.get("overrides")),
            }
        )

    @classmethod
    def from_json(cls, data, source="run.json"):
        """The arguments of a decoded run.json.

        The `api_stack` of a file written before `engine` existed names its engine
        (`engines.API_STACK_ENGINES`). A field it lacks takes its value from
        `EARLIER_RUN_DEFAULTS`, else its default, and an
        IMPALA setting its overrides lack from `EARLIER_RUN_OVERRIDES`; `REQUIRED_IN_RUN_JSON`
        must be there.
        """
        if not isinstance(data, dict):
            raise ValueError(f"{source} must hold a JSON object, got {type(data).__name__}.")
        data = with_engine_of_api_stack(data, f"{source}: ")
        names = [field.name for field in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError(f"{source} has unknown key(s) {unknown}; accepted: {names}.")
        missing = [name for name in REQUIRED_IN_RUN_JSON if name not in data]
        if missing:
            raise ValueError(f"{source} lacks the key(s) {missing}.")
        data = {**EARLIER_RUN_DEFAULTS, **data}
        overrides = data.get("overrides", {})
        if isinstance(overrides, dict):  # anything else is refused, named, by the constructor
            data["overrides"] = {**EARLIER_RUN_OVERRIDES, **overrides}
        return cls(**data)

    def to_json(self):
        return dataclasses.asdict(self)

    def differences(self, other):
        """The names of the fields whose values differ from `other`'s; a JSON object's with the
        keys that differ, e.g. `overrides (_tf_policy_handles_more_than_one_loss)`."""
        found = []
        for field in dataclasses.fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            if mine == theirs:
                continue
            if isinstance(mine, dict) and isinstance(theirs, dict):
                absent = object()
                keys = sorted(
                    k for k in {*mine, *theirs} if mine.get(k, absent) != theirs.get(k, absent)
                )
                found.append(f"{field.name} ({', '.join(keys)})")
            else:
                found.append(field.name)
        return found

    @classmethod
    def read(cls, path):
        """The arguments in the run.json at `path`."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"{path.parent} is not a training run: {path} is missing.")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path} is damaged: not valid JSON ({error}).") from None
        return cls.from_json(data, source=str(path))

    def write(self, path):
        """Writes run.json to `path` atomically (readers see the old or the new file)."""
        atomic_write_text(path, json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")


def with_engine_of_api_stack(fields, where=""):
    """`fields` (a dict of run arguments) with an `api_stack` ("old", "new": the older name of
    the two RLlib engines) turned into its `engine`; a `ValueError` where both are given and
    disagree, or the stack is unknown."""
    fields = dict(fields)
    stack = fields.pop("api_stack", None)
    if stack is None:
        return fields
    if stack not in API_STACK_ENGINES:
        raise ValueError(
            f"{where}api_stack (--api-stack) must be one of {list(API_STACKS)}, got {stack!r}."
        )
    engine = fields.get("engine")
    if engine is not None and engine != API_STACK_ENGINES[stack]:
        raise ValueError(
            f"{where}api_stack (--api-stack) {stack!r} names the engine "
            f"{API_STACK_ENGINES[stack]!r}, but engine (--engine) is {engine!r}: give one."
        )
    fields["engine"] = API_STACK_ENGINES[stack]
    return fields


def run_argument_flags(arguments, reference, exclude=()):
    """The flags (a list of words) that make `reference`, the `RunArguments` a command would make
    without them, into `arguments`: the command line of a run, read back (`given_run_arguments`
    the other way). A JSON object's flag gives only the keys that differ, as it is merged over
    the preset's (an `lr` without `lr_schedule` drops the schedule, as `preset_overrides` reads
    it); fields named in `exclude` are left out."""
    flags = []
    for field in dataclasses.fields(RunArguments):
        mine, theirs = getattr(arguments, field.name), getattr(reference, field.name)
        if field.name == "model_overrides":  # an option left out is the architecture's default
            mine, theirs = with_architecture_defaults(mine), with_architecture_defaults(theirs)
        if field.name in exclude or mine == theirs:
            continue
        declared = declaration(field)
        if isinstance(declared.rule, Boolean):
            flags.append(declared.flag if mine else "--no-" + declared.flag[2:])
        elif isinstance(mine, dict):
            changed = {k: v for k, v in mine.items() if k not in theirs or theirs[k] != v}
            lost = sorted(set(theirs) - set(mine))
            if field.name == "overrides" and lost == ["lr_schedule"] and "lr" in changed:
                lost = []  # an lr given alone replaces the schedule (`preset_overrides`)
            if lost:
                raise ValueError(
                    f"{field.name} ({declared.flag}) lacks {lost}, which no flag can take away."
                )
            flags += [declared.flag, shlex.quote(json.dumps(changed, sort_keys=True))]
        else:
            flags += [declared.flag, shlex.quote(str(mine))]
    return flags
