import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
import unittest
from pathlib import Path

from openmemory import ingest, store
from tests.fixtures import Transcript, project_folder, test_session
from tests.helpers import TempHome, corpus_files, raw_db

PROJECT = "/home/dev/shop"


def status(case):
    return json.loads(case.ok("status", "--json").stdout)


def square(n):
    return n * n


def die_on_seven(n):
    if n == 7:
        os._exit(3)  # as a worker killed by the kernel for its memory would
    return n * n


def worker_pid(_):
    return os.getpid()


def open_it(path):
    with open(path):
        return path


class IngestCommand(TempHome):
    def write_session(self, t=None, cwd="/home/dev/shop"):
        t = t or test_session(cwd=cwd)
        return t.write(project_folder(self.claude, t.cwd))

    def test_ingest_makes_session_error_and_correction_episodes(self):
        self.write_session()
        p = self.ok("ingest")
        self.assertIn("read 1 of 1 transcript", p.stdout)
        counts = status(self)
        self.assertEqual(counts["episodes"], {"session": 1, "error": 1, "correction": 1, "note": 0,
                                              "total": 3, "archived": 0})
        self.assertEqual(counts["sessions"], 1)
        with store.connect() as db:
            [session] = db.episodes("session")
            [error] = db.episodes("error")
            [correction] = db.episodes("correction")
        self.assertEqual(session["title"], "run the tests")
        self.assertIn("Asked: run the tests", session["gist"])
        # What happened: how it ended (the agent's closing words), and the failure it met.
        self.assertIn("Outcome: All 12 tests pass", session["gist"])
        self.assertIn("Trouble: `python -m unittest` failed (ImportError: No module named shop.tests); 1 correction",
                      session["gist"])
        self.assertEqual(session["cwd"], "/home/dev/shop")
        self.assertEqual(error["title"], "`python -m unittest` failed: ImportError: No module named shop.tests")
        self.assertEqual(error["facts"]["command"], "python -m unittest")
        self.assertEqual(correction["facts"]["said"], "No, don't use unittest here, run the tests with pytest -q")
        self.assertIn("After the agent ran `python -m unittest`", correction["gist"])
        self.assertRegex(error["at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

    def test_a_file_that_now_holds_another_session_is_read_and_ingests_go_on(self):
        # the same file name, overwritten with another session's transcript (a copy put in its place)
        first = test_session(cwd=PROJECT)
        path = first.write(project_folder(self.claude, PROJECT), name="s.jsonl")
        self.ok("ingest")
        other = Transcript(cwd=PROJECT)
        other.user("add a changelog entry for the release")
        other.assistant("Added the entry under 1.4.0 in CHANGELOG.md.")
        other.write(project_folder(self.claude, PROJECT), name="s.jsonl")
        self.ok("ingest")
        later = Transcript(cwd=PROJECT)
        later.user("bump the version to 1.4.1")
        later.assistant("Bumped the version in pyproject.toml.")
        self.write_session(later)
        p = self.ok("ingest")
        self.assertIn("read 1 of 2 transcript", p.stdout)       # the new one read, s.jsonl unchanged
        with store.connect() as db:
            titles = sorted(e["title"] for e in db.episodes("session"))
        # the first session keeps its memories (its file is gone, as a deleted one's), the two others stored
        self.assertEqual(titles, ["add a changelog entry for the release", "bump the version to 1.4.1", "run the tests"])
        self.assertEqual(status(self)["sessions"], 3)
        self.assertTrue(path.exists())

    def test_a_file_tool_before_a_correction_is_named_from_the_project_folder(self):
        t = Transcript(cwd="/home/dev/shop")
        t.user("set up the container")
        t.assistant("Writing the compose file.", tools=[
            ("Write", {"file_path": "/home/dev/shop/deploy/compose.yml", "content": "services: {}"},
             "File created successfully", False)])
        t.assistant("Docker Compose is set up.")
        t.user("no, we use podman here, not docker")
        self.write_session(t)
        self.ok("ingest")
        with store.connect() as db:
            [correction] = db.episodes("correction")
        self.assertIn("After the agent ran Write deploy/compose.yml, the person said", correction["gist"])
        self.assertNotIn("/home/dev", correction["gist"])

    def test_rerun_adds_nothing_and_touch_rereads_only_that_file(self):
        a = self.write_session(test_session(cwd="/home/dev/shop"))
        self.write_session(test_session(cwd="/home/dev/blog"))
        self.ok("ingest")
        before = status(self)
        again = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual((again["read"], again["unchanged"], again["added"]), (0, 2, {}))
        self.assertEqual(status(self)["episodes"], before["episodes"])
        later = time.time() + 5
        os.utime(a, (later, later))
        touched = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual((touched["read"], touched["unchanged"], touched["added"], touched["removed"]),
                         (1, 1, {}, 0))
        self.assertEqual(status(self)["episodes"], before["episodes"])

    def test_a_growing_transcript_replaces_its_episodes_and_keeps_their_identity(self):
        t = test_session()
        path = self.write_session(t)
        self.ok("ingest")
        with store.connect() as db:
            ids = {e["key"]: e["id"] for e in db.episodes()}
            raw_db(db).execute("UPDATE episodes SET strength = 1.7, recalls = 3")
        t.user("stop, you are editing the wrong file")
        t.assistant("Sorry.")
        path.write_text(t.text())
        report = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual(report["added"], {"correction": 1})
        with store.connect() as db:
            episodes = db.episodes()
        self.assertEqual(len(episodes), 4)
        for e in episodes:
            if e["key"] in ids:
                self.assertEqual(e["id"], ids[e["key"]])
                self.assertEqual((e["strength"], e["recalls"]), (1.7, 3))  # what recall learnt is kept

    def test_a_rewritten_transcript_drops_what_it_no_longer_holds(self):
        t = test_session()
        path = self.write_session(t)
        self.ok("ingest")
        calm = Transcript(session_id=t.session_id, cwd=t.cwd)
        calm.user("run the tests")
        calm.assistant("All pass.", tools=[("Bash", {"command": "pytest -q"}, "3 passed", False)])
        path.write_text(calm.text())
        report = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual(report["removed"], 2)
        self.assertEqual(status(self)["episodes"]["total"], 1)

    def test_malformed_lines_never_stop_an_ingest(self):
        good = test_session(cwd="/home/dev/shop")
        path = self.write_session(good)
        with open(path, "a") as f:
            f.write("{not json\n")
            f.write('{"type": "assistant", "message": {"content": [{"type": "tool_use", "id": 5}]}}\n')
            f.write('{"type":"user","message":{"role":"user","content":"half')  # being appended to
        broken = project_folder(self.claude, "/home/dev/x") / "empty.jsonl"
        broken.parent.mkdir(parents=True)
        broken.write_bytes(b"\x00\xff\xfe garbage\n")
        self.write_session(test_session(cwd="/home/dev/blog"))
        p = self.ok("ingest")
        self.assertIn("malformed line", p.stdout)
        self.assertIn(f"skipped {broken}: not a Claude Code transcript", p.stderr)  # whole, once
        counts = status(self)
        self.assertEqual(counts["episodes"]["total"], 6)  # both good sessions whole
        self.assertEqual(counts["lines_skipped"], 2)

    def test_a_record_glued_to_the_summary_after_it_is_read_not_skipped(self):
        # Claude Code appends a summary record to a last line that has no newline yet: two of 45
        # real transcripts hold '..."}{"type":"summary",...}', read as one malformed line.
        t = test_session()
        t.user("and the flaky retry test?")
        t.assistant("Done: the retry test now waits for the queue to drain before it asserts.")
        t.assistant("In Go: seen := map[string]struct{}{\"a\": {}} marks a key as seen.")  # a `}{"` in a string
        lines = t.lines()
        lines[-2] += json.dumps({"type": "summary", "summary": "Flaky retry test", "leafUuid": "u1"},
                                separators=(",", ":"))
        project_folder(self.claude, t.cwd).mkdir(parents=True)
        (project_folder(self.claude, t.cwd) / f"{t.session_id}.jsonl").write_text("\n".join(lines) + "\n")
        p = self.ok("ingest")
        self.assertNotIn("malformed", p.stdout)
        self.assertEqual(status(self)["lines_skipped"], 0)
        hits = json.loads(self.ok("recall", "retry test waits for the queue to drain", "--json").stdout)
        self.assertTrue(any("waits for the queue to drain" in (h.get("gist") or "") for h in hits), hits)
        hits = json.loads(self.ok("recall", "map of struct marks a key as seen", "--json").stdout)
        self.assertTrue(any('struct{}{"a": {}}' in (h.get("gist") or "") for h in hits), hits)

    def test_subagent_transcripts_are_skipped(self):
        t = test_session()
        folder = project_folder(self.claude, t.cwd)
        self.write_session(t)
        sub = Transcript(cwd=t.cwd)
        sub.user("Warmup")
        sub.write(folder / t.session_id / "subagents", "agent-a1.jsonl")
        self.assertEqual([os.path.basename(p) for p in ingest.discover()], [f"{t.session_id}.jsonl"])

    def test_discover_finds_and_orders_transcripts_as_pathlib_globs_them(self):
        """Listed with os.scandir, found and ordered as `glob` then `sorted` of Paths would: hidden
        names, symlinks, a folder named *.jsonl, `a` before `a-b` (pathlib orders by parts)."""
        root = self.tmp / "tree"
        for name in ("a/1.jsonl", "a/.h.jsonl", "a/x.JSONL", "a-b/2.jsonl", ".hid/3.jsonl", "a/sub/4.jsonl",
                     "-d/5.jsonl", "top.jsonl.not"):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("{}\n")
        (root / "a-b" / "dir.jsonl").mkdir()
        (root / "a-b" / "link.jsonl").symlink_to(root / "a" / "1.jsonl")
        (root / "a-b" / "broken.jsonl").symlink_to(root / "nowhere")
        (root / "alink").symlink_to(root / "a")

        def by_pathlib(r):
            r = Path(r)
            found = r.glob("*.jsonl") if any(r.glob("*.jsonl")) else r.glob("*/*.jsonl")
            return [str(p) for p in sorted(p for p in found if p.is_file())]

        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(self.tmp)
        for r in (root, "tree", "./tree/", root / "a", root / "a-b", root / "alink"):
            self.assertEqual(ingest.discover([r]), by_pathlib(r), r)
        listed = [p[len(str(root)) + 1:] for p in ingest.discover([root])]
        self.assertEqual(listed, ["-d/5.jsonl", ".hid/3.jsonl", "a/.h.jsonl", "a/1.jsonl", "a-b/2.jsonl",
                                  "a-b/link.jsonl", "alink/.h.jsonl", "alink/1.jsonl"])
        self.assertEqual(ingest.discover([root / "a" / "1.jsonl", root / "a"]),
                         [str(root / "a" / ".h.jsonl"), str(root / "a" / "1.jsonl")])

    def test_explicit_paths(self):
        path = test_session().write(self.tmp / "elsewhere")
        self.assertIn("read 1 of 1", self.ok("ingest", path).stdout)
        p = self.cli("ingest", self.tmp / "missing.jsonl")
        self.assertEqual(p.returncode, 2)                   # a path that names nothing: a usage error
        self.assertEqual(p.stdout, "")
        self.assertRegex(p.stderr, r"^openmemory ingest: error: no transcript or folder at .*missing\.jsonl")
        self.assertEqual(p.stderr.count("\n"), 1)

    def test_a_folder_with_no_transcript_where_ingest_looks_is_said(self):
        # transcripts two folders down (a copy of several machines' projects/): ingest reads a
        # folder of project folders, not deeper, and says so rather than a silent "0 of 0"
        deep = self.tmp / "copied"
        test_session().write(deep / "laptop" / "-home-dev-shop")
        p = self.ok("ingest", deep)
        self.assertIn("read 0 of 0 transcripts", p.stdout)
        self.assertEqual(p.stderr, f"openmemory: warning: no transcript in {deep}: ingest reads a transcript file, a "
                                   f"folder of them (one project's) or a folder of such folders (Claude Code's "
                                   f"projects/), and Codex's sessions/ or Gemini's tmp/; name the folder that holds them\n")
        p = self.ok("ingest", deep / "laptop")                          # the folder that holds them: read, no warning
        self.assertIn("read 1 of 1", p.stdout)
        self.assertEqual(p.stderr, "")
        self.assertEqual(self.ok("ingest", "--quiet", deep).stderr, "")  # --quiet prints nothing at all

    def test_quiet_prints_nothing_at_all(self):
        self.write_session()
        p = self.ok("ingest", "--quiet")
        self.assertEqual((p.stdout, p.stderr), ("", ""))
        self.assertEqual(status(self)["episodes"]["total"], 3)

    def test_missing_claude_folder_is_not_an_error(self):
        p = self.ok("ingest")
        self.assertEqual(p.stdout, "")
        self.assertIn("nothing to ingest", p.stderr)
        self.assertEqual(self.ok("ingest", "--quiet").stderr, "")

    def test_database_and_folder_are_private(self):
        self.write_session()
        self.ok("ingest")
        self.assertEqual(stat.S_IMODE(os.stat(self.home).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(self.home / "memory.db").st_mode), 0o600)

    def test_secrets_are_redacted_before_anything_is_stored(self):
        t = Transcript()
        t.user("deploy with the key")
        t.assistant(tools=[("Bash", {"command": "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123' "
                                                "https://api.example.com/deploy"},
                            "Exit code 22\ncurl: (22) 401 for token sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFF", True)])
        t.user("no, export ANTHROPIC_API_KEY=sk-ant-api03-ZZZZYYYYXXXXWWWWVVVVUUUU first")
        self.write_session(t)
        self.ok("ingest")
        raw = (self.home / "memory.db").read_bytes()
        for secret in (b"abcdefghijklmnopqrstuvwxyz0123", b"AAAABBBBCCCCDDDD", b"ZZZZYYYYXXXX"):
            self.assertNotIn(secret, raw)
        with store.connect() as db:
            self.assertIn("[REDACTED:anthropic-key]", db.episodes("correction")[0]["gist"])

    def test_status_human_output(self):
        self.write_session()
        self.ok("ingest")
        out = self.ok("status").stdout
        self.assertIn("episodes     3 (1 session episode, 1 error, 1 correction, 0 notes; 0 archived)", out)
        self.assertIn("\npassages     3 (what was said; 0 archived)\n", out)     # two of what was said, `pytest -q` run
        self.assertIn("transcripts  1 ingested, 0 malformed lines skipped", out)
        self.assertIn("last sleep   never", out)


class RealCorpus(TempHome):
    def test_ingest_of_the_real_corpus(self):
        files = corpus_files()
        for path in files:
            folder = self.projects / path.parent.name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / path.name).write_bytes(path.read_bytes())
        first = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual(first["read"], len(files))
        self.assertEqual(first["skipped_lines"], 0)
        counts = status(self)
        self.assertGreaterEqual(counts["episodes"]["correction"], 10)
        self.assertGreaterEqual(counts["episodes"]["error"], 20)
        with store.connect() as db:
            titles = {e["title"] for e in db.episodes()}
        self.assertIn("`cat nonexistent.txt` failed: cat: nonexistent.txt: No such file or directory", titles)
        self.assertIn("`python /workspace/number_generator.py` failed: /bin/bash: line 1: python: command not found",
                      titles)
        self.assertIn("Correction: ah. the issue is the linter/formatter, not db:generate, I think.", titles)
        self.assertIn("Refused: `mix phx.server 2>&1 | head -80`", titles)
        again = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual((again["read"], again["added"]), (0, {}))
        self.assertEqual(status(self)["episodes"], counts["episodes"])


class Progress(TempHome):
    def test_progress_shows_on_a_terminal_only(self):
        import pty
        import subprocess
        import sys
        from tests.helpers import ROOT
        test_session().write(project_folder(self.claude, "/home/dev/shop"))
        primary, secondary = pty.openpty()
        p = subprocess.run([sys.executable, "-m", "openmemory", "ingest"], stdout=subprocess.PIPE,
                           stderr=secondary, env=self.env(), cwd=str(ROOT), timeout=60)
        os.close(secondary)
        seen = b""
        try:
            while True:
                chunk = os.read(primary, 4096)
                if not chunk:
                    break
                seen += chunk
        except OSError:
            pass
        os.close(primary)
        self.assertEqual(p.returncode, 0)
        self.assertIn(b"ingesting 1/1", seen)
        self.assertIn(b"read 1 of 1", p.stdout)
        piped = self.ok("ingest", "--force")
        self.assertEqual(piped.stderr, "")

    def test_a_locked_database_is_one_clear_line(self):
        import sqlite3
        test_session().write(project_folder(self.claude, "/home/dev/shop"))
        store.connect().close()
        holder = sqlite3.connect(self.home / "memory.db", isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            p = self.cli("ingest", env=self.env(OPENMEMORY_BUSY_TIMEOUT_MS=200))
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r"^openmemory: error: .*memory\.db.*try again")
        self.assertEqual(p.stderr.count("\n"), 1)


class OneIngestOfATranscriptAtATime(TempHome):
    def test_an_ingest_waits_for_the_transcripts_lock_and_then_reads_the_newer_file(self):
        import fcntl
        import threading
        t = test_session()
        path = t.write(project_folder(self.claude, t.cwd))
        done = {}

        def cron_ingest():
            with store.connect() as db:
                done["report"] = ingest.ingest(db)

        with open(path, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_EX)  # a hook's ingest of this transcript is under way
            worker = threading.Thread(target=cron_ingest)
            worker.start()
            worker.join(0.5)
            self.assertTrue(worker.is_alive(), "the ingest did not wait for the transcript's lock")
            t.user("stop, that is the wrong database")
            path.write_text(t.text())  # the session went on meanwhile
        worker.join(30)
        self.assertFalse(worker.is_alive())
        self.assertEqual(done["report"].read, 1)
        with store.connect() as db:
            said = [e["facts"]["said"] for e in db.episodes("correction")]
        self.assertIn("stop, that is the wrong database", said)  # the newer file, not the old snapshot


class BulkIngest(TempHome):
    def test_a_first_ingest_where_few_files_may_be_open_reads_every_transcript(self):
        # macOS lets a terminal's process open 256 files: a batch holds each transcript open until its commit
        import subprocess
        import sys
        from tests import synthetic
        expected = synthetic.write_dense(self.claude, 300)
        code = ("import resource, sys; hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]; "
                "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)); "
                "from openmemory import cli; sys.exit(cli.main(['ingest', '--json']))")
        done = subprocess.run([sys.executable, "-c", code], env=self.env(), capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        report = json.loads(done.stdout)
        self.assertEqual((report["failed"], report["read"], report["added"]), ([], 300, expected))

    def test_a_killed_bulk_ingest_leaves_no_transcript_half_stored_and_the_next_one_finishes(self):
        import signal
        import subprocess
        import sys
        from tests import synthetic
        n = 2 * ingest.BATCH_FILES + 200  # more than one transaction's worth
        expected = synthetic.write_dense(self.claude, n)
        store.connect().close()
        p = subprocess.Popen([sys.executable, "-m", "openmemory", "ingest"], env=self.env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        watch = sqlite3.connect(self.home / "memory.db")
        try:
            while p.poll() is None and watch.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0:
                time.sleep(0.005)
            p.send_signal(signal.SIGKILL)  # as soon as the first transactions are in
            p.wait()
            stored = watch.execute("SELECT count(*) FROM sessions").fetchone()[0]
            halves = watch.execute(
                "SELECT s.path FROM sessions s WHERE s.episodes != "
                "(SELECT count(*) FROM episodes e WHERE e.session_id = s.id)").fetchall()
            orphans = watch.execute("SELECT count(*) FROM episodes WHERE session_id NOT IN "
                                    "(SELECT id FROM sessions)").fetchone()[0]
        finally:
            watch.close()
        self.assertGreater(stored, 0)
        self.assertLess(stored, n, "the ingest finished before it could be killed")
        self.assertEqual(halves, [])
        self.assertEqual(orphans, 0)
        again = self.ok("ingest")
        self.assertIn(f"read {n - stored} of {n} transcripts ({stored} unchanged)", again.stdout)
        self.assertEqual({k: v for k, v in status(self)["episodes"].items() if k in expected}, expected)


class WorkersReadWhileTheStoreWrites(TempHome):
    """A bulk ingest reads and prepares transcripts in worker processes: what it stores is
    exactly what one process stores, including where a worker's reading cannot be used."""

    NOW = "2026-11-20T08:00:00Z"

    def corpus(self) -> dict:
        from tests import synthetic
        expected = synthetic.write_dense(self.claude, 120)
        try:
            real = corpus_files()
        except unittest.SkipTest:
            real = []  # the synthetic sessions alone, then
        for path in real:
            folder = self.projects / path.parent.name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / path.name).write_bytes(path.read_bytes())
        twin = next(self.projects.glob("*/*.jsonl"))     # one session reached by two paths
        (self.projects / "-elsewhere").mkdir()
        (self.projects / "-elsewhere" / twin.name).write_bytes(twin.read_bytes())
        (self.projects / "-elsewhere" / "notes.jsonl").write_text("not a transcript\n" * 60)
        from openmemory import paths
        paths.ignore_list_path().parent.mkdir(parents=True, exist_ok=True)
        paths.ignore_list_path().write_text("/home/dev/auth-service\n")  # a project kept out
        return expected

    def stored(self) -> tuple:
        with store.connect() as db:
            sql = raw_db(db)
            episodes = sql.execute("SELECT id, key, session_id, cwd, kind, title, gist, detail, facts, at, "
                                   "embedding, context FROM episodes ORDER BY id").fetchall()
            sessions = sql.execute("SELECT id, path, cwd, title, started, ended, version, turns, skipped, "
                                   "episodes FROM sessions ORDER BY id").fetchall()
        return episodes, sessions

    def ingest(self, jobs: int, force: bool = False, watch=None) -> ingest.Report:
        """watch(connection, when): called at each transcript ('during') and once the ingest is done ('after')."""
        saved = os.environ.get("OPENMEMORY_JOBS"), ingest.PARALLEL_BYTES
        os.environ["OPENMEMORY_JOBS"], ingest.PARALLEL_BYTES = str(jobs), 0
        try:
            with store.connect() as db:
                progress = (lambda *_: watch(raw_db(db), "during")) if watch else None
                report = ingest.ingest(db, force=force, now=self.NOW, progress=progress)
                if watch:
                    watch(raw_db(db), "after")
                return report
        finally:
            ingest.PARALLEL_BYTES = saved[1]
            if saved[0] is None:
                os.environ.pop("OPENMEMORY_JOBS")
            else:
                os.environ["OPENMEMORY_JOBS"] = saved[0]

    def without_database(self) -> None:
        """The memory as before the first ingest (the transcripts stay)."""
        (self.home / "memory.db").unlink()
        for extra in ("memory.db-wal", "memory.db-shm"):
            (self.home / extra).unlink(missing_ok=True)

    def test_two_workers_store_what_one_process_stores(self):
        self.corpus()
        serial = self.ingest(0)
        alone = self.stored()
        self.without_database()
        parallel = self.ingest(2)
        self.assertEqual(parallel.as_dict(), serial.as_dict())
        self.assertEqual(parallel.not_transcripts, [str(self.projects / "-elsewhere" / "notes.jsonl")])
        self.assertGreater(parallel.opted_out, 0)
        together = self.stored()
        self.assertGreater(len(alone[0]), 300)  # 391 from the synthetic sessions alone
        self.assertEqual(together, alone)
        self.assertEqual(len({s[0] for s in together[1]}), len(together[1]))  # the twin has an id of its own

    def test_with_a_judge_on_two_workers_keep_the_light_episodes_one_process_keeps(self):
        # whether a judge is on is read once by the ingest and handed to the workers
        from tests.judge_requests import judge_on
        self.corpus()
        with judge_on():
            serial = self.ingest(0)
            alone = self.stored()
            self.without_database()
            parallel = self.ingest(2)
        self.assertEqual(parallel.as_dict(), serial.as_dict())
        self.assertEqual(self.stored(), alone)
        self.assertGreater(sum(1 for ep in alone[0] if not ep[5]), 0)   # light episodes (no title) kept for it

    def test_a_bulk_ingest_tunes_its_connection_only_while_it_runs(self):
        self.corpus()
        seen = set()

        def watch(sql, when):
            seen.add((when, *(sql.execute(f"PRAGMA {p}").fetchone()[0] for p in ("cache_size", "wal_autocheckpoint"))))
        self.ingest(2, watch=watch)
        self.assertEqual(seen, {("during", -store.BULK_CACHE_KB, store.BULK_CHECKPOINT_PAGES),
                                ("after", -2000, 1000)})  # SQLite's own defaults again
        seen.clear()
        self.ingest(0, force=True, watch=watch)  # one process: no bulk, nothing changed
        self.assertEqual(seen, {("during", -2000, 1000), ("after", -2000, 1000)})

    @unittest.skipUnless(store.BOOT_ID.exists(), "no boot id to tell a restart by (not Linux)")
    def test_a_first_bulk_ingest_writes_unsynced_and_syncs_everything_at_its_end(self):
        self.corpus()
        marker = store.unsynced_marker(self.home / "memory.db")
        seen = set()

        def watch(sql, when):
            seen.add((when, sql.execute("PRAGMA synchronous").fetchone()[0],
                      marker.read_text().split()[0] == store.BOOT_ID.read_text().strip()
                      if marker.exists() else None))
        self.ingest(2, watch=watch)
        self.assertEqual(seen, {("during", 0, True), ("after", 1, None)})  # OFF, marked; NORMAL, unmarked
        with store.connect() as db:  # the WAL's frames are all in the database file
            self.assertEqual(raw_db(db).execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1:], (0, 0))
        seen.clear()
        self.ingest(2, force=True, watch=watch)  # a memory that holds episodes: synced as always
        self.assertEqual(seen, {("during", 1, None), ("after", 1, None)})

    def test_a_project_let_back_in_loses_its_kept_out_marks_when_workers_read_it(self):
        self.corpus()
        first = self.ingest(2)
        self.assertGreater(first.opted_out, 0)
        self.assertEqual(status(self)["opted_out"], first.opted_out)
        from openmemory import paths
        paths.ignore_list_path().write_text("")  # the project kept out is let back in
        again = self.ingest(2)
        self.assertEqual((again.read, again.opted_out), (first.opted_out, 0))
        self.assertEqual(status(self)["opted_out"], 0)

    def test_a_forgotten_episode_stays_forgotten_when_workers_read_it_again(self):
        self.corpus()
        self.ingest(2)
        with store.connect() as db:
            victim = next(e for e in db.episodes("error"))
        self.ok("forget", str(victim["id"]), "--yes")
        again = self.ingest(2, force=True)
        self.assertEqual(again.added, {})
        with store.connect() as db:
            self.assertNotIn(victim["key"], {e["key"] for e in db.episodes()})

    def test_ctrl_c_stops_a_bulk_ingest_and_its_workers_and_the_next_one_finishes(self):
        import fcntl
        import signal
        from tests import synthetic
        expected = synthetic.write_dense(self.claude, 400)   # 8 MB: read by worker processes
        store.connect().close()
        # A transcript halfway is held under its lock, as another ingest of it would: the ingest
        # cannot end before the signal comes, however fast it is.
        files = ingest.discover()
        held = open(files[len(files) // 2], "rb")
        fcntl.flock(held, fcntl.LOCK_EX)
        p = None
        try:
            # Ctrl-C's default action restored in the child: a shell's background job (a
            # non-interactive `cmd &`) ignores SIGINT, and what is ignored stays ignored in children.
            p = subprocess.Popen([sys.executable, "-m", "openmemory", "ingest"], env=self.env(),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            children = Path(f"/proc/{p.pid}/task/{p.pid}/children")
            workers = []
            deadline = time.monotonic() + 60
            while len(workers) < 2 and time.monotonic() < deadline:
                workers = children.read_text().split() if children.exists() else []
                time.sleep(0.01)
            if not workers:
                p.kill()
                p.wait()
                self.skipTest("no worker processes seen (no /proc children list here)")
            self.assertIsNone(p.poll(), "the ingest ended while a transcript it must read was locked")
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=30)
        finally:
            held.close()
            if p is not None and p.poll() is None:  # the signal did not stop it: fail, leaving nothing running
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 130, err)
        self.assertIn(b"interrupted", err)
        time.sleep(0.5)
        for pid in workers:
            try:
                alive = b"openmemory" in Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                alive = False
            self.assertFalse(alive, f"worker {pid} outlived the ingest")
        self.ok("ingest")
        self.assertEqual({k: v for k, v in status(self)["episodes"].items() if k in expected}, expected)


class WorkerResults(unittest.TestCase):
    """Work in forked worker processes: results in order, and nothing hangs when a worker dies."""

    def test_results_come_in_the_items_order(self):
        items = list(range(200))
        got = list(ingest.worker_results(square, items, [1 << 19] * 200, 2, chunk_items=3))
        self.assertEqual(got, [n * n for n in items])

    def test_without_workers_the_work_is_done_here(self):
        self.assertEqual(list(ingest.worker_results(square, [1, 2, 3], [1, 1, 1], 1)), [1, 4, 9])

    def test_a_dead_worker_leaves_none_for_what_is_not_done_and_nothing_hangs(self):
        items = list(range(40))
        got = list(ingest.worker_results(die_on_seven, items, [1] * 40, 2, chunk_items=2, ahead=1))
        self.assertEqual(len(got), 40)
        self.assertEqual(got[0], 0)                 # done before the death
        self.assertEqual(got[6:8], [None, None])    # the dead worker's chunk
        for n, value in enumerate(got):
            self.assertIn(value, (None, n * n))     # the rest: done, or left to the caller

    def test_an_exception_in_a_worker_is_raised_here(self):
        with self.assertRaises(FileNotFoundError):
            list(ingest.worker_results(open_it, ["/nonexistent/openmemory"] * 4, [1] * 4, 2, chunk_items=1))
        self.assertEqual(list(ingest.worker_results(square, list(range(9)), [1] * 9, 2, chunk_items=1)),
                         [n * n for n in range(9)])  # and the next run starts afresh

    def test_when_no_process_can_be_forked_the_work_is_done_here(self):
        from unittest import mock
        with mock.patch.object(ingest.os, "fork", side_effect=BlockingIOError(11, "Resource temporarily unavailable")):
            got = list(ingest.worker_results(worker_pid, list(range(5)), [1] * 5, 2, chunk_items=1))
        self.assertEqual(got, [os.getpid()] * 5)
        forks = []

        def one_fork():     # the first fork works, the second finds no process to be had
            if forks:
                raise BlockingIOError(11, "Resource temporarily unavailable")
            forks.append(1)
            return real_fork()
        real_fork = os.fork
        with mock.patch.object(ingest.os, "fork", side_effect=one_fork):
            got = list(ingest.worker_results(worker_pid, list(range(6)), [1] * 6, 2, chunk_items=1))
        self.assertEqual(len(set(got)), 1)      # all done, by the one worker
        self.assertNotEqual(got[0], os.getpid())

    def test_a_few_large_chunks_go_to_both_workers(self):
        # four transcripts of a megabyte, a chunk each: given four to a worker at the start, the
        # first worker had them all and the second none (the public corpus's four chunks)
        got = list(ingest.worker_results(worker_pid, list(range(4)), [1 << 20] * 4, 2, chunk_items=1))
        self.assertEqual(len(set(got)), 2)
        self.assertNotIn(os.getpid(), got)

    def test_leaving_early_stops_the_workers(self):
        got = ingest.worker_results(worker_pid, list(range(100)), [1] * 100, 2, chunk_items=1)
        pids = {next(got), next(got), next(got)}
        self.assertNotIn(os.getpid(), pids)
        for pid in pids:
            os.kill(pid, 0)     # running
        got.close()
        for pid in pids:        # gone, and reaped: no process of that number is left
            with self.assertRaises(ProcessLookupError):
                os.kill(pid, 0)

    def test_a_worker_collects_garbage_rarely_and_never_walks_what_it_inherited(self):
        import gc
        got = list(ingest.worker_results(lambda _: (gc.get_threshold()[0], gc.get_freeze_count() > 0), list(range(4)),
                                   [1] * 4, 2, chunk_items=1))
        self.assertEqual(got, [(ingest.GC_YOUNG, True)] * 4)
        self.assertNotEqual(gc.get_threshold()[0], ingest.GC_YOUNG)   # this process keeps Python's own


SUBAGENTS = Path(__file__).with_name("data") / "subagents" / "projects"


class Subagents(TempHome):
    """Subagent transcripts (<session>/subagents/agent-*.jsonl, recorded with the real binary:
    tests/data/subagents/record.py), read for their failures, credited to the session that
    started them."""

    def setUp(self):
        super().setUp()
        import shutil
        shutil.copytree(SUBAGENTS, self.projects)

    def test_a_subagents_failure_is_its_sessions(self):
        self.assertEqual(len(ingest.discover([self.projects])), 2)        # subagents are no sessions of their own
        with store.connect() as db:
            ingest.ingest(db, [self.projects])
            sessions = {e["session_id"] for e in db.episodes("session")}
            errors = db.episodes("error")
            corrections = db.episodes("correction")
        self.assertEqual(len(errors), 2)
        self.assertEqual({e["session_id"] for e in errors}, sessions)
        for e in errors:
            self.assertTrue(e["facts"]["subagent"].startswith("a"))
            self.assertIn("failed in a subagent", e["title"])
            self.assertEqual(e["facts"]["cause"], "python3: configerror: build_env is not set")
        self.assertEqual(corrections, [])       # the task the agent gave its subagent is no one's correction

    def test_two_sessions_whose_subagents_fail_the_same_way_teach_it(self):
        self.ok("ingest")
        self.ok("sleep")
        with store.connect() as db:
            [lesson] = db.all_lessons()
        self.assertEqual(lesson["seen"], 2)
        self.assertIn("fails with `ConfigError: BUILD_ENV is not set`", lesson["text"])

    def test_a_subagent_that_wrote_after_its_session_makes_it_read_again(self):
        with store.connect() as db:
            first = ingest.ingest(db, [self.projects])
            again = ingest.ingest(db, [self.projects])
            [sub] = sorted(self.projects.rglob("agent-*.jsonl"))[:1]
            line = sub.read_text().splitlines()[0]
            with open(sub, "a") as f:
                f.write(line + "\n")        # a copied record: nothing new, but the file changed
            third = ingest.ingest(db, [self.projects])
        self.assertEqual((first.read, again.unchanged, third.read, third.unchanged), (2, 2, 1, 1))


class TwoPaths(TempHome):
    def test_the_same_transcript_by_two_paths_is_one_session(self):
        path = test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        link = self.tmp / "elsewhere"
        link.symlink_to(path.parent, target_is_directory=True)
        self.ok("ingest")
        self.ok("ingest", link / path.name)
        self.ok("ingest", "--force", link / path.name)
        self.ok("ingest", "--force")
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual((status["sessions"], status["episodes"]["session"]), (1, 1))
        self.assertEqual(status["episodes"]["total"], 3)


class NotATranscript(TempHome):
    def test_a_file_that_is_no_transcript_is_skipped_whole_with_one_warning(self):
        folder = project_folder(self.claude, PROJECT)
        test_session(cwd=PROJECT).write(folder)
        other = folder / "exported.jsonl"  # JSON lines, but not Claude Code's
        other.write_text("".join(json.dumps({"row": i, "name": f"item {i}"}) + "\n" for i in range(500)) +
                         "not even json\n" * 300)
        p = self.ok("ingest")
        self.assertIn("1 file skipped (not a transcript)", p.stdout)
        warnings = [line for line in p.stderr.splitlines() if "warning" in line]
        self.assertEqual(warnings, [f"openmemory: warning: skipped {other}: not a Claude Code transcript (no "
                                    f"record of a known type in its first lines); it is not read again until "
                                    f"it changes"])
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual((status["sessions"], status["lines_skipped"]), (1, 0))
        again = self.ok("ingest")
        self.assertEqual(again.stderr, "")
        self.assertIn("read 0 of 2 transcripts (2 unchanged)", again.stdout)
        with other.open("a") as f:
            f.write('{"more": true}\n')
        self.assertEqual(len([x for x in self.ok("ingest").stderr.splitlines() if "warning" in x]), 1)

    def test_a_transcript_whose_first_lines_are_broken_is_still_read(self):
        folder = project_folder(self.claude, PROJECT)
        path = test_session(cwd=PROJECT).write(folder)
        path.write_text("{half a line\n" * 3 + path.read_text())
        p = self.ok("ingest")
        self.assertEqual(p.stderr, "")
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual((status["sessions"], status["lines_skipped"]), (1, 3))


class HalfASurrogatePair(TempHome):
    """JavaScript cuts strings by UTF-16 unit: a tool output or a message cut in the middle of an
    emoji is written by JSON.stringify as "\\ud83d" with no low half (Claude Code's own API calls
    have failed on such transcripts). Valid JSON, but no text SQLite, a file or a terminal takes."""

    def test_a_lone_surrogate_is_read_as_a_replacement_character_and_the_ingest_goes_on(self):
        t = Transcript(cwd=PROJECT)
        t.user("the build fails on the name caf\ud83d")
        t.assistant("Running the tests.", tools=[("Bash", {"command": "npm test"},
                                                  "Exit code 1\nError: cannot find module caf\udc00e", True)])
        t.assistant("It failed: the module caf\ud83d is missing.")
        t.user("no, never run npm test here, always run make check")
        t.assistant("Understood, make check.")
        path = t.write(project_folder(self.claude, PROJECT))
        self.assertIn("\\ud83d", path.read_text())      # written as Claude Code writes it
        test_session(cwd="/home/dev/blog").write(project_folder(self.claude, "/home/dev/blog"))
        p = self.ok("ingest")
        self.assertIn("read 2 of 2 transcripts", p.stdout)
        found = self.ok("recall", "--json", "cannot find module")
        self.assertIn("cannot find module caf\ufffde", found.stdout)
        self.ok("sleep")
        self.assertIn("live · seen in 1 session · project /home/dev/shop\n  In this project never run `npm test`", self.ok("lessons").stdout)
        self.assertEqual(self.ok("ingest").stdout.strip(), "read 0 of 2 transcripts (2 unchanged); new episodes: none")

    def test_a_path_that_is_not_utf8_is_said_and_the_others_read(self):
        folder = project_folder(self.claude, PROJECT)
        test_session(cwd=PROJECT).write(folder)
        odd = os.fsencode(str(folder)) + b"/caf\xe9.jsonl"
        with open(odd, "wb") as f:
            f.write(Path(test_session(cwd=PROJECT).write(self.tmp)).read_bytes())
        p = self.cli("ingest")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("read 1 of 2 transcripts", p.stdout)
        self.assertIn("caf\ufffd.jsonl: its path is not UTF-8 text", p.stderr)
        self.assertTrue(os.path.exists(odd))            # left as it is
