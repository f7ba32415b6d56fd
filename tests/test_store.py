"""The store (store.py): its schema and pragmas, a newer or damaged file refused in one line,
notes; what opening a memory finds after a first ingest written unsynced did not end."""
import json
import os
import sqlite3
import subprocess
import sys
import unittest
from pathlib import Path

from openmemory import clock, ingest, migrations, store
from tests.fixtures import project_folder, test_session
from tests.helpers import TempHome, raw_db


class Store(TempHome):
    def test_schema_version_and_pragmas(self):
        with store.connect() as db:
            self.assertEqual(raw_db(db).execute("PRAGMA user_version").fetchone()[0], len(migrations.MIGRATIONS))
            self.assertEqual(raw_db(db).execute("PRAGMA journal_mode").fetchone()[0], "wal")
            self.assertEqual(raw_db(db).execute("PRAGMA busy_timeout").fetchone()[0], store.BUSY_TIMEOUT_MS)
            tables = {r[0] for r in raw_db(db).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self.assertTrue({"episodes", "sessions", "lessons", "predictions"} <= tables)

    def test_a_new_database_has_8_kb_pages_and_an_older_one_keeps_its_own(self):
        with store.connect() as db:
            self.assertEqual(raw_db(db).execute("PRAGMA page_size").fetchone()[0], store.PAGE_SIZE)
            self.assertEqual(store.PAGE_SIZE, 8192)
        older = self.tmp / "older" / "memory.db"        # made by a version before PAGE_SIZE
        older.parent.mkdir()
        raw = sqlite3.connect(older)
        raw.execute("PRAGMA page_size = 4096")
        raw.execute("PRAGMA journal_mode = WAL")
        raw.execute("CREATE TABLE kept (x)")
        raw.execute("INSERT INTO kept VALUES (1)")
        raw.commit()
        raw.close()
        with store.connect(older) as db:
            self.assertEqual(raw_db(db).execute("PRAGMA page_size").fetchone()[0], 4096)
            self.assertEqual([tuple(r) for r in raw_db(db).execute("SELECT x FROM kept")], [(1,)])
            self.assertEqual(raw_db(db).execute("PRAGMA user_version").fetchone()[0], len(migrations.MIGRATIONS))

    def test_a_bulk_ingest_gives_the_free_pages_of_a_new_database_back_and_an_older_one_keeps_them(self):
        def freed(path) -> tuple:
            with store.connect(path) as db:
                raw = raw_db(db)
                raw.execute("CREATE TABLE scratch (x)")
                raw.executemany("INSERT INTO scratch VALUES (?)", [("x" * 2000,) for _ in range(200)])
                raw.execute("DROP TABLE scratch")   # about 50 pages free
                before = raw.execute("PRAGMA freelist_count").fetchone()[0]
                with db.bulk_writes():
                    pass
                after = raw.execute("PRAGMA freelist_count").fetchone()[0]
                raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            with store.connect(path) as again:
                return before, after, raw_db(again).execute("PRAGMA auto_vacuum").fetchone()[0]
        new = self.tmp / "new" / "memory.db"
        before, after, mode = freed(new)
        self.assertGreater(before, 40)
        self.assertEqual((after, mode), (0, 2))     # INCREMENTAL
        self.assertLess(new.stat().st_size, 40 * store.PAGE_SIZE)
        older = self.tmp / "older" / "memory.db"    # made by a version before auto_vacuum: it keeps its own
        older.parent.mkdir()
        raw = sqlite3.connect(older)
        raw.execute("PRAGMA journal_mode = WAL")
        raw.execute("CREATE TABLE kept (x)")
        raw.close()
        before, after, mode = freed(older)
        self.assertEqual((after, mode), (before, 0))

    def test_a_newer_database_is_refused_clearly(self):
        store.connect().close()
        db = sqlite3.connect(self.home / "memory.db")
        db.execute("PRAGMA user_version = 999")
        db.close()
        p = self.cli("status")
        self.assertEqual(p.returncode, 1)
        self.assertIn("newer than this openmemory knows", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_a_corrupt_database_is_one_clear_line(self):
        self.home.mkdir()
        (self.home / "memory.db").write_bytes(b"this is not a database" * 100)
        p = self.cli("status")
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r"^openmemory: error: the memory database at .* is damaged .*; move it aside")
        p = self.cli("status", env=self.env(OPENMEMORY_DEBUG=1))
        self.assertIn("Traceback", p.stderr)

    def test_timestamps(self):
        self.assertEqual(clock.iso("2026-02-11T21:41:48.049Z"), "2026-02-11T21:41:48.049000Z")
        self.assertEqual(clock.iso("2026-02-11T22:41:48+01:00"), "2026-02-11T21:41:48.000000Z")

    def test_notes(self):
        with store.connect() as db:
            nid = db.add_note("We deploy with `make release`; password=hunter2hunter2", cwd="/home/dev/shop")
            note = db.episode(nid)
        self.assertEqual(note["kind"], "note")
        self.assertNotIn("hunter2", note["gist"])

    def test_inside_facts_once_an_episode_s_facts_are_decoded_once_and_again_when_they_change(self):
        with store.connect() as db:
            nid = db.add_note("Staging is reached through the bastion.")
            raw_db(db).execute("UPDATE episodes SET facts = ? WHERE id = ?", ('{"said": "through the bastion"}', nid))
            with db.facts_once():     # as a night reads its sources: consolidation, render, the report
                first = db.episodes_by_id([nid])[nid]["facts"]
                self.assertIs(db.episodes_by_id([nid], ("id", "kind", "facts"))[nid]["facts"], first)
                raw_db(db).execute("UPDATE episodes SET facts = ? WHERE id = ?", ('{"said": "through the VPN"}', nid))
                self.assertEqual(db.episodes_by_id([nid])[nid]["facts"], {"said": "through the VPN"})
            self.assertEqual(first, {"said": "through the bastion"})
            self.assertIsNot(db.episodes_by_id([nid])[nid]["facts"], db.episodes_by_id([nid])[nid]["facts"])

    def test_inside_facts_once_the_same_keys_and_short_words_of_different_episodes_are_one_copy(self):
        with store.connect() as db:
            ids = [db.add_note(f"Deploy note {n}.", cwd="/home/dev/shop") for n in range(2)]
            for n, nid in enumerate(ids):   # two texts: nothing shared between two json.loads
                raw_db(db).execute("UPDATE episodes SET facts = ? WHERE id = ?", (json.dumps(
                    {"command": "".join(["make ", "release"]), "then": {"said": "Understood."}, "n": n}), nid))
            with db.facts_once():
                rows = db.episodes_by_id(ids)
                a, b = rows[ids[0]], rows[ids[1]]
                self.assertEqual((a["facts"]["n"], b["facts"]["n"]), (0, 1))
                self.assertEqual(a["facts"]["command"], "make release")
                self.assertIs(a["facts"]["command"], b["facts"]["command"])
                self.assertIs(a["facts"]["then"]["said"], b["facts"]["then"]["said"])
                self.assertIs(next(iter(a["facts"])), next(iter(b["facts"])))
                self.assertIs(a["cwd"], b["cwd"])
                self.assertEqual(a["facts"]["then"], {"said": "Understood."})


@unittest.skipUnless(store.BOOT_ID.exists(), "no boot id to tell a restart by (not Linux)")
class AFirstIngestStoppedWithTheMachine(TempHome):
    """What opening a memory finds after a first ingest that wrote unsynced did not end."""

    def memory(self) -> Path:
        t = test_session(cwd="/home/dev/shop")
        t.write(project_folder(self.claude, "/home/dev/shop"))
        with store.connect() as db:
            ingest.ingest(db)
            self.assertGreater(len(db.episodes()), 0)
        return self.home / "memory.db"

    def mark(self, path: Path, boot: str, pid: int) -> Path:
        marker = store.unsynced_marker(path)
        marker.write_text(f"{boot} {pid}\n")
        return marker

    def test_after_a_restart_the_memory_is_moved_aside_and_a_new_one_begins(self):
        path = self.memory()
        before = path.read_bytes()
        marker = self.mark(path, "00000000-0000-0000-0000-000000000000", os.getpid())
        with self.assertLogs("openmemory.unsynced", "WARNING") as said, store.connect() as db:
            self.assertEqual(db.episodes(), [])  # a new memory, working
        self.assertIn("memory.db.unsynced-1", said.output[0])
        self.assertFalse(marker.exists())
        self.assertEqual((self.home / "memory.db.unsynced-1").read_bytes(), before)  # kept, never deleted
        self.mark(path, "0123abcd-0000-4000-8000-0123456789ab", 1)
        store.connect().close()
        self.assertTrue((self.home / "memory.db.unsynced-2").exists())  # the first one left as it is
        self.assertTrue((self.home / "memory.db.unsynced-1").exists())

    def test_a_marker_that_is_not_one_of_ours_moves_nothing(self):
        path = self.memory()
        for text in ("", "not a boot id 12", "00000000-0000-0000-0000-000000000000 x"):
            with self.subTest(text=text):
                store.unsynced_marker(path).write_text(text)
                with store.connect() as db:
                    self.assertGreater(len(db.episodes()), 0)
                self.assertFalse((self.home / "memory.db.unsynced-1").exists())

    def test_in_the_same_boot_a_killed_ingest_s_writes_are_kept_and_synced(self):
        path = self.memory()
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        marker = self.mark(path, store.BOOT_ID.read_text().strip(), int(gone.stdout))
        with store.connect() as db:
            self.assertGreater(len(db.episodes()), 0)
        self.assertFalse(marker.exists())
        self.assertFalse((self.home / "memory.db.unsynced-1").exists())

    def test_while_the_ingest_runs_its_marker_is_left_alone(self):
        path = self.memory()
        marker = self.mark(path, store.BOOT_ID.read_text().strip(), os.getpid())  # this process: running
        with store.connect() as db:
            self.assertGreater(len(db.episodes()), 0)
        self.assertTrue(marker.exists())


class SessionProjects(TempHome):
    """m017_session_projects on a database with many sessions in many folders."""

    def steps(self, folders: int) -> int:
        """SQLite's work (virtual machine steps, counted by a progress handler: no clock) for the
        migration of 3 sessions in each of `folders` subfolders of one repository."""
        repo = self.tmp / f"repo{folders}"
        (repo / ".git").mkdir(parents=True)
        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT)")
        for i in range(folders):
            (repo / f"sub{i}").mkdir()
            db.executemany("INSERT INTO sessions VALUES (?, ?)", [(f"{i}-{n}", str(repo / f"sub{i}")) for n in range(3)])
        count = [0]

        def tick():
            count[0] += 1
        db.set_progress_handler(tick, 100)
        migrations.m017_session_projects(db)
        db.set_progress_handler(None, 0)
        self.assertEqual(db.execute("SELECT count(*) FROM sessions WHERE project = ?", (str(repo),)).fetchone()[0],
                         3 * folders)
        return count[0]

    def test_the_migration_reads_the_sessions_once_not_once_a_folder(self):
        # 60,000 sessions in 8,000 existing subfolders or worktrees took 24 s with each folder's
        # UPDATE reading every session (the write lock held, every hook waiting): work grows with
        # the sessions, not with sessions times folders.
        small, large = self.steps(100), self.steps(800)
        self.assertLess(large, 8 * small * 2, (small, large))
