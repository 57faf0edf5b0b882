"""Training an agent with IMPALA, top to bottom, on any engine (`engines.ENGINES`).

    arguments = RunArguments.from_preset("bridge-small", "simplicial", seed=1)
    summary = train(arguments, out="runs/demo", stop_timesteps=1_000_000)
    summary = train(out="runs/demo", stop_timesteps=2_000_000, resume=True)   # later

`train` reads as the run goes:

1. The run's arguments: new ones written to OUT/run.json, or read back from it when resuming
   (`RunArguments`), all checked before anything starts (`impala_config`).
2. The run's engine (`arguments.engine`, a record of `engines.ENGINES`): its config, built from
   the paper's hyperparameters and the run's arguments, then its trainer, restored from the
   run's last checkpoint when resuming. The RLlib engines start Ray (embedded, or a cluster
   joined at `address`: `start_ray`) and build IMPALA (`build_algorithm`); the Keras engine
   trains in this process (`keras_engine`).
3. Iterations until the stop condition (`train_iterations`): `trainer.train()`, a metrics row
   (CSV + TensorBoard), progress, and a checkpoint every `checkpoint_every` iterations
   (`CheckpointKeeper`). Ctrl-C and SIGTERM checkpoint before leaving.
4. A `TrainingSummary` of where everything went (the `train` command then plots the curve).

A trainer is what an engine's `open` returns; `train` reads it through these names only:
`iteration` and `smoothing` (episodes in its win rate's window), `environment_steps()`,
`train()` (one iteration's result, in the names of RLlib's old-stack results),
`read_result(result)` (-> what `metric_rows.metrics_row` reads), `diagnostics()` (the attention
statistics of its current weights), `save(path)`, `layout()` (one line: where it samples) and
`stop()`. `RLlibTrainer` (here) and `keras_engine.KerasEngineTrainer` are the two.
"""

import dataclasses
import os
import signal
import time
from pathlib import Path

from keras_simplicial.agents.training.engines import engine_named
from keras_simplicial.agents.training.greedy_check import DEFAULT_CHECK_EPISODES, GreedyCheck
from keras_simplicial.agents.training.metric_rows import metrics_row
from keras_simplicial.agents.training.progress import make_progress
from keras_simplicial.agents.training.run_arguments import KERAS_BACKENDS, RunArguments
from keras_simplicial.agents.training.run_directory import MetricsLog, RunDirectory

# Ray workers inherit these: quiet TensorFlow, and Keras 2 behind `tf.keras` for RLlib.
WORKER_ENV_VARS = {
    "TF_USE_LEGACY_KERAS": "1",
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "PYTHONWARNINGS": "ignore::DeprecationWarning",
}


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
    if stop_timesteps is None or int(stop_timesteps) <= 0:
        raise ValueError(f"stop_timesteps must be a positive integer, got {stop_timesteps!r}.")
    engine = engine_named(arguments.engine)
    engine.require()
    config = engine.build_config(arguments)  # every argument is checked before anything starts
    run.create()
    if not resume:
        arguments.write(run.run_file)

    trainer = engine.open_trainer(arguments, config, checkpoint, address)
    run.record_machine(trainer.iteration)
    if checkpoint is not None:
        run.truncate_metrics(trainer.iteration)
        print(
            f"Resumed from {checkpoint} (iteration {trainer.iteration}, "
            f"{trainer.environment_steps():,} environment steps).",
            flush=True,
        )
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
    line. Raises `ValueError` if no checkpoint is intact or the arguments cannot be recovered.
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


def algorithm_config(arguments):
    """The config of a run's `RunArguments` on its engine (`engines.Engine.build_config`):
    `impala_config` (rllib-old), `torch_impala_config` (rllib-new) or the Keras engine's
    settings (`keras_engine.engine_settings`)."""
    return engine_named(arguments.engine).build_config(arguments)


class RLlibTrainer:
    """An RLlib IMPALA `Algorithm` (either API stack) as `train` drives it (see the module's
    docstring).

    Args:
        algorithm: the built (and restored) algorithm.
        arguments: its run's `RunArguments`.
        config: the config it was built from.
    """

    def __init__(self, algorithm, arguments, config):
        self.algorithm, self.arguments = algorithm, arguments
        self.smoothing = int(config.metrics_num_episodes_for_smoothing)
        self.read_result, self.diagnostics = stack_readers(algorithm, arguments)

    @property
    def iteration(self):
        return self.algorithm.iteration

    def environment_steps(self):
        return environment_steps(self.algorithm)

    def train(self):
        return self.algorithm.train()

    def save(self, path):
        return self.algorithm.save(path)

    def layout(self):
        return sampling_layout(self.algorithm, self.arguments)

    def stop(self):
        self.algorithm.stop()


def open_rllib(arguments, config, checkpoint=None, address=None):
    """The `RLlibTrainer` of a run on an RLlib engine (`engines.Engine.open`): Ray started
    (`start_ray`), IMPALA built from `config` and restored from `checkpoint` when given."""
    start_ray(address, arguments.num_env_runners, arguments.api_stack)
    return RLlibTrainer(build_algorithm(arguments, checkpoint, config), arguments, config)


def start_ray(address=None, num_env_runners=1, api_stack="old"):
    """Joins the cluster at `address`, or starts an embedded local Ray sized for the run (unless
    Ray is running already), and registers the agent models and envs for this job.

    The workers run Keras on the backend of `api_stack` (`KERAS_BACKENDS`); a Ray already
    running keeps the environment it was started with.
    """
    import ray

    if not ray.is_initialized():
        env_vars = dict(WORKER_ENV_VARS)
        if api_stack == "new":
            env_vars["KERAS_BACKEND"] = KERAS_BACKENDS["new"]
        runtime_env = {"env_vars": env_vars}
        if address:
            ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
        else:
            # One CPU for the learner and one per env runner, even if that oversubscribes a
            # laptop: Ray would otherwise wait forever for CPUs that do not exist.
            # address="local" starts a new Ray even if a cluster (or RAY_ADDRESS) is around.
            num_cpus = max(os.cpu_count() or 1, 1 + int(num_env_runners))
            ray.init(
                address="local",
                num_cpus=num_cpus,
                include_dashboard=False,
                runtime_env=runtime_env,
                log_to_driver=False,
                configure_logging=True,
                logging_level="ERROR",
            )
    register_for_this_job(api_stack)


def register_for_this_job(api_stack="old"):
    """Registers the agent models and the envs under the job this driver now is.

    Ray's registry keys what it holds by the job id it first saw and forgets what it has sent
    (ray 2.60, `ray.tune.registry._Registry`; ray-project/ray#8205). A driver that joins a
    cluster again after `ray.shutdown()` (one run after another, as `make reproduce-small
    --address` does) is a new job, and its env runners look the models up under that job's id:
    "Registry value for rllib_model/simplicial_agent doesn't exist". An embedded local Ray is
    new each time and its first job has the same id, which is why only clusters showed it.
    """
    from ray.tune.registry import _global_registry

    from keras_simplicial.agents.model.rllib_model import register_agent_models
    from keras_simplicial.agents.training.rllib_envs import register_envs

    _global_registry._prefix = None  # taken from the current job at the next use
    register_agent_models()
    register_envs()
    if api_stack == "new":
        from keras_simplicial.agents.training.impala_torch import register_new_stack_envs

        register_new_stack_envs()


def build_algorithm(arguments, checkpoint=None, config=None):
    """The IMPALA `Algorithm` of a run's `RunArguments`, restored from `checkpoint` if given.

    Restoring brings back the weights, the optimizer state and the timestep counters.
    """
    algorithm = (config or algorithm_config(arguments)).build_algo()
    if checkpoint is not None:
        # RLlib reads the checkpoint through pyarrow, which takes absolute paths only.
        algorithm.restore(str(Path(checkpoint).resolve()))
    return algorithm


def environment_steps(algorithm):
    """Environment steps sampled over the whole run (restored with a checkpoint)."""
    if algorithm.config.enable_rl_module_and_learner:
        from keras_simplicial.agents.training import new_stack

        return new_stack.environment_steps(algorithm)
    return int(algorithm._counters.get("num_env_steps_sampled", 0))


def env_runner_nodes(algorithm):
    """The node IP address of each remote env runner, in runner order."""
    import ray

    return algorithm.env_runner_group.foreach_env_runner(
        lambda runner: ray.util.get_node_ip_address(), local_env_runner=False
    )


def sampling_layout(algorithm, arguments):
    """One line: where the boards are sampled (the env runners per node, or this process)."""
    nodes = env_runner_nodes(algorithm)
    if not nodes and algorithm.config.enable_rl_module_and_learner:
        return (
            f"Sampling {arguments.num_envs_per_env_runner} boards in this process, then "
            "updating the learner in this process (no remote env runner)."
        )
    if not nodes:
        return (
            f"Sampling {arguments.num_envs_per_env_runner} boards in this process, beside "
            "the learner thread (no remote env runner)."
        )
    return f"{len(nodes)} env runner(s) on {len(set(nodes))} node(s): " + ", ".join(
        f"{ip} x{nodes.count(ip)}" for ip in sorted(set(nodes))
    )


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
            result = trainer.train()
            # Everything since the previous row counts: the last checkpoint and its check too.
            row = metrics_row(
                trainer.read_result(result), started_at, trainer.diagnostics(), since=since
            )
            timesteps = row["timesteps"]
            since = (timesteps, time.time())
            metrics.append(row)  # before the checkpoint: a resumed run has its row
            display.update(timesteps, row)
            checkpoints.after_iteration(row)
        checkpoints.save_unless_saved()
    metrics.close()
    return row, stop.requested


def stack_readers(algorithm, arguments):
    """(result -> the result `metrics_row` reads, () -> the attention statistics of the
    learner's weights) of an algorithm on either API stack."""
    from keras_simplicial.agents.training.attention_health import AttentionHealth

    if not algorithm.config.enable_rl_module_and_learner:
        attention_health = AttentionHealth(
            algorithm.get_policy().model.base_model,
            arguments.agent,
            arguments.architecture,
            arguments.env,
            arguments.env_config,
        )
        return (lambda result: result), attention_health
    import torch

    from keras_simplicial.agents.training import new_stack

    learner = new_stack.LearnerModel(algorithm, arguments)
    attention_health = AttentionHealth(
        learner.model, arguments.agent, arguments.architecture, arguments.env, arguments.env_config
    )

    def diagnostics():
        learner.refresh()
        with torch.no_grad():
            return attention_health()

    return new_stack.old_stack_view, diagnostics


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

    def after_iteration(self, row):
        self._episodes += row["episodes"]
        if self._episodes >= self.smoothing:
            self._win_rates.append(row.get("win_rate"))
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
        if self.requested:  # second Ctrl-C: leave now
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False
