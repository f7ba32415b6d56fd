"""The documents tell the truth about the command and the code: every verb in the README with
its --help, the quick start ending in setup and doctor, CI running the README's own commands,
the plugin's manifest at this version, and ARCHITECTURE.md's module table, floors and tests."""
import importlib
import json
import re
import unittest

from openmemory import __version__, cli
from tests.helpers import ROOT, TempHome
from tests.test_structure import FLOOR, PACKAGE

README = (ROOT / "README.md").read_text(encoding="utf-8")
ARCHITECTURE = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def verbs() -> dict:
    """{verb: its subparser} from the CLI itself."""
    parser = cli.build_parser()
    [action] = [a for a in parser._actions if a.dest == "verb"]
    return dict(action.choices)


def quick_start() -> list[str]:
    block = README.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#")[0].strip() for line in block.strip().splitlines()]


class Documents(TempHome):
    def test_the_readmes_doctor_says_of_memory_folders_what_doctor_says_after_a_first_ingest(self):
        """The README shows doctor after setup and a first ingest, before any night: Claude Code's
        projects folder holds transcripts and no memory folder yet, and doctor says so."""
        from tests.fixtures import project_folder, test_session
        repo = self.tmp / "shop"
        repo.mkdir()
        test_session(cwd=str(repo)).write(project_folder(self.claude, str(repo)))
        self.ok("ingest")
        [line] = [ln for ln in self.cli("doctor").stdout.splitlines() if " memory folders: " in ln]
        shown = README.split("$ ~/.openmemory-venv/bin/openmemory doctor\n", 1)[1].split("```", 1)[0]
        self.assertIn(line.replace(str(self.claude), "/home/me/.claude") + "\n", shown)

    def test_every_verb_is_in_the_readme_and_has_help_text(self):
        found = verbs()
        self.assertGreaterEqual(set(found), {"ingest", "recall", "status", "sleep", "morning", "render",
                                             "paths", "setup", "doctor", "serve", "hook"})
        for verb, sub in found.items():
            with self.subTest(verb=verb):
                self.assertTrue(re.search(rf"openmemory {verb}\b", README), f"`openmemory {verb}` is not in README.md")
                self.assertTrue(sub.description and len(sub.description) > 20, f"{verb} has no help text")
                p = self.ok(verb, "--help")
                self.assertIn(sub.description.split(";")[0][:40], " ".join(p.stdout.split()))

    def test_the_quick_start_installs_then_sets_up_then_checks_and_tests(self):
        lines = quick_start()
        self.assertIn("pip install .", lines[0])
        self.assertTrue(lines[0].startswith("python3 -m venv "), lines[0])  # PEP 668: a venv, not the system
        self.assertTrue(lines[1].endswith("openmemory setup"), lines)
        self.assertTrue(lines[2].endswith("openmemory ingest"), lines)   # setup reads no session: the history waits for it
        self.assertTrue(lines[3].endswith("openmemory doctor"), lines)
        self.assertEqual(lines[4], "python3 -m unittest")
        for name in ("OPENMEMORY_CORPUS", "OPENMEMORY_E2E_HARNESS", "OPENMEMORY_E2E=skip"):
            self.assertIn(name, README)

    def test_ci_runs_the_readme_commands(self):
        ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
        install, _, ingest, _, test = quick_start()
        self.assertIn(f"\n{test}\n", ci)
        self.assertIn(f"install='{install}'", ci)
        self.assertIn(f"ingest='{ingest}'", ci)
        self.assertIn('sh -c "${ingest//\\~/$tmp}', ci)       # run as written, ~ the throwaway folder

    def test_the_plugin_manifest_runs_this_version_in_place(self):
        plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
        self.assertEqual(plugin["version"], __version__)
        server = plugin["mcpServers"]["openmemory"]
        self.assertEqual(server["env"]["PYTHONPATH"], "${CLAUDE_PLUGIN_ROOT}")
        self.assertEqual(server["args"][-1], "serve")
        market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
        self.assertEqual([p["name"] for p in market["plugins"]], [plugin["name"]])
        hooks = plugin["hooks"]
        self.assertEqual(set(hooks), {"SessionStart", "SessionEnd", "PreCompact"})
        for groups in hooks.values():
            self.assertRegex(groups[0]["hooks"][0]["command"], r"\.claude-plugin/openmemory\" hook$")

    def test_the_launcher_says_clearly_when_there_is_no_python_3_10(self):
        import subprocess
        bin_dir = self.tmp / "old-python"
        bin_dir.mkdir()
        old = bin_dir / "python3"
        old.write_text("#!/bin/sh\n# Python 3.9, as macOS ships it\n[ \"$1\" = -c ] && exit 1\necho 3.9\n")
        old.chmod(0o755)
        for verb, code in (("serve", 1), ("hook", 0)):
            p = subprocess.run(["/bin/sh", str(ROOT / ".claude-plugin" / "openmemory"), verb], input="",
                               capture_output=True, text=True, env={"PATH": f"{bin_dir}:/nonexistent"})
            self.assertEqual((p.returncode, p.stdout), (code, ""))
            self.assertIn(f"openmemory: needs Python 3.10 or newer and found none on PATH ({old} is older)",
                          p.stderr)


def code_map() -> dict:
    """{module: floor} from ARCHITECTURE.md's code map table."""
    table = ARCHITECTURE.split("## Code map", 1)[1].split("\nMigrations:", 1)[0]
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| `")]
    return {name: int(floor) for cell, floor in rows for name in re.findall(r"`(\w+)`", cell)}


class Architecture(unittest.TestCase):
    def test_the_code_map_is_the_package_with_its_floors(self):
        self.assertEqual(sorted(code_map()), sorted(p.stem for p in PACKAGE.glob("*.py")),
                         "ARCHITECTURE.md's code map names every module of the package, and only those")
        self.assertEqual(code_map(), FLOOR, "the floors of ARCHITECTURE.md are test_structure.FLOORS")

    def test_every_test_it_names_exists(self):
        named = set(re.findall(r"`(test_\w+(?:\.\w+){0,2})`", ARCHITECTURE))
        self.assertGreater(len(named), 25)
        for name in sorted(named):
            with self.subTest(test=name):
                module, *attrs = name.split(".")
                target = importlib.import_module(f"tests.{module}")
                for attr in attrs:
                    target = getattr(target, attr)

    def test_the_migrations_it_lists_are_the_schemas_steps(self):
        from openmemory import migrations
        listed = re.findall(r"`(m\d{3}_\w+)`", ARCHITECTURE.split("\nMigrations:", 1)[1].split("\n\n", 1)[0])
        self.assertEqual(listed, [step.__name__ for step in migrations.MIGRATIONS])

