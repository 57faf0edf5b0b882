"""Training an agent with IMPALA, top to bottom, on any engine (`engines.ENGINES`).

    arguments = RunArguments.from_preset("bridge-small", "simplicial", seed=1)
    summary = train(arguments, out="runs/demo", stop_timesteps=1_000_000)
    summary = train(out="runs/demo", stop_timesteps=2_000_000, resume=True)   # later

`train` reads as the run goes:

1. The run's arguments: new ones written to OUT/run.json, or read back from it when resuming
   (`RunArguments`), all checked before anything starts (the engine's `configure`).
2. The run's engine (`arguments.engine`, a record of `engines.ENGINES`): its config, built from
   the paper's hyperparameters and the run's arguments, then its trainer (`Trainer`), restored
   from the run's last checkpoint when resuming. The Keras engine trains in this process
   (`keras_engine/`); the RLlib adapter starts Ray and builds IMPALA (`rllib/`).
3. Iterations until the stop condition (`train_iterations`): `trainer.train()` (an `Iteration`),
   a metrics row (CSV + TensorBoard), progress, and a checkpoint every `checkpoint_every`
   iterations (`CheckpointKeeper`). Ctrl-C and SIGTERM stop it once the iteration under way
   (and its checkpoint) is done, and checkpoint before leaving; a second signal leaves at once.
4. A `TrainingSummary` of where everything went (the `train` command then plots the curve).
"""

import dataclasses
import signal
import time
from typing import Protocol

from keras_simplicial.agents.training.engines import engine_named
from keras_simplicial.agents.training.greedy_check import DEFAULT_CHECK_EPISODES, GreedyCheck
from keras_simplicial.agents.training.metric_rows import metrics_row
from keras_simplicial.agents.training.progress import make_progress
from keras_simplicial.agents.training.run_arguments import RunArguments
from keras_simplicial.agents.training.run_directory import MetricsLog, RunDirectory


class Trainer(Protocol):
    """What an engine's `open` returns, and all that `train` reads of it
    (`keras_engine.impala.KerasIMPALA`, `rllib.trainer.RLlibTrainer`).

    Attributes:
        iteration: training iterations so far (restored with a checkpoint).
        smoothing: episodes in the window of `Iteration`'s means.
    """

    iteration: int
    smoothing: int

    def environment_steps(self) -> int:
        """Environment steps sampled over the whole run (restored with a checkpoint)."""

    def train(self):
        """One training iteration; returns its `Iteration`."""

    def diagnostics(self) -> dict:
        """The attention statistics and trainability of the current weights (a flat dict)."""

    def save(self, path):
        """Writes a checkpoint into the directory `path`."""

    def layout(self) -> str:
        """One line: where the boards are sampled and the learner runs."""

    def stop(self):
        """Releases what the trainer holds (Ray's workers, the boards)."""


@dataclasses.dataclass
class TrainingSummary:
    run_dir: str
    checkpoint: str
    metrics_csv: str
    tensorboard_dir: str
    timesteps: int
    iterations: int
    win_rate: float
    interrupted: bool
    best_checkpoint: str = None
    best_win_rate: float = None
    best_greedy_win_rate: float = None


def train(
    arguments=None,
    *,
    out,
    stop_timesteps,
    resume=False,
    address=None,
    checkpoint_every=10,
    check_episodes=DEFAULT_CHECK_EPISODES,
    stop_seconds=None,
    progress="auto",
):
    """Trains the run of `arguments` (a `RunArguments`) with IMPALA until `stop_timesteps`
    environment steps.

    `arguments` are written to OUT/run.json. With `resume=True`, `out` must hold an earlier run:
    its arguments are read back from run.json (`arguments` may be left out; where given and
    different, run.json's are used and the differing fields are named), and only
    `stop_timesteps`, `stop_seconds` and how to run come from this call. The algorithm is
    restored from the newest intact checkpoint (weights, optimizer state and timestep
    counters; damaged ones are set aside, see `resume_state`), and metrics rows written after
    that checkpoint are dropped.

    Every checkpoint's saved weights play `check_episodes` greedy episodes (`GreedyCheck`) and
    the best checkpoint is the one that won most of them; 0 turns the check off (the best is then
    the one with the highest training win rate).

    Returns:
        A `TrainingSummary` with the paths of the checkpoint, metrics and plot.
    """
    if isinstance(check_episodes, bool) or int(check_episodes) < 0:
        raise ValueError(f"check_episodes must be an integer >= 0, got {check_episodes!r}.")
    if isinstance(checkpoint_every, bool) or int(checkpoint_every) < 1:
        raise ValueError(f"checkpoint_every must be an integer >= 1, got {checkpoint_every!r}.")
    if stop_seconds is not None and (isinstance(stop_seconds, bool) or not stop_seconds > 0):
        raise ValueError(f"stop_seconds must be a number > 0 or None, got {stop_seconds!r}.")
    if stop_timesteps is None or int(stop_timesteps) <= 0:
        raise ValueError(f"stop_timesteps must be a positive integer, got {stop_timesteps!r}.")
    run = RunDirectory(out)
    if resume:
        given = arguments
        arguments, checkpoint = resume_state(run)
        if given is not None and given.differences(arguments):
            print(
                f"Resuming with the arguments of {run.run_file}; those given differ in "
                f"{', '.join(given.differences(arguments))}.",
                flush=True,
            )
    else:
        if not isinstance(arguments, RunArguments):
            raise ValueError(
                f"arguments must be a RunArguments for a new run, got {arguments!r}; "
                "to continue a run, pass resume=True."
            )
        if run.run_file.exists():
            raise ValueError(
                f"--out {run.root} already holds a run; continue it with --resume "
                "or choose another --out."
            )
        checkpoint = None
    engine = engine_named(arguments.engine)
    engine.require()
    config = engine.configure(arguments)  # every argument is checked before anything starts
    run.create()
    if not resume:
        arguments.write(run.run_file)

    try:
        trainer = engine.open(arguments, config, checkpoint, address)
    except BaseException:
        if not resume:  # a run that never started leaves no run.json to --resume from
            run.run_file.unlink(missing_ok=True)
        raise
    run.record_machine(trainer.iteration)
    if checkpoint is not None:
        run.truncate_metrics(trainer.iteration)
        print(
            f"Resumed from {checkpoint} (iteration {trainer.iteration}, "
            f"{trainer.environment_steps():,} environment steps).",
            flush=True,
        )
    elif arguments.init_policy is not None:
        print(f"Started from the weights of {arguments.init_policy}.", flush=True)
    print(trainer.layout(), flush=True)

    checkpoints = CheckpointKeeper(
        run,
        trainer,
        every=checkpoint_every,
        resumed_from=checkpoint,
        # The win rate is a mean over the last `smoothing` episodes; until that many have ended
        # in this process it rests on a few episodes (one lucky win reads 1.0).
        smoothing=trainer.smoothing,
        check=GreedyCheck(arguments, episodes=check_episodes) if check_episodes else None,
    )
    row, interrupted = train_iterations(
        trainer,
        run,
        arguments,
        checkpoints,
        stop_timesteps=int(stop_timesteps),
        stop_seconds=stop_seconds,
        progress=progress,
    )
    timesteps = row["timesteps"] if row else trainer.environment_steps()
    trainer.stop()
    best = run.best_checkpoint()
    return TrainingSummary(
        run_dir=str(run.root),
        checkpoint=str(checkpoints.latest),
        metrics_csv=str(run.metrics_file),
        tensorboard_dir=str(run.events_dir),
        timesteps=timesteps,
        iterations=trainer.iteration,
        win_rate=row.get("win_rate", ""),
        interrupted=interrupted,
        best_checkpoint=str(best[0]) if best else None,
        best_win_rate=best[1]["win_rate"] if best else None,
        best_greedy_win_rate=best[1].get("greedy_win_rate") if best else None,
    )


def resume_state(run):
    """(`RunArguments`, checkpoint) to resume `run` from, after setting aside what is damaged.

    Damaged checkpoints newer than the newest intact one are renamed `damaged-iter_N`; a damaged
    or missing run.json is restored from the checkpoint's own copy; a damaged metrics.csv or
    best.json is set aside (`RunDirectory.repair_for_resume`). Each repair is printed in one
    line. Raises `FileNotFoundError` when `run` is no run or holds no checkpoint, and
    `ValueError` when no checkpoint is intact or the arguments cannot be recovered.
    """
    if not run.run_file.exists() and not run.checkpoints_dir.is_dir():
        raise FileNotFoundError(f"{run.root} is not a training run: {run.run_file} is missing.")
    checkpoint, damaged = run.resume_point()
    if checkpoint is None:
        if not damaged:
            raise FileNotFoundError(f"--resume: no complete checkpoint in {run.checkpoints_dir}.")
        reasons = "; ".join(reason for _, reason in damaged)
        raise ValueError(f"--resume: no intact checkpoint in {run.checkpoints_dir} ({reasons}).")
    for skipped, reason in damaged:
        kept = run.set_aside(skipped)
        print(f"Skipped {skipped.name}: {reason}. Set aside as {kept.name}.", flush=True)
    try:
        arguments = RunArguments.read(run.run_file)
    except (ValueError, FileNotFoundError) as error:
        copy = checkpoint / run.run_file.name
        if not copy.is_file():
            raise ValueError(
                f"--resume: {error} {checkpoint.name} holds no copy of run.json to restore."
            ) from None
        arguments = RunArguments.read(copy)
        if run.run_file.exists():
            run.set_aside(run.run_file)
        arguments.write(run.run_file)
        print(f"{error} Restored run.json from {checkpoint.name}.", flush=True)
    for line in run.repair_for_resume():
        print(line, flush=True)
    return arguments, checkpoint


def train_iterations(
    trainer, run, arguments, checkpoints, *, stop_timesteps, stop_seconds, progress
):
    """Trains until `stop_timesteps`, `stop_seconds`, Ctrl-C or SIGTERM, then checkpoints.

    Returns:
        (the last metrics row, or {} without any iteration; whether a signal stopped it)
    """
    metrics = MetricsLog(run)
    display = make_progress(
        progress,
        total=stop_timesteps,
        title=f"{arguments.agent} agent on {arguments.env}",
        stop_seconds=stop_seconds,
    )
    started_at = time.time()
    timesteps = trainer.environment_steps()
    since = (timesteps, started_at)
    row = {}
    with _StopRequest() as stop, display:
        display.update(timesteps, {})
        while timesteps < stop_timesteps and not stop.requested:
            if stop_seconds is not None and time.time() - started_at >= float(stop_seconds):
                break
            iteration = trainer.train()
            # Everything since the previous row counts: the last checkpoint and its check too.
            row = metrics_row(iteration, started_at, trainer.diagnostics(), since=since)
            timesteps = iteration.timesteps
            since = (timesteps, time.time())
            metrics.append(row, iteration.timings)  # before the checkpoint: a resumed run has it
            display.update(timesteps, row)
            checkpoints.after_iteration(iteration)
        checkpoints.save_unless_saved()
    metrics.close()
    return row, stop.requested


class CheckpointKeeper:
    """Saves a checkpoint every `every` iterations and scores it, so the best one is kept.

    Each checkpoint carries the training win rate its weights earned (the mean of the iterations
    since the previous checkpoint, counted once `smoothing` episodes have ended in this process)
    and, with `check` (a `GreedyCheck`), the greedy win rate of the saved weights themselves,
    by which `RunDirectory.save_checkpoint` picks the best checkpoint.
    """

    def __init__(self, run, trainer, every, smoothing, resumed_from=None, check=None):
        self.run, self.trainer, self.check = run, trainer, check
        self.every, self.smoothing = int(every), int(smoothing)
        self.latest = resumed_from
        self._saved_at_iteration = trainer.iteration if resumed_from is not None else -1
        self._win_rates = []
        self._episodes = 0
        if check is not None and resumed_from is not None:
            run.rescore_best(check)  # a best chosen before checks existed

    def after_iteration(self, iteration):
        """Counts an `Iteration`'s episodes and win rate, and saves every `every` iterations."""
        self._episodes += iteration.episodes
        if self._episodes >= self.smoothing:
            self._win_rates.append(iteration.win_rate)
        if self.trainer.iteration % self.every == 0:
            self.save()

    def save_unless_saved(self):
        if self.trainer.iteration != self._saved_at_iteration:
            self.save()

    def save(self):
        scored = [w for w in self._win_rates if w not in ("", None)]
        self._win_rates.clear()
        self.latest = self.run.save_checkpoint(
            self.trainer,
            self.trainer.iteration,
            win_rate=sum(scored) / len(scored) if scored else None,
            check=self.check,
        )
        self._saved_at_iteration = self.trainer.iteration
        return self.latest


class _StopRequest:
    """Turns the first SIGINT/SIGTERM into a graceful stop (checkpoint, then leave)."""

    def __init__(self):
        self.requested = False
        self._previous = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested:  # a second Ctrl-C or SIGTERM: leave now, without a checkpoint
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False
