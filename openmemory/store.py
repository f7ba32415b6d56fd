"""The one SQLite file: its connection and transactions, and every read and write of memory as
named methods of `Store`.

Only this module and migrations.py (the schema's numbered steps, applied when `connect`
opens the file) speak SQL: the others ask a `Store` method that says what it is for.
Everything written passes through `redact` first, and every episode and lesson carries its
hashed vector (embed.encode: its dimensions that are not zero, about 90 bytes). Besides the store itself: its write transactions
(`Transaction`), a bulk ingest's connection (`bulk_writes`, unsynced into a new memory), the
file's own checks and consistent copies, and episodes made ready to store (`prepare`, pure:
an ingest's worker processes run it too).
"""
import json
import logging
import os
import re
import shlex
import sqlite3
import urllib.parse
import zlib
from contextlib import contextmanager
from pathlib import Path

from . import embed, files, migrations, neighbours, paths
from .clock import iso
from .errors import OpenMemoryError, RenderError, StoreError, damaged, explain, is_busy, is_damage, os_fault
from .redact import clean_episode, redact, redact_obj, redacted, redactor_for, strings_in
from .redact import secret_safe_clip as clip   # a cut never keeps part of a secret (issue 27)
from .shorten import unhidden

BUSY_TIMEOUT_MS = 5000      # a concurrent ingest (hook + cron) waits instead of failing


def busy_timeout_ms() -> int:
    """How long a write waits for another process's transaction: $OPENMEMORY_BUSY_TIMEOUT_MS or 5 s."""
    try:
        return max(0, int(os.environ.get("OPENMEMORY_BUSY_TIMEOUT_MS", BUSY_TIMEOUT_MS)))
    except ValueError:
        return BUSY_TIMEOUT_MS


EPISODE_KINDS = ("session", "error", "correction", "note")


def lesson_words(text: str) -> str:
    """A lesson's words as stored: redacted, with no character a reader cannot see and a model
    reads (shorten.HIDDEN): a lesson is rendered into the agent's memory and read by the person."""
    return unhidden(redact(text))


def _judged_kept(ep: dict, facts: str, title: str, gist: str) -> dict:
    """An episode read again (its session went on, or `ingest --force`) keeps what a judge said
    of it: the verdict (`judge`), the doubt it settled, and the title and gist it gave a light
    episode it called a correction. The message is the same record (its key), so the verdict
    stands; without this the next night would ask (and pay for) it again."""
    old, new = json.loads(facts), json.loads(ep["facts"])
    if "judge" in new:
        return ep
    new["judge"] = old["judge"]
    if old.get("doubtful") is False and new.get("doubtful"):
        new["doubtful"] = False
    kept = dict(ep, facts=json.dumps(new, ensure_ascii=False, sort_keys=True))
    if not ep["title"] and title:
        kept.update(title=title, gist=gist)
    return kept


class Store:
    """An open memory database. Use as a context manager, or call close()."""

    def __init__(self, db: sqlite3.Connection, path: Path, busy_ms: int | None = None):
        self._db = db   # private: every query is a method below (tests reach it via tests/helpers.raw_db)
        self.path = path
        self._busy_ms = busy_timeout_ms() if busy_ms is None else busy_ms
        self._facts = None  # a _Decoded inside facts_once(), else None
        self._moves = None  # project_moves' rows, read at the first session stored (_moved_before)
        self.read_only = None   # why, when it was opened to read only (connect's read_only_ok): nothing is written

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self._db.close()

    def transaction(self):
        """A write transaction: `with store.transaction(): ...` commits, or rolls back on error."""
        return Transaction(self._db)

    @contextmanager
    def snapshot(self):
        """`with store.snapshot():` reads that see one state of the file, holding no write lock
        (a WAL read transaction: others write meanwhile). Inside a transaction, that one."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            if self._db.in_transaction:
                self._db.execute("COMMIT")  # nothing written: it only ends the read

    @contextmanager
    def facts_once(self):
        """`with store.facts_once():` each episode's facts decoded once while inside, however
        often its row is read (a night: consolidation, settling, render and the morning report
        each read the same sources; a first night over 60,000 sessions decoded 680,000 rows for
        210,000 episodes), and each key and short string of what is read kept once (_Decoded).
        Rows are read from the database every time (but for episodes_by_id's same read again with
        nothing written since): facts whose stored text changed meanwhile (a judge's verdict) are
        decoded again. What is read inside shares its facts with every
        other read of the episode: read them, never change them in place."""
        if self._facts is not None:
            yield
            return
        self._facts = _Decoded()
        try:
            yield
        finally:
            self._facts = None

    def bulk_writes(self):
        """`with store.bulk_writes():` a bulk ingest's settings for this connection (_bulk_writes)."""
        return _bulk_writes(self._db, self.path)

    def _in(self, sql: str, ids, *after) -> list:
        """Rows of sql (one `IN (%s)`) for all ids, in chunks under SQLite's bound-parameter limit."""
        ids = sorted(set(ids))
        return [r for i in range(0, len(ids), 500) for r in self._db.execute(
            sql % ",".join("?" * len(ids[i:i + 500])), ids[i:i + 500] + list(after))]

    # -- state ---------------------------------------------------------------------

    def quick_check(self) -> str | None:
        """SQLite's quick check, then the text index's own: None when both pass, else what failed."""
        return _check(self._db, busy_timeout_ms())

    def backup(self, dest: Path) -> None:
        """A consistent copy while others read and write (VACUUM INTO, one read transaction), 0600."""
        _copy(self._db, Path(dest))

    def writable_now(self) -> bool:
        """Whether this connection could write at once (no other process holds the write lock)."""
        try:
            self._db.execute("PRAGMA busy_timeout = 0")
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("ROLLBACK")
            return True
        except sqlite3.OperationalError as e:
            if not is_busy(e):
                raise
            return False
        finally:
            self._db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")

    def data_version(self) -> int:
        """A number that changes when another connection commits (PRAGMA data_version)."""
        return self._db.execute("PRAGMA data_version").fetchone()[0]

    def get_state(self, key: str, default=None):
        row = self._db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_state(self, key: str, value: str) -> None:
        self._db.execute("INSERT INTO state (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    # An id recall showed (e428, p12, lesson:3) names one memory for good: SQLite gives a new row
    # the largest id + 1, so forgetting the newest memory would hand its id to the next one (and a
    # `forget e428` run again would take the new one). A forget that takes a table's largest ids
    # keeps that id as the table's floor (state `id_floor:<table>`); the next row stored is given
    # the id after it, and from then on SQLite's own count is above it again.

    def _keep_floor(self, table: str, ids) -> None:
        """Inside forget's transaction, after its deletes: ids taken from table."""
        top = max(ids, default=0)
        if top > self._db.execute(f"SELECT ifnull(max(id), 0) FROM {table}").fetchone()[0]:
            self.set_state(f"id_floor:{table}", str(max(top, int(self.get_state(f"id_floor:{table}") or 0))))

    def _next_id(self, table: str) -> int | None:
        """The id the next row of table must get (above a forgotten newest one), or None: SQLite's own."""
        floor = int(self.get_state(f"id_floor:{table}") or 0)
        if not floor:
            return None
        if self._db.execute(f"SELECT ifnull(max(id), 0) FROM {table}").fetchone()[0] >= floor:
            self._db.execute("DELETE FROM state WHERE key = ?", (f"id_floor:{table}",))   # passed: no longer needed
            return None
        return floor + 1

    # -- sessions and their episodes -------------------------------------------------

    def file_index(self) -> dict:
        """{path: (mtime_ns, size)} of every transcript already ingested, in one query."""
        return {row[0]: (row[1], row[2]) for row in self._db.execute("SELECT path, mtime_ns, size FROM sessions")}

    def file_state(self, path: str):
        """(mtime_ns, size) of a transcript as last ingested, or None."""
        row = self._db.execute("SELECT mtime_ns, size FROM sessions WHERE path = ?", (path,)).fetchone()
        return (row[0], row[1]) if row else None

    def session_file(self, session_id: str):
        """(path, mtime_ns, size) of the file a session was last stored from, or None."""
        row = self._db.execute("SELECT path, mtime_ns, size FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return tuple(row) if row else None

    def move_session(self, old_path: str, new_path: str) -> bool:
        """A session's file is now another (Gemini's .jsonl copy of a .json chat, a Codex rollout
        moved into or out of archived_sessions): its row follows,
        so the session keeps its id and its episodes. False when there is nothing to move."""
        with self.transaction():
            if self._db.execute("SELECT 1 FROM sessions WHERE path = ?", (new_path,)).fetchone():
                return False
            return self._db.execute("UPDATE sessions SET path = ? WHERE path = ?", (new_path, old_path)).rowcount > 0

    def session_id_for(self, session_id: str, path: str) -> str:
        """The id to store a transcript under: its own, unless another file already holds it."""
        row = self._db.execute("SELECT path FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None or row[0] == path or paths.same_file(row[0], path) or not os.path.lexists(row[0]):
            # one file reached by two paths (a symlink, another spelling) is one session; so is a
            # file whose old path is gone (the config folder moved): known by its own id
            return session_id
        mine = self._db.execute("SELECT id FROM sessions WHERE path = ?", (path,)).fetchone()  # else a stable id:
        return mine[0] if mine else f"{session_id}@{zlib.crc32(path.encode('utf-8')):08x}"  # never Python's salted hash()

    def replace_session(self, session: dict, episodes: list, now: str | None = None, prepared=False,
                        passages: list | None = None) -> dict:
        """Store one transcript's session row and episodes, replacing what it produced before.

        Episodes are matched by key: one still produced keeps its id, strength, recalls and
        consolidation; one no longer produced is removed; an event already stored by another
        transcript (a resumed session copies records) stays with the first. Returns counts.
        prepared: the episodes come from prepare (redacted, with context and vector), and the
        passages from prepare_passages. passages (passages.passages_of, redacted): replace the
        session's passages the same way, by key; None leaves them as they are."""
        now = now or iso()
        counts = {"added": {}, "updated": 0, "removed": 0, "passages": 0}
        sid = session["id"]
        cleaned = episodes if prepared else prepare(episodes)
        if passages is not None and not prepared:
            passages = prepare_passages(passages)
        self._moved_before(session, cleaned, passages)
        with self.transaction():
            keys = [e["key"] for e in cleaned] + [e["legacy_key"] for e in cleaned if e.get("legacy_key")]
            rows = self._db.execute(
                "SELECT key, id, session_id, CASE WHEN json_extract(facts, '$.judge') IS NOT NULL THEN facts END, "
                "title, gist FROM episodes WHERE key IN (%s)" % ",".join("?" * len(keys)), keys).fetchall() if keys else []
            existing = {row[0]: (row[1], row[2]) for row in rows}
            judged = {row[0]: row[3:] for row in rows if row[3] is not None and row[2] == sid}    # _judged_kept
            keep = set()
            claim = self._next_id("episodes")   # for the first episode stored (above a forgotten newest one)
            for ep in cleaned:
                if ep["key"] in judged:
                    ep = _judged_kept(ep, *judged[ep["key"]])
                vec, ctx = ep["embedding"], ep["context"]
                legacy = existing.get(ep["legacy_key"])
                found = existing.get(ep["key"])
                if found is None and legacy and legacy[1] == sid:
                    # stored by an older version under the tool-use id alone: rekey it in place
                    self._db.execute("UPDATE episodes SET key = ? WHERE id = ?", (ep["key"], legacy[0]))
                    found = existing[ep["key"]] = legacy
                if found and found[1] != sid:
                    continue  # first transcript to record an event keeps it
                if found:
                    _index_stored(self._db)  # this transaction's episodes first: one may be this one
                    self._db.execute(
                        "UPDATE episodes SET cwd = ?, kind = ?, title = ?, gist = ?, detail = ?, facts = ?, "
                        "at = ?, embedding = ?, context = ?, " + EPISODE_GRAMS + " WHERE id = ? AND (title, gist, "
                        "detail, facts, at, ifnull(cwd, ''), context) IS NOT (?, ?, ?, ?, ?, ?, ?)",
                        (ep["cwd"], ep["kind"], ep["title"], ep["gist"], ep["detail"], ep["facts"], ep["at"],
                         vec, ctx, *episode_grams(ep["title"], ep["gist"], ep["detail"], ctx), found[0], ep["title"],
                         ep["gist"], ep["detail"], ep["facts"], ep["at"], ep["cwd"] or "", ctx))
                    counts["updated"] += self._db.execute("SELECT changes()").fetchone()[0]
                else:
                    _stored(self._db, self._db.execute(
                        "INSERT INTO episodes (id, key, session_id, cwd, kind, title, gist, detail, facts, at, created, "
                        "last_touched, embedding, context, agent, title_grams, gist_grams, detail_grams, context_grams) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (claim, ep["key"], sid, ep["cwd"], ep["kind"], ep["title"], ep["gist"], ep["detail"],
                         ep["facts"], ep["at"], now, now, vec, ctx, ep.get("agent") or "claude-code",
                         *episode_grams(ep["title"], ep["gist"], ep["detail"], ctx))).lastrowid)
                    claim = None
                    if ep["title"] or ep["kind"] != "correction":    # a light one (LIGHT) is no one's news
                        counts["added"][ep["kind"]] = counts["added"].get(ep["kind"], 0) + 1
                keep.add(ep["key"])
            stale = [row[:2] for row in self._db.execute(
                f"SELECT id, {LIGHT}, key FROM episodes WHERE session_id = ?", (sid,)) if row[2] not in keep]
            for eid, _ in stale:
                _index_stored(self._db)
                self._db.execute("DELETE FROM episodes WHERE id = ?", (eid,))
            counts["removed"] = sum(1 for _, light in stale if not light)
            if passages is not None:
                counts["passages"] = self._replace_passages(sid, passages, now)
            # The file held another session before (overwritten by a copy of another, or reused): that
            # session keeps its memories, its transcript gone from here as a deleted file's is.
            self._db.execute("UPDATE sessions SET path = path || ? || id WHERE path = ? AND id != ?",
                             (GONE_FROM, session["path"], sid))
            self._db.execute(_SESSION_UPSERT, (
                sid, session["path"], session["mtime_ns"], session["size"], now, len(keep), session.get("cwd"),
                redacted(session.get("title") or ""), session.get("started"), session.get("ended"),
                session.get("version"), session.get("turns", 0), session.get("skipped", 0), session.get("project")))
        return counts

    def _replace_passages(self, sid: str, passages: list, now: str) -> int:
        """Store a session's passages by key (inside replace_session's transaction): one still
        made keeps its id, strength and recalls (its words updated if they changed); one no
        longer made is removed; one another transcript stored first stays with it. Returns
        how many were added."""
        keys = [p["key"] for p in passages]
        existing = {row[0]: row[1:] for row in self._in(
            "SELECT key, id, session_id, text, context, at, seq, cwd FROM passages WHERE key IN (%s)", keys)}
        keep, added, changed = set(), [], []
        for p in passages:
            found = existing.get(p["key"])
            if found and found[1] != sid:
                continue
            keep.add(p["key"])
            if found is None:
                added.append((p["key"], sid, p["seq"], p["cwd"], p["kind"], p["text"], p["context"], p["at"], now,
                              now, p["embedding"], p.get("agent") or "claude-code", *passage_grams(p["text"], p["context"])))
            elif tuple(found[2:]) != (p["text"], p["context"], p["at"], p["seq"], p["cwd"]):
                changed.append((p["text"], p["context"], p["at"], p["seq"], p["cwd"], p["embedding"],
                                *passage_grams(p["text"], p["context"]), found[0]))
        stale = [(row[0],) for row in self._db.execute("SELECT id, key FROM passages WHERE session_id = ?", (sid,))
                 if row[1] not in keep]
        if changed or stale:
            _index_stored(self._db)     # their triggers expect what this transaction stored indexed
        self._db.executemany("DELETE FROM passages WHERE id = ?", stale)
        self._db.executemany("UPDATE passages SET text = ?, context = ?, at = ?, seq = ?, cwd = ?, embedding = ?, "
                             "text_grams = ?, context_grams = ? WHERE id = ?", changed)
        if added:
            claim = self._next_id("passages")
            first = claim or self._db.execute("SELECT ifnull(max(id), 0) + 1 FROM passages").fetchone()[0]
            self._db.executemany(
                "INSERT INTO passages (id, key, session_id, seq, cwd, kind, text, context, at, created, last_touched, "
                "embedding, agent, text_grams, context_grams) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(claim if n == 0 else None, *row) for n, row in enumerate(added)])
            _stored(self._db, first, "passages")    # indexed at the commit, with the rest
        return len(added)

    def add_note(self, text: str, title: str = "", cwd: str | None = None, now: str | None = None,
                 conversation: str | None = None, agent: str = "claude-code") -> int:
        """Store a note at once (MCP `remember`); returns its id. With a conversation, neighbours are context."""
        now = now or iso()
        ep = _note(text, title, cwd, now, conversation)
        with self.transaction():
            return self._insert_note(ep, now, conversation, agent)

    def remember_note(self, text: str, title: str = "", cwd: str | None = None, strength: float = 0.0,
                      now: str | None = None, conversation: str | None = None, agent: str = "claude-code",
                      by_person: bool = True) -> tuple:
        """(id, True, retitled, kept) for the note already stored with the same words (as add_note
        stores them) in the same project (paths.same_project; for every project: one for every
        project), not archived, strengthened by strength and touched now (`remember` said twice),
        and given the title named now if one is and it differs (retitled: that title as stored,
        the latest the person chose; else ""); else (the id of the note stored, False, "", "").
        A note of the conversation given does not count: a dialog stored turn by turn keeps every
        turn, the same words said again in it too.

        by_person False (the MCP tool: an agent, which may be steered by what it read) retitles
        only a note an agent stored through the tool (one of a conversation); a note the person
        stored from the terminal keeps the title they gave it (kept: that title; else "")."""
        now = now or iso()
        ep = _note(text, title, cwd, now, conversation)
        with self.transaction():
            same = [(i, was, an_agents) for i, where, was, an_agents in self._db.execute(
                "SELECT id, cwd, title, json_extract(facts, '$.conversation') IS NOT NULL FROM episodes "
                "WHERE kind = 'note' AND NOT archived AND gist = ? "
                "AND (? IS NULL OR json_extract(facts, '$.conversation') IS NOT ?) ORDER BY id",
                (ep["gist"], conversation, conversation)) if paths.same_project(where, ep["cwd"])]
            if same:
                note_id, was, an_agents = same[0]
                kept = was if title.strip() and ep["title"] != was and not by_person and not an_agents else ""
                retitled = ep["title"] if title.strip() and ep["title"] != was and not kept else ""
                self._db.execute("UPDATE episodes SET strength = strength + ?, last_touched = max(last_touched, ?) "
                                 "WHERE id = ?", (strength, now, note_id))
                if retitled:        # the text index follows by its trigger; the embedding here
                    self._db.execute("UPDATE episodes SET title = ?, embedding = ?, title_grams = ? WHERE id = ?",
                                     (ep["title"], embed.encoded(ep["title"] + "\n" + ep["gist"]),
                                      embed.grams(ep["title"]), note_id))
                return note_id, True, retitled, kept
            return self._insert_note(ep, now, conversation, agent), False, "", ""

    def _insert_note(self, ep: dict, now: str, conversation: str | None, agent: str) -> int:
        """Insert a note (_note) inside the caller's transaction; returns its id."""
        recent = self._db.execute(  # the notes of the last few conversation gaps, newest first
            "SELECT id, title, gist, at, cwd, facts, context FROM episodes WHERE kind = 'note' AND at >= ? "
            "AND at <= ? ORDER BY at DESC, id DESC LIMIT ?",
            (neighbours.window_start(now), now, 500 * bool(conversation)))
        mine, changed = neighbours.new_note_contexts(neighbours.thread_before(recent, conversation, ep["cwd"], now), ep)
        cur = self._db.execute(
            "INSERT INTO episodes (id, key, session_id, cwd, kind, title, gist, detail, facts, at, created, "
            "last_touched, embedding, context, agent, title_grams, gist_grams, detail_grams, context_grams) "
            "VALUES (?, ?, NULL, ?, 'note', ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self._next_id("episodes"), f"note:{now}:{zlib.crc32(ep['gist'].encode('utf-8')):08x}", ep["cwd"],
             ep["title"], ep["gist"],
             ep["facts"], now, now, now, embed.encoded(ep["title"] + "\n" + ep["gist"]), mine, agent,
             *episode_grams(ep["title"], ep["gist"], "", mine)))
        _stored(self._db, cur.lastrowid)
        self._db.executemany("UPDATE episodes SET context = ?, context_grams = ? WHERE id = ?",
                             [(context, embed.grams(context), i) for context, i in changed])
        _index_stored(self._db)
        self._index_holds(cur.lastrowid, ep["gist"])     # its title may be a cut of it, not indexed (m013)
        return cur.lastrowid

    def _index_holds(self, episode_id: int, text: str) -> None:
        """Raise DamagedDatabase unless the text index finds the episode just indexed by its words:
        a note kept in a damaged index would be dropped by the documented recovery (OPERATIONS.md)."""
        if not self.has_recall_index():
            return
        words = list(dict.fromkeys(re.findall(r"[^\W_]+", text)))[:16]
        if not words:
            return
        try:
            found = self._db.execute("SELECT count(*) FROM recall_index WHERE recall_index MATCH ? AND rowid = ?",
                                     (" ".join(f'"{w}"' for w in words), episode_id)).fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise damaged(self.path, f"the text index: {e}") from e
        if not found:
            raise damaged(self.path, "the text index does not find what was just stored in it")

    # -- reading ---------------------------------------------------------------------

    def episode(self, episode_id: int) -> dict | None:
        row = self._db.execute("SELECT * FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return _row(row) if row else None

    def episodes(self, kind: str | None = None, session_id: str | None = None, light: bool = False) -> list:
        """Episodes in time order, optionally of one kind or one session; a light one (LIGHT) only if asked."""
        sql, args = "SELECT * FROM episodes WHERE 1" if light else f"SELECT * FROM episodes WHERE NOT {LIGHT}", []
        if kind:
            sql += " AND kind = ?"
            args.append(kind)
        if session_id:
            sql += " AND session_id = ?"
            args.append(session_id)
        return [_row(r) for r in self._db.execute(sql + " ORDER BY at, id", args)]

    def counts(self) -> dict:
        """Everything `openmemory status` reports."""
        kinds = dict(self._db.execute(f"SELECT kind, count(*) FROM episodes WHERE NOT {LIGHT} GROUP BY kind").fetchall())
        episodes = {k: kinds.get(k, 0) for k in EPISODE_KINDS}
        episodes["total"] = sum(episodes.values())
        episodes["archived"] = self._db.execute(f"SELECT count(*) FROM episodes WHERE archived AND NOT {LIGHT}").fetchone()[0]
        passages = self._db.execute("SELECT count(*), ifnull(sum(archived), 0) FROM passages").fetchone()
        sessions, skipped = self._db.execute("SELECT count(*), ifnull(sum(skipped), 0) FROM sessions").fetchone()
        lessons = self._db.execute(
            "SELECT count(*), ifnull(sum(NOT archived AND NOT vetoed AND state = 'live'), 0), "
            "ifnull(sum(NOT archived AND NOT vetoed AND state = 'candidate'), 0), "
            "ifnull(sum(archived AND NOT vetoed), 0), ifnull(sum(vetoed), 0) FROM lessons").fetchone()
        predictions = self._db.execute(
            "SELECT count(*), ifnull(sum(resolved IS NULL), 0), ifnull(sum(outcome = 'confirmed'), 0), "
            "ifnull(sum(outcome = 'failed'), 0), ifnull(sum(resolved IS NOT NULL AND outcome IS NULL), 0) "
            "FROM predictions").fetchone()
        return {
            "episodes": episodes,
            "passages": {"total": passages[0], "archived": passages[1]},
            "sessions": sessions,
            "lessons": lessons[0],
            "lessons_live": lessons[1],
            "lessons_candidate": lessons[2],
            "lessons_archived": lessons[3],     # review.state_name's four states, each lesson in one
            "lessons_vetoed": lessons[4],
            "predictions": predictions[0],
            "predictions_open": predictions[1],
            "predictions_confirmed": predictions[2],
            "predictions_failed": predictions[3],
            "predictions_untested": predictions[4],   # closed with no outcome: lapsed, or its lesson left memory
            "lines_skipped": skipped,
            "opted_out": self._db.execute("SELECT count(*) FROM opted_out").fetchone()[0],
            "forgotten": self._db.execute("SELECT count(*) FROM forgotten WHERE NOT alias").fetchone()[0],
            "last_ingest": self.get_state("last_ingest"),
            "last_sleep": self.get_state("last_sleep"),
            "db_bytes": sum(os.path.getsize(p) for p in (str(self.path), f"{self.path}-wal") if os.path.exists(p)),
            "db": str(self.path),
        }

    def has_fts5(self) -> bool:
        """Whether this SQLite has FTS5, which recall's full-text index needs."""
        return migrations.fts5_available(self._db)

    # -- recall: the full-text index and the rows it names (recall.py ranks them) -------

    def has_recall_index(self) -> bool:
        """Whether this database has the full-text index (SQLite with FTS5 when it was made)."""
        return self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'recall_index'").fetchone() is not None

    def indexed_total(self) -> int:
        """About how many rows the index holds (the highest ids: cheap, and all an IDF needs)."""
        return self._db.execute("SELECT (SELECT ifnull(max(id), 0) FROM episodes) + "
                                "(SELECT ifnull(max(id), 0) FROM lessons) + "
                                "(SELECT ifnull(max(id), 0) FROM passages)").fetchone()[0]

    def indexed_words(self) -> int:
        """How many (word, memory) pairs the text index holds in memories' own words (title, body,
        detail; not the context, which repeats their neighbours'), from FTS5's vocabulary: how much
        text memory holds, which a one-line note and a session's exchange hold very differently.
        A scan of the vocabulary (0.5-3.5 ms up to 1,500 memories): for a small memory only. 0
        where it cannot be read (a database opened read-only cannot make the view)."""
        try:
            self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_vocab "
                             "USING fts5vocab(main, recall_index, col)")
            return int(self._db.execute("SELECT ifnull(sum(doc), 0) FROM temp.recall_vocab "
                                        "WHERE col != 'context'").fetchone()[0])
        except sqlite3.Error:
            return 0

    def folders_seen_in(self) -> dict:
        """{working folder: the repository it belonged to when its session was read}, for the
        folders that were not their own project (a linked worktree, a subfolder): paths.seen_in.
        A folder read in two repositories (`git worktree add ../fix` in one, removed, then in
        another) is left out: gone, it is its own, as nothing says which session was whose, and
        one repository's lessons must not go into the other's memory."""
        return dict(self._db.execute("SELECT cwd, min(project) FROM sessions WHERE project IS NOT NULL "
                                     "AND cwd IS NOT NULL GROUP BY cwd HAVING count(DISTINCT project) = 1").fetchall())

    def project_moves(self) -> dict:
        """{old project folder: the folder the person moved it to} (`lessons move`): paths.moved."""
        return dict(self._db.execute("SELECT old, new FROM project_moves").fetchall())

    def move_project(self, old: str, new: str, when: str) -> None:
        """Record that the person moved (or renamed) the project folder old to new; a move of new
        since back to old takes the first move out, and a folder moved twice goes to its latest.
        What is stored under old (or below it) is filed under new (the same place under it): the
        lessons, sessions, episodes and passages read there, so the move stays when a folder is
        made again at the old path (a fresh clone of the same name), whose sessions are its own."""
        prefix = old.rstrip("/") + "/"
        under = "{0} = ? OR substr({0}, 1, ?) = ?"
        with self.transaction():
            self._db.execute("DELETE FROM project_moves WHERE old = ?", (new,))
            self._db.execute("UPDATE project_moves SET new = ? WHERE new = ?", (new, old))
            self._db.execute("INSERT OR REPLACE INTO project_moves (old, new, moved) VALUES (?, ?, ?)", (old, new, when))
            # a lesson's predictions name where it is filed (sleep.predict): now there, as forget's move does
            self._db.execute("UPDATE predictions SET text = (SELECT replace(predictions.text, ' again in ' || l.cwd || "
                             "': ', ' again in ' || ? || substr(l.cwd, ?) || ': ') FROM lessons l WHERE l.id = "
                             "predictions.lesson_id) WHERE lesson_id IN (SELECT id FROM lessons WHERE "
                             + under.format("cwd") + ")", (new, len(old) + 1, old, len(prefix), prefix))
            for table, column in (("lessons", "cwd"), ("episodes", "cwd"), ("passages", "cwd"), ("sessions", "cwd"),
                                  ("sessions", "project")):
                self._db.execute(f"UPDATE {table} SET {column} = ? || substr({column}, ?) WHERE " + under.format(column),
                                 (new, len(old) + 1, old, len(prefix), prefix))
        self._moves = None

    def _moved_before(self, session: dict, episodes: list, passages) -> None:
        """A transcript read again (it grew, `ingest --force`) of a session begun under a folder the
        person moved before the move (move_project filed it under the new one): its folders as the
        move made them, also when a folder is made again at the old path (its own sessions begin
        after the move). In place."""
        if self._moves is None:
            self._moves = self._db.execute("SELECT old, new, moved FROM project_moves").fetchall()
        started = session.get("started")
        if not self._moves or not started:
            return
        for old, new, moved in self._moves:
            if started >= moved:
                continue
            prefix = old.rstrip("/") + "/"

            def at_new(cwd):
                return new + cwd[len(old):] if cwd and (cwd == old or cwd.startswith(prefix)) else cwd
            session["cwd"], session["project"] = at_new(session.get("cwd")), at_new(session.get("project"))
            for item in [*episodes, *(passages or [])]:
                item["cwd"] = at_new(item.get("cwd"))

    def indexed_count(self, match: str, limit: int) -> int:
        """How many index rows an FTS5 match expression finds, counted up to limit."""
        return self._db.execute(
            "SELECT count(*) FROM (SELECT rowid FROM recall_index WHERE recall_index MATCH ? LIMIT ?)",
            (match, limit)).fetchone()[0]

    def indexed_texts(self, match: str, limit: int) -> list:
        """The texts of at most limit index rows a match finds in memories' own words (title, body,
        detail; not the context, which repeats their neighbours'): what they hold as written, where
        the index holds only stems."""
        keys = [k for (k,) in self._db.execute(
            "SELECT rowid FROM recall_index WHERE recall_index MATCH ? LIMIT ?",
            ("{title body detail}: (%s)" % match, limit))]
        episodes = [k for k in keys if 0 < k < migrations.PASSAGE_ROWIDS]
        passages = [k - migrations.PASSAGE_ROWIDS for k in keys if k >= migrations.PASSAGE_ROWIDS]
        lessons = [-k for k in keys if k < 0]
        texts = [t for (t,) in self._in("SELECT title || ' ' || gist || ' ' || ifnull(detail, '') FROM episodes "
                                        "WHERE id IN (%s)", episodes)]
        texts += [t for (t,) in self._in("SELECT text FROM passages WHERE id IN (%s)", passages)]
        texts += [t for (t,) in self._in("SELECT text FROM lessons WHERE id IN (%s)", lessons)]
        return texts

    def best_indexed(self, match: str, weights, limit: int) -> list:
        """[(rowid, bm25)] of the best index rows for a match (bm25: lower is better)."""
        weights = ", ".join(str(w) for w in weights)
        return self._db.execute(f"SELECT rowid, bm25(recall_index, {weights}) AS b FROM recall_index "
                                f"WHERE recall_index MATCH ? ORDER BY b LIMIT ?", (match, limit)).fetchall()

    def newest_indexed(self, match: str, limit: int) -> list:
        """The rowids of the newest index rows for a match, at most limit (no bm25(): FTS5 counts
        every row holding each term to weigh it, which for common terms costs more than the match)."""
        return [r for r, in self._db.execute("SELECT rowid FROM recall_index WHERE recall_index MATCH ? "
                                             "ORDER BY rowid DESC LIMIT ?", (match, limit))]

    def holding(self, match: str) -> tuple:
        """(episode ids, lesson ids, passage ids) of every index row an FTS5 match expression finds."""
        rows = [r[0] for r in self._db.execute("SELECT rowid FROM recall_index WHERE recall_index MATCH ?", (match,))]
        return (sorted(r for r in rows if 0 < r < migrations.PASSAGE_ROWIDS), sorted(-r for r in rows if r < 0),
                sorted(r - migrations.PASSAGE_ROWIDS for r in rows if r > migrations.PASSAGE_ROWIDS))

    def holding_as_written(self, words: list) -> tuple:
        """(episode ids, lesson ids, passage ids) whose own text (an episode's title, gist and detail, a
        passage's or a lesson's text) holds each of words as written: a word of one Chinese or Japanese
        character, which the index, reading such script as pairs, never holds alone (forget --query);
        a letter of either case as the index reads it.
        Reads every row's text: forget is asked by a person, rarely."""
        def ids(table, text):
            held = " AND ".join(f"instr(lower({text}), lower(?))" for _ in words)   # as the index: 'claim的' (red47b)
            return sorted(r[0] for r in self._db.execute(f"SELECT id FROM {table} WHERE {held}", list(words)))
        return (ids("episodes", "coalesce(title, '') || ' ' || coalesce(gist, '') || ' ' || coalesce(detail, '')"),
                ids("lessons", "text"), ids("passages", "text"))

    def recall_rows(self, episode_ids: list, lesson_ids: list, include_archived: bool, passage_ids=()) -> list:
        """Candidate rows (episodes, passages, and lessons as kind 'lesson') by id; vetoed lessons never.
        Each row has `source` ('episode', 'passage' or 'lesson') and, for a lesson, `state` when
        lessons have one."""
        live = "" if include_archived else " AND NOT archived"
        rows = self._in(f"SELECT {_RECALL_COLUMNS} FROM episodes WHERE id IN (%s){live}", episode_ids)
        rows += self._in(f"SELECT {_RECALL_PASSAGE_COLUMNS} FROM passages WHERE id IN (%s){live}", passage_ids)
        if lesson_ids:
            rows += self._db.execute(f"SELECT {self._lesson_columns()} FROM lessons WHERE id IN "
                                     f"({','.join('?' * len(lesson_ids))}) AND NOT vetoed{live}",
                                     lesson_ids).fetchall()
        return rows

    def _lesson_columns(self) -> str:
        """A lesson as a recall row; with its state (live, candidate) when lessons have one."""
        if not hasattr(self, "_lesson_state"):
            self._lesson_state = "state" in [r[1] for r in self._db.execute("PRAGMA table_info(lessons)")]
        return _RECALL_LESSON_COLUMNS + (", state" if self._lesson_state else ", NULL AS state")

    def rows_holding(self, stems: list, include_archived: bool, limit: int) -> list:
        """Without FTS5: the newest episodes and passages (at most limit each) and the lessons whose
        text holds a stem."""
        live = "" if include_archived else " AND NOT archived"
        holds = _holds("title || ' ' || gist", stems)
        rows = self._db.execute(f"SELECT {_RECALL_COLUMNS} FROM episodes WHERE ({holds}){live} "
                                f"ORDER BY id DESC LIMIT ?", [*stems, limit]).fetchall()
        rows += self._db.execute(f"SELECT {_RECALL_PASSAGE_COLUMNS} FROM passages WHERE ({_holds('text', stems)})"
                                 f"{live} ORDER BY id DESC LIMIT ?", [*stems, limit]).fetchall()
        rows += self._db.execute(f"SELECT {self._lesson_columns()} FROM lessons WHERE ({_holds('text', stems)}) "
                                 f"AND NOT vetoed{live}", stems).fetchall()
        return rows

    def contexts(self, episode_ids: list, passage_ids=()) -> dict:
        """{(source, id): context} of a few episodes and passages (recall reads it for its best candidates)."""
        out = {("episode", i): c for i, c in self._in("SELECT id, context FROM episodes WHERE id IN (%s)", episode_ids)}
        out.update({("passage", i): c for i, c in self._in("SELECT id, context FROM passages WHERE id IN (%s)",
                                                             passage_ids)})
        return out

    def touch_episodes(self, ids: list, strength: float, now: str, passage_ids=(), wait: bool = True) -> bool:
        """Strengthen recalled episodes (and passages) by strength, count the recall, revive the archived.
        wait False: give up at once (False) when another process holds the write lock.
        Opened to read only: nothing is written (False)."""
        if self.read_only:
            return False
        if not wait:
            self._db.execute("PRAGMA busy_timeout = 0")
        try:
            with self.transaction():
                for table, which in (("episodes", ids), ("passages", passage_ids)):
                    self._db.executemany(
                        f"UPDATE {table} SET strength = strength + ?, recalls = recalls + 1, last_touched = ?, "
                        f"archived = 0 WHERE id = ?", [(strength, now, i) for i in which])
        except sqlite3.OperationalError as e:
            if wait or not is_busy(e):
                raise
            return False
        finally:
            if not wait:
                self._db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
        return True

    # -- a memory in full, and what is next to it (`openmemory show`, the MCP tool) --------

    def passage(self, passage_id: int) -> dict | None:
        row = self._db.execute("SELECT * FROM passages WHERE id = ?", (passage_id,)).fetchone()
        return _row(row) if row else None

    def passages_around(self, session_id: str, first: int, last: int) -> list:
        """A session's passages from place first to last (seq), in order."""
        return [_row(r) for r in self._db.execute(
            "SELECT * FROM passages WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq, id",
            (session_id, first, last))]

    def passages_beside(self, passage_ids) -> dict:
        """{id: (text of the passage before it in its session, of the one after it)}, '' where there is
        none: what recall shows beside a passage (the person's words around what the agent said)."""
        return {i: (before or "", after or "") for i, before, after in self._in(
            "SELECT p.id, b.text, a.text FROM passages p "
            "LEFT JOIN passages b ON b.session_id = p.session_id AND b.seq = p.seq - 1 "
            "LEFT JOIN passages a ON a.session_id = p.session_id AND a.seq = p.seq + 1 WHERE p.id IN (%s)",
            passage_ids)}

    def passages_near(self, session_id: str, at: str, each_side: int) -> list:
        """A session's passages said up to a time (the last each_side) and after it (the first
        each_side), in order: what was said around an episode."""
        before = self._db.execute("SELECT * FROM passages WHERE session_id = ? AND at <= ? ORDER BY seq DESC, id DESC "
                                  "LIMIT ?", (session_id, at, each_side)).fetchall()
        after = self._db.execute("SELECT * FROM passages WHERE session_id = ? AND at > ? ORDER BY seq, id LIMIT ?",
                                 (session_id, at, each_side)).fetchall()
        return [_row(r) for r in reversed(before)] + [_row(r) for r in after]

    def note_after(self, note_id: int, until: str) -> dict | None:
        """The note stored next after a note, in its conversation and folder, up to a time (id, gist,
        at); None when there is none, or the note was stored in no conversation."""
        row = self._db.execute(
            "SELECT n.id, n.gist, n.at FROM episodes AS o JOIN episodes AS n ON n.kind = 'note' AND n.at >= o.at "
            "AND n.at <= ? AND n.id > o.id AND n.cwd IS o.cwd AND json_extract(n.facts, '$.conversation') = "
            "json_extract(o.facts, '$.conversation') WHERE o.id = ? AND o.kind = 'note' AND n.archived = 0 "
            "ORDER BY n.at, n.id LIMIT 1", (until, note_id)).fetchone()
        return dict(row) if row else None

    def session(self, session_id: str) -> dict | None:
        """A transcript's row: its path, folder, title, times."""
        row = self._db.execute("SELECT id, path, cwd, title, started, ended, version FROM sessions WHERE id = ?",
                               (session_id,)).fetchone()
        return dict(row) if row else None

    def sessions_written_since(self, since: str, until: str = "9999") -> set:
        """The ids of the sessions whose last record (as last ingested) is at or after since (and at or
        before until)."""
        return {row[0] for row in self._db.execute("SELECT id FROM sessions WHERE ended >= ? AND ended <= ?",
                                                   (since, until))}

    def lesson(self, lesson_id: int) -> dict | None:
        """One lesson (archived and vetoed too), `sources` decoded; None when there is none."""
        return next((ls for ls in self.all_lessons() if ls["id"] == lesson_id), None)

    # -- sleep: the four passes (sleep.py decides, these read and write) ---------------

    def episodes_to_decay(self) -> list:
        """Every live episode's strength and clock (when it happened, was touched, was decayed); not a
        light one (LIGHT: nothing shows it, so nothing of it fades or is archived)."""
        return self._db.execute("SELECT id, kind, at, last_touched, recalls, decayed, strength FROM episodes "
                                f"WHERE NOT archived AND NOT {LIGHT}").fetchall()

    def decay_episodes(self, updates: list) -> None:
        """[(strength, decayed, archived, id)]: episodes brought up to date by decay."""
        self._db.executemany("UPDATE episodes SET strength = ?, decayed = ?, archived = ? WHERE id = ?", updates)

    def passages_to_decay(self) -> list:
        """Every live passage's strength and clock (as episodes_to_decay)."""
        return self._db.execute("SELECT id, kind, at, last_touched, recalls, decayed, strength FROM passages "
                                "WHERE NOT archived").fetchall()

    def decay_passages(self, updates: list) -> None:
        """[(strength, decayed, archived, id)]: passages brought up to date by decay."""
        self._db.executemany("UPDATE passages SET strength = ?, decayed = ?, archived = ? WHERE id = ?", updates)

    def lessons_to_decay(self) -> list:
        """Every lesson's strength and clock (not archived, not vetoed), with what backs it (a dict)."""
        return [dict(r, backing=_object(r["backing"])) for r in self._db.execute(
            "SELECT id, text, cwd, created, decayed, strength, state, backing FROM lessons "
            "WHERE NOT archived AND NOT vetoed").fetchall()]

    def decay_lessons(self, updates: list) -> None:
        """[(strength, decayed, archived, id)]: lessons brought up to date by decay."""
        self._db.executemany("UPDATE lessons SET strength = ?, decayed = ?, archived = ? WHERE id = ?", updates)

    def pending_surprises(self, now: str) -> list:
        """Live errors and corrections up to now that fed no lesson yet, in time order."""
        return [_row(r, self._facts) for r in self._db.execute(
            "SELECT id, kind, session_id, cwd, at, facts, consolidated FROM episodes "
            "WHERE kind IN ('error', 'correction') AND ifnull(consolidated, 0) = 0 AND NOT archived AND at <= ? "
            "ORDER BY at, id", (now,))]

    def last_episode_id(self) -> int:
        """The newest episode's id, 0 when there is none: what a night saw (sleep keeps it as `slept_through`)."""
        return self._db.execute("SELECT ifnull(max(id), 0) FROM episodes").fetchone()[0]

    def new_since_last_night(self) -> bool:
        """Whether an error or a correction came after the last night saw the store and awaits sleep.

        Only the ids after the night's `slept_through` are read (a session start asks), however
        large the store."""
        through = int(self.get_state("slept_through") or 0)
        return self._db.execute(NEW_SINCE_LAST_NIGHT, (through,)).fetchone() is not None

    def lessons_to_consolidate(self) -> list:
        """Every lesson (archived and vetoed too) as consolidation compares them, by id."""
        return self._db.execute("SELECT id, text, kind, cwd, strength, seen, sources, archived, vetoed, state, "
                                "backing FROM lessons ORDER BY id").fetchall()

    def add_lesson(self, text: str, kind: str, cwd, strength: float, seen: int, sources: list, now: str,
                   state: str = "live") -> int:
        """Store a new lesson (its strength as of now), live or a candidate since now; returns its id."""
        cur = self._db.execute(
            "INSERT INTO lessons (id, text, kind, cwd, strength, seen, sources, created, updated, embedding, decayed, "
            "state, since, text_grams) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self._next_id("lessons"), lesson_words(text), kind, cwd, strength, seen, json.dumps(sources), now, now,
             embed.encoded(text), now, state, now if state == "candidate" else None, embed.grams(lesson_words(text))))
        return cur.lastrowid

    def set_lesson_states(self, updates: list, now: str) -> None:
        """[(id, state, backing dict)]: what backs each lesson now. One that becomes a candidate
        starts its wait (`since`) and closes its open prediction; one that goes live starts as
        strong as a new lesson (its wait may have faded it), so it gets its prediction."""
        self._db.executemany(
            "UPDATE lessons SET strength = CASE WHEN ?1 = 'live' AND state = 'candidate' THEN max(strength, 1.0) "
            "ELSE strength END, decayed = CASE WHEN ?1 = 'live' AND state = 'candidate' THEN ?2 ELSE decayed END, "
            "since = CASE WHEN ?1 = 'candidate' THEN (CASE WHEN state = 'candidate' THEN since ELSE ?2 END) "
            "ELSE NULL END, state = ?1, backing = ?3 WHERE id = ?4",
            [(state, now, json.dumps(backing, ensure_ascii=False, sort_keys=True), i) for i, state, backing in updates])
        self.close_predictions_not_live(now)

    def edit_lesson(self, lesson_id: int, text: str, backing: dict) -> None:
        """The person's own text for a lesson (and what backs it: their edit); it is live."""
        self._db.execute("UPDATE lessons SET text = ?, embedding = ?, backing = ?, state = 'live', since = NULL, "
                         "text_grams = ? WHERE id = ?", (lesson_words(text), embed.encoded(text),
                                                         json.dumps(backing, ensure_ascii=False, sort_keys=True),
                                                         embed.grams(lesson_words(text)), lesson_id))

    def unarchive_lesson(self, lesson_id: int, now: str) -> None:
        """Bring a lesson back from the archive (the person wants it), as strong as a new one if it faded."""
        self._db.execute("UPDATE lessons SET archived = 0, strength = max(strength, 1.0), decayed = ?, updated = ? "
                         "WHERE id = ? AND archived", (now, now, lesson_id))

    def lapse_lessons(self, ids, now: str) -> None:
        """Archive candidates nothing backed in time (quietly: they come back if seen again)."""
        self._db.executemany("UPDATE lessons SET archived = 1, updated = ? WHERE id = ? AND state = 'candidate'",
                             [(now, i) for i in ids])

    def update_lesson(self, lesson_id: int, text: str, cwd, strength: float, seen: int, sources: list,
                      archived: bool, now: str) -> None:
        """Rewrite a lesson that new surprises joined (its strength as of now)."""
        self._db.execute(
            "UPDATE lessons SET text = ?, cwd = ?, strength = ?, seen = ?, sources = ?, archived = ?, "
            "updated = ?, embedding = ?, decayed = ?, text_grams = ? WHERE id = ?",
            (lesson_words(text), cwd, strength, seen, json.dumps(sources), int(archived), now,
             embed.encoded(text), now, embed.grams(lesson_words(text)), lesson_id))

    def mark_consolidated(self, fed: dict, examined: list) -> None:
        """{episode id: lesson id it fed}; examined: ids looked at once that fed none (0)."""
        # in the order of the rows, each page of them written once (a first night's 150,000)
        self._db.executemany("UPDATE episodes SET consolidated = ? WHERE id = ?",
                             [(fed[eid], eid) for eid in sorted(fed)])
        self._db.executemany("UPDATE episodes SET consolidated = 0 WHERE id = ? AND consolidated IS NULL",
                             [(eid,) for eid in sorted(examined)])

    def sessions_between(self, since: str, until: str) -> list:
        """(cwd, at) of every session that started after since and up to until."""
        return [(r[0], r[1]) for r in self._db.execute(
            "SELECT cwd, at FROM episodes WHERE kind = 'session' AND at > ? AND at <= ? ORDER BY at", (since, until))]

    def lesson_text(self, lesson_id: int) -> str:
        """A lesson's text, '' when there is no such lesson."""
        row = self._db.execute("SELECT text FROM lessons WHERE id = ?", (lesson_id,)).fetchone()
        return row[0] if row else ""

    def open_predictions(self) -> list:
        """Unresolved predictions of lessons not vetoed, with their lesson's text, cwd, strength and
        what backs it (a dict, as lessons_to_decay gives it)."""
        return [dict(r, backing=_object(r["backing"])) for r in self._db.execute(
            "SELECT p.id, p.lesson_id, p.made, p.embedding, l.text, l.cwd, l.strength, l.backing FROM predictions p "
            "JOIN lessons l ON l.id = p.lesson_id WHERE p.resolved IS NULL AND NOT l.vetoed AND l.state = 'live' "
            "ORDER BY p.made, p.id").fetchall()]

    def episodes_between(self, kinds, since: str, until: str) -> list:
        """Episodes of these kinds that happened after since and up to until, in time order."""
        return [_row(r, self._facts) for r in self._db.execute(
            "SELECT id, kind, session_id, cwd, at, title, gist, facts, consolidated FROM episodes "
            "WHERE kind IN (%s) AND at > ? AND at <= ? AND NOT %s ORDER BY at, id" % (",".join("?" * len(kinds)), LIGHT),
            (*kinds, since, until))]

    def resolve_prediction(self, prediction_id: int, now: str, outcome, evidence: int | None = None) -> None:
        """Close a prediction as 'confirmed' (by the evidence episode), 'failed', or None: lapsed untested."""
        self._db.execute("UPDATE predictions SET resolved = ?, outcome = ?, evidence = ? WHERE id = ?",
                         (now, outcome, evidence, prediction_id))

    def set_lesson_strength(self, lesson_id: int, strength: float, now: str) -> None:
        self._db.execute("UPDATE lessons SET strength = ?, updated = ? WHERE id = ?", (strength, now, lesson_id))

    def lessons_without_prediction(self, min_strength: float) -> list:
        """Ids of live lessons at min_strength or more with no open prediction."""
        return [r[0] for r in self._db.execute(
            "SELECT id FROM lessons l WHERE NOT archived AND NOT vetoed AND state = 'live' AND strength >= ? "
            "AND NOT EXISTS "
            "(SELECT 1 FROM predictions p WHERE p.lesson_id = l.id AND p.resolved IS NULL) ORDER BY id",
            (min_strength,))]

    def add_prediction(self, lesson_id: int, text: str, now: str, vector) -> int:
        """Store a prediction (its vector: what would confirm it); returns its id."""
        cur = self._db.execute("INSERT INTO predictions (lesson_id, text, made, embedding) VALUES (?, ?, ?, ?)",
                               (lesson_id, redact(text), now, embed.encode(vector)))
        return cur.lastrowid

    # -- opting out and forgetting ------------------------------------------------------

    def note_opted_out(self, path_hash: str, out: bool = True) -> None:
        """Count a transcript as kept out (or no longer, once it is ingested); no write if unchanged."""
        if bool(self._db.execute("SELECT 1 FROM opted_out WHERE hash = ?", (path_hash,)).fetchone()) != out:
            with self.transaction():
                self._db.execute(*(("INSERT INTO opted_out (hash, at) VALUES (?, ?)", (path_hash, iso())) if out
                                   else ("DELETE FROM opted_out WHERE hash = ?", (path_hash,))))

    def forgets_or_keeps_out(self) -> tuple:
        """(whether anything is forgotten, whether any transcript is marked kept out)."""
        return self._db.execute("SELECT EXISTS (SELECT 1 FROM forgotten), EXISTS (SELECT 1 FROM opted_out)").fetchone()

    def forgotten_among(self, hashes) -> set:
        """The tombstones among these hashes (episodes forgotten: never stored again)."""
        return {r[0] for r in self._in("SELECT hash FROM forgotten WHERE hash IN (%s)", hashes)}

    def all_tombstones(self) -> list:
        """[(hash, alias)] of every tombstone (forget.adopt copies them into the file beside)."""
        return [(h, bool(a)) for h, a in self._db.execute("SELECT hash, alias FROM forgotten")]

    def add_tombstones(self, rows, now: str) -> int:
        """Keep tombstones [(hash, alias)] read from the file beside; returns how many were new."""
        before = self._db.total_changes
        self._db.executemany("INSERT OR IGNORE INTO forgotten VALUES (?, ?, ?)", [(h, now, int(a)) for h, a in rows])
        return self._db.total_changes - before

    def memories_under(self, folder: str) -> tuple:
        """(episode ids, lesson ids, session ids, passage ids) of everything stored for a folder and below it."""
        where, folder = "WHERE cwd = ? OR cwd LIKE ? ESCAPE '\\'", folder.rstrip("/")
        args = (folder or "/", folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%")
        sessions = [r[0] for r in self._db.execute(f"SELECT id FROM sessions {where}", args)]
        episodes = {r[0] for r in self._db.execute(f"SELECT id FROM episodes {where}", args)}
        episodes |= {ep["id"] for ep in self.of_sessions(sessions)[0]}
        lessons = [r[0] for r in self._db.execute(f"SELECT id FROM lessons {where}", args)]
        passages = {r[0] for r in self._db.execute(f"SELECT id FROM passages {where}", args)}
        passages |= {ps["id"] for ps in self.passages_of_sessions(sessions)}
        return sorted(episodes), lessons, sessions, sorted(passages)

    def memories_by_folder(self) -> list:
        """[(cwd, episodes, passages)] of every working folder memories are stored for."""
        counts = {}
        for table, at in (("episodes", 0), ("passages", 1)):
            for cwd, n in self._db.execute(f"SELECT cwd, count(*) FROM {table} WHERE cwd IS NOT NULL GROUP BY cwd"):
                counts.setdefault(cwd, [0, 0])[at] = n
        return [(cwd, e, p) for cwd, (e, p) in counts.items()]

    def sessions_starting(self, prefix: str) -> list:
        """[{id, cwd, started}] of the sessions whose id starts with prefix (forget --session)."""
        return [dict(r) for r in self._db.execute(
            "SELECT id, cwd, started FROM sessions WHERE substr(id, 1, ?) = ? ORDER BY id", (len(prefix), prefix))]

    def memories_of_session(self, session_id: str) -> tuple:
        """(episode ids, passage ids, whether its row is stored) of one session."""
        return ([r[0] for r in self._db.execute("SELECT id FROM episodes WHERE session_id = ? ORDER BY id", (session_id,))],
                [r[0] for r in self._db.execute("SELECT id FROM passages WHERE session_id = ? ORDER BY id", (session_id,))],
                self._db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None)

    def passages_by_id(self, ids) -> dict:
        """{id: passage} for the ids that still exist."""
        return {row["id"]: _row(row) for row in self._in("SELECT * FROM passages WHERE id IN (%s)", ids)}

    def passages_of_sessions(self, ids) -> list:
        """Every passage of these sessions (where a forgotten episode's words may be copied)."""
        return [_row(r) for r in self._in("SELECT * FROM passages WHERE session_id IN (%s)", ids)]

    def of_sessions(self, ids) -> tuple:
        """([every episode], {id: title}) of these sessions: where a forgotten episode's words may be."""
        return ([_row(r) for r in self._in("SELECT * FROM episodes WHERE session_id IN (%s)", ids)],
                {r[0]: r[1] or "" for r in self._in("SELECT id, title FROM sessions WHERE id IN (%s)", ids)})

    def forget(self, tombstones, episode_ids, scrubbed, lesson_ids, reworded, session_ids, titles, now: str,
               morning: str | None = None, passage_ids=(), scrubbed_passages=(), answers=(), last: str = "",
               moved=()) -> dict:
        """Forget in one transaction (forget.apply says what); freed bytes zeroed, index merged, WAL emptied."""
        db = self._db
        db.execute("PRAGMA secure_delete = ON")  # freed pages and cells are overwritten with zeros
        with self.transaction():
            db.executemany("INSERT OR IGNORE INTO forgotten VALUES (?, ?, ?)", [(h, now, int(a)) for h, a in tombstones])
            db.executemany("UPDATE predictions SET evidence = NULL WHERE evidence = ?", [(i,) for i in episode_ids])
            db.executemany("DELETE FROM episodes WHERE id = ?", [(i,) for i in episode_ids])
            db.executemany("UPDATE episodes SET title = ?, gist = ?, detail = ?, facts = ?, embedding = ?, context = ?, "
                           + EPISODE_GRAMS + " WHERE id = ?", [(n["title"], n["gist"], n["detail"], json.dumps(
                               n["facts"], ensure_ascii=False, sort_keys=True), embed.encode(embed.vector(
                                   n["title"] + "\n" + n["gist"])), n["context"], *episode_grams(
                                   n["title"], n["gist"], n["detail"], n["context"]), eid) for eid, n in scrubbed])
            db.executemany("DELETE FROM lessons WHERE id = ?", [(i,) for i in lesson_ids])  # predictions cascade
            db.executemany("UPDATE lessons SET text = ?, sources = ?, seen = ?, embedding = ?, updated = ?, "
                           "text_grams = ? WHERE id = ?",
                           [(lesson_words(t), json.dumps(src), max(seen, 1), embed.encode(embed.vector(redact(t))), now,
                             embed.grams(lesson_words(t)), i) for i, t, src, seen in reworded])
            for i, cwd in moved:    # its predictions name where it is filed (sleep.predict): now there
                was = (db.execute("SELECT cwd FROM lessons WHERE id = ?", (i,)).fetchone() or [None])[0]
                if was:
                    db.execute("UPDATE predictions SET text = replace(text, ?, ?) WHERE lesson_id = ?",
                               (f" again in {was}: ", f" again in {cwd}: ", i))
            db.executemany("UPDATE lessons SET cwd = ?, updated = ? WHERE id = ?", [(cwd, now, i) for i, cwd in moved])
            db.executemany("DELETE FROM passages WHERE id = ?", [(i,) for i in passage_ids])
            db.executemany("UPDATE passages SET text = ?, context = ?, embedding = ?, text_grams = ?, context_grams = ? "
                           "WHERE id = ?", [(text, context, embed.encoded(migrations.unlabelled(text)), *passage_grams(text, context), i)
                                            for i, text, context in scrubbed_passages])
            db.executemany("DELETE FROM sessions WHERE id = ?", [(s,) for s in session_ids])
            db.executemany("UPDATE sessions SET title = ? WHERE id = ?", [(t, s) for s, t in titles])
            db.executemany("DELETE FROM model_answers WHERE key = ?", [(k,) for k in answers])
            for table, ids in (("episodes", episode_ids), ("lessons", lesson_ids), ("passages", passage_ids)):
                self._keep_floor(table, ids)
            self.set_state("forget_last", last)  # its ids, its files still to rewrite (forget.last_forget)
            if morning is not None:  # the report's facts without them; a stopped sleep's facts dropped
                self.set_state("morning", morning)
                self.set_state("night_facts", "{}")
            if self.has_recall_index():  # one merged segment: the deleted rows' terms leave its pages
                db.execute("INSERT INTO recall_index (recall_index) VALUES ('optimize')")
        busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return dict(episodes=len(episode_ids), lessons=len(lesson_ids), reworded=len(reworded),
                    scrubbed=len(scrubbed) + len(scrubbed_passages), sessions=len(session_ids),
                    passages=len(passage_ids), wal_emptied=not busy)

    def forget_finished(self, last: str) -> tuple:
        """A forget's files are rewritten: the database compacted, then marked so (last:
        forget.finished's record), the WAL emptied; (whether it was emptied, whether compacted).

        secure_delete zeroes what a forget deletes, but a page keeps the bytes of rows that an
        ingest or a merge of the text index deleted before without it (the full forget campaign
        found a forgotten word in a live page's free space, in 5 of 30 forgets): VACUUM writes
        every page anew. A database too big for the disk's free space keeps them (said)."""
        try:
            self._db.execute("VACUUM")
            compacted = True
        except sqlite3.OperationalError as e:   # no room for the copy, or another writer held on
            logging.getLogger("openmemory").warning("forget: the database was not compacted: %s", e)
            compacted = False
        if compacted:                           # else the same forget run again compacts it
            with self.transaction():
                self.set_state("forget_last", last)
        return not self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0], compacted

    # -- the optional model (llm.py asks; these keep what it said) -----

    def model_answers(self) -> list:
        """[(key, answer, item)] of every cached answer of the model (a day's budget: a few hundred at most)."""
        return self._db.execute("SELECT key, answer, item FROM model_answers").fetchall()

    def model_answer(self, key: str) -> str | None:
        """The model's answer to the question with this key, when it was asked before."""
        row = self._db.execute("SELECT answer FROM model_answers WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def save_model_answer(self, key: str, model: str, answer: str, now: str, item: str | None = None) -> None:
        """Keep an answer the model gave (redacted like everything stored), with the item it is about."""
        self._db.execute("INSERT INTO model_answers (key, model, answer, asked, item) VALUES (?, ?, ?, ?, ?) "
                         "ON CONFLICT (key) DO UPDATE SET answer = excluded.answer, asked = excluded.asked, "
                         "item = excluded.item", (key, model, redact(answer), now, item))

    def drop_model_answer(self, key: str) -> None:
        """Forget the answer kept for one question (it is asked again)."""
        self._db.execute("DELETE FROM model_answers WHERE key = ?", (key,))

    def doubtful_corrections(self, now: str | None = None, limit: int = 200) -> list:
        """Live correction episodes (up to now) the rules marked doubtful and no model or judge decided, newest first."""
        return [_row(r) for r in self._db.execute(
            "SELECT * FROM episodes WHERE kind = 'correction' AND title <> '' AND NOT archived AND (? IS NULL OR at <= ?) "
            "AND json_extract(facts, '$.doubtful') AND json_extract(facts, '$.decided') IS NULL "
            "AND json_extract(facts, '$.judge') IS NULL "
            "ORDER BY at DESC, id DESC LIMIT ?", (now, now, limit))]

    def unjudged_corrections(self, now: str, limit: int = 2000) -> list:
        """Live correction episodes up to now that no judge (nor an earlier model) has read, newest first."""
        return [_row(r) for r in self._db.execute(
            "SELECT * FROM episodes WHERE kind = 'correction' AND NOT archived AND at <= ? "
            "AND json_extract(facts, '$.judge') IS NULL AND json_extract(facts, '$.decided') IS NULL "
            "ORDER BY at DESC, id DESC LIMIT ?", (now, limit))]

    def settle_judged(self, episode_id: int, facts: dict, reexamine: bool, shown: tuple = ()) -> None:
        """Record a judge's verdict in an episode's facts; one to examine again (a correction the
        rules found no lesson in, or left doubtful, that the judge found lasting) is pending again.
        shown: (title, gist) a light episode the judge called a correction is shown by from now on."""
        self._db.execute("UPDATE episodes SET facts = ? WHERE id = ?",
                         (json.dumps(redact_obj(facts), ensure_ascii=False, sort_keys=True), episode_id))
        if shown:
            title, gist = redact(shown[0]), redact(shown[1])
            self._db.execute("UPDATE episodes SET title = ?, gist = ?, title_grams = ?, gist_grams = ? "
                             "WHERE id = ? AND title = ''", (title, gist, embed.grams(title), embed.grams(gist), episode_id))
        if reexamine:
            self._db.execute("UPDATE episodes SET consolidated = NULL WHERE id = ? AND consolidated = 0",
                             (episode_id,))

    def set_lesson_backing(self, lesson_id: int, backing: dict) -> None:
        """Keep what a judge said of a lesson itself (in `backing`); review.settle then decides its state."""
        self._db.execute("UPDATE lessons SET backing = ? WHERE id = ?",
                         (json.dumps(redact_obj(backing), ensure_ascii=False, sort_keys=True), lesson_id))

    def join_lessons(self, keep: dict, gone: list, seen: int, now: str) -> None:
        """Lessons that say what `keep` says (judge.judge_same) become part of it: their sources are
        its sources (each episode now feeds it), a verdict on one of them that it lacks is its own,
        and they are gone (their ids never given again). Its words stay its own. Call inside a
        transaction."""
        sources = list(dict.fromkeys(keep["sources"] + [i for ls in gone for i in ls["sources"]]))
        backing = dict(keep["backing"])
        for ls in gone:
            if "judge" in ls["backing"] and "judge" not in backing:
                backing["judge"] = ls["backing"]["judge"]
        strength = max([float(keep["strength"])] + [float(ls["strength"]) for ls in gone])
        self.update_lesson(keep["id"], keep["text"], keep["cwd"], strength, seen, sources, bool(keep["archived"]), now)
        if backing != keep["backing"]:
            self.set_lesson_backing(keep["id"], backing)
        self.mark_consolidated({i: keep["id"] for ls in gone for i in ls["sources"]}, [])
        ids = [ls["id"] for ls in gone]
        self._db.executemany("DELETE FROM lessons WHERE id = ?", [(i,) for i in ids])     # predictions cascade
        self._keep_floor("lessons", ids)

    def reword_lesson(self, lesson_id: int, text: str) -> None:
        """Replace a lesson's words (and the vector recall compares them by)."""
        self._db.execute("UPDATE lessons SET text = ?, embedding = ?, text_grams = ? WHERE id = ?",
                         (lesson_words(text), embed.encode(embed.vector(text)), embed.grams(lesson_words(text)), lesson_id))

    def sessions_without_summary(self, limit: int) -> list:
        """Live session episodes whose gist no model has led yet, newest first."""
        return [_row(r) for r in self._db.execute(
            "SELECT * FROM episodes WHERE kind = 'session' AND NOT archived "
            "AND json_extract(facts, '$.summary') IS NULL ORDER BY at DESC, id DESC LIMIT ?", (limit,))]

    def set_session_summary(self, episode_id: int, sentence: str, gist_limit: int = 600) -> None:
        """Lead a session's gist with the model's sentence; the rules' gist follows it."""
        row = self._db.execute("SELECT title, gist, facts FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        if row is None:
            return
        sentence = redact(sentence)
        facts = dict(_row(row)["facts"], summary=sentence)
        gist = clip(f"{sentence} {row['gist']}", gist_limit)
        self._db.execute("UPDATE episodes SET gist = ?, facts = ?, embedding = ?, gist_grams = ? WHERE id = ?",
                         (gist, json.dumps(facts, ensure_ascii=False, sort_keys=True),
                          embed.encode(embed.vector(row["title"] + "\n" + gist)), embed.grams(gist), episode_id))

    # -- render: lessons as written into Claude Code's memory ---------------------------

    def all_lessons(self) -> list:
        """Every lesson (archived and vetoed included), by id; `sources` decoded to a list of ids."""
        out = []
        for row in self._db.execute("SELECT * FROM lessons ORDER BY id"):
            lesson = dict(row)
            lesson.pop("embedding", None)
            for column in _GRAMS_COLUMNS:
                lesson.pop(column, None)
            try:
                sources = json.loads(lesson["sources"] or "[]")
            except ValueError:
                sources = []
            lesson["sources"] = [int(s) for s in sources if isinstance(s, int) or str(s).isdigit()]
            lesson["backing"] = _object(lesson.get("backing"))
            out.append(lesson)
        return out

    def episodes_by_id(self, ids, fields: tuple = ()) -> dict:
        """{id: episode} for the ids that still exist (with only these fields, id among them, if named).
        Inside facts_once, the same read again with nothing written since (no commit of another
        connection, no change of this one) is the last such read's rows, as they were read (its
        reader had copies): a first night's render and morning report each read the same 130,000
        sources."""
        columns, ids = ", ".join(fields) or "*", sorted(set(ids))
        if self._facts is None:
            return self._episodes_by_id(columns, ids)
        read = (ids, self.data_version(), self._db.total_changes)
        last = self._facts.last_read.pop(columns, None)
        if last is not None and last[0] == read:
            return last[1]
        rows = self._episodes_by_id(columns, ids)
        self._facts.last_read[columns] = (read, rows)
        return {i: dict(row) for i, row in rows.items()}

    def _episodes_by_id(self, columns: str, ids: list) -> dict:
        return {row["id"]: _row(row, self._facts) for row in self._in(f"SELECT {columns} FROM episodes WHERE id IN (%s)",
                                                                          ids)}

    def same_failures(self, facts: dict) -> list:
        """The ids of the failures stored with this cause key and command (any session), in order."""
        if not facts.get("cause"):
            return []
        return [r[0] for r in self._db.execute(
            "SELECT id FROM episodes WHERE kind = 'error' AND json_extract(facts, '$.cause') = ? "
            "AND json_extract(facts, '$.command') IS ? ORDER BY id", (facts["cause"], facts.get("command")))]

    def backing_sources(self, ids) -> dict:
        """{id: episode} as what backs a lesson reads them (backing.backers): the kind and session of
        each, and the facts of a correction only (a failure's are never read there: a lesson of a
        heavy year has 100,000 of them, decoded for nothing; nor its time, folder or title)."""
        return {row["id"]: _row(row, self._facts) for row in self._in(
            "SELECT id, session_id, kind, CASE WHEN kind = 'correction' THEN facts ELSE '{}' END "
            "AS facts FROM episodes WHERE id IN (%s)", ids)}

    def predictions_by_lesson(self) -> dict:
        """{lesson id: [prediction, ...]} in the order they were made."""
        out = {}
        for row in self._db.execute("SELECT id, lesson_id, text, made, resolved, outcome, evidence "
                                   "FROM predictions ORDER BY made, id"):
            out.setdefault(row["lesson_id"], []).append(dict(row))
        return out

    def session_cwds(self) -> list:
        """Every distinct working folder a stored session ran in."""
        return [row[0] for row in self._db.execute(
            "SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL AND cwd != '' ORDER BY cwd")]

    def veto_lessons(self, ids, now: str | None = None) -> None:
        """Mark lessons vetoed by the person: never rendered again, their open predictions closed."""
        with self.transaction():
            self._db.executemany("UPDATE lessons SET vetoed = 1 WHERE id = ?", [(i,) for i in ids])
            self.close_predictions_not_live(now or iso())

    def unveto_lessons(self, ids) -> None:
        """The person took back their veto of these lessons (render.undo_veto)."""
        with self.transaction():
            self._db.executemany("UPDATE lessons SET vetoed = 0 WHERE id = ?", [(i,) for i in ids])

    def close_predictions_not_live(self, now: str) -> int:
        """Close the open predictions of vetoed lessons and candidates (resolved, no outcome):
        nothing is left waiting on a lesson the person rejected or that is not rendered. Call
        inside a transaction; returns how many."""
        return self._db.execute(
            "UPDATE predictions SET resolved = ? WHERE resolved IS NULL AND lesson_id IN "
            "(SELECT id FROM lessons WHERE vetoed OR state = 'candidate')", (now,)).rowcount


GONE_FROM = "#replaced-by-another-session:"     # the path of a session whose file now holds another


_SESSION = ("id", "path", "mtime_ns", "size", "ingested", "episodes", "cwd", "title", "started", "ended", "version",
            "turns", "skipped", "project")
# A session read again once its folder is gone (a worktree removed) keeps the project it was read in.
_SESSION_UPSERT = (f"INSERT INTO sessions ({', '.join(_SESSION)}) VALUES ({', '.join('?' * len(_SESSION))}) "
                   "ON CONFLICT (id) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in _SESSION[1:-1])
                   + ", project = CASE WHEN excluded.cwd IS sessions.cwd THEN coalesce(excluded.project, "
                     "sessions.project) ELSE excluded.project END")
# `+kind`: no index on kind, so SQLite walks the ids after the last night, not every error
# and correction ever stored (which the kind index would have it read, the old ones included).
# A light episode (episodes.SETTLED: a message the rules settled as nothing, kept for a judge, with
# no title, gist or detail) is counted, listed and waited for by nothing but the judge.
LIGHT = "(kind = 'correction' AND title = '')"
NEW_SINCE_LAST_NIGHT = ("SELECT 1 FROM episodes WHERE id > ? AND +kind IN ('error', 'correction') "
                        f"AND consolidated IS NULL AND NOT archived AND NOT {LIGHT} LIMIT 1")
_RECALL_COLUMNS = ("'episode' AS source, id, kind, title, gist, cwd, at, strength, recalls, archived, embedding, "
                   "session_id, NULL AS seq, agent, NULL AS state")
_RECALL_PASSAGE_COLUMNS = ("'passage' AS source, id, kind, '' AS title, text AS gist, cwd, at, strength, recalls, "
                           "archived, embedding, session_id, seq, agent, NULL AS state")
_RECALL_LESSON_COLUMNS = ("'lesson' AS source, id, 'lesson' AS kind, text AS title, text AS gist, cwd, updated AS at, "
                          "strength, 0 AS recalls, archived, embedding, NULL AS session_id, NULL AS seq, NULL AS agent")


def _holds(text: str, stems: list) -> str:
    return " OR ".join([f"instr(lower({text}), ?) > 0"] * len(stems))


def _object(text) -> dict:
    """A JSON object column as a dict ({} when it is anything else)."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


_GRAMS_COLUMNS = ("title_grams", "gist_grams", "detail_grams", "text_grams", "context_grams")     # the index's, not shown


def _row(row: sqlite3.Row, known: "_Decoded | None" = None) -> dict:
    """A row as a dict, its facts decoded (a JSON object, else {}). known: Store.facts_once's
    _Decoded: the same stored text of the same episode is decoded once."""
    out = dict(row)
    out.pop("embedding", None)
    for column in _GRAMS_COLUMNS:
        out.pop(column, None)
    if known is not None:
        return known.row(out)
    if "facts" in out:
        out["facts"] = _decoded(json.loads, out["facts"])
    return out


def _decoded(decode, text) -> dict:
    try:
        facts = decode(text)
    except ValueError:
        facts = None
    return facts if isinstance(facts, dict) else {}


def shared_loads(text: str):
    """json.loads(text), each key and short string in it one copy (_Decoded): a large report read
    back (a first night's morning lists 130,000 sources, each with the same keys)."""
    return _Decoded().decode(text)


class _Decoded:
    """What a Store.facts_once has read: {episode id: (the stored text's fingerprint, its facts
    decoded)}, and one copy of each key, short string and short text column read (a heavy
    year's 150,000 surprises repeat the same keys, tools, commands, causes, folders and
    sessions: one copy each, not one per row: with the cache's text let go and title and gist
    not read, the 60,000 sessions' pending surprises held 550 MB, now 215)."""

    SHARED = ("kind", "session_id", "cwd")      # columns whose text repeats across rows
    SHORT = 200                                 # a string value up to this long is kept once

    def __init__(self):
        self.by_id: dict = {}
        self.strings: dict = {}
        self.last_read: dict = {}       # Store.episodes_by_id's last of these columns: (what it read, its rows
                                        # as read), until read again
        once = self.strings.setdefault

        def pairs(items):               # json's object_pairs_hook: the same dict, shared strings
            return {once(k, k): (once(v, v) if v.__class__ is str and len(v) <= self.SHORT else v)
                    for k, v in items}
        self.decode = json.JSONDecoder(object_pairs_hook=pairs).decode

    def row(self, out: dict) -> dict:
        once = self.strings.setdefault
        for column in self.SHARED:
            value = out.get(column)
            if value.__class__ is str:
                out[column] = once(value, value)
        if "facts" not in out:
            return out
        text = out["facts"]
        if "id" not in out or text == "{}":
            out["facts"] = _decoded(json.loads, text)
            return out
        mark = hash(text)                       # not the text: the facts alone are kept
        seen = self.by_id.get(out["id"])
        if seen is not None and seen[0] == mark:
            out["facts"] = seen[1]
            return out
        out["facts"] = _decoded(self.decode, text)
        self.by_id[out["id"]] = (mark, out["facts"])
        return out


def sqlite_has_fts5() -> bool:
    """Whether this Python's SQLite has FTS5, asked of a database in memory (doctor: a memory.db
    that does not open is its own failure, not also this one's)."""
    probe = sqlite3.connect(":memory:")
    try:
        return migrations.fts5_available(probe)
    finally:
        probe.close()


# --------------------------------------------------------------------------------------
# The connection: opened, set up, migrated

def connect(path=None, busy_ms: int | None = None, read_only_ok: bool = False) -> Store:
    """Open (creating if needed) the memory database: folder 0700, file 0600, WAL, migrated.
    busy_ms: how long its writes wait for another process's (default busy_timeout_ms()).
    read_only_ok: a reading verb's open (recall, show, status, lessons, backup). A database this
    process may read but not write (the file or its folder read-only to it, or on a read-only
    disk) is then opened read-only and left as it is (Store.read_only says why); without it,
    such a database is refused in one line saying what to do, before anything is written."""
    path = Path(path) if path else paths.db_path()
    unwritable = _unwritable(path)
    if unwritable is not None:
        if read_only_ok and os.access(path, os.R_OK):
            return _connect_read_only(path, unwritable)
        raise unwritable
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.parent == paths.home():
            _private(path.parent)
        _recover_unsynced(path)  # a first ingest stopped with the machine: that memory is moved aside
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        _private(path)
        timeout_ms = busy_timeout_ms() if busy_ms is None else busy_ms
        db = sqlite3.connect(str(path), timeout=timeout_ms / 1000, isolation_level=None,
                             check_same_thread=False)
    except OSError as e:
        raise StoreError(str(os_fault(e, "open the memory database in"))) from e
    except sqlite3.Error as e:
        raise StoreError(f"cannot open the memory database at {path}: {e}; check the folder's "
                         f"permissions or set OPENMEMORY_HOME") from e
    store = Store(_ready(db, path, timeout_ms), path, timeout_ms)
    paths.seen_in(store.folders_seen_in())
    paths.moved(store.project_moves())
    return store


def _private(path: Path) -> None:
    """No one else may read it (group and others' bits taken away); the owner's own bits stay:
    a database or folder its owner made read-only (chmod 0444) is not made writable again."""
    mode = os.stat(path).st_mode & 0o7777
    if mode & 0o077:
        os.chmod(path, mode & 0o700)


def _unwritable(path: Path) -> StoreError | None:
    """Why this process could not write the database that is at path (the file, or its folder
    where SQLite keeps the -wal and -shm beside it, read-only to it, or on a read-only disk), as
    the one line a writing verb fails with; None when it can, or when there is no database yet."""
    import errno
    if not path.is_file():
        return None
    for where, need, doing in ((path, os.W_OK, "write the memory database at"),
                               (path.parent, os.W_OK | os.X_OK, "write the memory database's folder")):
        if os.access(where, need):
            continue
        try:
            read_only_disk = bool(os.statvfs(where).f_flag & os.ST_RDONLY)
        except OSError:
            read_only_disk = False
        code = errno.EROFS if read_only_disk else errno.EACCES
        return StoreError(str(os_fault(OSError(code, os.strerror(code), str(where)), doing)))
    return None


READ_ONLY_RETRY_SECONDS = 2.0    # how long a reader that cannot write tries again while another process writes


def _files_state(path: Path) -> tuple:
    """Size and time of the database and of its -wal and -shm (None for one absent): what a writer changes."""
    out = []
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            st = p.stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


def _connect_read_only(path: Path, why: StoreError) -> Store:
    """The database opened to read only, never written: SQLite's mode=ro, or, where it cannot
    make its -shm beside a WAL database (the folder read-only) and no WAL holds writes that the
    file lacks, immutable=1 (nothing else can write it there either). A schema this version would
    have to migrate first cannot be read so: said in one line with what to do."""
    import time
    uri = "file:" + urllib.parse.quote(str(path)) + "?mode=ro"
    wal = Path(f"{path}-wal")
    first, db, deadline = _files_state(path), None, None
    while db is None:
        tries = [uri]
        if not (wal.exists() and wal.stat().st_size) and not os.access(path.parent, os.W_OK | os.X_OK):
            tries.append(uri + "&immutable=1")
        for tried in tries:
            try:
                db = sqlite3.connect(tried, uri=True, isolation_level=None, check_same_thread=False)
                db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
                break
            except sqlite3.DatabaseError as e:
                if db is not None:
                    db.close()
                    db = None
                if is_damage(e):
                    raise damaged(path, e) from e
                error = e
        if db is not None:
            break
        # Another process writing it makes and takes away its -wal and -shm beside it, which a
        # reader that cannot write there needs as they were: "unable to open database file" or
        # "attempt to write a readonly database" for a moment. Tried again for a while; said so.
        deadline = deadline or time.monotonic() + READ_ONLY_RETRY_SECONDS
        if time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if db is None:
        if _files_state(path) != first:
            raise StoreError(f"{why}; it could not be read as it is either: another process was writing it the "
                             f"whole time ({error}); try again in a moment") from error
        raise StoreError(f"{why}; it could not be read as it is either ({error})") from error
    try:
        db.row_factory = sqlite3.Row
        version = db.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as e:
        db.close()
        raise explain(e, path) from e
    if version != len(migrations.MIGRATIONS):
        try:
            if version > len(migrations.MIGRATIONS):
                migrations.migrate(db, path)    # raises, writing nothing: newer than this openmemory knows
        finally:
            db.close()
        raise StoreError(f"{why}; it cannot be read as it is: it was written by an older openmemory and "
                         f"needs a write to bring it up to date")
    store = Store(db, path, 0)
    store.read_only = str(why)
    paths.seen_in(store.folders_seen_in())
    paths.moved(store.project_moves())
    return store


# The page size of a new database. An episode's row (its texts, facts and vector) is about
# 1.5 KB: two fitted in a page of SQLite's default 4 KB and a quarter of each page stayed empty;
# in 8 KB pages five fit (dense sessions: the database 0.66 of the transcripts' bytes, 0.59).
PAGE_SIZE = 8192


def _ready(db: sqlite3.Connection, path, busy_ms: int) -> sqlite3.Connection:
    """The connection as every caller gets it: rows by name, WAL, busy timeout, foreign keys,
    the schema up to date; damage or a newer schema said in one line (the connection closed)."""
    try:
        db.row_factory = sqlite3.Row
        db.execute(f"PRAGMA busy_timeout = {busy_ms}")
        if not db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            db.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file only: one that exists keeps its own
            db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # ... and its free pages (_give_back_free_pages)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        migrations.migrate(db, path)
    except sqlite3.DatabaseError as e:
        db.close()
        raise explain(e, path) from e
    except BaseException:
        db.close()
        raise
    return db


# --------------------------------------------------------------------------------------
# Write transactions

class Transaction:
    """BEGIN IMMEDIATE ... COMMIT, the episodes and passages stored in it indexed first (_index_stored); inside
    another transaction it joins that one (all or none; not a savepoint: one costs a statement
    journal per transcript of a bulk ingest)."""

    _outer = False

    def __init__(self, db):
        self._db = db

    def __enter__(self):
        if not self._db.in_transaction:
            self._db.execute("BEGIN IMMEDIATE")
            self._outer = True

    def __exit__(self, exc_type, exc, tb):
        if self._outer:
            ok = not exc_type
            try:
                if ok:
                    _index_stored(self._db)
            except BaseException:
                ok = False
                raise
            finally:
                _forget_unindexed(self._db)
                if ok or self._db.in_transaction:  # SQLite rolls back itself on a full disk (SQLITE_FULL)
                    self._db.execute("COMMIT" if ok else "ROLLBACK")


# The text index's fields of an episode (m007): a title that begins its gist, whole or cut (m013), is not indexed twice.
INDEX_EPISODES = (f"INSERT INTO recall_index ({migrations.INDEX_FIELDS}) SELECT "
                  f"{migrations.EPISODE_FIELDS.format('episodes')} FROM episodes WHERE id >= ?")
# ... and of a passage (m010): its text without who said it, its context.
INDEX_PASSAGES = (f"INSERT INTO recall_index ({migrations.INDEX_FIELDS}) SELECT "
                  f"{migrations.PASSAGE_FIELDS.format('passages')} FROM passages WHERE id >= ?")
# What the index reads beside each field, where it holds Chinese or Japanese (migrations.GRAMS, embed.grams):
# set in the same statement as the field, wherever the store writes one.
EPISODE_GRAMS = "title_grams = ?, gist_grams = ?, detail_grams = ?, context_grams = ?"


def episode_grams(title: str, gist: str, detail, context: str) -> tuple:
    """An episode's grams columns (EPISODE_GRAMS), in their order."""
    return embed.grams(title), embed.grams(gist), embed.grams(detail or ""), embed.grams(context or "")


def passage_grams(text: str, context: str) -> tuple:
    """A passage's grams columns: of its text as the index reads it (without who said it), of its context."""
    return embed.grams(migrations.unlabelled(text)), embed.grams(context or "")


_UNINDEXED = {}     # (connection, table) -> the first id its open transaction stored and did not index


def _note(text: str, title: str, cwd, now: str, conversation) -> dict:
    """A note as it is stored: its words with whitespace folded (a one-line note) or trimmed,
    its title (default its first line), redacted (clean_episode)."""
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    if not text:
        raise OpenMemoryError("a note needs some text")
    title = clip(title, 100) if title.strip() else clip(text.splitlines()[0], 100)
    return clean_episode({"key": "", "kind": "note", "title": title, "gist": text, "detail": "", "at": now,
                          "facts": {"conversation": conversation} if conversation else {}, "cwd": cwd})


def _stored(db: sqlite3.Connection, episode_id: int, table: str = "episodes") -> None:
    """Note an episode (or passage) just stored: it enters the text index with the others before the
    commit (m008)."""
    _UNINDEXED.setdefault((db, table), episode_id)


def _index_stored(db: sqlite3.Connection) -> None:
    """Index the episodes and passages stored in this transaction, one statement each (rowids only
    grow): at its commit, and before one of them is changed or deleted (their triggers expect them
    indexed)."""
    firsts = [(sql, _UNINDEXED.pop((db, table), None)) for table, sql in (("episodes", INDEX_EPISODES),
                                                                          ("passages", INDEX_PASSAGES))]
    if any(first is not None for _, first in firsts) and \
            db.execute("SELECT 1 FROM sqlite_master WHERE name = 'recall_index'").fetchone():
        for sql, first in firsts:
            if first is not None:
                db.execute(sql, (first,))


def _forget_unindexed(db: sqlite3.Connection) -> None:
    for table in ("episodes", "passages"):
        _UNINDEXED.pop((db, table), None)


# --------------------------------------------------------------------------------------
# A bulk ingest's writes

# A bulk ingest's connection: every transaction inserts into the same indexes (episode keys
# and sessions in no order), so with SQLite's 2 MB page cache their pages were read back from
# the file again and again, and a checkpoint every 1,000 pages of WAL wrote them to the file
# as often. 32 MB holds the indexes of a heavy year; 4,000 pages is a WAL of 32 MB at most
# (16 MB in a database of 4 KB pages, made before PAGE_SIZE).
BULK_CACHE_KB = 32 << 10
BULK_CHECKPOINT_PAGES = 4000


@contextmanager
def _bulk_writes(db: sqlite3.Connection, path):
    """The connection's page cache and checkpoint interval for a bulk ingest, then as they were;
    into a new memory (no episode, lesson or tombstone yet), writes unsynced until its end,
    when all is synced at once (why, and what a stop in between leaves: below)."""
    cache = db.execute("PRAGMA cache_size").fetchone()[0]
    checkpoint = db.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    new = not db.execute("SELECT EXISTS (SELECT 1 FROM episodes) OR EXISTS (SELECT 1 FROM lessons) "
                         "OR EXISTS (SELECT 1 FROM forgotten)").fetchone()[0]
    fast = new and _begin_unsynced(path)
    db.execute(f"PRAGMA cache_size = {-BULK_CACHE_KB}")
    db.execute(f"PRAGMA wal_autocheckpoint = {BULK_CHECKPOINT_PAGES}")
    if fast:
        db.execute("PRAGMA synchronous = OFF")
    try:
        yield
    finally:
        db.execute(f"PRAGMA cache_size = {int(cache)}")
        db.execute(f"PRAGMA wal_autocheckpoint = {int(checkpoint)}")
        _give_back_free_pages(db)
        if fast:
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()  # what it cannot copy stays in the WAL
            _end_unsynced(path)  # the database and its WAL synced, the marker gone


def _give_back_free_pages(db: sqlite3.Connection) -> None:
    """The file's free pages given back to the disk (a database made with auto_vacuum =
    INCREMENTAL, as connect makes a new one; in another, nothing happens). A bulk ingest's merges
    of the text index free pages that nothing took again: 68 of 8 KB after a first ingest of the
    1,000 dense sessions (0.56 MB, 5% of the file). Another process's write in the way: they
    stay free, for the next writes to take (no wait)."""
    if db.in_transaction:
        return
    busy = db.execute("PRAGMA busy_timeout").fetchone()[0]
    db.execute("PRAGMA busy_timeout = 0")
    try:
        db.executescript("PRAGMA incremental_vacuum;")   # run to its end (execute frees one page a step)
    except sqlite3.OperationalError:
        pass
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(busy)}")


# Unsynced: a bulk ingest into a new memory writes without waiting for the disk, and says so.
#
# While a first ingest runs, SQLite's syncs were a twentieth of its time on this kind of
# machine (its WAL written out at every checkpoint: a gigabyte of writes for 30,000 sessions,
# against a 220 MB database). A memory that holds nothing yet holds nothing that the
# transcripts cannot give again, so its first bulk ingest writes with `synchronous = OFF`
# and syncs everything once at the end (_bulk_writes). Until then a marker beside
# the database names the boot and the process: should the machine stop before the end, the
# database may be damaged, and the next openmemory to open it moves it aside (kept, never
# deleted) and begins a new one, which the next ingest fills from the transcripts again.
_log = logging.getLogger("openmemory.unsynced")   # the name its lines have always had in the log
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")   # Linux: a new one at every boot
_BOOT_SHAPE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def unsynced_marker(db_path) -> Path:
    return Path(f"{db_path}-unsynced")


def _begin_unsynced(db_path) -> bool:
    """Mark the database as written unsynced by this process in this boot; False (nothing
    marked, so write synced) where a restart could not be told afterwards, or another
    process has it marked (two first ingests at once: the second writes synced)."""
    boot = _boot()
    if not boot or unsynced_marker(db_path).exists():
        return False
    try:
        files.write_own(unsynced_marker(db_path), f"{boot} {os.getpid()}\n".encode())
        _sync(Path(db_path).parent)     # the marker's name on the disk before the first unsynced write
    except (OSError, RenderError):
        return False
    return True


def _end_unsynced(db_path) -> None:
    """Everything written is on the disk: the database and its WAL synced, then the marker gone."""
    for path in (Path(db_path), Path(f"{db_path}-wal")):
        _sync(path)
    files.remove_own(unsynced_marker(db_path))
    _sync(Path(db_path).parent)


def _recover_unsynced(db_path) -> None:
    """Before the database is opened: what a marker left by a bulk ingest that did not end
    means. Its process still runs, or no boot id can be read here: nothing. This boot, its
    process gone (killed): the system kept every write, so they are synced now and the
    marker removed. Another boot: the database is moved aside with its WAL (to
    `<name>.unsynced-<n>`) and a new one begins. What it does, it logs."""
    found = files.read(unsynced_marker(db_path))
    if found is None:
        return
    boot, _, pid = found.decode("ascii", "replace").strip().partition(" ")
    now = _boot()
    if not (now and _BOOT_SHAPE.fullmatch(boot) and pid.isdigit()):
        return          # no boot id here (or not a marker of ours): nothing can be told, nothing is moved
    if boot == now:
        if not files.running(int(pid)):
            _end_unsynced(db_path)
            _log.info("synced what a stopped ingest wrote to %s", db_path)
        return
    n = 1
    while any(Path(f"{db_path}.unsynced-{n}{s}").exists() for s in ("", "-wal", "-shm")):
        n += 1
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{db_path}{suffix}").exists():
            files.move_own(Path(f"{db_path}{suffix}"), Path(f"{db_path}.unsynced-{n}{suffix}"))
    files.remove_own(unsynced_marker(db_path))
    _log.warning("the machine stopped while %s was first filled: it may be damaged, so it is kept as %s.unsynced-%d "
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


# --------------------------------------------------------------------------------------
# The file's own checks, and consistent copies of it

def explained(error: sqlite3.Error, path=None) -> StoreError:
    """A SQLite error as one line the person can act on (errors.explain); an error that says
    nothing of its cause ("SQL logic error") is damage when the file fails its checks."""
    path = Path(path) if path else paths.db_path()
    said = explain(error, path)
    if type(said) is StoreError and not is_busy(error) and getattr(error, "sqlite_errorname", "") in ("", "SQLITE_ERROR"):
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
            try:
                detail = _check(db, 0)
            finally:
                db.close()
        except sqlite3.Error as e:
            detail = str(e)
        if detail:
            return damaged(path, detail)
    return said


def _check(db: sqlite3.Connection, busy_ms: int) -> str | None:
    """SQLite's quick check, then FTS5's integrity-check of the text index (it reads every
    segment and writes nothing, but asks for the write lock: skipped while another process
    writes). None when both pass, else what failed."""
    try:
        rows = [" ".join(row[0].split()) for row in db.execute("PRAGMA quick_check")]
        if rows != ["ok"]:
            return "; ".join(rows[:3])
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'recall_index'").fetchone():
            db.execute("PRAGMA busy_timeout = 0")
            db.execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")
    except sqlite3.OperationalError:
        pass  # another process is writing: the quick check above passed
    except sqlite3.DatabaseError as e:
        return str(e)
    finally:
        db.execute(f"PRAGMA busy_timeout = {busy_ms}")
    return None


def _copy(db: sqlite3.Connection, dest) -> None:
    """A consistent copy of the database at dest (VACUUM INTO reads it in one transaction,
    while others keep reading and writing), private to the person; an existing dest is refused."""
    if os.path.exists(dest):
        raise OpenMemoryError(f"{dest} already exists; name a new file for the backup")
    folder = os.path.dirname(os.path.abspath(dest))
    if not os.path.isdir(folder):   # SQLite would say only "unable to open database"
        raise OpenMemoryError(f"cannot write the backup at {dest}: there is no folder {folder} (make it first: "
                              f"mkdir -p {shlex.quote(folder)})")
    mask = os.umask(0o077)
    try:
        db.execute("VACUUM INTO ?", (str(dest),))
    except sqlite3.OperationalError as e:
        raise OpenMemoryError(f"cannot write the backup at {dest}: {e}") from e
    finally:
        os.umask(mask)


# --------------------------------------------------------------------------------------
# Episodes made ready to store: redacted, with their context and hashed vector.
#
# Pure and free of SQL, so a worker process can do it (ingest's workers) while the store,
# the one writer, only writes. Store.replace_session prepares what it is given unprepared.

def prepare_passages(passages: list) -> list:
    """Passages (passages.passages_of: redacted already, whole before they were cut) with their
    hashed vector, of their words without who said them."""
    for p in passages:
        p["embedding"] = embed.encoded(migrations.unlabelled(p["text"]))
    return passages


def prepare(episodes: list) -> list:
    """Each episode redacted (clean_episode), with `context` (from redacted text: nothing is
    redacted twice), `embedding` (embed.encoded of title and gist) and its `legacy_key`.

    The episodes of one transcript repeat each other's words (a prompt is in the session's
    detail and in its correction's facts): their distinct texts pass the redaction gate once
    (redactor_for); when it finds nothing that could be a secret, nothing is redacted one by
    one, and when only a secret word, only that is looked for."""
    texts = []
    for e in episodes:
        texts += (e["title"], e["gist"], e.get("detail") or "", e.get("around") or "")
        strings_in(e.get("facts") or {}, texts)
    text = redactor_for(texts)
    cleaned = [dict(clean_episode(e, text), legacy_key=e.get("legacy_key"), around=text(e.get("around") or ""),
                    agent=e.get("agent") or "claude-code") for e in episodes]
    for ep, ctx in zip(cleaned, neighbours.session_contexts(cleaned)):
        ep["context"] = ctx
        ep["embedding"] = embed.encoded(ep["title"] + "\n" + ep["gist"])
        del ep["around"]
    return cleaned
