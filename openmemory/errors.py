"""The errors a person can act on: one line each, said by the CLI as `openmemory: error: ...`."""
import sqlite3


class OpenMemoryError(Exception):
    """An error the person can act on: one line, said by the CLI as `openmemory: error: ...`."""


class UsageError(OpenMemoryError):
    """What was typed is wrong in itself: a value on the command line that names nothing certain
    (an id not in memory, a session prefix matching none or several, a path not there) or is not
    of its form, arguments missing or that do not go together; nothing was done. Said as
    `openmemory VERB: error: ...`, exit 2, as argparse says a bad value."""


class StoreError(OpenMemoryError):
    """The database cannot be opened or used."""


class DamagedDatabase(StoreError):
    """The database file is damaged: the message names it and says how to recover."""


class RenderError(OpenMemoryError):
    """Render cannot proceed without risking the person's files."""


def damaged(path, detail) -> DamagedDatabase:
    """The one advice for a damaged database, wherever the damage is met (CLI, hook, MCP, status)."""
    return DamagedDatabase(
        f"the memory database at {path} is damaged ({detail}); move it aside (mv {path} {path}.damaged), "
        f"then `openmemory ingest` rebuilds the episodes from the transcripts; notes stored with `remember` "
        f"and lesson history come back only from a backup (OPERATIONS.md)")


def is_damage(error: BaseException) -> bool:
    """Whether a SQLite error says the file is damaged, not busy, full, read-only or misused."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return True
    if "vtable constructor failed" in str(error):
        return True  # the text index's own tables are missing (FTS5 cannot open it)
    # Python reports SQLITE_CORRUPT and SQLITE_NOTADB as the bare DatabaseError class
    return type(error) is sqlite3.DatabaseError


def is_busy(error: BaseException) -> bool:
    """Whether a SQLite error says another connection holds the lock (it passes; try again)."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    name = getattr(error, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(error)


def explain(error: sqlite3.Error, path) -> StoreError:
    """A SQLite error met after opening the database at path, as one line the person can act on."""
    if is_damage(error):
        return damaged(path, error)
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_FULL") or "disk is full" in str(error):
        return StoreError(f"the memory database at {path} could not be written: the disk holding it is full "
                          f"({error}); {DISK_FULL_FIX}")
    if name.startswith("SQLITE_READONLY") or "readonly database" in str(error):
        return StoreError(f"the memory database at {path} could not be written: it or its folder is read-only "
                          f"({error}); {read_only_fix(path)}")
    if is_busy(error):
        return StoreError(f"the memory database at {path} stayed locked ({error}): another openmemory is "
                          f"writing (a sleep or an ingest); try again when it ends")
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in str(error):
        return StoreError(f"the memory database at {path} could not be read or written: the disk failed "
                          f"({error}); check the disk (is it full, removed, or failing?) and run the command again")
    return StoreError(f"the memory database at {path} could not be used: {error}; "
                      f"if another openmemory is running, try again when it ends")


DISK_FULL_FIX = "free some space on that disk and run the command again; what was stored before is kept"


def read_only_fix(path, how: str = "") -> str:
    """What to do about a folder openmemory may not write: how is "fs" (a read-only disk),
    "permission", or "" (either)."""
    import os
    folder = _folder(path)
    remount = "remount its disk read-write"
    chmod = f"make it yours to write (chmod u+rwx {folder})"
    if os.path.isfile(path) and not os.access(path, os.W_OK):   # the file's own mode (chmod 0444), not its folder's
        chmod = f"make it yours to write (chmod u+w {_quoted(str(path))})"
    owner = _someone_elses(path) if how != "fs" else None
    if owner:   # chmod cannot help: only its owner (or root) may change it
        chmod = f"it belongs to {owner} (as after a `sudo openmemory ...`): make it yours again " \
                f"(sudo chown -R {_me()} {_quoted(owner_path(path))})"
    do = remount if how == "fs" else chmod if how == "permission" else f"{chmod}, or {remount}"
    return f"{do}, or set OPENMEMORY_HOME to a writable folder" if _in_openmemorys_folder(path) else do


def owner_path(path) -> str:
    """The file or folder itself when it is there and someone else's, else its folder."""
    import os
    path = str(path)
    return path if os.path.lexists(path) and _owner(path) not in (None, os.geteuid()) else _folder(path)


def _owner(path):
    import os
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def _someone_elses(path) -> str | None:
    """The name of the user who owns path (or, when it is not there, its folder), when that is not
    the one running: a file left by `sudo`, which no chmod of the person's can open again."""
    import os
    for where in (str(path), _folder(path)):
        uid = _owner(where)
        if uid is None:
            continue
        if uid == os.geteuid():
            return None
        try:
            import pwd
            return pwd.getpwuid(uid).pw_name
        except (ImportError, KeyError):
            return f"user {uid}"
    return None


def _me() -> str:
    import getpass
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "$USER"


def _quoted(path: str) -> str:
    import shlex
    return shlex.quote(path)


def _in_openmemorys_folder(path) -> bool:
    """Whether path is openmemory's folder, in it or on the way to it: OPENMEMORY_HOME moves only
    that, not Claude Code's folder (settings.json, a memory folder) nor a transcript."""
    import os
    from pathlib import Path
    value = os.environ.get("OPENMEMORY_HOME")     # as paths.home(), which imports this module
    home = Path(value).expanduser() if value else Path.home() / ".openmemory"
    if not home.is_absolute():
        return True                                 # refused where it is read: that error says so
    home, where = home.absolute(), Path(path).absolute()
    return where == home or home in where.parents or where in home.parents


def _folder(path) -> str:
    import os.path
    path = str(path)
    return path if os.path.isdir(path) else os.path.dirname(path) or "."


def os_fault(error: OSError, doing: str = "") -> OpenMemoryError:
    """An OSError met on a file (a disk full, a read-only folder, no permission) as one line
    saying what it is and what to do, never a raw `OSError ...`."""
    import errno
    where = error.filename if error.filename is not None else "a file"
    what = f"could not {doing} {where}" if doing else f"could not use {where}"
    reason = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return OpenMemoryError(f"{what}: the disk is full ({reason}); {DISK_FULL_FIX}")
    if error.errno == errno.EROFS:
        return OpenMemoryError(f"{what}: it is on a read-only disk; {read_only_fix(where, 'fs')}")
    if error.errno in (errno.EACCES, errno.EPERM):
        return OpenMemoryError(f"{what}: permission denied; {read_only_fix(where, 'permission')}")
    if error.errno == errno.EFBIG:
        return OpenMemoryError(f"{what}: the file is larger than this process may write ({reason}; "
                               f"`ulimit -f`); raise the limit and run the command again")
    return OpenMemoryError(f"{what}: {reason}")


# --------------------------------------------------------------------------------------
