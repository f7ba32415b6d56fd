"""Lessons rendered where Codex CLI and Gemini CLI load instructions at start (render.py's
section of each agent's file), with the person's bytes outside the markers kept, and a deleted
line a veto. Which files each agent loads was measured with the real binaries
(tests/data/agents/{codex,gemini}/memory_files.*); the real clients reading them are in
test_e2e_agents.py.
"""
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from openmemory import agents, render, store
from tests.helpers import TempHome, git_repository
from tests.test_render import add_lesson

EVERYWHERE = "Run the linter with `mise run lint`, not golangci-lint directly"
PROJECT = "In this repository run the tests with python3 -m unittest, never pytest"
THEIRS = "# My own instructions\n\nAlways answer in English.\n"


class AgentHome(TempHome):
    """Claude Code's, Codex's and Gemini's folders under the temporary HOME, a repository (its
    AGENTS.md git ignores), a memory."""

    def setUp(self):
        super().setUp()
        self.user = self.tmp / "user-home"
        self.codex = self.user / ".codex" / "AGENTS.md"
        self.gemini = self.user / ".gemini" / "GEMINI.md"
        self.codex.parent.mkdir(parents=True)
        self.gemini.parent.mkdir(parents=True)
        self.claude.mkdir()         # Claude Code here too (its memory folders are written)
        self.repo = git_repository(Path(os.path.realpath(self.tmp)) / "shop")
        self.db = store.connect()
        self.addCleanup(self.db.close)

    def gemini_project(self, short="shop"):
        (self.user / ".gemini" / "projects.json").write_text(json.dumps({"projects": {str(self.repo): short}}))
        (self.user / ".gemini" / "tmp" / short).mkdir(parents=True)
        return agents.gemini_private_memory(short)


class AgentFiles(AgentHome):
    def test_lessons_for_everywhere_reach_both_global_files_keeping_the_persons_bytes(self):
        self.codex.write_text(THEIRS)
        add_lesson(self.db, EVERYWHERE, seen=2)
        result = render.render(self.db)
        text = self.codex.read_text()
        self.assertTrue(text.startswith(THEIRS))
        self.assertIn("- Run the linter with `mise run lint`, not golangci-lint directly (seen in 2 sessions)", text)
        self.assertIn(render.BEGIN, text)
        self.assertIn(str(self.codex), result["written"])
        self.assertIn(EVERYWHERE, self.gemini.read_text())          # created, holding only the section
        self.assertTrue(self.gemini.read_text().startswith(render.BEGIN))
        again = render.render(self.db)
        self.assertNotIn(str(self.codex), again["written"])          # nothing changed, nothing written

    def test_a_backslash_before_punctuation_is_read_as_written_in_every_file(self):
        # red47: slash46 left a backslash before a letter as it is, but one before punctuation was
        # still escaped, so a regex's `\.` or a Windows path's `\.github` read "\\." in Codex's and
        # Gemini's files and MEMORY.md, which the model reads as written: a regex that means another
        # thing, a path that is no path. Such a word is shown as a code span, read as it is.
        text = "Match versions with \\d+\\.\\d+ and read C:\\repo\\.github\\ci.yml or \\\\nas\\share first"
        add_lesson(self.db, text, seen=2)
        render.render(self.db)
        for path in (self.codex, self.gemini):
            written = path.read_text()
            self.assertIn("- Match versions with `\\d+\\.\\d+` and read `C:\\repo\\.github\\ci.yml` or "
                          "`\\\\nas\\share` first (seen in 2 sessions)", written)
            self.assertNotIn("\\\\.", written)
        [listed] = [json.loads(line) for line in (self.home / "lessons.jsonl").read_text().splitlines()]
        self.assertEqual(listed["text"], text)

    def test_codexs_override_file_gets_the_lessons_when_codex_reads_it_instead(self):
        # codex-cli 0.171.0 loads $CODEX_HOME/AGENTS.override.md instead of AGENTS.md when it holds
        # anything (seen with the real client: AGENTS.md's text never reached the model).
        override = self.codex.parent / "AGENTS.override.md"
        override.write_text("  \n")                    # blank: Codex reads AGENTS.md
        add_lesson(self.db, EVERYWHERE)
        render.render(self.db)
        self.assertIn(EVERYWHERE, self.codex.read_text())
        override.write_text(THEIRS)
        render.render(self.db)
        self.assertTrue(override.read_text().startswith(THEIRS))
        self.assertIn(EVERYWHERE, override.read_text())
        self.assertFalse(self.codex.exists())          # the section, all it held, moved with the lessons
        self.assertIn(EVERYWHERE, self.gemini.read_text())

    def test_gemini_loads_one_rule_once_in_the_projects_own_words(self):
        # gemini-cli 0.61.0 loads ~/.gemini/GEMINI.md and the project's private MEMORY.md both
        # (memory_files.canaries.json): "Always run the tests with `pytest -q`." (every project's)
        # was in the one and shop's "In this repository run the tests with `pytest -q`, not
        # `python -m unittest`." in the other, one rule twice in what Gemini read in shop.
        every = "Always run the tests with `pytest -q`."
        other = "Write commit messages in the imperative mood."
        mine = "In this repository run the tests with `pytest -q`, not `python -m unittest`."
        shop = self.gemini_project("shop")
        blog_root = git_repository(Path(os.path.realpath(self.tmp)) / "blog")
        projects = json.loads((self.user / ".gemini" / "projects.json").read_text())
        projects["projects"][str(blog_root)] = "blog"
        (self.user / ".gemini" / "projects.json").write_text(json.dumps(projects))
        (self.user / ".gemini" / "tmp" / "blog").mkdir()
        blog = agents.gemini_private_memory("blog")
        add_lesson(self.db, every, seen=3, strength=1.5)
        add_lesson(self.db, other, seen=3, strength=1.4)
        add_lesson(self.db, mine, kind="project", cwd=str(self.repo), strength=1.2)
        render.render(self.db)

        def loaded(private):        # what Gemini reads in that project: GEMINI.md, then its private file
            return [l for path in (self.gemini, private) for l in render._section_lines(path.read_text()) or []
                    if l.startswith("- ")]
        in_shop, in_blog = loaded(shop), loaded(blog)
        self.assertEqual([l for l in in_shop if "pytest" in l], [f"- {mine} (seen in 1 session)"])
        self.assertEqual([l for l in in_blog if "pytest" in l], [f"- {every} (seen in 3 sessions)"])
        self.assertTrue(all(any(other in l for l in ls) for ls in (in_shop, in_blog)))
        self.assertNotIn("pytest", self.gemini.read_text())
        self.assertIn(other, self.gemini.read_text())           # what no project says otherwise stays global

    def test_codex_loads_one_rule_once_from_its_file_and_the_repositorys(self):
        # codex-cli 0.171.0 loads $CODEX_HOME/AGENTS.md and the repository's AGENTS.md both
        # (memory_files.canaries.json): with the person's markers in shop's, "Always run the tests
        # with `pytest -q`." (every project's) and shop's own version of it reached its model twice.
        every = "Always run the tests with `pytest -q`."
        other = "Write commit messages in the imperative mood."
        mine = "In this repository run the tests with `pytest -q`, not `python -m unittest`."
        mine_too = "In this repository build the docs with `make html`."
        (self.repo / "AGENTS.md").write_text(f"# Shop\n\n{render.BEGIN}\n{render.END}\n")
        add_lesson(self.db, every, seen=3, strength=1.5)
        add_lesson(self.db, other, seen=3, strength=1.4)
        add_lesson(self.db, mine, kind="project", cwd=str(self.repo), strength=1.2)
        add_lesson(self.db, mine_too, kind="project", cwd=str(self.repo), strength=1.1)
        render.render(self.db)
        loaded = [l for path in (self.codex, self.repo / "AGENTS.md")
                  for l in render._section_lines(path.read_text()) or [] if l.startswith("- ")]
        self.assertEqual([l for l in loaded if "pytest" in l], [f"- {every} (seen in 3 sessions)"])
        self.assertTrue(any(other in l for l in loaded))
        self.assertIn(mine_too, (self.repo / "AGENTS.md").read_text())     # the project's other lessons stay

    def test_a_projects_lesson_goes_to_geminis_private_memory_never_into_the_repository(self):
        private = self.gemini_project()
        add_lesson(self.db, PROJECT, kind="project", cwd=str(self.repo))
        render.render(self.db)
        self.assertIn(PROJECT, private.read_text())
        self.assertNotIn(PROJECT, self.gemini.read_text() if self.gemini.exists() else "")
        self.assertFalse((self.repo / "AGENTS.md").exists())
        self.assertFalse((self.repo / "GEMINI.md").exists())
        self.assertNotIn(PROJECT, self.codex.read_text() if self.codex.exists() else "")

    def test_a_repositorys_agents_md_gets_its_projects_lessons_only_where_the_person_put_the_markers(self):
        add_lesson(self.db, PROJECT, kind="project", cwd=str(self.repo))
        mine = "# Shop\n\nUse tabs.\n"
        (self.repo / "AGENTS.md").write_text(mine)
        render.render(self.db)
        self.assertEqual((self.repo / "AGENTS.md").read_text(), mine)       # not asked: untouched
        asked = mine + f"\n{render.BEGIN}\n{render.END}\n\nMore of mine.\n"
        (self.repo / "AGENTS.md").write_text(asked)
        render.render(self.db)
        text = (self.repo / "AGENTS.md").read_text()
        self.assertIn(PROJECT, text)
        self.assertTrue(text.startswith(mine) and text.endswith("\nMore of mine.\n"))

    def test_a_windows_folder_read_here_is_never_looked_up_below_the_folder_render_runs_in(self):
        # A lesson of a session run in `D:\shop` (history copied from Windows) belongs to no
        # folder here: `D:\shop/AGENTS.md` was opened as a name relative to the folder render ran
        # in, and one found there, markers and all, took that project's lessons.
        add_lesson(self.db, PROJECT, kind="project", cwd="D:\\shop")
        here = self.tmp / "wherever"
        (here / "D:\\shop").mkdir(parents=True)
        stranger = here / "D:\\shop" / "AGENTS.md"
        asked = f"# Not this project\n\n{render.BEGIN}\n{render.END}\n"
        stranger.write_text(asked)
        old = os.getcwd()
        os.chdir(here)
        self.addCleanup(os.chdir, old)
        render.render(self.db)
        self.assertEqual(stranger.read_text(), asked)

    def test_no_lesson_goes_into_an_agents_md_a_commit_would_take(self):
        # The markers in an AGENTS.md git tracks: render wrote the project's lessons there, in the
        # diff of the next `git commit -a` and, pushed, public (measured: `git status` ' M AGENTS.md',
        # the lesson's line in `git diff`). Not tracked but not ignored: in the next `git add -A`.
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)

        def git(*args):
            return subprocess.run(["git", "-C", str(self.repo), *args], capture_output=True, text=True,
                                  check=True, env=env).stdout
        add_lesson(self.db, PROJECT, kind="project", cwd=str(self.repo))
        agents_md = self.repo / "AGENTS.md"
        agents_md.write_text(f"# Shop\n\n{render.BEGIN}\n{render.END}\n")
        render.render(self.db)                                   # ignored (.git/info/exclude): ours
        self.assertIn(PROJECT, agents_md.read_text())
        self.assertEqual(git("status", "--porcelain"), "")
        git("add", "-f", "AGENTS.md")                            # now git tracks it
        result = render.render(self.db)
        self.assertNotIn(PROJECT, agents_md.read_text())         # the section empties, markers stay
        self.assertEqual(agents_md.read_text(), f"# Shop\n\n{render.BEGIN}\n{render.END}\n")
        self.assertTrue(any(str(agents_md) in w and "git tracks it" in w for w in result["warnings"]),
                        result["warnings"])
        self.assertEqual(render.held_back(self.db), {agents_md: "git tracks it, so a commit would take the "
                                                                "lessons with it"})
        git("rm", "-q", "-f", "--cached", "AGENTS.md")
        (self.repo / ".git" / "info" / "exclude").write_text("")  # untracked, not ignored
        render.render(self.db)
        self.assertNotIn(PROJECT, agents_md.read_text())
        self.assertIn("git does not ignore it", render.held_back(self.db)[agents_md])
        (self.repo / ".gitignore").write_text("AGENTS.md\n")     # ignored again: the lessons come back
        render.render(self.db)
        self.assertIn(PROJECT, agents_md.read_text())
        self.assertEqual(render.held_back(self.db), {})
        self.assertNotIn("AGENTS.md", git("status", "--porcelain"))

    def test_a_repositorys_agents_md_that_is_a_named_pipe_or_huge_never_stops_a_render(self):
        # A repository's AGENTS.md is anyone's (a checkout, a tarball): once written into, it
        # becomes a named pipe, which a read would wait on for ever (every night's render with
        # it), or a file of 5 MB holding the markers, which is none of ours.
        lesson = add_lesson(self.db, PROJECT, kind="project", cwd=str(self.repo))
        agents_md = self.repo / "AGENTS.md"
        agents_md.write_text(f"{render.BEGIN}\n{render.END}\n")
        render.render(self.db)
        self.assertIn(PROJECT, agents_md.read_text())
        agents_md.unlink()
        os.mkfifo(agents_md)
        done = subprocess.run([sys.executable, "-m", "openmemory", "render"], capture_output=True, text=True,
                              timeout=60, env=self.env())       # a hang fails here, not for ever
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(stat.S_ISFIFO(os.lstat(agents_md).st_mode))              # left as it is
        from openmemory import paths
        self.assertTrue((paths.memory_dir_for(self.repo) / f"om-{lesson}.md").is_file())
        agents_md.unlink()
        agents_md.write_text(f"{render.BEGIN}\n{render.END}\n" + "#" * (5 << 20))
        render.render(self.db)
        self.assertNotIn(PROJECT, agents_md.read_text())

    def test_deleting_a_lessons_line_is_its_veto(self):
        lesson = add_lesson(self.db, EVERYWHERE)
        render.render(self.db)
        text = self.codex.read_text()
        line = next(l for l in text.splitlines() if EVERYWHERE in l)
        self.codex.write_text(text.replace(line + "\n", ""))
        result = render.render(self.db)
        self.assertEqual([v["id"] for v in result["vetoed"]], [lesson])
        self.assertFalse(self.gemini.exists())       # vetoed everywhere: the section, all the file held, went
        self.assertFalse(self.codex.exists())
        render.render(self.db)
        self.assertFalse(self.codex.exists())        # for good

    def test_removing_the_whole_section_is_no_veto(self):
        add_lesson(self.db, EVERYWHERE)
        render.render(self.db)
        self.codex.write_text(THEIRS)
        result = render.render(self.db)
        self.assertEqual(result["vetoed"], [])
        self.assertIn(EVERYWHERE, self.codex.read_text())

    def test_an_agent_that_is_not_installed_gets_nothing(self):
        self.gemini.parent.rmdir()
        add_lesson(self.db, EVERYWHERE)
        render.render(self.db)
        self.assertFalse(self.gemini.parent.exists())
        self.assertIn(EVERYWHERE, self.codex.read_text())

    def test_lesson_text_is_data_in_the_agents_file_too(self):
        add_lesson(self.db, "Never run <!-- rm -rf / --> and ignore [this](http://evil.example)")
        render.render(self.db)
        section = self.codex.read_text()
        self.assertEqual(section.count("<!--"), 2)                   # only the two markers
        self.assertNotIn("](http", section)

    def test_a_long_lesson_is_cut_and_still_says_how_often_it_was_seen(self):
        long = "Run the integration suite with make it before pushing " + "and wait for every job " * 30
        add_lesson(self.db, long.strip(), seen=3)
        render.render(self.db)
        (line,) = [l for l in self.codex.read_text().splitlines() if l.startswith("- Run the integration")]
        self.assertLessEqual(len(line), 2 * render.LINE_CHARS)
        self.assertTrue(line.endswith(" … (seen in 3 sessions)"), line)


class DoctorOnTheFiles(AgentHome):
    def test_doctor_reports_each_agents_section_and_damaged_markers(self):
        import subprocess, sys
        from tests.helpers import ROOT

        def found():
            p = subprocess.run([sys.executable, "-m", "openmemory", "doctor", "--json"], capture_output=True,
                               text=True, env=self.env(), timeout=120)
            return {c["check"]: c for c in json.loads(p.stdout)["checks"]}
        self.assertEqual(found()["codex lessons"]["status"], "note")
        add_lesson(self.db, EVERYWHERE)
        render.render(self.db)
        checks = found()
        self.assertEqual((checks["codex lessons"]["status"], checks["gemini lessons"]["status"]), ("ok", "ok"))
        self.assertIn("1 lesson line", checks["codex lessons"]["text"])
        self.codex.write_text(self.codex.read_text() + render.END + "\n")
        self.assertEqual(found()["codex lessons"]["status"], "fail")
