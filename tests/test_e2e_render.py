"""End to end with the real Claude Code CLI (../shared/e2e), the whole loop: two sessions in
which the person makes the same correction, each ingested by the SessionEnd hook as it ends,
one `openmemory sleep`, and a third session whose request to the model carries the lesson,
with the person's own MEMORY.md lines untouched."""
import json
import os
import shutil
import subprocess
import unittest
from pathlib import Path

from openmemory import paths, store
from tests.helpers import TempHome, claude_code, raw_db

CORRECTION = "No, don't use no_such_test_runner, run the tests with unittest"
LESSON = "In this repository run the tests with unittest, not `python3 -m no_such_test_runner -q`."
SCENARIO = {"steps": [
    {"match": "run the tests",
     "reply": [{"text": "Running the test suite."},
               {"tool_use": {"name": "Bash", "input": {"command": "python3 -m no_such_test_runner -q",
                                                       "description": "Run tests"}}}]},
    {"match": "tool_result", "reply": [{"text": "The test command failed."}]},
    {"match": "No, don't use", "reply": [{"text": "Understood, unittest from now on."}]},
]}
USER_MEMORY = "# My notes\n- [Deploys](deploys.md) — USER-CANARY: we deploy on Fridays\n"


class WithClaudeCode(TempHome):
    """The real Claude Code (the harness's cached binary) under a fresh home folder `h`, whose
    CLAUDE_CONFIG_DIR is what Claude Code uses with HOME=h; git is needed for the repositories."""

    @classmethod
    def setUpClass(cls):
        cls.harness, cls.binary = claude_code()  # before TempHome points HOME at a temporary folder
        if not shutil.which("git"):
            raise unittest.SkipTest("git is needed to make the test repository")

    def setUp(self):
        super().setUp()
        self.h = Path(os.path.realpath(self.tmp)) / "h"
        os.environ["CLAUDE_CONFIG_DIR"] = str(self.h / ".claude")  # what Claude Code uses with HOME=h


class RenderedLessonReachesTheModel(WithClaudeCode):
    def setUp(self):
        super().setUp()
        # A repository whose path has a space, an underscore, a non-ASCII letter, an emoji (two
        # UTF-16 units) and more than 200 characters: every part of Claude Code's slug rule.
        self.repo = self.h / "my repo_ö\U0001F642.v2" / ("deep-" * 36).rstrip("-")
        self.cwd = self.repo / "sub" / "dir"
        self.cwd.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True)

    def session(self, prompts, scenario=SCENARIO):
        """One `claude -p` session (and its --continue turns), with openmemory's documented hook."""
        settings = {"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "openmemory hook"}]}]}}
        env = {"PATH": self.path_with_openmemory(), "OPENMEMORY_HOME": str(self.home)}
        r = self.harness.run_session(scenario, prompts, home=str(self.h), cwd=str(self.cwd), settings=settings,
                                     allowed_tools="Bash", env=env, timeout=120,
                                     log=str(self.h / f"requests-{len(prompts)}.jsonl"))
        self.assertEqual([t["rc"] for t in r["turns"]], [0] * len(prompts), r["turns"])
        for turn in r["turns"]:
            self.assertNotIn("Hook cancelled", turn["stderr"])
        return r

    def test_two_corrections_then_sleep_put_the_lesson_in_front_of_the_model(self):
        memory = paths.memory_dir_for(self.cwd)
        self.assertEqual(memory, self.h / ".claude" / "projects" / paths.project_slug(self.repo) / "memory")
        self.assertTrue(paths.project_slug(self.repo).endswith(paths.project_slug(self.repo)[200:]))
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text(USER_MEMORY)

        first = self.session(["run the tests", CORRECTION])
        self.session(["run the tests", CORRECTION])
        # Claude Code put the transcripts where openmemory's slug rule says (hash and emoji included)
        transcripts = self.h / ".claude" / "projects" / paths.project_slug(self.cwd)
        self.assertTrue((transcripts / f"{first['session_id']}.jsonl").is_file(),
                        sorted(os.listdir(self.h / ".claude" / "projects")))

        with store.connect() as db:  # the SessionEnd hook ingested both sessions as they ended
            corrections = db.episodes("correction")
        self.assertEqual([c["facts"]["said"] for c in corrections], [CORRECTION, CORRECTION])

        night = json.loads(self.ok("sleep", "--json").stdout)
        self.assertEqual(night.get("errors", []), [])
        with store.connect() as db:
            lessons = [dict(r) for r in raw_db(db).execute("SELECT id, text, kind, seen FROM lessons")]
        self.assertEqual(len(lessons), 1, lessons)
        self.assertEqual((lessons[0]["kind"], lessons[0]["seen"]), ("feedback", 2))
        self.assertEqual(lessons[0]["text"], LESSON)
        out = json.loads(self.ok("render", "--json").stdout)
        self.assertEqual((out["written"], out["warnings"]), ([], []))
        self.assertEqual(out["folders"], [str(memory)])
        md = (memory / "MEMORY.md").read_text()
        self.assertTrue(md.startswith(USER_MEMORY), md)  # the person's lines, byte for byte, first
        self.assertTrue((memory / "om-1.md").is_file())

        third = self.harness.run_session({"steps": [], "default": "Hello."}, ["hello"], home=str(self.h),
                                         cwd=str(self.cwd), log=str(self.h / "requests-third.jsonl"))
        self.assertEqual(third["turns"][0]["rc"], 0, third["turns"])
        requests = [e["body"] for e in self.harness.read_jsonl(third["log"])]
        self.assertTrue(requests)
        topic = (memory / "om-1.md").read_text()
        why = "After the agent ran `python3 -m no_such_test_runner -q`, the person said"
        self.assertIn(why, topic)
        expected = {  # substring of the request body -> whether it must be there
            "the tests with unittest, not `python3 -m no_such_test_runner -q`.](om-1.md) — seen in 2 sessions": True,
            "USER-CANARY: we deploy on Fridays": True,
            f"Contents of {memory / 'MEMORY.md'} (user's auto-memory": True,
            "openmemory:begin": False,             # the markers are stripped on load
            why: False,                            # a topic file is read on demand only
            "Written by openmemory (lesson 1)": False,
        }
        for n, body in enumerate(requests):
            text = json.dumps(body, ensure_ascii=False)
            self.assertEqual({k: k in text for k in expected}, expected, f"request {n + 1}")


class AMovedProjectKeepsItsLessons(WithClaudeCode):
    """`mv shop store` after a lesson was learnt in shop, through the real Claude Code: its
    sessions in store load none of shop's memory until `openmemory lessons move shop store`."""

    session = RenderedLessonReachesTheModel.session

    def setUp(self):
        super().setUp()
        self.cwd = self.shop = self.h / "work" / "shop"
        self.shop.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.shop)], check=True)

    def hello(self, cwd, name):
        r = self.harness.run_session({"steps": [], "default": "Hello."}, ["hello"], home=str(self.h),
                                     cwd=str(cwd), log=str(self.h / f"requests-{name}.jsonl"))
        self.assertEqual(r["turns"][0]["rc"], 0, r["turns"])
        requests = [json.dumps(e["body"], ensure_ascii=False) for e in self.harness.read_jsonl(r["log"])]
        self.assertTrue(requests)
        return requests

    def test_the_lesson_reaches_sessions_in_the_new_folder_once_the_person_moves_it(self):
        self.session(["run the tests", CORRECTION])
        self.session(["run the tests", CORRECTION])
        self.ok("sleep")
        line = "the tests with unittest, not `python3 -m no_such_test_runner -q`.](om-1.md)"
        self.assertTrue(all(line in body for body in self.hello(self.shop, "shop")))

        store_dir = self.h / "work" / "store"
        os.rename(self.shop, store_dir)
        self.assertFalse(any(line in body for body in self.hello(store_dir, "store-before")))
        said = self.ok("render").stdout
        self.assertIn(f"1 of {self.shop}, a folder no longer here: if it was moved or renamed, "
                      f"`openmemory lessons move {self.shop} <its new folder>` files it under it", said)

        self.ok("lessons", "move", self.shop, store_dir)
        self.assertTrue(all(line in body for body in self.hello(store_dir, "store-after")))
        self.assertNotIn("no longer here", self.ok("render").stdout)
        self.assertFalse((paths.projects_dir() / paths.project_slug(self.shop) / "memory" / "om-1.md").exists())


if __name__ == "__main__":
    unittest.main()
