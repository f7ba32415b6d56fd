"""Recall: the index stays in sync, odd queries never raise, scoring/touching/archive/scope
behave as documented, real transcripts, and the CLI verb (quality: test_recall_quality)."""
import json
import os
import sqlite3
import subprocess
import sys
import unittest
from math import log
from unittest import mock
from pathlib import Path

from openmemory import clock, embed, mcp, migrations, recall, store
from tests.fixtures import Transcript, project_folder, test_session
from tests.helpers import TempHome, corpus_files, raw_db

NOW = "2026-11-01T12:00:00.000000Z"
PROJECT = "/home/dev/shop"


def episode(key, title, gist, cwd="/home/dev/shop", at="2026-10-30T10:00:00Z", kind="error", detail=""):
    return {"key": key, "kind": kind, "title": title, "gist": gist, "detail": detail, "facts": {},
            "at": at, "cwd": cwd}


def put(db, episodes, session="s1"):
    """Store episodes as one transcript's, the way ingest does; returns {key: id}."""
    db.replace_session({"id": session, "path": f"/t/{session}.jsonl", "mtime_ns": 0, "size": 0}, episodes)
    return {row["key"]: row["id"] for row in raw_db(db).execute("SELECT key, id FROM episodes")}


def put_apart(db, episodes):
    """Store each episode as a transcript of its own (no episode is another's context); {key: id}."""
    for e in episodes:
        ids = put(db, [e], session=f"s-{e['key']}")
    return ids


def add_lesson(db, text, cwd=None, at=NOW):
    with db.transaction():
        return raw_db(db).execute(
            "INSERT INTO lessons (text, kind, cwd, created, updated, embedding) VALUES (?, ?, ?, ?, ?, ?)",
            (text, "project" if cwd else "feedback", cwd, at, at, embed.encode(embed.vector(text)))).lastrowid


def indexed(db, word, fields="title body detail"):
    """Index rowids holding word in these fields (episode ids; lessons as minus their id)."""
    return sorted(r[0] for r in raw_db(db).execute("SELECT rowid FROM recall_index WHERE recall_index MATCH ?",
                                                   (f"{{{fields}}} : " + recall.match_expression([word]),)))


class IndexSync(TempHome):
    def setUp(self):
        super().setUp()
        self.db = store.connect()
        self.addCleanup(self.db.close)

    def test_writes_updates_and_deletes_reach_the_index(self):
        ids = put(self.db, [episode("a", "`alembic upgrade head` failed", "relation orders already exists"),
                            episode("b", "`npm test` failed", "cannot find module left-pad")])
        self.assertEqual(indexed(self.db, "alembic"), [ids["a"]])
        self.assertEqual(indexed(self.db, "orders"), [ids["a"]])
        # re-ingest: a's text changed, b is no longer produced
        put(self.db, [episode("a", "`alembic upgrade head` failed", "relation invoices already exists")])
        self.assertEqual(indexed(self.db, "orders"), [])
        self.assertEqual(indexed(self.db, "invoices"), [ids["a"]])
        self.assertEqual(indexed(self.db, "pad"), [])
        note = self.db.add_note("The staging database password rotates every Monday")
        self.assertEqual(indexed(self.db, "rotates"), [note])
        raw_db(self.db).execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")

    def test_episodes_stored_and_changed_in_one_transaction_are_indexed_by_their_last_words(self):
        # A bulk ingest stores many transcripts in one transaction; new episodes are indexed at its
        # commit, or first when one of them changes or goes within it.
        with self.db.transaction():
            ids = put(self.db, [episode("a", "`alembic upgrade head` failed", "relation orders already exists"),
                                episode("b", "`npm test` failed", "cannot find module left-pad")])
            put(self.db, [episode("a", "`alembic upgrade head` failed", "relation invoices already exists")])
            later = put(self.db, [episode("c", "`cargo build` failed", "linker cc not found")], session="s2")
        self.assertEqual(indexed(self.db, "orders"), [])
        self.assertEqual(indexed(self.db, "invoices"), [ids["a"]])
        self.assertEqual(indexed(self.db, "pad"), [])
        self.assertEqual(indexed(self.db, "linker"), [later["c"]])
        with self.assertRaises(RuntimeError), self.db.transaction():
            put(self.db, [episode("d", "`go vet` failed", "unreachable code")], session="s3")
            raise RuntimeError("killed")
        self.assertEqual(indexed(self.db, "unreachable"), [])
        self.assertEqual(indexed(self.db, "linker"), [later["c"]])
        raw_db(self.db).execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")

    def test_touching_and_archiving_leave_the_index_alone(self):
        ids = put(self.db, [episode("a", "`make deploy` failed", "ssh: connect to host bastion port 22")])
        pages = raw_db(self.db).execute("SELECT count(*) FROM recall_index_data").fetchone()[0]
        with self.db.transaction():
            raw_db(self.db).execute("UPDATE episodes SET strength = 0.1, archived = 1, recalls = 4 WHERE id = ?",
                               (ids["a"],))
        self.assertEqual(raw_db(self.db).execute("SELECT count(*) FROM recall_index_data").fetchone()[0], pages)
        self.assertEqual(indexed(self.db, "bastion"), [ids["a"]])

    def test_lessons_are_indexed_under_negative_rowids(self):
        lesson = add_lesson(self.db, "Run the linter with ruff, not flake8")
        self.assertEqual(indexed(self.db, "ruff"), [-lesson])
        with self.db.transaction():
            raw_db(self.db).execute("UPDATE lessons SET text = 'Run the linter with pylint' WHERE id = ?", (lesson,))
        self.assertEqual((indexed(self.db, "ruff"), indexed(self.db, "pylint")), ([], [-lesson]))
        with self.db.transaction():
            raw_db(self.db).execute("DELETE FROM lessons WHERE id = ?", (lesson,))
        self.assertEqual(indexed(self.db, "pylint"), [])

    def test_a_note_title_that_repeats_its_text_is_not_counted_twice(self):
        note = self.db.add_note("kafka consumer lag alert fires at night")
        titled = self.db.add_note("the consumer lag alert is noise", title="kafka")
        # The index is contentless (it stores no text), so look through bm25 with the title alone weighted.
        scores = dict(raw_db(self.db).execute(
            "SELECT rowid, bm25(recall_index, 1.0, 0.0, 0.0) FROM recall_index WHERE recall_index MATCH 'kafka'"))
        self.assertEqual(scores[note], 0)          # the note's title was left out of the title column
        self.assertLess(scores[titled], 0)         # an explicit title is indexed as a title

    def test_the_migration_indexes_what_was_stored_before_it(self):
        path = self.home / "old.db"
        db = sqlite3.connect(str(path), isolation_level=None)
        migrations.m001_create_schema(db)
        db.execute("PRAGMA user_version = 1")
        db.execute("INSERT INTO episodes (key, kind, title, gist, at, created, last_touched, embedding) "
                   "VALUES ('k', 'note', 'flaky selenium grid', 'flaky selenium grid on Fridays', ?, ?, ?, ?)",
                   (NOW, NOW, NOW, embed.encode(embed.vector("flaky selenium grid"))))
        db.close()
        with store.connect(path) as old:
            self.assertEqual(raw_db(old).execute("PRAGMA user_version").fetchone()[0], len(migrations.MIGRATIONS))
            self.assertEqual(indexed(old, "selenium"), [1])
            self.assertEqual([h["title"] for h in recall.recall(old, "selenium", now=NOW)], ["flaky selenium grid"])


class OddQueries(TempHome):
    QUERIES = ["", "   ", "the and of to", "!!!", '"', "'", '""', "a\"b", "AND", "OR NOT", "NEAR(", "NEAR(a b, 2)",
               "foo*", "*", "col:value", "title:alembic", "^start", "(unbalanced", "a) OR (b", "-", "+", "{}", "[]",
               "\\", "%_", "\x00", "日本語のテスト", "émigré café", "🙂 🚀", "x" * 1000, "alembic " * 300,
               "DROP TABLE episodes; --", "' OR 1=1 --", "snake_case_name", "camelCaseName", "path/to/file.py:12",
               "-- --", "NOT", "\u200b"]

    def test_no_query_raises_and_every_result_is_well_formed(self):
        with store.connect() as db:
            put_apart(db, [episode("a", "`alembic upgrade head` failed", "relation orders already exists"),
                     episode("b", "Café menu page", "the émigré font renders badly", kind="session"),
                     episode("c", "snake_case_name in the config", "camelCaseName broke the parser", kind="note")])
            for query in self.QUERIES:
                with self.subTest(query=query[:40]):
                    for share in (recall.LEXICAL_SHARE, 0.0):
                        hits = recall.search(db, query, k=5, now=NOW, lexical_share=share)
                        self.assertIsInstance(hits, list)
                        for h in hits:
                            self.assertTrue(0 < h["relevance"] <= 1)
            self.assertEqual(raw_db(db).execute("SELECT count(*) FROM episodes").fetchone()[0], 3)
            self.assertEqual(recall.recall(db, "the and of to"), [])
            self.assertEqual([h["title"] for h in recall.search(db, "cafe emigre", now=NOW)], ["Café menu page"])
            self.assertEqual(recall.search(db, "title:alembic", now=NOW)[0]["title"][:9], "`alembic ")
            self.assertEqual(recall.search(db, "snake_case_name", now=NOW)[0]["kind"], "note")

    def test_query_terms(self):
        self.assertEqual(recall.query_terms("How do we run the tests here?"), ["run", "tests"])
        self.assertEqual(recall.query_terms("tests test testing"), ["tests"])  # one term a stem
        self.assertEqual(recall.query_terms('"NEAR(x" OR y*'), ["near"])
        self.assertEqual(len(recall.query_terms(" ".join(f"w{i}x" for i in range(100)))), recall.MAX_QUERY_TERMS)
        self.assertEqual(recall.match_expression(['a"b', "c"]), '"a""b" OR "c"')


class Scoring(TempHome):
    def setUp(self):
        super().setUp()
        self.db = store.connect()
        self.addCleanup(self.db.close)

    def test_relevance_decides_and_recency_orders_memories_of_the_same_worth(self):
        ids = put_apart(self.db, [
            episode("old", "`pytest -q` failed: fixture db not found", "fixture db not found in conftest",
                    at="2026-08-02T12:00:00Z"),
            episode("new", "`pytest -q` failed: fixture db not found", "fixture db not found in settings",
                    at="2026-11-01T12:00:00Z"),
            episode("fresh", "`npm run build` failed", "webpack could not resolve the fixture loader",
                    at="2026-11-01T12:00:00Z")])
        hits = recall.search(self.db, "fixture db not found", k=5, now=NOW)
        self.assertEqual([h["id"] for h in hits], [ids["new"], ids["old"], ids["fresh"]])  # same worth: newer first
        for h in hits:
            expected = (h["relevance"] + recall.RECENCY_TIE * 2 ** (-self._age(h["at"]) / 30)
                        + recall.STRENGTH_TIE * 1.0 / 2)
            self.assertAlmostEqual(h["score"], expected, places=3)
        self.assertAlmostEqual(hits[0]["relevance"], hits[1]["relevance"], delta=0.03)   # the same worth
        self.assertLess(hits[-1]["relevance"], 0.5)       # only one word in common
        self.assertAlmostEqual(hits[0]["score"] - hits[1]["score"], recall.RECENCY_TIE * (1 - 2 ** -3), places=2)
        # A stale memory that answers beats a fresh one that does not: at most 0.06 is recency's and strength's.
        self.assertGreater(hits[1]["relevance"] - hits[2]["relevance"], recall.RECENCY_TIE + recall.STRENGTH_TIE)

    def test_strength_counts_up_to_two(self):
        ids = put(self.db, [episode("a", "redis timeout in worker", "redis timeout in worker"),
                            episode("b", "redis timeout in server", "redis timeout in server")])
        with self.db.transaction():
            raw_db(self.db).execute("UPDATE episodes SET strength = 5 WHERE id = ?", (ids["b"],))
        a, b = sorted(recall.search(self.db, "redis timeout", now=NOW), key=lambda h: h["id"])
        self.assertEqual(a["relevance"], b["relevance"])
        self.assertAlmostEqual(b["score"] - a["score"], recall.STRENGTH_TIE * (2 - 1) / 2, places=3)

    def test_identical_memories_appear_once(self):
        ids = put_apart(self.db, [episode(f"copy{i}", "deploy to staging", "deploy to staging with make release",
                                          kind="session", at=f"2026-10-0{i + 1}T10:00:00Z") for i in range(3)])
        hits = recall.search(self.db, "deploy staging", k=5, now=NOW)
        self.assertEqual([h["id"] for h in hits], [ids["copy2"]])     # three copies of a session: the newest, once

    def _age(self, at):
        return (clock.parse_time(NOW) - clock.parse_time(at)).total_seconds() / 86400


class TouchingAndArchive(TempHome):
    def setUp(self):
        super().setUp()
        self.db = store.connect()
        self.addCleanup(self.db.close)
        put(self.db, [episode("x", "unrelated", "nothing in common here")], session="elsewhere")
        self.ids = put(self.db, [episode(f"e{i}", f"`terraform apply` failed {i}", f"state lock held by ci {i}")
                                 for i in range(4)])

    def row(self, key):
        return self.db.episode(self.ids[key])

    def test_returned_episodes_are_strengthened_others_untouched(self):
        hits = recall.recall(self.db, "terraform state lock", k=2, now=NOW)
        returned = {h["id"] for h in hits}
        self.assertEqual(len(returned), 2)
        for key, eid in self.ids.items():
            e = self.row(key)
            if eid in returned:
                self.assertEqual((e["strength"], e["recalls"], e["last_touched"]), (1.1, 1, NOW))
            else:
                self.assertEqual((e["strength"], e["recalls"]), (1.0, 0))
        recall.recall(self.db, "terraform state lock", k=2, now=NOW, touch=False)
        self.assertEqual(sum(self.db.episode(i)["recalls"] for i in returned), 2)

    def test_archived_sink_out_of_sight_and_come_back_when_recalled(self):
        with self.db.transaction():
            raw_db(self.db).execute("UPDATE episodes SET archived = 1 WHERE key IN ('e0', 'e1', 'e2', 'e3')")
        self.assertEqual(recall.recall(self.db, "terraform state lock", now=NOW), [])
        hits = recall.recall(self.db, "terraform state lock", k=2, now=NOW, include_archived=True)
        self.assertEqual([h["archived"] for h in hits], [True, True])
        revived = {h["id"] for h in hits}
        self.assertEqual({h["id"] for h in recall.recall(self.db, "terraform state lock", now=NOW)}, revived)

    def test_lessons_are_found_never_touched_and_vetoed_ones_never_shown(self):
        keep = add_lesson(self.db, "Never force-unlock terraform state while CI holds the lock")
        veto = add_lesson(self.db, "Terraform state lock: always force-unlock")
        with self.db.transaction():
            raw_db(self.db).execute("UPDATE lessons SET vetoed = 1 WHERE id = ?", (veto,))
        hits = recall.recall(self.db, "terraform force-unlock", k=10, now=NOW, include_archived=True)
        lessons = [h for h in hits if h["kind"] == "lesson"]
        self.assertEqual([h["id"] for h in lessons], [keep])
        self.assertEqual(raw_db(self.db).execute("SELECT strength FROM lessons WHERE id = ?", (keep,)).fetchone()[0], 1.0)
        # a faded lesson a recall shows stays faded: what the agent looks up puts no rule back (README)
        with self.db.transaction():
            raw_db(self.db).execute("UPDATE lessons SET archived = 1 WHERE id = ?", (keep,))
        hits = recall.recall(self.db, "terraform force-unlock", k=10, now=NOW, include_archived=True)
        self.assertIn(keep, [h["id"] for h in hits if h["kind"] == "lesson"])
        self.assertEqual(raw_db(self.db).execute("SELECT archived FROM lessons WHERE id = ?", (keep,)).fetchone()[0], 1)


class Relevance(TempHome):
    """Relevance is comparable across queries: a weak best match reads weak."""

    def test_a_full_match_reads_strong_and_a_weak_best_match_reads_weak(self):
        with store.connect() as db:
            put_apart(db, [episode(f"n{i}", f"`npm run build` failed: step {i}", f"webpack compiled step {i}")
                           for i in range(8)] + [
                episode("pg", "`pytest -q` failed: could not connect to server", "psycopg2.OperationalError: "
                        "could not connect to server: Connection refused on port 5432")])
            strong = recall.search(db, "psycopg2 could not connect port 5432", k=1, now=NOW)[0]
            self.assertGreaterEqual(strong["relevance"], 0.9)
            weak = recall.search(db, "kubernetes helm chart webpack rollout", k=3, now=NOW, feedback=False)
            self.assertTrue(weak)
            self.assertLess(max(h["relevance"] for h in weak), 0.3)  # one word of five
            self.assertEqual(recall.search(db, "kubernetes helm chart rollout", now=NOW), [])

    def test_the_cli_score_of_a_weak_match_is_low(self):
        t = test_session(cwd="/home/dev/shop")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        strong = json.loads(self.ok("recall", "unittest ImportError", "--json").stdout)[0]
        weak = json.loads(self.ok("recall", "unittest kubernetes helm rollout", "--json").stdout)[0]
        self.assertGreater(strong["relevance"], 0.9)
        self.assertLess(weak["relevance"], 0.3)
        self.assertLess(weak["score"], strong["score"] - 0.3)


class ThePerson(TempHome):
    """Memory calls the person whose history it is "person"; questions call them "the user"."""

    def test_a_question_about_the_user_finds_the_persons_words(self):
        with store.connect() as db:
            ids = put_apart(db, [
                episode("said", "Correction: keep the retry budget at three", "After the agent ran `make deploy`, "
                        "the person said: \"keep the retry budget at three, not five\"", kind="correction"),
                episode("ran", "`make deploy` failed: retry budget exhausted", "retry budget exhausted after five "
                        "attempts, deploy aborted")])
            hits = recall.search(db, "what did the user say about the retry budget", k=2, now=NOW)
            self.assertEqual([h["id"] for h in hits], [ids["said"], ids["ran"]])   # before: the failure first


HARNESS_IGNORED = ("Exit code 1\nThe following paths are ignored by one of your .gitignore files:\n.entire\n"
                   "hint: Use -f if you really want to add them.")


class WhoseWords(TempHome):
    """A question about what the person said, wanted or objected to is answered by the person's own
    words: a hit that shows them comes before one of comparable relevance that shows none."""

    def harness_session(self, cwd=PROJECT):
        t = Transcript(cwd=cwd)
        t.user("set up a fresh repo for the manual strategy")
        t.assistant("Setting it up.", tools=[
            ("Bash", {"command": "./test-harness.sh setup-repo"}, HARNESS_IGNORED, True)])
        t.assistant("Git refuses ignored paths, so I'll stop adding that folder.", tools=[
            ("Edit", {"file_path": f"{cwd}/test-harness.sh", "old_string": "git add .entire",
                      "new_string": "# .entire is ignored"}, "The file has been updated.", False)])
        t.user("no, we don't gitignore the whole entire folder, settings.json should be committed")
        t.assistant("You're right, only the metadata folder is ignored. Committing settings.json again.")
        t.write(project_folder(self.claude, t.cwd))

    def test_the_persons_objection_comes_before_a_failure_that_names_the_question_words(self):
        self.harness_session()
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "What did the user object to about ignoring .entire in the test harness?",
                                  "--json").stdout)
        self.assertIn("settings.json should be committed", hits[0]["text"])   # before: the failure first
        self.assertIn("error", [h["kind"] for h in hits])                       # still shown, after it
        plain = json.loads(self.ok("recall", "ignoring .entire in the test harness", "--json").stdout)
        # without that ask, the order is relevance's, as before: what the agent did (the edit that stopped
        # adding the folder, an `edit` passage since recall41, then the failure) before the person's words
        self.assertEqual([h["kind"] for h in plain[:2]], ["edit", "error"])

    def test_what_asks_for_the_persons_words(self):
        for query in ("what did the user say about the retry budget", "Why did the user reject the first test?",
                      "How did the user want the error handling structured?", "what did the person object to",
                      "the user's objection to the schema", "Why didn't the user want a personal token?",
                      # asked by another person of other sessions (public3)
                      "What was the user's argument against keeping file IPNS keys deterministic for recovery?",
                      "What rule did the user state about the FullSchema baseline migration?",
                      "What did the user explicitly not want done when fixing the staging migration failure?",
                      "How did the user originally picture recording sharing access in the IPNS metadata?",
                      "Did the user allow bypassing the pre-commit hook for the isPhantomFile commit?"):
            self.assertTrue(recall.asks_said(query), query)
        for query in ("What did Caroline say about the adoption agency?", "files the user already dismissed",
                      "What should the notice help the user do?", "how do I add a user to the database",
                      "which user owns the cron job", "where is the user object created?",
                      "what did the user push to main?", "Where does the user state get saved?"):
            self.assertFalse(recall.asks_said(query), query)

    def test_a_speaker_named_by_no_memory_is_the_person(self):
        # public12 (session 47): "What did Shane say about pushing and opening PRs without being asked?"
        # said nothing relevant: the person's sessions never write their own name, so "Shane" was a thing
        # the question named that no memory held
        self.harness_session()
        self.ok("ingest")
        query = "What did Shane object to about ignoring .entire in the test harness?"
        hits = json.loads(self.ok("recall", query, "--json").stdout)
        self.assertIn("settings.json should be committed", hits[0]["text"])   # before: the edit first
        with store.connect() as db:
            self.assertEqual(recall.speaker_as_person(db, query),
                             "What did the user object to about ignoring .entire in the test harness?")
            # a speaker some memory names stays as asked (a dialog stored with `remember`), and an agent is
            # never the person
            db.add_note("Shane asked to keep the harness folder tracked", cwd=PROJECT)
            self.assertEqual(recall.speaker_as_person(db, query), query)
            self.assertEqual(recall.speaker_as_person(db, "what did Claude say about it?"), "what did Claude say about it?")
        # public12's "What did Shane say about pushing and opening PRs without being asked?" said nothing
        # relevant, the absent name weighing as a thing memory never held (its answer second)

    def test_a_speaker_named_by_the_home_folder_the_sessions_ran_under_is_the_person(self):
        # public19 (session 53): "… what did Shahe say he actually wanted changed?", asked of Shahe's own
        # sessions under /Users/shahe, whose paths and URLs hold the name: read as a thing some memory holds,
        # the name drew the memories that hold it (its answer second; first when read as the person)
        self.harness_session(cwd="/Users/shanek/shop")
        self.ok("ingest")
        query = "What did Shane object to about ignoring .entire in the test harness?"
        with store.connect() as db:
            db.add_note("the deploy logs are at https://vercel.com/shane-1851s-projects/shop/logs",
                        cwd="/Users/shanek/shop")
            self.assertTrue(db.indexed_count(recall.match_expression(["shane"]), 1))    # the name is held
            self.assertEqual(recall.speaker_as_person(db, query),
                             "What did the user object to about ignoring .entire in the test harness?")
            # another name some memory holds stays as asked (someone the person spoke of)
            db.add_note("Kim reviewed the harness", cwd="/Users/shanek/shop")
            self.assertEqual(recall.speaker_as_person(db, "What did Kim object to?"), "What did Kim object to?")
        hits = json.loads(self.ok("recall", query, "--json").stdout)
        self.assertIn("settings.json should be committed", hits[0]["text"])

    def test_a_speaker_named_by_one_of_several_accounts_stays_as_asked(self):
        # a memory of several people's sessions (a team's: /home/dev and /Users/shanek): the name says whose
        self.harness_session()
        self.harness_session(cwd="/Users/shanek/shop")
        self.ok("ingest")
        with store.connect() as db:
            db.add_note("the deploy logs are at https://vercel.com/shane-1851s-projects/shop/logs",
                        cwd="/Users/shanek/shop")
            query = "What did Shane object to about ignoring .entire in the test harness?"
            self.assertEqual(recall.speaker_as_person(db, query), query)


class WhyAsked(TempHome):
    """A question asking why is answered where the cause was found: a hit that states a cause comes
    before one of comparable relevance that restates the symptom in more of the question's words."""

    def state_session(self):
        t = Transcript(cwd=PROJECT)
        t.user("the status output looks stale, can you check what is going on?")
        t.assistant("So last_interaction_at never shows up in the session state JSON, though InitializeSession "
                    "sets it on every prompt and the state is saved right after it. Let me read the files one by one.")
        t.user("ok, go on")
        t.assistant("Found the bug: the session state goes through stateFromStrategy before its JSON is "
                    "written, and that conversion drops last_interaction_at, so it never shows up.")
        t.user("thanks, leave it for now")
        t.assistant("Leaving it as it is.")
        t.write(project_folder(self.claude, t.cwd))

    def test_the_hit_that_states_the_cause_comes_before_the_symptom_restated(self):
        self.state_session()
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "Why does last_interaction_at never show up in the session state JSON?",
                                  "--json").stdout)
        self.assertIn("conversion drops", hits[0]["text"])     # before: the symptom restated first
        self.assertTrue(any("saved right after it" in h["text"] for h in hits[1:]))   # still shown, after it
        plain = json.loads(self.ok("recall", "last_interaction_at in the session state JSON", "--json").stdout)
        self.assertIn("saved right after it", plain[0]["text"])   # without that ask, the order is relevance's

    def sandbox_session(self):
        t = Transcript(cwd=PROJECT)
        t.user("run the end to end check in the sandbox again")
        t.assistant("The PR creation test passed, but the sandboxed agent said WORK_RESULT success: false, so the "
                    "test checks the ticket status and not what the agent did.")
        t.user("analyze its output and propose a fix")
        t.assistant("Here's the analysis of the PR creation test: the sandboxed agent did nothing useful. Two root "
                    "causes: 1. The prompt doesn't "
                    "embed the task context: the orchestrator passes the ticket id and title, but the prompt only "
                    "uses the merge instructions. 2. The worker never receives the branch name.")
        t.user("fix both")
        t.assistant("Both fixed, the prompt now carries the ticket.")
        t.write(project_folder(self.claude, t.cwd))

    def test_two_root_causes_state_a_cause(self):
        # public4 q70: the answer said "Two root causes:", which `root cause` alone did not match, and
        # stayed 7th behind its session's passages that restate the symptom (recall43)
        self.sandbox_session()
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "The PR creation test passed but WORK_RESULT said success: false. Why "
                                  "did the sandboxed agent do nothing useful?", "--json").stdout)
        self.assertIn("doesn't embed the task context", hits[0]["text"])    # before: the symptom restated first
        self.assertTrue(any("checks the ticket status" in h["text"] for h in hits[1:]))

    def test_what_asks_why(self):
        for query in ("Why did the push fail?", "What was the root cause of the corrupted index?",
                      "What made Session B hit SessionIDConflictError?", "what was wrong with the retry loop",
                      "The TS compile failed on the sandbox test. What was the cause?",
                      "Uploads returned 500 in local dev. What was actually the problem?",
                      "Uploads returned 500 with nothing in the API logs. What was actually wrong?"):
            self.assertTrue(recall.asks_why(query), query)
        for query in ("How did we fix the push?", "Which flag lists only the changed files?",
                      "What did the user say about the cache?"):
            self.assertFalse(recall.asks_why(query), query)

    def test_what_states_a_cause(self):
        for text in ("agent: Found the bug: the conversion drops it.", "The root cause is a stale index.",
                     "It failed because the token expired.", "That's why the hook never ran.",
                     "Turns out the remote is HTTPS.", "Two root causes: 1. The prompt doesn't embed the task.",
                     "There's the answer. Out of 3455 delta events, 3049 are thinking_delta.",
                     "I see what's happening. The agent writes the file as JSON.",
                     "I can see the bug clearly. The catch block keeps the placeholder.",
                     # a fix summed up under labels of its own (public15 q39, session 50)
                     "agent: The fix works.\n1. **Problem**: All PHP versions were configured to use port 9000",
                     "**Root Cause:** the env var is read before dotenv loads", "- Solution: pass `--yes`"):
            self.assertTrue(recall.STATES_CAUSE.search(text), text)
        for text in ("agent: Let me read the state files.", "Fixed: the test passes now.",
                     "I see the tests pass now.", "Here's what I changed.", "We need a fix: soon, please.",
                     "**Solution**:\n"):
            self.assertFalse(recall.STATES_CAUSE.search(text), text)


TSC = ("Exit code 2\ntests/daytona_sandbox.test.ts(22,27): error TS2322: Type 'boolean' is not assignable to type "
       "'void | Promise<void>'.")


NO_UPSTREAM = ("Exit code 128\nfatal: The current branch review-page has no upstream branch.\n"
               "To push the current branch and set the remote as upstream, use\n\n"
               "    git push --set-upstream origin review-page\n")


class AfterAFailure(TempHome):
    """A question that quotes a failure and asks its cause or its fix is answered by what someone found
    or did after it: the failure's own record, which holds the most of the question's words, comes after
    the hit that says it, and keeps its place when the question asks what failed."""

    def tsc_session(self):
        t = Transcript(cwd=PROJECT)
        t.user("move the daytona checks over to vitest")
        t.assistant("Moved. Compiling.", tools=[("Bash", {"command": "npx tsc"}, TSC, True)])
        t.assistant("The cause is that the sandbox test's onData callback was an arrow function returning the "
                    "result of process.stdout.write(data), a boolean, where the type wants void. Wrapped the body in "
                    "braces so it returns nothing; the compile passes.",
                    tools=[("Bash", {"command": "npx tsc"}, "", False)])
        t.user("thanks, commit it")
        t.assistant("Committed.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")

    def test_the_cause_comes_before_the_failure_that_the_question_quotes(self):
        self.tsc_session()
        for question in ("Why did the sandbox test fail to compile?",
                         "The sandbox test failed to compile. How did we fix it?"):
            hits = json.loads(self.ok("recall", question, "--json").stdout)
            kinds = [h["kind"] for h in hits]
            said = next(i for i, h in enumerate(hits) if "returning the result of process.stdout.write" in h["text"])
            self.assertIn("error", kinds, question)                         # still shown,
            self.assertLess(said, kinds.index("error"), (question, kinds))  # after the cause (before: first)
        asked = json.loads(self.ok("recall", "What did tsc report for the sandbox test: Type boolean is not "
                                             "assignable to type void?", "--json").stdout)
        self.assertEqual(asked[0]["kind"], "error")         # what failed: the failure's record keeps its place

    def test_a_failure_that_shows_what_made_it_work_keeps_its_place(self):
        # The README's example: "how did we fix the no upstream branch push error" is answered by the
        # failure's own record, which says what made it work ("Worked after `git push
        # --set-upstream …`"); ordered after the hits 0.3 less relevant, it had left the first two
        # for the session and an unrelated "Force pushed the rebased branch" exchange.
        t = Transcript(cwd=PROJECT)
        t.user("commit the review page and push it")
        t.assistant("Pushing.", tools=[("Bash", {"command": "git push"}, NO_UPSTREAM, True)])
        t.assistant("No upstream yet; setting it.", tools=[
            ("Bash", {"command": "git push --set-upstream origin review-page"}, "branch 'review-page' set up", False)])
        t.assistant("Pushed. The review page is on origin/review-page.")
        t.user("thanks")
        t.assistant("You're welcome.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "how did we fix the no upstream branch push error", "--json").stdout)
        self.assertEqual(hits[0]["kind"], "error", [h["kind"] for h in hits])
        self.assertIn("git push --set-upstream origin review-page", hits[0]["text"])

    def test_an_output_that_says_worked_after_a_command_is_no_fix_shown(self):
        # red42: "Worked after `…`" is what episodes write when a later call the agent ran made it work;
        # a failing call's own output that holds those words (a build log, a page) said nothing of the kind
        # and kept the failure's record first for "how did we fix it", the command it names beside it.
        t = Transcript(cwd=PROJECT)
        t.user("move the daytona checks over to vitest")
        t.assistant("Moved. Compiling.", tools=[("Bash", {"command": "npx tsc"},
                                                 TSC + " Worked after `npm ci --force`", True)])
        t.assistant("The cause is that the sandbox test's onData callback was an arrow function returning the "
                    "result of process.stdout.write(data), a boolean, where the type wants void. Wrapped the body in "
                    "braces so it returns nothing; the compile passes.")
        t.user("thanks, commit it")
        t.assistant("Committed.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "The sandbox test failed to compile. How did we fix it?", "--json").stdout)
        kinds = [h["kind"] for h in hits]
        said = next(i for i, h in enumerate(hits) if "returning the result of process.stdout.write" in h["text"])
        self.assertIn("error", kinds)
        self.assertLess(said, kinds.index("error"), kinds)

    SSR = ("ERROR ReferenceError: localStorage is not defined\n"
           "    at _ProjectsComponent.loadViewMode (src/app/pages/projects/projects.ts:68:19)\n"
           "    at new _ProjectsComponent (src/app/pages/projects/projects.ts:55:10)")

    def test_the_persons_report_of_a_failure_comes_after_the_fix(self):
        # public7 q66: the session's request ("Asked: ERROR ReferenceError: …") and the correction that
        # pasted the error the question quotes held more of its words than the exchange where the
        # agent found the cause and fixed it (8th, behind them and the person's pasted lines). recall45.
        t = Transcript(cwd=PROJECT)
        t.user(self.SSR)
        t.assistant("Adding a grid and list toggle, kept in localStorage.", tools=[
            ("Edit", {"file_path": "/home/dev/shop/src/app/pages/projects/projects.ts",
                      "old_string": "viewMode = 'grid';", "new_string": "viewMode = this.loadViewMode();"},
             "The file has been updated.", False)])
        t.user(self.SSR)
        t.assistant("I see the issue - `localStorage` isn't available in server-side rendering. I need to add "
                    "a browser check before accessing it.")
        t.user("great, it loads now")
        t.assistant("Good.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "How did we fix `ReferenceError: localStorage is not defined` in "
                                            "ProjectsComponent.loadViewMode?", "--json").stdout)
        kinds = [h["kind"] for h in hits]
        self.assertIn("I see the issue", hits[0]["text"], kinds)    # before: the request first
        self.assertIn("session", kinds)                             # still shown

    def test_a_question_about_the_persons_words_keeps_its_corrections_in_place(self):
        # "Why did the user refuse …" asks why and for the person's words: the correction is its answer,
        # and keeps its place above an exchange a little less relevant; the session's request does not.
        def hits():
            return [{"source": "episode", "kind": "correction", "id": 1, "score": 0.75, "relevance": 0.75,
                     "at": NOW, "gist": "The person refused to let the agent run `git push --force`: never force push "
                             "review-page", "title": "Correction: never force push review-page"},
                    {"source": "passage", "kind": "exchange", "id": 2, "score": 0.6, "relevance": 0.6,
                     "gist": "agent: Pushed the rebase to review-page-2 instead.", "title": "", "at": NOW},
                    {"source": "episode", "kind": "session", "id": 3, "score": 0.7, "relevance": 0.7,
                     "gist": "Asked: rebase the review branch and push it.", "title": "", "at": NOW}]
        said = [h["id"] for h in recall.failures_later(hits(), None, asks_said=True)]
        self.assertEqual(said, [1, 2, 3])
        other = [h["id"] for h in recall.failures_later(hits(), None)]
        self.assertEqual(other, [2, 1, 3])

    def test_a_failure_the_question_names_but_does_not_quote_keeps_its_place(self):
        # public25 q03 (session 59): "Why did the first plain `claude mcp add figma` attempt fail?" names
        # the call, and its record's error line is the answer; ordered after the exchanges that repeat the
        # command, the most relevant hit came 14th. A question quoting what it printed still has it after
        # what came after it (test_the_cause_comes_before_the_failure_that_the_question_quotes).
        t = Transcript(cwd=PROJECT)
        t.user("claude mcp add figma")
        t.assistant("Adding the Figma MCP server.", tools=[
            ("Bash", {"command": "claude mcp add figma 2>&1"},
             "Exit code 1\nerror: missing required argument 'commandOrUrl'", True)])
        t.assistant("The command needs a URL for the server: the Figma MCP server is added over HTTP with its address.")
        t.user("claude plugin install figma")
        t.assistant("That is no claude command; the MCP server is the way to add Figma.")
        t.user("thanks")
        t.assistant("You're welcome.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "Why did the first plain `claude mcp add figma` attempt fail?",
                                  "--json").stdout)
        self.assertEqual(hits[0]["kind"], "error", [h["kind"] for h in hits])
        self.assertIn("missing required argument 'commandOrUrl'", hits[0]["text"])

    def test_what_asks_after_a_failure(self):
        for query in ("Why did the push fail?", "The API crashed with 'No module named events_py'. How did we fix it?",
                      "git push was rejected. How did we get it pushed?", "What was the fix for the flaky test?",
                      "How was the lint error handled?", "what fixed the broken build"):
            self.assertTrue(recall.asks_after_failure(query), query)
        for query in ("npm unpublish failed with EUSAGE. What did npm say?", "Which flag lists only the changed files?",
                      "How do we run the integration test?", "What did the user say about the cache?"):
            self.assertFalse(recall.asks_after_failure(query), query)


class AskedForACommand(TempHome):
    """A question asking which command was run is answered by the command the agent ran: commands come
    first among hits of comparable relevance, not after them (recall.asks_command); a question that
    asks something else keeps them after the exchanges about the same thing."""

    def notifier_session(self):
        t = Transcript(cwd=PROJECT)
        t.user("clicking the notification does not take me back to the terminal on this Mac")
        t.assistant("The default notifier cannot activate a window when clicked. Installing a notifier tool that "
                    "supports click-to-activate.", tools=[
                        ("Bash", {"command": "brew install terminal-notifier",
                                  "description": "Install the notifier tool that supports click-to-activate"},
                         "==> Pouring terminal-notifier--2.0.0.arm64_sonoma.bottle.tar.gz", False)])
        t.assistant("Installed. Clicking the notification now takes you back to the terminal.")
        t.user("it works")
        t.assistant("Good.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")

    def test_a_question_asking_for_a_command_shows_the_command_first(self):
        # public21 q05 (session 59): "Which command installed the notifier tool that supports click-to-activate
        # on this Mac?" had the `brew install terminal-notifier` it ran 13th, behind the agent's words about it
        self.notifier_session()
        hits = json.loads(self.ok("recall", "Which command installed the notifier tool that supports "
                                            "click-to-activate on this Mac?", "--json").stdout)
        self.assertIn("brew install terminal-notifier", hits[0]["text"], [h["kind"] for h in hits])
        asked = json.loads(self.ok("recall", "Why did we install a notifier tool that supports click-to-activate "
                                             "on this Mac?", "--json").stdout)
        self.assertNotEqual(asked[0]["kind"], "command", [h["kind"] for h in asked])

    def test_what_asks_for_a_command(self):
        for query in ("Which command installed the notifier?", "Which chezmoi command did we use to list managed files?",
                      "What's the command line to start LiteLLM by hand?", "What did we run to get Node 20?",
                      "What npm command did we use to go back to Hardhat 2?", "Quelle commande génère le rapport ?",
                      "¿Con qué comando levantamos el servidor?", "Qual comando da AWS CLI usamos?",
                      "Какой командой мы активировали агента?", "서비스 재시작은 어떤 명령으로 했었지?",
                      "启动实验的命令是什么？", "wingetで入れるコマンドは?", "gõ lệnh reload gì?"):
            self.assertTrue(recall.asks_command(query), query)
        for query in ("How did we install Docker on the Windows machine?", "Why did the push fail?",
                      "What did the user say about the command palette?", "Which file did we edit?"):
            self.assertFalse(recall.asks_command(query), query)


LINT = ("Exit code 1\n[fmt] $ gofmt -w .\n\n[lint] $ golangci-lint run ./...\n"
        "internal/store/users_test.go:88:14: os/exec.Command must not be called. use os/exec.CommandContext (noctx)\n"
        "\tcmd := exec.Command(\"git\", \"init\", dir)\n\t              ^\n1 issues:\n* noctx: 1\n[lint] ERROR task failed")


class PastedAgain(TempHome):
    """A log the person pasted again and again in one session, a line number or an id changed each time,
    is one thing: shown once, so the passage that explains it is not pushed out of the top five."""

    WARNING = ("Warning: Encountered two children with the same key, `skills/review/SKILL.md`. Keys should be "
               "unique so that components maintain their identity across updates. Non-unique keys may cause "
               "children to be duplicated and/or omitted — the behavior is unsupported.\n"
               "at div\nat ContextTree (http://localhost:3000/chunk-36jrqfj4.js:{line}:13)\nat App")

    def test_a_warning_pasted_five_times_is_shown_once_beside_its_explanation(self):
        t = Transcript(cwd=PROJECT)
        t.user("the context panel shows the skills twice, can you look?")
        t.assistant("Let me read more of the tree code.")
        for line in (30815, 30816, 30817, 30818, 30819):
            t.user(self.WARNING.format(line=line))
            t.assistant("Let me read more of the tree code.")
        t.assistant("The problem is that skill files appear in both `contextFiles` and the `skills` array, so each "
                    "SKILL.md path is added twice. I'll deduplicate them when the tree is built.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "Why did the context tree log `Encountered two children with the same "
                                            "key` for SKILL.md paths?", "--json").stdout)
        texts = [h["text"] for h in hits]
        self.assertTrue(any("skill files appear in both" in t for t in texts), texts)
        pasted = [t for t in texts if "Encountered two children" in t and "skill files appear in both" not in t]
        self.assertEqual(len(pasted), 1, texts)     # the warning alone, once


class ManyEdits(TempHome):
    """A session's edits of one file share the question's names more than the reply that answers it:
    the best of them is shown, the others come after the other hits."""

    def test_the_edits_of_a_session_take_one_place_of_the_five(self):
        t = Transcript(cwd=PROJECT)
        t.user("add a test-writer step to the pipeline; which stages should the test writer follow?")
        t.assistant("I'll wire the test-writer step into the pipeline stages.", tools=[
            ("Edit", {"file_path": f"{PROJECT}/src/pipeline/stages.ts",
                      "old_string": f"const stage{n} = 'old'",
                      "new_string": f"// pipeline stage {n}: run the test-writer step after this stage\n"
                                    f"const stage{n} = withTestWriter('stage {n}', runTestWriterStep)"},
             "The file was updated.", False) for n in range(1, 8)])
        t.assistant("Done: the step now follows Implement + Oneshot + Validate, and nothing else.")
        t.user("and the docs?")
        t.assistant("The docs page for the pipeline lists the new step and the stages it runs after.")
        t.user("write the changelog entry for the test writer too")
        t.assistant("Added the changelog entry for the test-writer step.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "After which pipeline stages does the test-writer step run?",
                                  "--json").stdout)
        kinds = [h["kind"] for h in hits]
        self.assertEqual(kinds.count("edit"), 1, kinds)
        self.assertTrue(any("Implement + Oneshot + Validate" in h["text"] for h in hits), [h["text"] for h in hits])


class ManySummaries(TempHome):
    """A compaction summary restates a whole session in one dense text, cut into several passages that
    each hold the session's words: three of them are shown in their places, the others after the other
    hits, so the exchange where the answer was said is not pushed out of the top five."""

    PARTS = ("1. Primary request: refactor the queue processor into a class; the sandbox test moves to vitest "
             "and must compile with npx tsc before the refactor is committed.",
             "2. Key concepts: SandboxQueueProcessor, private methods for loading and parsing the queue, the "
             "sandbox test run under vitest, a compile check after each step of the refactor.",
             "3. Files: src/index.ts (the queue processor, now a class), tests/daytona_sandbox.test.ts (the "
             "sandbox test, its compile fixed), package.json (test scripts for the refactor).",
             "4. Errors and fixes: the sandbox test did not compile after the refactor; fixed in the test "
             "file, then npx tsc passed and the queue processor tests ran green.",
             "5. Problem solving: JSON parsing of the queue output was made robust in the refactor, the "
             "sandbox test checks it, and the compile runs before every commit.",
             "6. Pending: run the sandbox test against a live queue after the refactor, compile the docs "
             "site, and clean up the old processor script.")
    def test_a_long_summary_takes_three_places_of_the_five(self):
        t = Transcript(cwd=PROJECT)
        t.user("refactor the queue processor into a class and move the daytona checks over to vitest")
        t.assistant("The onData callback returned the boolean from process.stdout.write; wrapped its body in "
                    "braces, so the sandbox test compiles.")
        t.user("ok")
        t.assistant("Moving on to the retries.")
        t.raw({"type": "user", "uuid": "cs", "isCompactSummary": True, "timestamp": "2026-11-02T10:00:00.000Z",
               "sessionId": t.session_id, "cwd": t.cwd, "message": {"role": "user", "content":
               "This session is being continued from a previous conversation. Summary:\n"
               + "\n\n".join(p * 3 for p in self.PARTS)}})
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "Why did the sandbox test fail to compile in the queue processor "
                                            "refactor?", "--json").stdout)
        kinds = [h["kind"] for h in hits]
        self.assertEqual(kinds[:5].count("summary"), 3, kinds)
        self.assertTrue(any("process.stdout.write" in h["text"] for h in hits[:5]), kinds)   # before: five summaries
        # the summary's third passage names the test file whose compile failed: with two places it went
        # behind every other hit (public19 q18, session 53: the cause, "broken PowerShell commands", in a
        # session's third summary passage, fifth by relevance, 133rd)
        self.assertTrue(any("tests/daytona_sandbox.test.ts" in h["text"] for h in hits[:5]), kinds)


class LintFindings(TempHome):
    """A linter's finding is what a failed `mise run lint` is remembered by, not the task runner's
    last line: a pasted finding finds the failure and shows it, in a database stored before too."""

    def lint_session(self):
        t = Transcript(cwd=PROJECT)
        t.user("add a test for the store's git init")
        t.assistant("Running the linter.", tools=[("Bash", {"command": "mise run lint"}, LINT, True)])
        t.assistant("Using CommandContext.", tools=[
            ("Edit", {"file_path": f"{PROJECT}/internal/store/users_test.go", "old_string": "exec.Command(",
                      "new_string": "exec.CommandContext(ctx, "}, "The file has been updated.", False)])
        t.assistant("Lint passes.", tools=[("Bash", {"command": "mise run lint"}, "0 issues.", False)])
        t.write(project_folder(self.claude, t.cwd))

    def failure(self, query):
        hits = json.loads(self.ok("recall", query, "--json").stdout)
        return next((h for h in hits if h["kind"] == "error"), None)

    def test_a_pasted_finding_finds_the_failure_that_names_it(self):
        self.lint_session()
        self.ok("ingest")
        hit = self.failure("os/exec.Command must not be called in users_test.go: which linter?")
        self.assertIsNotNone(hit)
        self.assertIn("(noctx)", hit["title"])           # before: "`mise run lint` failed: [lint] ERROR task failed"
        self.assertNotIn("ERROR task failed", hit["title"])

    def test_a_database_stored_before_reads_its_transcripts_again(self):
        self.lint_session()
        self.ok("ingest")
        with store.connect() as db:     # as the version before m016 stored the failure
            raw_db(db).execute("UPDATE episodes SET title = '`mise run lint` failed: [lint] ERROR task failed', "
                               "gist = '`mise run lint` failed: Exit code 1 / [lint] ERROR task failed' "
                               "WHERE kind = 'error'")
            before = [m.__name__ for m in migrations.MIGRATIONS].index("m016_findings_read_again")
            raw_db(db).execute(f"PRAGMA user_version = {before}")
            raw_db(db).commit()
        with store.connect() as db:
            self.assertEqual(raw_db(db).execute("PRAGMA user_version").fetchone()[0], len(migrations.MIGRATIONS))
        self.assertIn("read 1 of 1 transcript", self.ok("ingest").stdout)
        with store.connect() as db:
            titles = [t for t, in raw_db(db).execute("SELECT title FROM episodes WHERE kind = 'error'")]
        self.assertEqual(len(titles), 1)
        self.assertIn("(noctx)", titles[0])


class TheFileMeant(TempHome):
    """A path not found whose file a later call used is shown as the file meant and the call that
    used it, not "fixed by: .golangci.yaml" (no command of that name ran; lessons34)."""

    def test_shown_as_the_file_meant_and_the_call_that_used_it(self):
        t = Transcript(cwd=PROJECT)
        t.user("which linters are on?")
        t.assistant(None, tools=[("Grep", {"pattern": "gosec", "path": ".golangci.yml"},
                                  "<tool_use_error>Path does not exist: .golangci.yml</tool_use_error>", True)])
        t.assistant(None, tools=[("Read", {"file_path": f"{PROJECT}/.golangci.yaml"}, "1→version: 2", False)])
        t.assistant("gosec is on.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        with store.connect() as db:
            [error] = db.episodes("error")
        shown = self.ok("show", f"e{error['id']}").stdout
        self.assertIn(f"the file meant: .golangci.yaml (then `Read {PROJECT}/.golangci.yaml` worked)", shown)
        self.assertNotIn("fixed by:", shown)


class WordFamilies(unittest.TestCase):
    """A question's word and a memory's of one family (summaries, summarization) are one word to
    coverage, proximity and the excerpt, as they mostly are to the index's Porter stemmer."""

    def test_the_forms_of_a_word_family_are_one_and_short_words_stay_apart(self):
        families = {w: embed.family(embed.stem(w)) for w in (
            "summary", "summaries", "summarize", "summarizing", "summarization", "validity", "validation",
            "normalize", "normalization", "copy", "cop", "key", "city")}
        self.assertEqual(len({families[w] for w in ("summary", "summaries", "summarize", "summarizing",
                                                     "summarization")}), 1)
        self.assertEqual(families["validity"], families["validation"])
        self.assertEqual(families["normalize"], families["normalization"])
        self.assertNotEqual(families["copy"], families["cop"])
        self.assertEqual((families["key"], families["city"]), ("key", "city"))

    def test_a_memory_holding_another_form_of_the_questions_word_covers_it(self):
        question = "which setting turns on commit summaries"
        weights = recall.query_weights(question, [(3, "setting"), (9, "turns"), (4, "commit"), (2, "summaries")], 40)
        row = {"source": "passage", "id": 1, "title": "",
               "gist": "agent: To turn on auto-summarization at commit time, set this setting: summarize.enabled"}
        self.assertEqual(recall.coverage(weights, row), 1.0)       # before: "summaries" was not held
        self.assertGreater(recall.proximity(weights, row), 0.0)
        long_text = ("The hooks write a checkpoint at every commit. " * 12 + "Auto-summarization writes an AI "
                     "summarization of the session at commit time. " + "Nothing else changes there. " * 12)
        self.assertIn("Auto-summarization", recall.excerpt(long_text, "commit summaries", 200))


class GateCase(TempHome):
    """A store of a few memories put apart in time, and what recall says first of a query: how many
    memories, or "nothing relevant". Absence counts in full however small the store."""

    def memories(self) -> list:
        return []

    @staticmethod
    def builds(output="webpack compiled step {}") -> list:
        """Eight failed builds alike, so that the store is no handful of memories."""
        return [episode(f"f{i}", f"`npm run build` failed: step {i}", output.format(i)) for i in range(8)]

    def setUp(self):
        super().setUp()
        self.db = store.connect()
        self.addCleanup(self.db.close)
        put_apart(self.db, self.memories())
        patcher = mock.patch.object(recall, "ABSENCE_FROM", 1)    # absence counts in full however small the store
        patcher.start()
        self.addCleanup(patcher.stop)

    def said(self, query):
        hits = recall.search(self.db, query, now=NOW)
        return recall.hits_text(query, hits).split("\n", 1)[0], hits

    def nothing_until_noted(self, query, note, shown):
        """query is nothing relevant until a note holds what it names; then that note is found first."""
        head, hits = self.said(query)
        self.assertTrue(head.startswith("Nothing relevant in memory"), head)
        self.db.add_note(note, cwd="/home/dev/shop")
        head, hits = self.said(query)
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertIn(shown, hits[0]["gist"])


class InAnotherLanguage(GateCase):
    """A question written in another language, over history told in English: its function words
    are its stop words, and its words no memory holds say only that it is in another language
    (recall.in_its_language); a thing it names that no memory holds still says nothing relevant."""

    def memories(self) -> list:
        return [
            episode("bcrypt", "`pytest tests/test_auth.py` failed: passlib cannot read the bcrypt version",
                    "AttributeError: module 'bcrypt' has no attribute '__about__'. Worked after pinning "
                    "bcrypt==4.0.1 in requirements.txt: passlib 1.7 reads bcrypt.__about__"),
            episode("hf", "uvicorn failed: Invalid repository ID or local directory specified",
                    "HF_HUB_OFFLINE=1 was set while is_cached() looked in the wrong cache folder"),
        ] + self.builds()

    def test_a_question_in_spanish_polish_or_indonesian_finds_the_failure_it_asks_about(self):
        # public17 (session 51): relevance 0.11 and "nothing relevant" for a question whose answer
        # ranked among the first five; "fallaban", "combinación" and "hicimos" held nowhere. public19
        # (session 53): four Polish questions, their verbs ("planowaliśmy", "wydzielić") held nowhere,
        # told "nothing relevant" at relevance 0.00-0.04
        for query, found in (
                ("Los tests de auth fallaban por la combinación passlib + bcrypt. ¿Qué hicimos con bcrypt?",
                 "passlib cannot read the bcrypt version"),
                ("Al arrancar uvicorn salía 'Invalid repository ID' con HF_HUB_OFFLINE. ¿Cuál era la causa?",
                 "uvicorn failed"),
                ("Dlaczego testy auth nie przechodziły przez passlib i bcrypt? Co zmieniliśmy w bcrypt?",
                 "passlib cannot read the bcrypt version"),
                ("Jaki był powód, że uvicorn zwracał 'Invalid repository ID' z HF_HUB_OFFLINE?", "uvicorn failed"),
                # public21 (session 55): eight of eleven Indonesian questions told "nothing relevant"
                ("Test auth gagal karena passlib dan bcrypt. Apa perbaikannya untuk bcrypt?",
                 "passlib cannot read the bcrypt version"),
                ("Kenapa uvicorn gagal dengan 'Invalid repository ID' padahal HF_HUB_OFFLINE sudah di-set?",
                 "uvicorn failed")):
            head, hits = self.said(query)
            self.assertRegex(head, r"^\d memor(y|ies) for ", query)
            self.assertIn(found, hits[0]["title"])
        self.assertEqual(recall.foreign_stop_words("¿Qué hicimos con bcrypt?"), frozenset({"que", "con"}))

    def test_a_thing_it_names_that_no_memory_holds_is_still_nothing_relevant(self):
        for query in ("¿Qué tarea programada de Windows (schtasks) creamos para limpiar la caché de bun?",
                      "¿Cómo mandamos los logs de la compilación de bcrypt a Loki?",
                      "Jakie zadanie Windows (schtasks) utworzyliśmy, żeby czyścić cache bun co tydzień?",
                      "Jak wysyłaliśmy logi z kompilacji bcrypt do Loki?",
                      "Bagaimana kita mengirim log kompilasi bcrypt ke Loki?"):
            head, _ = self.said(query)
            self.assertTrue(head.startswith("Nothing relevant in memory"), query)

    def test_an_english_question_keeps_every_word(self):
        # "con" and "es" may be names in English ("the es build", "a con file"): two of them are no language
        self.assertEqual(recall.foreign_stop_words("why did the es build of the con module fail with passlib?"),
                         frozenset())
        self.assertEqual(recall.OTHER_STOP_WORDS & embed.STOP_WORDS, set())     # no word counts for both
        self.assertIn("es", recall.query_terms("why did the es build of the con module fail with passlib?"))


class AskedVerb(GateCase):
    """The verb right after a question's subject ("did the user insist on", "when we reworked") is
    how it is asked, not what it is about: held nowhere, it weighs a quarter (recall.asked_verbs);
    the same word anywhere else, or a name after the subject, still says nothing is stored."""

    def memories(self) -> list:
        return [
            episode("uv", "The user said: use uv as the tool for everything python, never pip",
                    "in the ai_in_action project every python command runs through uv", kind="correction"),
            episode("litellm", "Moved LiteLLM to port 4001",
                    "updated litellm_config.yaml with the thinking stripper; we keep the 6-24B model sizes only",
                    kind="note"),
        ] + self.builds()

    def test_the_verb_of_asking_held_nowhere_still_finds_the_answer(self):
        # public17 and public18 (session 53): "insist", "reworked" and "conclude" held nowhere, the
        # answers behind "nothing relevant"
        for query, found in (("What did the user insist on for python?", "use uv as the tool"),
                             ("When we reworked litellm, what did we keep?", "Moved LiteLLM"),
                             ("What did we conclude about python?", "use uv as the tool")):
            head, hits = self.said(query)
            self.assertRegex(head, r"^\d memor(y|ies) for ", query)
            self.assertIn(found, hits[0]["title"])

    def test_a_word_held_nowhere_elsewhere_in_the_question_still_says_nothing(self):
        # the same kind of word as the thing asked about, a name right after the subject, and a name
        # beside the verb of asking (which weighs a quarter: the name alone says nothing is stored)
        for query in ("Which python tool did the user want for the insist queue in the ai_in_action project?",
                      "Which tool did we insist on, celery or uv?",
                      "Which tool did the user insist on for the Sidekiq queue in the ai_in_action project?"):
            head, _ = self.said(query)
            self.assertTrue(head.startswith("Nothing relevant in memory"), query)

    def test_only_the_word_after_the_subject_is_the_verb_of_asking(self):
        counted = [(0, "insist"), (0, "queue"), (3, "tool"), (0, "reworked"), (0, "sidekiq")]
        self.assertEqual(recall.asked_verbs("Which tool did the user insist on for the queue?", counted),
                         frozenset(recall._compared("insist")))
        self.assertEqual(recall.asked_verbs("When we quickly reworked the queue", counted),
                         frozenset(recall._compared("reworked")))
        self.assertEqual(recall.asked_verbs("Did the user Sidekiq it? we sidekiq.yml", counted), frozenset())


class NamedNowhere(GateCase):
    """A thing the query names (a quoted phrase, an identifier) that no memory holds in its words'
    order: nothing relevant, however well its words match apart (recall.named_nowhere)."""

    def memories(self) -> list:
        return [
            episode("wt", "Removed the old worktree", "we prune stale branches with git branch -d after the "
                    "worktree is removed; git lists what is left", kind="note"),
            episode("hooks", "entire: disable the hooks in CI", "ENTIRE_LOCAL_DEV=1 makes the hooks use go run",
                    kind="note"),
            episode("stash", "`entire resume` failed", "you have uncommitted changes. Please commit or stash them "
                    "first; we push the branch afterwards"),
        ] + self.builds()

    def test_a_quoted_phrase_no_memory_holds_in_order_is_nothing_relevant(self):
        head, hits = self.said("how do we run `git worktree prune`")
        self.assertTrue(head.startswith("Nothing relevant in memory"), head)
        self.assertLess(hits[0]["relevance"], recall.NOTHING_RELEVANT)
        head, hits = self.said("why do we run `git branch -d` after the worktree is removed")
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertEqual(hits[0]["title"], "Removed the old worktree")

    def test_a_quoted_phrase_with_a_word_no_memory_holds_is_nothing_relevant(self):
        # public16 u07 (session 51): "How did we fix the gRPC 'deadline exceeded' errors …?" read 0.27
        # relevant, its "exceeded" held by one memory and "deadline" by none
        self.db.add_note("the CI minutes quota was exceeded last week", cwd="/home/dev/shop")
        self.nothing_until_noted("we prune stale branches with git branch -d after the worktree is removed, with "
                                 "'deadline exceeded'", "we prune stale branches with git branch -d after the "
                                 "worktree is removed, or it fails with deadline exceeded", "deadline exceeded")
        # a detail held nowhere that is no word (a hash, a number) leaves the phrase found
        head, hits = self.said("`you have uncommitted changes in 9f3c2e1ab. Please commit or stash them first` on resume")
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertEqual(hits[0]["title"], "`entire resume` failed")

    def test_an_identifier_no_memory_holds_is_nothing_relevant(self):
        head, _ = self.said("what does ENTIRE_DISABLE_HOOKS do in CI")
        self.assertTrue(head.startswith("Nothing relevant in memory"), head)
        head, hits = self.said("what does ENTIRE_LOCAL_DEV do to the hooks")
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertEqual(hits[0]["title"], "entire: disable the hooks in CI")

    def test_an_error_pasted_with_a_word_changed_still_finds_the_line_it_was_stored_as(self):
        head, hits = self.said("`you have uncommitted changes. Please commit or push them first` on resume")
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertEqual(hits[0]["title"], "`entire resume` failed")

    def test_a_long_option_no_memory_holds_is_nothing_relevant(self):
        # flag46: public10 u16, "Did we pass --no-merges when counting commits …?", of sessions that never
        # passed it: five memories of counting commits, the best at relevance 0.60, its "no" and
        # "merges" held apart
        self.nothing_until_noted("did we pass --no-merges when we pushed the branch afterwards?",
                                 "we count commits with git rev-list --no-merges before we push the branch",
                                 "--no-merges")
        self.assertEqual(recall.named("run it with --dry-run, not --verbose"), ["--dry-run"])

    def test_words_joined_by_hyphens_are_one_name(self):
        # public18 (session 52): "How did we pull nixos-hardware into flake.nix …?" was answered with five
        # memories of NixOS and of hardware apart, and "¿Cómo generamos la clave SSH con ssh-keygen …?" (its
        # "keygen" held nowhere, left out as a word of its language) with five of pushing to GitHub
        self.db.add_note("we remove the worktree, then prune stale branches with git branch -d; the hardware "
                         "profile stays as it is", cwd="/home/dev/shop")
        self.nothing_until_noted("did we prune the worktree branches with branch-cleanup after it was removed?",
                                 "we prune the worktree branches with branch-cleanup after it is removed",
                                 "branch-cleanup")
        self.assertEqual(recall.named("¿Cómo generamos la clave con ssh-keygen?"), ["ssh-keygen"])
        # a compound of prose is no name: of function words, or made with an everyday head or tail
        self.assertEqual(recall.named("is the end-to-end, up-to-date, self-hosted, mid-run, git-based one-liner "
                                      "there? pouvez-vous"), [])
        self.db.add_note("we prune stale branches based on their age after the worktree is removed",
                         cwd="/home/dev/shop")
        head, hits = self.said("do we prune stale branches with age-based pruning after the worktree is removed?")
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertIn("based on their age", hits[0]["gist"])

    def test_the_tail_of_a_path_is_no_name(self):
        # public11 (session 47): "The test run shows FAIL for tests/identifierNormalization.test.ts — did our
        # audit changes break it?" named "test.ts", the path's tail after its first dot, held by no memory in
        # that order: nothing relevant, where the memory of that test run ranked third
        self.assertEqual(recall.named("FAIL for tests/identifierNormalization.test.ts now"), ["FAIL"])
        self.assertEqual(recall.named("see src/config.prod.yaml and my-app.config.ts"), ["my-app.config.ts"])
        self.db.add_note("the test run shows FAIL in tests for identifierNormalization since the audit; the audit did "
                         "not break them: its ts tests use the node:test runner", cwd="/home/dev/shop")
        head, hits = self.said("the test run shows FAIL for tests/identifierNormalization.test.ts, did the audit break it?")
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertIn("node:test runner", hits[0]["gist"])

    def test_prose_is_no_name(self):
        self.assertEqual(recall.named("the user's branch, the agents' 'x' and I'd say it's not"), [])
        self.assertEqual(recall.named("it said 'Bootstrap failed' and 'no lock... on ref'"),
                         ["Bootstrap failed", "no lock", "on ref"])
        self.assertEqual(recall.named("is PATH/mise set up, e.g. in CI, and/or locally? `x`"), [])
        self.assertEqual(recall.named('the `go mod vendor` run and "cannot lock ref" in SessionState.PausedAt '
                                      'and go.mod and ENTIRE_DISABLE_HOOKS'),
                         ["go mod vendor", "cannot lock ref", "SessionState.PausedAt", "go.mod", "ENTIRE_DISABLE_HOOKS"])


class QuotedInSingleQuotes(GateCase):
    """An error line a question quotes in single quotes is a thing it names, as in backticks or double
    quotes (recall.QUOTED); a line cut with an ellipsis is named by its parts (recall.ELIDED)."""

    def memories(self) -> list:
        return [
            episode("ptmx", "sysctl-ptmx launchd daemon", "the launchd daemon raises kern.tty.ptmx_max at boot; "
                    "darwin-rebuild switch reloads it", kind="note"),
            episode("boot", "nix bootstrap", "the bootstrap script installs nix before the first darwin-rebuild",
                    kind="note"),
            episode("drift", "drift e2e test failed", "Database chkit_e2e_drift_policy_1733 does not exist: the "
                    "test dropped its database before migrate --execute ran"),
        ] + self.builds()

    def test_a_single_quoted_error_no_memory_holds_is_nothing_relevant(self):
        # public4 u14: five hits holding "launchd", "daemon", "failed" apart, the best at relevance 0.79
        self.nothing_until_noted("Why did the sysctl-ptmx launchd daemon report 'Bootstrap failed' after "
                                 "darwin-rebuild switch?",
                                 "launchd: 'Bootstrap failed: 5: Input/output error' for the sysctl-ptmx daemon, "
                                 "since darwin-rebuild switch loads it twice", "Bootstrap failed: 5")

    def test_a_quoted_line_cut_with_an_ellipsis_is_held_by_its_parts(self):
        # public4 q13: the line's numbered middle left out of the quote
        head, hits = self.said("The drift e2e test failed with 'Database chkit_e2e_drift_policy_... does not "
                               "exist' on migrate --execute. What was the cause?")
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertEqual(hits[0]["title"], "drift e2e test failed")


class OneWordNowhere(GateCase):
    """A question whose one ordinary word no memory holds ("carries", dev q91) reads weak however well
    the rest matches: below NOTHING_RELEVANT. When its best hit's BM25 is most of what the whole query
    could score (recall.matched_share, from MATCHED_RELEVANT on), the hits are shown, not "nothing
    relevant"; when the rest matches weakly, nothing relevant still."""

    def memories(self) -> list:
        return [
            episode("trailer", "Finding a checkpoint's commit by its trailer", "the checkpoint trailer: we scan the "
                    "commits of a two-day time window for the commit whose trailer names the checkpoint", kind="note"),
            episode("hooks", "entire: disable the hooks in CI", "ENTIRE_LOCAL_DEV=1 makes the hooks use go run",
                    kind="note"),
            episode("window", "time window of the session list", "the list shows sessions of the last week", kind="note"),
        ] + self.builds("webpack compiled step {} commit")

    def test_the_rest_matched_whole_shows_the_hits(self):
        head, hits = self.said("Which commit carries a checkpoint's trailer?")
        self.assertLess(hits[0]["relevance"], recall.NOTHING_RELEVANT)      # "carries": held nowhere
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertEqual(hits[0]["title"], "Finding a checkpoint's commit by its trailer")

    def test_the_rest_matched_in_part_is_nothing_relevant(self):
        head, hits = self.said("Which commit carries a webpack step's trailer?")
        self.assertTrue(head.startswith("Nothing relevant in memory"), head)
        self.assertLess(hits[0]["matched"], recall.MATCHED_SHARE)


class WrittenAsAName(GateCase):
    """A word written in capitals (PSBT) or as letters then digits (Argon2) is a thing the question names,
    as an identifier is (recall.WRITTEN_AS_NAME): no memory holding it, nothing relevant, however well the
    question's other words match; once a memory holds it, that memory is found."""

    def memories(self) -> list:
        return [
            episode("recover", "orpheus: recover the keys from a wallet backup", "orpheus recovers the keys from "
                    "the wallet backup, then builds the sweep to the hardware wallet and signs it", kind="note"),
            episode("derive", "orpheus: the legacy wallet key", "the key of a legacy wallet is derived from the "
                    "password with PBKDF2 parameters read from the backup", kind="note"),
        ] + self.builds()

    def test_a_word_in_capitals_no_memory_holds_is_nothing_relevant(self):
        # public5 u04: five hits about the sweep and the hardware wallet, the best at relevance 0.28
        self.nothing_until_noted("After orpheus recovers the keys, how does it build and sign a PSBT for the "
                                 "hardware wallet sweep?",
                                 "once orpheus recovers the keys it builds a PSBT for the hardware wallet sweep, "
                                 "and the hardware wallet signs it", "PSBT")

    def test_a_name_with_digits_no_memory_holds_is_nothing_relevant(self):
        # public5 u05: "Argon2" held nowhere, five hits about the legacy wallet's key at 0.25
        self.nothing_until_noted("Which Argon2 parameters derive the key of a legacy wallet from its password?",
                                 "orpheus derives a legacy wallet's key with Argon2 parameters m=64MiB t=3 p=4",
                                 "Argon2")


class WrittenInCapitalsAsProse(GateCase):
    """Capitals that write prose (a chat abbreviation, a shout) name no thing: a question written with
    them finds the memory that answers it (red44)."""

    def memories(self) -> list:
        return [
            episode("login", "login endpoint returns 500", "the login endpoint returns 500 when the session "
                    "cookie is missing; fixed by checking the cookie first in auth/session.py"),
            episode("cfg", "config loader", "the config loader reads settings.toml then the environment; a "
                    "missing key raises KeyError", kind="note"),
        ] + self.builds()

    def test_a_chat_abbreviation_is_no_name(self):
        # after recall.WRITTEN_AS_NAME (ea3e4e4) each of these said "Nothing relevant in memory"; before, the
        # memory that answers them was the first hit
        for query in ("Why does the login endpoint return 500, BTW?",
                      "Where does the config loader read settings from? AFAIK it is the environment",
                      "FYI the login endpoint returns 500 when the session cookie is missing, what fixed it?",
                      "IIRC the config loader reads settings.toml first, does a missing key raise?"):
            with self.subTest(query):
                head, hits = self.said(query)
                self.assertRegex(head, r"^\d memor(y|ies) for ")
                self.assertIn(hits[0]["title"], ("login endpoint returns 500", "config loader"))

    def test_the_other_chat_abbreviations_are_no_names_either(self):
        # red45: the list (bbc1b50) had left out IDK, AFAICT and TBD: each still said "Nothing relevant in memory"
        for query in ("IDK why the login endpoint returns 500, what fixed it?",
                      "AFAICT the config loader reads settings.toml first, does a missing key raise?",
                      "TBD: why does the login endpoint return 500?"):
            with self.subTest(query):
                head, hits = self.said(query)
                self.assertRegex(head, r"^\d memor(y|ies) for ")
                self.assertIn(hits[0]["title"], ("login endpoint returns 500", "config loader"))

    def test_a_shouted_word_is_no_name(self):
        # an everyday word in capitals for emphasis, held by no memory (red44's hole, left as an
        # expected failure: "STILL" was read as a name no memory holds); a name held nowhere still is one
        for query in ("Why is the login endpoint STILL returning 500?", "Why does the login endpoint ALWAYS return 500?",
                      "Does the config loader ONLY read settings.toml?"):
            with self.subTest(query):
                head, hits = self.said(query)
                self.assertRegex(head, r"^\d memor(y|ies) for ")
                self.assertIn(hits[0]["title"], ("login endpoint returns 500", "config loader"))
        self.assertEqual(recall.named("Why is the PSBT STILL unsigned?"), ["PSBT"])


class CapitalisedRunAsAName(GateCase):
    """Words side by side each written with a capital (Cloud SQL) are one name, held only in that order
    (recall.NAME_RUN): memories holding "cloud" and "SQL" apart are nothing relevant to it; a sentence's
    first word and names side by side ("README WriteFile") are no such run."""

    def memories(self) -> list:
        return [
            episode("conn", "api-service: could not connect to Postgres", "the api-service could not connect to "
                    "Postgres: SQL connection refused in prod until DATABASE_URL named the right host"),
            episode("cloud", "cloud deploy of the api-service", "the api-service deploys to the cloud with the "
                    "prod settings; its proxy config is in deploy/", kind="note"),
        ] + self.builds()

    def test_a_run_of_capitalised_words_no_memory_holds_in_order_is_nothing_relevant(self):
        # public4 u07: five hits holding "api", "service", "Postgres", "SQL", "cloud" apart, the best at 0.37
        self.nothing_until_noted("How does the api-service connect to Postgres through the Cloud SQL proxy in prod?",
                                 "in prod the api-service connects to Postgres through the Cloud SQL proxy sidecar",
                                 "Cloud SQL proxy")
        # a sentence's first capital opens no run; words joined by hyphens are a name of their own (session 52)
        self.assertEqual(recall.named("Cloud deploys fail. Why did the api-service time out?"), ["api-service"])
        self.assertEqual(recall.named("gosec flagged the README WriteFile calls"), ["WriteFile", "README"])


class AcronymsAsWritten(GateCase):
    """The index stems as Porter does: "LFS" is stored as "lf", as "LF" (line feed) is. A question about
    an acronym no memory writes is nothing relevant, however many memories hold its stem
    (recall.as_written); one a memory does write still finds it."""

    def memories(self) -> list:
        return [
            episode("crlf", "How checkpoints handle files tracked by git", "the checkpoint writer normalises "
                    "line endings to LF before it stores the files git tracks", kind="note"),
            episode("eol", "git autocrlf", "files tracked with LF endings show as modified on Windows", kind="note"),
        ] + self.builds()

    def test_an_acronym_held_only_by_its_stem_is_nothing_relevant(self):
        head, _ = self.said("How do checkpoints handle files tracked with Git LFS?")
        self.assertTrue(head.startswith("Nothing relevant in memory"), head)

    def test_an_acronym_a_memory_writes_is_found(self):
        self.db.add_note("Git LFS: the checkpoint writer stores files tracked with LFS as their pointers",
                         cwd="/home/dev/shop")
        head, hits = self.said("How do checkpoints handle files tracked with Git LFS?")
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertTrue(any("Git LFS" in h["gist"] for h in hits), [h["gist"] for h in hits])

    def test_only_capitals_ending_in_s_are_read_as_written(self):
        self.assertEqual(recall.as_written(self.db, "which files does git track", [(2, "files")]), [(2, "files")])
        self.assertEqual(recall.as_written(self.db, "Git LFS", [(2, "lfs")]), [(0, "lfs")])
        self.assertEqual(recall.as_written(self.db, "git lfs", [(2, "lfs")]), [(2, "lfs")])
        self.assertEqual(recall.as_written(self.db, "ENTIRE_DISABLE_HOOKS and `LFS`", [(2, "hooks"), (2, "lfs")]),
                         [(2, "hooks"), (2, "lfs")])           # part of a name, or quoted (named_nowhere's)


class WholeWords(TempHome):
    """A word the query writes as one (GitHub, PostHog, spawnDetachedAnalytics) is one word when relevance
    says how much of the query memory holds: camelCase splits it into parts the index does not count
    apart, and each part weighed as a word no memory holds (recall.query_weights' whole_words)."""

    def test_a_camelcase_word_weighs_as_one_word_of_its_own_count(self):
        counted = [(200, "github"), (5, "label"), (40, "issue")]
        whole = recall.query_weights("which label does the GitHub issue form set", counted, 1000, whole_words=True)
        self.assertAlmostEqual(whole["git"] + whole["hub"], log(1 + 1001 / 201))     # one word, held in 200
        self.assertAlmostEqual(whole["label"], log(1 + 1001 / 6))
        ranked = recall.query_weights("which label does the GitHub issue form set", counted, 1000)
        self.assertEqual(ranked["git"], ranked["form"])         # ranking's weights: as before (a part, unheld)
        own = recall.query_weights("the git log of a GitHub issue", [(300, "git"), (200, "github")], 1000,
                                   whole_words=True)
        self.assertAlmostEqual(own["git"], log(1 + 1001 / 301))  # a part the query also writes alone: its own count

    def test_a_question_naming_a_product_in_words_memory_holds_only_apart_is_nothing_relevant(self):
        with store.connect() as db:
            put_apart(db, [episode(f"g{i}", f"GitHub issue form {i}", f"the bug report form on GitHub, field {i}",
                                   kind="note") for i in range(6)]
                      + [episode("l", "Linear issues", "we track the work in Linear: one issue a task", kind="note"),
                         episode("w", "the weekly report", "a label on every bug", kind="note")]
                      + [episode(f"f{i}", f"`npm run build` failed: step {i}", f"webpack compiled step {i}")
                         for i in range(8)])
            # absence counts in full however small the store (as from ABSENCE_FROM memories on)
            with mock.patch.object(recall, "ABSENCE_FROM", 1):
                query = "Which Linear label goes on bugs from the GitHub issue form?"    # held apart, never together
                hits = recall.search(db, query, now=NOW)
                self.assertTrue(recall.hits_text(query, hits).startswith("Nothing relevant in memory"),
                                [(h["title"], h["relevance"]) for h in hits[:3]])     # 0.27 as two words
                query = "Which bug report field does the GitHub issue form have?"      # what it holds: found
                hits = recall.search(db, query, now=NOW)
                self.assertGreaterEqual(hits[0]["relevance"], recall.NOTHING_RELEVANT)
                self.assertTrue(hits[0]["title"].startswith("GitHub issue form"))

class AbsenceByWordsHeld(TempHome):
    """A word no memory holds counts by how much memory holds: its words, not its rows
    (recall.absence_weight). Forty one-line notes hold little; forty sessions' worth of long
    passages hold as much as 1,500 notes, and a word none of them holds says as much."""

    def weight_of(self, words_a_note):
        with store.connect() as db:
            for i in range(40):
                db.add_note(" ".join(f"w{i}x{j}" for j in range(words_a_note)), cwd="/home/dev/shop")
            return recall.absence_weight(db, db.indexed_total())

    def test_rows_of_many_words_count_a_missing_word_in_full(self):
        self.assertAlmostEqual(self.weight_of(4), 40 / recall.ABSENCE_FROM, places=3)     # as by rows alone

    def test_the_same_rows_holding_many_words(self):
        self.assertEqual(self.weight_of(recall.ABSENCE_WORDS // 40 + 10), 1.0)


class Feedback(TempHome):
    """Pseudo-relevance feedback: a weak first match expands the query with its hits' words."""

    def test_a_weak_query_reaches_a_memory_through_its_first_hits_words(self):
        with store.connect() as db:
            ids = put_apart(db, [
                episode("a", "slim the docker image", "multi-stage build with a distroless base image",
                        kind="session"),
                episode("b", "distroless base lacks a shell", "use the debug distroless variant to get busybox"),
                *[episode(f"n{i}", f"`make` failed on step {i}", f"make error in step {i}") for i in range(12)]])
            query = "shrink what docker ships"
            without = [h["id"] for h in recall.search(db, query, k=5, now=NOW, feedback=False)]
            with_feedback = [h["id"] for h in recall.search(db, query, k=5, now=NOW)]
            self.assertNotIn(ids["b"], without)
            self.assertIn(ids["b"], with_feedback)
            strong = "distroless debug variant busybox"   # a strong first match is left alone: no expansion
            self.assertEqual(recall.search(db, strong, k=5, now=NOW), recall.search(db, strong, k=5, now=NOW,
                                                                                     feedback=False))
            self.assertGreaterEqual(recall.search(db, strong, k=1, now=NOW)[0]["relevance"], recall.FEEDBACK_BELOW)


class ProjectScope(TempHome):
    def test_the_project_ranks_first_and_lessons_for_everywhere_stay(self):
        repo = self.tmp / "repo"
        (repo / ".git").mkdir(parents=True)
        (repo / "sub").mkdir()
        with store.connect() as db:
            ids = put(db, [
                episode("mine", "docker compose up failed", "port 5432 already allocated", cwd=str(repo / "sub"),
                        at="2026-06-01T00:00:00Z"),
                episode("theirs", "docker compose up failed", "port 5432 already allocated",
                        cwd="/elsewhere/other-project"),
                episode("gone", "docker compose up failed", "port 5432 already allocated",
                        cwd=str(repo) + "-fork", at="2026-09-01T00:00:00Z")])  # a sibling whose name starts the same: not the project
            everywhere = add_lesson(db, "Stop the local postgres before docker compose up: port 5432 clashes")
            elsewhere = add_lesson(db, "docker compose up in other-project needs the vpn", cwd="/elsewhere/other-project")
            plain = recall.search(db, "docker compose port 5432", k=10, now=NOW)
            self.assertEqual(plain[0]["id"], ids["theirs"])   # newer, so first without a scope
            self.assertTrue(all(h["in_project"] is None for h in plain))
            for cwd in (repo, repo / "sub"):
                scoped = recall.search(db, "docker compose port 5432", k=10, now=NOW, cwd=str(cwd))
                order = [(h["kind"] == "lesson", h["id"]) for h in scoped]
                first = set(order[:2])
                self.assertEqual(first, {(False, ids["mine"]), (True, everywhere)})
                self.assertEqual(set(order[2:]), {(False, ids["theirs"]), (False, ids["gone"]), (True, elsewhere)})
                self.assertEqual([h["in_project"] for h in scoped], [True, True, False, False, False])

    def test_from_a_folder_in_no_repository_only_that_folder_is_this_project(self):
        loose = Path(os.path.realpath(self.tmp)) / "home"     # like $HOME or /tmp: in no repository
        (loose / "repo" / ".git").mkdir(parents=True)
        (loose / "repo" / "src").mkdir()
        (loose / "notes").mkdir()
        scope = recall.project_scope(str(loose))
        self.assertTrue(scope(str(loose)))
        self.assertFalse(scope(str(loose / "notes")))           # a folder below: its own project
        self.assertFalse(scope(str(loose / "repo" / "src")))    # a repository below
        self.assertFalse(scope(str(loose / "gone")))            # one since deleted
        self.assertTrue(scope(None))                            # meant everywhere
        root = recall.project_scope("/")
        self.assertTrue(root("/"))
        self.assertFalse(root(str(loose)))
        self.assertTrue(recall.project_scope(str(loose / "repo" / "src"))(str(loose / "repo")))  # the repository

        with store.connect() as db:
            ids = put_apart(db, [
                episode("below", "docker compose up failed", "port 5432 already allocated", cwd=str(loose / "repo"),
                        at="2026-06-01T00:00:00Z"),
                episode("newer", "docker compose up failed", "port 5432 already allocated", cwd="/elsewhere/x",
                        at="2026-10-01T00:00:00Z")])
        # The CLI from that folder: nothing below it is marked this project, and the newer comes first.
        p = subprocess.run([sys.executable, "-m", "openmemory", "recall", "docker compose port", "--here", "--json"],
                           capture_output=True, text=True, env=self.env(), cwd=str(loose))
        hits = json.loads(p.stdout)
        self.assertEqual([(h["id"], h["in_project"]) for h in hits],
                         [(f"e{ids['newer']}", False), (f"e{ids['below']}", False)])  # ids as recall shows them
        # The MCP server started there (CLAUDE_PROJECT_DIR) ranks alike.
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"query": "docker compose port"}}}, str(loose))
        text = reply["result"]["content"][0]["text"]
        self.assertLess(text.index(f"[e{ids['newer']}]"), text.index(f"[e{ids['below']}]"), text)

    def test_a_path_that_does_not_exist_here_is_matched_as_text(self):
        scope = recall.project_scope("/nowhere/repo")
        self.assertTrue(scope("/nowhere/repo/pkg"))
        self.assertTrue(scope("/nowhere/repo"))
        self.assertFalse(scope("/nowhere/repository"))
        self.assertTrue(scope(None))


class WithoutFTS5(TempHome):
    """A SQLite without FTS5: the migration makes no index and recall runs on the vectors alone."""

    def test_the_migration_skips_the_index_and_recall_still_finds(self):
        def deny_virtual_tables(action, *args):
            return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_CREATE_VTABLE else sqlite3.SQLITE_OK
        path = self.home / "nofts.db"
        self.home.mkdir(parents=True)
        db = sqlite3.connect(str(path), isolation_level=None)
        db.set_authorizer(deny_virtual_tables)  # SQLite itself refuses: as if FTS5 were not compiled in
        self.assertFalse(migrations.fts5_available(db))
        migrations.migrate(db, path)
        db.close()
        with store.connect(path) as s:
            self.assertFalse(recall.has_index(s))
            ids = put(s, [episode("a", "`cargo build` failed: linker cc not found", "linker cc not found"),
                          episode("b", "`npm ci` failed", "lockfile out of date")])
            hits = recall.recall(s, "linker not found", now=NOW)
            self.assertEqual([h["id"] for h in hits], [ids["a"]])
            self.assertEqual(hits[0]["relevance"], 1.0)
            self.assertEqual(s.episode(ids["a"])["recalls"], 1)
            self.assertEqual(recall.recall(s, "NEAR( \" *", now=NOW), [])


class ScaleByDesign(TempHome):
    def test_only_index_candidates_are_decoded(self):
        with store.connect() as db:
            many = [episode(f"k{i}", f"`make` failed on step {i}", f"make error in build step {i}") for i in range(600)]
            put(db, many + [episode("needle", "`make` failed: zstd missing", "zstd: command not found")])
            decoded = []
            real = embed.stored_cosine
            embed.stored_cosine = lambda q, blob: decoded.append(1) or real(q, blob)
            try:
                hits = recall.search(db, "make zstd", now=NOW)
                self.assertLessEqual(len(decoded), recall.CANDIDATES)
                self.assertEqual(hits[0]["title"], "`make` failed: zstd missing")
                decoded.clear()
                recall.search(db, "make error build", now=NOW)   # every term in every row
                self.assertLessEqual(len(decoded), recall.CANDIDATES)
            finally:
                embed.stored_cosine = real


    def test_terms_too_common_to_weigh_take_the_newest_rows_holding_them_without_bm25(self):
        # FTS5's bm25() counts every row holding each term before it scores one: for terms in most
        # rows (a big store's "run", "tests") that count is most of a query's time.
        with store.connect() as db:
            put(db, [episode(f"k{i}", f"`make test` failed on step {i}", f"make test error in step {i}")
                     for i in range(300)] + [episode("old", "flaky", "no such words")])
            statements = []
            raw_db(db).set_trace_callback(statements.append)
            with mock.patch.object(recall, "POSTINGS_BUDGET", 100):
                hits = recall.search(db, "make test error", k=5, now=NOW, feedback=False)
            raw_db(db).set_trace_callback(None)
            self.assertTrue(any("MATCH" in sql for sql in statements))
            self.assertEqual([sql for sql in statements if "bm25(" in sql], [])
            self.assertEqual(len(hits), 5)
            newest = {f"`make test` failed on step {i}" for i in range(300 - recall.CANDIDATES, 300)}
            self.assertTrue(all(h["title"] in newest for h in hits), [h["title"] for h in hits])
            self.assertGreaterEqual(hits[0]["relevance"], recall.NOTHING_RELEVANT)


class RealCorpus(TempHome):
    EXPECT = [  # what a person who lived through these sessions would want first (or among the first)
        # the commit its lefthook pre-commit hook failed (the banner is kept after the cause)
        ("lefthook pre-commit hook", "lefthook v1.12.3 hook: pre-commit", 1),
        # the CI log of knip's "Unused dependencies" the person pasted back, in their own words
        ("knip unused dependencies", "ci is being super pedantic", 1),
        # the failed force push, beside what the agent said about the rebase behind it
        ("force push rejected", "`git push --force-with-lease` failed", 2),
        ("undefined function in the live view test", "undefined function get/2", 1),
    ]

    def test_recall_on_the_real_transcripts(self):
        files = corpus_files()
        self.ok("ingest", *files)
        with store.connect() as db:
            for query, wanted, within in self.EXPECT:
                with self.subTest(query=query):
                    hits = recall.recall(db, query, k=within)
                    self.assertTrue(hits, query)
                    self.assertTrue(any(wanted in recall.hit_text(h) for h in hits), [recall.hit_text(h) for h in hits])


class RecallCommand(TempHome):
    def setUp(self):
        super().setUp()
        t = test_session(cwd="/home/dev/shop")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")

    def test_human_output_one_block_per_hit(self):
        p = self.ok("recall", "unittest", "import", "error", "-k", "2")
        self.assertEqual(p.stderr, "")
        head, *blocks = p.stdout.strip().split("\n\n")
        self.assertEqual(head, '2 memories for "unittest import error", most relevant first:\n' + recall.FRAMING)
        self.assertEqual(len(blocks), 2)
        for block in blocks:
            self.assertRegex(block.splitlines()[0], r"^\[[ep]\d+\] (error|correction|session|exchange) · "
                                                    r"2026-11-02 \d\d:\d\dZ · /home/dev/shop · session \w{8} · "
                                                    r"relevance [01]\.\d\d$")
        self.assertIn("ImportError", p.stdout)

    def test_json_lists_hits_with_the_promised_keys(self):
        hits = json.loads(self.ok("recall", "run the tests", "--json").stdout)
        self.assertTrue(hits)
        for h in hits:
            self.assertLessEqual({"id", "kind", "source", "text", "title", "gist", "project", "cwd", "session_id",
                                  "at", "relevance", "score"}, set(h))
            self.assertRegex(h["id"], r"^[ep]\d+$")
            self.assertEqual(self.ok("show", h["id"], "--json").stdout.count(f'"id": "{h["id"]}"'), 1)
        self.assertEqual(hits, sorted(hits, key=lambda h: -h["score"]))
        again = json.loads(self.ok("recall", "run the tests", "--json", "--cwd", "/home/dev/shop").stdout)
        self.assertTrue(all(h["in_project"] for h in again))

    def test_no_hits_says_so_and_exits_0(self):
        p = self.ok("recall", "kubernetes")
        self.assertEqual(p.stdout.strip(), 'Nothing in memory matches "kubernetes".')
        self.assertEqual(json.loads(self.ok("recall", "kubernetes", "--json").stdout), [])

    def test_bad_arguments_are_refused_by_the_parser(self):
        for args in (["x", "-k", "0"], ["x", "-k", "many"], ["x", "--here", "--cwd", "/tmp"], []):
            p = self.cli("recall", *args)
            self.assertEqual(p.returncode, 2, args)
            self.assertEqual(p.stdout, "")

    def test_archived_only_with_the_flag_and_revived_by_it(self):
        with store.connect() as db:
            raw_db(db).execute("UPDATE episodes SET archived = 1")
            raw_db(db).execute("UPDATE passages SET archived = 1")
        self.assertEqual(json.loads(self.ok("recall", "unittest", "--json").stdout), [])
        first = self.ok("recall", "unittest", "--archived", "-k", "1").stdout.split("\n\n")[1].splitlines()[0]
        self.assertTrue(first.endswith("· archived"), first)
        hits = json.loads(self.ok("recall", "unittest", "--json").stdout)   # the one recalled came back
        self.assertEqual([(h["kind"], h["id"], h["archived"]) for h in hits],
                         [(first.split()[1], first.split()[0][1:-1], False)])

    def test_here_uses_the_working_folder(self):
        shop = self.tmp / "shop"
        shop.mkdir()
        with store.connect() as db:
            raw_db(db).execute("UPDATE episodes SET cwd = ?", (str(shop),))
            raw_db(db).execute("UPDATE passages SET cwd = ?", (str(shop),))
        p = subprocess.run([sys.executable, "-m", "openmemory", "recall", "unittest", "--here", "--json"],
                           capture_output=True, text=True, env=self.env(), cwd=str(shop))
        hits = json.loads(p.stdout)
        self.assertTrue(hits and all(h["in_project"] for h in hits))


class WhileAnotherProcessWrites(TempHome):
    """Recall reads; strengthening what it returns never waits for another process's write
    lock (a sleep's pass, an ingest): the CLI leaves it, the server touches it at a later call."""

    def setUp(self):
        super().setUp()
        with store.connect() as db:
            self.note = db.add_note("deploy with the blue pipeline", cwd="/home/dev/shop")
        t = Transcript(cwd="/home/dev/shop")
        t.user("how do the release trains leave the station here?")
        t.assistant("Release trains leave from the green platform: run make board-green, then wave the flag.")
        t.write(project_folder(self.claude, "/home/dev/shop"))
        self.ok("ingest")
        with store.connect() as db:
            [self.passage] = [h["id"] for h in recall.search(db, "release trains green platform", k=3)
                              if h["source"] == "passage"][:1]
        from tests.test_hook import HOLD_THE_DATABASE
        self.holder = subprocess.Popen([sys.executable, "-c", HOLD_THE_DATABASE, str(self.home / "memory.db")],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.addCleanup(self.let_go)
        self.assertEqual(self.holder.stdout.readline(), b"held\n")

    def let_go(self):
        if not self.holder.stdin.closed:
            self.holder.stdin.write(b"let go\n")
            self.holder.stdin.close()
            self.holder.stdout.close()
        self.holder.wait(60)

    def recalls(self):
        with store.connect() as db:
            return db.episode(self.note)["recalls"]

    def passage_recalls(self):
        with store.connect() as db:
            return db.passage(self.passage)["recalls"]

    def test_the_command_answers_while_the_database_is_held(self):
        # A writer here would wait 2 minutes; the command is given 60 s.
        p = self.cli("recall", "blue pipeline", env=self.env(OPENMEMORY_BUSY_TIMEOUT_MS=120000))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("deploy with the blue pipeline", p.stdout)
        self.assertIsNone(self.holder.poll())
        self.let_go()
        self.assertEqual(self.recalls(), 0)  # best effort: left untouched, not waited for

    def test_the_server_touches_later_what_it_returned_while_the_database_was_held(self):
        mcp._untouched.clear()
        self.addCleanup(mcp._untouched.clear)
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "recall", "arguments": {"query": "blue pipeline"}}})
        self.assertIn("deploy with the blue pipeline", reply["result"]["content"][0]["text"])
        self.assertEqual(self.recalls(), 0)
        reply = mcp.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "recall", "arguments": {"query": "release trains green platform"}}})
        self.assertIn(f"[p{self.passage}]", reply["result"]["content"][0]["text"])
        shown = mcp.handle({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                            "params": {"name": "show", "arguments": {"id": f"p{self.passage}"}}})
        self.assertIs(shown["result"]["isError"], False)      # show reads; it never waits for the lock
        self.assertIn("make board-green", shown["result"]["content"][0]["text"])
        self.assertEqual(self.passage_recalls(), 0)
        self.let_go()
        mcp.handle({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                    "params": {"name": "recall", "arguments": {"query": "nothing like it"}}})
        self.assertEqual((self.recalls(), self.passage_recalls()), (1, 1))


class RecallHere(TempHome):
    def test_this_projects_hits_come_first_and_each_says_its_project(self):
        shop = self.tmp / "shop"
        other = self.tmp / "other"
        for folder in (shop, other):
            folder.mkdir()
            test_session(cwd=str(folder)).write(project_folder(self.claude, folder))
        self.ok("ingest")
        p = self.cli("recall", "pytest", "unittest", "-k", "10", "--cwd", str(shop))
        self.assertEqual(p.returncode, 0, p.stderr)
        head, *blocks = p.stdout.split("\n\n")
        ours = sum(f" · {shop} · " in b.splitlines()[0] for b in blocks)
        self.assertTrue(0 < ours < len(blocks))     # the header counts this project's hits, not all of them
        self.assertEqual(head, f'{len(blocks)} memories for "pytest unittest", most relevant first ({ours} from '
                               f'project {shop}):\n' + recall.FRAMING)
        shown = [(str(shop) if f" · {shop} · " in b.splitlines()[0] else str(other), b.split("\n", 1)[1])
                 for b in blocks]
        self.assertIn(str(other), [w for w, _ in shown])
        both = {t for w, t in shown if w == str(shop)} & {t for w, t in shown if w == str(other)}
        self.assertTrue(both)
        for text in both:       # the same memory in both projects: this project's first
            self.assertLess(shown.index((str(shop), text)), shown.index((str(other), text)))
        unscoped = self.ok("recall", "pytest", "unittest").stdout
        self.assertTrue(unscoped.startswith('5 memories for "pytest unittest", most relevant first:'), unscoped)


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
        self.assertRegex(p.stdout, r'^Nothing in memory matches "pytest"\.\n\d+ archived memor(y matches|ies match): '
                                   r'add --archived\n$')
        with store.connect() as db:
            self.assertEqual([e["id"] for e in db.episodes() if e["archived"]], [e["id"] for e in self.archived])
            self.assertEqual(db.counts()["passages"]["archived"], db.counts()["passages"]["total"])  # faded too
        self.assertEqual(self.ok("recall", "kubernetes").stdout, 'Nothing in memory matches "kubernetes".\n')
        self.assertIn("pytest", self.ok("recall", "pytest", "--archived").stdout)

    def test_weak_live_hits_do_not_hide_an_archived_memory_that_answers(self):
        # newuser45: live memories of other projects at 0.21 and below, the archived answer at 1.00
        # with --archived, and no word of it
        self.ok("remember", "the docs site module list lives in RELEASING.md", "--everywhere")
        p = self.ok("recall", "why does unittest fail with No module named shop.tests")
        self.assertTrue(p.stdout.startswith("Nothing relevant in memory for "), p.stdout)
        self.assertRegex(p.stdout, r"\n\d+ archived memor(y matches|ies match) better: add --archived\n$")
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall",
                            "arguments": {"query": "why does unittest fail with No module named shop.tests"}}},
                           PROJECT)
        self.assertRegex(reply["result"]["content"][0]["text"], r"\n\n\d+ archived memor(y matches|ies match) "
                                                                r"better: call recall again with include_archived true")
        # a live memory that answers: no hint
        self.ok("remember", "unittest fails with No module named shop.tests: run the tests with pytest -q",
                "--everywhere")
        self.assertNotIn("archived", self.ok("recall", "why does unittest fail with No module named shop.tests").stdout)
        self.assertIn("python -m unittest", self.ok("recall", "why does unittest fail with No module named shop.tests",
                                                    "--archived").stdout)

    def test_a_weak_live_hit_shown_as_found_does_not_hide_an_archived_memory_that_answers(self):
        # newuser47: an expense tracker's memory at 0.22 shown as found (its BM25 matched most of the
        # query), the archived answer at 0.64 with --archived, and no word of it
        self.ok("remember", "the shop module list lives in RELEASING.md", "--everywhere")
        query = "why does unittest fail with No module named shop.tests"
        with store.connect() as db:
            [live] = recall.search(db, query)
            self.assertLess(live["relevance"], recall.NOTHING_RELEVANT)
            found = dict(live, relevance=0.2, matched=recall.MATCHED_SHARE + 0.1)   # weak, shown as found
            self.assertFalse(recall.nothing_relevant([found]))
            self.assertGreaterEqual(recall.archived_matches(db, query, live=[found]), 1)
            strong = dict(live, relevance=recall.NOTHING_RELEVANT + 0.3)
            self.assertEqual(recall.archived_matches(db, query, live=[strong]), 0)
        self.assertIn("python -m unittest", self.ok("recall", query, "--archived").stdout)  # and it answers

    def test_what_an_archived_memory_matched_does_not_make_a_weak_live_hit_found(self):
        # share47: the BM25 share that lets a weak hit read as found was the best of every candidate,
        # archived ones too: this query's live note at 0.18 read "1 memory for …" on the strength of the
        # archived session that answers it (1.54 of what the query could score), and hid the hint
        self.ok("remember", "the shop module list lives in RELEASING.md", "--everywhere")
        query = "why does unittest fail with No module named shop.tests"
        p = self.ok("recall", query)
        self.assertTrue(p.stdout.startswith(f'Nothing relevant in memory for "{query}"'), p.stdout)
        self.assertRegex(p.stdout, r"RELEASING\.md\n\d+ archived memor(y matches|ies match) better: add --archived\n$")
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "recall", "arguments": {"query": query}}}, PROJECT)
        text = reply["result"]["content"][0]["text"]
        self.assertTrue(text.startswith(f'Nothing relevant in memory for "{query}"'), text)
        self.assertRegex(text, r"RELEASING\.md\n\n\d+ archived memor(y matches|ies match) better: "
                               r"call recall again with include_archived true to see (it|them)\.$")

    def test_the_mcp_tool_says_so_too(self):
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "recall", "arguments": {"query": "pytest"}}}, PROJECT)
        text = reply["result"]["content"][0]["text"]
        self.assertRegex(text, r'^Nothing in memory matches "pytest"\. \d+ archived '
                               r'memor(y matches|ies match): call recall again with include_archived true')



class WhatAHitShows(unittest.TestCase):
    LESSON = {"source": "lesson", "id": 3, "ref": "l3", "kind": "lesson", "title": "In this repository use "
              "`pytest -q`.", "gist": "In this repository use `pytest -q`.", "cwd": "/home/dev/shop",
              "at": "2026-11-05T03:00:00.000000Z", "session_id": None, "relevance": 0.81, "archived": False}

    def test_a_candidate_lesson_says_it_is_one_and_a_live_one_does_not(self):
        self.assertTrue(recall.header(dict(self.LESSON, state="candidate")).startswith(
            "[l3] lesson, candidate · 2026-11-05 03:00Z · "))
        self.assertTrue(recall.header(dict(self.LESSON, state="live")).startswith("[l3] lesson · "))
        self.assertTrue(recall.header(self.LESSON).startswith("[l3] lesson · "))

    def test_a_long_text_shows_the_sentences_that_hold_the_query(self):
        text = "We looked at the cache first. " * 30 + "The fix was to pin lazy_html to 0.1.3 in mix.exs. " + \
            "Then the suite passed. " * 10
        shown = recall.excerpt(text, "how was lazy_html fixed", 300)
        self.assertLessEqual(len(shown), 300)
        self.assertTrue(shown.startswith("…"), shown)
        self.assertIn("The fix was to pin lazy_html to 0.1.3 in mix.exs.", shown)
        self.assertEqual(recall.excerpt("short text", "anything", 300), "short text")

if __name__ == "__main__":
    unittest.main()


class AMemoryOfSize(TempHome):
    """A store that holds enough words for a word no memory holds to count in full (recall.ABSENCE_WORDS),
    as a real history does: a few memories about the things asked, and notes of other work beside them."""

    def memories(self) -> list:
        return []

    def setUp(self):
        super().setUp()
        self.db = store.connect()
        self.addCleanup(self.db.close)
        put_apart(self.db, self.memories())
        for i in range(60):     # 60 notes of 900 words no question asks about: 54,000 (word, memory) pairs
            self.db.add_note(" ".join(f"zq{i}k{j}" for j in range(900)), cwd=PROJECT, now=NOW)
        self.assertGreaterEqual(self.db.indexed_words(), recall.ABSENCE_WORDS)

    def said(self, query):
        """What the result says first, and its hits."""
        hits = recall.search(self.db, query, now=NOW)
        return recall.hits_text(query, hits).split("\n", 1)[0], hits

    def assert_nothing_relevant(self, query):
        head, _ = self.said(query)
        self.assertTrue(head.startswith("Nothing relevant in memory"), head)

    def assert_found(self, query, text):
        """The result lists memories, the first of them holding text."""
        head, hits = self.said(query)
        self.assertRegex(head, r"^\d memor(y|ies) for ")
        self.assertIn(text, hits[0]["gist"])


class ATitledName(AMemoryOfSize):
    """One word written with a capital where no sentence starts (Cypress, Lighthouse) is a thing the
    question names (recall.TITLED_WORD): no memory holding it, nothing relevant, however well the other
    words match; once a memory holds it, that memory is found."""

    def memories(self) -> list:
        return [
            episode("spark", "Toolshop cards: the Launch Spark button", "the Launch Spark button on the Toolshop "
                    "cards opens the app's Spark overlay; we wrote a test that clicks it on every card", kind="note"),
            episode("urls", "Toolshop cards point at the deployed app URLs", "the cards read the deployed app "
                    "URLs from src/data/registry.json", kind="note"),
        ]

    def test_a_capitalised_word_no_memory_holds_is_nothing_relevant(self):
        # public25 u02 (session 60): five hits about the button and the cards, the best at relevance 0.30
        query = "Which Cypress end-to-end test did we write for the Launch Spark button on the Toolshop cards?"
        self.assert_nothing_relevant(query)
        self.db.add_note("the Launch Spark button on the Toolshop cards has a Cypress end-to-end test, "
                         "cypress/e2e/spark.cy.ts, that clicks it on every card", cwd=PROJECT, now=NOW)
        self.assert_found(query, "cypress/e2e/spark.cy.ts")

    def test_a_sentence_start_a_day_a_month_or_german_nouns_are_no_names(self):
        self.assertEqual(recall.named("Which test did we write for the spark button? Cypress had none."), [])
        self.assertEqual(recall.named("What did we decide on Monday about the cache in March?"), [])
        self.assertEqual(recall.named("Warum ist der Knopf nicht grau, und wie haben wir die Farbe geändert?"), [])
        self.assertEqual(recall.named("What Lighthouse score did the site get after the Cloudflare Pages deploy?"),
                         ["Cloudflare Pages", "Lighthouse"])


class ACompoundInCapitals(AMemoryOfSize):
    """Words joined by hyphens, one in capitals (ESP-NOW), are one name (recall.CAPITAL_COMPOUND): a
    memory holding ESP32 and ESP-IDF, and "now" everywhere, never spoke of ESP-NOW."""

    def memories(self) -> list:
        return [
            episode("idf", "Flashing the cat vent board with ESP-IDF", "the two ESP32 boards of the cat vent are "
                    "flashed with ESP-IDF v6.0.1: idf.py -p /dev/ttyUSB0 flash, and now both boot", kind="note"),
            episode("fan", "The cat vent's fan speed", "the cat vent's fan runs at 40% now and at full speed while the "
                    "litterbox is in use; the two boards read the same sensor", kind="note"),
        ]

    def test_a_compound_no_memory_holds_is_nothing_relevant(self):
        # public21 u03 (session 60): five hits about the boards and the vent, the best at relevance 0.50
        query = "How did we pair the two ESP32 boards over ESP-NOW for the cat vent?"
        self.assert_nothing_relevant(query)
        self.db.add_note("the two ESP32 boards of the cat vent are paired over ESP-NOW: each adds the other's MAC "
                         "address as a peer", cwd=PROJECT, now=NOW)
        self.assert_found(query, "as a peer")

    def test_a_compound_a_memory_holds_is_found(self):
        self.assert_found("Which ESP-IDF version did we flash the cat vent boards with?", "v6.0.1")

    def test_which_compounds_are_names(self):
        self.assertEqual(recall.named("Did the ESP-NOW pairing survive the COVID-19 lockdown build?"),
                         ["ESP-NOW", "COVID-19"])
        self.assertEqual(recall.named("Is the Wi-Fi set up end-to-end?"), [])      # no part in capitals
        self.assertEqual(recall.named("How many multi-EQ configs does the D365-to-AWS sync use?"), [])   # prose


class ASpacelessWordHeldNowhere(AMemoryOfSize):
    """A Chinese question whose own words no memory holds (候选人, 面试评价) is about a thing never stored,
    though the pairs held nowhere are left out of its weights: a stretch of characters no held pair covers
    is such a word (recall.unheld_stretches); the question's frame (是怎么…的) is none."""

    def memories(self) -> list:
        return [
            episode("preview", "背调附件预览弹窗", "背调附件预览弹窗不显示：模板有两个根元素，只渲染了第一个。改成一个根元素后，"
                    "预览功能正常了。", kind="note"),
            episode("tip", "雇佣类别的提示", "雇佣类别的提示文字改成右边的小图标，鼠标悬停时显示提示。这个功能怎么用写在文档里。",
                    kind="note"),
        ]

    def test_a_question_about_a_thing_never_stored_is_nothing_relevant(self):
        # public25 u10 (session 60): 候选, 选人, 面试, 评价, 导出, 实现 held nowhere, "功能" and "怎么" held: 0.43
        self.assert_nothing_relevant("候选人的面试评价导出功能是怎么实现的？")

    def test_a_question_about_a_thing_stored_is_answered(self):
        self.assert_found("背调附件预览弹窗是怎么修好的？", "只渲染了第一个")

    def test_the_stretches_no_held_pair_covers(self):
        counted = [(0, "候选"), (0, "选人"), (0, "人的"), (0, "的面"), (0, "面试"), (0, "试评"), (0, "评价"),
                   (0, "价导"), (0, "导出"), (0, "出功"), (4, "功能"), (0, "能是"), (0, "是怎"), (3, "怎么"),
                   (0, "么实"), (0, "实现"), (0, "现的")]
        self.assertEqual(recall.unheld_stretches("候选人的面试评价导出功能是怎么实现的？", counted),
                         ["候选人", "面试评价导出", "实现"])
        # the word that asks for a command is how the question asks: its answer is a command
        self.assertEqual(recall.unheld_stretches("最后用什么命令装上的？", [(0, "后用"), (0, "用什"), (0, "什么"),
                                                                 (0, "么命"), (0, "命令"), (0, "令装"), (0, "装上"),
                                                                 (0, "上的")]), [])


class AskedForACommandAPersonAnswered(TempHome):
    """A correction names the shell command the person answered ("After the agent ran `…`, the person
    said …"): for a question asking which command did it, that command comes first among hits of
    comparable relevance, as a command passage does (recall.AFTER_IT_RAN)."""

    def test_the_command_a_correction_names_comes_first_for_a_question_asking_for_it(self):
        # public24 q10 (session 60): "Which command do we use to restart the production riskbot so it picks up
        # code changes?" had its answer, the correction after `… pm2 restart riskbot --update-env …`, 11th
        with store.connect() as db:
            ids = put_apart(db, [
                episode("ran", "Correction: ask before you restart the production riskbot", "After the agent ran "
                        "`cd /home/riskbot && pm2 restart riskbot --update-env`, the person said: \"ask me before "
                        "you restart the production riskbot to pick up code changes\"", kind="correction"),
                episode("talk", "restarting the production riskbot", "restart the production riskbot after code "
                        "changes so it picks them up; the signup threads need the migration too", kind="note")])
            asked = recall.search(db, "Which command do we use to restart the production riskbot so it picks up "
                                      "code changes?", k=2, now=NOW)
            self.assertEqual([h["id"] for h in asked], [ids["ran"], ids["talk"]], [h["relevance"] for h in asked])
            why = recall.search(db, "Why do we restart the production riskbot so it picks up code changes?", k=2,
                                now=NOW)
            self.assertEqual([h["id"] for h in why], [ids["talk"], ids["ran"]], [h["relevance"] for h in why])
