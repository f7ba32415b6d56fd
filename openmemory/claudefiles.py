"""Writing into Claude Code's memory folders, and nowhere else in Claude Code's folder.

Only inside `<config dir>/projects/*/memory/` (also once symlinks resolve), atomically,
and never over content that changed since it was read: a file the person (or Claude
Code) changed meanwhile is left as it is.
"""
import os
from pathlib import Path

from . import atomic, paths
from .errors import RenderError


def guard(path: Path) -> Path:
    """Refuse any write outside `<config dir>/projects/*/memory/`."""
    path = Path(path)
    real = atomic.resolved(path)
    projects = Path(os.path.realpath(paths.projects_dir()))
    if real.parent.name == "memory" and real.parent.parent.parent == projects:
        return path
    raise RenderError(f"refusing to write {path}: openmemory writes in Claude Code's folder only inside "
                      f"{paths.projects_dir()}/*/memory/")


def make_folder(folder: Path) -> None:
    """Create a project's memory folder (private to the person)."""
    guard(folder / "MEMORY.md")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)


def replace_if_unchanged(path: Path, expected: bytes | None, data: bytes, before_replace=None) -> bool:
    """Put data at path only if path still holds expected (None: does not exist yet).

    Returns False, writing nothing, when someone else changed the file since it was read.
    The new content is complete in a temporary file beside it and moved in with one rename;
    a new file is linked in, which fails rather than replace a file that appeared meanwhile.
    """
    guard(path)
    try:
        mode = os.stat(path).st_mode & 0o777 if expected is not None else 0o600
    except FileNotFoundError:
        return False
    tmp = atomic.temp_beside(path, data, mode)
    try:
        if before_replace:
            before_replace(path)  # tests make the race happen here
        if expected is None:
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            except OSError:  # a file system without hard links: exclusive create instead
                return _create_exclusive(path, data, mode)
            return True
        if atomic.read(path) != expected:
            return False
        os.replace(tmp, path)
        tmp = None
        return True
    finally:
        if tmp:
            atomic.unlink(tmp)


def _create_exclusive(path: Path, data: bytes, mode: int) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return True


def remove_if_unchanged(path: Path, expected: bytes) -> bool:
    """Delete path only if it still holds exactly what openmemory wrote."""
    guard(path)
    if atomic.read(path) != expected:
        return False
    atomic.unlink(path)
    return True


def sweep_temps(folder: Path) -> list:
    """Remove temporary files a killed writer left in a memory folder; returns their names."""
    gone = []
    for tmp in atomic.stale_temps(folder):
        guard(tmp)
        atomic.unlink(tmp)
        gone.append(str(tmp))
    return gone
