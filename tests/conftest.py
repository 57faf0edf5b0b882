"""The suite runs on pytest-xdist workers (`-n 2` in pyproject.toml's addopts; `-n 0` runs in this
one process). Each worker gets an equal share of the cores for the thread pools of TensorFlow and
of OpenMP (PyTorch, NumPy's BLAS): by default each would take every core, and two workers that do
so on 2 cores spend their time switching threads (measured on 2 cores: 40% longer, 19% more CPU
time for the same tests). Set here, before anything imports TensorFlow; the processes that tests
start (the JAX and PyTorch subprocesses, Ray's workers) inherit them. A value already in the
environment is kept."""

import os

WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))

if WORKERS > 1:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = str(max(1, (cores or 1) // WORKERS))
    for variable in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(variable, threads)

# XLA compiles every op of eager JAX, and every jitted function, for the shapes it meets; the
# suite's cases are tiny, so compiling takes most of a JAX test's time. XLA's lower optimisation
# level compiles faster and computes the same functions (measured on 2 cores: 25% less CPU time for
# the JAX tests, the same results). The JAX subprocesses inherit it; a value already set is kept.
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
