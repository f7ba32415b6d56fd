"""The errors a person can act on: one line each, said by the CLI as `openmemory: error: ...`."""
import sqlite3


class OpenMemoryError(Exception):
    """An error the person can act on: one line, said by the CLI as `openmemory: error: ...`."""


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
    return StoreError(f"the memory database at {path} could not be used: {error}; "
                      f"if another openmemory is running, try again when it ends")


# --------------------------------------------------------------------------------------
