"""What a new user met (issue 14), each fixed and held here: one test per thing they saw."""
import json
import os

from openmemory import ingest, mcp, store
from tests.fixtures import project_folder, test_session
from tests.helpers import TempHome

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
