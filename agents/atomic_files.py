"""Files written so that a reader sees the old or the new content, never a mix.

    atomic_write_text("runs/a/checkpoints/latest", "iter_000120\n")
    atomic_write_bytes("runs/a/metrics.csv.gz", packed)
    atomic_write_json("runs/a/evaluation.json", report)
    with atomic_directory("runs/a/checkpoints/iter_000120") as staging:
        ...  # write the folder's files into `staging`

The content goes to a temporary name in the same directory, is flushed to the disk, and is renamed
over the old file (`os.replace` is atomic on POSIX): a crash at any moment leaves the old file or
the new one. Every file of a run, a report or a cache that a crash could leave half-written is
written here; nothing else in the package implements it.
"""

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path


def _current_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# tempfile creates files 0600 and directories 0700, private to their owner; what is renamed into
# place gets the permissions an ordinary open() or mkdir() would give, so that the people sharing
# a cluster's file system can read a run. Read once: os.umask can only be read by setting it, and
# threads write files.
_UMASK = _current_umask()
FILE_MODE = 0o666 & ~_UMASK
DIRECTORY_MODE = 0o777 & ~_UMASK


def atomic_write_text(path, text):
    """Writes `text` to `path` so that readers see the old or the new file, never a mix."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path, data):
    """Writes the bytes `data` to `path` so that readers see the old or the new file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(handle, FILE_MODE)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def atomic_write_json(path, value, *, indent=2, sort_keys=False, default=None):
    """Writes `value` as JSON (and a final newline) to `path` atomically."""
    text = json.dumps(value, indent=indent, sort_keys=sort_keys, default=default)
    atomic_write_text(path, text + "\n")


def atomic_copy_file(source, target):
    """Copies the file `source` over `target` atomically (a temporary copy renamed into place)."""
    target = Path(target)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        shutil.copyfile(source, temporary)
        os.chmod(temporary, FILE_MODE)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def atomic_directory(target, prefix=None):
    """Yields a new empty folder beside `target` to write a whole folder into; when the block
    ends without an error it replaces `target` (an earlier folder of that name is removed first:
    a reader between the two finds none, never a half-written one), otherwise it is removed.
    `prefix`: the temporary folder's name prefix (default `.<target name>.`)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=prefix or f".{target.name}.", dir=target.parent))
    try:
        staging.chmod(DIRECTORY_MODE)
        yield staging
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
