"""Writing openmemory's own files, and only those: under OPENMEMORY_HOME, atomically, private.

lessons.jsonl, written.json, vetoed.json, morning.md and render.lock live here; nothing
this module writes can land in Claude Code's folder (claudefiles.py writes there).
"""
import os
from pathlib import Path

from . import atomic, paths
from .errors import RenderError


def guard(path: Path) -> Path:
    """Refuse any write outside OPENMEMORY_HOME."""
    path = Path(path)
    real = atomic.resolved(path)
    home = Path(os.path.realpath(paths.home()))
    if real.parent == home or home in real.parents:
        return path
    raise RenderError(f"refusing to write {path}: openmemory writes its own files only inside {paths.home()}")


def write_own(path: Path, data: bytes) -> None:
    """Atomically (re)write one of openmemory's own files under OPENMEMORY_HOME, mode 0600."""
    guard(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = atomic.temp_beside(path, data, 0o600)
    try:
        os.replace(tmp, path)
    except BaseException:
        atomic.unlink(tmp)
        raise
