"""The arguments of a training run, as one typed object that reads and writes the run's run.json.

    arguments = RunArguments.from_preset("easy", "relational", seed=1)   # a preset + overrides
    arguments = RunArguments(env="BoxWorld-v0", agent="relational", env_config={"rows": 3})
    train(arguments, out="runs/demo", stop_timesteps=1_000_000)
    arguments.write(run.run_file)           # run = RunDirectory(out): OUT/run.json
    RunArguments.read(run.run_file)         # also the run.json files of earlier versions

`RunArguments` is what is passed around: `train` takes it, `algorithm_config` turns it into an
`IMPALAConfig`, and the model overrides are split once, here, into `architecture` and
`jit_compile`.

`--resume`, `evaluate`, `plot` and the analysis commands read a run back from its run.json, so
its keys are a file format: a new field needs an entry in `EARLIER_RUN_DEFAULTS` saying what runs
written before it used, and a new IMPALA setting that every run records in its overrides one in
`EARLIER_RUN_OVERRIDES`.

Every run's overrides say which gradient norm `grad_clip` caps (`CLIP_EACH_VARIABLE`): a new run
clips the global norm, as the paper's code did; a run.json written before runs recorded it
resumes clipping each variable's gradient, as it trained.
"""

import dataclasses
import json
from pathlib import Path
from typing import Optional

from keras_simplicial.agents.training.run_directory import atomic_write_text

# How env runners sample: "batched" steps all of a runner's boards as one batch
# (`BatchedEnvRunner`); "rllib" is RLlib's own sampler over one gymnasium env per board.
SAMPLERS = ("batched", "rllib")
DEFAULT_SAMPLER = "batched"
# On a few cores the fastest layout is no remote env runner: the driver samples its boards as one
# batch while IMPALA's learner thread trains beside it, in one process and one TensorFlow thread
# pool (docs/benchmarks.md, "Training throughput"). A cluster run asks for N runners instead.
DEFAULT_NUM_ENV_RUNNERS = 0
DEFAULT_NUM_ENVS_PER_ENV_RUNNER = 64

# Fields that run.json files written by earlier versions lack, and the value those runs used.
EARLIER_RUN_DEFAULTS = {
    "sampler": "rllib",  # runs written before the batched sampler existed used RLlib's
}

# Which norm IMPALA's `grad_clip` caps, in RLlib's old-stack (TF) name for it: true clips each
# variable's gradient separately (RLlib 2.60's default), false the global norm of all of them, as
# the paper's code (RLlib 0.7) did. Every run records it in its overrides.
CLIP_EACH_VARIABLE = "_tf_policy_handles_more_than_one_loss"
# What a new run trains with unless its overrides say otherwise (`PAPER_IMPALA_HYPERPARAMETERS`).
NEW_RUN_OVERRIDES = {CLIP_EACH_VARIABLE: False}
# IMPALA settings that the overrides of run.json files written by earlier versions lack, and the
# value those runs trained with.
EARLIER_RUN_OVERRIDES = {
    CLIP_EACH_VARIABLE: True,  # runs written before it was recorded clipped each variable
}


@dataclasses.dataclass(frozen=True)
class RunArguments:
    """What a run trains, on what, and how it samples (see `impala_config` for each field).

    Attributes:
        env: an id of `keras_simplicial.envs.ENV_IDS`.
        agent: "relational" or "simplicial".
        env_config: constructor arguments of the environment.
        model_overrides: architecture overrides of the agent model, and `jit_compile`.
        overrides: further `IMPALAConfig` attributes (a preset's and `--config`'s), always
            with `CLIP_EACH_VARIABLE` (false, the global norm, unless given).
        num_env_runners, num_envs_per_env_runner: rollout processes and boards per runner.
        seed: seeds the env runners and the model initialisation (None: unseeded).
        sampler: one of `SAMPLERS`.
    """

    env: str
    agent: str
    env_config: dict = dataclasses.field(default_factory=dict)
    model_overrides: dict = dataclasses.field(default_factory=dict)
    overrides: dict = dataclasses.field(default_factory=dict)
    num_env_runners: int = DEFAULT_NUM_ENV_RUNNERS
    num_envs_per_env_runner: int = DEFAULT_NUM_ENVS_PER_ENV_RUNNER
    seed: Optional[int] = None
    sampler: str = DEFAULT_SAMPLER

    def __post_init__(self):
        for name in ("env_config", "model_overrides", "overrides"):
            value = getattr(self, name)
            if not isinstance(value, dict):
                raise ValueError(f"{name} must be a JSON object (dict), got {value!r}.")
            object.__setattr__(self, name, dict(value))
        object.__setattr__(self, "overrides", {**NEW_RUN_OVERRIDES, **self.overrides})
        for name in ("num_env_runners", "num_envs_per_env_runner"):
            object.__setattr__(self, name, int(getattr(self, name)))
        architecture = dict(self.model_overrides)
        jit_compile = architecture.pop("jit_compile", True)
        if not isinstance(jit_compile, bool):
            raise ValueError(
                f"--model-config: jit_compile must be true or false, got {jit_compile!r}."
            )
        object.__setattr__(self, "_architecture", architecture)
        object.__setattr__(self, "_jit_compile", jit_compile)

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
    def from_preset(
        cls,
        preset,
        agent,
        *,
        env=None,
        env_config=None,
        config=None,
        model_config=None,
        seed=None,
        num_env_runners=DEFAULT_NUM_ENV_RUNNERS,
        num_envs_per_env_runner=DEFAULT_NUM_ENVS_PER_ENV_RUNNER,
        sampler=DEFAULT_SAMPLER,
    ):
        """The arguments of a run of the preset named `preset` (`PRESETS`) with overrides on top:
        `env` replaces the preset's env id, `env_config` is merged into its env config, `config`
        into its IMPALA overrides (`preset_overrides`), `model_config` is the model overrides
        (the `--env`, `--env-config`, `--config` and `--model-config` of `train`)."""
        from keras_simplicial.agents.training.impala import PRESETS, preset_overrides

        if preset not in PRESETS:
            raise ValueError(f"--preset must be one of {sorted(PRESETS)}, got {preset!r}.")
        chosen = PRESETS[preset]
        return cls(
            env=env or chosen["env"],
            agent=agent,
            env_config={**chosen["env_config"], **dict(env_config or {})},
            model_overrides=dict(model_config or {}),
            overrides=preset_overrides(chosen, config),
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=num_envs_per_env_runner,
            seed=seed,
            sampler=sampler,
        )

    @classmethod
    def from_json(cls, data, source="run.json"):
        """The arguments of a decoded run.json.

        A field it lacks takes its value from `EARLIER_RUN_DEFAULTS`, else its default, and an
        IMPALA setting its overrides lack from `EARLIER_RUN_OVERRIDES`; `env` and `agent` are
        required.
        """
        if not isinstance(data, dict):
            raise ValueError(f"{source} must hold a JSON object, got {type(data).__name__}.")
        fields = dataclasses.fields(cls)
        names = [field.name for field in fields]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError(f"{source} has unknown key(s) {unknown}; accepted: {names}.")
        required = [
            field.name
            for field in fields
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        ]
        missing = [name for name in required if name not in data]
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
