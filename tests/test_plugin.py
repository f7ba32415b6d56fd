"""The plugin as a person uses it, without Claude Code: its launcher as their `openmemory` command
(a symlink on PATH, run in their project's folder, whatever that folder holds), and its slash
commands, which run only the launcher and never put what the person typed into a shell.
(With the real client: test_e2e_setup.Plugin.)"""
import json
import os
import re
import subprocess

from tests.fixtures import project_folder
from tests.helpers import ROOT, TempHome
from tests.test_sleep import lint_session

LAUNCHER = ROOT / ".claude-plugin" / "openmemory"
PLUGIN = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))


def command_files() -> dict:
    """{name: (frontmatter lines, body)} of the plugin's slash commands."""
    folder = ROOT / PLUGIN["commands"]
    out = {}
    for path in sorted(folder.glob("*.md")):
        _, front, body = path.read_text(encoding="utf-8").split("---\n", 2)
        out[path.stem] = (dict(line.split(": ", 1) for line in front.strip().splitlines()), body)
    return out


class Launcher(TempHome):
    def setUp(self):
        super().setUp()
        # A project of the person's own with an `openmemory` package and a `json.py` of its own:
        # neither may stand in for openmemory's, or for the standard library's.
        self.project = self.tmp / "shop"
        (self.project / ".git").mkdir(parents=True)
        (self.project / "openmemory").mkdir()
        (self.project / "openmemory" / "__init__.py").write_text('raise SystemExit("the project\'s own package")\n')
        (self.project / "json.py").write_text('raise SystemExit("the project\'s own json.py")\n')
        # The documented way onto PATH: a symlink to the launcher (here through a second, relative one).
        bin_dir, links = self.tmp / "bin", self.tmp / "links"
        bin_dir.mkdir()
        links.mkdir()
        (links / "om").symlink_to(LAUNCHER)
        (bin_dir / "openmemory").symlink_to(os.path.join("..", "links", "om"))
        self.path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"

    def run_here(self, *args, input=None):
        env = self.env(PATH=self.path)
        env.pop("PYTHONPATH", None)  # as a person's shell has it: the launcher finds its package itself
        return subprocess.run(["openmemory", *args], cwd=str(self.project), env=env, input=input,
                              capture_output=True, text=True, timeout=60)

    def test_the_command_on_path_runs_in_the_persons_project(self):
        p = self.run_here("remember", "--json", "the deploy script needs sudo on the staging box")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["cwd"], os.path.realpath(self.project))
        p = self.run_here("recall", "--here", "--json", "deploy script")
        self.assertEqual(p.returncode, 0, p.stderr)
        [hit] = json.loads(p.stdout)
        self.assertTrue(hit["in_project"], hit)
        p = self.run_here("backup", "memory-copy.db")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue((self.project / "memory-copy.db").is_file())
        self.assertFalse((ROOT / "memory-copy.db").exists())
        p = self.run_here("status", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["episodes"]["note"], 1)

    def test_lessons_are_reviewed_through_the_command_on_path(self):
        # A session in the project where the person says a standing rule: sleep makes a live lesson.
        lint_session(str(self.project)).write(project_folder(self.claude, self.project))
        for verb in ("ingest", "sleep"):
            p = self.run_here(verb)
            self.assertEqual(p.returncode, 0, p.stderr)
        p = self.run_here("lessons")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith(f"lesson:1 · live · seen in 1 session · project "
                                            f"{os.path.realpath(self.project)}\n"), p.stdout)
        memory = project_folder(self.claude, self.project) / "memory"
        self.assertIn("(om-1.md) — seen in 1 session", (memory / "MEMORY.md").read_text())
        p = self.run_here("lessons", "reject", "lesson:1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("lesson:1 · vetoed · "), p.stdout)
        self.assertFalse((memory / "om-1.md").exists())
        self.assertIn("(you rejected it with `openmemory lessons reject`", self.run_here("morning").stdout)

    def test_claude_codes_hook_and_server_run_from_the_project_too(self):
        env = self.env()
        env.pop("PYTHONPATH", None)
        p = subprocess.run(["sh", str(LAUNCHER), "hook"], cwd=str(self.project), env=env, capture_output=True,
                           text=True, timeout=60,
                           input=json.dumps({"hook_event_name": "Stop", "session_id": "s"}))
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + "\n"
        p = subprocess.run(["sh", str(LAUNCHER), "serve"], cwd=str(self.project), env=env, capture_output=True,
                           text=True, timeout=60, input=hello)
        self.assertEqual(p.returncode, 0, p.stderr)
        names = [t["name"] for t in json.loads(p.stdout.splitlines()[0])["result"]["tools"]]
        self.assertIn("recall", names)


class SlashCommands(TempHome):
    def test_the_everyday_verbs_are_commands_inside_the_plugins_own_folder(self):
        self.assertEqual(PLUGIN["commands"], "./.claude-plugin/commands")  # the repository's top level stays
        self.assertEqual(set(command_files()), {"status", "recall", "sleep", "doctor"})

    def test_a_command_runs_only_the_launcher_and_never_what_was_typed(self):
        for name, (front, body) in command_files().items():
            with self.subTest(command=name):
                self.assertTrue(len(front["description"]) > 20)
                shell = re.findall(r"!`([^`]*)`", body)
                for line in shell:
                    # `|| true`: Claude Code drops a command whose shell line fails, and doctor's
                    # failed checks are the point of asking.
                    self.assertRegex(line, rf'^sh "\$\{{CLAUDE_PLUGIN_ROOT\}}/\.claude-plugin/openmemory" '
                                           rf'{name}( \|\| true)?$')
                    self.assertEqual(front["allowed-tools"],
                                     f'Bash(sh "${{CLAUDE_PLUGIN_ROOT}}/.claude-plugin/openmemory" {name})')
                self.assertNotIn("$ARGUMENTS", "".join(shell))
                if not shell:  # recall: through the server's tool, the one permission it needs
                    self.assertEqual(front["allowed-tools"], "mcp__plugin_openmemory_openmemory__recall")
                    self.assertIn("$ARGUMENTS", body)

    def test_each_shell_line_runs_from_a_project_folder(self):
        env = self.env(CLAUDE_PLUGIN_ROOT=ROOT)
        env.pop("PYTHONPATH", None)
        for name, (_, body) in command_files().items():
            for line in re.findall(r"!`([^`]*)`", body):
                with self.subTest(command=name):
                    p = subprocess.run(["/bin/sh", "-c", line], cwd=str(self.tmp), env=env, capture_output=True,
                                       text=True, timeout=120)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertTrue(p.stdout.strip(), f"/{name} printed nothing")
