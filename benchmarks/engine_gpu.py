"""The Keras engine on a lent GPU (H100/H200, JAX): frames/s of both agents on the paper's board
at growing numbers of boards, then a short bridge-small training towards its target, in one
command that ends inside the device's 10-minute limit.

Here, once: the wheels the GPU machine lacks (Keras and its namex and optree, gymnasium and its
farama-notifications, tensorboardX; its image has JAX, numpy, h5py, rich, matplotlib), at the
versions this machine runs, into .whl/ (ignored):

    echo /.whl/ >> .git/info/exclude
    .venv/bin/python benchmarks/engine_gpu.py wheels --dir .whl

There (device `run`, carry [".whl"], timeout_s 600; the package travels with the working tree):

    python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \\
        --no-cache-dir --upgrade --target /tmp/site .whl/*.whl . \\
        && export PYTHONPATH=/tmp/site || exit;
    KERAS_BACKEND=jax PYTHONUNBUFFERED=1 python3 benchmarks/engine_gpu.py run --out $OUT \\
        [--resume-from benchmarks/results/engine-gpu/bridge-small-simplicial.tar.gz]

`run` writes $OUT/engine_gpu.json and $OUT/bridge-small-<agent>.tar.gz (the whole run directory,
a few MB: what comes back is at most 8 files of 16 MiB). Commit the archive under
benchmarks/results/engine-gpu/ and pass it as `--resume-from` in the next lent window: the run
goes on from its last checkpoint.

1. Throughput: for each agent and each `--boards` B, the paper's preset with one update per act
   (`train_batch_size` = B x 40: the learner trains on all B unrolls at once; the preset's 1,280
   would make B / 32 small updates), one act and learn to compile, then `--seconds` of acting and
   learning (`engine_figures`): frames/s, the share spent acting (the numpy environment on the
   host and the acting forward passes), the environment's own frames/s, and the bare model's
   per-frame limit. Where the acting share is large and the environment's frames/s is near the
   engine's, the host environment is the limit: moving it onto the device is the next step.
   With `--overlap-boards B` (off by default, to stay inside one window with the training), each
   agent at B boards is also measured acting in a second thread while it learns
   (`overlap_figures`): on a GPU the learner runs on the device while the host acts, so whether
   the engine should overlap them there is decided by this ratio, as it was on the CPU
   (docs/benchmarks.md, "acting in a second thread").
2. Training: bridge-small (its preset's recipe) with `--train-boards` boards, in chunks of
   `--chunk-steps` steps until the best checkpoint wins `--target` of its greedy check or
   `--train-seconds` have passed (`train_to_target`).
"""

import argparse
import importlib.metadata
import json
import subprocess
import sys
import time
from pathlib import Path

# The checkout this script is in: the package may run from an installed copy, and the record names
# the code of this tree (its commit where it is a git checkout, and its sources' hash).
CHECKOUT = Path(__file__).resolve().parents[1]

#: The distributions the GPU machine's image lacks (docs: device/KINDS.md), taken at the versions
#: this machine runs.
WHEELS = ("keras", "namex", "optree", "gymnasium", "farama-notifications", "tensorboardX")
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
)


def download_wheels(directory):
    """Downloads `WHEELS` for the GPU machine's Python (3.12, x86-64) into `directory`."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--python-version", "3.12", "--implementation", "cp", "-d", str(directory)]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    command += [f"{name}=={importlib.metadata.version(name)}" for name in WHEELS]
    subprocess.run(command, check=True)


def device_name():
    import jax

    device = jax.devices()[0]
    return f"{device.platform}: {getattr(device, 'device_kind', device)}"


def run(args):
    import keras

    from keras_simplicial.agents.atomic_files import atomic_write_json
    from keras_simplicial.agents.experiments.engine_throughput import (
        engine_figures,
        overlap_figures,
        train_to_target,
        unpack_run,
    )
    from keras_simplicial.agents.provenance import provenance
    from keras_simplicial.agents.training.run_arguments import RunArguments

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "backend": keras.backend.backend(),
        "device": device_name(),
        "code": provenance(CHECKOUT),
        "throughput": [],
    }
    started = time.perf_counter()
    for agent in args.agents:
        for boards in args.boards:
            arguments = RunArguments.from_preset(
                args.preset, agent, engine="keras", seed=1, num_envs_per_env_runner=boards,
                overrides={"train_batch_size": boards * args.unroll,
                           "rollout_fragment_length": args.unroll,
                           "min_time_s_per_iteration": 0},
                model_overrides=args.model_config,
            )  # fmt: skip
            figures = engine_figures(arguments, args.seconds, args.repeats)
            record["throughput"].append(figures)
            print(json.dumps(figures), flush=True)
            atomic_write_json(out / "engine_gpu.json", record, indent=1, sort_keys=True)
            if boards == args.overlap_boards:
                overlap = overlap_figures(arguments, args.seconds, rounds=2)
                record.setdefault("overlap", []).append(overlap)
                print(json.dumps(overlap), flush=True)
                atomic_write_json(out / "engine_gpu.json", record, indent=1, sort_keys=True)
    record["throughput_seconds"] = time.perf_counter() - started

    agent = args.train_agent
    archive = out / f"{args.train_preset}-{agent}.tar.gz"
    workdir = Path(args.workdir)
    if args.resume_from:
        run_dir = unpack_run(args.resume_from, workdir)
    else:
        run_dir = workdir / f"{args.train_preset}-{agent}"
    arguments = RunArguments.from_preset(
        args.train_preset, agent, engine="keras", seed=1,
        num_envs_per_env_runner=args.train_boards, model_overrides=args.model_config,
        overrides=args.train_config,
    )  # fmt: skip
    record["training"] = train_to_target(
        arguments,
        run_dir,
        target=args.target,
        seconds=args.train_seconds,
        chunk_steps=args.chunk_steps,
        archive=archive,
        check_episodes=args.check_episodes,
        checkpoint_every=args.checkpoint_every,
        progress="plain",
    )
    print(json.dumps(record["training"]), flush=True)
    atomic_write_json(out / "engine_gpu.json", record, indent=1, sort_keys=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    wheels = commands.add_parser("wheels", help="download the wheels the GPU machine lacks")
    wheels.add_argument("--dir", default=".whl")
    measure = commands.add_parser("run", help="measure and train (on the GPU machine)")
    measure.add_argument("--out", required=True, help="where the figures and the run go ($OUT)")
    measure.add_argument("--agents", nargs="+", default=["simplicial", "relational"])
    measure.add_argument("--boards", nargs="+", type=int, default=[256, 1024, 4096])
    measure.add_argument("--preset", default="paper", help="the throughput's board and recipe")
    measure.add_argument("--unroll", type=int, default=40, help="rollout_fragment_length")
    measure.add_argument("--seconds", type=float, default=15.0)
    measure.add_argument("--repeats", type=int, default=10)
    measure.add_argument("--model-config", type=json.loads, default={})
    measure.add_argument(
        "--overlap-boards",
        type=int,
        default=None,
        help="at this many boards (one of --boards), also measure acting in a second thread",
    )
    measure.add_argument("--train-preset", default="bridge-small")
    measure.add_argument("--train-agent", default="simplicial")
    measure.add_argument("--train-boards", type=int, default=256)
    measure.add_argument(
        "--train-config", type=json.loads, default={}, help="IMPALA overrides of the training"
    )
    measure.add_argument("--train-seconds", type=float, default=300.0)
    measure.add_argument("--chunk-steps", type=int, default=2_000_000)
    measure.add_argument("--target", type=float, default=0.9)
    measure.add_argument("--check-episodes", type=int, default=128)
    measure.add_argument("--checkpoint-every", type=int, default=10)
    measure.add_argument("--workdir", default="/tmp/engine-gpu")
    measure.add_argument("--resume-from", default=None, help="a run archive of an earlier window")
    args = parser.parse_args(argv)
    if args.command == "run" and args.overlap_boards not in (None, *args.boards):
        parser.error(
            f"--overlap-boards must be one of --boards {args.boards}, got {args.overlap_boards}."
        )
    if args.command == "wheels":
        download_wheels(args.dir)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
