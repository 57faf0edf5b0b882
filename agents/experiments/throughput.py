"""Frames/s of training in the runs' own layout, measured as a sweep needs it: both agents back to
back on one machine (Appendix C's time adjustment), with where the time goes.

    arguments = RunArguments.from_preset("bridge-small", "simplicial")
    measure_layout(arguments, seconds=60, warmup_s=20)["sampled_fps"]
    measured_throughput(out, "bridge-small", arguments, seconds=60)   # both agents, cached in
                                                                       # OUT/throughput.json

`benchmarks/train_throughput.py` measures the same way across presets, layouts and the bare model.
"""

import dataclasses
import functools
import json
import statistics
import time
from pathlib import Path

THROUGHPUT_FILE = "throughput.json"  # in a sweep folder: both agents' frames/s, one machine
AGENTS = ("relational", "simplicial")

RUNNER_TIMERS = (
    ("mean_env_wait_ms", "env runner: env stepping"),
    ("mean_raw_obs_processing_ms", "env runner: observation processing"),
    ("mean_inference_ms", "env runner: model forward"),
    ("mean_action_processing_ms", "env runner: action processing"),
)


def measure_layout(arguments, seconds, warmup_s):
    """Frames/s sampled and trained, and the per-1,000-frame profile (`profile`), of the run of
    `arguments` (a `RunArguments`: the agent, the preset's recipe, the layout of its sampler, env
    runners and boards), seeded 0 with an iteration every 2 s. Trains `warmup_s` seconds first
    (XLA compilation, tracing, the first batches), then counts over `seconds`."""
    from keras_simplicial.agents.training.rllib.impala import impala_config

    config = impala_config(
        arguments,
        seed=0,
        overrides={**arguments.overrides, "min_time_s_per_iteration": 2},
    )
    algorithm = config.build_algo()
    try:
        results, elapsed, before, after = warm_then_count(
            algorithm.train, lambda: (*counters(algorithm), algorithm.iteration), seconds, warmup_s
        )
    finally:
        algorithm.stop()
    (sampled_0, trained_0, iterations_0), (sampled_1, trained_1, iterations_1) = before, after
    sampled_fps = (sampled_1 - sampled_0) / elapsed
    trained_fps = (trained_1 - trained_0) / elapsed
    frames_per_iteration = (sampled_1 - sampled_0) / max(iterations_1 - iterations_0, 1)
    return {
        "sampled_fps": sampled_fps,
        "trained_fps": trained_fps,
        "profile": profile(
            results,
            arguments.num_envs_per_env_runner,
            config.train_batch_size,
            frames_per_iteration,
        ),
    }


def measure_engine(arguments, seconds, warmup_s, address=None):
    """{"sampled_fps"}: the environment steps per second of the run of `arguments` on its own
    engine (any of `engines.ENGINES`, opened as `train` opens it: an RLlib engine joins the
    cluster at `address`, or an embedded local Ray), seeded 0 with an iteration every 2 s:
    `warmup_s` seconds first, then counted over `seconds`. `measure_layout` adds the old stack's
    profile."""
    from keras_simplicial.agents.training.engines import ENGINES

    engine = ENGINES[arguments.engine]
    overrides = {**arguments.overrides, "min_time_s_per_iteration": 2}
    arguments = dataclasses.replace(arguments, seed=0, overrides=overrides)
    trainer = engine.open(arguments, engine.configure(arguments), None, address)
    try:
        _, elapsed, first, last = warm_then_count(
            trainer.train, trainer.environment_steps, seconds, warmup_s
        )
    finally:
        trainer.stop()
    return {"sampled_fps": (last - first) / elapsed}


def warm_then_count(train, count, seconds, warmup_s):
    """Calls `train()` for `warmup_s` seconds (compilation, tracing, the first batches), then
    for `seconds` more; returns (the counted calls' results, their wall time, `count()` before
    them, `count()` after them)."""
    started = time.time()
    while time.time() - started < warmup_s:
        train()
    before, started = count(), time.time()
    results = []
    while time.time() - started < seconds:
        results.append(train())
    elapsed = time.time() - started
    return results, elapsed, before, count()


def counters(algorithm):
    return (
        int(algorithm._counters.get("num_env_steps_sampled", 0)),
        int(algorithm._counters.get("num_env_steps_trained", 0)),
    )


def profile(results, num_envs, train_batch_size, frames_per_iteration):
    """Milliseconds per 1,000 frames of each part, medians over the measured iterations."""

    def median(values):
        values = [float(v) for v in values if v is not None]
        return statistics.median(values) if values else float("nan")

    rows = {}
    for key, name in RUNNER_TIMERS:
        per_step = median(
            (r.get("env_runners") or {}).get("sampler_perf", {}).get(key) for r in results
        )
        rows[name] = per_step * 1000.0 / num_envs
    breakdown = [(r.get("info") or {}).get("timing_breakdown") or {} for r in results]
    rows["learner: gradient step"] = (
        median(b.get("learner_grad_time_ms") for b in breakdown) * 1000.0 / train_batch_size
    )
    rows["learner: batch load"] = (
        median(b.get("learner_load_time_ms") for b in breakdown) * 1000.0 / train_batch_size
    )
    timers = [r.get("timers") or {} for r in results]
    rows["driver: fetch samples"] = (
        median(t.get("sample_time_ms") for t in timers) * 1000.0 / frames_per_iteration
    )
    rows["driver: weight sync"] = (
        median(t.get("synch_weights_time_ms") for t in timers) * 1000.0 / frames_per_iteration
    )
    return rows


def measured_throughput(out, preset, arguments, *, seconds, address=None):
    """{"machine", "frames_per_s": {agent: frames/s}, ...}: both agents of the runs of `arguments`
    (a `RunArguments` of the preset named `preset`: its layout of env runners and boards; the
    agent replaced by each, seed 0) trained back to back in this process, cached in
    `<out>/throughput.json`.

    Appendix C scales steps by a ratio of speeds, and a ratio is only meaningful within one
    machine and one sitting: the runs' own medians mix sittings (this project's runs trained the
    relational agent at 1,700 frames/s in one and 3,400 in another, on CPUs that name themselves
    alike). Measured on the runs' engine (the old stack with its profile, `measure_layout`;
    another through its trainer, `measure_engine`) when missing, or when the preset, the engine,
    the cluster, the layout or the masking of blocked moves differ.
    """
    import ray

    from keras_simplicial.agents.atomic_files import atomic_write_json
    from keras_simplicial.agents.training.engines import ENGINES
    from keras_simplicial.agents.training.rllib.trainer import start_ray
    from keras_simplicial.agents.training.run_directory import this_machine

    path = Path(out) / THROUGHPUT_FILE
    setting = {
        "preset": preset,
        "engine": arguments.engine,
        "ray": address or "embedded local Ray",
        "layout": {
            "sampler": arguments.sampler,
            "num_env_runners": arguments.num_env_runners,
            "num_envs_per_env_runner": arguments.num_envs_per_env_runner,
        },
        "mask_blocked_moves": arguments.mask_blocked_moves,
    }
    if path.exists():
        # Measured before runs could mask (every move played) or name their engine (the old stack).
        earlier = {"mask_blocked_moves": False, "engine": "rllib-old"}
        stored = {**earlier, **json.loads(path.read_text())}
        if all(stored.get(key) == value for key, value in setting.items()):
            return stored
    warmup_s = min(20.0, seconds / 2)
    print(
        f"Measuring Appendix C's frames/s: each agent trains {seconds:g} s after {warmup_s:g} s "
        f"of warm-up ({path})",
        flush=True,
    )
    api_stack = ENGINES[arguments.engine].api_stack
    if api_stack == "old":
        # measure_layout builds the old stack's Algorithm itself; another engine opens as train
        # opens it, Ray included.
        start_ray(address=address, num_env_runners=arguments.num_env_runners, api_stack=api_stack)
        measure = measure_layout
    else:
        measure = functools.partial(measure_engine, address=address)
    try:
        frames_per_s = {
            agent: measure(
                dataclasses.replace(arguments, agent=agent), seconds=seconds, warmup_s=warmup_s
            )["sampled_fps"]
            for agent in AGENTS
        }
    finally:
        if api_stack is not None:
            ray.shutdown()
    stored = {
        **setting,
        "machine": this_machine(),
        "seconds": seconds,
        "warmup_s": warmup_s,
        "frames_per_s": frames_per_s,
    }
    Path(out).mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, stored)
    return stored
