"""Writing the person's configuration that `openmemory setup` manages, and nothing else:
Claude Code's settings.json, and the nightly job's systemd user units or launchd agent.

Each only at its one known path (settings.json through its symlink, so a file kept in a
dotfiles repository stays a link), atomically (a synced temporary file beside it, then one
rename), and never over content that changed since it was read. settings.json is copied to
OPENMEMORY_HOME/backups/ before it is changed.
"""
import os
from datetime import datetime, timezone
from pathlib import Path

from . import atomic, ownfiles, paths
from .errors import OpenMemoryError

SYSTEMD_UNITS = ("openmemory-sleep.service", "openmemory-sleep.timer")
LAUNCHD_AGENT = "com.openmemory.sleep.plist"


class ConfigError(OpenMemoryError):
    """A configuration file cannot be written safely."""


def guard(path: Path) -> Path:
    """Refuse any write but settings.json, the two systemd units and the launchd agent."""
    atomic.resolved(path)  # refuses a name that is no file name
    real = Path(os.path.realpath(path))  # through a symlinked file too: the write lands there
    places = [paths.settings_path(), paths.launch_agents_dir() / LAUNCHD_AGENT]
    places += [paths.systemd_user_dir() / name for name in SYSTEMD_UNITS]
    allowed = {Path(os.path.realpath(p)) for p in places}
    if real in allowed:
        return real
    raise ConfigError(f"refusing to write {path}: setup writes only {paths.settings_path()}, the "
                      f"openmemory-sleep units and the {LAUNCHD_AGENT} agent")


def replace_if_unchanged(path: Path, expected: bytes | None, data: bytes) -> Path | None:
    """Put data at path (through a symlink) if it still holds expected (None: absent); returns
    the backup made of what was there. Raises ConfigError, writing nothing, if it changed."""
    target = guard(path)
    current = atomic.read(target)
    if current != expected:
        raise ConfigError(f"{path} changed while openmemory was updating it; run this again")
    backup = _backup(target, current) if current is not None else None
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = os.stat(target).st_mode & 0o777 if current is not None else 0o600
    tmp = atomic.temp_beside(target, data, mode)
    try:
        if atomic.read(target) != expected:  # the last look before the rename
            raise ConfigError(f"{path} changed while openmemory was updating it; run this again")
        os.replace(tmp, target)
        tmp = None
    finally:
        if tmp:
            atomic.unlink(tmp)
    return backup


def write(path: Path, data: bytes) -> None:
    """(Re)write a unit or agent file of openmemory's own nightly job."""
    target = guard(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic.replace(target, data, 0o644)


def remove_if_unchanged(path: Path, expected: bytes) -> bool:
    """Delete path only if it still holds exactly expected (what setup wrote); True if deleted."""
    target = guard(path)
    if atomic.read(target) != expected:
        return False
    if target == Path(os.path.realpath(paths.settings_path())):
        _backup(target, expected)
    atomic.unlink(target)
    return True


def _backup(target: Path, content: bytes) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    backup = paths.backups_dir() / f"{target.name}.{stamp}"
    ownfiles.write_own(backup, content)
    return backup
