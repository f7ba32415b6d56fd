"""The schema: an append-only list of named steps (m001 ... m011), applied in order when the
store opens its file (store.connect).

Each step runs in its own transaction with the new PRAGMA user_version; a database newer
than this code is refused. No `executescript` inside a step (it would commit first). Only
this module and store.py speak SQL; the connection, its transactions and the file's checks
are the store's.
"""
import json
import re
import sqlite3

from . import embed, neighbours, paths
from .errors import StoreError


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


def m004_event_identity(db: sqlite3.Connection) -> None:
    """Errors and refusals were keyed by the tool-use id alone (`error:<id>`), which merges two
    sessions that reuse an id such as `call_0`. They are now keyed by their record's uuid
    (episodes.event_id). The new key can only be read from the transcript, so every
    transcript is marked to be read again: the next ingest finds each old key in its own
    session and rekeys that episode in place (same id, strength, recalls, consolidation).
    Corrections examined without a lesson under the old rules are examined again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")
    db.execute("UPDATE episodes SET consolidated = NULL WHERE kind = 'correction' AND consolidated = 0")
    # Decay counted from when an event happened, so a first night archived old history before
    # learning from it. It now counts from when openmemory stored it (`last_touched`): what
    # that archived, never recalled and stored less than ~123 days ago, comes back.
    db.execute("UPDATE episodes SET archived = 0, strength = 1.0, decayed = NULL WHERE archived AND recalls = 0 "
               "AND created > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-123 days')")


def m005_model_answers(db: sqlite3.Connection) -> None:
    """The optional model's answers, by the hash of their question (llm.question_key).

    A re-run of sleep or ingest --model asks the cache first, so it never asks twice; the
    answer is kept as the model gave it and judged each time it is used.
    """
    db.execute("""
        CREATE TABLE IF NOT EXISTS model_answers (
            key    TEXT PRIMARY KEY,                -- sha256 of model, prompts and limits
            model  TEXT NOT NULL,
            answer TEXT NOT NULL,
            asked  TEXT NOT NULL                    -- when the model gave it
        )""")


def m006_forgotten_and_opted_out(db: sqlite3.Connection) -> None:
    """Tombstones of forgotten episodes, and the transcripts kept out, both as hashes only.

    `forgotten.hash` is sha256 of an episode's key (the identity of the event, not its
    words), and with alias 1 of its kind, session and time, so re-ingesting its transcript
    never brings it back. `opted_out.hash` is a
    transcript path's hash: `status` counts the sessions kept out without naming them.
    """
    # alias 1: the same event named by kind, session and time (survives a change of key scheme)
    db.execute("CREATE TABLE IF NOT EXISTS forgotten (hash TEXT PRIMARY KEY, at TEXT NOT NULL, alias INTEGER NOT NULL DEFAULT 0)")
    db.execute("CREATE TABLE IF NOT EXISTS opted_out (hash TEXT PRIMARY KEY, at TEXT NOT NULL)")


def m007_recall_context(db: sqlite3.Connection) -> None:
    """Each episode's context (neighbours.py) in a column of its own and a fourth index field.

    Backfilled: a transcript episode gets its session and neighbours (the turns around a
    surprise come only with the next ingest of its transcript: `ingest --force` reads them
    all again); a note gets the notes next to it in its conversation (notes stored before
    this step have none). FTS5 cannot add a column, so the index is made again. Safe to run
    again on a database that has it (a test that rewinds user_version does).
    """
    if "context" not in [row[1] for row in db.execute("PRAGMA table_info(episodes)")]:
        db.execute("ALTER TABLE episodes ADD COLUMN context TEXT NOT NULL DEFAULT ''")  # else: run again
    fields = ("id", "session_id", "kind", "title", "gist", "at", "cwd", "facts")
    sessions, conversations = {}, {}
    for row in db.execute(f"SELECT {', '.join(fields)} FROM episodes ORDER BY at, kind != 'session', id"):
        row = dict(zip(fields, row))
        if row["kind"] != "note" and row["session_id"] is not None:
            sessions.setdefault(row["session_id"], []).append(row)
        elif row["kind"] == "note" and neighbours.conversation_of(row["facts"]):
            threads = conversations.setdefault((neighbours.conversation_of(row["facts"]), row["cwd"] or ""), [[]])
            if threads[-1] and not neighbours.same_conversation(threads[-1][-1]["at"], row["at"]):
                threads.append([])
            threads[-1].append(row)
    updates = []
    for episodes in sessions.values():
        updates += zip(neighbours.session_contexts(episodes), (e["id"] for e in episodes))
    for threads in conversations.values():
        for thread in threads:
            updates += zip(neighbours.note_contexts(thread), (n["id"] for n in thread))
    db.executemany("UPDATE episodes SET context = ? WHERE id = ?", [u for u in updates if u[0]])
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'recall_index'").fetchone():
        for name in ("episode_insert", "episode_delete", "episode_update", "lesson_insert", "lesson_delete",
                     "lesson_update"):
            db.execute(f"DROP TRIGGER IF EXISTS recall_index_{name}")  # m008 drops the insert one
        db.execute("DROP TABLE recall_index")
        _make_recall_index_with_context(db)


def _make_recall_index_with_context(db: sqlite3.Connection) -> None:
    """m003's index with a fourth field, `context` (a lesson has none), its triggers and rows."""
    db.execute("CREATE VIRTUAL TABLE recall_index USING fts5(title, body, detail, context, content='', "
               "tokenize='porter unicode61 remove_diacritics 2')")
    title = "CASE WHEN instr({0}.gist, {0}.title) = 1 THEN '' ELSE {0}.title END"
    episode = "{0}.id, %s, {0}.gist, {0}.detail, {0}.context" % title
    fields = "rowid, title, body, detail, context"
    add_episode = f"INSERT INTO recall_index ({fields}) VALUES ({episode.format('NEW')});"
    drop_episode = f"INSERT INTO recall_index (recall_index, {fields}) VALUES ('delete', {episode.format('OLD')});"
    add_lesson = f"INSERT INTO recall_index ({fields}) VALUES (-NEW.id, '', NEW.text, '', '');"
    drop_lesson = f"INSERT INTO recall_index (recall_index, {fields}) VALUES ('delete', -OLD.id, '', OLD.text, '', '');"
    for sql in (
            f"CREATE TRIGGER recall_index_episode_insert AFTER INSERT ON episodes BEGIN {add_episode} END",
            f"CREATE TRIGGER recall_index_episode_delete AFTER DELETE ON episodes BEGIN {drop_episode} END",
            "CREATE TRIGGER recall_index_episode_update AFTER UPDATE OF title, gist, detail, context ON episodes "
            f"BEGIN {drop_episode} {add_episode} END",
            f"CREATE TRIGGER recall_index_lesson_insert AFTER INSERT ON lessons BEGIN {add_lesson} END",
            f"CREATE TRIGGER recall_index_lesson_delete AFTER DELETE ON lessons BEGIN {drop_lesson} END",
            f"CREATE TRIGGER recall_index_lesson_update AFTER UPDATE OF text ON lessons "
            f"BEGIN {drop_lesson} {add_lesson} END"):
        db.execute(sql)
    db.execute(f"INSERT INTO recall_index ({fields}) SELECT {episode.format('episodes')} FROM episodes")
    db.execute(f"INSERT INTO recall_index ({fields}) SELECT -id, '', text, '', '' FROM lessons")


def m008_episodes_indexed_at_commit(db: sqlite3.Connection) -> None:
    """New episodes enter the text index when their transaction commits, all in one statement
    (store.Transaction), no longer one trigger each: FTS5 writes its pending terms out
    at every statement that touches it, and a trigger per episode was a seventh of a first
    ingest. Deletes and text updates keep their triggers."""
    db.execute("DROP TRIGGER IF EXISTS recall_index_episode_insert")


def m009_lesson_state(db: sqlite3.Connection) -> None:
    """A lesson is live (rendered) or a candidate (recallable, listed for review, never
    rendered, no prediction), by what backs it (backing.py): the person's approval or text, a
    judge, their standing words, another session. `backing` (JSON) keeps the person's approval
    and edit and a judge's verdict on the lesson itself; `since`, when it last became a
    candidate (it lapses LAPSE_DAYS later).

    Existing lessons that nothing backs become candidates now: the next render takes them out
    of MEMORY.md, their open predictions are closed, and their ids wait in the state key
    `lessons_to_candidates` for the next morning report to say so, once. Their time to lapse
    starts now, not when they were learnt.
    """
    columns = [row[1] for row in db.execute("PRAGMA table_info(lessons)")]
    if "state" not in columns:  # else: run again (a test that rewinds user_version does)
        db.execute("ALTER TABLE lessons ADD COLUMN state TEXT NOT NULL DEFAULT 'live' "
                   "CHECK (state IN ('live', 'candidate'))")
        db.execute("ALTER TABLE lessons ADD COLUMN backing TEXT NOT NULL DEFAULT '{}'")
        db.execute("ALTER TABLE lessons ADD COLUMN since TEXT")
    _unbacked_to_candidates(db)


def _unbacked_to_candidates(db: sqlite3.Connection) -> None:
    """Live lessons that nothing backs now (backing.backers, with what each lesson's `backing` keeps:
    the person's approval or text, a judge's verdict) become candidates (m009, m021): their wait
    to lapse starts now, their open predictions are closed, and the ids of those in MEMORY.md until
    now join the state key `lessons_to_candidates`, for the next morning report to say so, once."""
    from datetime import datetime, timezone
    from . import backing      # here: the rules it reads are loaded only by this step, once
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lessons = db.execute("SELECT id, kind, seen, sources, archived, backing FROM lessons "
                         "WHERE state = 'live' AND NOT vetoed").fetchall()
    moved, rendered = [], []
    for lesson_id, kind, seen, sources, archived, kept in lessons:
        try:
            ids = [int(i) for i in json.loads(sources or "[]")]
        except (ValueError, TypeError):
            ids = []
        try:
            kept = json.loads(kept or "{}")
        except ValueError:
            kept = {}
        kept = kept if isinstance(kept, dict) else {}
        episodes = []
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            for ep_kind, facts, session_id in db.execute(f"SELECT kind, facts, session_id FROM episodes WHERE id IN "
                                                         f"({','.join('?' * len(chunk))})", chunk):
                try:
                    facts = json.loads(facts or "{}")
                except ValueError:
                    facts = {}
                episodes.append({"kind": ep_kind, "facts": facts if isinstance(facts, dict) else {},
                                 "session_id": session_id})     # a damaged row: read as saying nothing
        by = backing.backers({"kind": kind, "seen": seen, "backing": kept}, episodes)
        if by:
            db.execute("UPDATE lessons SET backing = ? WHERE id = ?", (json.dumps(dict(kept, by=by)), lesson_id))
        else:
            moved.append((lesson_id, kept))
            if not archived:
                rendered.append(lesson_id)     # in MEMORY.md until now: the report says it left
    db.executemany("UPDATE lessons SET state = 'candidate', since = ?, backing = ? WHERE id = ?",
                   [(now, json.dumps(dict(kept, by=[])), i) for i, kept in moved])
    db.executemany("UPDATE predictions SET resolved = ? WHERE resolved IS NULL AND lesson_id = ?",
                   [(now, i) for i, _ in moved])
    if rendered:
        told = db.execute("SELECT value FROM state WHERE key = 'lessons_to_candidates'").fetchone()
        try:
            before = [i for i in json.loads(told[0]) if isinstance(i, int)] if told else []
        except (ValueError, TypeError):
            before = []
        db.execute("INSERT INTO state (key, value) VALUES ('lessons_to_candidates', ?) "
                   "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (json.dumps(before + rendered),))


# A passage's rowid in the text index: its id above this (episodes are their ids, lessons minus theirs).
PASSAGE_ROWIDS = 1 << 40
# A passage's text as the index reads it: without who said it (passages.LABELS), words every
# passage would hold. One expression for adding and deleting, so the two always agree.
PASSAGE_BODY = "replace(replace({0}.text, 'person: ', ''), 'agent: ', '')"


def m010_passages(db: sqlite3.Connection) -> None:
    """The conversation kept to be recalled (passages.py): each exchange, compaction summary,
    approved plan and answered question in passages of a few hundred characters, with the
    session, place (seq), time and folder of each, decaying and archived as episodes are, and
    in the text index beside them (rowid PASSAGE_ROWIDS + id; added at the commit, as episodes
    are since m008; deleted and updated by triggers).

    Passages come from the transcripts, so every transcript is marked to be read again: the
    next ingest fills them in (and gives failures and session gists what this version keeps).
    """
    db.execute("""
        CREATE TABLE IF NOT EXISTS passages (
            id           INTEGER PRIMARY KEY,
            key          TEXT NOT NULL UNIQUE,      -- identity: the record that opened it, its place there
            session_id   TEXT NOT NULL,             -- sessions.id
            seq          INTEGER NOT NULL,          -- its place in the session: neighbours are seq ± 1
            cwd          TEXT,
            kind         TEXT NOT NULL CHECK (kind IN ('exchange', 'summary', 'plan', 'question')),
            text         TEXT NOT NULL,             -- redacted whole before it was cut
            context      TEXT NOT NULL DEFAULT '',  -- the words that opened its exchange, the session's request
            at           TEXT NOT NULL,
            created      TEXT NOT NULL,
            strength     REAL NOT NULL DEFAULT 1.0,
            recalls      INTEGER NOT NULL DEFAULT 0,
            last_touched TEXT NOT NULL,
            decayed      TEXT,
            archived     INTEGER NOT NULL DEFAULT 0,
            embedding    BLOB NOT NULL
        )""")
    db.execute("CREATE INDEX IF NOT EXISTS passages_session ON passages (session_id, seq)")
    if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'recall_index'").fetchone():
        passage = f"{{0}}.id + {PASSAGE_ROWIDS}, '', {PASSAGE_BODY}, '', {{0}}.context"
        fields = "rowid, title, body, detail, context"
        drop = f"INSERT INTO recall_index (recall_index, {fields}) VALUES ('delete', {passage.format('OLD')});"
        add = f"INSERT INTO recall_index ({fields}) VALUES ({passage.format('NEW')});"
        db.execute(f"CREATE TRIGGER IF NOT EXISTS recall_index_passage_delete AFTER DELETE ON passages BEGIN {drop} END")
        db.execute("CREATE TRIGGER IF NOT EXISTS recall_index_passage_update AFTER UPDATE OF text, context ON passages "
                   f"BEGIN {drop} {add} END")
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m011_agent(db: sqlite3.Connection) -> None:
    """Which agent's log an episode or passage came from: claude-code, codex or gemini
    (transcripts.AGENTS). Every one stored before is Claude Code's (the only agent read until
    now); a note is the agent's whose MCP client stored it (mcp.agent_of_client)."""
    for table in ("episodes", "passages"):
        if "agent" not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:   # run again: done
            db.execute(f"ALTER TABLE {table} ADD COLUMN agent TEXT NOT NULL DEFAULT 'claude-code'")


def m012_note_contexts(db: sqlite3.Connection) -> None:
    """Each note's context made again: a note longer than its title (100 characters) was put
    in its neighbours' context as its cut title and then its text again, both cut at
    neighbours.NOTE_LIMIT, so a neighbour gave only its first ~100 characters, twice
    (neighbours._note_text compared the text with a title that ends in '…'). The index
    follows the column (its update trigger). Safe to run again."""
    fields = ("id", "title", "gist", "at", "cwd", "facts", "context")
    conversations = {}
    for row in db.execute(f"SELECT {', '.join(fields)} FROM episodes WHERE kind = 'note' ORDER BY at, id"):
        row = dict(zip(fields, row))
        if not neighbours.conversation_of(row["facts"]):
            continue
        threads = conversations.setdefault((neighbours.conversation_of(row["facts"]), row["cwd"] or ""), [[]])
        if threads[-1] and not neighbours.same_conversation(threads[-1][-1]["at"], row["at"]):
            threads.append([])
        threads[-1].append(row)
    updates = [(context, note["id"]) for threads in conversations.values() for thread in threads
               for note, context in zip(thread, neighbours.note_contexts(thread)) if context != note["context"]]
    db.executemany("UPDATE episodes SET context = ? WHERE id = ?", updates)


# What the index holds as an episode's title: nothing when its gist opens with it whole, or, for a
# note, cut ('…'): a note stored without a title has its first line cut at 100 characters as one,
# its words and no summary of them (m013); an episode's title is written as its summary ("`git push`
# failed: ...") and keeps its weight.
EPISODE_TITLE = ("CASE WHEN instr({0}.gist, {0}.title) = 1 OR ({0}.kind = 'note' AND "
                 "instr({0}.gist, rtrim(rtrim({0}.title, '…'))) = 1) THEN '' ELSE {0}.title END")


def m013_cut_titles_unindexed(db: sqlite3.Connection) -> None:
    """A note's title cut from its own text ('Melanie, 1:56 pm on 8 May, 2023: Yeah, I painted that
    lake sunrise…') leaves the index: m007 left out only a title the gist opens with whole, so a
    note past 100 characters had its first ~100 characters counted again at the title's weight
    (twice a body word), its later words not. The episodes' index triggers read the new expression and
    the index is made again from the rows (as m007 made it: a contentless index forgets a row
    only given what it was indexed with). Safe to run again."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'recall_index'").fetchone():
        return
    fields = "rowid, title, body, detail, context"
    episode = "{0}.id, %s, {0}.gist, {0}.detail, {0}.context" % EPISODE_TITLE
    drop = f"INSERT INTO recall_index (recall_index, {fields}) VALUES ('delete', {episode.format('OLD')});"
    add = f"INSERT INTO recall_index ({fields}) VALUES ({episode.format('NEW')});"
    db.execute("DROP TRIGGER IF EXISTS recall_index_episode_delete")
    db.execute("DROP TRIGGER IF EXISTS recall_index_episode_update")
    db.execute(f"CREATE TRIGGER recall_index_episode_delete AFTER DELETE ON episodes BEGIN {drop} END")
    db.execute("CREATE TRIGGER recall_index_episode_update AFTER UPDATE OF title, gist, detail, context ON episodes "
               f"BEGIN {drop} {add} END")
    db.execute("INSERT INTO recall_index (recall_index) VALUES ('delete-all')")
    db.execute(f"INSERT INTO recall_index ({fields}) SELECT {episode.format('episodes')} FROM episodes")
    db.execute(f"INSERT INTO recall_index ({fields}) SELECT -id, '', text, '', '' FROM lessons")
    db.execute(f"INSERT INTO recall_index ({fields}) SELECT id + {PASSAGE_ROWIDS}, '', "
               f"{PASSAGE_BODY.format('passages')}, '', context FROM passages")


def m014_answers_item(db: sqlite3.Connection) -> None:
    """A model's cached answer names the item it was asked about (`item`: a judge's question's
    `Item: <key>`, a gist's session key), so a forget of that memory takes the answer with it: the
    answer is the model's words about it ("Run the tests as Marguerite Vasquez says"), which a
    search for the memory's own words does not find. Answers cached before name none (NULL)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(model_answers)")}
    if "item" not in columns:
        db.execute("ALTER TABLE model_answers ADD COLUMN item TEXT")


def m015_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so what was stored from it before 2026-12-05
    is stored as this version reads it: a line in one side's words that opens as the other's
    label ("person: from now on …" in a page the agent quoted) quoted, never shown as theirs;
    records glued on one line read; a record with no time dated. The next ingest updates each
    episode and passage in place by its key (sleep's bookkeeping kept; what was forgotten stays
    forgotten); a transcript no longer there keeps what was stored."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m016_findings_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a failure stored before 2026-12-05
    keeps its cause as this version reads it: a compiler's or linter's finding
    (`users_test.go:88:14: os/exec.Command must not be called … (noctx)`) rather than the task
    runner's line that only says a task failed (`[lint] ERROR task failed`), which recall showed
    and matched in its place; and that a correction knows whether the call it followed failed
    (`command_failed`: a lint that failed and then passed is not shown to a judge as failing),
    and which call that was, never the agent's to-do list (TodoWrite).
    The next ingest updates each episode in place by its key, as m015_read_again's does."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m017_session_projects(db: sqlite3.Connection) -> None:
    """Each session keeps the repository its working folder belonged to when it was read
    (`sessions.project`), so that a linked worktree removed since (`git worktree add ../shop-fix`,
    merged, `git worktree remove`) still belongs to its repository: its lessons go into the
    repository's memory, its recall and forget --project are the repository's. Filled here for
    the sessions whose folder is still on this machine; a folder already gone stays as written."""
    if "project" not in {row[1] for row in db.execute("PRAGMA table_info(sessions)")}:
        db.execute("ALTER TABLE sessions ADD COLUMN project TEXT")
    # only a folder that is not its own project has one: what store.connect reads stays small
    db.execute("CREATE INDEX IF NOT EXISTS sessions_project ON sessions (project) WHERE project IS NOT NULL")
    # by id, each folder looked up once: an UPDATE by cwd (no index) read every session again for each
    # folder, 60,000 sessions in 8,000 worktrees or subfolders 24 s with the write lock held
    rows, projects = db.execute("SELECT id, cwd FROM sessions WHERE cwd IS NOT NULL").fetchall(), {}
    for _, cwd in rows:
        if cwd not in projects:
            projects[cwd] = paths.project_here(cwd)
    db.executemany("UPDATE sessions SET project = ? WHERE id = ?",
                   [(projects[cwd], sid) for sid, cwd in rows if projects[cwd] is not None])


def m018_script_passages(db: sqlite3.Connection) -> None:
    """Passages of a fifth kind, `script`: what a package script or a task ran, as its runner printed it
    ("`bun run css:build` ran `tailwindcss -i ./src/styles.css -o ./dist/output.css`";
    passages._scripts_ran). SQLite cannot change a table's CHECK in place, so `passages` is made
    again from its own definition with the kind allowed, its rows copied with their ids (the text
    index's rowids, so the index stays as it is), and its index and triggers made again; every
    transcript is marked to be read again, so the next ingest adds them. Safe to run again."""
    _widen_passage_kinds(db, "'exchange', 'summary', 'plan', 'question'", "script", "m010_passages")


def m019_project_moves(db: sqlite3.Connection) -> None:
    """The project folders the person moved or renamed (`openmemory lessons move OLD NEW`): each
    old folder and the folder it is now. paths.project_of reads a folder under an old one, while
    nothing is there, as the same folder under the new one, so the lessons, episodes and passages
    filed under the old path are the new folder's project (its memory folder, its recall, its
    forget --project). Only the person writes a row: nothing in a repository's files does."""
    db.execute("CREATE TABLE IF NOT EXISTS project_moves (old TEXT PRIMARY KEY, new TEXT NOT NULL, "
               "moved TEXT NOT NULL)")


def m020_edit_passages(db: sqlite3.Connection) -> None:
    """Passages of a sixth kind, `edit`: the lines an Edit, MultiEdit or Write of the agent's put in a
    file, with the file's name ("`scripts/release.ts` edited: - logLine('Follow-up: …') + commitAndPush()";
    passages._edits_made). As m018: `passages` made again from its own definition with the kind
    allowed, its rows copied with their ids, its index and triggers made again; every transcript is
    marked to be read again, so the next ingest adds them. Safe to run again."""
    _widen_passage_kinds(db, "'exchange', 'summary', 'plan', 'question', 'script'", "edit", "m018_script_passages")


def m021_standing_narrowed(db: sqlite3.Connection) -> None:
    """The person's standing words back a lesson only when they say it is for the work to come
    ("from now on", "in this repo we ...", "we never ...") or a bare "always"/"never" names the
    command or file the agent had just used (backing.standing; ARCHITECTURE.md, standing42). A
    lesson a bare "always" alone made live is a candidate now, as m009 made unbacked ones, and the
    next morning report says so once. Safe to run again."""
    _unbacked_to_candidates(db)


def _widen_passage_kinds(db: sqlite3.Connection, kinds: str, added: str, made_by: str) -> None:
    """`passages` with one more kind allowed (m018, m020, m029): SQLite cannot change a table's CHECK in
    place, so the table is made again from its own definition (kinds, as made_by left them, then
    added), its rows copied with their ids (the text index's rowids: the index stays as it is), its
    index and triggers made again; every transcript is marked to be read again, so the next ingest
    adds the new kind's passages. Safe to run again."""
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'passages'").fetchone()[0]
    if f"'{added}'" not in sql:
        made = (db.execute("SELECT sql FROM sqlite_master WHERE tbl_name = 'passages' AND type = 'index' "
                           "AND sql IS NOT NULL").fetchall()
                + db.execute("SELECT sql FROM sqlite_master WHERE tbl_name = 'passages' AND type = 'trigger'").fetchall())
        if kinds + ")" not in sql:
            raise StoreError(f"the passages table is not as {made_by} made it: its kinds cannot be widened")
        again = re.sub(r"^CREATE TABLE (?:IF NOT EXISTS )?\"?passages\"?", "CREATE TABLE passages_widened", sql, count=1)
        db.execute(again.replace(kinds + ")", f"{kinds}, '{added}')", 1))
        db.execute("INSERT INTO passages_widened SELECT * FROM passages")
        db.execute("DROP TABLE passages")       # no trigger fires: the index keeps its rows
        db.execute("ALTER TABLE passages_widened RENAME TO passages")
        for (statement,) in made:
            db.execute(statement)
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m022_unwrapped_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a failure stored before 2026-12-06
    knows what made it work when the agent ran the same command without the wrapper before it
    (`bun run test` after `rtk bun run test` failed with "unrecognized subcommand 'bun'":
    episodes._unwrapped): its `fixed_by`, which its lesson names ("; run it as `bun run test`"),
    and no longer `work` (got past by the edits that came after). The next ingest updates each
    episode in place by its key, as m015_read_again's does."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m023_approved_plans(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a plan the person approved where it was
    proposed (ExitPlanMode answered "User has approved your plan", no error: transcripts.PLAN_TOOL)
    is kept as a `plan` passage, as one sent back as "Implement the following plan:" always was; a
    plan refused, kept planning or approved with a cleared context is not. The next ingest adds
    them and changes no other passage, as m018_script_passages's does. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m024_typed_newlines_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that the person's words stored before
    2026-12-06 lose the backslash of each backslash-Enter they typed a new line with
    (transcripts.clean_user_text): "Answering your questions:\\" was the first line shown of a
    message, and a lesson's line could end in one. The next ingest updates each episode and
    passage in place by its key, as m015_read_again's does; a lesson already worded keeps its
    words. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m025_places_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a correction stored before 2026-12-06
    knows what the agent did after it, and the words around it, from where it is in the file
    (neighbours.places), not from the first record dated after it: a session resumed in Claude
    Code 1.0.x dates every record of the agent's at the resume, so seven corrections of one
    claude-code corpus session all had the session's start as what came next. The next ingest
    updates each episode in place by its key, as m015_read_again's does. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m026_spaceless_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a line the person typed in a script
    written without spaces (Chinese, Japanese, Thai) is their words, not one token of pasted
    output (corrections._OUTPUT): before 2026-12-06 such a message held no words of the
    person's, so it was never put to a judge, and one beside their other words was shown to it as
    pasted. The next ingest updates each episode in place by its key. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


# Scripts written without spaces (Chinese, Japanese) are read by the text index as their pairs of
# characters (embed.grams), kept beside each field it reads in a column of its own, `<field>_grams`:
# '' for a text with none, so such a text is indexed byte for byte as before; else a space and the
# pairs, appended to the field as the index reads it. Kept by the store wherever it writes the field
# (store.grams_of), read by the index's triggers with no function of openmemory's (a plain `sqlite3`
# shell runs them).
GRAMS = {"episodes": ("title", "gist", "detail", "context"), "passages": ("text", "context"), "lessons": ("text",)}
EPISODE_TITLE_GRAMS = ("CASE WHEN instr({0}.gist, {0}.title) = 1 OR ({0}.kind = 'note' AND "
                       "instr({0}.gist, rtrim(rtrim({0}.title, '…'))) = 1) THEN '' ELSE {0}.title || {0}.title_grams END")
EPISODE_FIELDS = ("{0}.id, %s, {0}.gist || {0}.gist_grams, {0}.detail || {0}.detail_grams, "
                  "{0}.context || {0}.context_grams" % EPISODE_TITLE_GRAMS)
PASSAGE_FIELDS = ("{0}.id + %d, '', %s || {0}.text_grams, '', {0}.context || {0}.context_grams"
                  % (PASSAGE_ROWIDS, PASSAGE_BODY))
LESSON_FIELDS = "-{0}.id, '', {0}.text || {0}.text_grams, '', ''"
INDEX_FIELDS = "rowid, title, body, detail, context"


def m027_spaceless_grams(db: sqlite3.Connection) -> None:
    """The text index reads Chinese and Japanese as pairs of characters (embed.grams), and the
    vectors too (embed.terms): a run of them between punctuation was one token ("被同队列多个")
    and no word of the vectors, so a question's "队列" found nothing inside it. Each indexed field
    gets a `<field>_grams` column (GRAMS), the index's triggers append it to the field, and every
    row whose text holds such script gets its grams and its vector anew from the text stored: the update trigger takes the row out of the index as it
    was indexed and puts it back with its grams. A text with neither is left as it is, its row and
    its index entry byte for byte. Notes and lessons are read from the database, so no transcript
    is read again. Safe to run again."""
    for table, fields in GRAMS.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        for field in fields:
            if field + "_grams" not in have:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {field}_grams TEXT NOT NULL DEFAULT ''")
    indexed = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'recall_index'").fetchone()
    if indexed:
        _make_grams_triggers(db)
    for table, fields in GRAMS.items():
        updates = []     # read a row at a time (a large store's details), written after
        for row in db.execute(f"SELECT id, {', '.join(fields)}" + (", title" if table == "episodes" else "")
                              + f" FROM {table}"):
            texts = [t or "" for t in row[1:1 + len(fields)]]
            if all(t.isascii() for t in texts) or not any(embed.grams(t) for t in texts):
                continue
            if table == "passages":
                grams = [embed.grams(unlabelled(texts[0])), embed.grams(texts[1])]
                vector = embed.encoded(unlabelled(texts[0]))
            elif table == "episodes":
                grams = [embed.grams(t) for t in texts]
                vector = embed.encoded(row[-1] + "\n" + texts[1])
            else:
                grams = [embed.grams(texts[0])]
                vector = embed.encoded(texts[0])
            updates.append((*grams, vector, row[0]))
        db.executemany(f"UPDATE {table} SET {', '.join(f + '_grams = ?' for f in fields)}, embedding = ? "
                       "WHERE id = ?", updates)


def unlabelled(text: str) -> str:
    """A passage's text as the index reads it (PASSAGE_BODY): without who said each line."""
    return text.replace("person: ", "").replace("agent: ", "")


def _make_grams_triggers(db: sqlite3.Connection) -> None:
    """The index's triggers, each field with its grams (m027): made again in place of m007's, m010's
    and m013's."""
    for table, fields, name in (("episodes", EPISODE_FIELDS, "episode"), ("passages", PASSAGE_FIELDS, "passage"),
                                ("lessons", LESSON_FIELDS, "lesson")):
        drop = f"INSERT INTO recall_index (recall_index, {INDEX_FIELDS}) VALUES ('delete', {fields.format('OLD')});"
        add = f"INSERT INTO recall_index ({INDEX_FIELDS}) VALUES ({fields.format('NEW')});"
        columns = ", ".join(GRAMS[table] + tuple(f + "_grams" for f in GRAMS[table]))
        for trigger in ("insert", "delete", "update"):
            db.execute(f"DROP TRIGGER IF EXISTS recall_index_{name}_{trigger}")
        db.execute(f"CREATE TRIGGER recall_index_{name}_delete AFTER DELETE ON {table} BEGIN {drop} END")
        db.execute(f"CREATE TRIGGER recall_index_{name}_update AFTER UPDATE OF {columns} ON {table} "
                   f"BEGIN {drop} {add} END")
        if table == "lessons":      # episodes and passages enter the index at the commit (m008, m010)
            db.execute(f"CREATE TRIGGER recall_index_lesson_insert AFTER INSERT ON lessons BEGIN {add} END")


def m028_secrets_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a secret the redaction of before
    2026-12-06 kept is redacted where it is stored: a key typed or pasted as a line of its own
    with no word naming it, and a value given to "pass" (`pass: …`; redact.py, public15, session
    49). The next ingest rewrites each episode and passage in place by its key (secure_delete
    zeroes what it overwrites), as m015_read_again's does. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m029_command_passages(db: sqlite3.Connection) -> None:
    """Passages of a seventh kind, `command`: each shell command of the agent's that went through and
    does more than look around ("ran `brew install terminal-notifier`: Install terminal-notifier";
    passages._commands_ran). As m020: `passages` made again from its own definition with the kind
    allowed, its rows copied with their ids, its index and triggers made again; every transcript is
    marked to be read again, so the next ingest adds them (and stores again what a program's path
    ending in "pass" had redacted after it, redact._FLAG_DASHES). Safe to run again."""
    _widen_passage_kinds(db, "'exchange', 'summary', 'plan', 'question', 'script', 'edit'", "command",
                         "m020_edit_passages")


def m030_next_calls_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a failure stored before 2026-12-07 keeps
    what came right after it, as a judge's request about it shows: the agent's next calls before the
    person spoke again (facts `next`, at most four; a step tool output may have told it to run kept
    only as "not shown") and whether the very same call went through when run again (facts `again`).
    The next ingest updates each episode in place by its key, as m015_read_again's does; a
    transcript no longer there keeps what was stored. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m031_under_a_paste_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a correction stored before 2026-12-07
    whose message ran past what is stored of it (2,000 characters) keeps which of the person's lines
    sat right under the paste, read on the whole message (facts `under`): a traceback's own last line
    past the cut ("From now on never edit config.json by hand …") was read as typed apart from it,
    standing, and its lesson live; now it is a candidate, as the same line under a shorter paste is,
    and leaves MEMORY.md at the next render. The next ingest updates each episode in place by its
    key, as m015_read_again's does. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m032_self_kill_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a `pkill -f` that killed the shell
    running it is stored with the line that says so as it reads since 2026-12-07: "pkill -f matches
    its own command line, which holds the pattern, in whatever call it runs". The line before ("…
    matches its own command line") made a judge answer "run it as a separate call", which kills that
    call's shell the same way. The next ingest updates each episode in place by its key, as
    m015_read_again's does. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


def m033_queued_read_again(db: sqlite3.Connection) -> None:
    """Every transcript is marked to be read again, so that a message the person typed while the
    agent was working (queued: it reached the agent between its steps) is stored as one since
    2026-12-07 (facts `queued`), and a judge asked about it is told so. A message a judge already
    answered keeps its verdict (store._judged_kept). The next ingest updates each episode in place
    by its key, as m015_read_again's does. Safe to run again."""
    db.execute("UPDATE sessions SET mtime_ns = -1")


MIGRATIONS = [m001_create_schema, m002_decay_clock, m003_recall_index, m004_event_identity,
              m005_model_answers, m006_forgotten_and_opted_out, m007_recall_context,
              m008_episodes_indexed_at_commit, m009_lesson_state, m010_passages,
              m011_agent, m012_note_contexts, m013_cut_titles_unindexed,
              m014_answers_item, m015_read_again, m016_findings_read_again, m017_session_projects,
              m018_script_passages, m019_project_moves, m020_edit_passages,
              m021_standing_narrowed, m022_unwrapped_read_again, m023_approved_plans,
              m024_typed_newlines_read_again, m025_places_read_again, m026_spaceless_read_again,
              m027_spaceless_grams, m028_secrets_read_again, m029_command_passages,
              m030_next_calls_read_again, m031_under_a_paste_read_again, m032_self_kill_read_again,
              m033_queued_read_again]


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
