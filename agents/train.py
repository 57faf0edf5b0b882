"""Training an agent with IMPALA on Ray RLlib, top to bottom.

    summary = train(env="BridgeBoxWorld-v0", agent="simplicial", out="runs/demo",
                    stop_timesteps=1_000_000)

1. Start Ray (embedded on this machine, or join a cluster with `address`).
2. Build IMPALA with the paper's hyperparameters (`config.impala_config`), or restore it from the
   run's last checkpoint when resuming.
3. Loop: `algorithm.train()`, log a metrics row (CSV + TensorBoard), show progress, checkpoint every
   `checkpoint_every` iterations. Ctrl-C checkpoints before leaving.
4. Final checkpoint and training-curve plot; the caller prints where everything went.
"""

import dataclasses
import math
import os
import signal
import time
from pathlib import Path

from keras_simplicial.agents.callbacks import win_rates_from_result
from keras_simplicial.agents.config import (DEFAULT_NUM_ENV_RUNNERS, DEFAULT_NUM_ENVS_PER_ENV_RUNNER,
                                            DEFAULT_SAMPLER, impala_config, validate_env_config)
from keras_simplicial.agents.diagnostics import AttentionHealth
from keras_simplicial.agents.progress import make_progress
from keras_simplicial.agents.run_directory import MetricsLog, RunDirectory

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
    plot: str
    timesteps: int
    iterations: int
    win_rate: float
    interrupted: bool
    best_checkpoint: str = None
    best_win_rate: float = None


def start_ray(address=None, num_env_runners=1):
    """Joins the cluster at `address`, or starts an embedded local Ray sized for the run."""
    import ray

    if ray.is_initialized():
        return
    runtime_env = {"env_vars": dict(WORKER_ENV_VARS)}
    if address:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    else:
        # One CPU for the learner and one per env runner, even if that oversubscribes a laptop:
        # Ray would otherwise wait forever for CPUs that do not exist.
        # address="local" starts a new Ray even if a cluster (or RAY_ADDRESS) is around.
        num_cpus = max(os.cpu_count() or 1, 1 + int(num_env_runners))
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, runtime_env=runtime_env,
                 log_to_driver=False, configure_logging=True, logging_level="ERROR")


def env_runner_nodes(algorithm):
    """The node IP address of each remote env runner, in runner order."""
    import ray

    return algorithm.env_runner_group.foreach_env_runner(
        lambda runner: ray.util.get_node_ip_address(), local_env_runner=False)


def metrics_row(result, started_at, diagnostics=None):
    """The CSV/TensorBoard row of one `Algorithm.train()` result (plus `diagnostics`, a dict)."""
    timesteps = int(result.get("num_env_steps_sampled_lifetime")
                    or result.get("timesteps_total") or 0)
    runners = result.get("env_runners") or {}
    learner = (((result.get("info") or {}).get("learner") or {}).get("default_policy") or {})
    stats = {**(learner.get("learner_stats") or {}), "grad_gnorm": learner.get("grad_gnorm")}
    win_rate, per_type = win_rates_from_result(result)
    row = {
        "training_iteration": int(result["training_iteration"]),
        "timesteps": timesteps,
        "time_s": round(time.time() - started_at, 3),
        "frames_per_s": round(float(result.get("num_env_steps_sampled_throughput_per_sec")
                                    or 0.0), 2),
        "episodes": int(runners.get("episodes_this_iter") or 0),
        "episode_return_mean": _finite(runners.get("episode_return_mean")),
        "episode_len_mean": _finite(runners.get("episode_len_mean")),
        "win_rate": _finite(win_rate),
        "policy_loss": _finite(stats.get("policy_loss")),
        "vf_loss": _finite(stats.get("vf_loss")),
        "entropy": _finite(stats.get("entropy")),
        "vf_explained_var": _finite(stats.get("vf_explained_var")),
        "grad_gnorm": _finite(stats.get("grad_gnorm")),
    }
    for name in sorted(learner):
        if name.startswith("grad_norm/"):
            row[name] = _finite(learner[name])
    for name, value in sorted((diagnostics or {}).items()):
        row[name] = _finite(value)
    for puzzle_type, rate in sorted(per_type.items()):
        row["win_rate/" + "_".join(map(str, puzzle_type))] = round(rate, 4)
    return row


def _finite(value):
    """A rounded float for the CSV, "" for missing or non-finite values (lists are averaged)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        if not value:
            return ""
        value = sum(float(v) for v in value) / len(value)
    value = float(value)
    return "" if math.isnan(value) or math.isinf(value) else round(value, 6)


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


def algorithm_config(arguments):
    """The `IMPALAConfig` of a run's `arguments`; raises `ValueError` on any bad argument."""
    validate_env_config(arguments["env"], arguments["env_config"])
    config = impala_config(
        arguments["env"], arguments["agent"], env_config=arguments["env_config"],
        model_overrides=arguments["model_overrides"],
        num_env_runners=arguments["num_env_runners"],
        num_envs_per_env_runner=arguments["num_envs_per_env_runner"],
        seed=arguments["seed"], overrides=arguments["overrides"],
        # Runs written before the batched sampler existed used RLlib's.
        sampler=arguments.get("sampler", "rllib"),
    )
    # A crashed env runner comes back after a second, not RLlib's default minute.
    config.fault_tolerance(restart_failed_env_runners=True,
                           delay_between_env_runner_restarts_s=1.0)
    return config


def build_algorithm(arguments, checkpoint=None, config=None):
    """The IMPALA `Algorithm` of a run's `arguments`, restored from `checkpoint` if given.

    Restoring brings back the weights, the optimizer state and the timestep counters.
    """
    algorithm = (config or algorithm_config(arguments)).build_algo()
    if checkpoint is not None:
        # RLlib reads the checkpoint through pyarrow, which takes absolute paths only.
        algorithm.restore(str(Path(checkpoint).resolve()))
    return algorithm


def environment_steps(algorithm):
    """Environment steps sampled over the whole run (restored with a checkpoint)."""
    return int(algorithm._counters.get("num_env_steps_sampled", 0))


def train(env="BridgeBoxWorld-v0", agent="simplicial", *, out, stop_timesteps,
          env_config=None, model_overrides=None, overrides=None,
          num_env_runners=DEFAULT_NUM_ENV_RUNNERS,
          num_envs_per_env_runner=DEFAULT_NUM_ENVS_PER_ENV_RUNNER, seed=None, resume=False,
          address=None, checkpoint_every=10, stop_seconds=None, progress="auto",
          sampler=DEFAULT_SAMPLER):
    """Trains `agent` on `env` with IMPALA until `stop_timesteps` environment steps.

    With `resume=True`, `out` must hold an earlier run: its arguments are read back from
    run.json (only `stop_timesteps` and `stop_seconds` come from this call), the algorithm is
    restored from the latest complete checkpoint (weights, optimizer state and timestep
    counters), and metrics rows written after that checkpoint are dropped.

    Returns:
        A `TrainingSummary` with the paths of the checkpoint, metrics and plot.
    """
    run_dir = RunDirectory(out)
    if resume:
        arguments = run_dir.read_run()
        checkpoint = run_dir.latest_checkpoint()
        if checkpoint is None:
            raise FileNotFoundError(f"--resume: no complete checkpoint in {run_dir.checkpoints_dir}.")
    else:
        if run_dir.run_file.exists():
            raise ValueError(f"--out {run_dir.root} already holds a run; continue it with --resume "
                             "or choose another --out.")
        arguments = {
            "env": env, "agent": agent, "env_config": dict(env_config or {}),
            "model_overrides": dict(model_overrides or {}), "overrides": dict(overrides or {}),
            "num_env_runners": int(num_env_runners),
            "num_envs_per_env_runner": int(num_envs_per_env_runner), "seed": seed,
            "sampler": sampler,
        }
        checkpoint = None
    if stop_timesteps is None or int(stop_timesteps) <= 0:
        raise ValueError(f"stop_timesteps must be a positive integer, got {stop_timesteps!r}.")
    config = algorithm_config(arguments)  # every argument is checked before anything starts
    run_dir.create()
    if not resume:
        run_dir.write_run(arguments)

    start_ray(address, arguments["num_env_runners"])
    algorithm = build_algorithm(arguments, checkpoint, config)
    if checkpoint is not None:
        run_dir.truncate_metrics(algorithm.iteration)
        print(f"Resumed from {checkpoint} (iteration {algorithm.iteration}, "
              f"{environment_steps(algorithm):,} environment steps).", flush=True)

    nodes = env_runner_nodes(algorithm)
    if nodes:
        print(f"{len(nodes)} env runner(s) on {len(set(nodes))} node(s): "
              + ", ".join(f"{ip} x{nodes.count(ip)}" for ip in sorted(set(nodes))), flush=True)
    else:
        print(f"Sampling {arguments['num_envs_per_env_runner']} boards in this process, beside "
              "the learner thread (no remote env runner).", flush=True)

    metrics = MetricsLog(run_dir)
    attention_health = AttentionHealth(
        algorithm.get_policy().model.base_model, arguments["agent"],
        arguments["model_overrides"], arguments["env"], arguments["env_config"])
    display = make_progress(progress, total=int(stop_timesteps),
                            title=f"{arguments['agent']} agent on {arguments['env']}",
                            stop_seconds=stop_seconds)
    started_at = time.time()
    timesteps = environment_steps(algorithm)
    saved_at_iteration = algorithm.iteration if checkpoint is not None else -1
    latest = checkpoint
    row = {}
    wins_since_checkpoint = []  # the win rates the weights earned since the last checkpoint
    # RLlib's win rate is a mean over the last `smoothing` episodes; until that many have ended
    # in this process it rests on a few episodes (one lucky win reads 1.0) and cannot name the
    # best checkpoint.
    smoothing = int(config.metrics_num_episodes_for_smoothing)
    episodes_seen = 0

    def save():
        scored = [w for w in wins_since_checkpoint if w not in ("", None)]
        win_rate = sum(scored) / len(scored) if scored else None
        wins_since_checkpoint.clear()
        return run_dir.save_checkpoint(algorithm, algorithm.iteration, win_rate=win_rate)

    with _StopRequest() as stop, display:
        display.update(timesteps, {})
        while timesteps < int(stop_timesteps) and not stop.requested:
            if stop_seconds is not None and time.time() - started_at >= float(stop_seconds):
                break
            result = algorithm.train()
            row = metrics_row(result, started_at, attention_health())
            timesteps = row["timesteps"]
            metrics.append(row)
            episodes_seen += row["episodes"]
            if episodes_seen >= smoothing:
                wins_since_checkpoint.append(row.get("win_rate"))
            display.update(timesteps, row)
            if algorithm.iteration % int(checkpoint_every) == 0:
                latest = save()
                saved_at_iteration = algorithm.iteration
        if algorithm.iteration != saved_at_iteration:
            latest = save()
    metrics.close()
    algorithm.stop()

    from keras_simplicial.agents.plots import plot_training_curves

    plot_path = run_dir.plots_dir / "win_rate.png"
    plot_training_curves([run_dir.root], plot_path)
    best = run_dir.best_checkpoint()
    return TrainingSummary(
        run_dir=str(run_dir.root), checkpoint=str(latest), metrics_csv=str(run_dir.metrics_file),
        tensorboard_dir=str(run_dir.events_dir), plot=str(plot_path), timesteps=timesteps,
        iterations=algorithm.iteration, win_rate=row.get("win_rate", ""),
        interrupted=stop.requested,
        best_checkpoint=str(best[0]) if best else None, best_win_rate=best[1] if best else None,
    )
