"""When sleep runs (schedule.py): the catch-up a session start gives, never a second sleep at once."""
import json
import subprocess

from openmemory import schedule
from tests.fixtures import test_session
from tests.helpers import SetupCase


class Catchup(SetupCase):
    def test_session_start_starts_one_detached_sleep_when_the_last_is_a_day_old(self):
        transcript = test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x")
        self.ok("ingest", transcript)
        self.ok("sleep", "--now", "2020-01-01T03:00:00Z")
        event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s",
                            "transcript_path": str(transcript), "cwd": str(self.tmp)})
        p = self.cli("hook", input=event)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertTrue((self.home / "catch-up.stamp").exists())
        # The detached sleep takes the lock, runs and records tonight; wait for it.
        for _ in range(600):
            status = json.loads(self.ok("status", "--json").stdout)
            if not status["last_sleep"].startswith("2020") and not self.lock_held():
                break
            subprocess.run(["sleep", "0.1"])
        self.assertFalse(status["last_sleep"].startswith("2020"), status)
        # A second session start within the hour starts nothing, and says nothing.
        last = status["last_sleep"]
        p = self.cli("hook", input=event)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        subprocess.run(["sleep", "1"])
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["last_sleep"], last)

    def lock_held(self) -> bool:
        return schedule.sleep_running()

    def test_a_catch_up_does_nothing_while_another_sleep_holds_the_lock(self):
        self.ok("sleep", "--now", "2020-01-01T03:00:00Z")
        with schedule.sleep_lock() as held:
            self.assertTrue(held)
            p = self.cli("sleep", "--catch-up")
            self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertTrue(json.loads(self.ok("status", "--json").stdout)["last_sleep"].startswith("2020"))
        p = self.cli("sleep", "--catch-up")
        self.assertEqual((p.returncode, p.stdout), (0, ""))
        self.assertFalse(json.loads(self.ok("status", "--json").stdout)["last_sleep"].startswith("2020"))

    def test_due_only_after_a_day(self):
        now = 1_800_000_000
        self.assertTrue(schedule.sleep_due(None, now))
        self.assertFalse(schedule.sleep_due("2027-01-15T07:00:00Z", now))   # 1 h 0 min before now
        self.assertTrue(schedule.sleep_due("2027-01-14T07:59:00Z", now))    # a day and a minute
