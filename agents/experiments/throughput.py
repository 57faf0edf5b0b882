"""Frames/s of training in the runs' own layout, measured as a sweep needs it: both agents back to
back on one machine (Appendix C's time adjustment), with where the time goes.

    measure_layout("bridge-small", "simplicial", sampler="batched", num_runners=0, num_envs=64,
                   seconds=60, warmup_s=20)["sampled_fps"]
    measured_throughput(out, "bridge-small", ...)   # both agents, cached in OUT/throughput.json

`benchmarks/train_throughput.py` measures the same way across presets, layouts and the bare model.
"""

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


def measure_layout(preset_name, agent, sampler, num_runners, num_envs, seconds, warmup_s):
    """Frames/s sampled and trained, and the per-1,000-frame profile (`profile`), of `agent`
    trained on the preset named `preset_name` in a layout: `sampler` ("batched" or "rllib"),
    `num_runners` remote env runners (0: sample in the driver), `num_envs` boards per runner.
    Trains `warmup_s` seconds first (XLA compilation, tracing, the first batches), then counts
    over `seconds`; seed 0, an iteration every 2 s."""
    from keras_simplicial.agents.training.run_arguments import RunArguments
    from keras_simplicial.agents.training.train import algorithm_config

    arguments = RunArguments.from_preset(
        preset_name,
        agent,
        config={"min_time_s_per_iteration": 2},
        seed=0,
        num_env_runners=num_runners,
        num_envs_per_env_runner=num_envs,
        sampler=sampler,
    )
    config = algorithm_config(arguments)
    algorithm = config.build_algo()
    try:
        started = time.time()
        while time.time() - started < warmup_s:
            algorithm.train()
        sampled_0, trained_0 = counters(algorithm)
        iterations_0 = algorithm.iteration
        started = time.time()
        results = []
        while time.time() - started < seconds:
            results.append(algorithm.train())
        elapsed = time.time() - started
        sampled_1, trained_1 = counters(algorithm)
    finally:
        algorithm.stop()
    sampled_fps = (sampled_1 - sampled_0) / elapsed
    trained_fps = (trained_1 - trained_0) / elapsed
    frames_per_iteration = (sampled_1 - sampled_0) / max(algorithm.iteration - iterations_0, 1)
    return {
        "sampled_fps": sampled_fps,
        "trained_fps": trained_fps,
        "profile": profile(results, num_envs, config.train_batch_size, frames_per_iteration),
    }


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


def measured_throughput(out, preset, *, seconds, address=None, num_env_runners=0, num_envs=64):
    """{"machine", "frames_per_s": {agent: frames/s}, ...}: both agents of `preset` trained back
    to back in this process, in the runs' layout (batched sampler, `num_env_runners`,
    `num_envs`; seed 0), cached in `<out>/throughput.json`.

    Appendix C scales steps by a ratio of speeds, and a ratio is only meaningful within one
    machine and one sitting: the runs' own medians mix sittings (this project's runs trained the
    relational agent at 1,700 frames/s in one and 3,400 in another, on CPUs that name themselves
    alike). Measured when missing, or when the preset, the cluster or the layout differ.
    """
    import ray

    from keras_simplicial.agents.training.run_directory import atomic_write_text, this_machine
    from keras_simplicial.agents.training.train import start_ray

    path = Path(out) / THROUGHPUT_FILE
    setting = {
        "preset": preset,
        "ray": address or "embedded local Ray",
        "layout": {
            "sampler": "batched",
            "num_env_runners": num_env_runners,
            "num_envs_per_env_runner": num_envs,
        },
    }
    if path.exists():
        stored = json.loads(path.read_text())
        if all(stored.get(key) == value for key, value in setting.items()):
            return stored
    warmup_s = min(20.0, seconds / 2)
    print(
        f"Measuring Appendix C's frames/s: each agent trains {seconds:g} s after {warmup_s:g} s "
        f"of warm-up ({path})",
        flush=True,
    )
    start_ray(address=address, num_env_runners=num_env_runners)
    try:
        frames_per_s = {
            agent: measure_layout(
                preset,
                agent,
                sampler="batched",
                num_runners=num_env_runners,
                num_envs=num_envs,
                seconds=seconds,
                warmup_s=warmup_s,
            )["sampled_fps"]
            for agent in AGENTS
        }
    finally:
        ray.shutdown()
    stored = {
        **setting,
        "machine": this_machine(),
        "seconds": seconds,
        "warmup_s": warmup_s,
        "frames_per_s": frames_per_s,
    }
    Path(out).mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(stored, indent=2) + "\n")
    return stored
