import json
import os
import subprocess
import sys
from pathlib import Path

from openmemory import embed, paths
from openmemory.shorten import clip
from tests.helpers import ROOT, TempHome


class Embed(TempHome):
    def test_vectors_are_stable_across_processes(self):
        code = ("import json; from openmemory import embed; "
                "print(json.dumps(list(embed.encode(embed.vector('run the tests with pytest -q')))))")
        outs = set()
        for seed in ("1", "2", "random"):
            env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
            outs.add(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    env=env, check=True).stdout)
        self.assertEqual(len(outs), 1)
        self.assertEqual(len(json.loads(outs.pop())), embed.DIMENSIONS)

    def test_cosine_orders_by_meaning_of_words(self):
        q = embed.vector("how do we run the tests")
        near = embed.vector("Ran the test suite with pytest -q; tests passed")
        far = embed.vector("Deployed the blog to production with rsync")
        self.assertGreater(embed.cosine(q, near), embed.cosine(q, far))
        self.assertAlmostEqual(embed.cosine(near, near), 1.0)
        self.assertEqual(embed.cosine(embed.vector(""), near), 0.0)

    def test_encoding_is_compact_and_keeps_cosine(self):
        a = embed.vector("the migration failed: column users.email already exists")
        b = embed.vector("migration error: duplicate column email on users")
        blob_a, blob_b = embed.encode(a), embed.encode(b)
        self.assertEqual(len(blob_a), 256)
        self.assertAlmostEqual(embed.cosine(blob_a, blob_b), embed.cosine(a, b), delta=0.02)

    def test_stored_bytes_are_the_contract(self):
        # A stored vector is read by every later version: these bytes must not change silently.
        text = "run the tests with pytest -q"
        blob = embed.encode(embed.vector(text))
        self.assertEqual({i: v for i, v in enumerate(embed.decode(blob)) if v},
                         {40: -64, 62: -64, 147: 127, 213: 127, 237: 127})
        for text in (text, "", "the", "Running testCases and the_tests; running again, again and again",
                     "migration error: duplicate column email on users " * 3):
            self.assertEqual(embed.encoded(text), embed.encode(embed.vector(text)))

    def test_encoded_is_the_encoding_of_the_vector_to_the_last_bit(self):
        import random
        rng = random.Random(7)
        words = "the test tests testing run failed error key pytest npm cancel x y z 0 42".split()
        texts = [" ".join(f"w{i * j % 97}" for j in range(i % 40)) for i in range(400)]
        texts += [" ".join(rng.choice(words) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
        for text in texts:
            self.assertEqual(embed.encoded(text), embed.encode(embed.vector(text)), text)

    def test_unit_of_a_text_is_the_unit_of_its_vector_to_the_last_bit(self):
        texts = ["", "the", "run the tests with pytest -q", "fail fail fail", "a b c d e f g h",
                 "Running testCases and the_tests; running again, again and again"]
        texts += [" ".join(f"w{i * j % 97}" for j in range(i % 40)) for i in range(400)]
        cancelled = 0
        for text in texts:
            self.assertEqual(list(embed.unit_of(text).items()), list(embed.unit(embed.vector(text)).items()), text)
            cancelled += any(x == 0.0 for x in embed._normalised(text).values())
        self.assertGreater(cancelled, 0)  # a dimension two words cancel out is left out by both

    def test_words_are_stemmed_and_split(self):
        self.assertEqual(embed.words("Running testCases and the_tests"), ["run", "test", "case", "test"])

    def test_words_are_the_runs_of_ascii_letters_and_digits(self):
        import random
        import re
        rng = random.Random(5)
        alphabet = "aZ09_-./ \n\t\x00é✓İıſ\u212a𝔸日本\ud800"
        for _ in range(2000):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            self.assertEqual([t.decode() for t in embed.tokens(text)], re.findall(r"[A-Za-z0-9]+", text))


class Clip(TempHome):
    def test_a_long_text_is_clipped_as_its_whole_folded_text_would_be(self):
        import random
        rng = random.Random(7)
        pieces = ["a", "bb", "ccc", " ", "  ", "\n", "\t", "\u00a0", "é", "…", "x" * 50, " " * 300]
        for _ in range(3000):
            text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 200)))
            for limit in (1, 3, 10, 40, 200):
                folded = " ".join(text.split())
                expected = folded if len(folded) <= limit else folded[: limit - 1].rstrip() + "…"
                self.assertEqual(clip(text, limit), expected, (text, limit))
        self.assertEqual(clip("word " * 100_000, 12), "word word w…")


class Paths(TempHome):
    def test_environment_is_read_at_call_time_and_nothing_is_created(self):
        os.environ["OPENMEMORY_HOME"] = str(self.tmp / "a")
        self.assertEqual(paths.db_path(), self.tmp / "a" / "memory.db")
        os.environ["OPENMEMORY_HOME"] = str(self.tmp / "b")
        self.assertEqual(paths.lessons_path(), self.tmp / "b" / "lessons.jsonl")
        self.assertEqual(paths.projects_dir(), self.claude / "projects")
        self.assertFalse((self.tmp / "a").exists() or (self.tmp / "b").exists())

    def test_defaults_are_under_home(self):
        os.environ.pop("OPENMEMORY_HOME")
        os.environ.pop("CLAUDE_CONFIG_DIR")
        self.assertEqual(paths.home(), Path.home() / ".openmemory")
        self.assertEqual(paths.claude_dir(), Path.home() / ".claude")

    def test_paths_command(self):
        out = json.loads(self.ok("paths", "--json").stdout)
        self.assertEqual(out["db"], str(self.home / "memory.db"))
        self.assertEqual(out["projects"], str(self.claude / "projects"))
        self.assertIn(str(self.home / "morning.md"), self.ok("paths").stdout)
        self.assertFalse(self.home.exists())

    def test_slug_and_memory_folder_follow_claude_code(self):
        self.assertEqual(paths.project_slug("/home/me/my_proj.v2"), "-home-me-my-proj-v2")
        repo = self.tmp / "repo"
        (repo / ".git").mkdir(parents=True)
        (repo / "sub" / "dir").mkdir(parents=True)
        expect = self.claude / "projects" / paths.project_slug(os.path.realpath(repo)) / "memory"
        self.assertEqual(paths.memory_dir_for(repo / "sub" / "dir"), expect)
        loose = self.tmp / "loose"
        loose.mkdir()
        self.assertEqual(paths.memory_dir_for(loose),
                         self.claude / "projects" / paths.project_slug(os.path.realpath(loose)) / "memory")

    def test_the_project_of_a_folder(self):
        repo = self.tmp / "repo"
        (repo / ".git").mkdir(parents=True)
        (repo / "sub").mkdir()
        plain = self.tmp / "plain"
        plain.mkdir()
        alias = self.tmp / "alias"
        alias.symlink_to(plain)
        self.assertEqual(paths.project_of(str(repo / "sub")), str(repo.resolve()))   # the git root
        self.assertEqual(paths.project_of(str(alias)), str(plain.resolve()))         # else the real path
        self.assertEqual(paths.project_of(str(plain) + "/"), str(plain.resolve()))
        self.assertEqual(paths.memory_dir_for(str(repo / "sub")),
                         self.projects / paths.project_slug(repo.resolve()) / "memory")

    def test_linked_worktree_shares_the_main_trees_memory(self):
        main = self.tmp / "main"
        gitdir = main / ".git" / "worktrees" / "feature"
        gitdir.mkdir(parents=True)
        (gitdir / "commondir").write_text("../..\n")
        tree = self.tmp / "feature"
        tree.mkdir()
        (tree / ".git").write_text(f"gitdir: {gitdir}\n")
        self.assertEqual(paths.git_root(tree), main.resolve())


class Cli(TempHome):
    def test_help_lists_every_verb_with_its_one_line_doc(self):
        out = self.ok("--help").stdout
        for verb in ("ingest", "status", "paths"):
            self.assertIn(verb, out)
        verbs = _verbs()
        self.assertGreaterEqual(set(verbs), {"ingest", "recall", "status", "render", "sleep", "morning", "paths",
                                             "serve", "hook"})
        listed = " ".join(out.split())
        for verb, doc in verbs.items():
            self.assertTrue(doc, f"{verb} has no one-line doc")
            self.assertIn(verb, out)
            self.assertIn(" ".join(doc.split())[:40], listed, f"`--help` does not show {verb}'s doc")
            p = self.ok(verb, "--help")  # each verb's own help: its doc, exit 0, nothing on stderr
            self.assertIn(f"usage: openmemory {verb}", p.stdout)
            self.assertIn(" ".join(doc.split()), " ".join(p.stdout.split()))
            self.assertEqual(p.stderr, "")

    def test_version(self):
        self.assertRegex(self.ok("--version").stdout, r"^openmemory \d+\.\d+\.\d+")

    def test_unknown_verb_is_a_usage_error(self):
        p = self.cli("frobnicate")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")


def _verbs() -> dict:
    """{verb: its one-line doc} as the CLI's parser declares them."""
    import argparse
    from openmemory import cli
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: (parser.description or "") for name, parser in sub.choices.items()}
