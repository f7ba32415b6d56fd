"""Recall: the index stays in sync, odd queries never raise, scoring/touching/archive/scope
behave as documented, the fusion beats each channel on a labelled set, and the CLI verb."""
import json
import sqlite3
import subprocess
import sys
import unittest
from pathlib import Path

from openmemory import clock, embed, migrations, recall, store
from tests.fixtures import project_folder, test_session
from tests.helpers import TempHome, corpus_files, raw_db

LABELLED = Path(__file__).parent / "data" / "recall_labelled.json"
NOW = "2026-11-01T12:00:00.000000Z"


def episode(key, title, gist, cwd="/home/dev/shop", at="2026-10-30T10:00:00Z", kind="error", detail=""):
    return {"key": key, "kind": kind, "title": title, "gist": gist, "detail": detail, "facts": {},
            "at": at, "cwd": cwd}


def put(db, episodes, session="s1"):
    """Store episodes as one transcript's, the way ingest does; returns {key: id}."""
    db.replace_session({"id": session, "path": f"/t/{session}.jsonl", "mtime_ns": 0, "size": 0}, episodes)
    return {row["key"]: row["id"] for row in raw_db(db).execute("SELECT key, id FROM episodes")}


def add_lesson(db, text, cwd=None, at=NOW):
    with db.transaction():
        return raw_db(db).execute(
            "INSERT INTO lessons (text, kind, cwd, created, updated, embedding) VALUES (?, ?, ?, ?, ?, ?)",
            (text, "project" if cwd else "feedback", cwd, at, at, embed.encode(embed.vector(text)))).lastrowid


def indexed(db, word):
    """Index rowids holding word (episode ids; lessons as minus their id)."""
    return sorted(r[0] for r in raw_db(db).execute("SELECT rowid FROM recall_index WHERE recall_index MATCH ?",
                                              (recall.match_expression([word]),)))


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
            put(db, [episode("a", "`alembic upgrade head` failed", "relation orders already exists"),
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

    def test_the_design_formula_with_fused_relevance(self):
        ids = put(self.db, [
            episode("old", "`pytest -q` failed: fixture db not found", "fixture db not found in conftest",
                    at="2026-08-02T12:00:00Z"),
            episode("new", "`pytest -q` failed: fixture db not found", "fixture db not found in conftest",
                    at="2026-11-01T12:00:00Z"),
            episode("other", "`npm run build` failed", "webpack could not resolve the fixture loader")])
        hits = recall.search(self.db, "fixture db not found", k=5, now=NOW)
        self.assertEqual([h["id"] for h in hits[:2]], [ids["new"], ids["old"]])  # same text: newer first
        for h in hits:
            expected = 0.6 * h["relevance"] + 0.25 * 2 ** (-self._age(h["at"]) / 30) + 0.15 * 1.0 / 2
            self.assertAlmostEqual(h["score"], expected, places=3)
        self.assertEqual(hits[0]["relevance"], 1.0)       # best in both channels
        self.assertLess(hits[-1]["relevance"], 0.5)       # only one word in common
        self.assertAlmostEqual(hits[0]["score"] - hits[1]["score"], 0.25 * (1 - 2 ** -3), places=2)

    def test_strength_counts_up_to_two(self):
        ids = put(self.db, [episode("a", "redis timeout in worker", "redis timeout in worker"),
                            episode("b", "redis timeout in worker", "redis timeout in worker")])
        with self.db.transaction():
            raw_db(self.db).execute("UPDATE episodes SET strength = 5 WHERE id = ?", (ids["b"],))
        a, b = sorted(recall.search(self.db, "redis timeout", now=NOW), key=lambda h: h["id"])
        self.assertAlmostEqual(b["score"] - a["score"], 0.15 * (2 - 1) / 2, places=3)

    def _age(self, at):
        return (clock.parse_time(NOW) - clock.parse_time(at)).total_seconds() / 86400


class TouchingAndArchive(TempHome):
    def setUp(self):
        super().setUp()
        self.db = store.connect()
        self.addCleanup(self.db.close)
        self.ids = put(self.db, [episode(f"e{i}", f"`terraform apply` failed {i}", f"state lock held by ci {i}")
                                 for i in range(4)] + [episode("x", "unrelated", "nothing in common here")])

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


def load_labelled(db):
    """Store the labelled set; returns (data, {(is_lesson, id): key})."""
    data = json.loads(LABELLED.read_text())
    names = {}
    by_cwd = {}
    for e in data["episodes"]:
        by_cwd.setdefault(e["cwd"], []).append(e)
    for cwd, eps in by_cwd.items():
        put(db, eps, session=cwd)
    for row in raw_db(db).execute("SELECT id, key FROM episodes"):
        names[(False, row[0])] = row[1]
    for lesson in data["lessons"]:
        names[(True, add_lesson(db, lesson["text"], lesson["cwd"], lesson["at"]))] = lesson["key"]
    return data, names


def recall_at(db, data, names, share):
    """(R@1, R@5) over the labelled queries with this lexical share (1: BM25 alone, 0: vectors alone)."""
    r1 = r5 = 0
    for q in data["queries"]:
        hits = recall.search(db, q["query"], 5, q.get("cwd"), now=data["now"], lexical_share=share)
        got = [names[(h["kind"] == "lesson", h["id"])] for h in hits]
        r1 += bool(got) and got[0] in q["want"]
        r5 += any(g in q["want"] for g in got)
    return r1 / len(data["queries"]), r5 / len(data["queries"])


class Quality(TempHome):
    def test_fusion_beats_each_channel_on_the_labelled_set(self):
        with store.connect() as db:
            data, names = load_labelled(db)
            vector = recall_at(db, data, names, 0.0)
            bm25 = recall_at(db, data, names, 1.0)
            fusion = recall_at(db, data, names, recall.LEXICAL_SHARE)
        print(f"\nlabelled set, {len(data['queries'])} queries over {len(data['episodes'])} episodes: "
              f"R@1/R@5 vector {vector[0]:.2f}/{vector[1]:.2f}, BM25 {bm25[0]:.2f}/{bm25[1]:.2f}, "
              f"fusion {fusion[0]:.2f}/{fusion[1]:.2f}", file=sys.stderr)
        self.assertGreater(fusion[1], bm25[1])
        self.assertGreater(fusion[1], vector[1])
        self.assertGreaterEqual(fusion[0], max(bm25[0], vector[0]))
        self.assertGreaterEqual(fusion[1], 0.9)


class RealCorpus(TempHome):
    EXPECT = [  # what a person who lived through these sessions would want first
        # the commit its lefthook pre-commit hook failed (the banner is kept after the cause)
        ("lefthook pre-commit hook", "lefthook v1.12.3 hook: pre-commit", "gist"),
        # the CI log of knip's "Unused dependencies" the person pasted back: a correction
        ("knip unused dependencies", "Correction: ci is being super pedantic", "title"),
        ("force push rejected", "`git push --force-with-lease` failed", "title"),
        ("undefined function in the live view test", "undefined function get/2", "title"),
    ]

    def test_recall_on_the_real_transcripts(self):
        files = corpus_files()
        self.ok("ingest", *files)
        with store.connect() as db:
            for query, wanted, field in self.EXPECT:
                with self.subTest(query=query):
                    hits = recall.recall(db, query, k=1)
                    self.assertTrue(hits, query)
                    self.assertIn(wanted, hits[0][field])


class RecallCommand(TempHome):
    def setUp(self):
        super().setUp()
        t = test_session(cwd="/home/dev/shop")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")

    def test_human_output_one_block_per_hit(self):
        p = self.ok("recall", "unittest", "import", "error", "-k", "2")
        self.assertEqual(p.stderr, "")
        blocks = p.stdout.strip().split("\n\n")
        self.assertEqual(len(blocks), 2)
        head = blocks[0].splitlines()[0]
        self.assertRegex(head, r"^(error|correction|session) \d+ · 2026-11-02 · shop · score 0\.\d\d$")
        self.assertIn("ImportError", p.stdout)

    def test_json_lists_hits_with_the_promised_keys(self):
        hits = json.loads(self.ok("recall", "run the tests", "--json").stdout)
        self.assertTrue(hits)
        for h in hits:
            self.assertLessEqual({"id", "kind", "title", "gist", "cwd", "at", "score"}, set(h))
        self.assertEqual(hits, sorted(hits, key=lambda h: -h["score"]))
        again = json.loads(self.ok("recall", "run the tests", "--json", "--cwd", "/home/dev/shop").stdout)
        self.assertTrue(all(h["in_project"] for h in again))

    def test_no_hits_says_so_and_exits_0(self):
        p = self.ok("recall", "kubernetes")
        self.assertEqual(p.stdout.strip(), "no memories match 'kubernetes'")
        self.assertEqual(json.loads(self.ok("recall", "kubernetes", "--json").stdout), [])

    def test_bad_arguments_are_refused_by_the_parser(self):
        for args in (["x", "-k", "0"], ["x", "-k", "many"], ["x", "--here", "--cwd", "/tmp"], []):
            p = self.cli("recall", *args)
            self.assertEqual(p.returncode, 2, args)
            self.assertEqual(p.stdout, "")

    def test_archived_only_with_the_flag_and_revived_by_it(self):
        with store.connect() as db:
            raw_db(db).execute("UPDATE episodes SET archived = 1")
        self.assertEqual(json.loads(self.ok("recall", "unittest", "--json").stdout), [])
        first = self.ok("recall", "unittest", "--archived", "-k", "1").stdout.splitlines()[0]
        self.assertTrue(first.endswith("· archived"), first)
        hits = json.loads(self.ok("recall", "unittest", "--json").stdout)   # the one recalled came back
        self.assertEqual([(h["kind"], h["id"], h["archived"]) for h in hits],
                         [(first.split()[0], int(first.split()[1]), False)])

    def test_here_uses_the_working_folder(self):
        shop = self.tmp / "shop"
        shop.mkdir()
        with store.connect() as db:
            raw_db(db).execute("UPDATE episodes SET cwd = ?", (str(shop),))
        p = subprocess.run([sys.executable, "-m", "openmemory", "recall", "unittest", "--here", "--json"],
                           capture_output=True, text=True, env=self.env(), cwd=str(shop))
        hits = json.loads(p.stdout)
        self.assertTrue(hits and all(h["in_project"] for h in hits))


if __name__ == "__main__":
    unittest.main()
