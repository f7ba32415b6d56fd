"""Atomic file primitives shared by the two guarded writers (claudefiles, ownfiles).

Nothing here decides where a write may go: a temporary file beside its target, complete
and synced before the one rename that puts it in place. Call the writers, not these.
"""
import os
import tempfile
from pathlib import Path

from .errors import RenderError


def resolved(path: Path) -> Path:
    """Where a write to path would land (its folder's symlinks resolved); refuses a non-file name."""
    path = Path(path)
    if path.name in ("", ".", "..") or os.sep in path.name:
        raise RenderError(f"refusing to write {path}: not a file name")
    return Path(os.path.realpath(path.parent)) / path.name


def read(path: Path):
    """A file's bytes, or None when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def temp_beside(path: Path, data: bytes, mode: int) -> str:
    """A complete, synced temporary file in path's folder, to be renamed or linked into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".om-tmp", dir=str(path.parent))
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        unlink(tmp)
        raise
    return tmp


def unlink(path) -> None:
    """Remove a file that may already be gone."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
