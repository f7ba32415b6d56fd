"""Writing openmemory's own files, and only those: under OPENMEMORY_HOME, atomically, private.

lessons.jsonl, written.json, vetoed.json, morning.md, the lock file render.lock and the
marker of a first ingest written unsynced (unsynced.py) live here; nothing this module writes
can land in Claude Code's folder (claudefiles.py writes there).
"""
import fcntl
import os
import time
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
    atomic.replace(path, data, 0o600)


def remove_own(path: Path) -> None:
    """Remove one of openmemory's own files (setup's record, when undone); gone already is fine."""
    guard(path)
    atomic.unlink(path)


def move_own(path: Path, to: Path) -> None:
    """Give one of openmemory's own files another name under OPENMEMORY_HOME, never over a file."""
    guard(path)
    guard(to)
    if to.exists():
        raise FileExistsError(f"{to} exists")
    os.rename(path, to)


def sweep_temps() -> list:
    """Remove temporary files a killed writer left in openmemory's folder; returns their names."""
    gone = []
    for tmp in atomic.stale_temps(paths.home()):
        guard(tmp)
        atomic.unlink(tmp)
        gone.append(str(tmp))
    return gone


class Lock:
    """An exclusive lock on a file of openmemory's own folder, waited for up to wait_seconds
    (one render at a time: cron's sleep and a manual render may overlap)."""

    def __init__(self, name: str, wait_seconds: float, holder: str):
        self.path, self.wait, self.holder = paths.home() / name, wait_seconds, holder

    def __enter__(self):
        path = guard(self.path)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise RenderError(f"another {self.holder} has held {path} for {self.wait} s; "
                                      f"try again when it has finished")
                time.sleep(0.05)

    def __exit__(self, *exc):
        os.close(self.fd)
