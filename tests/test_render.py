import json
import os
import re
import unittest
from datetime import datetime, timezone
from pathlib import Path

from openmemory import embed, errors, files, ingest, paths, render, store
from tests.fixtures import Transcript, project_folder, test_session
from tests.helpers import ROOT, TempHome, raw_db

GOLDEN = ROOT / "tests" / "data" / "render"
TEXT = "In this repository run the tests with `pytest -q`, not `python -m unittest`"


def add_lesson(db, text=TEXT, kind="feedback", cwd=None, strength=1.0, seen=1, sources=(),
               created="2026-11-05T10:00:00.000000Z", archived=0):
    """A lesson as sleep would store it (sleep is its own stage)."""
    with db.transaction():
        cur = raw_db(db).execute(
            "INSERT INTO lessons (text, kind, cwd, strength, seen, sources, created, updated, archived, embedding) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (text, kind, cwd, strength, seen, json.dumps(list(sources)), created, created, archived,
             embed.encode(embed.vector(text))))
    return cur.lastrowid


def outside(data: bytes) -> bytes:
    """Every byte of MEMORY.md outside the openmemory markers."""
    begin = data.index(render.BEGIN.encode())
    end = data.index(render.END.encode()) + len(render.END)
    return data[:begin] + data[end:]


def links(text: str) -> list:
    """Targets of the Markdown links in text (escaped brackets are not links)."""
    return re.findall(r"(?<!\\)\]\(([^)]*)\)", text)


class RenderCase(TempHome):
    """A git repository with two sessions in which the person made the same correction."""

    def setUp(self):
        super().setUp()
        self.repo = Path(os.path.realpath(self.tmp)) / "shop"
        (self.repo / ".git").mkdir(parents=True)
        (self.repo / "src").mkdir()
        self.memory = paths.memory_dir_for(self.repo)
        self.db = store.connect()
        self.addCleanup(self.db.close)

    def two_corrections(self, cwd=None):
        cwd = str(cwd or self.repo)
        for day in (2, 5):
            t = test_session(cwd=cwd, start=datetime(2026, 11, day, 9, 0, tzinfo=timezone.utc))
            t.write(project_folder(self.claude, cwd))
        ingest.ingest(self.db)
        return [e["id"] for e in self.db.episodes("correction")]

    def lesson(self, **kw):
        kw.setdefault("cwd", str(self.repo))
        if "sources" not in kw:
            kw["sources"] = self.two_corrections(kw["cwd"] or self.repo)
            kw.setdefault("seen", 2)
        return add_lesson(self.db, **kw)

    def render(self, **kw):
        return render.render(self.db, now="2026-11-06T03:00:00Z", **kw)

    def md(self) -> bytes:
        return (self.memory / "MEMORY.md").read_bytes()

    def state(self, name):
        return json.loads((self.home / name).read_text())


class LessonFiles(RenderCase):
    def test_a_lesson_becomes_a_topic_file_and_one_index_line(self):
        lid = self.lesson(strength=1.3)
        result = self.render()
        topic = self.memory / f"om-{lid}.md"
        self.assertEqual(sorted(result["written"]), sorted([str(topic), str(self.memory / "MEMORY.md")]))
        self.assertEqual(result["folders"], [str(self.memory)])
        text = topic.read_text()
        front = text.split("---\n")[1]
        self.assertEqual(front, f'name: om-{lid}\ndescription: "{TEXT}"\ntype: feedback\nmetadata:\n  type: feedback\n')
        self.assertIn("\n" + TEXT + "\n", text)
        self.assertIn("**Why:** the user corrected this 2 times, in 2 sessions:", text)
        self.assertIn("- 2026-11-05: After the agent ran `python -m unittest`, the person said: "
                      "\"No, don't use unittest here, run the tests with pytest -q\"", text)
        self.assertIn("- 2026-11-02: ", text)
        self.assertIn("**How to apply:** When you are about to run `python -m unittest` in this project", text)
        how = text.split("**How to apply:**", 1)[1]
        self.assertNotIn(str(self.repo), how, "no path from the person's machine in How to apply")
        md = self.md().decode()
        self.assertEqual(md, f"{render.BEGIN}\n{render.HEADING}\n"
                             f"- [{TEXT}](om-{lid}.md) — seen in 2 sessions, last 2026-11-05\n{render.END}\n")
        self.assertEqual(oct(topic.stat().st_mode & 0o777), "0o600")
        written = self.state("written.json")["files"]
        self.assertEqual(written[str(topic)]["lesson"], lid)
        import hashlib
        self.assertEqual(written[str(topic)]["sha256"], hashlib.sha256(topic.read_bytes()).hexdigest())

    def test_a_windows_path_outside_code_is_written_as_it_is(self):
        # slash46: every backslash was escaped, so "X:\03_ACG\Odoo_Docker" outside a code span read
        # "X:\\03_ACG\\Odoo_Docker" in MEMORY.md, which the model reads as written; before a letter or a
        # digit a backslash is itself in Markdown. One at the end is still escaped, a word holding one
        # before punctuation or a bracket is a code span (red47: escaped, the model read two), and no
        # link is made.
        text = "Read X:\\03_ACG\\Odoo_Docker\\docker-compose.yml first; not [this](x) nor a\\[b"
        lid = add_lesson(self.db, text, kind="project", cwd=str(self.repo), strength=1.0, sources=[])
        self.render()
        line = next(ln for ln in self.md().decode().splitlines() if f"(om-{lid}.md)" in ln)
        self.assertIn("[Read X:\\03_ACG\\Odoo_Docker\\docker-compose.yml first; not \\[this\\](x) nor `a\\[b`](om-",
                      line)
        self.assertEqual(links(line), [f"om-{lid}.md"])
        self.assertEqual(render.neutralise("ends in C:\\"), "ends in C:\\\\")     # what follows it is the line's

    def test_a_failure_lesson_the_person_edited_is_followed_not_expected_to_fail(self):
        """Its text is theirs now: the file no longer tells the agent to expect a failure under it."""
        from openmemory import review
        lid = add_lesson(self.db, "Ask before running database migrations", kind="project", cwd=str(self.repo),
                         strength=1.0, sources=[])
        mine = "Run `make db-up` before any database migration in this repository"
        review.edit(self.db, lid, mine)
        self.render()
        text = (self.memory / f"om-{lid}.md").read_text()
        self.assertIn(mine, text)
        how = text.split("**How to apply:** ", 1)[1].split("\n", 1)[0]
        self.assertEqual(how, "Whenever this comes up in this project, do it this way from the start, "
                              "without waiting to be told.")

    def test_golden_topic_file_and_memory_md(self):
        """The rendered files as a person reads them: a format change is a visible diff here."""
        lid = self.lesson(strength=1.3)
        add_lesson(self.db, "Ask before running database migrations", kind="project", cwd=str(self.repo),
                   strength=0.8, sources=[])
        self.render()
        self.assertEqual(lid, 1)
        for name in ("om-1.md", "om-2.md", "MEMORY.md"):
            got = (self.memory / name).read_text().replace(str(self.repo), "$REPO")
            golden = GOLDEN / name
            if os.environ.get("OPENMEMORY_UPDATE_GOLDEN"):
                golden.parent.mkdir(parents=True, exist_ok=True)
                golden.write_text(got)
            self.assertEqual(got, golden.read_text(), name)

    def test_rendering_again_changes_nothing(self):
        self.lesson()
        self.render()
        before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in [*self.memory.iterdir(), *self.home.glob("*.json*")]}
        again = render.render(self.db, now="2026-11-07T03:00:00Z")
        self.assertEqual((again["written"], again["removed"], again["left"]), ([], [], []))
        self.assertEqual({p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before}, before)

    def test_strongest_first_and_at_most_the_configured_number(self):
        ids = [add_lesson(self.db, f"Lesson number {n} about widget {n}", cwd=str(self.repo), strength=n / 10)
               for n in range(1, 26)]
        self.render()
        lines = [l for l in self.md().decode().splitlines() if l.startswith("- [")]
        self.assertEqual(len(lines), render.INDEX_LINES)
        self.assertEqual([int(re.search(r"om-(\d+)", l).group(1)) for l in lines], ids[::-1][:20])
        self.assertEqual(sorted(p.name for p in self.memory.glob("om-*.md")),
                         sorted(f"om-{i}.md" for i in ids[5:]))
        os.environ[render.INDEX_LINES_ENV] = "3"
        self.addCleanup(os.environ.pop, render.INDEX_LINES_ENV, None)
        result = self.render()
        self.assertEqual(len([l for l in self.md().decode().splitlines() if l.startswith("- [")]), 3)
        self.assertEqual(len(result["removed"]), 17)  # files nobody edited, no longer indexed
        self.assertEqual(len(list(self.memory.glob("om-*.md"))), 3)

    def test_index_lines_stay_one_line_under_150_characters(self):
        long = "Always " + " ".join(f"check component{n}" for n in range(40))
        weird = "Use tabs\tnot\nspaces\r\nin the Makefile\u2028ever \U0001F642 — 中文 "
        for text in (long, weird, "x" * 400):
            add_lesson(self.db, text, cwd=str(self.repo), seen=12345)
        self.render()
        lines = [l for l in self.md().decode().split("\n") if l.startswith("- [")]
        self.assertEqual(len(lines), 3)
        for line in lines:
            self.assertLess(len(line), render.LINE_CHARS)
            self.assertRegex(line, r"^- \[.+\]\(om-\d+\.md\) — seen in 12345 sessions")
        self.assertTrue(any("Use tabs not spaces in the Makefile ever" in l for l in lines), lines)

    def test_an_index_line_is_never_cut_inside_a_code_span(self):
        # cut inside `gh pr diff …` the opening backtick showed escaped and the command as prose
        text = ("In this project `gh pr diff N --stat` fails with unknown flag: --stat; run it as "
                "`gh pr diff 104 --name-only` to list the changed files of a pull request instead")
        line = render.index_line({"id": 18, "text": text, "seen": 2, "kind": "project",
                                  "updated": "2026-02-01T00:00:00Z"})
        self.assertLess(len(line), render.LINE_CHARS)
        self.assertIn("`gh pr diff N --stat`", line)
        self.assertNotIn("\\`", line)
        self.assertEqual(line.split("](om-18.md)")[0].count("`") % 2, 0)

    def test_a_lesson_that_fits_without_its_date_is_not_cut(self):
        # A fresh-user pass: a lesson edited to 101 characters (`lessons edit` takes 150) lost its
        # last words in MEMORY.md, "(else: relation "users" does not …", to keep the date.
        text = 'In this repository run `pnpm db:migrate` before `sh seed.sh` (else: relation "users" does not exist).'
        line = render.index_line({"id": 3, "text": text, "seen": 2, "kind": "project",
                                  "updated": "2026-12-05T14:55:00Z"})
        self.assertLess(len(line), render.LINE_CHARS)
        self.assertEqual(line, "- [In this repository run `pnpm db:migrate` before `sh seed.sh` (else: relation "
                               "\"users\" does not exist).](om-3.md) — seen in 2 sessions")
        short = render.index_line({"id": 4, "text": "Run the tests with pytest -q.", "seen": 2, "kind": "project",
                                   "updated": "2026-12-05T14:55:00Z"})
        self.assertTrue(short.endswith("— seen in 2 sessions, last 2026-12-05"), short)  # the date when it fits

    def test_no_lessons_no_files(self):
        result = self.render()
        self.assertEqual(result["written"], [])
        self.assertFalse(self.projects.exists())
        self.assertEqual((self.home / "lessons.jsonl").read_text(), "")

    def test_lessons_with_no_cwd_go_to_every_project(self):
        blog = Path(os.path.realpath(self.tmp)) / "blog"
        blog.mkdir()
        self.two_corrections(self.repo)
        test_session(cwd=str(blog / "posts")).write(project_folder(self.claude, blog / "posts"))
        ingest.ingest(self.db)
        loose = self.projects / "-somewhere-else" / "memory"  # a memory folder Claude Code made
        loose.mkdir(parents=True)
        lid = add_lesson(self.db, "Write commit messages in the imperative mood", cwd=None)
        result = self.render()
        folders = {paths.memory_dir_for(self.repo), paths.memory_dir_for(blog / "posts"), loose}
        self.assertEqual(set(map(Path, result["folders"])), folders)
        for folder in folders:
            self.assertTrue((folder / f"om-{lid}.md").is_file(), folder)
            self.assertIn(f"](om-{lid}.md)", (folder / "MEMORY.md").read_text())
        self.assertIn("in any project", (loose / f"om-{lid}.md").read_text())

    def test_a_lesson_no_longer_live_leaves_with_its_file_and_line(self):
        lid = self.lesson()
        keep = add_lesson(self.db, "Keep the changelog up to date", cwd=str(self.repo))
        self.render()
        raw_db(self.db).execute("UPDATE lessons SET archived = 1 WHERE id = ?", (lid,))
        result = self.render()
        self.assertEqual(result["removed"], [str(self.memory / f"om-{lid}.md")])
        self.assertEqual(result["vetoed"], [])
        self.assertFalse((self.memory / f"om-{lid}.md").exists())
        md = self.md().decode()
        self.assertNotIn(f"om-{lid}.md", md)
        self.assertIn(f"om-{keep}.md", md)
        self.assertNotIn(str(self.memory / f"om-{lid}.md"), self.state("written.json")["files"])
        self.assertEqual(raw_db(self.db).execute("SELECT vetoed FROM lessons WHERE id = ?", (lid,)).fetchone()[0], 0)


class TheUserDecides(RenderCase):
    def test_a_hundred_renders_keep_the_users_lines_byte_for_byte(self):
        self.memory.mkdir(parents=True)
        above = "\ufeff# My memory\r\n- [Deploys](deploys.md) — we ship on Fridays\r\n".encode() + b"caf\xe9 raw byte\r\n"
        (self.memory / "MEMORY.md").write_bytes(above)
        ids = [self.lesson(strength=1.0)]
        self.render()
        data = self.md()
        self.assertTrue(data.startswith(above), data)  # appended after the person's lines
        self.assertIn(b"\r\n" + render.BEGIN.encode() + b"\r\n", data)  # in the file's own line endings
        below = b"\r\n## Later notes\r- an old Mac line ending\n- and no newline at the end"
        (self.memory / "MEMORY.md").write_bytes(data + below)
        mine = outside(self.md())
        for n in range(100):
            if n % 3 == 0:
                ids.append(add_lesson(self.db, f"Lesson {n}: prefer module {n} over module {n + 1}",
                                      cwd=str(self.repo), strength=(n % 7) / 3))
            if n % 5 == 4:
                raw_db(self.db).execute("UPDATE lessons SET archived = 1 WHERE id = ?", (ids[n % len(ids)],))
            if n % 4 == 1:
                raw_db(self.db).execute("UPDATE lessons SET strength = strength + 0.4, seen = seen + 1 WHERE id = ?",
                                   (ids[-1],))
            result = self.render()
            self.assertEqual(result["warnings"], [])
            data = self.md()
            self.assertEqual(outside(data), mine, f"render {n + 1}")
            self.assertTrue(data.endswith(below))
            live = [r[0] for r in raw_db(self.db).execute(
                "SELECT id FROM lessons WHERE NOT archived ORDER BY strength DESC, seen DESC, updated DESC, id")]
            section = data[data.index(render.BEGIN.encode()):data.index(render.END.encode())].decode()
            self.assertEqual([int(i) for i in re.findall(r"\]\(om-(\d+)\.md\)", section)], live[:20])

    def test_deleting_a_lesson_file_vetoes_it_for_good(self):
        lid = self.lesson()
        self.render()
        topic = self.memory / f"om-{lid}.md"
        topic.unlink()
        result = self.render()
        self.assertEqual(result["vetoed"], [{"id": lid, "text": TEXT}])
        self.assertFalse(topic.exists())
        self.assertFalse((self.memory / "MEMORY.md").exists())  # it held only the section: it goes too
        self.assertEqual(raw_db(self.db).execute("SELECT vetoed FROM lessons WHERE id = ?", (lid,)).fetchone()[0], 1)
        [veto] = self.state("vetoed.json")["lessons"]
        self.assertEqual((veto["id"], veto["text"], veto["file"]), (lid, TEXT, str(topic)))
        self.assertEqual(self.render()["vetoed"], [])  # reported once
        # re-ingest everything, then consolidation makes the same lesson again under a new id
        ingest.ingest(self.db, force=True)
        again = add_lesson(self.db, TEXT.upper() + ".", cwd=str(self.repo), sources=[], strength=2)
        self.render()
        self.assertFalse((self.memory / f"om-{again}.md").exists())
        self.assertFalse((self.memory / "MEMORY.md").exists())
        self.assertEqual(raw_db(self.db).execute("SELECT vetoed FROM lessons WHERE id = ?", (again,)).fetchone()[0], 1)
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["lessons_live"], 0)

    def test_a_veto_of_the_last_lesson_takes_the_section_out_markers_and_all(self):
        self.memory.mkdir(parents=True)
        for mine in (b"# My memory\n- [Deploys](deploys.md) \xe2\x80\x94 Fridays\n",   # appended after
                     b"# My memory\r\n" + b"- a line\r\n" * 199 + b"- the last, no newline"):  # inserted at the top
            with self.subTest(mine=mine[:20]):
                (self.memory / "MEMORY.md").write_bytes(mine)
                lid = add_lesson(self.db, f"Lesson {len(mine)}: prefer ruff over flake8 here", cwd=str(self.repo),
                                 strength=1.5)
                self.render()
                self.assertIn(render.BEGIN.encode(), self.md())
                (self.memory / f"om-{lid}.md").unlink()
                result = self.render()
                self.assertEqual([v["id"] for v in result["vetoed"]], [lid])
                self.assertEqual(self.md(), mine)  # no empty begin/end markers: the person's bytes as they were
                self.assertEqual(result["warnings"], [])
                self.assertEqual(self.render()["written"], [])

    def test_a_rebuilt_database_keeps_the_veto(self):
        lid = self.lesson()
        self.render()
        (self.memory / f"om-{lid}.md").unlink()
        self.render()
        self.db.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(paths.db_path()) + suffix).unlink(missing_ok=True)
        self.db = store.connect()
        self.addCleanup(self.db.close)
        other = add_lesson(self.db, "Use black for formatting", cwd=str(self.repo))  # takes the old id
        same = add_lesson(self.db, TEXT, cwd=str(self.repo))
        self.assertEqual(other, lid)
        result = self.render()
        self.assertTrue((self.memory / f"om-{other}.md").is_file())
        self.assertFalse((self.memory / f"om-{same}.md").exists())
        self.assertEqual(result["vetoed"], [])

    def test_an_edited_lesson_file_is_left_as_the_person_wrote_it(self):
        lid = self.lesson()
        self.render()
        topic = self.memory / f"om-{lid}.md"
        edited = topic.read_text().replace("pytest -q", "pytest -q -x") + "My own note.\n"
        topic.write_text(edited)
        raw_db(self.db).execute("UPDATE lessons SET seen = 5, strength = 2 WHERE id = ?", (lid,))
        result = self.render()
        self.assertEqual(topic.read_text(), edited)
        self.assertEqual(result["left"], [str(topic)])
        self.assertEqual(result["vetoed"], [])
        self.assertIn(f"](om-{lid}.md) — seen in 5 sessions", self.md().decode())
        raw_db(self.db).execute("UPDATE lessons SET archived = 1 WHERE id = ?", (lid,))
        result = self.render()
        self.assertEqual(topic.read_text(), edited)  # not removed either
        self.assertEqual(result["removed"], [str(self.memory / "MEMORY.md")])  # the index held only it

    def test_a_file_openmemory_did_not_write_is_not_touched(self):
        lid = self.lesson()
        self.memory.mkdir(parents=True)
        (self.memory / f"om-{lid}.md").write_text("the person's own file\n")
        result = self.render()
        self.assertEqual((self.memory / f"om-{lid}.md").read_text(), "the person's own file\n")
        self.assertIn("was not written by openmemory", result["warnings"][0])
        self.assertFalse((self.memory / "MEMORY.md").exists())  # nothing of ours to index there

    def test_a_deleted_memory_folder_or_another_config_dir_vetoes_nothing(self):
        lid = self.lesson()
        self.render()
        for p in self.memory.iterdir():
            p.unlink()
        self.memory.rmdir()
        result = self.render()
        self.assertEqual(result["vetoed"], [])
        self.assertTrue((self.memory / f"om-{lid}.md").is_file())
        os.environ["CLAUDE_CONFIG_DIR"] = str(self.tmp / "other-claude")
        result = self.render()
        self.assertEqual(result["vetoed"], [])
        self.assertIn(str(self.memory / f"om-{lid}.md"), self.state("written.json")["files"])

    def test_damaged_markers_leave_memory_md_alone(self):
        self.lesson()
        self.memory.mkdir(parents=True)
        damaged = f"mine\n{render.BEGIN}\n- old\n{render.BEGIN}\nmore\n".encode()
        (self.memory / "MEMORY.md").write_bytes(damaged)
        result = self.render()
        self.assertEqual(self.md(), damaged)
        self.assertIn("markers are damaged (2 begin, 0 end)", result["warnings"][0])

    def test_unreadable_state_stops_the_render_and_changes_nothing(self):
        self.lesson()
        self.home.mkdir(exist_ok=True)
        (self.home / "vetoed.json").write_text("{not json")
        p = self.cli("render")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout, "")
        self.assertRegex(p.stderr, r"^openmemory: error: cannot read .*vetoed\.json .*fix or restore it")
        self.assertFalse(self.memory.exists())
        self.assertEqual((self.home / "vetoed.json").read_text(), "{not json")


class Races(RenderCase):
    """Claude Code may write MEMORY.md or a topic file between our read and our rename."""

    def test_a_write_between_read_and_rename_is_kept(self):
        self.lesson()
        self.render()
        add_lesson(self.db, "Keep the changelog up to date", cwd=str(self.repo), strength=3)
        calls = []

        def claude_writes(path):
            calls.append(path.name)
            if path.name == "MEMORY.md" and calls.count("MEMORY.md") == 1:
                with open(path, "ab") as f:
                    f.write(b"- [Claude's own](user.md) - written meanwhile\n")

        result = self.render(before_replace=claude_writes)
        md = self.md().decode()
        self.assertEqual(calls.count("MEMORY.md"), 2)  # lost the race once, then read again
        self.assertIn("- [Claude's own](user.md) - written meanwhile\n", md)
        self.assertIn("Keep the changelog up to date", md)
        self.assertEqual(result["warnings"], [])

    def test_a_file_created_between_read_and_rename_is_kept(self):
        self.lesson()
        self.memory.mkdir(parents=True)

        def claude_creates(path):
            if path.name == "MEMORY.md" and not path.exists():
                path.write_text("# Claude's index\n- [Role](user_role.md) — the user is a data engineer\n")

        self.render(before_replace=claude_creates)
        md = self.md().decode()
        self.assertTrue(md.startswith("# Claude's index\n- [Role](user_role.md) — the user is a data engineer\n"))
        self.assertIn(TEXT, md)

    def test_a_file_that_keeps_changing_is_never_overwritten(self):
        self.lesson()
        self.memory.mkdir(parents=True)
        (self.memory / "MEMORY.md").write_text("start\n")
        n = []

        def busy(path):
            if path.name == "MEMORY.md":
                n.append(1)
                path.write_text(f"start\nedit {len(n)}\n")

        result = self.render(before_replace=busy)
        self.assertEqual(self.md().decode(), f"start\nedit {render.WRITE_ATTEMPTS}\n")
        self.assertIn("kept changing", result["warnings"][0])
        self.assertNotIn(str(self.memory / "MEMORY.md"), result["written"])

    def test_a_topic_file_changed_while_rewriting_stays_changed(self):
        lid = self.lesson()
        self.render()
        raw_db(self.db).execute("UPDATE lessons SET seen = 9 WHERE id = ?", (lid,))
        topic = self.memory / f"om-{lid}.md"

        def claude_edits(path):
            if path == topic:
                path.write_text("Claude rewrote this\n")

        result = self.render(before_replace=claude_edits)
        self.assertEqual(topic.read_text(), "Claude rewrote this\n")
        self.assertEqual(result["left"], [str(topic)])
        self.assertEqual(self.render()["left"], [str(topic)])  # and stays the person's


class Placement(RenderCase):
    def test_a_long_file_gets_the_section_at_the_top_and_a_warning(self):
        self.lesson()
        self.memory.mkdir(parents=True)
        mine = "# Index\n" + "".join(f"- fact {n}\n" for n in range(199))  # 200 lines
        (self.memory / "MEMORY.md").write_text(mine)
        result = self.render()
        md = self.md().decode()
        self.assertTrue(md.startswith(f"# Index\n{render.BEGIN}\n{render.HEADING}\n- ["), md[:200])
        start, end = render.find_section(md)
        self.assertEqual(md[:start] + md[end + 1:], mine)  # the section and its own line ending added, nothing else
        self.assertEqual(len(result["warnings"]), 1)
        self.assertIn("2 of your own line(s) now fall past", result["warnings"][0])
        self.assertEqual(render.unseen(md), (0, 2))

    def test_a_short_file_gets_the_section_at_the_end(self):
        self.lesson()
        self.memory.mkdir(parents=True)
        (self.memory / "MEMORY.md").write_text("# Index\n- fact\n")
        self.render()
        self.assertTrue(self.md().decode().startswith(f"# Index\n- fact\n\n{render.BEGIN}\n"))

    def test_html_comments_do_not_count_but_the_users_lines_above_do(self):
        comments = "".join(f"<!-- note {n} -->\n" for n in range(300))  # stripped by Claude Code
        text = comments + "".join(f"line {n}\n" for n in range(198)) + render.section_text(["- [a](om-1.md) — x"]) + "\n"
        self.assertEqual(render.unseen(text), (0, 0))  # 198 + heading + 1 line = 200
        self.assertEqual(render.unseen("x\n" + text), (1, 0))
        result_text = "".join(f"line {n}\n" for n in range(250))
        self.assertEqual(render.unseen(result_text), (0, 50))
        wide = "".join("y" * 199 + "\n" for _ in range(130))  # 200 bytes a line: 125 fit in 25,000
        self.assertEqual(render.unseen(wide), (0, 5))

    def test_user_lines_pushing_the_section_past_the_budget_warn(self):
        self.lesson()
        self.render()
        (self.memory / "MEMORY.md").write_bytes(b"".join(b"- fact %d\n" % n for n in range(199)) + self.md())
        result = self.render()
        self.assertEqual(len(result["warnings"]), 1)
        self.assertIn("1 line(s) of openmemory's section", result["warnings"][0])  # its heading still loads


class OneFolderTwoNames(RenderCase):
    """A disk that ignores case (macOS's) holds Claude Code's project folders of `…/Code/shop` and
    `…/code/shop` as one folder when sessions ran in the project typed both ways: its MEMORY.md is
    one file, written once with every lesson of both (a link from one project folder to another
    stands for it here)."""

    def setUp(self):
        super().setUp()
        self.other = Path(os.path.realpath(self.tmp)) / "shop2"
        (self.other / ".git").mkdir(parents=True)
        self.folder = paths.projects_dir() / paths.project_slug(self.repo)
        self.folder.mkdir(parents=True)
        os.symlink(self.folder, paths.projects_dir() / paths.project_slug(self.other))
        self.ids = [add_lesson(self.db, text="In this project run `make check` before committing", cwd=str(self.repo)),
                    add_lesson(self.db, text="In this project the API listens on port 4000", cwd=str(self.other))]

    def indexed(self) -> list:
        return re.findall(r"\]\((om-\d+\.md)\)", (self.folder / "memory" / "MEMORY.md").read_text())

    def test_the_one_memory_lists_the_lessons_of_both_names(self):
        # written as two folders, each MEMORY.md write replaced the other's lessons in the one file
        for _ in range(2):
            result = self.render()
            self.assertEqual(sorted(self.indexed()), ["om-1.md", "om-2.md"])
            self.assertEqual(result["folders"], [str(self.folder / "memory")])
            self.assertEqual(result["vetoed"], [])
        self.assertEqual(sorted(os.listdir(self.folder / "memory")), ["MEMORY.md", "om-1.md", "om-2.md"])

    def test_what_a_render_wrote_under_the_other_name_stays_ours(self):
        self.render()
        alias = paths.projects_dir() / paths.project_slug(self.other) / "memory"
        state = self.state("written.json")
        state["files"] = {(str(alias / Path(name).name) if name.endswith("om-2.md") else name): rec
                          for name, rec in state["files"].items()}     # as a render before wrote it
        (self.home / "written.json").write_text(json.dumps(state))
        result = self.render()
        self.assertEqual(sorted(self.indexed()), ["om-1.md", "om-2.md"])
        self.assertEqual(result["removed"], [])
        self.assertEqual(sorted(self.state("written.json")["files"]),
                         [str(self.folder / "memory" / "om-1.md"), str(self.folder / "memory" / "om-2.md")])
        self.assertTrue(all(not ls["vetoed"] for ls in self.db.all_lessons()))


class ProjectsNotHere(RenderCase):
    def test_no_claude_code_project_folder_is_made_for_a_project_not_on_this_machine(self):
        # transcripts copied from another machine: their folder is not here, nor does Claude Code
        # keep a project for it; the lesson is in lessons.jsonl, the render says where
        elsewhere = "/Users/someone-else/work/cli"
        add_lesson(self.db, cwd=elsewhere)
        p = self.ok("render")
        self.assertFalse(paths.projects_dir().exists() and any(paths.projects_dir().iterdir()),
                         list(paths.projects_dir().rglob("*")) if paths.projects_dir().exists() else [])
        self.assertIn("1 live lesson in 0 memory folders", p.stdout + p.stderr)
        self.assertIn("1 of a project not on this machine, in lessons.jsonl only", p.stdout + p.stderr)
        [listed] = [json.loads(line) for line in (self.home / "lessons.jsonl").read_text().splitlines()]
        self.assertEqual((listed["text"], listed["cwd"]), (TEXT, elsewhere))
        # once Claude Code keeps the project (a session there), its memory folder is written
        (paths.memory_dir_for(elsewhere).parent).mkdir(parents=True)
        self.assertIn("1 live lesson in 1 memory folder", self.ok("render").stdout)
        self.assertTrue((paths.memory_dir_for(elsewhere) / "MEMORY.md").is_file())


class SlugsAndSafety(RenderCase):
    def test_slug_rule_matches_claude_code(self):
        # Folder names the real Claude Code 2.1.328 made (PROTOCOL.md, "Written: Claude Code's memory folder").
        self.assertEqual(paths.project_slug("/tmp/om-probe-ilnu8anz/my repo_ö\U0001F642.v2"),
                         "-tmp-om-probe-ilnu8anz-my-repo-----v2")
        long = "/tmp/om-probe-2gzsrhyu/" + "a" * 120 + "/" + "b" * 120
        self.assertEqual(paths.project_slug(long), paths.project_slug(long)[:200] + "-9hzfh7")
        self.assertEqual(len(paths.project_slug(long)), 207)
        exactly = "/" + "c" * 199
        self.assertEqual(paths.project_slug(exactly), "-" + "c" * 199)
        # git root for a session in a subfolder; the folder itself outside any repository
        self.assertEqual(paths.memory_dir_for(self.repo / "src"), self.projects / paths.project_slug(self.repo) / "memory")
        loose = Path(os.path.realpath(self.tmp)) / "not a repo"
        loose.mkdir()
        self.assertEqual(paths.memory_dir_for(loose), self.projects / paths.project_slug(loose) / "memory")
        lid = add_lesson(self.db, "Build with make -j8", cwd=str(self.repo / "src"))
        self.render()
        self.assertTrue((self.memory / f"om-{lid}.md").is_file())

    def test_render_writes_only_in_memory_folders_and_its_home(self):
        def snapshot():
            return {p for p in self.tmp.rglob("*") if p.is_file()}

        self.lesson()
        odd = ["/tmp/../../etc", "/home/dev/../../../root/.ssh", "/x/\nnew line/<!-- -->/..", "/" + "é" * 300]
        for cwd in odd:
            add_lesson(self.db, f"Lesson for {cwd!r}", cwd=cwd)
        relative = add_lesson(self.db, "A lesson with a relative folder", cwd="../../outside")
        before = snapshot()
        result = self.render()
        new = snapshot() - before
        self.assertTrue(new)
        real_projects = Path(os.path.realpath(self.projects))
        for p in new:
            real = Path(os.path.realpath(p))
            in_memory = real.parent.name == "memory" and real.parent.parent.parent == real_projects
            self.assertTrue(in_memory or Path(os.path.realpath(self.home)) in real.parents, p)
        self.assertIn(f"lesson {relative} has a working folder that is not an absolute path", result["warnings"][0])
        self.assertTrue((self.projects / "-etc" / "memory" / "MEMORY.md").is_file())

    def test_guard_refuses_paths_outside(self):
        for bad in (self.tmp / "elsewhere.md", self.projects / "x" / "memory" / ".." / ".." / "evil.md",
                    self.projects / "x" / "notes" / "a.md", self.projects / "x" / "memory" / "sub" / "a.md"):
            for guard in (files.memory_guard, files.own_guard):
                with self.assertRaises(errors.RenderError, msg=str(bad)):
                    guard(bad)
        files.memory_guard(self.projects / "x" / "memory" / "om-1.md")
        files.own_guard(self.home / "lessons.jsonl")
        # each writer only for its own place: neither may write where the other does
        with self.assertRaises(errors.RenderError):
            files.memory_guard(self.home / "lessons.jsonl")
        with self.assertRaises(errors.RenderError):
            files.own_guard(self.projects / "x" / "memory" / "om-1.md")

    def test_a_memory_folder_linked_elsewhere_is_skipped(self):
        lid = self.lesson()
        outside_dir = self.tmp / "outside"
        outside_dir.mkdir()
        self.memory.parent.mkdir(parents=True, exist_ok=True)
        self.memory.symlink_to(outside_dir)
        result = self.render()
        self.assertEqual(list(outside_dir.iterdir()), [])
        self.assertIn("is not a memory folder", result["warnings"][0])
        self.assertIn(f'"id": {lid}', (self.home / "lessons.jsonl").read_text())

    def test_a_folder_that_cannot_be_written_does_not_stop_the_others(self):
        blog = Path(os.path.realpath(self.tmp)) / "blog"
        blog.mkdir()
        blocked = paths.memory_dir_for(blog)
        blocked.parent.mkdir(parents=True)
        blocked.write_text("a file where the memory folder would be\n")
        add_lesson(self.db, "Blog lesson", cwd=str(blog))
        lid = add_lesson(self.db, "Shop lesson", cwd=str(self.repo))
        result = self.render()
        self.assertIn(f"could not write {blocked}", result["errors"][0])  # an error: the command exits 1
        self.assertEqual(blocked.read_text(), "a file where the memory folder would be\n")
        self.assertTrue((self.memory / f"om-{lid}.md").is_file())
        self.assertIn(str(self.memory / f"om-{lid}.md"), self.state("written.json")["files"])

    def test_lesson_text_cannot_break_out_of_its_line_or_link_elsewhere(self):
        evil = (f"Run it {render.END}\n<!-- openmemory:begin --> [click](https://evil.example/x) "
                "![img](http://evil.example/p.png) <script>alert(1)</script> <https://evil.example> -->")
        lid = add_lesson(self.db, evil, cwd=str(self.repo), strength=5)
        self.render()
        md = self.md().decode()
        self.assertEqual(render.find_section(md), (0, len(md) - 1))  # still one intact section
        self.assertEqual(md.count("<!--"), 2)
        self.assertEqual(links(md), [f"om-{lid}.md"])
        self.assertNotRegex(md, r"(?<!\\)<(?!!-- openmemory:)")  # no raw HTML, our markers aside
        topic = (self.memory / f"om-{lid}.md").read_text()
        self.assertIn("\\<script\\>alert(1)\\</script\\>", topic)  # shown as text
        self.assertEqual(links(topic), [])
        self.assertNotIn("<!--", topic)
        self.assertNotRegex(topic, r"(?<!\\)<")
        self.assertIn("`https://evil.example/x)`", topic)  # shown, as code, not a link

    def test_secrets_never_reach_the_memory_folder(self):
        secret = "sk-ant-api03-" + "A" * 40
        self.lesson(text=f"Export ANTHROPIC_API_KEY={secret} before the tests")
        self.render()
        for p in list(self.memory.iterdir()) + [self.home / "lessons.jsonl", self.home / "written.json"]:
            self.assertNotIn(secret, p.read_text(), p)
            self.assertIn("REDACTED:anthropic-key", p.read_text(), p)


class WireFormat(RenderCase):
    def test_lessons_jsonl_holds_every_live_lesson(self):
        lid = self.lesson(strength=1.3)
        archived = add_lesson(self.db, "Old lesson", cwd=None, archived=1)
        with self.db.transaction():
            raw_db(self.db).execute("INSERT INTO predictions (lesson_id, text, made, resolved, outcome, embedding) "
                               "VALUES (?, 'pytest -q will be used', '2026-11-06T03:00:00.000000Z', "
                               "'2026-11-08T03:00:00.000000Z', 'confirmed', x'')", (lid,))
            raw_db(self.db).execute("INSERT INTO predictions (lesson_id, text, made, embedding) "
                               "VALUES (?, 'pytest -q again', '2026-11-08T03:00:00.000000Z', x'')", (lid,))
        self.render()
        lines = (self.home / "lessons.jsonl").read_text().splitlines()
        self.assertEqual(len(lines), 1)
        record = json.loads(lines[0])
        self.assertEqual(list(record), ["schema", "id", "text", "kind", "cwd", "project", "strength", "seen",
                                        "sources", "created", "updated", "predictions", "state", "backed_by",
                                        "edited"])
        self.assertEqual((record["state"], record["backed_by"], record["edited"]), ("live", [], False))
        self.assertEqual((record["schema"], record["id"], record["text"], record["kind"], record["cwd"],
                          record["project"], record["strength"], record["seen"]),
                         (1, lid, TEXT, "feedback", str(self.repo), str(self.repo), 1.3, 2))
        self.assertEqual([s["at"][:10] for s in record["sources"]], ["2026-11-02", "2026-11-05"])
        self.assertEqual(record["sources"][0]["kind"], "correction")
        self.assertEqual(record["predictions"], {
            "confirmed": 1, "failed": 0,
            "open": {"text": "pytest -q again", "made": "2026-11-08T03:00:00.000000Z"},
            "history": [{"text": "pytest -q will be used", "made": "2026-11-06T03:00:00.000000Z",
                         "resolved": "2026-11-08T03:00:00.000000Z", "outcome": "confirmed"}]})
        self.assertNotIn(f'"id": {archived}', "\n".join(lines))
        self.assertEqual(oct((self.home / "lessons.jsonl").stat().st_mode & 0o777), "0o600")

    def test_a_candidate_is_a_line_a_schema_1_reader_refuses_and_is_never_rendered(self):
        live = self.lesson()
        candidate = add_lesson(self.db, "In this repository build the docs with `make html`", cwd=str(self.repo))
        with self.db.transaction():
            raw_db(self.db).execute("UPDATE lessons SET state = 'candidate', since = created WHERE id = ?",
                                    (candidate,))
        result = self.render()
        self.assertEqual((result["lessons"], result["candidates"]), (1, 1))
        records = [json.loads(line) for line in (self.home / "lessons.jsonl").read_text().splitlines()]
        self.assertEqual([(r["id"], r["schema"], r["state"]) for r in records],
                         [(live, 1, "live"), (candidate, 2, "candidate")])
        self.assertFalse((self.memory / f"om-{candidate}.md").exists())
        self.assertNotIn("make html", self.md().decode())
        self.assertIn("1 candidate not rendered until backed", render.summary(result))


class Command(RenderCase):
    def test_render_command(self):
        lid = self.lesson()
        self.db.close()
        p = self.ok("render")
        self.assertEqual(p.stdout, "1 live lesson in 1 memory folder; 2 files written\n")
        self.assertEqual(p.stderr, "")
        (self.memory / f"om-{lid}.md").unlink()
        p = self.ok("render", "--json")
        out = json.loads(p.stdout)
        self.assertEqual(out["vetoed"], [{"id": lid, "text": TEXT}])
        self.assertEqual(out["written"], [])
        self.assertEqual(out["removed"], [str(self.memory / "MEMORY.md")])  # it held only the section
        p = self.cli("render", "--max-lines", "-1")
        # what was typed is wrong in itself: its usage and exit 2, as for `--max-lines abc` (README, exit codes)
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn("openmemory render: error: argument --max-lines: must be a whole number of 0 or more, "
                      "not '-1'", p.stderr)
        self.assertEqual(self.cli("render", "--max-lines", "abc").returncode, 2)
        p = self.cli("render", env=self.env(OPENMEMORY_INDEX_LINES="-1"))   # not typed: the setting is wrong
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertIn("must be a whole number", p.stderr)

    def test_help_lists_render(self):
        self.assertIn("render", self.ok("--help").stdout)


class VetoClosesThePrediction(TempHome):
    def predicted(self):
        """(the repository, a live lesson of it) after a night that made the lesson's prediction."""
        repo = self.tmp / "repo"
        repo.mkdir()
        with store.connect() as db:
            lesson = add_lesson(db, cwd=str(repo), strength=1.5, seen=2)
        self.ok("sleep", "--now", "2026-11-06T03:00:00Z")
        return repo, lesson

    def test_a_vetoed_lessons_open_prediction_is_closed(self):
        repo, lesson = self.predicted()
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual(status["predictions_open"], 1)
        (paths.memory_dir_for(repo) / f"om-{lesson}.md").unlink()
        self.assertIn(f"vetoed lesson {lesson}", self.ok("render").stdout)
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual((status["predictions"], status["predictions_open"]), (1, 0))
        self.ok("sleep", "--now", "2026-11-07T03:00:00Z")
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["predictions_open"], 0)

    def test_status_counts_a_closed_prediction_so_the_counts_add_up(self):
        _, lesson = self.predicted()
        self.ok("lessons", "reject", f"lesson:{lesson}")
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual((status["predictions"], status["predictions_open"], status["predictions_confirmed"],
                          status["predictions_failed"], status["predictions_untested"]), (1, 0, 0, 0, 1))
        self.assertIn("predictions  1 (0 open, 0 confirmed, 0 failed, 1 untested)\n", self.ok("status").stdout)


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


if __name__ == "__main__":
    unittest.main()


class AProjectMoved(TempHome):
    """`mv shop store` (a real git repository, sessions read in both folders): what was learnt in
    shop is filed under a folder no longer there until the person says where it went."""

    def setUp(self):
        super().setUp()
        from tests.helpers import git_repository
        self.work = Path(os.path.realpath(self.tmp)) / "work"
        self.shop = git_repository(self.work / "shop")
        test_session(cwd=str(self.shop), start=datetime(2026, 11, 1, 9, tzinfo=timezone.utc)).write(project_folder(self.claude, str(self.shop)))
        self.ok("ingest")
        with store.connect() as db:
            sources = [ep["id"] for ep in raw_db(db).execute("SELECT id FROM episodes WHERE kind = 'correction'")]
            self.lesson = add_lesson(db, "Run the shop's tests with pytest -q, never unittest", cwd=str(self.shop),
                                     sources=sources)
        self.ok("render")
        self.old_memory = paths.memory_dir_for(self.shop)
        self.assertTrue((self.old_memory / f"om-{self.lesson}.md").exists())
        self.moved = self.work / "store"
        os.rename(self.shop, self.moved)
        test_session(cwd=str(self.moved), start=datetime(2026, 11, 20, 9, tzinfo=timezone.utc)).write(project_folder(self.claude, str(self.moved)))
        self.ok("ingest")
        self.new_memory = self.projects / paths.project_slug(self.moved) / "memory"

    def test_render_names_the_folder_no_longer_here_and_the_command_that_moves_its_lessons(self):
        # Before: '1 live lesson in 1 memory folder; 0 files written', nothing said, the lesson
        # written on into shop's memory folder, which no session loads.
        p = self.ok("render")
        self.assertIn(f"1 of {self.shop}, a folder no longer here: if it was moved or renamed, `openmemory lessons "
                      f"move {self.shop} <its new folder>` files it under it", p.stdout)
        self.assertEqual(json.loads(self.ok("render", "--json").stdout)["gone"], {str(self.shop): [self.lesson]})

    def test_many_folders_no_longer_here_are_counted_in_one_part_of_the_line(self):
        with store.connect() as db:
            for name in ("scratch1", "scratch2"):
                folder = self.work / name
                (self.projects / paths.project_slug(folder)).mkdir(parents=True)
                add_lesson(db, f"Build {name} with make all", cwd=str(folder))
            add_lesson(db, "Build scratch2 with make all -j4", cwd=str(self.work / "scratch2"))
        # Before: "4 of 3 folders no longer here" (newuser47's week: "5 of 4 folders"), the
        # lessons counted against the folders as if they were folders.
        p = self.ok("render")
        self.assertIn("4 live lessons of 3 folders no longer here (`openmemory doctor` names them, and the `openmemory lessons "
                      "move` that files a moved one's lessons under its new folder)", p.stdout)
        self.assertNotIn("scratch", p.stdout)
        self.assertEqual(self.cli("doctor").stdout.count("a folder no longer here"), 3)

    def test_lessons_move_files_them_under_the_new_folder_and_sleep_keeps_them_there(self):
        p = self.ok("lessons", "move", self.shop, self.moved)
        self.assertIn(f"moved: 1 lesson, and the sessions read there, filed under {self.shop} are now {self.moved}'s "
                      f"project", p.stdout)
        self.assertTrue((self.new_memory / f"om-{self.lesson}.md").exists())
        self.assertIn(f"om-{self.lesson}.md", (self.new_memory / "MEMORY.md").read_text())
        self.assertFalse((self.old_memory / f"om-{self.lesson}.md").exists())
        listed = self.ok("lessons").stdout
        self.assertIn("store", listed)
        self.assertNotIn("shop", listed.replace("shop's tests", ""))
        self.ok("sleep")        # the night reads the lesson's shop episodes as store's: not widened
        with store.connect() as db:
            lesson = next(l for l in db.all_lessons() if l["id"] == self.lesson)
        self.assertEqual(lesson["cwd"], str(self.moved))       # filed under store (store.move_project)
        self.assertTrue((self.new_memory / f"om-{self.lesson}.md").exists())
        self.assertNotIn("no longer here", self.ok("render").stdout)
        hits = json.loads(self.ok("recall", "unittest", "--json", "--cwd", self.moved).stdout)
        shop_hits = [h for h in hits if h["at"] < "2026-11-20"]     # what shop's session said: store's now
        self.assertTrue(shop_hits)
        self.assertEqual({(h["cwd"], h["project"], h["in_project"]) for h in shop_hits},
                         {(str(self.moved), str(self.moved), True)})

    def test_a_folder_made_again_at_the_old_path_keeps_the_move_and_has_its_own_sessions(self):
        # A fresh clone of the same name at the old path after the move: render put the lesson back
        # into shop's memory folder and took it out of store's, `lessons` filed it under shop again,
        # recall in store found none of shop's old sessions as its own, and the next night
        # strengthened store's lesson with a correction said in the new shop.
        from tests.helpers import git_repository
        with store.connect() as db, db.transaction():     # its prediction, as sleep.predict words it
            db.add_prediction(self.lesson, f"By 2026-12-01, this comes up again in {self.shop}: an error, correction "
                                           f"or note like the ones this lesson was learnt from.",
                              "2026-11-17T03:00:00Z", embed.vector("pytest"))
        self.ok("lessons", "move", self.shop, self.moved)
        with store.connect() as db:
            seen = next(l for l in db.all_lessons() if l["id"] == self.lesson)["seen"]
            [said] = [r[0] for r in raw_db(db).execute("SELECT text FROM predictions WHERE lesson_id = ?", (self.lesson,))]
        self.assertIn(f" again in {self.moved}: ", said)
        git_repository(self.shop)
        self.ok("render")
        self.assertTrue((self.new_memory / f"om-{self.lesson}.md").exists())
        self.assertFalse((self.old_memory / f"om-{self.lesson}.md").exists())
        self.assertIn(f"project {self.moved}", self.ok("lessons").stdout)
        t = Transcript(cwd=str(self.shop), start=datetime.now(timezone.utc))    # begun after the move
        t.user("deploy the shop")
        t.assistant("Deploying.", tools=[("Bash", {"command": "make deploy"}, "Exit code 2\nno rule deploy", True)])
        t.user("No, don't use make deploy in this clone, run ./scripts/release.sh instead")
        t.write(project_folder(self.claude, str(self.shop)))
        self.ok("ingest")
        self.ok("ingest", "--force")        # the old transcripts read again: still filed under store
        self.ok("sleep")
        with store.connect() as db:
            lessons = {l["id"]: l for l in db.all_lessons()}
            folders = {row[0]: row[1] for row in raw_db(db).execute("SELECT started, cwd FROM sessions")}
        self.assertEqual(lessons[self.lesson]["cwd"], str(self.moved))
        self.assertEqual(lessons[self.lesson]["seen"], seen)       # not strengthened by the new shop's words
        self.assertEqual(sorted(folders.values()), [str(self.shop), str(self.moved), str(self.moved)])
        self.assertTrue((self.new_memory / f"om-{self.lesson}.md").exists())
        self.assertFalse((self.old_memory / f"om-{self.lesson}.md").exists())
        mine = json.loads(self.ok("recall", "release.sh", "--json", "--cwd", self.shop).stdout)
        self.assertEqual({(h["cwd"], h["in_project"]) for h in mine}, {(str(self.shop), True)})
        theirs = json.loads(self.ok("recall", "unittest", "--json", "--cwd", self.moved).stdout)
        self.assertTrue(theirs)
        self.assertEqual({(h["cwd"], h["in_project"]) for h in theirs}, {(str(self.moved), True)})

    def test_the_morning_report_names_the_folder_no_longer_here_until_its_lessons_are_moved(self):
        # Before: a night after `mv shop store` said "Nothing changed tonight." and nothing else: a
        # person who reads only the morning report never learnt that shop's lesson reaches no agent.
        self.ok("sleep")
        morning = self.ok("morning").stdout
        self.assertIn(f"## Folders no longer here\n\n- 1 live lesson is filed under {self.shop}, a folder no longer "
                      f"here, so no agent reads it. If the folder was moved or renamed, `openmemory lessons move "
                      f"{self.shop} <its new folder>` files it under the new one.\n", morning)
        self.assertEqual(morning.count("no longer here"), 2)       # the title and its one line
        self.assertEqual(json.loads(self.ok("morning", "--json").stdout)["gone"], {str(self.shop): [self.lesson]})
        self.ok("lessons", "move", self.shop, self.moved)        # done as it said: said no more
        self.assertNotIn("no longer here", self.ok("morning").stdout)
        self.assertNotIn("gone", json.loads(self.ok("morning", "--json").stdout))
        self.ok("sleep")
        self.assertNotIn("no longer here", self.ok("morning").stdout)

    def test_a_forget_of_the_folder_no_longer_here_takes_it_out_of_the_morning_report(self):
        self.ok("sleep")
        self.ok("forget", "--project", self.shop, "--yes")
        self.assertNotIn(str(self.shop), self.ok("morning").stdout)

    def test_a_project_moved_twice_keeps_its_lessons(self):
        self.ok("lessons", "move", self.shop, self.moved)
        market = self.work / "market"
        os.rename(self.moved, market)
        p = self.ok("lessons", "move", self.moved, market)
        self.assertIn(f"moved: 1 lesson, and the sessions read there, filed under {self.moved} are now {market}'s", p.stdout)
        memory = self.projects / paths.project_slug(market) / "memory"
        self.assertTrue((memory / f"om-{self.lesson}.md").exists())
        self.assertFalse((self.new_memory / f"om-{self.lesson}.md").exists())
        self.assertNotIn("no longer here", self.ok("render").stdout)

    def test_doctor_names_the_folder_no_longer_here(self):
        p = self.cli("doctor")
        self.assertIn(f"1 live lesson filed under {self.shop}, a folder no longer here", p.stdout)
        self.assertIn(f"openmemory lessons move {self.shop} <its new folder>", p.stdout)
        self.ok("lessons", "move", self.shop, self.moved)
        self.assertNotIn("no longer here", self.cli("doctor").stdout)

    def test_a_move_is_the_persons_and_only_of_a_folder_no_longer_there(self):
        other = self.work / "other"
        other.mkdir()
        p = self.cli("lessons", "move", self.moved, other)      # store is here: nothing moved
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("is still here", p.stderr)
        p = self.cli("lessons", "move", self.work / "nowhere", other)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("nothing in memory is filed under", p.stderr)
        p = self.cli("lessons", "move", self.shop, self.work / "missing")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("is no folder here", p.stderr)
        self.assertFalse((self.new_memory / f"om-{self.lesson}.md").exists())
