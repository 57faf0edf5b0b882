"""How fast the Keras engine trains, where its time goes, and a run trained to a target in
windows of a lent machine: what `benchmarks/engine_throughput.py` (this CPU, against RLlib's old
stack) and `benchmarks/engine_gpu.py` (a lent GPU) measure.

    figures = engine_figures(RunArguments.from_preset("paper", "simplicial", engine="keras"),
                             seconds=20)
    figures["frames_per_s"], figures["limit_frames_per_s"], figures["acting_share"]
    overlap = overlap_figures(arguments, seconds=15, rounds=2)
    overlap["overlap_over_turns"]
    outcome = train_to_target(arguments, out, target=0.9, seconds=300, archive="run.tar.gz")

None of these imports TensorFlow or Ray: on a lent GPU machine the engine runs Keras on JAX.

The engine benchmarks on this CPU (`engine_throughput.py`, `engine_overlap.py`,
`front_end_cost.py`) share their command line and their loop over presets and agents:

    add_engine_arguments(parser, presets=["easy", "bridge-small"], seconds=15.0)
    results = engine_benchmark(args, lambda preset, agent: [figures...], markdown)
"""

import json
import queue
import statistics
import tarfile
import threading
import time
from pathlib import Path

import numpy as np

BENCHMARK_BOARDS = 64


def add_engine_arguments(parser, presets, seconds):
    """Adds an engine benchmark's `--presets` (default `presets`), `--agents` (both) and
    `--seconds` (the measuring window, default `seconds`) to `parser`."""
    from keras_simplicial.agents.training.presets import PRESETS
    from keras_simplicial.agents.training.run_arguments import AGENTS

    parser.add_argument(
        "--presets", nargs="+", choices=sorted(PRESETS), default=list(presets),
        help=f"the presets whose recipes are measured (default: {' '.join(presets)})",
    )  # fmt: skip
    parser.add_argument(
        "--agents", nargs="+", choices=AGENTS, default=list(AGENTS),
        help="the agents measured (default: both)",
    )  # fmt: skip
    parser.add_argument(
        "--seconds", type=float, default=float(seconds),
        help=f"each measuring window, in seconds (default: {seconds:g})",
    )  # fmt: skip


def benchmark_arguments(preset, agent, model_overrides=None):
    """The run an engine benchmark measures: the Keras engine with `preset`'s own recipe,
    `agent`, `BENCHMARK_BOARDS` boards and seed 1, each iteration one unroll."""
    from keras_simplicial.agents.training.run_arguments import RunArguments

    return RunArguments.from_preset(
        preset, agent, engine="keras", seed=1, num_envs_per_env_runner=BENCHMARK_BOARDS,
        model_overrides=model_overrides, overrides={"min_time_s_per_iteration": 0},
    )  # fmt: skip


def engine_benchmark(args, measure, markdown):
    """Runs an engine benchmark: `measure(preset, agent)` (a list of result dicts) for each of
    `args.presets` x `args.agents` in turn, each result printed as a JSON line as it comes, then
    the table `markdown(results, backend)` printed and written with the figures where `args`
    asks (`benchmark_files.write_outputs`). Returns the results."""
    import keras

    from keras_simplicial.agents.experiments.benchmark_files import write_outputs

    backend = keras.backend.backend()
    results = []
    for preset in args.presets:
        for agent in args.agents:
            for result in measure(preset, agent):
                results.append({**result, "preset": preset, "agent": agent})
                print(json.dumps(results[-1]), flush=True)
    text = markdown(results, backend)
    print(text)
    record = {
        "backend": backend,
        "boards": BENCHMARK_BOARDS,
        "seconds": args.seconds,
        "results": results,
    }
    if "model_config" in vars(args):  # a benchmark of one model (`add_model_argument`)
        record["model_config"] = args.model_config
    write_outputs(args, text, record)
    return results


def _median_seconds(function, repeats):
    function()
    times = []
    for _ in range(int(repeats)):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def engine_figures(arguments, seconds, repeats=10):
    """The Keras engine's frames/s on the run of `arguments` (engine "keras"), and where the
    time goes, after one compiling iteration.

    Returns a dict: `frames_per_s` (environment steps over wall time while training for
    `seconds`), `acting_share` (the part of it spent acting: the environment and the acting
    forward passes; the rest is learning), `environment_frames_per_s` (the numpy environment
    alone, stepping all boards with uniform actions), and the bare model's per-frame limit
    `limit_frames_per_s` = 1 / (num_epochs x t_learn / train_batch_size + t_act / boards), from
    `learn_ms` (one learner step on one train batch: forward, backward, optimizer) and `act_ms`
    (one acting forward pass of all boards), each the median of `repeats`.
    """
    from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA

    engine = KerasIMPALA(arguments)
    engine.learn(engine.act())  # compiles acting and learning
    first, acting, learning = engine.timesteps, 0.0, 0.0
    started = time.perf_counter()
    while time.perf_counter() - started < float(seconds):
        begun = time.perf_counter()
        batch = engine.act()
        acted = time.perf_counter()
        engine.learn(batch)
        acting += acted - begun
        learning += time.perf_counter() - acted
    frames = engine.timesteps - first

    settings, boards = engine.settings, engine.core.num_boards
    size = int(settings["train_batch_size"])
    learn_s, act_s = model_step_seconds(engine, batch, repeats)
    per_frame = int(settings["num_epochs"]) * learn_s / size + act_s / boards

    rng = np.random.default_rng(0)
    actions = rng.integers(0, 4, size=boards)

    def step_environment():
        _, terminated, truncated, _ = engine.core.step(actions, autoreset=False)
        ended = np.flatnonzero(terminated | truncated)
        if ended.size:
            engine.core.reset_boards(ended)

    env_s = _median_seconds(step_environment, max(int(repeats), 50))
    engine.env.close()
    return {
        "agent": arguments.agent,
        "env": arguments.env,
        "boards": boards,
        "train_batch_size": size,
        "frames_per_s": frames / (acting + learning),
        "acting_share": acting / (acting + learning),
        "environment_frames_per_s": boards / env_s,
        "learn_ms": 1e3 * learn_s,
        "act_ms": 1e3 * act_s,
        "limit_frames_per_s": 1.0 / per_frame,
    }


def overlap_figures(arguments, seconds, rounds=2):
    """Would a second thread that acts while the learner trains make the Keras engine faster?
    Measures both ways on one engine (the run of `arguments`, engine "keras"), after one
    compiling iteration, in `rounds` alternating windows of `seconds` each:

    - taking turns (the engine as it runs): act one unroll on every board, then learn on it;
    - overlapped: a second thread acts the next unroll, with the weights of the moment (at most
      one unroll behind the learner, the lag an asynchronous IMPALA corrects by V-trace), while
      the learner trains on the last one; a queue of one unroll between them.

    Returns a dict: `turns_frames_per_s` and `overlap_frames_per_s` (environment steps learnt
    over wall time, the mean of the rounds), their ratio `overlap_over_turns`, and each round's
    figures in `rounds`.
    """
    from keras_simplicial.agents.training.keras_engine.impala import KerasIMPALA

    engine = KerasIMPALA(arguments)
    engine.learn(engine.act())  # compiles acting and learning

    def taking_turns():
        first, started = engine.timesteps, time.perf_counter()
        while time.perf_counter() - started < float(seconds):
            engine.learn(engine.act())
        return (engine.timesteps - first) / (time.perf_counter() - started)

    def overlapped():
        unrolls, stop, failures = queue.Queue(maxsize=1), threading.Event(), []

        def actor():
            try:
                while not stop.is_set():
                    batch = engine.act()
                    while not stop.is_set():
                        try:
                            unrolls.put(batch, timeout=0.05)
                            break
                        except queue.Full:
                            continue
            except BaseException as error:  # re-raised by the learner's thread below
                failures.append(error)
                stop.set()

        thread = threading.Thread(target=actor, name="engine-actor", daemon=True)
        learnt, started = 0, time.perf_counter()
        thread.start()
        try:
            while time.perf_counter() - started < float(seconds) and not failures:
                try:
                    batch = unrolls.get(timeout=0.05)
                except queue.Empty:
                    continue
                engine.learn(batch)
                learnt += batch["actions"].size
        finally:
            stop.set()
            thread.join()
        if failures:
            raise failures[0]
        return learnt / (time.perf_counter() - started)

    measured = [
        {"turns_frames_per_s": taking_turns(), "overlap_frames_per_s": overlapped()}
        for _ in range(int(rounds))
    ]
    engine.env.close()
    turns = statistics.fmean(r["turns_frames_per_s"] for r in measured)
    overlap = statistics.fmean(r["overlap_frames_per_s"] for r in measured)
    return {
        "agent": arguments.agent,
        "env": arguments.env,
        "boards": engine.core.num_boards,
        "turns_frames_per_s": turns,
        "overlap_frames_per_s": overlap,
        "overlap_over_turns": overlap / turns,
        "rounds": measured,
    }


def model_step_seconds(engine, batch, repeats):
    """(t_learn, t_act) of a `KerasIMPALA` engine's learner step, each the median of `repeats`
    after one untimed call: t_learn one learner step (forward, backward and the optimizer) on the
    first train batch of `batch` (`engine.act()`'s), t_act one acting forward pass of all its
    boards."""
    per_update = int(engine.settings["train_batch_size"]) // int(
        engine.settings["rollout_fragment_length"]
    )
    part = {
        name: value[:per_update] if name == "bootstrap_value" else value[:, :per_update]
        for name, value in batch.items()
    }
    observations = engine.core.obs.copy()
    learn_s = _median_seconds(lambda: engine.learner.learn(part, 1e-4, 0.01), repeats)
    act_s = _median_seconds(lambda: engine.learner.act(observations), repeats)
    return learn_s, act_s


def pack_run(run_dir, archive):
    """Writes the run directory `run_dir` into one gzipped tar `archive` (what a lent machine
    brings back is a few files, not a tree); returns its size in bytes."""
    run_dir, archive = Path(run_dir), Path(archive)
    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        tar.add(run_dir, arcname=run_dir.name)
    partial.replace(archive)
    return archive.stat().st_size


def unpack_run(archive, parent):
    """Unpacks a `pack_run` archive into `parent`; returns the run directory."""
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:gz") as tar:
        names = {member.name.split("/")[0] for member in tar.getmembers()}
        if len(names) != 1:
            raise ValueError(f"{archive} holds {sorted(names)}, not one run directory.")
        tar.extractall(parent, filter="data")
    return parent / names.pop()


def train_to_target(
    arguments,
    out,
    *,
    target,
    seconds,
    chunk_steps,
    max_timesteps=None,
    archive=None,
    **train_options,
):
    """Trains the run in `out` (new with `arguments`, or resumed where `out` holds one) in
    chunks of `chunk_steps` environment steps until its best checkpoint wins `target` of its
    greedy check, `seconds` have passed or the run has `max_timesteps` steps; packs the run into
    `archive` after every chunk.

    Returns {"timesteps", "best_greedy_win_rate", "reached", "seconds", "frames_per_s"}.
    """
    from keras_simplicial.agents.training.run_directory import RunDirectory
    from keras_simplicial.agents.training.train import train

    run = RunDirectory(out)
    started = time.perf_counter()
    resume = run.run_file.exists()
    timesteps = int(run.read_metrics()[-1]["timesteps"]) if resume and run.read_metrics() else 0
    best = None
    while True:
        left = float(seconds) - (time.perf_counter() - started)
        if left <= 0 or (max_timesteps is not None and timesteps >= int(max_timesteps)):
            break
        summary = train(
            None if resume else arguments,
            out=out,
            resume=resume,
            stop_timesteps=timesteps + int(chunk_steps),
            stop_seconds=left,
            **train_options,
        )
        resume, timesteps = True, summary.timesteps
        best = summary.best_greedy_win_rate
        if archive is not None:
            pack_run(out, archive)
        if best is not None and best >= float(target):
            break
    rows = run.read_metrics()
    rates = [float(r["wall_frames_per_s"]) for r in rows if r.get("wall_frames_per_s")]
    return {
        "timesteps": timesteps,
        "best_greedy_win_rate": best,
        "reached": best is not None and best >= float(target),
        "seconds": time.perf_counter() - started,
        "frames_per_s": statistics.median(rates) if rates else None,
    }
