"""`openmemory hook` (and `openmemory ingest --quiet`) as Claude Code runs them: a subprocess
with the event's JSON on stdin. Always exit 0, never a byte on stdout, problems in the log."""
import json
import os
import subprocess
import sys
import threading
import time
import unittest
from unittest import mock

from openmemory import hook, paths, store
from tests.bench_hook import heavy_transcript
from tests.fixtures import Transcript, project_folder, test_session
from tests.helpers import SetupCase, TempHome, figures, raw_db

PROJECT = "/home/dev/shop"


def event(name, path, **extra):
    return {"session_id": "s", "transcript_path": str(path), "cwd": PROJECT, "hook_event_name": name, **extra}


class HookCase(TempHome):
    def transcript(self, t=None):
        t = t or test_session(cwd=PROJECT)
        self.session_id = t.session_id
        return t.write(project_folder(self.claude, PROJECT))

    def hook(self, payload, *args, keep_stdin_open=False, verb=("hook",)):
        """Run the verb like Claude Code does; return (rc, stdout, stderr) once it exits."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        proc = subprocess.Popen([sys.executable, "-m", "openmemory", *verb, *args], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env(), cwd=str(self.tmp))
        def feed():
            try:
                proc.stdin.write(data)
                proc.stdin.flush()
                if not keep_stdin_open:
                    proc.stdin.close()
            except BrokenPipeError:
                pass  # the hook stopped reading an oversized payload, as it should
        feeder = threading.Thread(target=feed)
        feeder.start()
        # communicate() returns only when the process and every holder of its pipes are gone.
        out, err = _communicate(proc, timeout=60)
        feeder.join(60)
        if not proc.stdin.closed:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass
        return proc.returncode, out, err

    def assert_silent_success(self, result):
        rc, out, err = result
        self.assertEqual((rc, out, err), (0, b"", b""))

    def episodes(self):
        if not (self.home / "memory.db").exists():
            return []
        with store.connect() as db:
            return db.episodes()

    def log(self):
        path = self.home / "logs" / "openmemory.log"
        return path.read_text() if path.exists() else ""


def _communicate(proc, timeout):
    """Read both pipes to EOF without touching stdin (which may be left open on purpose)."""
    out, err = [], []
    readers = [threading.Thread(target=lambda s=s, b=b: b.append(s.read())) for s, b in
               ((proc.stdout, out), (proc.stderr, err))]
    for r in readers:
        r.start()
    proc.wait(timeout)
    for r in readers:
        r.join(timeout)
    proc.stdout.close()
    proc.stderr.close()
    return b"".join(out), b"".join(err)


class SessionEnd(HookCase):
    def test_session_end_ingests_that_transcript(self):
        path = self.transcript()
        self.assert_silent_success(self.hook(event("SessionEnd", path, reason="other", prompt_id="p")))
        kinds = sorted(e["kind"] for e in self.episodes())
        self.assertEqual(kinds, ["correction", "error", "session"])
        self.assertIn(f"SessionEnd: {path}: read 1 of 1 transcript", self.log())
        self.assertEqual(os.stat(self.home / "logs" / "openmemory.log").st_mode & 0o777, 0o600)

    def test_pre_compact_ingests_too(self):
        path = self.transcript()
        self.assert_silent_success(self.hook(event("PreCompact", path, trigger="manual", custom_instructions=None)))
        self.assertEqual(len(self.episodes()), 3)

    def test_only_the_named_transcript_is_read(self):
        path = self.transcript()
        other = Transcript(cwd="/home/dev/other")
        other.user("something else entirely")
        other.assistant("ok")
        other.write(project_folder(self.claude, "/home/dev/other"))
        self.assert_silent_success(self.hook(event("SessionEnd", path)))
        self.assertEqual({e["session_id"] for e in self.episodes()}, {self.session_id})

    def test_other_events_do_nothing(self):
        path = self.transcript()
        for name in ("SessionStart", "Stop"):
            with self.subTest(name=name):
                self.assert_silent_success(self.hook(event(name, path, source="startup")))
        for name in ("UserPromptSubmit", "PostToolUse", "SubagentStop", "PostCompact", "Whatever", None, 7):
            with self.subTest(name=name):
                self.assertIn("nothing to do", hook.run(event(name, path)))
        self.assertEqual(self.episodes(), [])

    def test_inside_openmemorys_own_judge_nothing_is_ingested_or_started(self):
        # The judge's `claude -p` runs with hooks off; should one fire anyway (an older client,
        # a managed hook), the mark in its environment keeps it from recursing.
        path = self.transcript()
        with mock.patch.dict(os.environ, {paths.JUDGE_MARK: "1"}):
            for name in ("SessionEnd", "PreCompact", "SessionStart"):
                with self.subTest(name=name):
                    self.assertIn("inside openmemory's judge; nothing done", hook.run(event(name, path)))
        self.assertEqual(self.episodes(), [])
        self.assertFalse((self.home / "memory.db").exists())

    def test_stdin_left_open_after_the_event(self):
        # Claude Code has left the hook's stdin open (anthropics/claude-code#79508).
        path = self.transcript()
        self.assert_silent_success(self.hook(event("SessionEnd", path), keep_stdin_open=True))
        self.assertEqual(len(self.episodes()), 3)

    def test_stdin_left_open_and_empty(self):
        self.assert_silent_success(self.hook(b"", keep_stdin_open=True))
        self.assertIn("no hook event on stdin", self.log())

    def test_a_growing_transcript_updates_in_place(self):
        t = test_session(cwd=PROJECT)
        path = self.transcript(t)
        self.assert_silent_success(self.hook(event("SessionEnd", path)))
        t.user("Stop, that's wrong: the fixtures live in tests/data")
        t.assistant("Moving them.")
        t.write(path.parent, path.name)
        self.assert_silent_success(self.hook(event("SessionEnd", path)))
        kinds = sorted(e["kind"] for e in self.episodes())
        self.assertEqual(kinds, ["correction", "correction", "error", "session"])

    def test_an_unchanged_transcript_is_not_read_again(self):
        path = self.transcript()
        self.assert_silent_success(self.hook(event("SessionEnd", path)))
        with store.connect() as db:
            first = raw_db(db).execute("SELECT ingested FROM sessions").fetchone()[0]
        self.assert_silent_success(self.hook(event("SessionEnd", path)))
        with store.connect() as db:
            self.assertEqual(raw_db(db).execute("SELECT ingested FROM sessions").fetchone()[0], first)

    def test_a_half_written_last_line_is_skipped_not_fatal(self):
        path = self.transcript()
        with open(path, "a") as f:
            f.write('{"type": "user", "message": {"role": "us')
        self.assert_silent_success(self.hook(event("SessionEnd", path)))
        self.assertEqual(len(self.episodes()), 3)

    def test_a_symlinked_path_is_the_same_session_as_ingests(self):
        path = self.transcript()
        alias = self.tmp / "alias"
        alias.symlink_to(self.claude)
        via_link = alias / "projects" / path.parent.name / path.name
        self.assert_silent_success(self.hook(event("SessionEnd", via_link)))
        p = self.ok("ingest")
        self.assertIn("read 0 of 1 transcript (1 unchanged)", p.stdout)
        self.assertEqual(len(self.episodes()), 3)


class BadInput(HookCase):
    def test_bad_payloads_exit_0_silently_and_store_nothing(self):
        path = self.transcript()
        for payload in (b"not json", b"\xff\xfe\x00", b"x" * (hook.MAX_EVENT_BYTES + 100),
                        json.dumps(event("SessionEnd", path.parent)).encode()):
            with self.subTest(payload=payload[:60]):
                self.assert_silent_success(self.hook(payload))
        self.assertIn("no hook event on stdin", self.log())
        self.assertIn("WARNING SessionEnd: no readable transcript at", self.log())
        for value in (None, [1, 2], "SessionEnd", {"hook_event_name": "SessionEnd"},
                      event("SessionEnd", path.parent), event("SessionEnd", str(path) + ".txt"),
                      event("SessionEnd", path.name), event("SessionEnd", 42), event("SessionEnd", None),
                      event("SessionEnd", self.tmp / "missing.jsonl"),
                      event("SessionEnd", "~no-such-user-here/x.jsonl")):
            with self.subTest(value=str(value)[:60]):
                self.assertRegex(hook.run(value), "no hook event on stdin|no readable transcript|no transcript at")
        self.assertEqual(self.episodes(), [])

    def test_arguments_it_does_not_know_exit_0_silently_and_are_logged(self):
        # A hook command another version wrote into settings.json: exit 2 would mean "block" to
        # Claude Code, and the usage on stderr would land in the session.
        path = self.transcript()
        for args in (("--bogus",), ("--detach", "sometimes"), ("extra",)):
            with self.subTest(args=args):
                self.assert_silent_success(self.hook(event("SessionEnd", path), *args))
        self.assertIn("ERROR hook not run: openmemory hook: unrecognized arguments: --bogus", self.log())
        self.assertIn("argument --detach: invalid choice: 'sometimes'", self.log())
        self.assertEqual(self.hook({}, "--detach", "never")[0], 0)
        p = subprocess.run([sys.executable, "-m", "openmemory", "recall", "--bogus", "x"], capture_output=True,
                           text=True, env=self.env(), cwd=str(self.tmp))
        self.assertEqual(p.returncode, 2)   # every other verb: the usage and exit 2, as before

    def test_a_session_that_wrote_no_transcript_is_normal_and_logs_nothing(self):
        # What every `claude mcp list` sends (2.1.328): a SessionEnd naming a transcript never written.
        missing = self.claude / "projects" / "-tmp-rec" / "cfa82aa0-eb20-4d5c-be6a-8b63ce42edca.jsonl"
        self.assert_silent_success(self.hook(event("SessionEnd", self.transcript())))
        before = self.log()
        payload = {"session_id": "cfa82aa0-eb20-4d5c-be6a-8b63ce42edca", "transcript_path": str(missing),
                   "cwd": "/tmp/rec", "hook_event_name": "SessionEnd", "reason": "other"}
        self.assert_silent_success(self.hook(payload))
        self.assertEqual(self.log(), before)
        self.assertEqual(len(self.episodes()), 3)
        with self.assertLogs("openmemory.hook", "DEBUG") as said:
            hook.run(payload)
        self.assertEqual([r.levelname for r in said.records], ["DEBUG"])
        self.assertIn("no transcript at", said.output[0])

    def test_payloads_that_are_not_one_json_object(self):
        for payload in (b"", b"[1, 2]", b'"SessionEnd"', b"{" * 50_000, b'{"hook_event_name": "SessionE'):
            with self.subTest(payload=payload[:40]):
                r, w = os.pipe()
                os.write(w, payload)
                os.close(w)
                with os.fdopen(r, "rb") as stream:
                    self.assertIsNone(hook.read_event(stream))

    def test_a_damaged_database_is_logged_not_raised(self):
        path = self.transcript()
        self.home.mkdir(parents=True)
        (self.home / "memory.db").write_bytes(b"garbage" * 1000)
        self.assert_silent_success(self.hook(event("SessionEnd", path)))
        self.assertIn("is damaged", self.log())


class Detached(HookCase):
    def wait_for_episodes(self, n, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if len(self.episodes()) >= n:
                return self.episodes()
            time.sleep(0.1)
        self.fail(f"no {n} episodes after {seconds} s; log:\n{self.log()}")

    def wait_for_the_end(self, path, seconds=60):
        """Until the detached ingest of path logged its result, its last act before it exits (its
        database closed): the temporary home is removed only once nothing writes into it."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if f"SessionEnd: {path}: " in self.log():
                return
            time.sleep(0.1)
        self.fail(f"the detached ingest of {path} did not end in {seconds} s; log:\n{self.log()}")

    def test_detached_ingest_outlives_the_hook_and_frees_its_pipes(self):
        path = self.transcript()
        # _communicate() returning at all shows no process kept the hook's stdout/stderr open.
        self.assert_silent_success(self.hook(event("SessionEnd", path), "--detach", "always"))
        self.assertEqual(sorted(e["kind"] for e in self.wait_for_episodes(3)), ["correction", "error", "session"])
        self.assertIn("in a detached process", self.log())
        self.wait_for_the_end(path)

    def test_a_transcript_over_the_inline_limit_is_detached(self):
        path = heavy_transcript(self.claude, hook.INLINE_MAX_BYTES + 300_000, cwd=PROJECT)
        self.assert_silent_success(self.hook(event("SessionEnd", path)))
        self.assertIn(f"SessionEnd: ingesting {path}", self.log())
        episodes = self.wait_for_episodes(1)
        self.assertEqual(episodes[0]["kind"], "session")
        self.wait_for_the_end(path)

    def test_a_hook_returns_while_another_process_holds_the_database_and_its_work_is_done_after(self):
        path = self.transcript()
        store.connect().close()  # the memory exists (WAL), as after the first ingest
        holder = subprocess.Popen([sys.executable, "-c", HOLD_THE_DATABASE, str(self.home / "memory.db")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(holder.wait, 60)
        self.assertEqual(holder.stdout.readline(), b"held\n")
        try:
            # However long the person lets a writer wait (here 2 minutes: past this test's own
            # 60 s limit on the hook), the hook does not wait for the lock.
            with mock.patch.dict(os.environ, OPENMEMORY_BUSY_TIMEOUT_MS="120000"):
                started = time.monotonic()
                result = self.hook(event("SessionEnd", path))
                took = time.monotonic() - started
            self.assert_silent_success(result)
            self.assertIsNone(holder.poll(), "the other process let go before the hook returned")
            self.assertEqual(self.episodes(), [])
        finally:
            holder.stdin.write(b"let go\n")
            holder.stdin.close()
            holder.stdout.close()
        self.assertEqual(sorted(e["kind"] for e in self.wait_for_episodes(3)), ["correction", "error", "session"])
        self.assertIn("another openmemory holds the memory database", self.log())
        self.wait_for_the_end(path)
        figures(f"hook against a database another process holds: returned in {took:.2f} s")


# Holds the write lock of the database at argv[1] until a line comes on stdin.
HOLD_THE_DATABASE = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("UPDATE state SET value = value WHERE key = 'held'")
print("held", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
"""

class OneIngestAtATime(HookCase):
    def test_an_ingest_waits_for_the_one_already_reading_that_transcript(self):
        import fcntl
        path = self.transcript()
        done = []
        with open(path, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_EX)  # as a slower ingest of the same transcript would
            worker = threading.Thread(target=lambda: done.append(hook.ingest_transcript(path, "SessionEnd")))
            worker.start()
            worker.join(0.3)
            self.assertTrue(worker.is_alive(), "ingested while another ingest held the transcript")
            self.assertEqual(self.episodes(), [])
        worker.join(60)
        self.assertIn("read 1 of 1 transcript", done[0])
        self.assertEqual(len(self.episodes()), 3)


class IngestQuietAsTheHook(HookCase):
    def test_ingest_quiet_ignores_stdin_even_left_open(self):
        path = self.transcript()
        self.assert_silent_success(self.hook(event("SessionEnd", path), keep_stdin_open=True,
                                             verb=("ingest", "--quiet")))
        self.assertEqual(len(self.episodes()), 3)


class ReadEvent(unittest.TestCase):
    """read_event: the first JSON object, without waiting for an end of input that may not come."""

    def pipe(self):
        r, w = os.pipe()
        reader, writer = os.fdopen(r, "rb"), os.fdopen(w, "wb")
        self.addCleanup(reader.close)
        self.addCleanup(lambda: writer.closed or writer.close())
        return reader, writer

    def test_an_object_split_across_writes_on_an_open_pipe(self):
        reader, writer = self.pipe()
        payload = json.dumps({"hook_event_name": "SessionEnd", "transcript_path": "/x.jsonl", "é": "ü"}).encode()

        def write_slowly():
            for i in range(0, len(payload), 7):
                writer.write(payload[i:i + 7])
                writer.flush()
                time.sleep(0.005)
        t = threading.Thread(target=write_slowly)
        t.start()
        self.assertEqual(hook.read_event(reader, deadline=30)["hook_event_name"], "SessionEnd")
        t.join()

    def test_nothing_on_an_open_pipe_is_none_after_the_deadline(self):
        reader, _ = self.pipe()
        self.assertIsNone(hook.read_event(reader, deadline=0.05))

    def test_end_of_input_and_trailing_text(self):
        reader, writer = self.pipe()
        writer.write(b'  {"hook_event_name": "Stop"}\n{"second": 1}')
        writer.close()
        self.assertEqual(hook.read_event(reader), {"hook_event_name": "Stop"})

    def test_no_stream(self):
        self.assertIsNone(hook.read_event(None))


class HookUnderThePlugin(SetupCase):
    def event(self, name="SessionEnd"):
        transcript = test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x")
        return json.dumps({"hook_event_name": name, "transcript_path": str(transcript), "session_id": "s"})

    def test_a_session_start_before_any_memory_creates_nothing(self):
        p = self.cli("hook", input=self.event("SessionStart"))
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertFalse((self.home / "memory.db").exists())

    def test_the_plugins_hook_stays_quiet_where_setup_installed_hooks(self):
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        p = self.cli("hook", input=self.event(), env=self.env(OPENMEMORY_INSTALL="plugin"))
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertFalse((self.home / "memory.db").exists())
        p = self.cli("hook", input=self.event())  # setup's own hook does the work
        self.assertEqual(p.returncode, 0)
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["sessions"], 1)


if __name__ == "__main__":
    unittest.main()
