"""The one SQLite file: schema, migrations, and every read and write of memory.

Only this module speaks SQL. Everything written passes through `redact` first, and
every episode and lesson carries its hashed vector (embed.encode, 256 bytes).
"""
import json
import os
import sqlite3
import zlib
from datetime import datetime, timezone
from pathlib import Path

from . import embed, paths
from .redact import redact, redact_obj

BUSY_TIMEOUT_MS = 5000      # a concurrent ingest (hook + cron) waits instead of failing


def busy_timeout_ms() -> int:
    """How long a write waits for another process's transaction: $OPENMEMORY_BUSY_TIMEOUT_MS or 5 s."""
    try:
        return max(0, int(os.environ.get("OPENMEMORY_BUSY_TIMEOUT_MS", BUSY_TIMEOUT_MS)))
    except ValueError:
        return BUSY_TIMEOUT_MS
EPISODE_KINDS = ("session", "error", "correction", "note")


class OpenMemoryError(Exception):
    """An error the person can act on: one line, said by the CLI as `openmemory: error: ...`."""


class StoreError(OpenMemoryError):
    """The database cannot be opened or used."""


# --------------------------------------------------------------------------------------
# Time: ISO 8601 UTC with microseconds everywhere, so text order is time order.

def iso(value=None) -> str:
    """Canonical timestamp text ('2026-02-11T21:41:48.049000Z') of a datetime or ISO string; now if None."""
    if value is None:
        value = datetime.now(timezone.utc)
    elif isinstance(value, str):
        value = parse_time(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 timestamp (a trailing Z, or none, means UTC); raises ValueError."""
    text = text.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


# --------------------------------------------------------------------------------------
# Migrations: an append-only list of named steps. Each runs in its own transaction with
# the new PRAGMA user_version; a database newer than this code is refused.

def m001_create_schema(db: sqlite3.Connection) -> None:
    db.execute("""
        CREATE TABLE episodes (
            id           INTEGER PRIMARY KEY,
            key          TEXT NOT NULL UNIQUE,      -- identity of the event: re-ingest updates it
            session_id   TEXT,                      -- sessions.id; NULL for notes
            cwd          TEXT,
            kind         TEXT NOT NULL CHECK (kind IN ('session', 'error', 'correction', 'note')),
            title        TEXT NOT NULL,
            gist         TEXT NOT NULL,
            detail       TEXT NOT NULL DEFAULT '',
            facts        TEXT NOT NULL DEFAULT '{}', -- JSON: tool, command, error lines, words said
            at           TEXT NOT NULL,             -- when it happened
            created      TEXT NOT NULL,             -- when openmemory stored it
            strength     REAL NOT NULL DEFAULT 1.0,
            recalls      INTEGER NOT NULL DEFAULT 0,
            last_touched TEXT NOT NULL,
            archived     INTEGER NOT NULL DEFAULT 0,
            consolidated INTEGER,                   -- the lesson this surprise fed (sleep)
            embedding    BLOB NOT NULL
        )""")
    db.execute("CREATE INDEX episodes_session ON episodes (session_id)")
    db.execute("CREATE INDEX episodes_kind ON episodes (kind, archived)")
    db.execute("CREATE INDEX episodes_at ON episodes (at)")
    db.execute("""
        CREATE TABLE sessions (
            id        TEXT PRIMARY KEY,             -- Claude Code's session id
            path      TEXT NOT NULL UNIQUE,         -- the transcript file
            mtime_ns  INTEGER NOT NULL,
            size      INTEGER NOT NULL,
            ingested  TEXT NOT NULL,
            episodes  INTEGER NOT NULL DEFAULT 0,
            cwd       TEXT,
            title     TEXT,
            started   TEXT,
            ended     TEXT,
            version   TEXT,
            turns     INTEGER NOT NULL DEFAULT 0,
            skipped   INTEGER NOT NULL DEFAULT 0    -- malformed lines in the file
        )""")
    db.execute("""
        CREATE TABLE lessons (
            id        INTEGER PRIMARY KEY,
            text      TEXT NOT NULL,
            kind      TEXT NOT NULL CHECK (kind IN ('feedback', 'project')),
            cwd       TEXT,                         -- NULL: applies everywhere
            strength  REAL NOT NULL DEFAULT 1.0,
            seen      INTEGER NOT NULL DEFAULT 1,
            sources   TEXT NOT NULL DEFAULT '[]',   -- JSON list of episode ids
            created   TEXT NOT NULL,
            updated   TEXT NOT NULL,
            archived  INTEGER NOT NULL DEFAULT 0,
            vetoed    INTEGER NOT NULL DEFAULT 0,   -- the person deleted its file: never again
            embedding BLOB NOT NULL
        )""")
    db.execute("""
        CREATE TABLE predictions (
            id        INTEGER PRIMARY KEY,
            lesson_id INTEGER NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
            text      TEXT NOT NULL,
            made      TEXT NOT NULL,
            resolved  TEXT,
            outcome   TEXT CHECK (outcome IN ('confirmed', 'failed')),
            evidence  INTEGER,                      -- the episode that confirmed it
            embedding BLOB NOT NULL
        )""")
    db.execute("CREATE INDEX predictions_open ON predictions (lesson_id, resolved)")
    db.execute("CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def m002_decay_clock(db: sqlite3.Connection) -> None:
    # When sleep last brought `strength` up to date: decay multiplies by 2^(-days since
    # then / 45), so running it twice a night, or weekly instead of nightly, gives the same
    # strength (sleep.py). NULL: not decayed since the memory was made.
    db.execute("ALTER TABLE episodes ADD COLUMN decayed TEXT")
    db.execute("ALTER TABLE lessons ADD COLUMN decayed TEXT")


def m003_recall_index(db: sqlite3.Connection) -> None:
    """The full-text index recall searches: FTS5 over episodes and lessons, kept by triggers.

    Contentless (the text stays in episodes and lessons only); rowid is the episode id, or
    minus the lesson id. An episode's title is indexed only when it adds words: a note's
    title is the start of its text. Updates that change no text (touches, archiving,
    decay) leave the index alone; recall filters archived rows when it joins back.
    A SQLite built without FTS5 gets no index: recall then runs on the vectors alone.
    """
    if not fts5_available(db):
        return
    db.execute("CREATE VIRTUAL TABLE recall_index USING fts5(title, body, detail, content='', "
               "tokenize='porter unicode61 remove_diacritics 2')")
    title = "CASE WHEN instr({0}.gist, {0}.title) = 1 THEN '' ELSE {0}.title END"
    add_episode = ("INSERT INTO recall_index (rowid, title, body, detail) "
                   f"VALUES (NEW.id, {title.format('NEW')}, NEW.gist, NEW.detail);")
    drop_episode = ("INSERT INTO recall_index (recall_index, rowid, title, body, detail) "
                    f"VALUES ('delete', OLD.id, {title.format('OLD')}, OLD.gist, OLD.detail);")
    add_lesson = "INSERT INTO recall_index (rowid, title, body, detail) VALUES (-NEW.id, '', NEW.text, '');"
    drop_lesson = ("INSERT INTO recall_index (recall_index, rowid, title, body, detail) "
                   "VALUES ('delete', -OLD.id, '', OLD.text, '');")
    for sql in (
            f"CREATE TRIGGER recall_index_episode_insert AFTER INSERT ON episodes BEGIN {add_episode} END",
            f"CREATE TRIGGER recall_index_episode_delete AFTER DELETE ON episodes BEGIN {drop_episode} END",
            "CREATE TRIGGER recall_index_episode_update AFTER UPDATE OF title, gist, detail ON episodes "
            f"BEGIN {drop_episode} {add_episode} END",
            f"CREATE TRIGGER recall_index_lesson_insert AFTER INSERT ON lessons BEGIN {add_lesson} END",
            f"CREATE TRIGGER recall_index_lesson_delete AFTER DELETE ON lessons BEGIN {drop_lesson} END",
            f"CREATE TRIGGER recall_index_lesson_update AFTER UPDATE OF text ON lessons "
            f"BEGIN {drop_lesson} {add_lesson} END"):
        db.execute(sql)
    db.execute(f"INSERT INTO recall_index (rowid, title, body, detail) "
               f"SELECT id, {title.format('episodes')}, gist, detail FROM episodes")
    db.execute("INSERT INTO recall_index (rowid, title, body, detail) SELECT -id, '', text, '' FROM lessons")


def fts5_available(db: sqlite3.Connection) -> bool:
    """Whether this SQLite can make FTS5 tables (some builds leave the module out)."""
    try:
        db.execute("CREATE VIRTUAL TABLE temp.om_fts5_probe USING fts5(x)")
        db.execute("DROP TABLE temp.om_fts5_probe")
        return True
    except sqlite3.DatabaseError:
        return False


MIGRATIONS = [m001_create_schema, m002_decay_clock, m003_recall_index]


def migrate(db: sqlite3.Connection, path="") -> None:
    """Bring the schema up to date, one transaction per step."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise StoreError(f"the database at {path} has schema version {version}, newer than this "
                         f"openmemory knows ({len(MIGRATIONS)}); upgrade openmemory")
    for number, step in enumerate(MIGRATIONS[version:], start=version + 1):
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] >= number:
                db.execute("ROLLBACK")  # another process migrated while we waited
                continue
            step(db)
            db.execute(f"PRAGMA user_version = {number}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


# --------------------------------------------------------------------------------------

class Store:
    """An open memory database. Use as a context manager, or call close()."""

    def __init__(self, db: sqlite3.Connection, path: Path):
        self.db = db
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.db.close()

    def transaction(self):
        """A write transaction: `with store.transaction(): ...` commits, or rolls back on error."""
        return _Transaction(self.db)

    # -- state ---------------------------------------------------------------------

    def get_state(self, key: str, default=None):
        row = self.db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_state(self, key: str, value: str) -> None:
        self.db.execute("INSERT INTO state (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    # -- sessions and their episodes -------------------------------------------------

    def file_index(self) -> dict:
        """{path: (mtime_ns, size)} of every transcript already ingested, in one query."""
        return {row[0]: (row[1], row[2]) for row in
                self.db.execute("SELECT path, mtime_ns, size FROM sessions")}

    def file_state(self, path: str):
        """(mtime_ns, size) of a transcript as last ingested, or None."""
        row = self.db.execute("SELECT mtime_ns, size FROM sessions WHERE path = ?", (path,)).fetchone()
        return (row[0], row[1]) if row else None

    def session_id_for(self, session_id: str, path: str) -> str:
        """The id to store a transcript under: its own, unless another file already holds it."""
        row = self.db.execute("SELECT path FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None or row[0] == path or _same_file(row[0], path):
            return session_id  # one file reached by two paths (a symlink, another spelling) is one session
        mine = self.db.execute("SELECT id FROM sessions WHERE path = ?", (path,)).fetchone()
        if mine:
            return mine[0]
        return f"{session_id}@{hash_text(path):08x}"

    def replace_session(self, session: dict, episodes: list, now: str | None = None) -> dict:
        """Store one transcript's session row and episodes, replacing what it produced before.

        Episodes are matched by key: one still produced keeps its id, strength, recalls and
        consolidation; one no longer produced is removed; an event already stored by another
        transcript (a resumed session copies records) stays with the first. Returns counts.
        """
        now = now or iso()
        counts = {"added": {}, "updated": 0, "removed": 0}
        sid = session["id"]
        with self.transaction():
            existing = {row[0]: (row[1], row[2]) for row in self.db.execute(
                "SELECT key, id, session_id FROM episodes WHERE key IN (%s)" % ",".join("?" * len(episodes)),
                [e["key"] for e in episodes])} if episodes else {}
            keep = set()
            for ep in episodes:
                ep = _clean_episode(ep)
                found = existing.get(ep["key"])
                if found and found[1] != sid:
                    continue  # first transcript to record an event keeps it
                vec = embed.encode(embed.vector(ep["title"] + "\n" + ep["gist"]))
                if found:
                    self.db.execute(
                        "UPDATE episodes SET cwd = ?, kind = ?, title = ?, gist = ?, detail = ?, facts = ?, "
                        "at = ?, embedding = ? WHERE id = ? AND (title, gist, detail, facts, at, "
                        "ifnull(cwd, '')) IS NOT (?, ?, ?, ?, ?, ?)",
                        (ep["cwd"], ep["kind"], ep["title"], ep["gist"], ep["detail"], ep["facts"], ep["at"],
                         vec, found[0], ep["title"], ep["gist"], ep["detail"], ep["facts"], ep["at"],
                         ep["cwd"] or ""))
                    counts["updated"] += self.db.execute("SELECT changes()").fetchone()[0]
                else:
                    self.db.execute(
                        "INSERT INTO episodes (key, session_id, cwd, kind, title, gist, detail, facts, at, "
                        "created, last_touched, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (ep["key"], sid, ep["cwd"], ep["kind"], ep["title"], ep["gist"], ep["detail"],
                         ep["facts"], ep["at"], now, now, vec))
                    counts["added"][ep["kind"]] = counts["added"].get(ep["kind"], 0) + 1
                keep.add(ep["key"])
            stale = [row[0] for row in self.db.execute(
                "SELECT id, key FROM episodes WHERE session_id = ?", (sid,)) if row[1] not in keep]
            for eid in stale:
                self.db.execute("DELETE FROM episodes WHERE id = ?", (eid,))
            counts["removed"] = len(stale)
            stored = self.db.execute("SELECT count(*) FROM episodes WHERE session_id = ?", (sid,)).fetchone()[0]
            self.db.execute(
                "INSERT INTO sessions (id, path, mtime_ns, size, ingested, episodes, cwd, title, started, ended, "
                "version, turns, skipped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET path = excluded.path, mtime_ns = excluded.mtime_ns, "
                "size = excluded.size, ingested = excluded.ingested, episodes = excluded.episodes, "
                "cwd = excluded.cwd, title = excluded.title, started = excluded.started, "
                "ended = excluded.ended, version = excluded.version, turns = excluded.turns, "
                "skipped = excluded.skipped",
                (sid, session["path"], session["mtime_ns"], session["size"], now, stored, session.get("cwd"),
                 redact(session.get("title") or ""), session.get("started"), session.get("ended"),
                 session.get("version"), session.get("turns", 0), session.get("skipped", 0)))
        return counts

    def add_note(self, text: str, title: str = "", cwd: str | None = None, now: str | None = None) -> int:
        """Store a note episode at once (the MCP `remember` tool); returns its id."""
        now = now or iso()
        text = " ".join(text.split()) if "\n" not in text else text.strip()
        if not text:
            raise OpenMemoryError("a note needs some text")
        title = clip(title, 100) if title.strip() else clip(text.splitlines()[0], 100)
        ep = _clean_episode({"key": "", "kind": "note", "title": title, "gist": text, "detail": "",
                             "facts": {}, "at": now, "cwd": cwd})
        with self.transaction():
            cur = self.db.execute(
                "INSERT INTO episodes (key, session_id, cwd, kind, title, gist, detail, facts, at, created, "
                "last_touched, embedding) VALUES (?, NULL, ?, 'note', ?, ?, '', '{}', ?, ?, ?, ?)",
                (f"note:{now}:{hash_text(text):08x}", ep["cwd"], ep["title"], ep["gist"], now, now, now,
                 embed.encode(embed.vector(ep["title"] + "\n" + ep["gist"]))))
        return cur.lastrowid

    # -- reading ---------------------------------------------------------------------

    def episode(self, episode_id: int) -> dict | None:
        row = self.db.execute("SELECT * FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return _row(row) if row else None

    def episodes(self, kind: str | None = None, session_id: str | None = None) -> list:
        """Episodes in time order, optionally of one kind or one session."""
        sql, args = "SELECT * FROM episodes WHERE 1", []
        if kind:
            sql += " AND kind = ?"
            args.append(kind)
        if session_id:
            sql += " AND session_id = ?"
            args.append(session_id)
        return [_row(r) for r in self.db.execute(sql + " ORDER BY at, id", args)]

    def counts(self) -> dict:
        """Everything `openmemory status` reports."""
        kinds = dict(self.db.execute(
            "SELECT kind, count(*) FROM episodes GROUP BY kind").fetchall())
        episodes = {k: kinds.get(k, 0) for k in EPISODE_KINDS}
        episodes["total"] = sum(episodes.values())
        episodes["archived"] = self.db.execute("SELECT count(*) FROM episodes WHERE archived").fetchone()[0]
        sessions, skipped = self.db.execute("SELECT count(*), ifnull(sum(skipped), 0) FROM sessions").fetchone()
        lessons = self.db.execute(
            "SELECT count(*), ifnull(sum(NOT archived AND NOT vetoed), 0) FROM lessons").fetchone()
        predictions = self.db.execute(
            "SELECT count(*), ifnull(sum(resolved IS NULL), 0), ifnull(sum(outcome = 'confirmed'), 0), "
            "ifnull(sum(outcome = 'failed'), 0) FROM predictions").fetchone()
        return {
            "episodes": episodes,
            "sessions": sessions,
            "lessons": lessons[0],
            "lessons_live": lessons[1],
            "predictions": predictions[0],
            "predictions_open": predictions[1],
            "predictions_confirmed": predictions[2],
            "predictions_failed": predictions[3],
            "lines_skipped": skipped,
            "last_ingest": self.get_state("last_ingest"),
            "last_sleep": self.get_state("last_sleep"),
            "db_bytes": _db_bytes(self.path),
            "db": str(self.path),
        }

    def quick_check(self) -> str | None:
        """SQLite's quick check of the whole file: None when it passes, else what it found."""
        try:
            rows = [row[0] for row in self.db.execute("PRAGMA quick_check")]
        except sqlite3.DatabaseError as e:
            return str(e)
        return None if rows == ["ok"] else "; ".join(" ".join(r.split()) for r in rows[:3])

    def has_fts5(self) -> bool:
        """Whether this SQLite has FTS5, which recall's full-text index needs."""
        return fts5_available(self.db)

    # -- render: lessons as written into Claude Code's memory ---------------------------

    def all_lessons(self) -> list:
        """Every lesson (archived and vetoed included), by id; `sources` decoded to a list of ids."""
        out = []
        for row in self.db.execute("SELECT * FROM lessons ORDER BY id"):
            lesson = dict(row)
            lesson.pop("embedding", None)
            try:
                sources = json.loads(lesson["sources"] or "[]")
            except ValueError:
                sources = []
            lesson["sources"] = [int(s) for s in sources if isinstance(s, int) or str(s).isdigit()]
            out.append(lesson)
        return out

    def episodes_by_id(self, ids) -> dict:
        """{id: episode} for the ids that still exist."""
        ids = sorted(set(ids))
        found = {}
        for start in range(0, len(ids), 500):  # under SQLite's bound-parameter limit
            chunk = ids[start:start + 500]
            for row in self.db.execute(
                    "SELECT * FROM episodes WHERE id IN (%s)" % ",".join("?" * len(chunk)), chunk):
                found[row["id"]] = _row(row)
        return found

    def predictions_by_lesson(self) -> dict:
        """{lesson id: [prediction, ...]} in the order they were made."""
        out = {}
        for row in self.db.execute("SELECT id, lesson_id, text, made, resolved, outcome, evidence "
                                   "FROM predictions ORDER BY made, id"):
            out.setdefault(row["lesson_id"], []).append(dict(row))
        return out

    def session_cwds(self) -> list:
        """Every distinct working folder a stored session ran in."""
        return [row[0] for row in self.db.execute(
            "SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL AND cwd != '' ORDER BY cwd")]

    def veto_lessons(self, ids) -> None:
        """Mark lessons vetoed by the person: never rendered again."""
        with self.transaction():
            self.db.executemany("UPDATE lessons SET vetoed = 1 WHERE id = ?", [(i,) for i in ids])


class _Transaction:
    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb):
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


def connect(path=None) -> Store:
    """Open (creating if needed) the memory database: folder 0700, file 0600, WAL, migrated."""
    path = Path(path) if path else paths.db_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.parent == paths.home():
            os.chmod(path.parent, 0o700)
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(path, 0o600)
        timeout_ms = busy_timeout_ms()
        db = sqlite3.connect(str(path), timeout=timeout_ms / 1000, isolation_level=None,
                             check_same_thread=False)
    except (OSError, sqlite3.Error) as e:
        raise StoreError(f"cannot open the memory database at {path}: {e}; check the folder's "
                         f"permissions or set OPENMEMORY_HOME") from e
    try:
        db.row_factory = sqlite3.Row
        db.execute(f"PRAGMA busy_timeout = {timeout_ms}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        migrate(db, path)
    except sqlite3.DatabaseError as e:
        db.close()
        raise StoreError(f"the memory database at {path} is unusable ({e}); move it aside and "
                         f"run `openmemory ingest` to rebuild it from the transcripts") from e
    except BaseException:
        db.close()
        raise
    return Store(db, path)


def clip(text, limit: int) -> str:
    """Text on one line (whitespace runs folded) of at most limit characters, cut with '…'."""
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def hash_text(text: str) -> int:
    """A stable 32-bit hash for keys (never Python's salted hash())."""
    return zlib.crc32(text.encode("utf-8"))


def _clean_episode(ep: dict) -> dict:
    """Redact every text field and serialise facts; nothing unredacted reaches the file."""
    facts = ep.get("facts") or {}
    return {
        "key": ep["key"],
        "kind": ep["kind"],
        "title": redact(ep["title"]),
        "gist": redact(ep["gist"]),
        "detail": redact(ep.get("detail") or ""),
        "facts": json.dumps(redact_obj(facts), ensure_ascii=False, sort_keys=True)
        if not isinstance(facts, str) else redact(facts),
        "at": ep["at"],
        "cwd": ep.get("cwd") or None,
    }


def _row(row: sqlite3.Row) -> dict:
    out = dict(row)
    out.pop("embedding", None)
    if "facts" in out:
        try:
            out["facts"] = json.loads(out["facts"])
        except ValueError:
            out["facts"] = {}
        if not isinstance(out["facts"], dict):
            out["facts"] = {}
    return out


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _db_bytes(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += os.path.getsize(str(path) + suffix)
        except OSError:
            pass
    return total
