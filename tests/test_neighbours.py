"""A memory's neighbours (neighbours.py): the context it is indexed with besides its own words,
kept when a neighbour changes, redacted and forgotten like the rest, backfilled by m007."""
import sqlite3

from openmemory import embed, migrations, recall, store
from tests.fixtures import Transcript, project_folder, test_session
from tests.helpers import TempHome, raw_db
from tests.test_recall import NOW, episode, indexed, put

LONG_NOTE = ("The staging database is reached through the bastion host stg-7, only from the office VPN, and "
             "its backups run nightly at two.")     # over 100 characters: its title is a cut of it


class Context(TempHome):
    """Each memory is indexed with what happened around it, as a lower-weight field."""

    def setUp(self):
        super().setUp()
        self.db = store.connect()
        self.addCleanup(self.db.close)

    def context(self, eid):
        return self.db.episode(eid)["context"]

    def stopped_before(self, migration: str) -> tuple:
        """(path, raw connection) of a database made by the migrations before this one (its name
        without the number), as a version of openmemory before it left it."""
        path = self.home / f"before-{migration}.db"
        db = sqlite3.connect(str(path), isolation_level=None)
        before = [m.__name__.split("_", 1)[1] for m in migrations.MIGRATIONS].index(migration)
        for step in migrations.MIGRATIONS[:before]:
            step(db)
        db.execute(f"PRAGMA user_version = {before}")
        return path, db

    def test_a_surprise_carries_its_session_and_neighbours_and_a_session_its_surprises(self):
        ids = put(self.db, [
            episode("s", "run the test suite before the release", "Asked: run the test suite before the release. "
                    "Ran: `pytest -q`. Ended: All 214 tests pass.", kind="session", at="2026-10-02T09:00:00Z"),
            episode("e", "`python -m unittest discover` failed: ImportError", "ImportError: No module named "
                    "shop.settings.test", at="2026-10-02T09:04:00Z"),
            episode("c", "Correction: use pytest -q --reuse-db", "the person said: use pytest -q --reuse-db",
                    kind="correction", at="2026-10-02T09:05:00Z")], session="tests")
        ids.update(put(self.db, [episode("r", "`./release.sh` failed: tag v2 exists", "release tag v2 exists",
                                         at="2026-10-03T09:00:00Z")], session="release"))
        # Most specific first, cut at neighbours.CONTEXT_LIMIT (150) from the end: the session's gist goes first.
        self.assertEqual(self.context(ids["c"]), "run the test suite before the release / `python -m unittest "
                         "discover` failed: ImportError / Asked: run the test suite before the release. Ran: "
                         "`pytes…")
        self.assertEqual(self.context(ids["s"]), "`python -m unittest discover` failed: ImportError / "
                         "Correction: use pytest -q --reuse-db")
        self.assertEqual(indexed(self.db, "suite", "context"), [ids["e"], ids["c"]])
        self.assertEqual(indexed(self.db, "suite"), [ids["s"]])
        self.assertEqual(self.context(ids["r"]), "")   # alone in its transcript, and no session episode
        # Words in a memory's own text count more than the same words in its context.
        hits = recall.search(self.db, "release", k=5, now=NOW)
        self.assertEqual([h["id"] for h in hits][:2], [ids["r"], ids["s"]])
        self.assertLess(hits[-1]["relevance"], hits[0]["relevance"] / 2)

    def test_a_changed_neighbour_changes_the_context_and_the_index(self):
        put(self.db, [episode("a", "`make lint` failed", "ruff F401"), episode("b", "`make test` failed",
                                                                            "pytest collected 0 items")])
        ids = put(self.db, [episode("a", "`make lint` failed", "ruff F401"),
                            episode("b", "`make docs` failed", "sphinx missing")])
        self.assertEqual(self.context(ids["a"]), "`make docs` failed")
        self.assertEqual(indexed(self.db, "docs", "context"), [ids["a"]])
        self.assertEqual(indexed(self.db, "test", "context"), [])
        raw_db(self.db).execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")

    def test_ingest_adds_the_turns_around_a_surprise(self):
        t = test_session()
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        error = next(e for e in self.db.episodes("error"))
        correction = next(e for e in self.db.episodes("correction"))
        self.assertIn("The test command failed.", error["context"])     # what the agent said next
        self.assertIn("run the tests", error["context"])                # the session's request
        self.assertIn("Understood.", correction["context"])

    def test_the_turns_around_are_redacted_like_everything_else(self):
        t = Transcript()
        t.user("deploy it")
        t.assistant(tools=[("Bash", {"command": "make deploy"}, "Exit code 2\nmake: *** [deploy] Error 1", True)])
        t.assistant("The deploy failed; set ANTHROPIC_API_KEY=sk-ant-api03-QQQQRRRRSSSSTTTTUUUUVVVV and retry.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        error = self.db.episodes("error")[0]
        self.assertIn("The deploy failed", error["context"])
        self.assertIn("[REDACTED:anthropic-key]", error["context"])
        self.assertEqual(indexed(self.db, "QQQQRRRRSSSSTTTTUUUUVVVV", "context"), [])

    def test_forgotten_words_leave_every_context(self):
        t = test_session()
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        said = "don't use unittest here"
        self.assertTrue([e for e in self.db.episodes() if said in e["context"]])
        self.ok("forget", str(self.db.episodes("correction")[0]["id"]))
        first = self.db.add_note("The staging host is stg-7 behind the bastion.", cwd="/x", conversation="c")
        middle = self.db.add_note("Marguerite Vasquez holds the staging root password.", cwd="/x", conversation="c")
        last = self.db.add_note("Rotate it every Monday.", cwd="/x", conversation="c")
        self.ok("forget", str(middle))
        with store.connect() as db:
            contexts = [e["context"] for e in db.episodes()]
            self.assertFalse([c for c in contexts if said in c or "Marguerite" in c], contexts)
            self.assertEqual(indexed(db, "marguerite", "context"), [])
            self.assertEqual([db.episode(first)["context"], db.episode(last)["context"]], ["[forgotten]"] * 2)

    def test_notes_of_one_conversation_are_each_others_context(self):
        at = ["2026-10-28T15:00:00Z", "2026-10-28T15:02:00Z", "2026-10-28T15:04:00Z", "2026-10-28T18:00:00Z"]
        first = self.db.add_note("Orders over 1,000 EUR need a review by finance.", cwd="/shop", now=at[0],
                                 conversation="mcp:1")
        elsewhere = self.db.add_note("The VPN drops at midnight.", cwd="/infra", now=at[1], conversation="mcp:1")
        other = self.db.add_note("Staging runs on Kubernetes.", cwd="/shop", now=at[1], conversation="mcp:2")
        flag = self.db.add_note("The flag for that is Order.needs_review.", cwd="/shop", now=at[1],
                                conversation="mcp:1")
        digest = self.db.add_note("They want a daily email at 8:00.", cwd="/shop", now=at[2], conversation="mcp:1")
        later = self.db.add_note("Deploys freeze on Fridays.", cwd="/shop", now=at[3], conversation="mcp:1")
        alone = self.db.add_note("Use uv, not pip.", cwd="/shop", now=at[2])
        self.assertEqual(self.context(first), "The flag for that is Order.needs_review.")
        self.assertEqual(self.context(flag), "Orders over 1,000 EUR need a review by finance. / "
                                             "They want a daily email at 8:00.")
        self.assertEqual(self.context(digest), "The flag for that is Order.needs_review.")
        for note in (elsewhere, other, later, alone):  # another folder, conversation, after the gap, none
            self.assertEqual(self.context(note), "")
        self.assertEqual(indexed(self.db, "finance", "context"), [flag])
        hits = recall.search(self.db, "which field marks orders for finance review", k=3, now=at[3])
        self.assertIn(flag, [h["id"] for h in hits])

    def test_a_long_note_is_its_neighbours_context_once_and_whole_to_the_limit(self):
        said = ("Caroline, 25 May 2023: I'm thrilled to make a family for kids who need one. It'll be tough as "
                "a single parent, but I'm up for the challenge!")     # longer than a title (100 characters)
        asked = self.db.add_note("Melanie, 25 May 2023: Anything you're excited for in the adoption process?",
                                 cwd="/chat", conversation="mcp:1")
        answer = self.db.add_note(said, cwd="/chat", conversation="mcp:1")
        self.assertEqual(self.context(asked), said)     # once, whole: it fits in neighbours.NOTE_LIMIT
        self.assertEqual(indexed(self.db, "challenge", "context"), [asked])
        hits = recall.search(self.db, "What is Caroline excited about in the adoption process?", k=2)
        self.assertEqual({h["id"] for h in hits}, {asked, answer})

    def test_a_note_that_asks_shows_the_start_of_the_note_after_it_with_its_id(self):
        asked = self.db.add_note("Ben: Where did you find your greyhound?", cwd="/chat", conversation="mcp:1")
        other = self.db.add_note("Ben: Where is the bakery?", cwd="/chat", conversation="mcp:2")
        answer = self.db.add_note("Ana: At the rescue shelter on Elm Street.", cwd="/chat", conversation="mcp:1")
        hits = recall.recall(self.db, "where did Ana find her greyhound", k=3)
        found = next(h for h in hits if h["id"] == asked)
        self.assertEqual(found["reply"], f"next note [e{answer}]: Ana: At the rescue shelter on Elm Street.")
        self.assertIn(found["reply"], recall.hits_text("where did Ana find her greyhound", hits))
        self.assertNotIn("reply", next(h for h in hits if h["id"] == answer))    # it asks nothing
        self.assertIsNone(self.db.note_after(other, "2100-01-01T00:00:00Z"))    # alone in its conversation

    def test_the_answer_to_a_question_note_ranks_right_after_it(self):
        asked = self.db.add_note("Ana: How long have you been married?", cwd="/chat", conversation="mcp:1")
        answer = self.db.add_note("Ben: Twelve years in June, we met at university.", cwd="/chat",
                                  conversation="mcp:1")
        self.db.add_note("Ana: My sister got married last spring, a long ceremony.", cwd="/chat",
                         conversation="mcp:2")
        self.db.add_note("Ben: That oak has stood there a long time.", cwd="/chat", conversation="mcp:2")
        # The answer holds none of the words asked but in its context (the question), at a neighbour's
        # weight: without the question it ranks below both notes that say "long" in their own words.
        hits = recall.search(self.db, "How long has Ben been married?", k=2)
        self.assertEqual([h["id"] for h in hits], [asked, answer])
        self.assertEqual(hits[1]["relevance"], hits[0]["relevance"])    # as relevant: the list stays in order

    def test_the_migration_makes_again_the_context_a_long_note_gave_twice(self):
        path, db = self.stopped_before("note_contexts")
        cut = LONG_NOTE[:97] + "…"
        for n, (text, context) in enumerate([(LONG_NOTE.strip(), "Its password is in the vault."),
                                             ("Its password is in the vault.", f"{cut}: {cut}")]):
            db.execute("INSERT INTO episodes (key, kind, title, gist, facts, at, created, last_touched, embedding, "
                       "context) VALUES (?, 'note', ?, ?, ?, ?, ?, ?, ?, ?)",
                       (f"k{n}", text[:97] + "…" if len(text) > 100 else text, text,
                        '{"conversation": "mcp:9"}', f"2026-09-25T15:0{n}:00Z", "2026-09-25T15:00:00Z",
                        "2026-09-25T15:00:00Z", embed.encode(embed.vector(text)), context))
        # as the store indexed what it stored, at the commit (before m027 gave each field its grams)
        db.execute(f"INSERT INTO recall_index (rowid, title, body, detail, context) SELECT id, "
                   f"{migrations.EPISODE_TITLE.format('episodes')}, gist, detail, context FROM episodes WHERE id >= 1")
        db.close()
        with store.connect(path) as old:
            self.assertEqual(raw_db(old).execute("PRAGMA user_version").fetchone()[0], len(migrations.MIGRATIONS))
            self.assertEqual(old.episode(2)["context"].count("bastion"), 1)
            self.assertTrue(old.episode(2)["context"].startswith("The staging database is reached through"))
            self.assertEqual(old.episode(1)["context"], "Its password is in the vault.")
            self.assertEqual(indexed(old, "office", "context"), [2])

    def test_a_long_note_is_indexed_once_not_again_as_its_cut_title(self):
        note = self.db.add_note(LONG_NOTE, cwd="/shop")
        self.assertTrue(self.db.episode(note)["title"].endswith("…"))     # its first line, cut at 100
        self.assertEqual(indexed(self.db, "bastion", "title"), [])       # not counted again at twice a body word
        self.assertEqual(indexed(self.db, "bastion", "body"), [note])
        cut = self.db.add_note("deploy " * 13 + "bastionhost")     # its title ends in 'bastio…', a word it never says
        self.assertEqual(indexed(self.db, "bastionhost"), [cut])
        raw_db(self.db).execute("UPDATE episodes SET gist = ? WHERE id = ?", (LONG_NOTE + " Ask Ops.", note))
        self.assertEqual(indexed(self.db, "ops", "body"), [note])
        raw_db(self.db).execute("DELETE FROM episodes WHERE id = ?", (note,))
        self.assertEqual(indexed(self.db, "bastion"), [])

    def test_the_migration_takes_a_cut_title_out_of_the_index(self):
        path, db = self.stopped_before("cut_titles_unindexed")
        for n, text in enumerate([LONG_NOTE, "Its password is in the vault."]):
            db.execute("INSERT INTO episodes (key, kind, title, gist, facts, at, created, last_touched, embedding) "
                       "VALUES (?, 'note', ?, ?, '{}', ?, ?, ?, ?)",
                       (f"k{n}", text[:99] + "…" if len(text) > 100 else text, text, f"2026-09-25T15:0{n}:00Z",
                        "2026-09-25T15:00:00Z", "2026-09-25T15:00:00Z", embed.encode(embed.vector(text))))
        db.execute("INSERT INTO lessons (text, kind, created, updated, embedding) VALUES ('Reach staging through "
                   "the bastion.', 'project', '2026-09-25T15:00:00Z', '2026-09-25T15:00:00Z', x'')")
        db.execute("INSERT INTO recall_index (rowid, title, body, detail, context) SELECT id, CASE WHEN "  # as m007 did
                   "instr(gist, title) = 1 THEN '' ELSE title END, gist, detail, context FROM episodes")
        self.assertEqual(len(db.execute("SELECT rowid FROM recall_index WHERE recall_index MATCH "
                                        "'title : bastion'").fetchall()), 1)
        db.close()
        with store.connect(path) as old:
            self.assertEqual(raw_db(old).execute("PRAGMA user_version").fetchone()[0], len(migrations.MIGRATIONS))
            self.assertEqual(indexed(old, "bastion", "title"), [])
            self.assertEqual(indexed(old, "bastion", "body"), [-1, 1])     # the lesson, the note
            self.assertEqual(indexed(old, "vault", "body"), [2])
            raw_db(old).execute("DELETE FROM episodes WHERE id = 1")        # its trigger forgets what was indexed
            self.assertEqual(indexed(old, "bastion"), [-1])
            self.assertEqual([h["id"] for h in recall.search(old, "where is the staging password", k=2)
                              if h["source"] == "episode"], [2])

    def test_the_migration_fills_the_context_of_what_was_stored_before_it(self):
        path, db = self.stopped_before("recall_context")
        rows = [("s1", "session", "add tags to posts", "Asked: add tags to posts.", "2026-09-25T13:30:00Z", "{}"),
                ("s1", "error", "`npx prisma migrate dev` failed: Drift detected", "drift", "2026-09-25T14:00:00Z",
                 "{}"),
                (None, "note", "Staging is behind the VPN.", "Staging is behind the VPN.", "2026-09-25T15:00:00Z",
                 '{"conversation": "mcp:9"}'),
                (None, "note", "Its password is in the vault.", "Its password is in the vault.",
                 "2026-09-25T15:01:00Z", '{"conversation": "mcp:9"}')]
        for n, (sid, kind, title, gist, at, facts) in enumerate(rows):
            db.execute("INSERT INTO episodes (key, session_id, kind, title, gist, facts, at, created, last_touched, "
                       "embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (f"k{n}", sid, kind, title, gist, facts, at, at, at, embed.encode(embed.vector(title))))
        db.close()
        with store.connect(path) as old:
            self.assertEqual(raw_db(old).execute("PRAGMA user_version").fetchone()[0], len(migrations.MIGRATIONS))
            self.assertEqual(old.episode(2)["context"], "add tags to posts / Asked: add tags to posts.")
            self.assertEqual(old.episode(4)["context"], "Staging is behind the VPN.")
            self.assertEqual(indexed(old, "staging", "context"), [4])
            self.assertEqual(indexed(old, "drift"), [2])   # the own fields are indexed again too
            self.assertEqual(recall.search(old, "staging password", k=1, now=NOW)[0]["id"], 4)
