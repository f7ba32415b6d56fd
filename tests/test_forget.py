"""`openmemory forget`: gone from every place, the bytes too, and never back on re-ingest; and
per-project opt-out: `.openmemory-ignore` in the working folder or above, or a listed folder."""
import json
import os
import subprocess
import sys
import unittest
from datetime import datetime, timezone
from pathlib import Path
from unittest import mock

from openmemory import forget, ingest, mcp, paths, store, transcripts
from tests.fixtures import Transcript, project_folder, test_session
from tests.helpers import TempHome, figures, git_clone, raw_db
from tests.llm_server import ModelServer

A_SAID = "No, don't use unittest here, run the tests with pytest -q like Marguerite Vasquez said"
B_SAID = "No, don't use unittest here, run the tests with pytest -q as Zephyrine Okonkwo asked"


def corrected(cwd, day, command, said, session_id=None):
    t = Transcript(cwd=str(cwd), start=datetime(2026, 11, day, 9, tzinfo=timezone.utc), session_id=session_id)
    t.user("run the tests")
    t.assistant("Running them.", tools=[("Bash", {"command": command}, "Exit code 1\nImportError: no tests", True)])
    t.user(said)
    t.assistant("Understood.", tools=[("Bash", {"command": "pytest -q"}, "12 passed", False)])
    return t


class Tombstones(unittest.TestCase):
    def test_a_tombstone_is_the_sha256_hashlib_gives(self):
        # stored tombstones must keep matching: the digest is SHA-256's, whichever module computes it
        import hashlib
        from openmemory import forget
        for key in ("", "error:0b9f-uuid", "naïve ✓ " * 40, "\udc80 lone surrogate"):
            self.assertEqual(forget.tombstone(key), hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest())


class TombstoneFile(TempHome):
    def test_appended_private_synced_never_through_a_symlink_and_an_unfinished_line_ended(self):
        old = os.umask(0)
        self.addCleanup(os.umask, old)
        forget.keep_tombstones([("a" * 64, False)], "2026-12-03T00:00:00Z")
        path = self.home / "forgotten"
        self.assertEqual(path.stat().st_mode & 0o777, 0o600)
        with open(path, "ab") as f:
            f.write(b"bbbbbbbb")  # a writer killed mid-line
        forget.keep_tombstones([("c" * 64, True), ("not a hash", False)], "2026-12-03T00:00:01Z")
        self.assertEqual(forget.kept_tombstones()[0], [("a" * 64, False), ("c" * 64, True)])
        path.unlink()
        target = self.tmp / "elsewhere"
        target.write_text("")
        path.symlink_to(target)
        with self.assertRaises(OSError):
            forget.keep_tombstones([("d" * 64, False)], "2026-12-03T00:00:02Z")
        self.assertEqual(target.read_text(), "")


class ForgetWorld(TempHome):
    """Two projects' corrections ingested and slept on: lessons rendered, a morning report."""

    def setUp(self):
        super().setUp()
        self.repo = Path(os.path.realpath(self.tmp)) / "shop"
        (self.repo / ".git").mkdir(parents=True)
        self.blog = Path(os.path.realpath(self.tmp)) / "blog"
        (self.blog / ".git").mkdir(parents=True)
        self.paths = [corrected(self.repo, 2, "python -m unittest", A_SAID).write(project_folder(self.claude, self.repo)),
                      corrected(self.repo, 3, "python -m unittest discover", B_SAID).write(
                          project_folder(self.claude, self.repo))]
        corrected(self.blog, 3, "npm test", "No, run the blog's tests with make check instead").write(
            project_folder(self.claude, self.blog))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-05T03:00:00Z")
        self.memory = paths.memory_dir_for(self.repo)

    def correction(self, words):
        with store.connect() as db:
            return next(e["id"] for e in db.episodes("correction") if words in e["facts"]["said"])

    def lessons(self):
        with store.connect() as db:
            return db.all_lessons()

    def passages(self, words) -> list:
        """The ids of the passages whose text holds words."""
        from tests.helpers import raw_db
        with store.connect() as db:
            return [r[0] for r in raw_db(db).execute("SELECT id FROM passages WHERE instr(text, ?) ORDER BY id",
                                                       (words,))]

    def said_in_blog(self, day=4):
        """A conversation in the blog, no surprise in it: what it says is kept as passages only."""
        t = Transcript(cwd=str(self.blog), start=datetime(2026, 11, day, 9, tzinfo=timezone.utc))
        t.user("Where does the Quillfeather deploy key live? It rotates on Thursdays.")
        t.assistant("The Quillfeather deploy key lives in the ops vault, under blog/deploy; "
                    "the rotation job runs each Thursday at noon.")
        t.user("Good. Now polish the header of the archive page.")
        t.assistant("Polished: the archive header now uses the site's serif font.")
        return t.write(project_folder(self.claude, self.blog))

    def everything(self) -> bytes:
        """Every byte openmemory keeps: the database with its WAL, its folder, Claude Code's memory folders."""
        out = b""
        for root in (self.home, self.claude / "projects"):
            for p in root.rglob("*"):
                if p.is_file() and not (p.suffix == ".jsonl" and p.name != "lessons.jsonl"):
                    out += p.read_bytes()
        return out

    def assert_gone(self, *words):
        raw = self.everything()
        for w in words:
            self.assertFalse(w.encode() in raw, f"{w!r} is still in memory")
            for token in w.lower().split():  # the text index keeps lower-case, stemmed terms
                if len(token) >= 6:
                    self.assertFalse(token[:6].encode() in raw.lower(), f"{token!r} is still in memory")



class Forget(ForgetWorld):
    def test_forget_a_correction_rewords_its_lesson_and_its_words_are_gone_for_good(self):
        lesson = next(ls for ls in self.lessons() if "Marguerite" in ls["text"])
        self.assertIn(b"Marguerite", self.everything())
        self.assertIn(b"Marguerite", (self.memory / f"om-{lesson['id']}.md").read_bytes())
        p = self.ok("forget", self.correction("Marguerite"))
        self.assertIn("worded again", p.stdout)
        self.assert_gone("Marguerite", "Vasquez")
        reworded = next(ls for ls in self.lessons() if ls["id"] == lesson["id"])
        self.assertIn("pytest -q", reworded["text"])
        self.assertTrue((self.memory / f"om-{lesson['id']}.md").exists())  # worded again, still in place
        self.assertNotIn(b"Marguerite", (self.memory / "MEMORY.md").read_bytes())
        self.assertEqual(json.loads(self.ok("recall", "Marguerite", "Vasquez", "--json").stdout), [])
        # re-ingesting the very transcripts (and sleeping again) never brings it back
        self.ok("ingest", "--force")
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        self.assert_gone("Marguerite", "Vasquez")
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual(status["forgotten"], 1)

    def test_forget_a_lesson_fed_only_by_forgotten_episodes_and_its_files(self):
        ids = [self.correction("Marguerite"), self.correction("Okonkwo")]
        lesson = next(ls for ls in self.lessons() if "Marguerite" in ls["text"])
        self.ok("forget", *ids)
        self.assertNotIn(lesson["id"], [ls["id"] for ls in self.lessons()])  # gone, predictions with it
        self.assertFalse((self.memory / f"om-{lesson['id']}.md").exists())
        jsonl = [json.loads(line) for line in (self.home / "lessons.jsonl").read_text().splitlines()]
        self.assertNotIn(lesson["id"], [r["id"] for r in jsonl])
        morning = (self.home / "morning.md").read_text()
        self.assertNotIn("Okonkwo", morning)
        self.assert_gone("Marguerite", "Okonkwo", "Zephyrine")
        self.ok("ingest", "--force")
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        self.assert_gone("Marguerite", "Okonkwo", "Zephyrine")

    def test_the_morning_reports_candidates_lose_a_forgotten_source_and_its_words(self):
        with store.connect() as db:
            report = json.loads(db.get_state("morning"))
        self.assertIn("blog's tests", json.dumps(report["candidates_new"]))  # the blog's one correction: a candidate
        self.assertIn("blog's tests", (self.home / "morning.md").read_text())
        self.ok("forget", self.correction("blog's tests"))
        with store.connect() as db:
            report = json.loads(db.get_state("morning"))
        self.assertEqual(report["candidates_new"], [])
        self.assertNotIn("blog's tests", (self.home / "morning.md").read_text())
        self.assert_gone("blog's tests")

    def test_the_morning_reports_new_predictions_leave_with_their_lessons(self):
        # The report still said "1 new prediction" once the lesson that made it was forgotten (and the
        # prediction with it): `status` then counted 0.
        with store.connect() as db:
            predicted = sorted(db.predictions_by_lesson())
            made = json.loads(db.get_state("morning"))["predictions_made"]
        self.assertEqual(made, len(predicted))
        self.assertGreater(made, 0)
        self.assertIn("new prediction", (self.home / "morning.md").read_text())
        for n, lesson_id in enumerate(predicted, 1):
            self.ok("forget", f"lesson:{lesson_id}")
            with store.connect() as db:
                self.assertEqual(json.loads(db.get_state("morning"))["predictions_made"], made - n)
        self.assertNotIn("new prediction", (self.home / "morning.md").read_text())
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["predictions"], 0)

    def test_a_forgotten_lessons_confirmed_prediction_leaves_the_morning_report(self):
        # Forgotten by its id alone (no episode's words to scrub), its text stayed under "Predictions"
        # ("Confirmed: <the lesson>") in the morning report.
        corrected(self.repo, 5, "python -m unittest", "No, don't use unittest here, run the tests with pytest -q"
                  ).write(project_folder(self.claude, self.repo))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        with store.connect() as db:
            confirmed = json.loads(db.get_state("morning"))["predictions_confirmed"]
        self.assertTrue(confirmed, "no prediction was confirmed: the test checks nothing")
        lesson = next(ls for ls in self.lessons() if ls["id"] == confirmed[0]["lesson_id"])
        self.assertIn(f"Confirmed: {lesson['text']}", (self.home / "morning.md").read_text())
        self.ok("forget", f"lesson:{lesson['id']}")
        with store.connect() as db:
            report = json.loads(db.get_state("morning"))
        self.assertNotIn(lesson["id"], [x["lesson_id"] for x in report["predictions_confirmed"]])
        self.assertNotIn(lesson["text"], (self.home / "morning.md").read_text())
        self.assertNotIn(lesson["text"], json.dumps(report, ensure_ascii=False))

    def test_a_forgotten_lesson_is_vetoed_when_learnt_again(self):
        lesson = next(ls for ls in self.lessons() if "Marguerite" in ls["text"])
        self.ok("forget", f"lesson:{lesson['id']}")
        self.assertFalse((self.memory / f"om-{lesson['id']}.md").exists())
        vetoes = (self.home / "vetoed.json").read_text()
        self.assertNotIn("Marguerite", vetoes)  # vetoed by a hash, not by its words
        # the same correction in a new session: sleep learns the same lesson again, render keeps it out
        corrected(self.repo, 8, "python -m unittest", A_SAID).write(project_folder(self.claude, self.repo))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-09T03:00:00Z")
        again = [ls for ls in self.lessons() if "Marguerite" in ls["text"]]
        self.assertEqual(len(again), 1)
        self.assertEqual(again[0]["vetoed"], 1)
        self.assertFalse(any(self.memory.glob(f"om-{again[0]['id']}.md")))
        self.assertNotIn(b"Marguerite", (self.home / "lessons.jsonl").read_bytes())

    def test_query_lists_and_asks_and_yes_forgets(self):
        p = self.cli("forget", "--query", "Okonkwo", input="")
        self.assertEqual(p.returncode, 1)
        self.assertIn("add --yes", p.stderr)
        self.assertIn("Zephyrine Okonkw", p.stdout)  # the list of what it would forget
        self.assertIn(b"Okonkwo", self.everything())  # nothing forgotten
        self.ok("forget", "--query", "Okonkwo", "--yes")
        self.assert_gone("Okonkwo", "Zephyrine")

    def memories(self) -> dict:
        """{("episode"|"passage"|"lesson", id): its own text, as the text index holds it} of everything stored."""
        from tests.helpers import raw_db
        with store.connect() as db:
            out = {("episode", e["id"]): " ".join((e["title"], e["gist"], e["detail"])) for e in db.episodes()}
            out.update({("passage", i): t for i, t in raw_db(db).execute("SELECT id, text FROM passages")})
            out.update({("lesson", ls["id"]): ls["text"] for ls in db.all_lessons()})
        return out

    def test_query_forgets_only_what_holds_every_word(self):
        before = self.memories()
        # recall finds the Okonkwo correction and the blog's memories for these words; none holds both
        p = self.ok("forget", "--query", "Okonkwo blog", "--yes")
        self.assertIn("nothing in memory to forget", p.stderr)
        self.assertEqual(self.memories(), before)
        p = self.ok("forget", "--query", "okonkwo PYTEST", "--yes")  # as the index reads words: any case
        after = self.memories()
        gone = set(before) - set(after)
        self.assertTrue(gone)
        holds_both = {k for k, text in before.items() if "okonkwo" in text.lower() and "pytest" in text.lower()}
        # and a memory left with no word of its own ("person: run the tests / agent: Running them.",
        # pieces of the forgotten ones): taken too, and said
        from tests.forgets import emptied_told, nothing_but
        emptied = {k for k in gone - holds_both if nothing_but(before[k], [before[j] for j in holds_both])}
        self.assertEqual(len(emptied), emptied_told(p.stderr))
        self.assertEqual({k for k in gone - emptied if k[0] != "lesson"}, {k for k in holds_both if k[0] != "lesson"})
        self.assertTrue({k for k in gone if k[0] == "passage"})  # what was said holds them too
        self.assertLessEqual({k for k in gone if k[0] == "lesson"}, holds_both)
        self.assertIn(b"Marguerite", self.everything())  # the other correction is kept
        self.assert_gone("Okonkwo", "Zephyrine")

    def test_a_query_takes_its_words_out_of_what_the_memories_kept_keep_of_them(self):
        t = Transcript(cwd=str(self.blog), start=datetime(2026, 11, 4, 9, tzinfo=timezone.utc))
        t.user("polish the header")
        t.assistant("Building.", tools=[
            ("Bash", {"command": "make zebracorn"}, "Exit code 2\nmake: *** No rule to make target 'zebracorn'. Stop.", True),
            ("Bash", {"command": "npm run lint"}, "Exit code 1\nerror: 'unused' is assigned a value but never used", True)])
        t.assistant("Done.")
        t.write(project_folder(self.claude, self.blog))
        self.ok("ingest")
        with store.connect() as db:
            lint = next(e for e in db.episodes("error") if e["facts"]["command"] == "npm run lint")
        self.assertIn("zebracorn", lint["context"])  # its neighbour, as recall reads it beside it
        self.ok("forget", "--query", "zebracorn", "--yes")
        self.assert_gone("zebracorn")
        with store.connect() as db:
            self.assertIn("npm run lint", db.episodes_by_id([lint["id"]])[lint["id"]]["title"])  # kept
        self.ok("ingest", "--force")
        self.assert_gone("zebracorn")

    def test_a_query_of_no_words_is_refused(self):
        p = self.cli("forget", "--query", "-- ''", "--yes")
        self.assertEqual(p.returncode, 2)
        self.assertIn("holds no word", p.stderr)

    def memory_bytes(self) -> bytes:
        """The database openmemory uses now, with its WAL (not a file moved aside)."""
        return b"".join(p.read_bytes() for p in (self.home / "memory.db", self.home / "memory.db-wal") if p.exists())

    def move_the_database_aside(self):
        """OPERATIONS.md's recovery: move memory.db (and its -wal, -shm) aside, then ingest again."""
        for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
            if (self.home / name).exists():
                (self.home / name).rename(self.tmp / f"{name}.damaged")

    def test_the_recovery_procedure_keeps_what_was_forgotten(self):
        self.ok("forget", self.correction("Okonkwo"))
        kept = self.home / "forgotten"
        self.assertEqual(kept.stat().st_mode & 0o777, 0o600)
        self.assertNotIn(b"Okonkwo", kept.read_bytes())  # hashes, never words
        self.move_the_database_aside()
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        self.assertNotIn(b"Okonkwo", self.memory_bytes())
        self.assertIn(b"Marguerite", self.memory_bytes())
        self.assertEqual(json.loads(self.ok("recall", "Zephyrine", "Okonkwo", "--json").stdout), [])
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["forgotten"], 1)
        self.assert_gone("Okonkwo", "Zephyrine")

    def test_a_copy_of_a_forgotten_transcript_under_a_new_session_id_stays_forgotten(self):
        with store.connect() as db:
            sid = next(e["session_id"] for e in db.episodes("correction") if "Okonkwo" in e["facts"]["said"])
            ids = [e["id"] for e in db.episodes() if e["session_id"] == sid]
        self.ok("forget", *ids)
        original = next(p for p in self.paths if sid in p.read_text())
        copy = original.parent / "0d5e0a57-resumed-copy.jsonl"  # as a resumed session copies the records
        copy.write_text(original.read_text().replace(sid, "0d5e0a57-resumed-copy"))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        self.assert_gone("Okonkwo", "Zephyrine")
        self.move_the_database_aside()  # and from the file beside, into a new database
        self.ok("ingest")
        self.assert_gone("Okonkwo", "Zephyrine")

    def test_tombstones_kept_only_in_the_database_go_into_the_file_beside(self):
        from tests.helpers import raw_db
        self.ok("forget", self.correction("Okonkwo"))
        (self.home / "forgotten").unlink()  # as a database forgot before the file was kept
        with store.connect() as db:
            with db.transaction():
                raw_db(db).execute("DELETE FROM state WHERE key = ?", (forget.TOMBSTONES_READ,))
            hashes = {h for h, _ in db.all_tombstones()}
        self.ok("ingest")
        self.assertEqual({h for h, _ in forget.kept_tombstones()[0]}, hashes)
        self.move_the_database_aside()
        self.ok("ingest")
        self.assert_gone("Okonkwo", "Zephyrine")

    def test_the_models_cached_answers_holding_forgotten_words_go(self):
        with store.connect() as db, db.transaction():
            db.save_model_answer("k1", "m", "Run the tests with pytest -q as Zephyrine Okonkwo asked.", "2026-11-04T00:00:00Z")
            db.save_model_answer("k2", "m", "A session about the blog: okonkwo reviewed the pytest setup.", "2026-11-04T00:00:00Z")
            db.save_model_answer("k3", "m", "Run the blog's tests with make check.", "2026-11-04T00:00:00Z")
        self.ok("forget", "--query", "Okonkwo pytest", "--yes")
        with store.connect() as db:
            self.assertEqual([db.model_answer(k) is None for k in ("k1", "k2", "k3")], [True, True, False])

    def test_forget_a_project(self):
        p = self.cli("forget", "--project", str(self.blog), "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_gone("make check", "blog's tests")
        with store.connect() as db:
            self.assertEqual([e for e in db.episodes() if (e["cwd"] or "").startswith(str(self.blog))], [])
        self.assertIn(b"Marguerite", self.everything())  # the other project is untouched
        self.ok("ingest", "--force")
        self.assert_gone("make check", "blog's tests")

    def test_a_project_path_with_nothing_under_it_is_named_as_read(self):
        # A careful engineer opting the blog out typed the path relative to the wrong folder and was
        # told only "nothing in memory to forget", as if the blog had left nothing in memory.
        p = self.ok("forget", "--project", "work/blog", "--yes")
        self.assertEqual(p.stderr, f"nothing in memory to forget under {os.path.realpath(self.tmp)}/work/blog "
                                   f"(no such folder here now: a path is read from where you are)\n")
        self.assertIn(b"make check", self.everything())       # the blog's memories stay
        (self.blog / "drafts").mkdir()
        p = self.ok("forget", "--project", str(self.blog / "drafts"), "--yes")   # a folder, nothing under it
        self.assertEqual(p.stderr, f"nothing in memory to forget under {self.blog / 'drafts'}\n")

    def test_nothing_to_forget_and_bad_ids(self):
        # what was typed is wrong in itself: said as argparse says a bad value, exit 2, nothing done
        for args, said in ((("forget",), "say what to forget"), (("forget", "9999"), "no episode 9999 in memory"),
                           (("forget", "note:999"), "'note:999' is not an id"),
                           (("forget", "lesson:9"), "no lesson 9 in memory")):
            with self.subTest(args=args):
                p = self.cli(*args)
                self.assertEqual((p.returncode, p.stdout), (2, ""))
                self.assertTrue(p.stderr.startswith(f"openmemory forget: error: {said}"), p.stderr)
                self.assertEqual(p.stderr.count("\n"), 1)

    def test_an_id_forgotten_is_never_given_to_another_memory(self):
        # SQLite gives a new row the largest id + 1: forgetting the newest memory would hand its id on,
        # and `forget e<id>` run again would then take the new memory
        def note(text):
            return int(json.loads(self.ok("remember", "--json", text).stdout)["id"].removeprefix("e"))
        first = note("The staging bastion is bastion-2.")
        newest = note("The release train leaves on Thursdays.")
        self.ok("forget", f"e{newest}")
        after = note("Deploy keys rotate monthly.")
        self.assertGreater(after, newest)
        self.assertIn("already forgotten", self.cli("forget", f"e{newest}").stderr + self.cli("forget", f"e{newest}").stdout)
        self.assertIn("Deploy keys rotate monthly.", self.ok("show", f"e{after}").stdout)
        again = note("The VPN needs the hardware key.")
        self.assertEqual(again, after + 1)             # SQLite's own count again from there
        self.assertLess(first, newest)
        with store.connect() as db:                    # lessons too (lesson:N, om-N.md)
            top = max(ls["id"] for ls in db.all_lessons())
        self.ok("forget", f"lesson:{top}")
        with store.connect() as db, db.transaction():
            made = db.add_lesson("In this repository run the linter with make lint", "feedback", None, 1.0, 1, [],
                                 "2026-11-07T00:00:00.000000Z")
        self.assertGreater(made, top)

    def test_the_mcp_server_has_no_forget_tool(self):
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        self.assertEqual([t["name"] for t in reply["result"]["tools"]], ["recall", "show", "remember"])
        reply = mcp.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "forget", "arguments": {"id": 1}}})
        self.assertIn("error", reply)

    def test_a_forgotten_event_stays_out_when_keys_are_made_another_way(self):
        from unittest import mock
        from openmemory import ingest
        with store.connect() as db:
            error = next(e for e in db.episodes("error") if "discover" in e["facts"]["command"])
        self.ok("forget", error["id"])
        made = ingest.episodes_of

        def rekeyed(session, session_id=None, **how):  # as a later openmemory might name events
            return [dict(ep, key="v2:" + ep["key"]) for ep in made(session, session_id, **how)]
        with mock.patch.object(ingest, "episodes_of", rekeyed), store.connect() as db:
            ingest.ingest(db, force=True)
            back = [e for e in db.episodes("error") if "discover" in e["facts"].get("command", "")]
        self.assertEqual(back, [])


# A real `openmemory forget` process that SIGKILLs itself at one point of its work (the call
# named is replaced by the kill; `mid-render` lets one memory file be written first).
class ForgetWhatTheModelSaid(ForgetWorld):
    """The model's cached answers and the log (what it answered that was not used) name the item
    asked about: a forgotten memory's answers and lines go with it (the rotated log too)."""

    def test_a_judges_answer_cached_and_logged_goes_with_the_memory_it_was_about(self):
        def answer(body):
            system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
            if "You judge one message" in system:
                who = "Marguerite Vasquez" if "Marguerite" in user else "Zephyrine Okonkwo"
                return json.dumps({"correction": True, "lasting": True, "scope": "project", "why": "x",
                                   "lesson": f"Run the tests as {who} says at https://{who.split()[0].lower()}.example"})
            return "ok"
        with ModelServer("ok") as server:
            server.answer = answer
            self.ok("ingest", "--model", env=self.env(OPENMEMORY_LLM_URL=server.url, OPENMEMORY_LLM_MODEL="test-model"))
        log = self.home / "logs" / "openmemory.log"
        rotated = log.with_name(log.name + ".1")
        rotated.write_bytes(log.read_bytes())        # as if the log had been rotated since
        self.assertIn("Marguerite Vasquez", log.read_text())
        with store.connect() as db:
            self.assertTrue([a for _, a, _ in db.model_answers() if "Marguerite" in a])
        self.ok("forget", self.correction("Marguerite"))
        self.assert_gone("Marguerite Vasquez")       # the cached answer too, though it quotes none of the message
        with store.connect() as db:
            self.assertTrue([a for _, a, _ in db.model_answers() if "Zephyrine" in a])   # another memory's stays
        for path in (log, rotated):
            self.assertNotIn("Marguerite", path.read_text())
            self.assertNotIn("marguerite.example", path.read_text())
            self.assertIn("Zephyrine Okonkwo", path.read_text())      # another memory's lines stay

    def test_a_forgotten_passage_takes_the_correction_it_holds_its_lessons_words_and_what_the_model_said(self):
        # The person's message forgotten as a passage is the correction's message: forgotten with it,
        # so its lesson is worded again without it (it kept "like Marguerite Vasquez said" in
        # MEMORY.md, its om file, lessons.jsonl and the morning report), and what the model said of
        # the correction (cached, logged) goes too.
        def answer(body):
            system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
            if "You judge one message" in system and "Marguerite" in user:
                return json.dumps({"correction": True, "lasting": True, "scope": "project", "why": "x",
                                   "lesson": "Run the tests as Marguerite Vasquez says at https://marguerite.example"})
            return "ok"
        with ModelServer("ok") as server:
            server.answer = answer
            self.ok("ingest", "--model", env=self.env(OPENMEMORY_LLM_URL=server.url, OPENMEMORY_LLM_MODEL="test-model"))
        self.assertIn("Marguerite Vasquez", (self.home / "logs" / "openmemory.log").read_text())
        [passage] = self.passages("Marguerite Vasquez")
        self.assertIn("forgot 1 episode(s), 1 passage(s)", self.ok("forget", f"p{passage}").stderr)
        self.assert_gone("Marguerite Vasquez")
        self.assertTrue([ls for ls in self.lessons() if "Zephyrine" in ls["text"]])    # the other session's lesson stays


class ForgetSaysWhatElseGoes(ForgetWorld):
    """A forget by id takes what holds the very same words, and says which and why; what it
    leaves with no word of its own ("person: [forgotten]") goes, not shown by recall in a hit's place."""

    def test_a_passage_forgotten_by_id_says_the_correction_of_its_words_goes_with_it_and_why(self):
        [passage] = self.passages("Marguerite Vasquez")
        correction = self.correction("Marguerite")
        p = self.ok("forget", f"p{passage}")
        self.assertIn(f"episode e{correction} · correction · 2026-11-02 · Correction: No, don't use unittest", p.stdout)
        self.assertIn(f"the person's message it holds is in p{passage} word for word", p.stdout)
        self.assertIn(f"e{correction} went with p{passage}: the person's message it holds is in p{passage} word for "
                      f"word (a forget takes every memory of the words it forgets", p.stderr)
        # named by the person too: nothing to explain
        self.assertNotIn("went with", self.ok("forget", "--query", "Zephyrine", "--yes").stderr)

    def assert_nothing_says_only_forgotten(self):
        from tests.helpers import raw_db
        with store.connect() as db:
            said = [t for (t,) in raw_db(db).execute("SELECT text FROM passages")]
            eps = [(e["title"], e["gist"]) for e in db.episodes()]
        self.assertFalse([t for t in said if forget.says_nothing(t)], said)
        self.assertFalse([e for e in eps if forget.says_nothing(*e)], eps)
        hits = json.loads(self.ok("recall", "forgotten", "--json").stdout)
        self.assertFalse([h for h in hits if forget.says_nothing(h["text"])], hits)

    def test_a_passage_left_with_no_words_of_its_own_is_taken_out_and_never_recalled(self):
        # "run the tests" / "Running them." are pieces of the correction's passage: forgetting it
        # left "person: [forgotten]\nagent: [forgotten]", which recall showed as a hit
        self.assertTrue(self.passages("person: run the tests\nagent: Running them."))
        [passage] = self.passages("Marguerite Vasquez")
        p = self.ok("forget", f"p{passage}")
        self.assertIn("1 left with no words of their own taken out too", p.stderr)
        self.assert_nothing_says_only_forgotten()
        self.assertTrue(self.passages("Zephyrine Okonkwo"))          # the other session's stay
        self.ok("ingest", "--force")
        self.assert_nothing_says_only_forgotten()

    def test_a_session_episode_whose_request_and_answer_were_all_forgotten_is_taken_out(self):
        t = Transcript(cwd=str(self.blog), start=datetime(2026, 11, 4, 9, tzinfo=timezone.utc))
        t.user("Where does the Quillfeather deploy key live? It rotates on Thursdays.")
        t.assistant("The Quillfeather deploy key lives in the ops vault, under blog/deploy.")
        t.write(project_folder(self.claude, self.blog))
        self.ok("ingest")
        with store.connect() as db:
            before = len(db.episodes("session"))
        [passage] = self.passages("Quillfeather")
        self.assertIn("1 left with no words of their own taken out too", self.ok("forget", f"p{passage}").stderr)
        self.assert_nothing_says_only_forgotten()
        self.ok("ingest", "--force")
        self.assert_nothing_says_only_forgotten()
        with store.connect() as db:
            self.assertEqual(len(db.episodes("session")), before - 1)


class ForgetSession(ForgetWorld):
    """`forget --session`: every episode and passage of one session, the lessons resting only on
    it, for good; and what its transcript says later stays out, until its ignore line goes."""

    def blog_session(self) -> tuple:
        """(session id, transcript) of the blog's session where the person said to use make check."""
        with store.connect() as db:
            sid = next(e["session_id"] for e in db.episodes("correction") if "make check" in e["facts"]["said"])
            return sid, project_folder(self.claude, self.blog) / f"{sid}.jsonl"

    def of_session(self, sid) -> tuple:
        """(episode ids, passage ids, whether its row is stored) of a session."""
        with store.connect() as db:
            return db.memories_of_session(sid)

    def test_forget_a_session_takes_all_of_it_and_the_lessons_resting_only_on_it(self):
        self.said_in_blog()                     # another session of the same project
        self.ok("ingest")
        sid, _ = self.blog_session()
        episodes, passages, stored = self.of_session(sid)
        self.assertTrue(episodes and passages and stored)
        lesson = next(ls for ls in self.lessons() if "make check" in ls["text"])
        others = [(ls["id"], ls["text"], ls["sources"]) for ls in self.lessons() if ls["id"] != lesson["id"]]
        self.assertIn(b"make check", self.everything())
        p = self.ok("forget", "--session", sid[:8], "--yes")
        self.assertIn(f"session {sid} · 2026-11-03 · {self.blog}", p.stdout)
        for i in episodes:
            self.assertIn(f"episode e{i} ·", p.stdout)
        for i in passages:
            self.assertIn(f"passage p{i} ·", p.stdout)
        self.assertIn(f"lesson l{lesson['id']} ·", p.stdout)
        self.assertIn(f"forgot {len(episodes)} episode(s), {len(passages)} passage(s) and 1 lesson(s)", p.stderr)
        self.assertEqual(self.of_session(sid), ([], [], False))
        self.assertNotIn(lesson["id"], [ls["id"] for ls in self.lessons()])
        self.assert_gone("make check", "blog's tests", "npm test")  # the database's bytes, files, reports
        self.assertNotIn(sid.encode(), self.memory_bytes())         # its id is in the ignore list alone
        self.assertIn(b"Quillfeather", self.everything())                # the blog's other session is whole
        self.assertTrue(json.loads(self.ok("recall", "Quillfeather", "deploy", "key", "--json").stdout))
        self.assertIn(b"Marguerite", self.everything())                  # and the other project
        self.assertEqual([(ls["id"], ls["text"], ls["sources"]) for ls in self.lessons()], others)
        self.assertTrue(self.transcript_untouched(sid))

    def transcript_untouched(self, sid) -> bool:
        return b"make check" in self.blog_session_path(sid).read_bytes()

    def blog_session_path(self, sid) -> Path:
        return project_folder(self.claude, self.blog) / f"{sid}.jsonl"

    def test_nothing_of_it_comes_back_by_ingest_force_a_copy_or_an_appended_line(self):
        sid, path = self.blog_session()
        self.ok("forget", "--session", sid, "--yes")
        self.ok("ingest")
        self.ok("ingest", "--force")
        copy = path.parent / "5b1e0c2d-copied-elsewhere.jsonl"   # the same session under another name
        copy.write_bytes(path.read_bytes())
        later = Transcript(cwd=str(self.blog), start=datetime(2026, 11, 3, 10, tzinfo=timezone.utc), session_id=sid)
        later.user("No, never deploy the blog on Fridays, Ottoline Brackenbury decides the release day")
        later.assistant("Understood, no Friday deploys.")
        with open(path, "a", encoding="utf-8") as f:            # the session went on in its transcript
            f.write("".join(json.dumps(r) + "\n" for r in later.records))
        report = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual(report["opted_out"], 2)
        self.ok("ingest", "--force")
        self.cli("hook", input=json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(path)}))
        with mock.patch.object(ingest, "PARALLEL_BYTES", 0), mock.patch.dict(os.environ, {"OPENMEMORY_JOBS": "2"}), \
                store.connect() as db:                          # a bulk ingest's workers read it the same way
            self.assertEqual(ingest.ingest(db, force=True).opted_out, 2)
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        self.assert_gone("make check", "blog's tests", "Brackenbury", "Ottoline")
        self.assertEqual(self.of_session(sid), ([], [], False))
        self.assertIn("2 kept out", self.ok("status").stdout)
        self.assertEqual(json.loads(self.ok("recall", "make", "check", "--json").stdout), [])
        # Its line deleted from the ignore list, what it says from then on comes in; what was
        # forgotten stays forgotten (its tombstones).
        ignore = self.home / "ignore"
        self.assertIn(f"session {sid}  # forgotten", ignore.read_text())
        ignore.write_text("".join(line for line in ignore.read_text().splitlines(True) if sid not in line))
        copy.unlink()
        self.ok("ingest")
        self.assertIn(b"Brackenbury", self.memory_bytes())
        self.assertNotIn(b"make check", self.memory_bytes())

    def memory_bytes(self) -> bytes:
        return b"".join(p.read_bytes() for p in (self.home / "memory.db", self.home / "memory.db-wal") if p.exists())

    def test_its_transcript_is_not_read_again(self):
        sid, path = self.blog_session()
        self.ok("forget", "--session", sid, "--yes")
        with store.connect() as db, mock.patch.object(transcripts, "parse_lines",
                                                      side_effect=AssertionError("read the whole transcript")):
            report = ingest.ingest_file(db, path, force=True)
        self.assertEqual(report.opted_out, 1)

    def test_a_lesson_with_sources_in_other_sessions_is_worded_again_from_them(self):
        with store.connect() as db:
            sid = next(e["session_id"] for e in db.episodes("correction") if "Marguerite" in e["facts"]["said"])
        lesson = next(ls for ls in self.lessons() if "Marguerite" in ls["text"])
        p = self.ok("forget", "--session", sid, "--yes")
        self.assertIn(f"lesson l{lesson['id']} · worded again", p.stdout)
        reworded = next(ls for ls in self.lessons() if ls["id"] == lesson["id"])
        self.assertIn("pytest -q", reworded["text"])
        # seen in one session now, as forgetting those episodes by id leaves it: a candidate again,
        # its file taken out of the agent's memory until something backs it
        self.assertEqual((lesson["seen"], lesson["state"], reworded["seen"], reworded["state"]), (2, "live", 1, "candidate"))
        self.assertFalse((self.memory / f"om-{lesson['id']}.md").exists())
        self.assert_gone("Marguerite", "Vasquez")
        self.assertIn(b"Okonkwo", self.everything())

    def test_the_keep_out_survives_the_database_moved_aside(self):
        sid, _ = self.blog_session()
        self.ok("forget", "--session", sid[:12], "--yes")
        for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
            if (self.home / name).exists():
                (self.home / name).rename(self.tmp / f"{name}.damaged")
        self.ok("ingest")
        self.assert_gone("make check", "blog's tests")
        self.assertIn(b"Marguerite", self.memory_bytes())

    def two_sessions_one_prefix(self) -> list:
        ids = ["0f6074fc-1111-4aaa-8aaa-000000000001", "0f6074fc-2222-4bbb-8bbb-000000000002"]
        for day, sid in zip((5, 6), ids):
            corrected(self.blog, day, "npm run lint", f"No, lint the blog with make lint-{day} instead",
                      session_id=sid).write(project_folder(self.claude, self.blog))
        self.ok("ingest")
        return ids

    def test_a_prefix_of_two_sessions_is_refused_naming_both(self):
        ids = self.two_sessions_one_prefix()
        before = self.everything()
        p = self.cli("forget", "--session", "0f6074fc", "--yes")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1)
        self.assertIn("openmemory forget: error: 2 sessions start with 0f6074fc:", p.stderr)
        for sid, day in zip(ids, (5, 6)):
            self.assertIn(f"{sid} (2026-11-0{day}, {self.blog})", p.stderr)
        self.assertEqual(self.everything(), before)     # nothing forgotten
        self.ok("forget", "--session", "0f6074fc-2", "--yes")   # more of the id names one
        self.assertEqual(self.of_session(ids[1]), ([], [], False))
        self.assertTrue(self.of_session(ids[0])[0])

    def test_unknown_and_too_short_ids_are_refused_and_a_second_forget_says_already(self):
        for given, said in (("deadbeef", "no session deadbeef in memory"), ("0f60", "too short")):
            p = self.cli("forget", "--session", given, "--yes")
            self.assertEqual((p.returncode, p.stdout), (2, ""))
            self.assertIn(said, p.stderr)
        sid, _ = self.blog_session()
        self.ok("forget", "--session", sid[:8], "--yes")
        p = self.ok("forget", "--session", sid[:8], "--yes")
        self.assertIn(f"already forgotten: session {sid}", p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual((self.home / "ignore").read_text().count(sid), 1)

    def test_it_lists_and_asks_first(self):
        sid, _ = self.blog_session()
        p = self.cli("forget", "--session", sid[:8], input="")   # no terminal: refused without --yes
        self.assertEqual(p.returncode, 1)
        self.assertIn("add --yes", p.stderr)
        self.assertIn(f"session {sid}", p.stdout)
        self.assertTrue(self.of_session(sid)[0])
        self.assertFalse((self.home / "ignore").exists())
        for answer, code in (("n", 1), ("y", 0)):   # at a terminal: asked, and only yes forgets
            master, slave = os.openpty()
            try:
                os.write(master, f"{answer}\n".encode())
                p = subprocess.run([sys.executable, "-m", "openmemory", "forget", "--session", sid[:8]],
                                   stdin=slave, capture_output=True, text=True, env=self.env(), cwd=str(self.tmp),
                                   timeout=60)
            finally:
                os.close(master)
                os.close(slave)
            self.assertEqual(p.returncode, code, p.stderr)
            self.assertIn("forget these for good? [y/N]", p.stderr)
            self.assertEqual(bool(self.of_session(sid)[0]), answer == "n")
        self.assert_gone("make check")


KILLED_AT = """
import os, signal, sys
from openmemory import cli, files, forget, render, review, sleep, store
point, args = sys.argv[1], sys.argv[2:]
def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
calls = []
def after_one(real):
    def once_then_die(*a, **k):
        if calls:
            die()
        calls.append(1)
        return real(*a, **k)
    return once_then_die
where = {"before-vetoes": (render, "veto_forgotten"), "before-tombstones": (forget, "keep_tombstones"),
         "before-commit": (store.Store, "forget"), "before-render": (render, "render"),
         "before-morning": (sleep, "write_morning"), "before-finish": (store.Store, "forget_finished"),
         "before-settle": (review, "settle")}
if point == "mid-render":  # after the first file render writes or removes
    for name in ("replace_memory_file_if_unchanged", "remove_memory_file_if_unchanged", "write_own"):
        setattr(files, name, after_one(getattr(files, name)))
else:
    setattr(*where[point], die)
raise SystemExit(cli.main(args))
"""
KILL_POINTS = ("before-vetoes", "before-tombstones", "before-commit", "before-settle", "before-render",
               "mid-render", "before-morning", "before-finish")


class ForgetPassages(ForgetWorld):
    """What was said (passages) is forgotten exactly as episodes are: by id, by a query, for good."""

    def test_forget_a_passage_by_its_id_takes_its_words_everywhere_for_good(self):
        path = self.said_in_blog()
        self.ok("ingest")
        [first, *_] = self.passages("Quillfeather")
        kept = self.passages("archive header")
        self.assertTrue(kept)
        with store.connect() as db:
            self.assertTrue(any("Quillfeather" in (ps["context"] or "") for ps in db.passages_by_id(kept).values()))
        p = self.ok("forget", f"p{first}")
        self.assertIn(f"passage p{first} · exchange · 2026-11-04 · person: Where does the Quillfeather", p.stdout)
        self.assertIn("forgot 0 episode(s), 1 passage(s)", p.stderr)
        self.assertEqual(self.passages("archive header"), kept)  # its neighbour stays, without its words
        self.assert_gone("Quillfeather", "rotates on Thursdays", "ops vault")
        self.assertEqual(json.loads(self.ok("recall", "Quillfeather deploy key", "--json").stdout), [])
        # back? the same transcript read again, a resumed copy under a new session id, the recovery
        self.ok("ingest", "--force")
        self.assert_gone("Quillfeather", "rotates on Thursdays", "ops vault")
        sid = path.stem
        path.with_name("7c1f0e22-resumed-copy.jsonl").write_text(path.read_text().replace(sid, "7c1f0e22-resumed-copy"))
        self.ok("ingest")
        self.assert_gone("Quillfeather", "rotates on Thursdays", "ops vault")
        for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
            if (self.home / name).exists():
                (self.home / name).rename(self.tmp / f"{name}.damaged")
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        self.assert_gone("Quillfeather", "rotates on Thursdays", "ops vault")
        self.assertTrue(self.passages("archive header"))

    def test_a_forgotten_passage_id_is_never_given_to_another(self):
        self.said_in_blog()
        self.ok("ingest")
        from tests.helpers import raw_db
        with store.connect() as db:
            newest = raw_db(db).execute("SELECT max(id) FROM passages").fetchone()[0]
        self.ok("forget", f"p{newest}")
        t = Transcript(cwd=str(self.blog), start=datetime(2026, 11, 5, 9, tzinfo=timezone.utc))
        t.user("Which font does the archive page use now?")
        t.assistant("The archive page uses the site's serif font since yesterday.")
        t.write(project_folder(self.claude, self.blog))
        self.ok("ingest")
        new = self.passages("serif font since yesterday")
        self.assertTrue(new)
        self.assertTrue(all(i > newest for i in new), (new, newest))

    def test_a_forgotten_passage_stays_out_when_passages_are_cut_another_way(self):
        # a passage's key is its place in its record: a later openmemory that cuts passages otherwise
        # (here: a session's whole conversation as one passage) gives its words another key
        from unittest import mock
        from openmemory import ingest
        self.said_in_blog()
        self.ok("ingest")
        [first, *_] = self.passages("Quillfeather")
        self.ok("forget", f"p{first}")
        cut = ingest.passages_of

        def cut_otherwise(session):
            found = cut(session)
            return [dict(found[0], key="passage:v2:" + found[0]["key"], text="\n".join(p["text"] for p in found),
                         context="")] if found else []
        with mock.patch.object(ingest, "passages_of", cut_otherwise), store.connect() as db:
            ingest.ingest(db, force=True)
        self.assert_gone("Quillfeather", "rotates on Thursdays", "ops vault")
        self.assertTrue(self.passages("archive header now uses the site's serif font"))   # what was not forgotten stays

    def test_a_query_lists_the_passages_holding_every_word_with_their_ids_and_forgets_those_only(self):
        self.said_in_blog()
        t = Transcript(cwd=str(self.blog), start=datetime(2026, 11, 5, 9, tzinfo=timezone.utc))
        t.user("List the owners of the Quillfeather repository.")   # one of the two words
        t.assistant("The owners are listed in OWNERS.md at the top of the repository.")
        t.write(project_folder(self.claude, self.blog))
        self.ok("ingest")
        from tests.helpers import raw_db
        with store.connect() as db:
            said = dict(raw_db(db).execute("SELECT id, lower(text) FROM passages").fetchall())
        both = sorted(i for i, text in said.items() if "quillfeather" in text and "thursday" in text)
        one = self.passages("owners of the Quillfeather")
        self.assertTrue(both and one)
        p = self.cli("forget", "--query", "quillfeather thursday", input="")
        self.assertEqual(p.returncode, 1)
        listed = [line.split(" · ")[0] for line in p.stdout.splitlines()]
        self.assertEqual([x for x in listed if x.startswith("passage")], [f"passage p{i}" for i in both])
        self.ok("forget", "--query", "quillfeather thursday", "--yes")
        self.assertEqual(self.passages("owners of the Quillfeather"), one)  # holds one word of two: kept
        self.assertFalse(set(both) & set(self.passages("Quillfeather")))  # those holding both: gone
        self.assert_gone("Thursday", "ops vault")
        self.ok("ingest", "--force")
        self.assert_gone("Thursday", "ops vault")
        self.assertEqual(self.passages("owners of the Quillfeather"), one)


class ForgetAndLessonStates(ForgetWorld):
    """Forgetting, `lessons reject` and the tombstones agree, also after the recovery procedure."""

    def listed(self) -> list:
        return json.loads(self.ok("lessons", "--json").stdout)

    def recover(self, now="2026-11-06T03:00:00Z"):
        """OPERATIONS.md's recovery: the database moved aside, ingest and sleep again."""
        for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
            if (self.home / name).exists():
                (self.home / name).rename(self.tmp / f"{name}.damaged")
        self.ok("ingest")
        self.ok("sleep", "--now", now)

    def test_a_rejected_lesson_worded_again_by_a_forget_stays_rejected_after_recovery(self):
        lesson = next(ls for ls in self.lessons() if "Marguerite" in ls["text"])
        self.ok("lessons", "reject", f"lesson:{lesson['id']}")
        p = self.ok("forget", self.correction("Marguerite"))
        self.assertIn(f"lesson l{lesson['id']} · worded again", p.stdout)
        [now] = [e for e in self.listed() if e["id"] == lesson["id"]]
        self.assertEqual(now["state"], "vetoed")
        self.recover()
        again = [e for e in self.listed() if "pytest" in e["text"] and "make check" not in e["text"]]
        self.assertTrue(again)
        self.assertEqual({e["state"] for e in again}, {"vetoed"}, again)
        self.assertNotIn("pytest", (self.memory / "MEMORY.md").read_text() if (self.memory / "MEMORY.md").exists() else "")
        self.assert_gone("Marguerite")

    def test_a_rejected_lesson_whose_every_source_is_forgotten_leaves_no_words_and_stays_vetoed(self):
        lesson = next(ls for ls in self.lessons() if "Marguerite" in ls["text"])
        self.ok("lessons", "reject", f"lesson:{lesson['id']}")
        self.assertIn("Marguerite", (self.home / "vetoed.json").read_text())
        self.ok("forget", self.correction("Marguerite"), self.correction("Okonkwo"))
        self.assertNotIn(lesson["id"], [e["id"] for e in self.listed()])
        self.assertNotIn("Marguerite", (self.home / "vetoed.json").read_text())  # its veto kept as a hash
        self.recover()
        self.assert_gone("Marguerite", "Okonkwo")
        # the same correction said again in a new session: learnt again, and still vetoed
        corrected(self.repo, 8, "python -m unittest", A_SAID).write(project_folder(self.claude, self.repo))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-09T03:00:00Z")
        again = [e for e in self.listed() if "Marguerite" in e["text"]]
        self.assertEqual([e["state"] for e in again], ["vetoed"])

    def test_a_lesson_worded_again_is_settled_also_when_the_forget_was_killed_before_it(self):
        import signal
        import subprocess
        import sys
        import shutil
        saved = self.tmp / "saved"
        for name in ("om-home", "claude"):
            shutil.copytree(self.tmp / name, saved / name, symlinks=True)
        with store.connect() as db:  # a whole session: the lesson has one session left, and is a candidate
            sid = next(e["session_id"] for e in db.episodes("correction") if "Marguerite" in e["facts"]["said"])
            args = ["forget", *(f"e{e['id']}" for e in db.episodes() if e["session_id"] == sid)]
        before = {e["id"]: e["state"] for e in self.listed()}
        self.ok(*args)
        expected = {e["id"]: (e["state"], e["text"]) for e in self.listed()}
        self.assertNotEqual({i: state for i, (state, _) in expected.items()}, before)  # a state it settles
        for name in ("om-home", "claude"):  # the same world again, the same forget killed before it settles
            shutil.rmtree(self.tmp / name)
            shutil.copytree(saved / name, self.tmp / name, symlinks=True)
        killed = subprocess.run([sys.executable, "-c", KILLED_AT, "before-settle", *args], env=self.env(),
                                capture_output=True, text=True, cwd=str(self.tmp), timeout=60)
        self.assertEqual(killed.returncode, -signal.SIGKILL, killed.stderr)
        self.ok(*args)
        self.assertEqual({e["id"]: (e["state"], e["text"]) for e in self.listed()}, expected)


class KilledMidForget(ForgetWorld):
    """A forget SIGKILLed anywhere finishes on its re-run (the same command), files included."""

    def test_the_same_forget_run_again_after_a_kill_at_each_point_finishes(self):
        import shutil
        import signal
        import subprocess
        import sys
        saved = self.tmp / "saved"
        for name in ("om-home", "claude"):
            shutil.copytree(self.tmp / name, saved / name, symlinks=True)
        lesson = next(ls for ls in self.lessons() if "Marguerite" in ls["text"])
        args = ["forget", str(self.correction("Marguerite")), str(self.correction("Okonkwo"))]
        self.ok(*args)
        expected = self.rendered()
        survived = 0
        for point in KILL_POINTS:
            for name in ("om-home", "claude"):
                shutil.rmtree(self.tmp / name)
                shutil.copytree(saved / name, self.tmp / name, symlinks=True)
            killed = subprocess.run([sys.executable, "-c", KILLED_AT, point, *args], env=self.env(),
                                    capture_output=True, text=True, cwd=str(self.tmp), timeout=60)
            self.assertEqual(killed.returncode, -signal.SIGKILL, f"{point}: {killed.stderr}")
            again = self.cli(*args)
            self.assertEqual(again.returncode, 0, f"{point}: the re-run failed: {again.stderr}")
            self.assertEqual(self.rendered(), expected, f"{point}: the files differ from a forget never killed")
            self.assertFalse((self.memory / f"om-{lesson['id']}.md").exists(), point)
            self.assert_gone("Marguerite", "Okonkwo", "Zephyrine")
            with store.connect() as db:
                self.assertFalse(forget.unfinished(db), point)
            p = self.cli(*args)  # and once more, the forget whole: nothing left to do, and no error
            self.assertEqual((p.returncode, p.stdout), (0, ""), p.stderr)
            self.assertIn("already forgotten: e", p.stderr)
            survived += 1
        self.assertEqual(survived, len(KILL_POINTS))
        figures(f"\nforget killed at {len(KILL_POINTS)} points: {survived} finished on the re-run")

    def test_a_query_forget_killed_after_its_commit_finishes_on_its_re_run(self):
        import signal
        import subprocess
        import sys
        args = ["forget", "--query", "Okonkwo", "--yes"]
        killed = subprocess.run([sys.executable, "-c", KILLED_AT, "before-render", *args], env=self.env(),
                                capture_output=True, text=True, cwd=str(self.tmp), timeout=60)
        self.assertEqual(killed.returncode, -signal.SIGKILL, killed.stderr)
        self.assertIn(b"Okonkwo", (self.home / "lessons.jsonl").read_bytes())  # the files still to do
        again = self.ok(*args)
        self.assertIn("finished a forget that was stopped", again.stderr)
        self.assert_gone("Okonkwo", "Zephyrine")

    def test_a_session_forget_killed_before_its_tombstones_or_after_its_commit_finishes_on_its_re_run(self):
        import shutil
        import signal
        import subprocess
        import sys
        with store.connect() as db:
            sid = next(e["session_id"] for e in db.episodes("correction") if "Okonkwo" in e["facts"]["said"])
        args = ["forget", "--session", sid[:8], "--yes"]
        saved = self.tmp / "saved"
        for name in ("om-home", "claude"):
            shutil.copytree(self.tmp / name, saved / name, symlinks=True)
        for point, said in (("before-tombstones", "forgot "), ("before-render", "finished a forget that was stopped")):
            for name in ("om-home", "claude"):
                shutil.rmtree(self.tmp / name)
                shutil.copytree(saved / name, self.tmp / name, symlinks=True)
            killed = subprocess.run([sys.executable, "-c", KILLED_AT, point, *args], env=self.env(),
                                    capture_output=True, text=True, cwd=str(self.tmp), timeout=60)
            self.assertEqual(killed.returncode, -signal.SIGKILL, killed.stderr)
            self.assertIn(f"session {sid}", (self.home / "ignore").read_text())   # kept out before anything else
            again = self.ok(*args)
            self.assertIn(said, again.stderr)
            self.assert_gone("Okonkwo", "Zephyrine")
            with store.connect() as db:
                self.assertEqual(db.memories_of_session(sid), ([], [], False))
                self.assertFalse(forget.unfinished(db))
            self.assertIn(f"already forgotten: session {sid}", self.ok(*args).stderr)
            self.assertEqual((self.home / "ignore").read_text().count(sid), 1)

    def rendered(self) -> dict:
        """Every file forget writes or removes, by name (the vetoes' and tombstones' times aside)."""
        out = {}
        for root in (self.home, self.claude / "projects"):
            for p in sorted(root.rglob("*")):
                if p.is_file() and (p.suffix in (".md", ".json") or p.name in ("lessons.jsonl", "forgotten")):
                    data = p.read_text()
                    if p.name == "vetoed.json":
                        data = [{k: v for k, v in e.items() if k != "forgotten"} for e in json.loads(data)["lessons"]]
                    elif p.name == "written.json":
                        data = sorted(json.loads(data).get("files", {}))
                    elif p.name == "forgotten":
                        data = sorted({line.split()[0] for line in data.splitlines()})
                    out[str(p.relative_to(self.tmp))] = data
        return out


class ForgetOnTheRealCorpus(TempHome):
    """Forget a fixed-seed sample of real episodes, re-ingest everything: none comes back."""

    def test_forgotten_real_episodes_never_come_back(self):
        import random
        from tests.helpers import corpus_files
        from openmemory import forget
        files = corpus_files()
        self.ok("ingest", *files)
        with store.connect() as db:
            episodes = db.episodes()
        rng = random.Random(13)
        chosen = rng.sample([e for e in episodes if e["kind"] != "session"], 20) + \
            rng.sample([e for e in episodes if e["kind"] == "session"], 3)
        gone = {e["id"] for e in chosen}
        others = " ".join(" ".join([e["title"], e["gist"], e["detail"], json.dumps(e["facts"])])
                          for e in episodes if e["id"] not in gone and e["session_id"] not in
                          {c["session_id"] for c in chosen if c["kind"] == "session"})
        only_theirs = [q for e in chosen for q in forget.quotes_of(e) if len(q) >= 20 and q not in others]
        self.ok("forget", *sorted(gone))
        self.ok("ingest", "--force", *files)
        with store.connect() as db:
            keys = {e["key"] for e in db.episodes()}
        self.assertEqual([e["key"] for e in chosen if e["key"] in keys], [])
        raw = b"".join(p.read_bytes() for p in self.home.glob("memory.db*"))
        self.assertGreater(len(only_theirs), 5)
        self.assertEqual([q for q in only_theirs if q.encode() in raw], [])
        figures(f"\nforgot {len(chosen)} real episodes, re-ingested {len(files)} transcripts: 0 came back, "
              f"{len(only_theirs)} of their quotes absent from the database bytes")


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
        (self.client / forget.IGNORE_MARKER).write_text("")
        self.session(self.client / "src")  # a subfolder: the marker above counts
        self.session(self.open_project, words="the blog layout")
        out = self.ok("ingest", "--json").stdout
        report = json.loads(out)
        self.assertEqual((report["read"], report["opted_out"]), (1, 1))
        self.assertIn("1 kept out (.openmemory-ignore or the ignore list)", self.ok("ingest", "--force").stdout)
        raw = self.raw_db()
        self.assertNotIn(b"client roadmap", raw)
        self.assertNotIn(b"client-nda", raw)
        self.assertIn(b"blog layout", raw)
        status = self.ok("status").stdout
        self.assertIn("1 kept out (.openmemory-ignore or the ignore list)", status)
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["opted_out"], 1)

    def test_status_counts_a_project_forgotten_and_kept_out_as_kept_out_at_once(self):
        self.session(self.client / "src")
        self.session(self.open_project, words="the blog layout")
        self.ok("ingest")
        self.assertIn("transcripts  2 ingested", self.ok("status").stdout)
        (self.client / forget.IGNORE_MARKER).write_text("")
        self.ok("forget", "--project", str(self.client), "--yes")
        # before: "1 ingested" and nothing of the other, until the next ingest counted it kept out
        self.assertIn("transcripts  1 ingested, 0 malformed lines skipped, 1 kept out (.openmemory-ignore or the "
                      "ignore list)", self.ok("status").stdout)
        self.ok("ingest")
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["opted_out"], 1)

    def test_a_listed_folder_keeps_sessions_out(self):
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "ignore").write_text(f"# places I cannot write into\n{self.client}\n\n")
        self.session(self.client)
        # told as kept out by the list too, not by a marker file the person never made
        self.assertIn("1 kept out (.openmemory-ignore or the ignore list)", self.ok("ingest").stdout)
        self.assertNotIn(b"client roadmap", self.raw_db())
        self.assertEqual(forget.kept_out(str(self.client / "src")), f"{self.client} (listed in {self.home / 'ignore'})")
        self.assertIsNone(forget.kept_out(str(self.open_project)))

    def test_only_the_first_records_are_read(self):
        (self.client / forget.IGNORE_MARKER).write_text("")
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
        (self.client / forget.IGNORE_MARKER).write_text("")
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
        marker = self.client / forget.IGNORE_MARKER
        marker.write_text("")
        self.session(self.client)
        self.ok("ingest")
        marker.unlink()
        report = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual((report["read"], report["opted_out"]), (1, 0))
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["opted_out"], 0)

    def test_a_session_that_moves_into_a_kept_out_project_stores_nothing_from_there_on(self):
        (self.client / forget.IGNORE_MARKER).write_text("")
        work = self.tmp / "work"
        t = test_session(cwd=str(work), start=datetime(2026, 11, 2, 9, tzinfo=timezone.utc))
        t.user("No, don't list the folders with ls -R, use tree -L 2 like the wiki says")
        t.cwd = str(self.client / "src")  # the agent went on in the project kept out
        t.user("No, don't describe the secret client roadmap in the README")
        t.assistant("Reading.", tools=[("Bash", {"command": "cat ROADMAP.md"}, "Exit code 1\nNDA-project-codename missing", True)])
        t.cwd = str(work)  # and came back: still nothing from the first record there on
        t.user("No, never mention the merger with Acme")
        path = t.write(project_folder(self.claude, str(work)))
        sub = Transcript(cwd=str(self.client / "src"), session_id=t.session_id)  # a subagent it started there
        sub.user("Build the client's release")
        sub.assistant("Building.", tools=[("Bash", {"command": "make nda-release"},
                                           "Exit code 2\nNDA-subagent-failure: no rule", True)])
        (path.parent / path.stem / "subagents").mkdir(parents=True)
        (path.parent / path.stem / "subagents" / "agent-a1b2c3.jsonl").write_text(sub.text())
        for run in (lambda: self.ok("ingest"),  # a bulk ingest's workers read it the same way
                    lambda: self.ok("ingest", "--force", env=self.env(OPENMEMORY_JOBS="2")),
                    lambda: self.cli("hook", input=json.dumps({"hook_event_name": "SessionEnd",
                                                               "transcript_path": str(path)}))):
            run()
            raw = self.raw_db()
            self.assertIn(b"tree -L 2", raw)  # what came before the move is the session
            for words in (b"client roadmap", b"client-nda", b"NDA-project", b"merger with Acme", b"NDA-subagent",
                          b"nda-release"):
                self.assertFalse(words in raw, f"{words} is in memory")

    def test_remember_refuses_a_note_for_a_project_kept_out_in_one_line(self):
        (self.client / forget.IGNORE_MARKER).write_text("")
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "ignore").write_text(f"{self.tmp / 'work' / 'listed'}\n")
        (self.tmp / "work" / "listed").mkdir()
        for args, folder in ((["remember", "--cwd", str(self.client / "src")], self.tmp),
                             (["remember"], self.client / "src"),  # the folder it runs in
                             (["remember", "--cwd", str(self.tmp / "work" / "listed")], self.tmp)):
            p = subprocess.run([sys.executable, "-m", "openmemory", *args, "the client's launch date is May 3"],
                               capture_output=True, text=True, env=self.env(), cwd=str(folder), timeout=60)
            self.assertEqual(p.returncode, 1, args)
            self.assertEqual(p.stdout, "")
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn("is kept out of memory", p.stderr)
        for arguments, project in (({"text": "the client's launch date is May 3", "cwd": str(self.client)}, None),
                                   ({"text": "the client's launch date is May 3"}, str(self.client / "src"))):
            reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": "remember", "arguments": arguments}}, project)
            self.assertTrue(reply["result"]["isError"])
            self.assertIn("is kept out of memory", reply["result"]["content"][0]["text"])
        self.assertNotIn(b"launch date", self.raw_db())
        self.ok("remember", "--cwd", str(self.open_project), "the blog launches in June")  # elsewhere, as before
        self.assertIn(b"blog launches in June", self.raw_db())

    def test_the_hook_keeps_it_out_too(self):
        (self.client / forget.IGNORE_MARKER).write_text("")
        path = self.session(self.client)
        p = self.cli("hook", input=json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(path)}))
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertNotIn(b"client roadmap", self.raw_db())
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["opted_out"], 1)


class OptOutWorktree(TempHome):
    """A git worktree of a repository kept out is kept out too: its lessons would be filed under
    the repository (paths.project_of), and `git worktree add ../app-fix` makes a sibling folder,
    where neither the repository's untracked marker nor a committed one its older branch lacks is."""

    def setUp(self):
        super().setUp()
        self.repo = Path(os.path.realpath(self.tmp)) / "work" / "client-app"
        self.repo.mkdir(parents=True)
        self.git("init", "-q")
        self.git("commit", "-q", "--allow-empty", "-m", "start")
        self.linked = self.repo.parent / "client-app-fix"
        self.git("worktree", "add", "-q", str(self.linked), "-b", "fix")
        (self.linked / "src").mkdir()

    def git(self, *args):
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="a",
                   GIT_AUTHOR_EMAIL="a@example.com", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@example.com")
        subprocess.run(["git", "-C", str(self.repo), *args], check=True, capture_output=True, env=env)

    def sessions(self, *cwds):
        for day, cwd in enumerate(cwds, start=2):
            corrected(cwd, day, "make test", "No, don't use make test here, run the client roadmap suite with "
                                             "pytest -q").write(project_folder(self.claude, cwd))

    def assert_nothing_stored(self, kept_out):
        report = json.loads(self.ok("ingest", "--json").stdout)
        self.assertEqual((report["read"], report["opted_out"]), (0, kept_out))
        self.ok("sleep", "--now", "2026-11-08T03:00:00Z")
        self.assertIn("no lessons yet", self.ok("lessons").stderr)
        self.assertIn('Nothing in memory matches "roadmap"', self.ok("recall", "roadmap").stdout)
        raw = b"".join(p.read_bytes() for p in self.home.glob("memory.db*"))
        self.assertNotIn(b"roadmap", raw)
        self.assertNotIn(b"client-app", raw)
        self.assertIn(f"0 ingested, 0 malformed lines skipped, {kept_out} kept out", self.ok("status").stdout)

    def test_a_worktree_of_a_repository_with_an_untracked_marker_stores_nothing(self):
        (self.repo / forget.IGNORE_MARKER).write_text("")
        self.sessions(self.linked, self.linked / "src", self.repo)
        self.assert_nothing_stored(3)
        self.assertEqual(forget.kept_out(str(self.linked / "src")), str(self.repo / forget.IGNORE_MARKER))

    def test_a_worktree_whose_branch_is_older_than_the_committed_marker_stores_nothing(self):
        (self.repo / forget.IGNORE_MARKER).write_text("")
        self.git("add", forget.IGNORE_MARKER)
        self.git("commit", "-q", "-m", "keep this repository out of openmemory")
        self.assertFalse((self.linked / forget.IGNORE_MARKER).exists())    # branch fix: made before it
        self.sessions(self.linked)
        self.assert_nothing_stored(1)

    def test_a_listed_repository_keeps_its_worktrees_out_and_a_marked_subfolder_its_twin(self):
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "ignore").write_text(f"{self.repo}\n")
        self.sessions(self.linked / "src")
        self.assert_nothing_stored(1)
        (self.home / "ignore").write_text("")
        (self.repo / "src").mkdir()
        (self.repo / "src" / forget.IGNORE_MARKER).write_text("")
        self.assertEqual(forget.kept_out(str(self.linked / "src")), str(self.repo / "src" / forget.IGNORE_MARKER))
        self.assertIsNone(forget.kept_out(str(self.linked)))

    def test_forget_of_the_worktree_says_it_is_kept_out_and_remember_refuses(self):
        self.sessions(self.linked)
        self.ok("ingest")
        (self.repo / forget.IGNORE_MARKER).write_text("")
        p = self.ok("forget", "--project", self.linked, "--yes")
        self.assertIn("forgot 3 episode(s)", p.stderr)
        self.assertNotIn("not kept out", p.stdout)     # was: "sessions in …client-app-fix from now on are stored"
        self.assertIn("0 ingested, 0 malformed lines skipped, 1 kept out", self.ok("status").stdout)
        p = self.cli("remember", "--cwd", self.linked, "the client's launch date is May 3")
        self.assertEqual(p.returncode, 1)
        self.assertIn("is kept out of memory", p.stderr)


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
        (self.nda / forget.IGNORE_MARKER).write_text("")
        result = render.render(self.db)
        self.assertEqual(result["vetoed"], [])  # removed by openmemory, not vetoed by the person
        self.assertEqual(sorted(p.name for p in self.nda_memory.glob("om-*.md")), [])
        self.assertFalse((self.nda_memory / "MEMORY.md").exists())  # it held only the section: no lesson left
        self.assertTrue((self.blog_memory / f"om-{everywhere}.md").exists())
        lines = [json.loads(line) for line in (self.home / "lessons.jsonl").read_text().splitlines()]
        self.assertEqual(len(lines), 2)  # the wire format still lists both: the person's own memory

    def test_render_says_how_many_live_lessons_of_a_project_kept_out_reach_no_memory(self):
        # The marker added to a repository after its lessons were learnt (or a lesson learnt in its
        # git worktree, which a marker in the repository does not keep out, and filed under it):
        # `openmemory render` said "2 live lessons in 0 memory folders; 1 file written; 2 removed"
        # and `lessons` listed both as live, with nothing saying where they had gone.
        from tests.test_render import add_lesson
        mine = add_lesson(self.db, "Run the NDA build with make nda", cwd=str(self.nda))
        self.ok("render")
        (self.nda / forget.IGNORE_MARKER).write_text("")
        p = self.ok("render")
        self.assertEqual(p.stdout, "1 live lesson in 0 memory folders; 0 files written; 1 of a project kept out of "
                                   "memory, written into no memory folder (`openmemory lessons` lists it; `forget` "
                                   "takes it out); 2 removed\n")
        self.assertEqual(json.loads(self.ok("render", "--json").stdout)["kept_out"], [mine])

    def test_a_listed_folder_counts_for_render_too(self):
        from openmemory import render
        from tests.test_render import add_lesson
        (self.home / "ignore").write_text(f"{self.nda}\n")
        add_lesson(self.db, "Prefer pytest -q over unittest", cwd=None)
        render.render(self.db)
        self.assertEqual(list(self.nda_memory.glob("om-*.md")), [])
        self.assertEqual(len(list(self.blog_memory.glob("om-*.md"))), 1)


class ForgetAClone(TempHome):
    """Two clones of one repository (real git repositories, one origin) are one project for sleep,
    render and recall; `forget --project` takes the folder named, says what of the project it
    keeps and how to forget that too, and keeps a lesson the other clone taught as well."""

    def setUp(self):
        super().setUp()
        self.work = self.clone("work/cli", "git@github.com:org/cli.git")
        self.review = self.clone("src/cli-review", "https://github.com/org/cli")
        corrected(self.work, 2, "python -m unittest", A_SAID).write(project_folder(self.claude, self.work))
        corrected(self.review, 3, "python -m unittest discover", B_SAID).write(project_folder(self.claude, self.review))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-05T03:00:00Z")
        [self.lesson] = self.lessons()

    def clone(self, name, origin):
        return git_clone(self.tmp, name, origin)

    def lessons(self):
        with store.connect() as db:
            return db.all_lessons()

    def folders(self):
        with store.connect() as db:
            return sorted({e["cwd"] for e in db.episodes()})

    def test_forget_one_clone_keeps_the_other_says_so_and_keeps_the_lesson_it_taught_too(self):
        self.assertEqual((self.lesson["cwd"], self.lesson["seen"]), (str(self.work), 2))   # filed under the first
        p = self.cli("forget", "--project", self.work, "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.folders(), [str(self.review)])
        # its passages: the exchange, the person's reply to it, and the `pytest -q` the agent ran after it
        self.assertIn(f"not forgotten: 3 episode(s) and 3 passage(s) of {self.review}, another clone or worktree of "
                      f"its repository; `openmemory forget --project {self.review}` forgets those too", p.stdout)
        self.assertIn(f"not kept out: sessions in {self.work} from now on are stored as before; to keep it out, put "
                      f"an empty .openmemory-ignore file in it", p.stdout)
        self.assertIn(f"lesson l{self.lesson['id']} · kept: also learnt in {self.review}", p.stdout)
        [lesson] = self.lessons()         # worded from what the other clone said, and filed under it
        self.assertEqual((lesson["id"], lesson["vetoed"], lesson["cwd"]), (self.lesson["id"], 0, str(self.review)))
        self.assertIn("Zephyrine", lesson["text"])
        raw = b"".join(p.read_bytes() for p in self.home.rglob("*") if p.is_file())
        self.assertNotIn(b"Marguerite", raw)
        p = self.cli("forget", "--project", self.work, "--yes")     # nothing left of it: and what is not
        self.assertIn("nothing in memory to forget", p.stderr)
        self.assertIn(f"`openmemory forget --project {self.review}` forgets those too", p.stdout)
        self.ok("forget", "--project", self.review, "--yes")         # the rest, as it said
        self.assertEqual((self.folders(), self.lessons()), ([], []))

    def test_a_lesson_kept_for_the_other_clone_leaves_no_word_or_folder_of_the_forgotten_one(self):
        # rejected, its old wording (the forgotten correction's "Marguerite Vasquez") was in the
        # morning report's 'Vetoed by you'; its prediction named the folder forgotten
        self.ok("lessons", "reject", f"lesson:{self.lesson['id']}")
        self.ok("render")
        self.assertIn(b"Marguerite", (self.home / "morning.md").read_bytes())
        p = self.cli("forget", "--project", self.work, "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        [lesson] = self.lessons()
        self.assertEqual((lesson["vetoed"], lesson["cwd"]), (1, str(self.review)))
        raw = b"".join(p.read_bytes() for p in self.home.rglob("*") if p.is_file())
        self.assertNotIn(b"Marguerite", raw)
        self.assertNotIn(str(self.work).encode(), raw)
        self.assertIn("Zephyrine Okonkwo asked, not `python -m unittest discover`.",   # its words now
                      (self.home / "morning.md").read_text().split("## Vetoed by you")[1])
        with store.connect() as db:
            [prediction] = db.predictions_by_lesson()[lesson["id"]]
        self.assertIn(f" again in {self.review}: ", prediction["text"])

    def test_a_judges_lesson_the_other_clone_taught_too_is_kept_in_the_judges_words(self):
        # the rules see no lesson in what the other clone said, a judge did: the lesson was
        # forgotten and vetoed for good (approved or not) though the other clone taught it
        judged = "Run the tests with `pytest -q`, not `python -m unittest discover`."
        with store.connect() as db, db.transaction():
            i = self.correction(B_SAID)
            facts = dict(db.episodes_by_id([i])[i]["facts"], said="hmm, that is not how we test in this one",
                         own="hmm, that is not how we test in this one",
                         judge={"correction": True, "lasting": True, "lesson": judged})
            raw_db(db).execute("UPDATE episodes SET facts = ? WHERE id = ?", (json.dumps(facts), i))
        self.ok("lessons", "approve", f"lesson:{self.lesson['id']}")
        p = self.cli("forget", "--project", self.work, "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        [lesson] = self.lessons()
        self.assertEqual((lesson["id"], lesson["vetoed"], lesson["cwd"], lesson["text"]),
                         (self.lesson["id"], 0, str(self.review), "In this repository run the tests with `pytest -q`, "
                                                                    "not `python -m unittest discover`."))

    def test_memories_stored_through_a_link_to_the_folder_are_forgotten_with_it(self):
        # a session started in a link to the folder records the link: forget --project (which
        # resolves the folder) left its memories and said 'forget --project <the folder>', again
        link = self.stored_through_a_link()
        for named in (self.work, self.work):    # and the forget it suggested left them too
            p = self.cli("forget", "--project", named, "--yes")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(self.folders(), [str(self.review)])
            self.assertNotIn(f"of {self.work},", p.stdout)
            self.assertNotIn(f"of {link},", p.stdout)
            self.assertIn(f"of {self.review}, another clone", p.stdout)

    def test_forget_of_the_link_takes_the_folder_and_what_was_stored_through_the_link(self):
        link = self.stored_through_a_link()
        p = self.cli("forget", "--project", link, "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.folders(), [str(self.review)])
        self.assertNotIn(f"of {self.work},", p.stdout)

    def stored_through_a_link(self):
        link = self.tmp / "link-cli"
        os.symlink(self.work, link)
        corrected(str(link), 7, "make", "No, build it with just build please").write(
            project_folder(self.claude, str(link)))
        self.ok("ingest")
        self.assertIn(str(link), self.folders())
        return link

    def test_a_lesson_filed_under_the_folder_but_learnt_only_in_the_other_clone_stays_whole(self):
        # a night spells the project by the first clone it meets: the lesson may be filed under
        # a clone none of its sources came from; forgetting that clone leaves it as it was
        with store.connect() as db, db.transaction():
            raw_db(db).execute("UPDATE lessons SET sources = ? WHERE id = ?",
                               (json.dumps([self.correction(B_SAID)]), self.lesson["id"]))
        p = self.cli("forget", "--project", self.work, "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        [lesson] = self.lessons()
        self.assertEqual((lesson["text"], lesson["vetoed"], lesson["cwd"]),
                         (self.lesson["text"], 0, str(self.review)))
        self.assertIn("0 lesson(s) worded again", p.stderr)

    def correction(self, words):
        with store.connect() as db:
            return next(e["id"] for e in db.episodes("correction") if words in e["facts"]["said"])

    def test_a_folder_not_on_this_machine_is_kept_out_by_the_list_and_said_so(self):
        # transcripts copied from another machine: no marker can be put in a folder not here
        elsewhere = "/Users/alex/src/cli"
        corrected(elsewhere, 4, "make", "No, build it with just build").write(project_folder(self.claude, elsewhere))
        self.ok("ingest")
        p = self.cli("forget", "--project", elsewhere, "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"not kept out: sessions in {elsewhere} from now on are stored as before; to keep it out, add "
                      f"it as a line of {self.home / 'ignore'}", p.stdout)
        self.assertNotIn("not forgotten", p.stdout)     # another machine's folder: no clone of it is known here
        corrected(elsewhere, 5, "make", "No, build it with just build-all").write(project_folder(self.claude, elsewhere))
        self.ok("ingest")
        (self.home / "ignore").write_text(elsewhere + "\n")              # as it said: kept out, and not said again
        p = self.cli("forget", "--project", elsewhere, "--yes")
        self.assertIn("forgot 3 episode(s)", p.stderr)
        self.assertNotIn("not kept out", p.stdout + p.stderr)

    def test_a_linked_worktree_and_the_rest_of_a_repository_are_named_by_the_folder_their_forget_takes(self):
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="t",
                   GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
        for args in (["commit", "-q", "--allow-empty", "-m", "start"],
                     ["worktree", "add", "-q", str(self.tmp / "wt-fix"), "-b", "fix"]):
            subprocess.run(["git", "-C", str(self.work), *args], check=True, capture_output=True, env=env)
        linked = Path(os.path.realpath(self.tmp / "wt-fix"))
        (self.work / "pkg").mkdir()
        for cwd, day in ((linked, 6), (self.work / "pkg", 7)):
            corrected(cwd, day, "make lint", "No, run the linter with ruff check .").write(project_folder(self.claude, cwd))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-08T03:00:00Z")
        [lint] = [ls for ls in self.lessons() if "make lint" in ls["text"]]
        self.assertEqual((lint["cwd"], lint["seen"]), (str(self.work), 2))   # a worktree's project: the main tree
        p = self.cli("forget", "--project", self.work / "pkg", "--yes")         # a subfolder: the rest stays
        self.assertIn(f"of {self.work}, the rest of its repository; `openmemory forget --project {self.work}`",
                      p.stdout)
        p = self.cli("forget", "--project", self.work, "--yes")
        self.assertIn(f"of {linked}, another clone or worktree of its repository; `openmemory forget --project "
                      f"{linked}` forgets those too", p.stdout)
        self.assertIn(f"lesson l{lint['id']} · kept: also learnt in {linked}, filed under it", p.stdout)  # not the tree gone
        [lint] = [ls for ls in self.lessons() if "make lint" in ls["text"]]
        self.assertEqual(lint["cwd"], str(linked))
        self.ok("forget", "--project", linked, "--yes")
        self.assertEqual(self.folders(), [str(self.review)])

    def test_a_linked_worktree_removed_since_stays_its_repositorys_and_is_named_as_written(self):
        # `git worktree add ../wt-fix`, a session there (read by the SessionEnd hook while the
        # worktree is there), `git worktree remove`: nothing in the folder's name says whose it
        # was. Its lesson stays the repository's, and forget --project of the repository names it.
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="t",
                   GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
        git = lambda *args: subprocess.run(["git", "-C", str(self.work), *args], check=True, capture_output=True,
                                           env=env)
        git("commit", "-q", "--allow-empty", "-m", "start")
        git("worktree", "add", "-q", str(self.tmp / "wt-fix"), "-b", "fix")
        linked = os.path.realpath(self.tmp / "wt-fix")
        corrected(linked, 6, "make lint", "No, run the linter with ruff check .").write(project_folder(self.claude, linked))
        self.ok("ingest")
        git("worktree", "remove", linked)
        corrected(self.work, 7, "make lint", "no, run the linter with ruff check .").write(
            project_folder(self.claude, self.work))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-08T03:00:00Z")
        [lint] = [ls for ls in self.lessons() if "make lint" in ls["text"]]
        self.assertEqual((lint["cwd"], lint["seen"]), (str(self.work), 2))   # one lesson, the repository's
        p = self.cli("forget", "--project", self.work, "--yes")
        self.assertIn(f"of {linked}, another clone or worktree of its repository; `openmemory forget --project "
                      f"{linked}` forgets those too", p.stdout)
        self.assertIn(f"lesson l{lint['id']} · kept: also learnt in {linked}, filed under it", p.stdout)
        self.ok("forget", "--project", linked, "--yes")
        self.assertEqual([ls for ls in self.lessons() if "make lint" in ls["text"] and not ls["vetoed"]], [])


class Campaign(TempHome):
    """The forget/opt-out/kill campaign (tests/forgets.py), short; `python3 -m tests.forgets --full` is long."""

    def test_nothing_forgotten_comes_back_nothing_unasked_goes_and_every_killed_forget_finishes(self):
        from tests import forgets
        result = forgets.campaign(forgets.SHORT, seed=5)
        self.assertEqual(result["failures"], [])
        self.assertEqual((result["came_back"], result["remember_refused"]), (0, 2))
        self.assertEqual(result["kills"], result["survived"])
        self.assertGreater(result["forgets"], 0)
        figures(f"\nforget campaign: {result['forgets']} forgets, {result['came_back']} came back; "
                f"{result['survived']} of {result['kills']} kills mid-forget finished on the re-run")


class ForgetOneOfTheSameFailures(TempHome):
    def test_forgetting_one_failure_names_the_same_failure_of_other_sessions_and_keeps_it(self):
        """The same failure in two sessions is two episodes: forget e<one> takes that one only and
        says that the other stays, with the command that forgets it too."""
        repo = Path(os.path.realpath(self.tmp)) / "shop"
        (repo / ".git").mkdir(parents=True)
        for day in (2, 3):
            t = Transcript(cwd=str(repo), start=datetime(2026, 11, day, 9, tzinfo=timezone.utc))
            t.user("run the tests")
            t.assistant("Running them.", tools=[("Bash", {"command": "npm test"},
                                                 "Exit code 1\nError: Cannot find module 'left-pad'", True)])
            t.assistant("The module is missing; stopping here.")
            t.write(project_folder(self.claude, repo))
        self.ok("ingest")
        with store.connect() as db:
            first, second = [e["id"] for e in db.episodes("error")]
        p = self.ok("forget", f"e{second}")
        self.assertIn("forgot 1 episode(s)", p.stderr)
        self.assertIn(f"openmemory: note: 1 other failure with the same cause as `npm test` failed", p.stderr)
        self.assertIn(f"stays in memory; to forget it too: openmemory forget e{first}\n", p.stderr)
        with store.connect() as db:
            self.assertEqual([e["id"] for e in db.episodes("error")], [first])
        again = self.ok("forget", f"e{first}")
        self.assertNotIn("same cause", again.stderr)
