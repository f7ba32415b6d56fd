"""When sleep runs (schedule.py): the catch-up a session start gives, never a second sleep at once."""
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

from openmemory import schedule, store
from tests.fixtures import Transcript, test_session
from tests.helpers import SetupCase, raw_db

AGENTS = Path(__file__).parent / "data" / "agents"


class Catchup(SetupCase):
    def start_event(self) -> str:
        return json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s",
                           "transcript_path": str(self.tmp / "s.jsonl"), "cwd": str(self.tmp)})

    def session_start(self):
        p = self.cli("hook", input=self.start_event())
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))

    def last_sleep(self):
        return json.loads(self.ok("status", "--json").stdout)["last_sleep"]

    def wait_for_a_night(self, before):
        """The detached sleep takes the lock, runs and records tonight; wait for it."""
        for _ in range(600):
            if self.last_sleep() != before and not schedule.sleep_running():
                break
            subprocess.run(["sleep", "0.1"])
        return self.last_sleep()

    def plain_session(self, name="plain"):
        t = Transcript(cwd=str(self.tmp))
        t.user("say hello")
        t.assistant("Hello.")
        return t.write(self.projects / "-tmp-x", name=f"{t.session_id}.jsonl")

    def test_session_start_starts_one_detached_sleep_when_the_last_night_is_old_and_something_came(self):
        self.ok("sleep", "--now", "2020-01-01T03:00:00Z")
        self.ok("ingest", test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x"))  # as SessionEnd does
        self.session_start()
        self.assertTrue((self.home / "catch-up.stamp").exists())
        last = self.wait_for_a_night("2020-01-01T03:00:00.000000Z")
        self.assertFalse(last.startswith("2020"), last)
        # The log says what happened: the hook started it, and what the night did.
        log = (self.home / "logs" / "openmemory.log").read_text()
        self.assertRegex(log, r"INFO SessionStart: last sleep 2020-01-01T03:00:00\.000000Z: catch-up sleep started\n")
        self.assertRegex(log, r"INFO catch-up sleep: \d+ new lessons?, .*; report in .*morning\.md\n")
        # A second session start within the hour starts nothing, and says nothing.
        self.session_start()
        subprocess.run(["sleep", "1"])
        self.assertEqual(self.last_sleep(), last)

    def test_a_catch_up_over_nothing_is_no_night_and_the_next_start_looks_again(self):
        # The first sessions of a new install: memory exists, nothing in it to learn from yet.
        self.ok("ingest", self.plain_session())
        self.session_start()
        self.assertFalse((self.home / "catch-up.stamp").exists())  # nothing started: look again next time
        p = self.cli("sleep", "--catch-up")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertIn("INFO catch-up sleep: no error or correction since the last night; no night\n",
                      (self.home / "logs" / "openmemory.log").read_text())
        self.assertIsNone(self.last_sleep())
        self.assertFalse((self.home / "morning.md").exists())
        # A session with a correction ends; the next session start catches up, and it is a night.
        self.ok("ingest", test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x"))
        self.session_start()
        self.assertIsNotNone(self.wait_for_a_night(None))
        status = json.loads(self.ok("status", "--json").stdout)
        # One correction makes a candidate (live once something backs it): the night learnt it.
        self.assertGreaterEqual(status["lessons"], 1, status)
        self.assertIn("new lesson", (self.home / "morning.md").read_text())
        # What that night examined is not news: a day later nothing starts, and last_sleep stays.
        with store.connect() as db:
            self.assertFalse(db.new_since_last_night())

    def test_a_catch_up_that_fails_says_why_in_the_log(self):
        # Its output goes nowhere (the hook started it detached): the log is where the person looks.
        self.ok("ingest", test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x"))
        for path in self.home.glob("memory.db*"):
            path.unlink()
        (self.home / "memory.db").write_bytes(b"not a database, " * 512)
        p = self.cli("sleep", "--catch-up")
        self.assertEqual(p.returncode, 1)
        self.assertRegex((self.home / "logs" / "openmemory.log").read_text(),
                         r"ERROR catch-up sleep failed: the memory database at .*memory\.db is damaged")

    def test_a_night_is_due_only_with_an_error_or_a_correction_since_it(self):
        self.ok("ingest", test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x"))
        with store.connect() as db:
            self.assertTrue(db.new_since_last_night())  # no night yet: everything is news
        self.ok("sleep")
        with store.connect() as db:
            self.assertFalse(db.new_since_last_night())  # that night examined it
        self.ok("ingest", self.plain_session())
        with store.connect() as db:
            self.assertFalse(db.new_since_last_night())  # a session with no surprise teaches nothing
        self.ok("remember", "a note is no surprise either")
        with store.connect() as db:
            self.assertFalse(db.new_since_last_night())
        self.ok("ingest", test_session(cwd="/home/dev/other").write(self.projects / "-home-dev-other"))
        with store.connect() as db:
            self.assertTrue(db.new_since_last_night())

    def test_a_session_starts_look_reads_only_the_ids_after_the_last_night(self):
        # The kind index would have SQLite read every error and correction ever stored.
        with store.connect() as db:
            plan = " ".join(row[3] for row in raw_db(db).execute("EXPLAIN QUERY PLAN " + store.NEW_SINCE_LAST_NIGHT,
                                                                 (0,)))
        self.assertIn("INTEGER PRIMARY KEY (rowid>?)", plan)

    def test_two_session_starts_at_once_start_one_catch_up(self):
        # Two terminals opened at once: both found no stamp and no sleep running, both looked, both
        # started `sleep --catch-up` (measured with 4 real hooks at once: 2 started in 4 of 6 tries;
        # the sleep lock kept it to one night, the other logging "another sleep is running").
        # Here the first is held mid-look, a real process, while a second real hook starts.
        self.ok("sleep", "--now", "2020-01-01T03:00:00Z")
        self.ok("ingest", test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x"))
        looking, go = self.tmp / "looking", self.tmp / "go"
        first = subprocess.Popen([sys.executable, "-c", f"""
import os, time
from openmemory import hook, schedule
def look():
    open({str(looking)!r}, "w").close()
    while not os.path.exists({str(go)!r}):
        time.sleep(0.02)
    return hook._since_last_night()
print(schedule.start_catch_up(look))
"""], env=self.env(), stdout=subprocess.PIPE, text=True)
        try:
            for _ in range(600):
                if looking.exists():
                    break
                subprocess.run(["sleep", "0.05"])
            self.assertTrue(looking.exists(), "the first session start never looked")
            self.session_start()                # the second, while the first looks
            log = self.home / "logs" / "openmemory.log"
            self.assertNotIn("catch-up sleep started", log.read_text() if log.exists() else "")
        except BaseException:
            first.kill()                        # never left waiting by a failed assertion
            first.wait()
            raise
        go.touch()
        out, _ = first.communicate(timeout=60)
        self.assertEqual(out, "last sleep 2020-01-01T03:00:00.000000Z: catch-up sleep started\n")
        last = self.wait_for_a_night("2020-01-01T03:00:00.000000Z")
        self.assertFalse(last.startswith("2020"), last)
        subprocess.run(["sleep", "1"])      # a second catch-up, had one started, would have logged by now
        said = log.read_text()
        self.assertEqual(len(re.findall(r"INFO catch-up sleep: .*; report in ", said)), 1, said)
        self.assertNotIn("another sleep is running", said)
        self.session_start()                # and the stamp the first left holds the next start off
        self.assertEqual(self.last_sleep(), last)

    def lock_held(self) -> bool:
        return schedule.sleep_running()

    def test_a_catch_up_does_nothing_while_another_sleep_holds_the_lock(self):
        self.ok("sleep", "--now", "2020-01-01T03:00:00Z")
        self.ok("ingest", test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x"))
        with schedule.sleep_lock() as held:
            self.assertTrue(held)
            p = self.cli("sleep", "--catch-up")
            self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertTrue(self.last_sleep().startswith("2020"))
        p = self.cli("sleep", "--catch-up")
        self.assertEqual((p.returncode, p.stdout), (0, ""))
        self.assertFalse(self.last_sleep().startswith("2020"))

    def test_due_only_after_a_day(self):
        now = 1_800_000_000
        self.assertTrue(schedule.sleep_due(None, now))
        self.assertFalse(schedule.sleep_due("2027-01-15T07:00:00Z", now))   # 1 h 0 min before now
        self.assertTrue(schedule.sleep_due("2027-01-14T07:59:00Z", now))    # a day and a minute


class ServerCatchup(SetupCase):
    """Codex and Gemini run no hook of openmemory's but start its MCP server at each session's start:
    `openmemory serve`, initialized by either, catches up as Claude Code's SessionStart hook does."""

    def setUp(self):
        super().setUp()
        two_days_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2 * 86400))
        self.ok("sleep", "--now", two_days_ago)             # the last night: two days old
        self.last = self.last_sleep()
        (self.home / "morning.md").unlink()
        self.rollout = self.codex_rollout("correction.jsonl")   # a Codex session since, never read

    def codex_rollout(self, name: str) -> Path:
        source = AGENTS / "codex" / name
        sid = json.loads(source.read_text().splitlines()[0])["payload"]["id"]
        folder = self.tmp / "user-home" / ".codex" / "sessions" / "2026" / "12" / "03"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"rollout-2026-12-03T12-28-21-{sid}.jsonl"
        shutil.copy(source, target)
        return target

    def last_sleep(self):
        return json.loads(self.ok("status", "--json").stdout)["last_sleep"]

    def sessions(self) -> list:
        with store.connect() as db:
            return [tuple(r) for r in raw_db(db).execute("SELECT path FROM sessions")]

    def serve(self, client: str, **env):
        """A server started as the agent starts it, initialized as that agent (clientInfo.name as
        measured), then asked tools/list; stdin stays open, as during a session."""
        proc = subprocess.Popen([sys.executable, "-m", "openmemory", "serve"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(self.tmp), env=self.env(**env))
        self.addCleanup(self.stop, proc)
        for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                            "protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": client, "version": "1"}}},
                        {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}):
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
        replies = [self.receive(proc), self.receive(proc)]
        self.assertEqual([r["id"] for r in replies], [1, 2])
        self.assertEqual([t["name"] for t in replies[1]["result"]["tools"]], ["recall", "show", "remember"])
        return proc

    def receive(self, proc) -> dict:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        self.assertTrue(ready, "no reply from the server")
        return json.loads(proc.stdout.readline())

    def stop(self, proc):
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()

    def end_session(self, proc) -> bytes:
        """Close stdin as the agent does at the session's end; what else the server wrote on stdout."""
        proc.stdin.close()
        rest = proc.stdout.read()
        self.assertEqual(proc.wait(60), 0)
        return rest

    def wait_for_a_night(self):
        for _ in range(600):
            if self.last_sleep() != self.last and not schedule.sleep_running():
                break
            time.sleep(0.1)
        return self.last_sleep()

    def log(self) -> str:
        path = self.home / "logs" / "openmemory.log"
        return path.read_text() if path.exists() else ""

    def wait_for_log(self, pattern: str) -> str:
        """The log once it matches: the look runs in a detached process, after the server's reply."""
        for _ in range(600):
            if re.search(pattern, self.log()):
                break
            time.sleep(0.1)
        self.assertRegex(self.log(), pattern)
        return self.log()

    def test_a_codex_session_start_reads_codexs_sessions_and_sleeps(self):
        proc = self.serve("codex-mcp-client")
        self.assertNotEqual(self.wait_for_a_night(), self.last)
        self.assertEqual(self.sessions(), [(str(self.rollout),)])          # the waiting session was read
        self.assertIn("1 new candidate", (self.home / "morning.md").read_text())  # its correction learnt from
        self.assertRegex(self.log(), r"INFO codex session start: last sleep \S+: catch-up sleep started\n")
        # The server still answers, and its stdout carried replies only.
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 3, "method": "ping"}\n')
        proc.stdin.flush()
        self.assertEqual(self.receive(proc), {"jsonrpc": "2.0", "id": 3, "result": {}})
        self.assertEqual(self.end_session(proc), b"")
        # The next session start within the hour starts nothing (the hook's stamp), nor says anything.
        night = self.last_sleep()
        self.end_session(self.serve("gemini-cli-mcp-client", OPENMEMORY_DEBUG="1"))
        self.wait_for_log(r"DEBUG gemini session start: looked within the hour; not again\n")
        self.assertEqual(self.last_sleep(), night)
        self.assertEqual(self.log().count("catch-up sleep started"), 1)

    def test_a_gemini_session_start_catches_up_too(self):
        self.end_session(self.serve("gemini-cli-mcp-client"))
        self.assertNotEqual(self.wait_for_a_night(), self.last)
        self.assertEqual(self.sessions(), [(str(self.rollout),)])
        self.assertIn("INFO gemini session start: last sleep", self.log())

    def test_claude_code_or_openmemorys_own_clients_start_none(self):
        # Claude Code's SessionStart hook catches up; doctor's check of the server is no session.
        for client in ("claude-code", "openmemory-doctor"):
            self.assertEqual(self.end_session(self.serve(client)), b"")
        self.assert_nothing_started()
        self.end_session(self.serve("codex-mcp-client"))     # where Codex's session start would have
        self.assertNotEqual(self.wait_for_a_night(), self.last)

    def test_no_catch_up_from_inside_openmemorys_judge(self):
        self.end_session(self.serve("codex-mcp-client", OPENMEMORY_JUDGE="1"))
        judge = self.home / "judge"
        judge.mkdir()
        proc = subprocess.Popen([sys.executable, "-m", "openmemory", "serve"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(judge), env=self.env())
        self.addCleanup(self.stop, proc)
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "clientInfo": {"name": "codex-mcp-client"}}}).encode() + b"\n")
        proc.stdin.flush()
        self.assertEqual(self.receive(proc)["id"], 1)
        self.end_session(proc)
        self.assert_nothing_started()
        self.end_session(self.serve("codex-mcp-client"))     # the same, outside the judge
        self.assertNotEqual(self.wait_for_a_night(), self.last)

    def test_nothing_new_since_the_last_night_starts_none(self):
        self.ok("ingest")                         # the Codex session read by hand...
        self.ok("sleep", "--now", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2 * 86400)))
        self.last = self.last_sleep()             # ...and learnt from, two days ago
        os.utime(self.rollout, (time.time() - 3 * 86400,) * 2)
        self.ok("ingest")
        self.end_session(self.serve("codex-mcp-client", OPENMEMORY_DEBUG="1"))
        self.wait_for_log(r"DEBUG codex session start: last sleep \S+: nothing new to learn from since; no catch-up\n")
        self.assertFalse((self.home / "catch-up.stamp").exists())  # looked, found nothing: the next start looks
        self.assertEqual(self.last_sleep(), self.last)
        # A session written since (Codex's rollout goes on) is news again: the next start catches up.
        with self.rollout.open("a") as f:
            f.write(self.rollout.read_text().splitlines()[-1] + "\n")
        self.end_session(self.serve("codex-mcp-client"))
        self.wait_for_log(r"INFO codex session start: last sleep \S+: catch-up sleep started\n")
        self.assertTrue((self.home / "catch-up.stamp").exists())
        # The detached sleep reads it and says what it found.
        self.wait_for_log(r"INFO catch-up sleep: no error or correction since the last night; no night\n")
        for _ in range(600):
            if not schedule.sleep_running():
                break
            time.sleep(0.1)
        self.assertEqual(self.last_sleep(), self.last)   # read again, nothing new in it: no night

    def assert_nothing_started(self):
        self.assertFalse((self.home / "catch-up.stamp").exists())
        self.assertEqual(self.sessions(), [])
        self.assertEqual(self.last_sleep(), self.last)
        self.assertFalse((self.home / "morning.md").exists())
        self.assertNotIn("session start", self.log())
