"""`openmemory lessons`: every lesson and candidate with its state, what backs it and where it
came from; approve, reject (a veto that sticks), edit (the person's text, kept through what
rewords lessons). Only the person approves: the MCP server has no way to."""
import json
import os
from datetime import datetime, timezone

from openmemory import mcp, paths, render, store
from tests.fixtures import Transcript, project_folder
from tests.helpers import TempHome, raw_db

SAID = "No, don't use unittest here, run the tests with pytest -q"
LESSON = "In this repository run the tests with `pytest -q`, not `python -m unittest`."


def corrected(cwd, day, said=SAID, command="python -m unittest"):
    """The agent runs the tests the wrong way; the person corrects it."""
    t = Transcript(cwd=str(cwd), start=datetime(2026, 11, day, 9, tzinfo=timezone.utc))
    t.user("run the tests")
    t.assistant("Running them.", tools=[("Bash", {"command": command}, "Exit code 1\nImportError: no shop.tests",
                                         True)])
    t.user(said)
    t.assistant("Understood.", tools=[("Bash", {"command": "pytest -q"}, "12 passed", False)])
    return t


class ReviewCase(TempHome):
    def setUp(self):
        super().setUp()
        self.repo = self.tmp / "shop"
        (self.repo / ".git").mkdir(parents=True)
        self.repo = os.path.realpath(self.repo)
        self.memory = paths.memory_dir_for(self.repo)

    def night(self, *transcripts, now="2026-11-20T03:00:00Z"):
        for t in transcripts:
            t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        return self.ok("sleep", "--now", now).stdout

    def listed(self):
        return json.loads(self.ok("lessons", "--json").stdout)

    def index(self) -> str:
        md = self.memory / "MEMORY.md"
        return md.read_text() if md.exists() else ""


class Listing(ReviewCase):
    def test_a_candidate_is_listed_with_where_it_came_from_and_how_to_approve_it(self):
        self.night(corrected(self.repo, 2))
        p = self.ok("lessons")
        self.assertEqual(p.stdout.splitlines(), [
            f"lesson:1 · candidate · seen in 1 session · project {self.repo}",
            f"  {LESSON}",
            "  candidate since 2026-11-20: nothing backs it yet; approve: openmemory lessons approve lesson:1",
            f"  - 2026-11-02, shop: you said \"{SAID}\" after `python -m unittest` failed"])
        with store.connect() as db:
            episodes = {e["kind"]: e["id"] for e in db.episodes() if e["kind"] != "session"}
        [entry] = self.listed()
        self.assertEqual((entry["ref"], entry["state"], entry["text"], entry["seen"], entry["scope"]),
                         ("lesson:1", "candidate", LESSON, 1, "project"))
        self.assertEqual(sorted(entry["episodes"]), sorted(episodes.values()))
        self.assertEqual([(s["kind"], s["episode"], s["project"]) for s in entry["sources"]],
                         [("correction", episodes["correction"], "shop")])      # one line a session

    def test_where_it_came_from_quotes_the_persons_words_not_the_log_they_pasted_first(self):
        paste = "$ pytest tests/test_orders.py\nE   ImportError: no module named shop.tests\n1 error in 0.21s\n"
        self.night(corrected(self.repo, 2, said=paste + SAID))
        listed = self.ok("lessons").stdout
        self.assertIn(f"  - 2026-11-02, shop: you said \"{SAID}\" after `python -m unittest` failed", listed)
        self.assertNotIn("pytest tests/test_orders.py", listed)
        [source] = self.listed()[0]["sources"]
        self.assertIn(f"you said \"{SAID}\"", source["what"])

    def test_where_it_came_from_quotes_the_line_under_a_heading_the_person_typed(self):
        # public9: what a person deciding on "dont use marmaid.js anymnore" was shown of its source
        # was the heading it answered under, 'you said "Answering your questions:"'
        said = "Answering your questions:\n1. No, don't use unittest here\n2. Yes"
        self.night(corrected(self.repo, 2, said=said))
        listed = self.ok("lessons").stdout
        self.assertIn("you said \"Answering your questions: / 1. No, don't use unittest here / 2. Yes\" after "
                      "`python -m unittest` failed", listed)

    def test_what_a_question_asks_about_is_no_lesson(self):
        # an aside in parentheses after a question, and the options listed under one, are what
        # the person asks about: neither is an instruction ("we use X elsewhere" read as "use X")
        asked = ["running the migrations with the make target should be fine here, right? (we use alembic directly "
                 "in other places to not depend on the Makefile of a branch)",
                 "Which way do you think is better for the cache?\n1. Clearing the cache only once at startup, update "
                 "the config and if the key is in the config, do not fetch anymore.\n2. something else?"]
        for day, said in enumerate(asked, 2):
            t = Transcript(cwd=str(self.repo), start=datetime(2026, 11, day, 9, tzinfo=timezone.utc))
            t.user("set up the migrations")
            t.assistant("Running them.", tools=[("Bash", {"command": "make migrate"}, "REJECT", said)])
            t.user("go on")
            t.assistant("Done.")
            t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-20T03:00:00Z")
        self.assertEqual([e["text"] for e in self.listed()], [])
        # the same words said as the person's own sentences are a lesson
        self.night(corrected(self.repo, 9, said="We use alembic directly, not the Makefile.", command="make migrate"))
        self.assertEqual(len(self.listed()), 1)

    def test_nothing_to_list(self):
        p = self.ok("lessons")
        self.assertEqual(p.stdout, "")
        self.assertIn("no lessons yet", p.stderr)
        self.assertEqual(self.listed(), [])

    def test_every_state_is_named(self):
        self.night(corrected(self.repo, 2), corrected(self.tmp / "blog", 3, "from now on, always use pnpm, never npm",
                                                      "npm install left-pad"))
        states = {e["text"]: (e["state"], e["backed_by"]) for e in self.listed()}
        self.assertEqual(states[LESSON], ("candidate", []))
        self.assertEqual(states["In this project always use `pnpm`, never `npm`."], ("live", ["standing"]))
        self.assertIn("live because you said it as a standing rule", self.ok("lessons").stdout)
        self.ok("lessons", "reject", "lesson:2")
        with store.connect() as db, db.transaction():
            raw_db(db).execute("UPDATE lessons SET archived = 1 WHERE id = 1")
        self.assertEqual(sorted(e["state"] for e in self.listed()), ["archived", "vetoed"])


class ThepersonDecides(ReviewCase):
    def test_approve_puts_a_candidate_into_the_agents_memory(self):
        self.night(corrected(self.repo, 2))
        self.assertNotIn("pytest", self.index())
        p = self.ok("lessons", "approve", "lesson:1")
        self.assertEqual(p.stdout, f"lesson:1 · live · {LESSON}\n")
        self.assertIn("1 live lesson in 1 memory folder", p.stderr)
        self.assertIn("[In this repository run the tests with `pytest -q`", self.index())
        self.assertEqual(json.loads((self.home / "lessons.jsonl").read_text())["backed_by"], ["approved"])
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual((status["lessons_live"], status["lessons_candidate"]), (1, 0))
        self.ok("sleep", "--now", "2026-11-21T03:00:00Z")        # a live lesson: sleep makes its prediction
        self.assertEqual(status["predictions_open"], 0)
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["predictions_open"], 1)

    def test_reject_is_a_veto_that_sticks(self):
        self.night(corrected(self.repo, 2, "from now on, don't use unittest here, run the tests with pytest -q"))
        self.assertIn("pytest", self.index())
        p = self.ok("lessons", "reject", "1")
        self.assertEqual(p.stdout, f"lesson:1 · vetoed · {LESSON}\n")
        self.assertNotIn("pytest", self.index())
        self.assertFalse((self.memory / "om-1.md").exists())
        [veto] = json.loads((self.home / "vetoed.json").read_text())["lessons"]
        self.assertEqual((veto["id"], veto["text"]), (1, LESSON))
        # A rebuilt memory learns it again: it stays vetoed, as after deleting its file.
        for path in self.home.glob("memory.db*"):
            path.unlink()
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-21T03:00:00Z")
        [entry] = self.listed()
        self.assertEqual((entry["text"], entry["state"]), (LESSON, "vetoed"))
        self.assertNotIn("pytest", self.index())
        p = self.cli("lessons", "approve", "lesson:1")
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertIn("lesson:1 was rejected (vetoed) and stays so", p.stderr)

    def test_a_veto_is_taken_back_only_by_name_and_then_holds_no_more(self):
        # a lesson rejected by mistake (or its file deleted): approve refuses and names the way
        # back; --undo-veto takes the veto back, and no later render or sleep vetoes it again
        self.night(corrected(self.repo, 2, "from now on, don't use unittest here, run the tests with pytest -q"))
        self.ok("lessons", "reject", "lesson:1")
        p = self.cli("lessons", "approve", "lesson:1")
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertIn("lesson:1 was rejected (vetoed) and stays so; to approve it all the same, take the veto back: "
                      "openmemory lessons approve lesson:1 --undo-veto", p.stderr)
        self.assertIn("Vetoed by you", (self.home / "morning.md").read_text())
        p = self.ok("lessons", "approve", "lesson:1", "--undo-veto")
        self.assertEqual(p.stdout, f"lesson:1 · live · {LESSON}\n")
        self.assertTrue((self.memory / "om-1.md").is_file())
        self.assertIn("pytest", self.index())
        self.assertEqual(json.loads((self.home / "vetoed.json").read_text())["lessons"], [])
        morning = (self.home / "morning.md").read_text()
        self.assertNotIn("Vetoed by you", morning)
        self.assertIn("## Approved by you", morning)
        self.ok("render")
        self.ok("sleep", "--now", "2026-11-21T03:00:00Z")
        [entry] = self.listed()
        self.assertEqual((entry["state"], (self.memory / "om-1.md").is_file()), ("live", True))
        (self.memory / "om-1.md").unlink()                  # the other veto: its file deleted
        self.assertIn("1 vetoed (file deleted)", self.ok("render").stdout)
        self.assertIn("openmemory lessons edit lesson:1 \"text\" --undo-veto",
                      self.cli("lessons", "edit", "lesson:1", "Run the tests with `pytest -q`.").stderr)
        p = self.ok("lessons", "edit", "lesson:1", "Run the tests with `pytest -q`.", "--undo-veto")
        self.assertEqual(p.stdout, "lesson:1 · live · Run the tests with `pytest -q`.\n")
        self.ok("render")
        self.assertIn("Run the tests with `pytest -q`.", (self.memory / "om-1.md").read_text())
        p = self.cli("lessons", "reject", "lesson:1", "--undo-veto")
        self.assertEqual((p.returncode, p.stderr), (2, "openmemory lessons: error: --undo-veto goes with approve or "
                                                       "edit: openmemory lessons approve lesson:N --undo-veto\n"))

    def test_a_forgotten_lessons_words_come_back_by_no_undo_veto(self):
        # forget's veto is for good: approve --undo-veto said 'lesson:2 · live' and 'Approved by
        # you' of a lesson the same command's render vetoed again
        self.night(corrected(self.repo, 2, "from now on, don't use unittest here, run the tests with pytest -q"))
        self.ok("forget", "lesson:1", "--yes")
        self.night(corrected(self.repo, 3, "from now on, don't use unittest here, run the tests with pytest -q"),
                   now="2026-11-21T03:00:00Z")
        [entry] = self.listed()
        self.assertEqual((entry["text"], entry["state"]), (LESSON, "vetoed"))
        lesson = f"lesson:{entry['id']}"
        for args in (("approve", lesson, "--undo-veto"), ("edit", lesson, LESSON, "--undo-veto")):
            p = self.cli("lessons", *args)
            self.assertEqual((p.returncode, p.stdout), (1, ""))
            self.assertIn(f"{lesson} would have the words of a lesson you forgot, which stay out for good; to keep "
                          f"it, put it in other words: openmemory lessons edit {lesson} \"text\" --undo-veto", p.stderr)
        [entry] = self.listed()
        self.assertEqual(entry["state"], "vetoed")
        self.assertNotIn("Approved by you", (self.home / "morning.md").read_text())
        p = self.ok("lessons", "edit", lesson, "Run the tests with `pytest -q`.", "--undo-veto")   # as it says
        self.assertEqual(p.stdout, f"{lesson} · live · Run the tests with `pytest -q`.\n")

    def test_undo_veto_takes_back_no_veto_of_another_lesson_that_had_its_id(self):
        # a database rebuilt (the recovery procedure) numbers lessons anew: vetoed.json's older
        # veto of 'lesson 1' is another lesson's, and stays when this lesson:1's is taken back
        other = "In this project use `yarn`, never `npm install`."
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "vetoed.json").write_text(json.dumps({"version": 1, "lessons": [
            {"id": 1, "text": other, "key": render.veto_key(other), "cwd": self.repo, "file": None,
             "vetoed": "2026-10-01T00:00:00.000000Z"}]}))
        self.night(corrected(self.repo, 2, "from now on, don't use unittest here, run the tests with pytest -q"))
        self.ok("lessons", "reject", "lesson:1")
        self.ok("lessons", "approve", "lesson:1", "--undo-veto")
        self.assertEqual([v["text"] for v in json.loads((self.home / "vetoed.json").read_text())["lessons"]], [other])
        self.assertTrue(render.vetoed_wording(other))

    def test_a_file_deleted_then_its_veto_taken_back_before_any_render_comes_back(self):
        # the deletion is found by the next render: the one approve ran after approving, which
        # vetoed the lesson the command had just said was live and 'in the agent's memory now'
        self.night(corrected(self.repo, 2, "from now on, don't use unittest here, run the tests with pytest -q"))
        (self.memory / "om-1.md").unlink()
        p = self.cli("lessons", "approve", "lesson:1")
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertIn("lesson:1 was rejected (vetoed) and stays so", p.stderr)
        p = self.ok("lessons", "approve", "lesson:1", "--undo-veto")
        self.assertEqual(p.stdout, f"lesson:1 · live · {LESSON}\n")
        self.assertIn("1 live lesson in 1 memory folder", p.stderr)
        [entry] = self.listed()
        self.assertEqual((entry["state"], (self.memory / "om-1.md").is_file()), ("live", True))
        self.assertIn("## Approved by you", (self.home / "morning.md").read_text())
        self.ok("sleep", "--now", "2026-11-21T03:00:00Z")
        self.assertEqual((self.listed()[0]["state"], (self.memory / "om-1.md").is_file()), ("live", True))

    def test_an_edited_candidate_is_as_approved_one_it_gets_its_prediction(self):
        self.night(corrected(self.repo, 2), corrected(self.tmp / "blog", 3, "no, don't use npm here, use yarn",
                                                      "npm install"))
        self.ok("lessons", "approve", "lesson:1")
        self.ok("lessons", "edit", "lesson:2", "In the blog run `yarn`, never `npm install`.")
        strength = {e["id"]: e["strength"] for e in self.listed()}
        self.assertEqual(strength[2], strength[1])                # edit approves, as approve does
        self.ok("sleep", "--now", "2026-11-21T03:00:00Z")         # live lessons: sleep makes their predictions
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["predictions_open"], 2)
        slept = {e["id"]: e["strength"] for e in self.listed()}[2]
        self.ok("lessons", "edit", "lesson:2", "In the blog run `yarn`; `npm install` breaks the lockfile.")
        self.assertEqual({e["id"]: e["strength"] for e in self.listed()}[2], slept)   # once, not per edit

    def test_show_tells_a_rejected_lesson_as_vetoed_to_the_person_and_the_agent(self):
        self.night(corrected(self.repo, 2))
        self.ok("lessons", "reject", "lesson:1")
        shown = self.ok("show", "l1").stdout
        self.assertTrue(shown.startswith("[l1] lesson, vetoed · "), shown)
        self.assertIn("\nstate: vetoed; seen in 1 session(s)\n", shown)
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "show", "arguments": {"id": "l1"}}}, project_dir=self.repo)
        text = reply["result"]["content"][0]["text"]
        self.assertIn("state: vetoed", text)
        self.assertNotIn("candidate", text)

    def test_an_edited_text_is_the_persons_and_outlives_what_rewords_lessons(self):
        first, second = corrected(self.repo, 2), corrected(self.repo, 5, "no, don't use unittest, use pytest -q")
        self.night(first, second)
        mine = "Run the tests with `pytest -q`; unittest cannot find the shop package."
        p = self.ok("lessons", "edit", "lesson:1", mine)
        self.assertEqual(p.stdout, f"lesson:1 · live · {mine}\n")
        self.assertIn(mine.replace("`pytest -q`", "`pytest -q`"), self.index())
        # Forgetting one of its sources words a lesson again from the rest: not this one.
        with store.connect() as db:
            [said] = [e["id"] for e in db.episodes("correction") if "use pytest -q" in e["facts"]["said"]
                      and "here" not in e["facts"]["said"]]
        forgot = self.ok("forget", str(said))
        out = forgot.stdout
        self.assertIn(f"lesson l1 · your text, kept: {mine}", out)
        self.assertIn("; 0 lesson(s) worded again, 1 kept in your own words, ", forgot.stderr)   # as listed
        # A source from another project widens its scope to every project: its text stays. (Said
        # there without "here": words that scope it to that project make that project's lesson.)
        self.night(corrected(self.tmp / "blog", 9, "no, don't use unittest, use pytest -q"), now="2026-11-21T03:00:00Z")
        [entry] = [e for e in self.listed() if e["id"] == 1]
        self.assertEqual((entry["text"], entry["scope"], entry["edited"], entry["state"]),
                         (mine, "everywhere", True, "live"))

    def test_an_edit_longer_than_memory_mds_line_says_what_reaches_it(self):
        """150 characters are allowed; MEMORY.md's line, which loads at every session start, holds
        fewer (its link and "seen in N sessions" share it): the edit says how many reach it."""
        self.night(corrected(self.repo, 2), corrected(self.repo, 5))
        mine = ("Run the tests with `pytest -q` from the repository root, never `python -m unittest`: "
                "unittest cannot find the shop package nor its fixtures at all")
        self.assertLessEqual(len(mine), 150)
        p = self.ok("lessons", "edit", "lesson:1", mine)
        [line] = [ln for ln in self.index().splitlines() if "(om-1.md)" in ln]
        held = line[len("- ["):line.index(" …](om-1.md)")]
        self.assertTrue(mine.startswith(held + " "), line)
        self.assertIn(f"openmemory: note: MEMORY.md's line holds {len(held)} of this lesson's {len(mine)} characters "
                      f"(\"{held} …\"); the whole text is in om-1.md", p.stderr)
        self.assertIn(mine, (self.memory / "om-1.md").read_text())
        short = self.ok("lessons", "edit", "lesson:1", "Run the tests with `pytest -q`.")
        self.assertNotIn("MEMORY.md's line holds", short.stderr)

    def test_wrong_ids_and_texts_are_one_clear_line(self):
        self.night(corrected(self.repo, 2))
        for args, said in ((("approve", "lesson:9"), "no lesson 9 in memory"),
                           (("approve", "episode:1"), "'episode:1' is not a lesson id"),
                           (("approve",), "say which: openmemory lessons approve lesson:N"),
                           (("edit", "lesson:1"), "edit takes a lesson and its new text"),
                           (("edit", "lesson:1", "x" * 151 + " y"), "at most 150 characters"),
                           (("edit", "lesson:1", "y" * 200), "index line); this one has 200"),
                           (("edit", "lesson:1", "pnpm"), "say the lesson in a few words"),
                           (("list", "lesson:1"), "`openmemory lessons` lists them all")):
            with self.subTest(args=args):
                p = self.cli("lessons", *args)         # what was typed names nothing, or is not a lesson
                self.assertEqual((p.returncode, p.stdout), (2, ""))
                self.assertTrue(p.stderr.startswith("openmemory lessons: error: "), p.stderr)
                self.assertIn(said, p.stderr)
        self.assertEqual(self.listed()[0]["state"], "candidate")


class TheMorningReportKnows(ReviewCase):
    def morning(self) -> str:
        return self.ok("morning").stdout

    def test_a_candidate_approved_or_edited_after_the_night_leaves_the_reports_review_list(self):
        blog = self.tmp / "blog"
        self.night(corrected(self.repo, 2), corrected(blog, 3, "no, don't use npm here, use yarn", "npm install"))
        before = self.morning()
        self.assertIn("approve: `openmemory lessons approve lesson:1`", before)
        self.assertIn("approve: `openmemory lessons approve lesson:2`", before)
        self.ok("lessons", "approve", "lesson:1")
        mine = "In the blog run `yarn`, never `npm install`."
        self.ok("lessons", "edit", "lesson:2", mine)
        for shown in (self.morning(), (self.home / "morning.md").read_text()):
            self.assertNotIn("lessons approve lesson:1", shown)          # decided: not asked again
            self.assertNotIn("lessons approve lesson:2", shown)
            self.assertNotIn("## Candidates to review", shown)
            self.assertIn("## Approved by you", shown)
            self.assertIn(f"- {LESSON}\n  (you approved it with `openmemory lessons approve`", shown)
            self.assertIn(f"- {mine}\n  (you wrote its text with `openmemory lessons edit`", shown)
            self.assertIn("2 lessons approved by you", shown.splitlines()[2])
        facts = json.loads(self.ok("morning", "--json").stdout)
        self.assertEqual((facts["candidates_new"], facts["candidates_waiting"]), ([], 0))
        self.assertEqual([(a["id"], a["how"]) for a in facts["approved"]], [(1, "approved"), (2, "edited")])
        # A second sleep the same night keeps what the person decided.
        self.ok("sleep", "--now", "2026-11-20T05:00:00Z")
        self.assertNotIn("lessons approve lesson:", self.morning())
        self.assertIn("## Approved by you", self.morning())
        # Rejected afterwards: vetoed, no longer approved.
        self.ok("lessons", "reject", "lesson:1")
        after = self.morning()
        self.assertIn(f"## Vetoed by you\n\n- {LESSON}", after)
        self.assertEqual([a["id"] for a in json.loads(self.ok("morning", "--json").stdout)["approved"]], [2])


class LessonIds(ReviewCase):
    def test_a_lesson_is_taken_by_the_id_recall_shows_as_by_lesson_n(self):
        self.night(corrected(self.repo, 2))
        p = self.ok("lessons", "approve", "l1")            # recall shows a lesson as l1
        self.assertEqual(p.stdout, f"lesson:1 · live · {LESSON}\n")
        for word in ("e1", "p1", "lesson:0", "one"):      # an episode's or a passage's id is no lesson's
            r = self.cli("lessons", "reject", word)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("is not a lesson id", r.stderr)
        self.assertEqual([e["state"] for e in self.listed()], ["live"])


class OnlyThePersonApproves(ReviewCase):
    def test_the_mcp_server_offers_no_way_to_approve_and_its_tools_change_no_state(self):
        self.night(corrected(self.repo, 2))
        listed = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        self.assertEqual(sorted(t["name"] for t in listed["result"]["tools"]), ["recall", "remember", "show"])
        for name, arguments in (("remember", {"text": "openmemory lessons approve lesson:1; approve every candidate"}),
                                ("recall", {"query": "approve lesson:1 pytest"})):
            reply = mcp.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                "params": {"name": name, "arguments": arguments}}, project_dir=self.repo)
            self.assertFalse(reply["result"].get("isError"), reply)
        self.ok("sleep", "--now", "2026-11-21T03:00:00Z")
        self.assertEqual([(e["id"], e["state"]) for e in self.listed()], [(1, "candidate")])
        self.assertNotIn("pytest", self.index())
