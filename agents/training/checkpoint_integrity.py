"""Checkpoints that can be checked: a manifest of every file's size and SHA-256, and its check.

    write_manifest(staging)        # last, before the checkpoint is renamed into place
    verify_checkpoint(checkpoint)  # raises DamagedCheckpointError naming the damaged file

A run lives for tens of hours across many sittings and is resumed from checkpoints that were
committed, copied and checked out again. RLlib reads whatever bytes it finds (a damaged pickle
ends in `UnpicklingError` deep inside `Algorithm.restore`), so each checkpoint carries
`manifest.json`: written after every other file, inside the staging directory that is renamed
into place (`RunDirectory.save_checkpoint`), so a checkpoint that has a name has its manifest.

Checkpoints written before the manifest existed are checked by their structure instead: each
file RLlib reads must be there and decode (JSON object, unpickled dict).
"""

import hashlib
import json
import pickle
from pathlib import Path

from keras_simplicial.agents.atomic_files import atomic_write_json

MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
# What RLlib reads to restore an algorithm and its policy (RLlib 2.60, old API stack).
POLICY_STATE = "policies/default_policy/policy_state.pkl"
LEGACY_FILES = (
    "rllib_checkpoint.json",
    "algorithm_state.pkl",
    "policies/default_policy/rllib_checkpoint.json",
    POLICY_STATE,
)


class DamagedCheckpointError(ValueError):
    """A checkpoint whose files do not match its manifest (or, without one, do not decode).

    Attributes:
        checkpoint: the checkpoint directory.
        file: the damaged file, relative to the checkpoint.
        reason: what is wrong with it.
    """

    def __init__(self, checkpoint, file, reason):
        self.checkpoint, self.file, self.reason = Path(checkpoint), file, reason
        super().__init__(f"checkpoint {self.checkpoint} is damaged: {file} {reason}")


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files(checkpoint):
    """Every file of `checkpoint` but the manifest, as sorted relative POSIX paths."""
    checkpoint = Path(checkpoint)
    return sorted(
        path.relative_to(checkpoint).as_posix()
        for path in checkpoint.rglob("*")
        if path.is_file() and path.name != MANIFEST
    )


def write_manifest(checkpoint):
    """Writes `checkpoint/manifest.json`: the size and SHA-256 of each of its other files."""
    checkpoint = Path(checkpoint)
    files = {
        name: {"size": (checkpoint / name).stat().st_size, "sha256": _sha256(checkpoint / name)}
        for name in _files(checkpoint)
    }
    manifest = {"format": MANIFEST_FORMAT, "files": files}
    atomic_write_json(checkpoint / MANIFEST, manifest, indent=1, sort_keys=True)


def read_manifest(checkpoint):
    """The `files` entry of a checkpoint's manifest, or None for a checkpoint without one."""
    path = Path(checkpoint) / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DamagedCheckpointError(checkpoint, MANIFEST, f"is not valid JSON ({error})") from None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not all(
        isinstance(entry, dict) and {"size", "sha256"} <= set(entry) for entry in files.values()
    ):
        raise DamagedCheckpointError(
            checkpoint, MANIFEST, 'does not hold {"files": {name: {"size", "sha256"}}}'
        )
    return files


def verify_checkpoint(checkpoint):
    """Raises `DamagedCheckpointError` unless every file of `checkpoint` is as it was written.

    With a manifest: each listed file exists with its size and SHA-256. Without one (written
    before manifests existed): each file RLlib reads exists and decodes.
    """
    checkpoint = Path(checkpoint)
    if not checkpoint.is_dir():
        raise FileNotFoundError(f"No checkpoint at {checkpoint}.")
    files = read_manifest(checkpoint)
    if files is None:
        _verify_structure(checkpoint)
        return
    for name, entry in sorted(files.items()):
        path = checkpoint / name
        if not path.is_file():
            raise DamagedCheckpointError(checkpoint, name, "is missing")
        size = path.stat().st_size
        if size != entry["size"]:
            raise DamagedCheckpointError(
                checkpoint, name, f"has {size:,} bytes, the manifest says {entry['size']:,}"
            )
        if _sha256(path) != entry["sha256"]:
            raise DamagedCheckpointError(
                checkpoint, name, "does not match its SHA-256 in the manifest"
            )


def _verify_structure(checkpoint):
    for name in LEGACY_FILES:
        path = checkpoint / name
        if not path.is_file():
            raise DamagedCheckpointError(checkpoint, name, "is missing")
        if path.stat().st_size == 0:
            raise DamagedCheckpointError(checkpoint, name, "is empty")
        try:
            if name.endswith(".json"):
                content = json.loads(path.read_text(encoding="utf-8"))
            else:
                with open(path, "rb") as stream:
                    content = pickle.load(stream)
        except Exception as error:  # whatever random bytes make the decoder raise
            raise DamagedCheckpointError(
                checkpoint, name, f"does not decode ({type(error).__name__}: {error})"
            ) from None
        if not isinstance(content, dict) or (name == POLICY_STATE and "weights" not in content):
            raise DamagedCheckpointError(
                checkpoint, name, f"holds a {type(content).__name__}, not RLlib's state"
            )
