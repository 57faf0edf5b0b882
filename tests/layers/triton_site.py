"""Where the Triton kernels' tests find Triton: on this Python's path, or in the separate folder
`make` installs it into (`.venv/triton-site`, `TRITON_SITE` in the Makefile) and only their
PyTorch subprocesses see. Triton stays off the suite's own path because a process that imports
TensorFlow and then Triton aborts (their LLVM builds clash; docs/development.md)."""

import importlib.util
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The folder `make install` puts Triton in (KERAS_SIMPLICIAL_TRITON_SITE overrides it).
TRITON_SITE = Path(os.environ.get("KERAS_SIMPLICIAL_TRITON_SITE", ROOT / ".venv" / "triton-site"))


def _triton_folders():
    spec = importlib.util.find_spec("triton")
    if spec is not None:
        return list(spec.submodule_search_locations or [])
    return [str(TRITON_SITE / "triton")] if (TRITON_SITE / "triton").is_dir() else []


def interpreter_missing():
    """Why Triton's interpreter cannot run here, or "" if it can."""
    if importlib.util.find_spec("torch") is None:
        return "PyTorch is not installed (the [backends] extra brings it)"
    folders = _triton_folders()
    if not folders:
        return (
            f"Triton is not installed (the [triton] extra, or `make install` into {TRITON_SITE}, "
            "brings it on Linux x86-64)"
        )
    if not any(os.path.exists(os.path.join(f, "runtime", "interpreter.py")) for f in folders):
        return "Triton's interpreter (triton/runtime/interpreter.py) is missing"
    return ""


def with_triton(env):
    """`env` (a dict of environment variables) for a PyTorch subprocess that imports Triton:
    `TRITON_SITE` first on its PYTHONPATH when Triton is not on this Python's path."""
    env = dict(env)
    if importlib.util.find_spec("triton") is None and TRITON_SITE.is_dir():
        env["PYTHONPATH"] = os.pathsep.join(
            [str(TRITON_SITE), *filter(None, [env.get("PYTHONPATH")])]
        )
    return env
