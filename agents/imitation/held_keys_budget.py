"""The held-keys probe taken to a learning budget: how many updates until a model learns the
conjunction, if it does.

    run = BudgetRun(agent="simplicial", gain="ones", train_size=64_000, max_updates=100_000)
    record = train_budget(run, "runs/simplicial-ones", data_dir="runs/data")

The held-keys probe (`held_keys.py`) trains each model to a plateau and reports where it ended.
Here one model trains at a fixed learning rate for up to `max_updates` updates, and every
`eval_every` updates its accuracies are measured (training set, fresh boards with seen colour pairs,
boards whose Gem locks are a held-out pair). The endpoint is the first evaluation at which the
held-out-pair accuracy reaches `target`: its updates and the examples seen by then (updates x
batch), or "censored" at the cap. Training stops at the endpoint.

- Nested training sets: the states of a seed are drawn once into `data_dir` (the largest count
  asked so far); a smaller set is a prefix of a larger one, so a larger size only adds examples.
- Exact resume: the model's weights, the optimizer's variables, the batch generator's state and the
  curve so far are one checkpoint folder, replaced whole after each evaluation; a run killed at
  any point continues from its last evaluation as if never stopped.
- The ladder (`RUNGS`): the same states and labels with the board made easier, to find what stops
  a model that does not learn the conjunction from the board: "board" (the probe itself),
  "locks-marked" (a fourth input channel marks the Gem box's two lock tiles), "gem-locks-only"
  (every board cell but the Gem box's tiles and its two lock tiles drawn as floor) and
  "colours-one-hot" (gem-locks-only with each cell's colour given as one channel of its own instead
  of RGB: whether two tiles have the same colour is then one dot product).
"""

import dataclasses
import functools
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np

from keras_simplicial.agents.atomic_files import atomic_write_json
from keras_simplicial.agents.imitation.held_keys import held_keys_states, held_out_pairs
from keras_simplicial.envs.palette import (
    EMPTY_SLOT_RGB,
    FLOOR_RGB,
    GEM_RGB,
    PLAYER_RGB,
    make_palette,
)

RUNGS = ("board", "locks-marked", "gem-locks-only", "colours-one-hot")
AGENTS = ("relational", "simplicial")
GAINS = ("zeros", "ones")  # simplicial_gain_initializer: the agents' default, the paper's block
CHECKPOINT = "checkpoint"
RECORD = "run.json"
CHECK_SIZE = 2_048  # training states on which the loss and training accuracy are measured
DEFAULT_LEARNING_RATE = 3e-4


@dataclasses.dataclass(frozen=True)
class BudgetRun:
    """One model of the budget probe: what it trains on, for how long, and its endpoint.

    `gain` is the simplicial agent's `simplicial_gain_initializer` (None: the agent's default;
    the relational agent has none). The environment is the `preset`'s bridge BoxWorld."""

    agent: str = "relational"
    gain: str | None = None
    rung: str = "board"
    train_size: int = 16_000
    max_updates: int = 100_000
    batch_size: int = 64
    learning_rate: float = DEFAULT_LEARNING_RATE
    eval_every: int = 500
    test_size: int = 1_000
    target: float = 0.9
    seed: int = 0
    held_out_share: float = 0.2
    preset: str = "bridge-medium"
    # Architecture options (`--model-config`) on top of the agent's defaults, e.g. a remedy of the
    # trainability screen; None: the defaults (and the gain above).
    model_config: dict | None = None

    def __post_init__(self):
        from keras_simplicial.agents.training.presets import PRESETS

        if self.agent not in AGENTS:
            raise ValueError(f"agent must be one of {AGENTS}, got {self.agent!r}.")
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {self.preset!r}.")
        if self.gain is not None and (self.agent != "simplicial" or self.gain not in GAINS):
            raise ValueError(
                f"gain must be None or, for the simplicial agent, one of {GAINS}; got "
                f"{self.gain!r} for the {self.agent} agent."
            )
        if self.rung not in RUNGS:
            raise ValueError(f"rung must be one of {RUNGS}, got {self.rung!r}.")
        for name in ("train_size", "max_updates", "batch_size", "eval_every", "test_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        if self.train_size < 2:
            raise ValueError(f"train_size must be at least 2, got {self.train_size}.")
        if not 0.5 < self.target <= 1 or not self.learning_rate > 0:
            raise ValueError(
                f"target must be in (0.5, 1] and learning_rate > 0, got {self.target!r} and "
                f"{self.learning_rate!r}."
            )
        if not 0 < self.held_out_share < 1:
            raise ValueError(f"held_out_share must be in (0, 1), got {self.held_out_share!r}.")
        if self.model_config is not None:
            from keras_simplicial.agents.model.architecture import agent_hyperparameters

            if not isinstance(self.model_config, dict):
                raise ValueError(f"model_config must be a dict or None, got {self.model_config!r}.")
            agent_hyperparameters(self.agent, **self.model_overrides())

    @property
    def model(self):
        """The model's name: the agent, with the gain when one is given."""
        return self.agent if self.gain is None else f"{self.agent}-gain-{self.gain}"

    @property
    def name(self):
        """The run's folder name; a learning rate other than the default is part of it."""
        name = f"{self.model}--{self.rung}--n{self.train_size}--seed{self.seed}"
        if self.learning_rate != DEFAULT_LEARNING_RATE:
            name += f"--lr{self.learning_rate:g}"
        for key, value in sorted((self.model_config or {}).items()):
            name += f"--{key}={_name_part(value)}"
        return name

    def model_overrides(self):
        overrides = {} if self.gain is None else {"simplicial_gain_initializer": self.gain}
        return {**(self.model_config or {}), **overrides}


def _name_part(value):
    """A model config's value as a part of a folder name: true/false, numbers, strings as they
    are, lists joined by "-" (mlp_units [256, 256] -> "256-256")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "-".join(_name_part(v) for v in value)
    return "null" if value is None else str(value)


# ---------------------------------------------------------------------------------------- states
def cached_states(run, split, count, data_dir=None):
    """`count` states and labels of `split` for the run's preset, seed and held-out share, from the
    cache in `data_dir` (drawn and stored when it holds fewer). The first k states of any draw are
    the k states a draw of k gives, so a smaller training set is a prefix of a larger one."""
    from keras_simplicial.agents.training.presets import PRESETS

    preset = PRESETS[run.preset]
    env_config = preset["env_config"]
    num_colours = _num_colours(preset["env"], env_config)
    pairs = held_out_pairs(num_colours, run.held_out_share, run.seed)
    path = None
    if data_dir is not None:
        path = Path(data_dir) / (
            f"{run.preset}--share{run.held_out_share}--seed{run.seed}--{split}.npz"
        )
        if path.exists():
            with np.load(path) as cached:
                if len(cached["labels"]) >= count:
                    return cached["observations"][:count], cached["labels"][:count]
    observations, labels = held_keys_states(
        preset["env"], env_config, count, held_out=pairs, split=split, seed=run.seed
    )
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp.npz")
        np.savez_compressed(temporary, observations=observations, labels=labels)
        temporary.replace(path)
    return observations, labels


def ladder_states(run, split, count, data_dir=None):
    """`cached_states` of `split` as the run's rung shows them (`ladder_view`): (states,
    labels)."""
    from keras_simplicial.agents.training.presets import PRESETS

    preset = PRESETS[run.preset]
    observations, labels = cached_states(run, split, count, data_dir)
    num_colours = _num_colours(preset["env"], preset["env_config"])
    return ladder_view(observations, run.rung, num_colours), labels


def _num_colours(env_id, env_config):
    from keras_simplicial.envs import make_vector_env

    return make_vector_env(env_id, 1, env_config).core.config.num_colours


def ladder_view(observations, rung, num_colours=None):
    """The observations [n, R, C+1, 3] as `rung` shows them (the last column is the inventory).

    "board": unchanged. "locks-marked": a fourth channel, 255 on the Gem box's lock tiles (the
    tile right of each Gem tile) and 0 elsewhere. "gem-locks-only": every board cell but the Gem
    tiles and their lock tiles drawn as floor (the inventory kept). "colours-one-hot": the
    gem-locks-only view [n, R, C+1, 4 + num_colours], each cell 255 in the channel of its colour
    (`colour_channels`) and 0 in the others; `num_colours` is the environment's."""
    if rung not in RUNGS:
        raise ValueError(f"rung must be one of {RUNGS}, got {rung!r}.")
    if rung == "board":
        return observations
    board = observations[:, :, :-1]
    gem = (board == np.asarray(GEM_RGB, observations.dtype)).all(axis=-1)  # [n, R, C]
    locks = np.zeros_like(gem)
    locks[:, :, 1:] = gem[:, :, :-1]
    if rung == "locks-marked":
        mark = np.zeros(observations.shape[:-1] + (1,), observations.dtype)
        mark[:, :, :-1, 0] = np.where(locks, 255, 0)
        return np.concatenate([observations, mark], axis=-1)
    shown = observations.copy()
    hidden = ~(gem | locks)
    shown[:, :, :-1][hidden] = np.asarray(FLOOR_RGB, observations.dtype)
    if rung == "colours-one-hot":
        if num_colours is None:
            raise ValueError('ladder_view needs num_colours for the rung "colours-one-hot".')
        return one_hot_colours(shown, num_colours)
    return shown


def colour_channels(num_colours):
    """The RGB of each channel of the one-hot view, in order: floor, player, empty inventory
    slot, Gem, then the `num_colours` key and lock colours of the palette."""
    fixed = np.asarray([FLOOR_RGB, PLAYER_RGB, EMPTY_SLOT_RGB, GEM_RGB], np.uint8)
    return np.concatenate([fixed, np.asarray(make_palette(num_colours), np.uint8)])


def one_hot_colours(observations, num_colours):
    """Observations [n, R, C+1, 3] as [n, R, C+1, 4 + num_colours]: 255 in the channel of each
    cell's colour (`colour_channels`), 0 elsewhere. A cell of no known colour is an error."""
    channels = colour_channels(num_colours)
    match = (observations[..., None, :] == channels).all(axis=-1)  # [n, R, C+1, channels]
    unknown = ~match.any(axis=-1)
    if unknown.any():
        colour = tuple(int(v) for v in observations[unknown][0])
        raise ValueError(
            f"a cell has the colour {colour}, which is none of the {len(channels)} colours of "
            f"a board with {num_colours} key colours."
        )
    return np.where(match, 255, 0).astype(np.uint8)


# -------------------------------------------------------------------------------------- training
def save_checkpoint(folder, probe, state):
    """The probe's weights and optimizer variables (one .npy file each, all far below 1 MB), its
    batch generator and `state` (the curve so far) as the folder `folder`, replaced whole: the
    new folder is written beside it, then renamed into place."""
    folder = Path(folder)
    temporary = folder.with_name(f".{folder.name}.tmp")
    previous = folder.with_name(f".{folder.name}.old")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    arrays = {f"weight_{i}": w for i, w in enumerate(probe.model.get_weights())}
    arrays.update(
        {f"optimizer_{i}": np.asarray(v) for i, v in enumerate(probe.optimizer.variables)}
    )
    for name, value in arrays.items():
        with open(temporary / f"{name}.npy", "wb") as stream:
            np.save(stream, value)
            stream.flush()
            os.fsync(stream.fileno())
    saved = {"rng": probe.rng.bit_generator.state, **state}
    atomic_write_json(temporary / "state.json", saved, indent=None)
    shutil.rmtree(previous, ignore_errors=True)
    if folder.exists():
        folder.rename(previous)
    temporary.rename(folder)
    shutil.rmtree(previous, ignore_errors=True)


def checkpoint_folder(folder):
    """The checkpoint to resume from: `folder`, or the one it replaced if a save stopped between
    its two renames; None when there is none."""
    folder = Path(folder)
    previous = folder.with_name(f".{folder.name}.old")
    for candidate in (folder, previous):
        if (candidate / "state.json").exists():
            return candidate
    return None


def load_checkpoint(folder, probe):
    """Restores what `save_checkpoint` wrote into `probe`; returns the saved state."""
    folder = Path(folder)
    weights = [np.load(folder / f"weight_{i}.npy") for i in range(len(probe.model.get_weights()))]
    probe.model.set_weights(weights)
    for i, variable in enumerate(probe.optimizer.variables):
        value = np.load(folder / f"optimizer_{i}.npy")
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(f"{folder}: optimizer variable {i} has shape {value.shape}.")
        variable.assign(value)
    state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    probe.rng.bit_generator.state = state.pop("rng")
    return state


def _endpoint(rows, run):
    for row in rows:
        if row["held_out_pairs_accuracy"] >= run.target:
            return {
                "reached": True,
                "updates": row["updates"],
                "examples_seen": row["examples_seen"],
            }
    return {
        "reached": False,
        "updates": run.max_updates,
        "examples_seen": run.max_updates * run.batch_size,
        "censored_at_updates": rows[-1]["updates"] if rows else 0,
    }


def finished(rows, run):
    """Whether a run's curve is complete: the target reached or the cap of updates made."""
    return bool(rows) and (
        rows[-1]["updates"] >= run.max_updates or _endpoint(rows, run)["reached"]
    )


def train_budget(run, folder, *, data_dir=None, updates_now=None, log=None):
    """Trains (or resumes) `run` in `folder`; returns its record (also `folder/run.json`).

    Args:
        run: a `BudgetRun`.
        folder: the run's folder: `checkpoint/` (the resumable state) and `run.json` (the
            record: the run, the curve, the endpoint, the provenance).
        data_dir: where the states are cached (shared by the runs of a seed); None draws them.
        updates_now: stop after about this many updates in this call (whole evaluation periods,
            at least one); None trains to the end.
        log: called with a line after each evaluation (e.g. print).
    """
    return BudgetTrainer(run, folder, data_dir=data_dir, log=log).train(updates_now)


class BudgetTrainer:
    """One run of the budget probe held in memory (its model compiled once), trained in turns
    by `train(updates_now)`, each evaluation checkpointed: several runs can take turns in one
    process without building their models again. Arguments as `train_budget`'s."""

    def __init__(self, run, folder, *, data_dir=None, log=None):
        from keras_simplicial.agents.imitation.held_keys import _Probe
        from keras_simplicial.agents.imitation.plateau import PlateauSchedule
        from keras_simplicial.agents.training.presets import PRESETS
        from keras_simplicial.agents.training.run_arguments import RunArguments

        self.run, self.log = run, log
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.record_path, self.checkpoint_path = folder / RECORD, folder / CHECKPOINT
        settings = dataclasses.asdict(run)
        if self.record_path.exists():
            recorded = json.loads(self.record_path.read_text(encoding="utf-8"))
            if not isinstance(recorded, dict) or not isinstance(recorded.get("run"), dict):
                raise ValueError(
                    f"{self.record_path} is not a held-keys-budget record (another command's "
                    "run?); give a new folder."
                )
            recorded = recorded["run"]
            # A field added since the run was recorded holds its default there.
            defaults = {f.name: f.default for f in dataclasses.fields(BudgetRun)}
            recorded = {**{k: defaults[k] for k in settings if k not in recorded}, **recorded}
            if recorded != settings:
                raise ValueError(
                    f"{folder} holds another run ({recorded}); give a new folder for {settings}."
                )
        preset = PRESETS[run.preset]
        self.views = {
            split: ladder_states(run, split, count, data_dir)
            for split, count in (
                ("train", run.train_size),
                ("seen-pairs", run.test_size),
                ("held-out-pairs", run.test_size),
            )
        }
        train_x = self.views["train"][0]
        arguments = RunArguments(
            env=preset["env"], agent=run.agent, model_overrides=run.model_overrides()
        )
        schedule = PlateauSchedule(learning_rate=run.learning_rate, batch_size=run.batch_size)
        seed = [int(run.seed), int(run.train_size)]
        self.probe = _Probe(arguments, train_x.shape[1:], schedule, seed)
        self.state = {"rows": [], "seconds": 0.0, "provenance": []}
        resume_from = checkpoint_folder(self.checkpoint_path)
        if resume_from is not None:
            self.state = load_checkpoint(resume_from, self.probe)
        # Which code trains from here: a session that resumes the run with other code adds itself.
        if not self.state["provenance"] or self.state["provenance"][-1] != _provenance():
            self.state["provenance"].append(_provenance())
        if not self.state["rows"]:
            self.state["rows"].append(self._evaluate(0))

    @property
    def finished(self):
        return finished(self.state["rows"], self.run)

    def _evaluate(self, updates):
        probe, (train_x, train_y) = self.probe, self.views["train"]
        check = slice(0, min(len(train_y), CHECK_SIZE))
        return {
            "updates": updates,
            "examples_seen": updates * self.run.batch_size,
            "train_loss": round(probe.loss(train_x[check], train_y[check]), 5),
            "train_accuracy": round(probe.accuracy(train_x[check], train_y[check]), 4),
            "seen_pairs_accuracy": round(probe.accuracy(*self.views["seen-pairs"]), 4),
            "held_out_pairs_accuracy": round(probe.accuracy(*self.views["held-out-pairs"]), 4),
            "seconds": round(self.state["seconds"], 1),
        }

    def train(self, updates_now=None):
        """Trains whole evaluation periods until the run is finished or about `updates_now`
        updates are made (None: to the end); returns the record."""
        run, probe, rows = self.run, self.probe, self.state["rows"]
        train_x, train_y = self.views["train"]
        made_now = 0
        while not self.finished and (updates_now is None or made_now < updates_now):
            updates = rows[-1]["updates"]
            period = min(run.eval_every, run.max_updates - updates)
            started = time.perf_counter()
            for _ in range(period):
                chosen = probe.rng.integers(len(train_y), size=run.batch_size)
                probe._train_step(train_x[chosen], train_y[chosen])
            self.state["seconds"] += time.perf_counter() - started
            made_now += period
            rows.append(self._evaluate(updates + period))
            save_checkpoint(self.checkpoint_path, probe, self.state)
            _write_record(self.record_path, run, self.state)
            if self.log is not None:
                row = rows[-1]
                self.log(
                    f"{run.name}: {row['updates']:,} updates, train loss "
                    f"{row['train_loss']:.4f}, accuracy train {row['train_accuracy']:.3f} / seen "
                    f"pairs {row['seen_pairs_accuracy']:.3f} / held-out pairs "
                    f"{row['held_out_pairs_accuracy']:.3f}"
                )
        if checkpoint_folder(self.checkpoint_path) is None:
            save_checkpoint(self.checkpoint_path, probe, self.state)
        return _write_record(self.record_path, run, self.state)


@functools.cache
def _provenance():
    """The code this process imported (read once: later edits of the checkout are not it)."""
    from keras_simplicial.agents.provenance import provenance

    return provenance()


def _write_record(path, run, state):
    rows = state["rows"]
    updates = rows[-1]["updates"] - rows[0]["updates"] if len(rows) > 1 else 0
    record = {
        "run": dataclasses.asdict(run),
        "model": run.model,
        "finished": finished(rows, run),
        "endpoint": _endpoint(rows, run) if finished(rows, run) else None,
        "seconds_training": round(state["seconds"], 1),
        "seconds_per_update": round(state["seconds"] / updates, 5) if updates else None,
        "curve": rows,
        # Which code trained it: the package version and commit of each session.
        "provenance": state["provenance"],
    }
    atomic_write_json(path, record, indent=1)
    return record


# ------------------------------------------------------------------------- reading the runs
FLAT_SHARE = 0.95  # a run left the constant prediction once its training loss is below this x log 2
# The rungs from the easiest: the ladder's reading uses the runs at the default learning rate.
LADDER = ("colours-one-hot", "gem-locks-only", "locks-marked", "board")


def left_constant(record):
    """Whether a run's training loss ever fell below `FLAT_SHARE` x log 2."""
    return any(row["train_loss"] < FLAT_SHARE * np.log(2) for row in record["curve"])


def learned(record):
    """Whether a run's held-out-pair accuracy reached its target (the endpoint)."""
    target = record["run"]["target"]
    return any(row["held_out_pairs_accuracy"] >= target for row in record["curve"])


def pilot_decision(board_records):
    """ "go", "extend", "no-go" or "open" from the runs on the board (pilot-plan.md, section 3):
    go if any learned; otherwise, once every run has finished, extend if any left the constant
    prediction and no-go if none did; open until then (an unfinished run may still learn)."""
    if not board_records:
        return "open"
    if any(learned(record) for record in board_records):
        return "go"
    if any(left_constant(record) for record in board_records):
        return "extend" if all(record["finished"] for record in board_records) else "open"
    return "no-go" if all(record["finished"] for record in board_records) else "open"


def first_failing_rung(records_by_rung):
    """(rung, finished) of a model: the first rung of `LADDER` it did not learn, and whether
    that run used its whole cap (False: unfinished, so not yet a failure); (None, True) if it
    learned every rung run; rungs not run are skipped."""
    for rung in LADDER:
        record = records_by_rung.get(rung)
        if record is not None and not learned(record):
            return rung, record["finished"]
    return None, True
