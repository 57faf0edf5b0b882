"""Which layers trained a result: the package version and the git commit, recorded in every result
file a study writes (`provenance()`), so that a page can say which code its numbers describe."""

import subprocess
from pathlib import Path

# The repository root: keras_simplicial's source tree (agents/ maps to keras_simplicial.agents).
ROOT = Path(__file__).resolve().parents[1]
# The code that trains: a change here without a commit makes the commit an incomplete description.
CODE_PATHS = ("keras_simplicial", "agents")


def _git(root, *args):
    """stdout of `git args` in `root`, or None when git or the repository is not there."""
    try:
        result = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def provenance(root=None):
    """{"package_version", "git_commit", "code_modified"} of the code running now.

    `git_commit` is the commit checked out in `root` (the repository holding this package by
    default), None outside a git checkout (an installed wheel); `code_modified` is True when
    keras_simplicial/ or agents/ differ from that commit (uncommitted edits), None without git.
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
    }
