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
    # The writer's pid in the name: a temporary file whose writer is gone (killed between
    # writing and renaming) is swept by the next render (`stale_temps`).
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=str(path.parent))
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


def replace(path: Path, data: bytes, mode: int) -> None:
    """Put data at path in one rename, through a synced temporary file beside it (none left behind)."""
    tmp = temp_beside(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        unlink(tmp)
        raise


TEMP_SUFFIX = ".om-tmp"


def stale_temps(folder: Path) -> list:
    """The temporary files in folder whose writing process no longer runs."""
    out = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
            continue
        parts = name[: -len(TEMP_SUFFIX)].rsplit(".", 2)
        pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
        if pid is None or not running(pid):
            out.append(Path(folder) / name)
    return out


def running(pid: int) -> bool:
    """Whether a process with this pid runs (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def unlink(path) -> None:
    """Remove a file that may already be gone."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
