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
import json
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
    paths = sorted(
        (
            path.relative_to(root)
            for folder in CODE_PATHS
            for path in (root / folder).rglob("*.py")
            if "__pycache__" not in path.parts
        ),
        key=lambda path: path.parts,
    )
    return _digest((path.as_posix(), (root / path).read_bytes()) for path in paths)


def _digest(sources):
    """The SHA-256 of `(relative path, bytes)` pairs, in the order given (`source_sha256`)."""
    digest = hashlib.sha256()
    for path, content in sources:
        digest.update(path.encode() + b"\0")
        digest.update(content + b"\0")
    return digest.hexdigest()


def source_sha256_at(commit, root=None):
    """`source_sha256` of the sources that `commit` holds, read from git without a checkout;
    None when git, the repository or the commit is not there. A result whose `source_sha256`
    equals its `git_commit`'s was made by that commit's code, unedited."""
    root = Path(root) if root is not None else ROOT
    listing = _git(root, "ls-tree", "-r", "-z", "--name-only", commit, "--", *CODE_PATHS)
    if listing is None:
        return None
    paths = sorted(
        (
            path
            for path in listing.split("\0")
            if path.endswith(".py") and "__pycache__" not in path.split("/")
        ),
        key=lambda path: tuple(path.split("/")),
    )
    request = "".join(f"{commit}:{path}\n" for path in paths).encode()
    try:
        blobs = subprocess.run(
            ["git", "-C", str(root), "cat-file", "--batch"],
            input=request,
            capture_output=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    contents, at = [], 0
    for _ in paths:  # "<sha> blob <size>\n<bytes>\n" per path
        header_end = blobs.index(b"\n", at)
        size = int(blobs[at:header_end].split()[2])
        contents.append(blobs[header_end + 1 : header_end + 1 + size])
        at = header_end + 1 + size + 1
    return _digest(zip(paths, contents))


def code_check(records, root=None):
    """Checks the code each of `records` (`provenance()` dicts) names against this repository:
    one dict per distinct (git_commit, source_sha256), with "commit", "source_sha256", "runs"
    (how many records name it), "in_history" (the commit is an ancestor of HEAD), "matches" (the
    recorded hash is the commit's own: the commit's code made it, unedited; None where the
    record has no hash) and "date" (the commit's, ISO 8601; None outside the history), oldest
    first."""
    root = Path(root) if root is not None else ROOT
    counts = {}
    for record in records:
        key = (record.get("git_commit"), record.get("source_sha256"))
        counts[key] = counts.get(key, 0) + 1
    checks = []
    for (commit, digest), runs in counts.items():
        known = commit is not None and _git(root, "cat-file", "-e", f"{commit}^{{commit}}") == ""
        in_history = known and _git(root, "merge-base", "--is-ancestor", commit, "HEAD") == ""
        checks.append(
            {
                "commit": commit,
                "source_sha256": digest,
                "runs": runs,
                "in_history": bool(in_history),
                "matches": None
                if digest is None or not known
                else digest == source_sha256_at(commit, root),
                "date": _git(root, "show", "-s", "--format=%cI", commit) if known else None,
            }
        )
    return sorted(checks, key=lambda check: (check["date"] or "", check["commit"] or ""))


def code_records(folder):
    """The `provenance()` record of every result file under `folder`, in path order: each
    supervised run's run.json (one per process that trained it; a checkpoint's copy is skipped),
    each RL run's machines.json (one per start), each DAgger run's code.json (one per process that
    trained it), each `keras-simplicial errors` result (errors_*.json) and each entry of a
    diagnosis.json that has one."""
    folder, found = Path(folder), []

    def read(path):
        return json.loads(path.read_text(encoding="utf-8"))

    for path in sorted(folder.rglob("run.json")):
        if "checkpoints" not in path.parts and "checkpoint" not in path.parts:
            found += read(path).get("provenance") or []
    for name in ("machines.json", "code.json"):
        for path in sorted(folder.rglob(name)):
            found += [entry["code"] for entry in read(path)]
    found += [read(path)["code"] for path in sorted(folder.rglob("errors_*.json"))]
    for path in sorted(folder.rglob("diagnosis.json")):
        found += [
            entry["code"] for entry in read(path) if isinstance(entry, dict) and "code" in entry
        ]
    return found


def code_lines(records, root=None):
    """Markdown lines for a study's page: the commit range its results name, and whether each
    result's source hash is its commit's (`code_check`)."""
    checks = code_check(records, root)
    named = [check for check in checks if check["commit"] is not None]
    if not named:
        return ["No result names a commit."]
    total = sum(check["runs"] for check in checks)
    lines = [
        f"The {total} code records of the result files name {len(named)} commit(s), "
        f"{named[0]['commit'][:7]} ({named[0]['date'] or 'not in this history'}) to "
        f"{named[-1]['commit'][:7]} ({named[-1]['date'] or 'not in this history'}):",
        "",
    ]
    for check in checks:
        commit = (check["commit"] or "none")[:7]
        if check["commit"] is None:
            state = "no commit recorded"
        elif not check["in_history"]:
            state = "not in this history (a rebased branch)"
        elif check["matches"] is None:
            state = "in this history; no source hash recorded"
        elif check["matches"]:
            state = "in this history; the recorded source hash is the commit's (its code, unedited)"
        else:
            state = "in this history; the recorded source hash differs (uncommitted edits)"
        lines.append(f"- {commit}: {check['runs']} record(s), {state}.")
    return lines


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
