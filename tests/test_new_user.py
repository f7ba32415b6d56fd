"""What a new user met (issue 14), each fixed and held here: one test per thing they saw."""
import json
import os

from openmemory import ingest, mcp, paths, store
from tests.fixtures import Transcript, project_folder, test_session
from tests.helpers import TempHome
from tests.test_render import add_lesson

PROJECT = "/home/dev/shop"


class Status(TempHome):
    def test_the_hooks_ingest_is_the_last_ingest(self):
        path = test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        event = json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(path)})
        self.assertEqual(self.cli("hook", input=event).returncode, 0)
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual(status["sessions"], 1)
        self.assertIsNotNone(status["last_ingest"])
        self.assertNotIn("last ingest  never", self.ok("status").stdout)

    def test_transcripts_and_session_episodes_are_named_apart(self):
        test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        self.ok("ingest")
        out = self.ok("status").stdout
        self.assertIn("(1 session episode, 1 error, 1 correction, 0 notes; 0 archived)", out)
        self.assertIn("\ntranscripts  1 ingested, 0 malformed lines skipped\n", out)
        self.assertNotIn("sessions ", out)


class IngestCommand(TempHome):
    def test_json_without_a_claude_code_folder_is_still_one_object(self):
        p = self.ok("ingest", "--json")
        report = json.loads(p.stdout)
        self.assertEqual((report["files"], report["read"], report["added"]), (0, 0, {}))
        self.assertIn("no Claude Code transcripts at", p.stderr)

    def test_an_unknown_option_shows_the_verbs_own_usage(self):
        p = self.cli("ingest", "--bogus")
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage: openmemory ingest [-h]", p.stderr)
        self.assertIn("openmemory ingest: error: unrecognized arguments: --bogus", p.stderr)
        self.assertEqual(p.stdout, "")


class Paths(TempHome):
    def test_a_relative_openmemory_home_is_made_absolute(self):
        p = self.ok("paths", "--json", env=self.env(OPENMEMORY_HOME="rel-home"))
        where = json.loads(p.stdout)
        self.assertEqual(where["home"], os.path.join(os.path.realpath(self.tmp), "rel-home"))
        self.assertTrue(os.path.isabs(where["db"]))


class Remember(TempHome):
    def test_remember_from_the_terminal_then_recall_finds_it(self):
        work = self.tmp / "shop"
        work.mkdir()
        p = self.cli("remember", "Deploys", "go", "out", "on", "Fridays", "after", "the", "release", "checklist",
                     env=self.env(), )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^remembered as note \d+ \(project .+\)\n$")
        p = self.ok("recall", "release checklist fridays", "--json")
        [hit] = json.loads(p.stdout)
        self.assertEqual(hit["kind"], "note")
        self.assertEqual(hit["gist"], "Deploys go out on Fridays after the release checklist")
        self.assertEqual(hit["cwd"], os.path.realpath(self.tmp))

    def test_remember_reads_stdin_and_can_be_for_every_project(self):
        p = self.cli("remember", "--everywhere", "--json", input="Never commit .env files.\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        note = json.loads(p.stdout)
        self.assertIsNone(note["cwd"])
        with store.connect() as db:
            self.assertEqual(db.episode(note["id"])["gist"], "Never commit .env files.")

    def test_an_empty_note_is_an_error(self):
        p = self.cli("remember", input="  \n")
        self.assertEqual(p.returncode, 1)
        self.assertIn("openmemory: error: a note needs some text", p.stderr)


class Titles(TempHome):
    def test_a_title_cut_short_ends_with_an_ellipsis(self):
        text = "When the staging database is refreshed " + "the migrations must be replayed in order " * 5
        with store.connect() as db:
            note = db.episode(db.add_note(text))
        self.assertLessEqual(len(note["title"]), 100)
        self.assertTrue(note["title"].endswith("…"), note["title"])
        self.assertTrue(text.startswith(note["title"][:-1]))

    def test_mcp_results_do_not_repeat_the_title_at_the_start_of_the_gist(self):
        test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        with store.connect() as db:
            ingest.ingest(db)
            note_id = db.add_note("The shop project runs its tests with pytest -q, never unittest.")
            episodes = db.episodes()
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "recall", "arguments": {"query": "pytest unittest tests", "k": 10}}},
                           PROJECT)
        text = reply["result"]["content"][0]["text"]
        for episode in episodes + [{"id": note_id}]:
            with store.connect() as db:
                ep = db.episode(episode["id"])
            if f"[{ep['id']}] " not in text:
                continue
            block = text.split(f"[{ep['id']}] ", 1)[1].split("\n\n")[0]
            if ep["gist"].startswith(ep["title"].rstrip("…")):
                self.assertEqual(block.count(ep["title"].rstrip("…")), 1, block)  # said once, in the gist
            self.assertIn(ep["gist"], block)


class RecallHere(TempHome):
    def test_here_marks_this_projects_hits(self):
        shop = self.tmp / "shop"
        other = self.tmp / "other"
        for folder in (shop, other):
            folder.mkdir()
            test_session(cwd=str(folder)).write(project_folder(self.claude, folder))
        self.ok("ingest")
        p = self.cli("recall", "pytest", "unittest", "-k", "10", "--cwd", str(shop))
        self.assertEqual(p.returncode, 0, p.stderr)
        blocks = p.stdout.split("\n\n")
        ours = [b for b in blocks if " · shop · " in b.splitlines()[0]]
        theirs = [b for b in blocks if " · other · " in b.splitlines()[0]]
        self.assertTrue(ours and theirs, p.stdout)
        self.assertTrue(all(" · this project" in b.splitlines()[0] for b in ours))
        self.assertFalse(any(" · this project" in b.splitlines()[0] for b in theirs))
        unscoped = self.ok("recall", "pytest", "unittest").stdout
        self.assertNotIn("this project", unscoped)


class ArchivedHint(TempHome):
    def setUp(self):
        super().setUp()
        test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        self.ok("ingest")
        self.ok("sleep", "--now", "2031-01-01T03:00:00Z")  # years untouched: every episode fades
        with store.connect() as db:
            self.archived = [e for e in db.episodes() if e["archived"]]
        self.assertTrue(self.archived)

    def test_recall_with_only_archived_matches_says_how_many_and_revives_none(self):
        p = self.ok("recall", "pytest")
        self.assertRegex(p.stdout, r"^no memories match 'pytest'; \d+ archived memor(y matches|ies match): "
                                   r"add --archived\n$")
        with store.connect() as db:
            self.assertEqual([e["id"] for e in db.episodes() if e["archived"]], [e["id"] for e in self.archived])
        self.assertEqual(self.ok("recall", "kubernetes").stdout, "no memories match 'kubernetes'\n")
        self.assertIn("pytest", self.ok("recall", "pytest", "--archived").stdout)

    def test_the_mcp_tool_says_so_too(self):
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "recall", "arguments": {"query": "pytest"}}}, PROJECT)
        text = reply["result"]["content"][0]["text"]
        self.assertRegex(text, r'^No memories match "pytest" for project /home/dev/shop\. \d+ archived '
                               r'memor(y matches|ies match): call recall again with include_archived true')


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


def lint_session(cwd):
    """A session where a lint command fails and the person says which one to run instead."""
    t = Transcript(style="2.1.328", cwd=cwd)
    t.user("check the code style")
    t.assistant("Running the linter.", tools=[("Bash", {"command": "make lint"},
                                               "Exit code 2\nmake: *** No rule to make target 'lint'.  Stop.", True)])
    t.user("No, don't use make lint here, run ruff check . instead")
    t.assistant("Understood.", tools=[("Bash", {"command": "ruff check ."}, "All checks passed!", False)])
    return t


class TwoSleepsOneNight(TempHome):
    def test_morning_shows_what_the_whole_night_learnt(self):
        shop = str(self.tmp / "shop")
        test_session(cwd=shop).write(project_folder(self.claude, shop))
        self.ok("ingest")
        first = self.ok("sleep", "--now", "2026-11-03T03:00:00Z").stdout
        self.assertTrue(first.startswith("1 new lesson, "), first)
        lint_session(shop).write(project_folder(self.claude, shop))
        self.ok("ingest")
        second = self.ok("sleep", "--now", "2026-11-03T04:00:00Z").stdout
        report = json.loads(self.ok("morning", "--json").stdout)
        texts = [lesson["text"] for lesson in report["lessons_new"]]
        self.assertEqual(len(texts), 2, texts)
        self.assertTrue(any("pytest" in t for t in texts) and any("ruff" in t for t in texts), texts)
        morning = self.ok("morning").stdout
        self.assertIn("\n\n2 new lessons, ", morning)
        self.assertIn(" (in all, over 2 sleeps).\n", morning)
        # What was printed agrees with morning: this sleep's own, and the night in all.
        self.assertTrue(second.startswith("1 new lesson, "), second)
        self.assertIn("; tonight in all: 2 new lessons, ", second)
        third = self.ok("sleep", "--now", "2026-11-03T05:00:00Z").stdout  # nothing new: the night stays whole
        self.assertTrue(third.startswith("0 new lessons, "), third)
        self.assertIn("; tonight in all: 2 new lessons, ", third)
        self.assertEqual(len(json.loads(self.ok("morning", "--json").stdout)["lessons_new"]), 2)
        self.ok("sleep", "--now", "2026-11-04T03:00:00Z")  # the next night starts afresh
        self.assertEqual(json.loads(self.ok("morning", "--json").stdout)["lessons_new"], [])


class VetoClosesThePrediction(TempHome):
    def test_a_vetoed_lessons_open_prediction_is_closed(self):
        repo = self.tmp / "repo"
        repo.mkdir()
        with store.connect() as db:
            lesson = add_lesson(db, cwd=str(repo), strength=1.5, seen=2)
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual(status["predictions_open"], 1)
        (paths.memory_dir_for(repo) / f"om-{lesson}.md").unlink()
        self.assertIn(f"vetoed lesson {lesson}", self.ok("render").stdout)
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual((status["predictions"], status["predictions_open"]), (1, 0))
        self.ok("sleep", "--now", "2026-11-07T03:00:00Z")
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["predictions_open"], 0)


class MemoryMdLineEndings(TempHome):
    def test_the_section_takes_the_files_own_line_endings_end_marker_included(self):
        repo = self.tmp / "repo"
        repo.mkdir()
        memory = paths.memory_dir_for(repo)
        memory.mkdir(parents=True)
        mine = b"# Notes\r\n- [Deploys](deploys.md) \xe2\x80\x94 Fridays\r\n- second line\r\n"
        # A section an earlier render wrote in \n, in a file the person keeps in \r\n.
        (memory / "MEMORY.md").write_bytes(b"<!-- openmemory:begin -->\n<!-- openmemory:end -->\n" + mine)
        with store.connect() as db:
            add_lesson(db, cwd=str(repo), strength=1.5)
        self.ok("render")
        data = (memory / "MEMORY.md").read_bytes()
        self.assertTrue(data.endswith(mine), data)
        self.assertNotIn(b"\n", data.replace(b"\r\n", b""), data)  # every line ends in \r\n
        self.assertIn(b"<!-- openmemory:end -->\r\n# Notes", data)
