"""A bulk ingest into a new memory writes without waiting for the disk, and says so.

While a first ingest runs, SQLite's syncs were a twentieth of its time on this kind of
machine (its WAL written out at every checkpoint: a gigabyte of writes for 30,000 sessions,
against a 220 MB database). A memory that holds nothing yet holds nothing that the
transcripts cannot give again, so its first bulk ingest writes with `synchronous = OFF`
and syncs everything once at the end (migrations.bulk_writes). Until then a marker beside
the database names the boot and the process: should the machine stop before the end, the
database may be damaged, and the next openmemory to open it moves it aside (kept, never
deleted) and begins a new one, which the next ingest fills from the transcripts again.
"""
import logging
import os
import re
from pathlib import Path

from . import files
from .errors import RenderError

log = logging.getLogger(__name__)
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")   # Linux: a new one at every boot
_BOOT_SHAPE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def marker(db_path) -> Path:
    return Path(f"{db_path}-unsynced")


def begin(db_path) -> bool:
    """Mark the database as written unsynced by this process in this boot; False (nothing
    marked, so write synced) where a restart could not be told afterwards, or another
    process has it marked (two first ingests at once: the second writes synced)."""
    boot = _boot()
    if not boot or marker(db_path).exists():
        return False
    try:
        files.write_own(marker(db_path), f"{boot} {os.getpid()}\n".encode())
        _sync(Path(db_path).parent)     # the marker's name on the disk before the first unsynced write
    except (OSError, RenderError):
        return False
    return True


def end(db_path) -> None:
    """Everything written is on the disk: the database and its WAL synced, then the marker gone."""
    for path in (Path(db_path), Path(f"{db_path}-wal")):
        _sync(path)
    files.remove_own(marker(db_path))
    _sync(Path(db_path).parent)


def recover(db_path) -> None:
    """Before the database is opened: what a marker left by a bulk ingest that did not end
    means. Its process still runs, or no boot id can be read here: nothing. This boot, its
    process gone (killed): the system kept every write, so they are synced now and the
    marker removed. Another boot: the database is moved aside with its WAL (to
    `<name>.unsynced-<n>`) and a new one begins. What it does, it logs."""
    found = files.read(marker(db_path))
    if found is None:
        return
    boot, _, pid = found.decode("ascii", "replace").strip().partition(" ")
    now = _boot()
    if not (now and _BOOT_SHAPE.fullmatch(boot) and pid.isdigit()):
        return          # no boot id here (or not a marker of ours): nothing can be told, nothing is moved
    if boot == now:
        if not files.running(int(pid)):
            end(db_path)
            log.info("synced what a stopped ingest wrote to %s", db_path)
        return
    n = 1
    while any(Path(f"{db_path}.unsynced-{n}{s}").exists() for s in ("", "-wal", "-shm")):
        n += 1
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{db_path}{suffix}").exists():
            files.move_own(Path(f"{db_path}{suffix}"), Path(f"{db_path}.unsynced-{n}{suffix}"))
    files.remove_own(marker(db_path))
    log.warning("the machine stopped while %s was first filled: it may be damaged, so it is kept as %s.unsynced-%d "
                "and a new one begins; `openmemory ingest` reads the transcripts again", db_path, db_path, n)


def _boot() -> str:
    try:
        return BOOT_ID.read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return ""


def _sync(path: Path) -> None:
    """fsync a file or folder (opened to read: nothing is written); gone already is fine."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
