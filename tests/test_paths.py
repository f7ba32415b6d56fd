"""Every location (paths.py): read from the environment at call time, absolute, creating nothing;
Claude Code's project folder names; the project a folder belongs to."""
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

from openmemory import paths
from tests.helpers import TempHome


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
        # the other agents' folders it reads and writes too (README: CODEX_HOME, GEMINI_CLI_HOME)
        codex, gemini = self.tmp / "codex", self.tmp / "gem"
        out = json.loads(self.ok("paths", "--json", env=dict(self.env(), CODEX_HOME=str(codex), GEMINI_CLI_HOME=str(gemini))).stdout)
        self.assertEqual((out["codex_dir"], out["codex_sessions"]), (str(codex), str(codex / "sessions")))
        self.assertEqual(out["codex_archived"], str(codex / "archived_sessions"))
        self.assertEqual(out["gemini_dir"], str(gemini / ".gemini"))

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
        (gitdir / "gitdir").write_text(f"{tree / '.git'}\n")     # as `git worktree add` writes it
        self.assertEqual(paths.git_root(tree), main.resolve())

    def test_a_git_file_that_only_claims_a_repository_makes_no_worktree_of_it(self):
        # A downloaded folder's `.git` file (anyone's) naming a gitdir of its own whose commondir
        # is ~/work/bank/.git, or bank's real worktree entry that names another folder: neither
        # is bank's worktree, which would get bank's lessons and give bank its failures' lessons.
        bank = self.tmp / "work" / "bank"
        bank.mkdir(parents=True)
        self.git(bank, "init", "-q")
        self.git(bank, "remote", "add", "origin", "git@github.com:org/bank.git")
        real = bank / ".git" / "worktrees" / "fix"
        real.mkdir(parents=True)
        (real / "commondir").write_text("../..\n")
        (real / "gitdir").write_text(f"{self.tmp / 'work' / 'fix' / '.git'}\n")
        own, borrowed = self.tmp / "Downloads" / "own", self.tmp / "Downloads" / "borrowed"
        (own / "g").mkdir(parents=True)
        (own / "g" / "commondir").write_text("../../../work/bank/.git\n")
        (own / ".git").write_text("gitdir: g\n")
        borrowed.mkdir()
        (borrowed / ".git").write_text(f"gitdir: {real}\n")
        for folder in (own, borrowed):
            self.assertEqual(paths.project_of(str(folder)), str(folder.resolve()))
            self.assertFalse(paths.same_project(str(folder), str(bank)))
        fix = self.tmp / "work" / "fix"         # the worktree git made is still bank's
        fix.mkdir()
        (fix / ".git").write_text(f"gitdir: {real}\n")
        self.assertEqual(paths.project_of(str(fix)), str(bank.resolve()))
        self.assertTrue(paths.same_project(str(fix), str(bank)))


    def test_a_folder_that_cannot_be_looked_up_here_is_kept_as_written(self):
        repo = self.tmp / "repo"
        (repo / ".git").mkdir(parents=True)
        before = os.getcwd()
        os.chdir(repo)                  # resolved against this folder, they would become the repository
        try:
            self.assertEqual(paths.project_of("C:\\Users\\Alex\\shop"), "C:\\Users\\Alex\\shop")
            self.assertEqual(paths.project_of("C:/Users/Alex/shop/"), "C:\\Users\\Alex\\shop")
            self.assertEqual(paths.project_of("\\\\server\\share\\app"), "\\\\server\\share\\app")
            self.assertEqual(paths.project_of("/Users/alex/workspace/cli"), "/Users/alex/workspace/cli")
            self.assertEqual(paths.project_of("shop/src"), "shop/src")
            # a linked worktree kept inside its repository (.worktrees/, .claude/worktrees/) is the repository's
            self.assertEqual(paths.project_of("/Users/alex/workspace/cli/.worktrees/3"), "/Users/alex/workspace/cli")
            self.assertEqual(paths.project_of("/Users/alex/cli/.claude/worktrees/a/cmd"), "/Users/alex/cli")
            self.assertEqual(paths.project_of("C:\\Users\\Alex\\shop\\.worktrees\\2"), "C:\\Users\\Alex\\shop")
            self.assertEqual(paths.project_of("/Users/alex/worktrees/3"), "/Users/alex/worktrees/3")   # no such sign
        finally:
            os.chdir(before)
        self.assertEqual(paths.project_key("c:/users/alex/Shop"), paths.project_key("C:\\Users\\Alex\\shop"))
        self.assertNotEqual(paths.project_key("/home/alex/Shop"), paths.project_key("/home/alex/shop"))
        self.assertTrue(paths.is_absolute("C:\\Users\\Alex") and not paths.is_absolute("Users\\Alex"))
        # Claude Code on Windows names the project folder after the path as written
        self.assertEqual(paths.memory_dir_for("C:\\Users\\Alex\\shop"),
                         self.claude / "projects" / "C--Users-Alex-shop" / "memory")

    def git(self, folder, *args):
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="a",
                   GIT_AUTHOR_EMAIL="a@example.com", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@example.com")
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, env=env)

    def test_two_clones_of_one_repository_are_one_project(self):
        # ~/work/cli over ssh, ~/src/cli-review over https, a worktree of the second: one project;
        # a fork, a repository without a remote and a folder not on this machine: each its own.
        upstream = self.tmp / "upstream"
        upstream.mkdir()
        self.git(upstream, "init", "-q")
        self.git(upstream, "commit", "-q", "--allow-empty", "-m", "first")
        clones = {}
        for name, url in (("work/cli", "git@github.com:org/cli.git"), ("src/cli-review", "https://github.com/org/cli"),
                          ("src/fork", "ssh://git@github.com:22/someone/cli.git"), ("src/bare", None)):
            clones[name] = self.tmp / name
            clones[name].parent.mkdir(parents=True, exist_ok=True)
            if url:         # cloned (their commit in common), then their remote as cloned from there
                self.git(self.tmp, "clone", "-q", str(upstream), str(clones[name]))
                self.git(clones[name], "remote", "set-url", "origin", url)
            else:
                clones[name].mkdir()
                self.git(clones[name], "init", "-q")
        self.git(clones["src/cli-review"], "commit", "-q", "--allow-empty", "-m", "first")
        self.git(clones["src/cli-review"], "worktree", "add", "-q", str(self.tmp / "wt-3"))
        (clones["work/cli"] / "pkg").mkdir()
        work = str(clones["work/cli"] / "pkg")
        self.assertTrue(paths.same_project(work, str(clones["src/cli-review"])))
        self.assertTrue(paths.same_project(work, str(self.tmp / "wt-3")))           # its commondir's config
        self.assertFalse(paths.same_project(work, str(clones["src/fork"])))
        self.assertFalse(paths.same_project(str(clones["src/bare"]), str(self.tmp / "src")))
        self.assertFalse(paths.same_project(work, "/Users/alex/work/cli"))          # not here: as written
        self.assertEqual(paths.project_identity("/Users/alex/work/cli/.worktrees/3"), "/Users/alex/work/cli")
        self.assertEqual(paths.project_of(work), str(clones["work/cli"].resolve()))  # each clone its own folder
        from openmemory import recall
        self.assertTrue(recall.project_scope(str(self.tmp / "wt-3"))(work))
        self.assertFalse(recall.project_scope(str(clones["src/fork"]))(work))
        # Their objects packed and their refs too (git gc): still clones, read from the packs' indexes.
        for name in ("work/cli", "src/cli-review"):
            self.git(clones[name], "gc", "-q")
        self.assertFalse(list((clones["work/cli"] / ".git" / "objects").glob("??/*")))
        self.assertTrue(paths.shares_history(work, str(clones["src/cli-review"])))
        self.assertTrue(paths.same_project(work, str(clones["src/cli-review"])))
        # A folder whose .git only claims the origin (a downloaded tarball's): no commit in common.
        forged = self.tmp / "Downloads" / "cli"
        (forged / ".git" / "refs" / "heads").mkdir(parents=True)
        (forged / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (forged / ".git" / "refs" / "heads" / "main").write_text("0123456789abcdef0123456789abcdef01234567\n")
        (forged / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/org/cli.git\n')
        self.assertEqual(paths.project_identity(str(forged)), paths.project_identity(work))
        self.assertFalse(paths.shares_history(str(forged), work))
        self.assertFalse(paths.same_project(str(forged), work))
        self.assertFalse(recall.project_scope(str(forged))(work))
        self.assertFalse(recall.project_scope(work)(str(forged)))

    def test_a_remote_is_compared_as_both_clones_write_it(self):
        top = self.tmp / "work" / "cli"
        same = ["git@github.com:org/cli.git", "https://github.com/org/cli", "https://GitHub.com/org/cli.git/",
                "ssh://git@github.com:22/org/cli.git", "https://user@github.com/org/cli", "git://github.com/org/cli"]
        self.assertEqual({paths.remote_key(url, top) for url in same}, {"github.com/org/cli"})
        self.assertNotEqual(paths.remote_key("git@github.com:org/cli-old.git", top), "github.com/org/cli")
        local = os.path.realpath(self.tmp / "srv" / "cli")
        self.assertEqual({paths.remote_key(url, top) for url in (f"{local}.git", f"file://{local}", "../../srv/cli")},
                         {local})
        config = '[core]\n\tbare = false\n[remote "upstream"]\n\turl = git@github.com:org/up.git\n' \
                 '[Remote "origin"] ; the clone\'s\n\tURL = "git@github.com:org/cli.git"\n'
        self.assertEqual(paths._config_value(config, "remote", "origin", "url"), "git@github.com:org/cli.git")

    def test_a_git_folder_someone_else_made_cannot_hang_or_crash_a_lookup(self):
        # A downloaded tarball keeps its .git as its maker wrote it: a named pipe or a link to
        # /dev/zero as its config, a binary or NUL-holding commondir, a `.git` file naming a loop
        # of links, a config of 2 MB. Each folder is then its own project, and nothing blocks,
        # runs out of memory or raises (a sleep or a recall of every project ran through these).
        made = {}
        for name in ("fifo", "zero", "binary", "nul", "loop", "huge"):
            made[name] = self.tmp / "Downloads" / name
            made[name].mkdir(parents=True)
        (made["fifo"] / ".git").mkdir()
        os.mkfifo(made["fifo"] / ".git" / "config")
        (made["zero"] / ".git").mkdir()
        os.symlink("/dev/zero", made["zero"] / ".git" / "config")
        for name, commondir in (("binary", b"\xff\xfe\x00.."), ("nul", b"..\x00/x")):
            (made[name] / "g").mkdir()
            (made[name] / ".git").write_text("gitdir: g\n")
            (made[name] / "g" / "commondir").write_bytes(commondir)
        os.symlink("a", made["loop"] / "a")
        (made["loop"] / ".git").write_text("gitdir: a/x\n")
        (made["huge"] / ".git").mkdir()
        (made["huge"] / ".git" / "config").write_text("#" * (2 << 20) + '\n[remote "origin"]\n\turl = x:org/cli\n')
        code = ("import json, sys; from openmemory import paths; print(json.dumps("
                "[[paths.project_of(f), paths.project_identity(f)] for f in sys.argv[1:]]))")
        done = subprocess.run([sys.executable, "-c", code, *map(str, made.values())], capture_output=True,
                              text=True, timeout=60, env=self.env())   # a hang fails here, not for ever
        self.assertEqual(done.returncode, 0, done.stderr)
        real = [os.path.realpath(f) for f in made.values()]
        self.assertEqual(json.loads(done.stdout), [[f, f] for f in real])

    def test_recall_scope_compares_windows_folders_without_case(self):
        from openmemory import recall
        in_project = recall.project_scope("C:\\Users\\Alex\\shop")
        self.assertTrue(in_project("c:/users/alex/SHOP/src"))
        self.assertFalse(in_project("C:\\Users\\Alex\\shopping"))
        self.assertFalse(recall.project_scope(str(self.tmp))("C:\\Users\\Alex\\shop"))


class HomeOwner(unittest.TestCase):
    """The account a working folder is under (paths.home_owner): recall reads a question's speaker
    named as that account as the person (recall.speaker_as_person)."""

    def test_the_account_of_a_home_folder_on_each_system(self):
        for cwd, owner in (("/Users/neilhart/Documents/qa-tools", "neilhart"), ("/home/garrosh/repos/app", "garrosh"),
                           ("C:\\Users\\JeffKit\\OneDrive - CDW\\Work", "jeffkit"), ("c:/users/eduar/.claude", "eduar"),
                           ("/Users/pedro.figueiredo", "pedro.figueiredo")):
            self.assertEqual(paths.home_owner(cwd), owner, cwd)

    def test_a_folder_under_no_home_has_no_account(self):
        for cwd in ("/root", "/srv/app", "F:\\home\\claude\\code", "/Users", "", None, "relative/Users/x"):
            self.assertEqual(paths.home_owner(cwd), "", cwd)


class RelativeHome(TempHome):
    def test_a_relative_openmemory_home_is_refused_in_one_line_naming_the_absolute_one(self):
        for verb in (("status",), ("paths",), ("remember", "a note"), ("serve",)):
            with self.subTest(verb=verb[0]):
                p = self.cli(*verb, env=self.env(OPENMEMORY_HOME="rel-home"), input="")
                self.assertEqual((p.returncode, p.stdout), (1, ""))
                self.assertEqual(p.stderr, f"openmemory: error: OPENMEMORY_HOME is a relative path ('rel-home'); "
                                           f"hooks, the MCP server and the nightly job run in other folders, so "
                                           f"set it to an absolute one, such as "
                                           f"{os.path.join(os.path.realpath(self.tmp), 'rel-home')}\n")
        # The hook never fails a session: it exits 0 and prints nothing, and stores nothing anywhere.
        p = self.cli("hook", env=self.env(OPENMEMORY_HOME="rel-home"), input='{"hook_event_name": "SessionStart"}')
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertEqual(sorted(x.name for x in self.tmp.iterdir()), [])

    def test_a_home_under_the_tilde_is_the_persons_home(self):
        os.environ["OPENMEMORY_HOME"] = "~/memory"
        self.assertEqual(paths.db_path(), Path(os.environ["HOME"]) / "memory" / "memory.db")
