"""Runs a check script in a Python subprocess on another Keras backend, whatever the suite's own,
with `tests/layers` on its path (its `*_checks.py` helpers), and asserts that it printed its
marker."""

import os
import subprocess
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
PATH_LINE = f"import sys\nsys.path.insert(0, {TESTS!r})\n"


def run_on_backend(backend, script, marker, **environment):
    """Runs `script` with KERAS_BACKEND=`backend`, no GPU and `environment` on top of this
    process's variables; fails the test with the script's stderr unless it exits 0 and prints
    `marker`."""
    env = {**os.environ, **environment, "KERAS_BACKEND": backend, "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run(
        [sys.executable, "-c", PATH_LINE + script],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert marker in result.stdout, result.stdout[-2000:]
