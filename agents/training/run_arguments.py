"""The arguments of a training run, as one typed object that reads and writes the run's run.json.

    arguments = RunArguments(env="BoxWorld-v0", agent="relational", env_config={"rows": 3})
    arguments.write(run.run_file)           # run = RunDirectory(out): OUT/run.json
    RunArguments.read(run.run_file)         # also the run.json files of earlier versions

`--resume`, `evaluate`, `plot` and the analysis commands read a run back from its run.json, so
its keys are a file format: a new field needs an entry in `EARLIER_RUN_DEFAULTS` saying what runs
written before it used.
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


@dataclasses.dataclass(frozen=True)
class RunArguments:
    """What a run trains, on what, and how it samples (see `impala_config` for each field).

    Attributes:
        env: an id of `keras_simplicial.envs.ENV_IDS`.
        agent: "relational" or "simplicial".
        env_config: constructor arguments of the environment.
        model_overrides: architecture overrides of the agent model, and `jit_compile`.
        overrides: further `IMPALAConfig` attributes (a preset's and `--config`'s).
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
        for name in ("num_env_runners", "num_envs_per_env_runner"):
            object.__setattr__(self, name, int(getattr(self, name)))

    @classmethod
    def from_json(cls, data, source="run.json"):
        """The arguments of a decoded run.json.

        A field it lacks takes its value from `EARLIER_RUN_DEFAULTS`, else its default; `env` and
        `agent` are required.
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
        return cls(**{**EARLIER_RUN_DEFAULTS, **data})

    def to_json(self):
        return dataclasses.asdict(self)

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
