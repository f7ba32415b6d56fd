"""SIGKILL at random points of ingest, sleep, render and forget (tests/kill.py): a handful here; the
full campaign (fifty per stage) is `python3 -m tests.kill --full`."""
import os

from openmemory import render, store
from tests import kill
from tests.helpers import TempHome


class KilledMidway(TempHome):
    def test_two_kills_per_stage_lose_nothing_and_a_rerun_ends_as_if_never_killed(self):
        result = kill.campaign(kills_per_stage=2, seed=11)
        self.assertEqual(result["failures"], [])
        self.assertEqual((result["kills"], result["survived"]), (10, 10))


class LeftBehind(TempHome):
    def test_render_sweeps_temporary_files_of_dead_writers_only(self):
        folder = self.claude / "projects" / "-p" / "memory"
        folder.mkdir(parents=True)
        self.home.mkdir(parents=True)
        dead = 2 ** 22 + 12345  # above any pid this machine hands out (pid_max is at most 2^22)
        stale = [folder / f".MEMORY.md.{dead}.x1y2.om-tmp", self.home / f".lessons.jsonl.{dead}.a_b.om-tmp"]
        live = [folder / f".om-1.md.{os.getpid()}.q9.om-tmp", self.home / f".written.json.{os.getpid()}.zz.om-tmp"]
        for p in stale + live:
            p.write_bytes(b"half")
        with store.connect() as db:
            render.render(db)
        self.assertEqual([p.exists() for p in stale], [False, False])
        self.assertEqual([p.exists() for p in live], [True, True])
