"""Per-project opt-out: `.openmemory-ignore` in the working folder or above, or a listed folder."""
import json
import os
from pathlib import Path
from unittest import mock

from openmemory import ingest, optout, store, transcripts
from tests.fixtures import Transcript, project_folder, test_session
from tests.helpers import TempHome


class OptOutIngest(TempHome):
    def setUp(self):
        super().setUp()
        self.client = self.tmp / "work" / "client-nda"
        self.open_project = self.tmp / "work" / "blog"
        for folder in (self.client / "src", self.open_project):
            folder.mkdir(parents=True)

    def session(self, cwd, words="the secret client roadmap", day=2):
        from datetime import datetime, timezone
        t = test_session(cwd=str(cwd), start=datetime(2026, 11, day, 9, tzinfo=timezone.utc))
        t.user(f"No, don't describe {words} in the README")
        return t.write(project_folder(self.claude, str(cwd)))

    def raw_db(self) -> bytes:
        return b"".join(p.read_bytes() for p in self.home.glob("memory.db*"))

    def test_a_marker_keeps_the_session_out_and_nothing_of_it_is_stored(self):
        (self.client / optout.MARKER).write_text("")
        self.session(self.client / "src")  # a subfolder: the marker above counts
        self.session(self.open_project, words="the blog layout")
        out = self.ok("ingest", "--json").stdout
        report = json.loads(out)
        self.assertEqual((report["read"], report["opted_out"]), (1, 1))
        self.assertIn("1 kept out by .openmemory-ignore", self.ok("ingest", "--force").stdout)
        raw = self.raw_db()
        self.assertNotIn(b"client roadmap", raw)
        self.assertNotIn(b"client-nda", raw)
        self.assertIn(b"blog layout", raw)
        status = self.ok("status").stdout
        self.assertIn("1 kept out by .openmemory-ignore", status)
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["opted_out"], 1)

    def test_a_listed_folder_keeps_sessions_out(self):
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "ignore").write_text(f"# places I cannot write into\n{self.client}\n\n")
        self.session(self.client)
        self.ok("ingest")
        self.assertNotIn(b"client roadmap", self.raw_db())
        self.assertEqual(optout.reason(str(self.client / "src")), f"{self.client} (listed in {self.home / 'ignore'})")
        self.assertIsNone(optout.reason(str(self.open_project)))

    def test_only_the_first_records_are_read(self):
        (self.client / optout.MARKER).write_text("")
        path = self.session(self.client)
        with path.open("a") as f:  # a big tail that would take time to parse
            for _ in range(2000):
                f.write(json.dumps({"type": "user", "cwd": str(self.client), "message": {"content": "x" * 500}}) + "\n")
        with store.connect() as db, mock.patch.object(transcripts, "parse_lines",
                                                      side_effect=AssertionError("read the whole transcript")):
            report = ingest.ingest(db)
        self.assertEqual(report.opted_out, 1)

    def test_a_marker_added_later_stops_new_ingests_and_keeps_what_was_stored(self):
        path = self.session(self.client)
        self.ok("ingest")
        with store.connect() as db:
            before = [e["gist"] for e in db.episodes()]
        (self.client / optout.MARKER).write_text("")
        with path.open("a") as f:  # the session goes on: its new words stay out
            t = Transcript(cwd=str(self.client), session_id=path.stem)
            t.user("No, never mention the merger with Acme")
            f.write(t.text())
        self.session(self.client, words="the next quarter", day=5)
        report = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual(report["opted_out"], 2)
        with store.connect() as db:
            self.assertEqual([e["gist"] for e in db.episodes()], before)
        self.assertNotIn(b"merger with Acme", self.raw_db())
        self.assertNotIn(b"next quarter", self.raw_db())

    def test_removing_the_marker_lets_the_session_in(self):
        marker = self.client / optout.MARKER
        marker.write_text("")
        self.session(self.client)
        self.ok("ingest")
        marker.unlink()
        report = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual((report["read"], report["opted_out"]), (1, 0))
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["opted_out"], 0)

    def test_the_hook_keeps_it_out_too(self):
        (self.client / optout.MARKER).write_text("")
        path = self.session(self.client)
        p = self.cli("hook", input=json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(path)}))
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertNotIn(b"client roadmap", self.raw_db())
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["opted_out"], 1)


class OptOutRender(TempHome):
    """No lesson is rendered into the memory folder of a project kept out."""

    def setUp(self):
        super().setUp()
        from openmemory import paths
        self.nda = Path(os.path.realpath(self.tmp)) / "nda"
        self.blog = Path(os.path.realpath(self.tmp)) / "blog"
        for repo in (self.nda, self.blog):
            (repo / ".git").mkdir(parents=True)
            test_session(cwd=str(repo)).write(project_folder(self.claude, str(repo)))
        self.ok("ingest")
        self.nda_memory, self.blog_memory = paths.memory_dir_for(self.nda), paths.memory_dir_for(self.blog)
        self.db = store.connect()
        self.addCleanup(self.db.close)

    def test_marker_keeps_project_and_everywhere_lessons_out_and_removes_what_was_written(self):
        from openmemory import render
        from tests.test_render import add_lesson
        mine = add_lesson(self.db, "Run the NDA build with make nda", cwd=str(self.nda))
        everywhere = add_lesson(self.db, "Prefer pytest -q over unittest", cwd=None)
        render.render(self.db)
        self.assertTrue((self.nda_memory / f"om-{mine}.md").exists())
        self.assertTrue((self.nda_memory / f"om-{everywhere}.md").exists())
        (self.nda / optout.MARKER).write_text("")
        result = render.render(self.db)
        self.assertEqual(result["vetoed"], [])  # removed by openmemory, not vetoed by the person
        self.assertEqual(sorted(p.name for p in self.nda_memory.glob("om-*.md")), [])
        self.assertNotIn(b"](om-", (self.nda_memory / "MEMORY.md").read_bytes())  # the section holds no lesson
        self.assertTrue((self.blog_memory / f"om-{everywhere}.md").exists())
        lines = [json.loads(line) for line in (self.home / "lessons.jsonl").read_text().splitlines()]
        self.assertEqual(len(lines), 2)  # the wire format still lists both: the person's own memory

    def test_a_listed_folder_counts_for_render_too(self):
        from openmemory import render
        from tests.test_render import add_lesson
        (self.home / "ignore").write_text(f"{self.nda}\n")
        add_lesson(self.db, "Prefer pytest -q over unittest", cwd=None)
        render.render(self.db)
        self.assertEqual(list(self.nda_memory.glob("om-*.md")), [])
        self.assertEqual(len(list(self.blog_memory.glob("om-*.md"))), 1)
