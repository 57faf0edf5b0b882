"""Training on a two-node Ray cluster on loopback: `ray start --head`, `ray start --address`.

The two nodes are 127.0.0.2 (head) and 127.0.0.3, both on this machine's loopback interface, with
one CPU each, so the two env runners can only be placed one per node.
"""

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"
# Token authentication would need the token on every node; this throwaway cluster lives on
# loopback only.
CLUSTER_ENV = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def free_port(host):
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def ray_executable():
    return str(Path(sys.executable).with_name("ray"))


def start_node(args, log_path):
    """`ray start ... --block` in its own process group, so the test can stop just this node."""
    log = open(log_path, "w")
    return subprocess.Popen(
        [ray_executable(), "start", "--block", "--num-cpus=1", "--disable-usage-stats", *args],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=CLUSTER_ENV,
        start_new_session=True,
    )


def wait_for_nodes(address, count, timeout_s=120):
    probe = (
        "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        result = subprocess.run(
            [sys.executable, "-c", probe, address],
            capture_output=True,
            text=True,
            env=CLUSTER_ENV,
            timeout=120,
        )
        if result.returncode == 0 and result.stdout.strip().splitlines()[-1:] == [str(count)]:
            return True
        time.sleep(2)
    return False


@pytest.fixture
def two_node_cluster(tmp_path, tmp_path_factory):
    # The nodes' addresses are fixed, and so are some of `ray start --head`'s ports (the Ray
    # client's 10001): on pytest-xdist's workers, one cluster at a time (a lock in the directory
    # the workers' temporary directories share).
    with open(tmp_path_factory.getbasetemp().parent / "two_node_cluster.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield from _two_node_cluster(tmp_path)


def _two_node_cluster(tmp_path):
    port = free_port(HEAD_IP)
    address = f"{HEAD_IP}:{port}"
    nodes = [
        start_node(
            [
                "--head",
                f"--node-ip-address={HEAD_IP}",
                f"--port={port}",
                "--include-dashboard=false",
            ],
            tmp_path / "head.log",
        )
    ]
    try:
        time.sleep(3)
        nodes.append(
            start_node(
                [f"--address={address}", f"--node-ip-address={WORKER_IP}"], tmp_path / "worker.log"
            )
        )
        assert wait_for_nodes(address, 2), (tmp_path / "head.log").read_text()[-2000:] + (
            tmp_path / "worker.log"
        ).read_text()[-2000:]
        yield address
    finally:
        for node in reversed(nodes):
            os.killpg(node.pid, signal.SIGTERM)
        for node in nodes:
            try:
                node.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)


# End to end on two Ray nodes (a minute or more on 2 cores): `make test-all`.
@pytest.mark.slow
def test_train_with_address_places_env_runners_on_both_nodes(two_node_cluster, tmp_path):
    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "keras_simplicial_cli",
        "train",
        "--address",
        two_node_cluster,
        "--agent",
        "relational",
        "--num-env-runners",
        "2",
        "--num-envs-per-env-runner",
        "4",
        "--env-config",
        json.dumps({"max_solution_length": 1, "max_steps": 60}),
        "--config",
        json.dumps({"train_batch_size": 160, "min_time_s_per_iteration": 1}),
        "--stop-timesteps",
        "1500",
        "--progress",
        "plain",
        "--out",
        str(out),
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=CLUSTER_ENV, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"2 env runner(s) on 2 node(s): {HEAD_IP} x1, {WORKER_IP} x1" in result.stdout
    assert "Training finished" in result.stdout
    assert (out / "checkpoints" / "latest").is_file()


@pytest.mark.slow
def test_the_paper_scale_reproduction_command_runs_on_the_cluster(two_node_cluster, tmp_path):
    """The paper-scale command of docs/reproducing.md (`keras-simplicial reproduce --preset paper
    --address ... --num-env-runners N`), at toy sizes: both agents train, its frames/s are
    measured in the cluster layout, and the report is written."""
    root = Path(__file__).resolve().parents[3]
    out = tmp_path / "paper"
    command = [
        str(Path(sys.executable).parent / "keras-simplicial"), "reproduce",
        "--preset", "paper", "--seeds", "1", "2", "--stop-timesteps", "2000",
        # Episodes of at most 20 steps: the 200 that a training win rate needs end within the run.
        "--env-config", json.dumps({"max_steps": 20}),
        "--address", two_node_cluster, "--num-env-runners", "2", "--num-envs", "4",
        "--eval-episodes", "4", "--probe-episodes", "4", "--throughput-seconds", "4",
        "--out", str(out), "--doc", str(out / "reproduction.md"),
        "--figures", str(out / "figures"),
    ]  # fmt: skip
    result = subprocess.run(
        command, capture_output=True, text=True, env=CLUSTER_ENV, timeout=1500, cwd=root
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.stdout.count(f"2 env runner(s) on 2 node(s): {HEAD_IP} x1, {WORKER_IP} x1") == 4
    throughput = json.loads((out / "throughput.json").read_text())
    assert throughput["ray"] == two_node_cluster and throughput["preset"] == "paper"
    assert throughput["layout"]["num_env_runners"] == 2
    text = (out / "reproduction.md").read_text()
    assert "| simplicial-seed2 |" in text and "## Which agent is ahead" in text
    # The paper preset's report has no small-scale caveat section.
    assert "What this does and does not say" not in text
