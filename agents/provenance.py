"""Which code made a result: the package version, the git commit and a hash of the package's
source files, recorded in every result file a study writes (`provenance()`), so that a page can say
which code its numbers describe.

The commit alone does not survive a rebase (the rebased branch has other commits, and the old ones
leave the history); the source hash does: `source_sha256` is the SHA-256 of the package's Python
sources (the layers, the environments, the agents) as they were when the result was made, and a
study's report can recompute it at any commit (`source_sha256(root)` of a checkout) to find the
commits whose code it was.
"""

import hashlib
import subprocess
from pathlib import Path

# The repository root: keras_simplicial's source tree (agents/ maps to keras_simplicial.agents).
ROOT = Path(__file__).resolve().parents[1]
# The code that trains: a change here without a commit makes the commit an incomplete description.
CODE_PATHS = ("keras_simplicial", "envs", "agents")


def _git(root, *args):
    """stdout of `git args` in `root`, or None when git or the repository is not there."""
    try:
        result = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def source_sha256(root=None):
    """The SHA-256 of every ``*.py`` file under `CODE_PATHS` of `root` (the repository holding
    this package by default): each file's path relative to `root`, a NUL, its bytes, a NUL, in
    the order of the sorted paths. Caches (``__pycache__``) are not sources."""
    root = Path(root) if root is not None else ROOT
    digest = hashlib.sha256()
    paths = sorted(
        path
        for folder in CODE_PATHS
        for path in (root / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    )
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def provenance(root=None):
    """{"package_version", "git_commit", "code_modified", "source_sha256"} of the code running
    now.

    `git_commit` is the commit checked out in `root` (the repository holding this package by
    default), None outside a git checkout (an installed wheel); `code_modified` is True when
    keras_simplicial/, envs/ or agents/ differ from that commit (uncommitted edits), None without
    git; `source_sha256` is `source_sha256(root)`, None where the sources are not a checkout's.
    """
    import keras_simplicial

    root = Path(root) if root is not None else ROOT
    # An installed package's root is site-packages, which may sit in some other repository.
    commit = _git(root, "rev-parse", "HEAD") if (root / ".git").exists() else None
    status = None
    if commit is not None:
        changes = _git(root, "status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS)
        status = None if changes is None else bool(changes)
    return {
        "package_version": keras_simplicial.__version__,
        "git_commit": commit,
        "code_modified": status,
        "source_sha256": source_sha256(root) if (root / "agents").is_dir() else None,
    }
