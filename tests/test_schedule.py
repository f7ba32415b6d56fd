"""When sleep runs (schedule.py): the catch-up a session start gives, never a second sleep at once."""
import json
import subprocess

from openmemory import schedule, store
from tests.fixtures import Transcript, test_session
from tests.helpers import SetupCase, raw_db


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
