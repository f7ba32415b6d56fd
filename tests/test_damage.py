"""A damaged database says what to do: real damaged files, every verb, the hook and the MCP server.

The files are real memory databases damaged the ways disks and crashes damage them: pages
overwritten with garbage, the text index's shadow tables dropped or their blocks scrambled.
"""
import json
import os
import sqlite3
import subprocess
import sys

from openmemory import store
from tests.fixtures import project_folder, test_session
from tests.helpers import TempHome

VERBS = [("status",), ("recall", "pytest"), ("ingest",), ("sleep", "--now", "2026-11-05T03:00:00Z"),
         ("render",), ("morning", "--json"), ("status", "--json")]


class DamagedDatabase(TempHome):
    def setUp(self):
        super().setUp()
        test_session(cwd=str(self.tmp)).write(project_folder(self.claude, str(self.tmp)))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-04T03:00:00Z")
        with store.connect() as db:
            for i in range(200):  # enough rows that every table spans pages of its own
                db.add_note(f"note {i}: run the tests with pytest -q, not unittest " * 4, cwd=str(self.tmp))
        self.db = self.home / "memory.db"
        self.assertFalse(os.path.exists(str(self.db) + "-wal") and os.path.getsize(str(self.db) + "-wal"))

    def roots(self, *tables):
        con = sqlite3.connect(str(self.db))
        try:
            return [con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]
                    for t in tables]
        finally:
            con.close()

    def overwrite_pages(self, pages):
        con = sqlite3.connect(str(self.db))
        size = con.execute("PRAGMA page_size").fetchone()[0]    # store.PAGE_SIZE: these pages whole
        con.close()
        with open(self.db, "r+b") as f:
            for page in pages:
                f.seek((page - 1) * size)
                f.write(bytes((page * 37 + i * 11) % 251 for i in range(size)))

    def drop_shadow_table(self, name):
        con = sqlite3.connect(str(self.db))
        con.execute("PRAGMA writable_schema = ON")
        con.execute("DELETE FROM sqlite_master WHERE name = ?", (name,))
        con.commit()
        con.close()

    def scramble_index_blocks(self):
        con = sqlite3.connect(str(self.db))
        con.execute("UPDATE recall_index_data SET block = randomblob(length(block)) WHERE id > 10")
        con.commit()
        con.close()

    def assert_advice(self, p, verb):
        self.assertEqual(p.returncode, 1, (verb, p.stdout, p.stderr))
        self.assertEqual(p.stdout, "", verb)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, (verb, p.stderr))
        line = lines[0]
        self.assertTrue(line.startswith(f"openmemory: error: the memory database at {self.db} is damaged"), line)
        for words in ("move it aside", f"mv {self.db} {self.db}.damaged", "`openmemory ingest` rebuilds the episodes",
                      "notes stored with `remember` and lesson history come back only from a backup"):
            self.assertIn(words, line, verb)

    def test_pages_overwritten_every_verb_says_what_to_do(self):
        self.overwrite_pages(self.roots("episodes", "sessions", "lessons", "state"))
        for verb in VERBS:
            with self.subTest(verb=verb):
                self.assert_advice(self.cli(*verb), verb)

    def test_text_index_table_dropped(self):
        self.drop_shadow_table("recall_index_data")
        for verb in [("recall", "pytest"), ("status",)]:
            with self.subTest(verb=verb):
                p = self.cli(*verb)
                self.assert_advice(p, verb)
        self.assertIn("recall_index", self.cli("recall", "pytest").stderr)

    def test_text_index_blocks_scrambled_quick_check_alone_would_pass(self):
        self.scramble_index_blocks()
        con = sqlite3.connect(str(self.db))
        self.assertEqual(con.execute("PRAGMA quick_check").fetchone()[0], "ok")  # the damage hides from it
        con.close()
        self.assert_advice(self.cli("status"), "status")
        self.assert_advice(self.cli("recall", "pytest"), "recall")

    def test_each_text_index_table_dropped_is_damage_recall_never_answers_degraded(self):
        original = self.db.read_bytes()
        for table in ("recall_index_idx", "recall_index_docsize", "recall_index_config", "recall_index_data"):
            with self.subTest(table=table):
                self.db.write_bytes(original)
                self.drop_shadow_table(table)
                for verb in (("recall", "pytest"), ("remember", "a note the recovery would drop")):
                    self.assert_advice(self.cli(*verb), verb)

    def test_remember_refuses_a_note_the_recovery_would_drop(self):
        # Blocks scrambled: FTS5 still appends a new note's segment, so it was stored (exit 0)
        # in a file the documented recovery (move it aside, ingest) then leaves behind.
        self.scramble_index_blocks()
        self.assert_advice(self.cli("remember", "the staging database lives on port 5433"), "remember")
        con = sqlite3.connect(str(self.db))
        self.assertEqual(con.execute("SELECT count(*) FROM episodes WHERE gist LIKE '%port 5433%'").fetchone()[0], 0)
        con.close()

    def test_status_says_the_check_passed_on_a_sound_file(self):
        out = self.ok("status").stdout
        self.assertIn("passes quick_check", out)
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["check"], "ok")

    def test_the_hook_logs_the_advice_and_exits_0_silently(self):
        self.overwrite_pages(self.roots("episodes", "sessions", "lessons", "state"))
        path = next(self.projects.rglob("*.jsonl"))
        os.utime(path, (1, 1))  # changed, so the hook must read the database
        p = subprocess.run([sys.executable, "-m", "openmemory", "hook"], input=json.dumps(
            {"hook_event_name": "SessionEnd", "transcript_path": str(path)}), capture_output=True, text=True,
            env=self.env(), timeout=60)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        log = (self.home / "logs" / "openmemory.log").read_text()
        self.assertIn(f"hook failed: the memory database at {self.db} is damaged", log)
        self.assertIn("move it aside", log)
        self.assertNotIn("Traceback", log)

    def test_the_server_answers_is_error_with_the_advice_and_keeps_serving(self):
        self.drop_shadow_table("recall_index_data")
        proc = subprocess.Popen([sys.executable, "-m", "openmemory", "serve"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env(CLAUDE_PROJECT_DIR=str(self.tmp)))
        calls = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "pytest"}}},
                 {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", "arguments": {"text": "x y z"}}},
                 {"jsonrpc": "2.0", "id": 3, "method": "ping"}]
        out, err = proc.communicate(b"".join(json.dumps(c).encode() + b"\n" for c in calls), timeout=60)
        replies = [json.loads(line) for line in out.splitlines()]
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual([r["id"] for r in replies], [1, 2, 3])
        for reply in replies[:2]:
            self.assertIs(reply["result"]["isError"], True)
            text = reply["result"]["content"][0]["text"]
            self.assertIn(f"the memory database at {self.db} is damaged", text)
            self.assertIn("move it aside", text)
        self.assertEqual(replies[2]["result"], {})
        self.assertIn("is damaged", (self.home / "logs" / "openmemory.log").read_text())

    def test_a_file_that_is_not_a_database_at_open(self):
        self.db.write_bytes(b"not a database at all " * 400)
        for suffix in ("-wal", "-shm"):
            try:
                os.unlink(str(self.db) + suffix)
            except FileNotFoundError:
                pass
        for verb in VERBS:
            with self.subTest(verb=verb):
                self.assert_advice(self.cli(*verb), verb)


class Backup(TempHome):
    def test_backup_while_another_process_writes_then_restore(self):
        with store.connect() as db:
            for i in range(50):
                db.add_note(f"kept note {i}")
        holder = sqlite3.connect(str(self.home / "memory.db"), isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
        holder.execute("UPDATE episodes SET gist = 'half-written' WHERE id = 1")
        try:
            p = self.ok("backup", self.tmp / "copy.db")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        self.assertIn(f"to {self.tmp / 'copy.db'}", p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(os.stat(self.tmp / "copy.db").st_mode & 0o777, 0o600)
        copy = sqlite3.connect(str(self.tmp / "copy.db"))
        self.assertEqual(copy.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        self.assertEqual(copy.execute("SELECT count(*) FROM episodes WHERE gist LIKE 'kept note%'").fetchone()[0], 50)
        copy.close()
        refused = self.cli("backup", self.tmp / "copy.db")
        self.assertEqual(refused.returncode, 1)
        self.assertIn("already exists", refused.stderr)
        # restore as OPERATIONS.md says: move the damaged file (and its -wal, -shm) aside, copy the backup in
        db_path = self.home / "memory.db"
        db_path.write_bytes(b"damaged" * 1000)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(str(db_path) + suffix):
                os.rename(str(db_path) + suffix, str(db_path) + suffix + ".damaged")
        self.assertEqual(self.cli("backup", self.tmp / "copy2.db").returncode, 1)
        os.rename(db_path, str(db_path) + ".damaged")
        subprocess.run(["cp", str(self.tmp / "copy.db"), str(db_path)], check=True)
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual(status["episodes"]["note"], 50)
