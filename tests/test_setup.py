"""`openmemory setup`, `setup --undo` and `openmemory doctor` against a temporary HOME.

settings.json is full of the person's own keys and hooks; the crontab, systemctl and
launchctl are stand-ins under the test's folder (OPENMEMORY_CRONTAB, ...), so no test can
reach the real schedule. The real-client tests (a venv not on PATH, the real `claude`)
are in test_e2e_setup.py.
"""
import json
import os
import plistlib
import shutil
import sqlite3
import subprocess
import sys
import unittest
from pathlib import Path

from openmemory import schedule, setup, store
from tests.fixtures import test_session
from tests.helpers import ROOT, USER_SETTINGS, SetupCase


class Setup(SetupCase):
    def test_setup_merges_the_hooks_keeps_every_other_key_backs_up_and_undo_restores(self):
        self.crontab_file.write_text("MAILTO=me@example.com\n0 9 * * 1 ~/bin/weekly.sh\n")
        p = self.setup_cli("--yes", "--schedule", "cron")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("`claude` is not on PATH: register the MCP server yourself with", p.stdout)
        self.assertIn("claude mcp add --scope user openmemory -e PYTHONPATH=", p.stdout)

        after = json.loads(self.settings.read_text(encoding="utf-8"))
        added = {e: after["hooks"].pop(e)[-1] for e in ("SessionStart", "PreCompact")}
        added["SessionEnd"] = after["hooks"]["SessionEnd"].pop()
        self.assertEqual(after["permissions"]["allow"][2:], ["mcp__openmemory__recall", "mcp__openmemory__remember",
                                                             "mcp__openmemory__show"])
        del after["permissions"]["allow"][2:]
        self.assertEqual(after, USER_SETTINGS)  # every key of the person's, and their own SessionEnd hook
        command = added["SessionEnd"]["hooks"][0]["command"]
        self.assertEqual(added["SessionStart"], {"hooks": [{"type": "command", "command": command}]})
        self.assertIn(f"{sys.executable} -m openmemory hook", command)
        self.assertIn(f"PYTHONPATH={ROOT}", command)  # run from a checkout: the package's folder, absolute
        self.assertIn(f"OPENMEMORY_HOME={self.home}", command)

        self.assertTrue(self.settings.read_text(encoding="utf-8").startswith('{\n    "$schema"'))  # its own indent
        [backup] = (self.home / "backups").iterdir()
        self.assertEqual(backup.read_bytes(), self.original)
        self.assertIn(f"backup of {self.settings} as it was: {backup}", p.stderr)

        cron = self.crontab_file.read_text().splitlines()
        self.assertEqual(cron[:2], ["MAILTO=me@example.com", "0 9 * * 1 ~/bin/weekly.sh"])
        self.assertEqual(len(cron), 3)
        self.assertTrue(cron[2].startswith(f"30 3 * * * PYTHONPATH={ROOT} OPENMEMORY_HOME={self.home} "
                                           f"CLAUDE_CONFIG_DIR={self.claude} {sys.executable} -m openmemory "
                                           f"ingest --quiet && "), cron[2])
        self.assertTrue(cron[2].endswith(" -m openmemory sleep >/dev/null # openmemory nightly sleep"))

        # Twice changes nothing: not a byte of settings.json, not a line of the crontab, no new backup.
        settings_bytes, cron_bytes = self.settings.read_bytes(), self.crontab_file.read_bytes()
        p = self.setup_cli("--yes", "--schedule", "cron")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("nothing to change", p.stdout)
        self.assertEqual((self.settings.read_bytes(), self.crontab_file.read_bytes()), (settings_bytes, cron_bytes))
        self.assertEqual(len(list((self.home / "backups").iterdir())), 1)

        # Undo removes exactly what setup added: nothing else changed the file, so it is back byte for byte.
        p = self.setup_cli("--undo", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.settings.read_bytes(), self.original)
        self.assertEqual(self.crontab_file.read_text(), "MAILTO=me@example.com\n0 9 * * 1 ~/bin/weekly.sh\n")
        self.assertFalse((self.home / "setup.json").exists())
        p = self.setup_cli("--undo", "--yes")
        self.assertIn("nothing to undo", p.stdout)

    def test_the_tools_are_allowed_by_name_shown_first_asked_and_undone(self):
        p = self.setup_cli("--dry-run", "--schedule", "none")
        first = p.stdout.splitlines()[0]
        self.assertEqual(first, f"+ allow openmemory's tools by name in {self.settings} (the model calls them "
                                "without asking): mcp__openmemory__recall, mcp__openmemory__remember, "
                                "mcp__openmemory__show")
        self.assertEqual(self.setup_cli("--schedule", "none", input="").returncode, 1)  # asked like the rest
        self.assertEqual(self.settings.read_bytes(), self.original)

        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        allow = json.loads(self.settings.read_text(encoding="utf-8"))["permissions"]["allow"]
        self.assertEqual([r for r in allow if "openmemory" in r],
                         ["mcp__openmemory__recall", "mcp__openmemory__remember", "mcp__openmemory__show"])
        self.assertNotIn("mcp__openmemory", allow)  # never the whole server: a later tool is asked for
        self.assertFalse([r for r in allow if r.startswith("mcp__openmemory") and "*" in r])
        self.assertTrue(self.setup_cli("--dry-run", "--schedule", "none").stdout.startswith(
            "= openmemory's tools are allowed in "))

        # The person adds a rule of their own: undo takes out only setup's (merging, not restoring).
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        settings["permissions"]["allow"].append("Bash(make:*)")
        self.settings.write_text(json.dumps(settings, indent=4))
        p = self.setup_cli("--undo", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("- remove the rules allowing openmemory's tools from "), p.stdout)
        after = json.loads(self.settings.read_text(encoding="utf-8"))
        self.assertEqual(after["permissions"], {"allow": ["Bash(npm run test:*)", "mcp__github", "Bash(make:*)"],
                                                "deny": ["Read(./.env)"]})

    def test_undo_gives_back_a_settings_file_byte_for_byte_and_takes_out_only_what_it_made(self):
        # A file in the person's own layout (one line, their spacing, no final newline), no permissions.
        odd = b'{ "model" :"opus",   "env": {"A": "\\u00e9"} }'
        self.settings.write_bytes(odd)
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.assertNotEqual(self.settings.read_bytes(), odd)
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)  # again: nothing changes
        p = self.setup_cli("--undo", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"{self.settings} is back as it was before setup, byte for byte", p.stderr)
        self.assertEqual(self.settings.read_bytes(), odd)

        # Changed by someone else since: merged out instead, and the permissions setup made go too.
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        settings["theme"] = "dark"
        self.settings.write_text(json.dumps(settings))
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        self.assertEqual(json.loads(self.settings.read_text(encoding="utf-8")),
                         {"model": "opus", "env": {"A": "é"}, "theme": "dark"})

    def test_dry_run_changes_nothing(self):
        p = self.setup_cli("--dry-run", "--schedule", "cron")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("+ add the hooks SessionStart, SessionEnd, PreCompact to", p.stdout)
        self.assertIn("+ add to your crontab: 30 3 * * * ", p.stdout)
        self.assertIn("dry run: 3 changes not made", p.stdout)
        self.assertEqual(self.settings.read_bytes(), self.original)
        self.assertFalse(self.crontab_file.exists())
        self.assertFalse((self.home / "setup.json").exists())

    def test_without_a_terminal_setup_asks_for_yes_and_changes_nothing(self):
        p = self.setup_cli("--schedule", "none", input="")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no terminal to ask on; pass --yes", p.stderr)
        self.assertEqual(self.settings.read_bytes(), self.original)

    def test_the_judge_stays_off_unless_named_and_setup_says_what_it_costs(self):
        judge_file = self.home / "settings.json"
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.assertFalse(judge_file.exists(), "--yes alone turned a judge on")
        p = self.setup_cli("--yes", "--schedule", "none", "--judge", "claude")
        self.assertEqual(p.returncode, 1)
        self.assertIn("setup --judge claude: no `claude` on PATH: pass --judge-command", p.stderr)
        self.assertFalse(judge_file.exists())
        claude = self.bin / "claude"
        claude.write_text("#!/bin/sh\nexit 0\n")
        claude.chmod(0o755)
        p = self.setup_cli("--yes", "--schedule", "none", "--judge", "claude", "--judge-calls", "8",
                           env=self.env(PATH=f"{self.bin}:/usr/bin:/bin"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("counts against your Claude usage", p.stderr)
        self.assertIn("what it is shown goes to Claude Code's model, on your Claude account", p.stderr)
        self.assertIn("It may use at most 8 calls and 60,000 tokens a night", p.stderr)
        self.assertIn("Past the cap, what waits for the next night: first judged are the corrections", p.stderr)
        self.assertIn("judge: Claude Code headless (`claude -p --model haiku`), at most 8 calls", p.stdout)
        self.assertIn("`openmemory doctor --judge` checks that it answers: one question with nothing of yours in it",
                      p.stderr)     # setup never calls it (night40)
        chosen = json.loads(judge_file.read_text())["judge"]
        self.assertEqual(chosen, {"backend": "claude", "model": "haiku", "command": str(claude), "calls": 8,
                                  "tokens": 60000})
        self.assertEqual(self.cli("status").stdout.count("Claude Code headless (`claude -p --model haiku`)"), 1)
        p = self.setup_cli("--yes", "--schedule", "none", "--judge", "off")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(judge_file.read_text())["judge"]["backend"], "off")
        p = self.setup_cli("--yes", "--schedule", "none", "--judge", "endpoint", "--judge-url", "ftp://x")
        self.assertIn("needs --judge-url (http:// or https://) and --judge-model", p.stderr)

    def test_a_judge_named_without_the_values_it_needs_is_a_usage_error_and_changes_nothing(self):
        # what was typed is wrong in itself (README's exit codes): 2, the verb's prefix, no judge saved
        judge_file = self.home / "settings.json"
        for args in ((), ("--judge-url", "ftp://x", "--judge-model", "qwen2.5:7b"), ("--judge-model", "qwen2.5:7b")):
            with self.subTest(args=args):
                p = self.setup_cli("--yes", "--schedule", "none", "--judge", "endpoint", *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("openmemory setup: error: setup --judge endpoint: an endpoint judge needs --judge-url",
                              p.stderr)
                self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)   # the error alone, not after the pitch
                self.assertFalse(judge_file.exists())
                self.assertEqual(self.settings.read_bytes(), self.original)   # no hooks, no server
        p = self.setup_cli("--yes", "--schedule", "none", "--judge", "claude", "--judge-command", self.tmp / "no-claude")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no-claude is not an executable file", p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        p = self.setup_cli("--yes", "--schedule", "none", "--judge", "claude")   # no `claude` on PATH: exit 1
        self.assertEqual((p.returncode, p.stderr.count("\n")), (1, 1), p.stderr)

    def test_claude_mcp_add_and_remove_run_without_claude_codes_telemetry(self):
        # Each run of Claude Code tries to send telemetry (offline: ~/.claude/telemetry/1p_failed_events.*);
        # registering a local server needs no network.
        claude = self.bin / "claude"
        claude.write_text('#!/bin/sh\necho "$* nonessential=$CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC" >> "$OM_TEST_CALLS"\n')
        claude.chmod(0o755)
        env = self.env(PATH=f"{self.bin}:/usr/bin:/bin")
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none", env=env).returncode, 0)
        (self.claude / ".claude.json").write_text(json.dumps({"mcpServers": {"openmemory": setup_server(env)}}))
        p = self.setup_cli("--undo", "--yes", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        calls = self.calls.read_text().splitlines()
        self.assertEqual([c.split()[:2] + c.split()[-1:] for c in calls],
                         [["mcp", "add", "nonessential=1"], ["mcp", "remove", "nonessential=1"]])

    def at_a_terminal(self, *answers, env=None):
        """`openmemory setup` with its stdin a terminal, answering each question in turn."""
        import pty
        primary, secondary = pty.openpty()
        os.write(primary, "".join(a + "\n" for a in answers).encode())
        try:
            return subprocess.run([sys.executable, "-m", "openmemory", "setup", "--schedule", "none"],
                                  stdin=secondary, capture_output=True, text=True, env=env or self.env(),
                                  cwd=str(self.tmp), timeout=60)
        finally:
            os.close(secondary)
            os.close(primary)

    def test_at_a_terminal_no_to_the_judge_keeps_it_off_and_no_to_the_changes_changes_nothing(self):
        # A cautious person answers the yes-or-no question "turn on a judge?" with n (or Enter), then
        # declines the changes: nothing is written, not even the judge's settings file.
        for judge in ("n", "no", ""):
            p = self.at_a_terminal(judge, "n")
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertNotIn("error", p.stderr)
            self.assertIn("judge: off, as it was", p.stderr)
            self.assertIn("make these changes? [y/N] nothing changed", p.stderr)
            self.assertFalse((self.home / "settings.json").exists(), judge)
            self.assertEqual(self.settings.read_bytes(), self.original)
        p = self.at_a_terminal("n", "y")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("done; `openmemory ingest` reads the sessions you already have, `openmemory doctor` checks it", p.stdout)
        self.assertEqual(set(self.hooks_added()), set(setup.HOOK_EVENTS))
        # an answer that names no judge keeps it as it was and the rest of setup goes on
        p = self.at_a_terminal("maybe")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("judge: off, as it was: no judge called 'maybe'", p.stderr)
        self.assertIn("nothing to change", p.stdout)       # the rest of setup went on: done already

    def test_at_a_terminal_yes_to_the_judge_asks_which_and_a_wrong_answer_loses_no_setup(self):
        # newuser38: "turn on a judge? [off/claude/endpoint]" reads as a yes-or-no question; answering
        # y ended setup with "error: no judge called 'y'" and nothing set up, neither hooks nor server.
        claude = self.bin / "claude"
        claude.write_text("#!/bin/sh\nexit 0\n")
        claude.chmod(0o755)
        env = self.env(PATH=f"{self.bin}:/usr/bin:/bin")
        p = self.at_a_terminal("y", "claude", "y", "y", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("which judge? [claude/endpoint] ", p.stderr)
        self.assertEqual(json.loads((self.home / "settings.json").read_text())["judge"]["backend"], "claude")
        self.assertEqual(set(self.hooks_added()), set(setup.HOOK_EVENTS))
        self.assertEqual(self.setup_cli("--undo", "--yes", env=env).returncode, 0)
        (self.home / "settings.json").unlink()
        p = self.at_a_terminal("yes", "sure", "y", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("error", p.stderr)
        self.assertIn("judge: off, as it was: no judge called 'sure'", p.stderr)
        self.assertIn("done; `openmemory ingest` reads", p.stdout)
        self.assertEqual(set(self.hooks_added()), set(setup.HOOK_EVENTS))
        self.assertFalse((self.home / "settings.json").exists())

    def test_at_a_terminal_endpoint_asks_its_url_and_model_and_a_judge_that_cannot_run_stops_nothing_else(self):
        # "endpoint" is one of the answers the question offers: it asks for the URL and the model
        # rather than fail on flags nobody typed; a judge that cannot run (claude not on PATH, no
        # URL given) stays as it was, said in one line, and the rest of setup goes on
        p = self.at_a_terminal("endpoint", "http://localhost:11434/v1", "qwen2.5:7b", "y", "y")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("its URL, OpenAI-compatible (such as http://localhost:11434/v1): ", p.stderr)
        chosen = json.loads((self.home / "settings.json").read_text())["judge"]
        self.assertEqual((chosen["backend"], chosen["url"], chosen["model"]),
                         ("endpoint", "http://localhost:11434/v1", "qwen2.5:7b"))
        self.assertEqual(set(self.hooks_added()), set(setup.HOOK_EVENTS))
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        (self.home / "settings.json").unlink()
        for answers, why in ((("endpoint", "", "", "y"), "endpoint: an endpoint judge needs --judge-url"),
                             (("claude", "y"), "claude: no `claude` on PATH")):
            with self.subTest(answers=answers):
                p = self.at_a_terminal(*answers, env=self.env(PATH=str(self.tmp / "no-programs")))   # no claude
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn(f"judge: off, as it was: {why}", p.stderr)
                self.assertIn("done; `openmemory ingest` reads the sessions you already have, `openmemory doctor` checks it", p.stdout)
                self.assertEqual(set(self.hooks_added()), set(setup.HOOK_EVENTS))
                self.assertFalse((self.home / "settings.json").exists())
                self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)

    def test_a_settings_file_setup_created_is_removed_by_undo(self):
        self.settings.unlink()
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.assertEqual(set(self.hooks_added()), set(setup.HOOK_EVENTS))
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        self.assertFalse(self.settings.exists())

    def test_a_settings_file_setup_created_keeps_the_persons_keys_through_a_second_setup_and_undo(self):
        # setup made the file; the person put their own model and hook in it; setup ran again and
        # wrote it (a rule of its own missing, as after an upgrade that allows the tools by name).
        # undo deleted the whole file, the person's keys with it.
        self.settings.unlink()
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        settings["model"] = "sonnet"
        settings["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
        settings["permissions"]["allow"].remove("mcp__openmemory__show")
        self.settings.write_text(json.dumps(settings))
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        p = self.setup_cli("--undo", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(self.settings.read_text(encoding="utf-8")),
                         {"model": "sonnet", "hooks": {"Stop": [{"hooks": [{"type": "command",
                                                                             "command": "notify-send done"}]}]}})

    def test_undo_after_an_older_setup_takes_its_hooks_out_of_the_file_it_gives_back(self):
        # An older openmemory's setup added the hooks and kept no record of the file (no "settings"
        # in setup.json); this one then added the allow rules, backing up the file with those hooks
        # in it. undo gave that backup back "as it was before setup, byte for byte": hooks and all.
        self.settings.write_text(json.dumps({"model": "opus"}))
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        rec = json.loads((self.home / "setup.json").read_text())
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        del settings["permissions"]
        self.settings.write_text(json.dumps(settings))
        for key in ("settings", "allow", "allow_made"):
            rec.pop(key, None)
        (self.home / "setup.json").write_text(json.dumps(rec))
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        p = self.setup_cli("--undo", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("is back as it was before setup", p.stderr)
        self.assertEqual(json.loads(self.settings.read_text(encoding="utf-8")), {"model": "opus"})

    def test_hooks_added_after_setup_by_the_person_survive_undo(self):
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        settings["hooks"]["SessionStart"].append({"hooks": [{"type": "command", "command": "echo mine"}]})
        settings["theme"] = "dark"
        self.settings.write_text(json.dumps(settings))
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        after = json.loads(self.settings.read_text(encoding="utf-8"))
        self.assertEqual(after["hooks"]["SessionStart"], [{"hooks": [{"type": "command", "command": "echo mine"}]}])
        self.assertEqual(after["theme"], "dark")
        self.assertNotIn("PreCompact", after["hooks"])

    def test_invalid_settings_json_is_an_error_and_left_alone(self):
        self.settings.write_text('{"model": "opus",}')
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"openmemory: error: {self.settings} is not valid JSON", p.stderr)
        self.assertEqual(self.settings.read_text(), '{"model": "opus",}')

    def test_a_symlinked_settings_file_stays_a_link(self):
        dotfiles = self.tmp / "dotfiles"
        dotfiles.mkdir()
        (dotfiles / "settings.json").write_bytes(self.original)
        self.settings.unlink()
        self.settings.symlink_to(dotfiles / "settings.json")
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.assertTrue(self.settings.is_symlink())
        self.assertIn("SessionEnd", json.loads((dotfiles / "settings.json").read_text())["hooks"])

    def test_a_hand_added_openmemory_hook_is_pointed_out(self):
        settings = dict(USER_SETTINGS, hooks={"SessionEnd": [{"hooks": [{"type": "command",
                                                                         "command": "openmemory hook"}]}]})
        self.settings.write_text(json.dumps(settings))
        p = self.setup_cli("--dry-run", "--schedule", "none")
        self.assertIn("also in", p.stdout)
        self.assertIn("a SessionEnd hook `openmemory hook` that setup did not add", p.stdout)

    def test_the_plugin_installed_means_setup_adds_no_server_and_no_hook(self):
        plugins = self.claude / "plugins"
        plugins.mkdir()
        (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
            "openmemory@openmemory": [{"scope": "user", "installPath": str(ROOT), "version": "0.1.0"}]}}))
        self.settings.write_text(json.dumps(dict(USER_SETTINGS, enabledPlugins={"openmemory@openmemory": True})))
        before = self.settings.read_bytes()
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("the openmemory plugin (openmemory@openmemory, version 0.1.0) already runs", p.stdout)
        # Only the plugin's tools allowed, by the names its server has: no hook, no other change.
        after = json.loads(self.settings.read_text(encoding="utf-8"))
        self.assertEqual(after["permissions"]["allow"][2:], [f"mcp__plugin_openmemory_openmemory__{t}"
                                                             for t in ("recall", "remember", "show")])
        self.assertNotIn("PreCompact", after["hooks"])
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        self.assertEqual(self.settings.read_bytes(), before)

    def test_systemd_timer_and_launchd_agent_are_written_and_undone(self):
        p = self.setup_cli("--yes", "--schedule", "systemd")
        self.assertEqual(p.returncode, 0, p.stderr)
        units = self.tmp / "xdg" / "systemd" / "user"
        timer = (units / "openmemory-sleep.timer").read_text()
        self.assertIn("OnCalendar=*-*-* 03:30:00\nPersistent=true", timer)
        service = (units / "openmemory-sleep.service").read_text()
        self.assertIn(f'ExecStart=/bin/sh -c "PYTHONPATH={ROOT} ', service)
        self.assertEqual(self.calls.read_text().splitlines(),
                         ["--user daemon-reload", "--user enable --now openmemory-sleep.timer"])
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        self.assertFalse((self.tmp / "xdg").exists())  # the folders setup made for the units go too (a fresh-user pass)
        self.assertIn("--user disable --now openmemory-sleep.timer", self.calls.read_text())

        self.calls.unlink()
        p = self.setup_cli("--yes", "--schedule", "launchd")
        self.assertEqual(p.returncode, 0, p.stderr)
        agent = self.tmp / "user-home" / "Library" / "LaunchAgents" / "com.openmemory.sleep.plist"
        plist = plistlib.loads(agent.read_bytes())
        self.assertEqual(plist["StartCalendarInterval"], {"Hour": 3, "Minute": 30})
        self.assertEqual(plist["ProgramArguments"][:2], ["/bin/sh", "-c"])
        self.assertIn("-m openmemory sleep", plist["ProgramArguments"][2])
        self.assertEqual(self.calls.read_text().splitlines(), [f"load -w {agent}"])
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        self.assertFalse(agent.exists())

    def test_undo_leaves_a_systemd_folder_that_was_there_before(self):
        units = self.tmp / "xdg" / "systemd" / "user"
        units.mkdir(parents=True)
        (units / "backup.timer").write_text("[Timer]\nOnCalendar=daily\n")
        self.assertEqual(self.setup_cli("--yes", "--schedule", "systemd").returncode, 0)
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        self.assertEqual(sorted(p.name for p in units.iterdir()), ["backup.timer"])

    def test_a_deny_rule_for_a_tool_is_pointed_out_not_hidden_behind_the_allow(self):
        self.settings.write_text(json.dumps(dict(USER_SETTINGS, permissions={"deny": ["mcp__openmemory__show"]})))
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"! {self.settings} has `mcp__openmemory__show` under permissions.deny, which wins over the "
                      "allow rules (Claude Code refuses the tool)", p.stdout)
        self.assertEqual(json.loads(self.settings.read_text())["permissions"]["deny"], ["mcp__openmemory__show"])

    def test_a_systemd_timer_systemctl_cannot_enable_leaves_no_unit_behind(self):
        # no user bus (a container, ssh without lingering): `systemctl --user` fails
        (self.bin / "systemctl").write_text("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n")
        p = self.setup_cli("--yes", "--schedule", "systemd")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("Failed to connect to bus", p.stderr)
        self.assertFalse((self.tmp / "xdg").exists())   # nothing looks scheduled, no folder left behind
        self.assertNotIn("✔ nightly job", self.cli("doctor").stdout)

    def test_the_installed_hook_ingests_a_transcript_from_a_bare_environment(self):
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        command = self.hooks_added()["SessionEnd"][-1]
        transcript = test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x")
        event = json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(transcript),
                            "session_id": "s", "cwd": str(self.tmp)})
        p = subprocess.run(["/bin/sh", "-c", command], input=event, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(self.tmp / "user-home")}, timeout=60)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual(status["sessions"], 1)


class Purge(SetupCase):
    def test_undo_purge_removes_every_rendered_lesson_and_section_and_says_what(self):
        from openmemory import paths, store
        from tests.test_render import add_lesson
        real = Path(os.path.realpath(self.tmp))
        shop, blog = real / "shop", real / "blog"
        for repo in (shop, blog):
            (repo / ".git").mkdir(parents=True)
            paths.memory_dir_for(repo).mkdir(parents=True)
        mine = b"# Blog notes\r\n- [Style](style.md) \xe2\x80\x94 short posts\r\n"
        (paths.memory_dir_for(blog) / "MEMORY.md").write_bytes(mine)
        with store.connect() as db:
            ids = [add_lesson(db, "Run the tests with pytest -q, never unittest", cwd=str(shop), strength=1.5),
                   add_lesson(db, "Keep the changelog in CHANGELOG.md up to date", cwd=str(shop), strength=1.2),
                   add_lesson(db, "Write commit messages in the imperative mood", cwd=None, strength=1.0)]
        self.ok("render")
        edited = paths.memory_dir_for(shop) / f"om-{ids[1]}.md"
        edited.write_text(edited.read_text() + "My own note.\n")
        rendered = sorted(p for repo in (shop, blog) for p in paths.memory_dir_for(repo).iterdir())
        self.assertEqual(len(rendered), 6)  # 3 + 1 lesson files, two MEMORY.md

        p = self.setup_cli("--undo", "--purge", "--dry-run")  # setup never ran: the plugin's way out
        self.assertIn("nothing to undo: setup has not added anything", p.stdout)
        self.assertIn("- remove from Claude Code's memory folders 3 lesson files (om-<id>.md) and openmemory's "
                      "section of 2 MEMORY.md, markers included; 1 you edited stay", p.stdout)
        self.assertEqual(sorted(p for repo in (shop, blog) for p in paths.memory_dir_for(repo).iterdir()), rendered)

        p = self.setup_cli("--undo", "--purge", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.listdir(paths.memory_dir_for(shop)), [edited.name])  # MEMORY.md was only ours
        self.assertEqual(os.listdir(paths.memory_dir_for(blog)), ["MEMORY.md"])
        self.assertEqual((paths.memory_dir_for(blog) / "MEMORY.md").read_bytes(), mine)  # markers gone too
        for name in (f"om-{ids[0]}.md", f"om-{ids[2]}.md"):
            self.assertIn(f"removed {paths.memory_dir_for(shop) / name}\n", p.stderr)
        self.assertIn(f"removed {paths.memory_dir_for(blog) / f'om-{ids[2]}.md'}\n", p.stderr)
        self.assertIn(f"took openmemory's section out of {paths.memory_dir_for(blog) / 'MEMORY.md'}", p.stderr)
        self.assertIn(f"left {edited}: you edited it", p.stderr)

        # Removed by openmemory, not deleted by the person: nothing is a veto.
        self.assertEqual(json.loads(self.ok("render", "--json").stdout)["vetoed"], [])
        self.assertEqual(self.setup_cli("--undo", "--purge", "--yes").returncode, 0)
        self.assertIn("no lesson of openmemory's in Claude Code's memory folders nor in Codex's or Gemini's "
                      "instruction files: nothing to purge",
                      self.setup_cli("--undo", "--purge", "--dry-run").stdout)
        self.assertEqual(self.cli("setup", "--purge", "--yes").returncode, 2)  # --purge goes with --undo

    def test_undo_purge_says_that_the_memory_itself_stays_and_what_removes_it(self):
        # A person leaving: `setup --undo --purge` ended "done: removed what setup had added" and
        # said nothing of ~/.openmemory, whose database holds what was said in every session read.
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.ok("remember", "The staging deploy needs the VPN")
        p = self.setup_cli("--undo", "--purge", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"= keep openmemory's own folder {self.home}: the memory database (what you and the agents "
                      f"said in every session read), lessons.jsonl and the backups of your settings; "
                      f"`rm -r {self.home}` removes it, once nothing runs openmemory", p.stdout)
        self.assertTrue((self.home / "memory.db").exists())   # kept, as it says

    def test_undo_without_purge_says_the_lessons_stay_where_claude_code_loads_them(self):
        # A fresh-user pass: `setup --undo` said "done: removed what setup had added" while the next
        # session still loaded three lessons from openmemory's section of MEMORY.md.
        from openmemory import paths, store
        from tests.test_render import add_lesson
        shop = Path(os.path.realpath(self.tmp)) / "shop"
        (shop / ".git").mkdir(parents=True)
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        with store.connect() as db:
            add_lesson(db, "Run the tests with pytest -q, never unittest", cwd=str(shop), strength=1.5)
        self.ok("render")
        memory = paths.memory_dir_for(shop)
        p = self.setup_cli("--undo", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("= keep the lessons openmemory wrote into Claude Code's memory folders (1 lesson file and "
                      "openmemory's section of 1 MEMORY.md): Claude Code still loads them at every session start; "
                      "`openmemory setup --undo --purge` removes them too", p.stdout)
        self.assertIn("pytest -q", (memory / "MEMORY.md").read_text())  # kept, as it says
        self.assertEqual(sorted(os.listdir(memory)), ["MEMORY.md", "om-1.md"])

    def test_undo_purge_removes_the_folders_render_made_and_left_empty(self):
        # a project here with no Claude Code session yet: render made its project folder in
        # Claude Code's projects; purge takes it away again, and never a folder holding anything else
        from openmemory import paths, store
        from tests.test_render import add_lesson
        real = Path(os.path.realpath(self.tmp))
        shop, blog = real / "shop", real / "blog"
        for repo in (shop, blog):
            (repo / ".git").mkdir(parents=True)
        (paths.memory_dir_for(blog).parent / "a-session.jsonl").parent.mkdir(parents=True)
        (paths.memory_dir_for(blog).parent / "a-session.jsonl").write_text("{}\n")   # Claude Code's
        with store.connect() as db:
            add_lesson(db, "Run the tests with pytest -q, never unittest", cwd=str(shop))
            add_lesson(db, "Keep the changelog in CHANGELOG.md up to date", cwd=str(blog))
        self.ok("render")
        self.assertTrue((paths.memory_dir_for(shop) / "MEMORY.md").is_file())
        p = self.setup_cli("--undo", "--purge", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(paths.memory_dir_for(shop).parent.exists())
        self.assertIn(f"removed {paths.memory_dir_for(shop).parent}, left empty", p.stderr)
        self.assertFalse(paths.memory_dir_for(blog).exists())
        self.assertEqual(os.listdir(paths.memory_dir_for(blog).parent), ["a-session.jsonl"])


class Doctor(SetupCase):
    def doctor(self, **env):
        p = self.cli("doctor", env=self.env(**env))
        return p.returncode, p.stdout

    def test_fresh_machine_fails_on_server_and_hook_with_the_fix(self):
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn("✔ database: ", out)
        self.assertIn("✔ fts5: ", out)
        # no `claude` on PATH here: setup could not register the server, so the fix is the command itself
        self.assertIn("✘ mcp server: no openmemory MCP server is registered with Claude Code\n    fix: `claude` is "
                      "not on PATH here, so setup cannot register it; where `claude` runs: `claude mcp add --scope "
                      "user openmemory ", out)
        self.assertIn(f"✘ hook: no openmemory SessionEnd hook in {self.settings}", out)
        self.assertIn("• last sleep: no night has passed yet", out)
        self.assertIn("• last hook run: the hook has not run yet: nothing connects it", out)
        self.assertNotIn("since setup", out)  # setup has not run

    def test_a_missing_nightly_job_fails_with_the_fix_and_one_setup_added_passes_until_it_is_gone(self):
        nowhere = self.tmp / "not-installed"
        rc, out = self.doctor(OPENMEMORY_SYSTEMCTL=nowhere, OPENMEMORY_CRONTAB=nowhere)
        if sys.platform != "darwin":
            self.assertIn("✘ nightly job: no nightly job, and this machine has neither systemd's user manager nor "
                          "`crontab` to run one", out)
            self.assertIn("    fix: install cron (its package is usually `cron` or `cronie`) and run `", out)
            p = self.setup_cli("--dry-run", env=self.env(OPENMEMORY_SYSTEMCTL=nowhere, OPENMEMORY_CRONTAB=nowhere))
            self.assertIn("! nightly sleep: NOT scheduled: this machine has neither systemd's user manager nor "
                          "`crontab`, so nothing runs sleep each night.", p.stdout)
        rc, out = self.doctor()
        self.assertIn("✘ nightly job: no nightly job runs sleep: lessons wait for a session start", out)
        self.assertEqual(self.setup_cli("--yes", "--schedule", "cron").returncode, 0)
        rc, out = self.doctor()
        self.assertIn("✔ nightly job: sleep runs at 03:30 from a crontab line: 30 3 * * * ", out)
        self.crontab_file.write_text("")
        rc, out = self.doctor()
        self.assertIn("✘ nightly job: the nightly job setup added is gone (a crontab line: ", out)
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        rc, out = self.doctor()
        self.assertIn("• nightly job: none (`setup --schedule none`)", out)

    @unittest.skipIf(sys.platform == "darwin", "macOS always has launchd")
    def test_no_scheduler_with_the_session_start_catch_up_in_place_is_a_note_not_a_failure(self):
        # A container, WSL, a machine without cron: nothing is broken when the SessionStart hook
        # catches up a night; ✘ stays for nothing at all to run sleep, and for a job setup added
        # that is gone (test_a_missing_nightly_job_fails_with_the_fix_and_one_setup_added_passes_until_it_is_gone).
        nowhere = self.tmp / "not-installed"
        bare = dict(OPENMEMORY_SYSTEMCTL=nowhere, OPENMEMORY_CRONTAB=nowhere)
        p = self.setup_cli("--yes", env=self.env(**bare))
        self.assertEqual(p.returncode, 0, p.stderr)
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json", env=self.env(**bare)).stdout)["checks"]}
        self.assertEqual(found["nightly job"]["status"], "note", found["nightly job"]["text"])
        self.assertEqual(found["nightly job"], {
            "check": "nightly job", "status": "note", "fix": "",
            "text": "none: this machine has neither systemd's user manager nor `crontab`; a session start catches up "
                    "a night over a day old once there is something new (for a nightly job as well: install cron, "
                    f"its package is usually `cron` or `cronie`, and run `{found['nightly job']['text'].split('`')[7]}` "
                    "again)"})
        self.assertTrue(found["nightly job"]["text"].split("`")[7].endswith(" setup"))
        rc, out = self.doctor(**bare)
        self.assertIn("• nightly job: none: this machine has neither systemd's user manager nor `crontab`; ", out)
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        del settings["hooks"]["SessionStart"]       # nothing left to catch a night up: sleep would never run
        self.settings.write_text(json.dumps(settings))
        rc, out = self.doctor(**bare)
        self.assertEqual(rc, 1)
        self.assertIn("✘ nightly job: no nightly job, and this machine has neither systemd's user manager nor "
                      "`crontab` to run one", out)

    def test_after_setup_every_check_passes_and_notes_what_has_not_happened_yet(self):
        # Register the server as `claude mcp add` would (no claude here): .claude.json's mcpServers.
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        p = subprocess.run([sys.executable, "-c", "import json; from openmemory import setup; "
                                                  "print(json.dumps(setup.mcp_server()))"],
                           capture_output=True, text=True, env=self.env(), check=True)
        server = json.loads(p.stdout)
        (self.claude / ".claude.json").write_text(json.dumps({"mcpServers": {"openmemory": server}}))
        rc, out = self.doctor()
        self.assertEqual(rc, 0, out)
        self.assertIn("✔ mcp server: registered and answers tools/list (recall, show, remember)", out)
        self.assertIn(f"✔ hook: SessionEnd hook in {self.settings} runs: ", out)
        self.assertIn("• last hook run: no session has ended since setup", out)
        self.assertNotIn("✘", out)

    def test_the_tools_not_allowed_fail_with_the_fix_and_a_server_wide_rule_is_said_to_allow_more(self):
        def line():
            return next(x for x in self.doctor()[1].splitlines(True) if "tools allowed" in x)
        self.assertEqual(line(), f"✘ tools allowed: mcp__openmemory__recall, mcp__openmemory__remember, "
                                 f"mcp__openmemory__show not allowed in {self.settings}: Claude Code asks before each "
                                 f"call, and `claude -p` refuses it\n")
        out = self.doctor()[1]
        self.assertIn("(it adds one rule per tool)", out)
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.assertEqual(line(), "✔ tools allowed: the model may call openmemory's tools without asking: "
                                 "mcp__openmemory__recall, mcp__openmemory__remember, mcp__openmemory__show\n")
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        settings["permissions"]["allow"] = ["mcp__openmemory"]
        self.settings.write_text(json.dumps(settings))
        self.assertIn("(by `mcp__openmemory`, which also allows any tool a later version adds)", line())
        settings["permissions"]["deny"] = ["mcp__openmemory__remember"]
        self.settings.write_text(json.dumps(settings))
        self.assertTrue(line().startswith(f"✘ tools allowed: {self.settings} has `mcp__openmemory__remember` under "
                                          f"permissions.deny"), line())

    def test_memory_folders_none_yet_is_said_so_not_counted_as_zero(self):
        projects = self.claude / "projects"
        (projects / "-home-dev-shop").mkdir(parents=True)
        self.assertIn(f"✔ memory folders: {projects} is writable; no project has a memory folder yet", self.doctor()[1])
        (projects / "-home-dev-shop" / "memory").mkdir()
        self.assertIn(f"✔ memory folders: Claude Code's memory folders are writable (1 under {projects})",
                      self.doctor()[1])

    def test_auto_memory_turned_off_fails_the_memory_folders_check(self):
        # Claude Code 2.1.328 then sends no MEMORY.md (measured: a real session's requests held none).
        (self.claude / "projects" / "-home-dev-shop" / "memory").mkdir(parents=True)
        self.assertIn("✔ memory folders: ", self.doctor()[1])
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        self.settings.write_text(json.dumps(dict(settings, autoMemoryEnabled=False)))
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn(f"✘ memory folders: Claude Code loads no MEMORY.md: {self.settings} has \"autoMemoryEnabled\": "
                      f"false, so the lessons never reach the agent (recall still works)\n    fix: take that out if "
                      f"the agent is to start each session with the lessons\n", out)
        self.settings.write_text(json.dumps(dict(settings, env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})))
        self.assertIn(f"✘ memory folders: Claude Code loads no MEMORY.md: CLAUDE_CODE_DISABLE_AUTO_MEMORY=1 is set in "
                      f"the `env` of {self.settings}", self.doctor()[1])
        self.settings.write_text(json.dumps(dict(settings, autoMemoryEnabled=True)))
        self.assertIn("✘ memory folders: Claude Code loads no MEMORY.md: CLAUDE_CODE_DISABLE_AUTO_MEMORY=true is set "
                      "in this shell's environment", self.doctor(CLAUDE_CODE_DISABLE_AUTO_MEMORY="true")[1])
        self.assertIn("✔ memory folders: ", self.doctor()[1])

    def test_show_not_allowed_fails_though_recall_and_remember_are(self):
        # `show` refused leaves the agent with ids it cannot open (`claude -p`: "you haven't granted it yet");
        # setup would add the rule, so doctor must not pass without it.
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        settings["permissions"]["allow"].remove("mcp__openmemory__show")
        self.settings.write_text(json.dumps(settings))
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn(f"✘ tools allowed: mcp__openmemory__show not allowed in {self.settings}", out)
        self.assertIn("+ allow openmemory's tools by name", self.setup_cli("--dry-run", "--schedule", "none").stdout)

    def test_a_hook_whose_command_is_not_found_fails_with_the_fix(self):
        settings = dict(USER_SETTINGS, hooks={"SessionEnd": [{"hooks": [{"type": "command",
                                                                         "command": "openmemory hook"}]}]})
        self.settings.write_text(json.dumps(settings))
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn("✘ hook: the SessionEnd hook `openmemory hook` does not run: exit 127", out)
        self.assertIn("to write a hook with absolute paths", out)

    def test_hooks_claude_code_is_told_not_to_run_fail_though_they_are_in_place(self):
        # `"disableAllHooks": true` (measured with 2.1.328: no hook fires, a session is not ingested
        # as it ends), with setup's hooks all in place and runnable.
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.assertIn("✔ hook: ", self.doctor()[1])
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        settings["disableAllHooks"] = True
        self.settings.write_text(json.dumps(settings))
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn(f"✘ hook: {self.settings} has \"disableAllHooks\": true: Claude Code runs no hook, so no "
                      f"session is ingested as it ends\n    fix: remove that key (or set it to false) if openmemory "
                      f"is to learn as sessions end\n", out)
        settings["disableAllHooks"] = False
        self.settings.write_text(json.dumps(settings))
        self.assertIn("✔ hook: ", self.doctor()[1])

    def test_a_projects_own_settings_that_turn_openmemory_off_there_are_said_with_the_file_and_the_key(self):
        # Measured with 2.1.328 (`claude -p` in the folder, setup's hooks and server at user level):
        # `"disableAllHooks": true` in the launch folder's .claude/settings.json or settings.local.json
        # fires none of the person's hooks there (a parent folder's does nothing, git repository or
        # not); a deny rule there refuses the tool the person allows; `hooks: {}`,
        # `disabledMcpjsonServers` and `enabledMcpjsonServers` there leave hooks and server working.
        import subprocess
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        project = self.tmp / "shop"
        (project / ".claude").mkdir(parents=True)
        (project / "sub").mkdir()
        real = os.path.realpath(project)

        def doctor_in(folder):
            p = subprocess.run([sys.executable, "-m", "openmemory", "doctor"], capture_output=True, text=True,
                               env=self.env(), cwd=str(folder), timeout=60)
            return p.returncode, p.stdout
        (project / ".claude" / "settings.json").write_text(json.dumps({
            "hooks": {}, "disabledMcpjsonServers": ["openmemory"], "enabledMcpjsonServers": ["other"],
            "permissions": {"allow": ["Bash(make:*)"]}}))
        rc, clean = doctor_in(project)
        self.assertNotIn(str(project / ".claude"), clean)
        (project / ".claude" / "settings.local.json").write_text(json.dumps({"disableAllHooks": True}))
        (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": [
            "mcp__openmemory__recall"]}}))
        rc2, out = doctor_in(project)
        self.assertEqual(rc2, rc)       # notes: the person's (or the team's) choice for that project
        self.assertIn(f"• hook: {real}/.claude/settings.local.json has \"disableAllHooks\": true: Claude Code started "
                      f"in {real} runs no hook there, openmemory's neither, so sessions there are read only by the "
                      f"nightly job's ingest or `openmemory ingest` (remove that key there to have them read as they "
                      f"end)\n", out)
        self.assertIn(f"• tools allowed: {real}/.claude/settings.json has `mcp__openmemory__recall` under "
                      f"permissions.deny: in {real} Claude Code refuses the tool it names, though {self.settings} "
                      f"allows it (`claude -p` there refuses it; remove that rule there to allow it)\n", out)
        self.assertIn("✔ hook: ", out)  # the person's own settings are as setup left them
        for elsewhere in (project / "sub", self.tmp):   # a parent's settings do not apply, nor another folder's
            self.assertNotIn(".claude/settings", doctor_in(elsewhere)[1])

    def test_a_projects_folder_named_to_forge_a_line_starts_none_of_doctors(self):
        # A cloned repository's subfolder may be named anything, a line break and a check mark
        # included: doctor run there names it, on its own line, never as a line of its own.
        import subprocess
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        folder = self.tmp / "shop" / "sub\n✔ database: all good\n✔ nightly job"
        (folder / ".claude").mkdir(parents=True)
        (folder / ".claude" / "settings.json").write_text(json.dumps({"disableAllHooks": True}))
        p = subprocess.run([sys.executable, "-m", "openmemory", "doctor"], capture_output=True, text=True,
                           env=self.env(), cwd=str(folder), timeout=60)
        self.assertIn("sub\\n✔ database: all good\\n✔ nightly job/.claude/settings.json has \"disableAllHooks\"", p.stdout)
        self.assertFalse([line for line in p.stdout.splitlines() if line.startswith("✔ database: all good")], p.stdout)

    def test_a_server_turned_off_for_a_project_is_said_with_where(self):
        # `/mcp` in a project (2.1.328): `claude mcp list` there says "⊘ Disabled for this project", and
        # a session there gets "No such tool available: mcp__openmemory__recall" (measured).
        self.assertNotIn("turned off", self.doctor()[1])
        (self.claude / ".claude.json").write_text(json.dumps({"projects": {
            "/home/dev/shop": {"disabledMcpServers": ["openmemory"]},
            "/home/dev/blog": {"disabledMcpServers": ["github"]}, "/home/dev/cli": {}}}))
        self.assertIn("• mcp server: turned off in Claude Code for 1 project, whose agent has no recall (`/mcp` "
                      "there turns it back on): /home/dev/shop\n", self.doctor()[1])

    def test_a_server_that_does_not_start_fails(self):
        (self.claude / ".claude.json").write_text(json.dumps({"mcpServers": {"openmemory": {
            "type": "stdio", "command": "openmemory-not-here", "args": ["serve"]}}}))
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn("✘ mcp server: `openmemory-not-here serve` does not answer: cannot start it", out)

    def test_a_damaged_database_fails_the_quick_check(self):
        self.ok("ingest", test_session(cwd=str(self.tmp)).write(self.projects / "-tmp-x"))
        db = self.home / "memory.db"
        data = bytearray(db.read_bytes())
        self.assertGreater(len(data), 8 * 4096)
        data[4096 * 3:4096 * 6] = b"\x07" * (4096 * 3)  # three b-tree pages of noise
        db.write_bytes(bytes(data))
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn("✘ database: ", out)
        self.assertIn("run `openmemory ingest` to rebuild it", out)

    def test_a_whole_database_that_does_not_open_gets_its_own_fix_not_a_rebuild(self):
        # A newer openmemory's file (two installs, one upgraded): moving it aside and rebuilding
        # from the transcripts would lose the notes and the lessons' history only it holds.
        self.ok("remember", "deploys go out on Fridays")
        with sqlite3.connect(self.home / "memory.db") as db:
            db.execute("PRAGMA user_version = 999")
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn("✘ database: the database at ", out)
        self.assertIn("has schema version 999, newer than this openmemory knows", out)
        self.assertIn("    fix: upgrade openmemory\n", out)
        self.assertNotIn("rebuild", out)
        self.assertNotIn("move memory.db aside", out)

    def test_a_database_that_does_not_open_is_one_failure_not_also_fts5s(self):
        self.ok("remember", "deploys go out on Fridays")
        with sqlite3.connect(self.home / "memory.db") as db:
            db.execute("PRAGMA user_version = 999")
        out = self.doctor()[1]
        self.assertEqual(out.count("✘ database: "), 1)
        self.assertIn("✔ fts5: this Python's SQLite has FTS5 (full-text recall)\n", out)

    def test_the_judge_is_said_off_and_one_whose_claude_is_gone_fails_with_the_fix(self):
        line = lambda out: next(x for x in out.splitlines(True) if " judge: " in x)   # noqa: E731
        self.assertEqual(line(self.doctor()[1]), "• judge: off (optional: `openmemory setup --judge claude|endpoint` "
                                                 "turns one on); nothing leaves this machine\n")
        claude = self.bin / "claude"
        claude.write_text("#!/bin/sh\nexit 0\n")
        claude.chmod(0o755)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "settings.json").write_text(json.dumps({"version": 1, "judge": {
            "backend": "claude", "command": str(claude), "model": "haiku"}}))
        # what it may spend and what leaves the machine for where, said where the person looks again
        # (newuser38); a judge no night has asked yet is not called fine (night40): a note, how to check it
        said = line(self.doctor()[1])
        self.assertTrue(said.startswith("• judge: Claude Code headless (`claude -p --model haiku`): not asked yet, so "
                                        "not known to answer (the first night asks it; `"), said)
        self.assertTrue(said.endswith(" doctor --judge` asks it now one question with nothing of yours in it, one call "
                                      "on your Claude usage); at most 20 calls and 60,000 tokens a night; sent to "
                                      "Claude Code's model, on your Claude account: the messages you typed, with the "
                                      "agent's commands, words and error lines around them and the project's name, "
                                      "secrets redacted\n"), said)
        with store.connect() as db, db.transaction():     # a night asked it, and it answered
            db.set_state("model_night", json.dumps({"model": "Claude Code headless (`claude -p --model haiku`)",
                                                    "asked": 3, "answered": 3, "failures": 0}))
        self.assertEqual(line(self.doctor()[1]), f"✔ judge: Claude Code headless (`claude -p --model haiku`), run by "
                                                 f"the nightly sleep: {claude} is there (not called here: a call "
                                                 f"counts against your Claude usage); at most 20 calls and 60,000 "
                                                 f"tokens a night; sent to Claude Code's model, on your Claude "
                                                 f"account: the messages you typed, with the agent's commands, words "
                                                 f"and error lines around them and the project's name, secrets "
                                                 f"redacted\n")
        for url, where in (("http://localhost:11434/v1", "localhost, on this machine"),
                           ("http://127.0.0.1:8080/v1", "127.0.0.1, on this machine"),
                           ("https://llm.example.com/v1", "llm.example.com, another machine: it leaves this one")):
            (self.home / "settings.json").write_text(json.dumps({"version": 1, "judge": {
                "backend": "endpoint", "url": url, "model": "qwen2.5:7b", "calls": 8, "tokens": 30000}}))
            self.assertIn(f"; at most 8 calls and 30,000 tokens a night; sent to {where}: the messages you typed",
                          line(self.doctor()[1]))
        (self.home / "settings.json").write_text(json.dumps({"version": 1, "judge": {
            "backend": "claude", "command": str(claude), "model": "haiku"}}))
        claude.unlink()     # Claude Code uninstalled, or moved by an upgrade: each night goes on without it
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn(f"✘ judge: Claude Code headless (`claude -p --model haiku`): {claude} is not there, so each "
                      f"night goes on without the judge\n    fix: `", out)
        self.assertIn(" setup --judge claude` finds `claude` on PATH again (or `--judge-command PATH`); "
                      "`--judge off` to go without\n", out)
        (self.home / "settings.json").write_text(json.dumps({"version": 1, "judge": {
            "backend": "endpoint", "url": "ftp://judge.local", "model": "qwen"}}))
        self.assertIn("✘ judge: a judge is set but not used: the judge's URL must be an http:// or https:// "
                      "address, not 'ftp://judge.local'", self.doctor()[1])
        rc, out = self.doctor(OPENMEMORY_LLM_MODEL="qwen")
        self.assertIn("✘ judge: a judge is set but not used: OPENMEMORY_LLM_MODEL is set but OPENMEMORY_LLM_URL "
                      "is not\n    fix: set OPENMEMORY_LLM_URL (http:// or https://) and OPENMEMORY_LLM_MODEL "
                      "together, or neither\n", out)

    def test_a_judge_that_answered_nothing_last_night_fails_with_what_it_said_and_the_fix(self):
        # newuser38: `claude -p` not logged in. The night went on without the judge, the morning report
        # warned "3 failures in a row (see the log)", and doctor, where the person checks, said
        # "✔ judge". Claude Code 2.1.328 prints this (trimmed) and exits 1 when it has no login.
        claude = self.bin / "claude"
        claude.write_text('#!/bin/sh\ncat >/dev/null\necho \'{"type":"result","subtype":"success","is_error":true,'
                          '"result":"Not logged in · Please run /login","total_cost_usd":0,'
                          '"usage":{"input_tokens":0,"output_tokens":0}}\'\nexit 1\n', encoding="utf-8")
        claude.chmod(0o755)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "settings.json").write_text(json.dumps({"version": 1, "judge": {
            "backend": "claude", "command": str(claude), "model": "haiku"}}))
        for n in range(3):      # three messages to judge: the judge is set aside after three failures
            test_session(cwd=str(self.tmp / f"p{n}")).write(self.projects / f"-p{n}")
        self.ok("ingest")
        self.ok("sleep")
        said = "claude -p said: Not logged in · Please run /login"
        morning = self.ok("morning").stdout
        self.assertIn(f"was set aside tonight: 3 failures in a row, the last: {said}; the rules' results stand", morning)
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn(f"✘ judge: Claude Code headless (`claude -p --model haiku`) gave the judge nothing usable on the last night: "
                      f"3 failures in a row, the last: {said}; the rules' results stood\n    fix: run `claude` once "
                      f"and log in (`/login`)", out)

    def test_a_judge_not_asked_yet_can_be_asked_one_question_of_nothing_of_yours_with_doctor_judge(self):
        # night40: after `setup --judge claude` doctor said "✔ judge" while `claude -p` was not logged in,
        # until a night had failed. Plain doctor never runs it (a call spends the person's quota); `doctor
        # --judge` asks it one fixed question and says what it said (the real 2.1.328's words, trimmed).
        claude, asked = self.bin / "claude", self.tmp / "asked.txt"
        said = ('{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login",'
                '"total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}')
        claude.write_text(f"#!/bin/sh\ncat >> {asked}\necho '{said}'\nexit 1\n", encoding="utf-8")
        claude.chmod(0o755)
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "settings.json").write_text(json.dumps({"version": 1, "judge": {
            "backend": "claude", "command": str(claude), "model": "haiku"}}))
        test_session(cwd=str(self.tmp / "shop")).write(self.projects / "-shop")
        self.ok("ingest")
        rc, out = self.doctor()
        self.assertIn("• judge: Claude Code headless (`claude -p --model haiku`): not asked yet, so not known to "
                      "answer (the first night asks it; `", out)
        self.assertIn(" doctor --judge` asks it now one question with nothing of yours in it", out)
        self.assertFalse(asked.exists(), "plain doctor ran the judge")
        p = self.cli("doctor", "--judge", env=self.env())
        self.assertEqual(p.returncode, 1)
        self.assertIn("✘ judge: Claude Code headless (`claude -p --model haiku`) did not answer when asked just now: "
                      "claude -p said: Not logged in · Please run /login\n    fix: run `claude` once and log in "
                      "(`/login`)", p.stdout)
        self.assertEqual(asked.read_text(), 'Reply with {"ok": true}')     # nothing of the person's sessions
        claude.write_text(f"#!/bin/sh\ncat >> {asked}\necho '{{\"type\":\"result\",\"subtype\":\"success\","
                          f"\"is_error\":false,\"result\":\"{{\\\"ok\\\": true}}\"}}'\n", encoding="utf-8")
        p = self.cli("doctor", "--judge", env=self.env())
        self.assertIn("✔ judge: Claude Code headless (`claude -p --model haiku`) answered when asked just now (one "
                      "question with nothing of yours in it); at most 20 calls", p.stdout)

    def test_two_installs_are_reported(self):
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        plugins = self.claude / "plugins"
        plugins.mkdir()
        (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
            "openmemory@openmemory": [{"scope": "user", "installPath": str(ROOT), "version": "0.0.9"}]}}))
        rc, out = self.doctor()
        self.assertEqual(rc, 1)
        self.assertIn("✘ installs: two installs run openmemory on one database: the plugin openmemory@openmemory "
                      "(version 0.0.9) and `openmemory setup`", out)
        self.assertIn("✘ versions: more than one openmemory version uses", out)

    def test_the_database_line_counts_one_episode_as_one(self):
        self.ok("remember", "deploys go out on Fridays")
        self.assertRegex(self.doctor()[1], r"✔ database: .*memory\.db opens and passes SQLite's quick check \(1 episode\)\n")

    def test_findings_in_json(self):
        p = self.cli("doctor", "--json")
        report = json.loads(p.stdout)
        self.assertFalse(report["healthy"])
        self.assertEqual([c["check"] for c in report["checks"]][:2], ["database", "fts5"])
        self.assertEqual(p.returncode, 1)


class Moved(SetupCase):
    def test_setup_from_another_install_replaces_its_own_earlier_hooks_and_cron_line(self):
        self.crontab_file.write_text("0 9 * * 1 ~/bin/weekly.sh\n")
        self.assertEqual(self.setup_cli("--yes", "--schedule", "cron").returncode, 0)
        before = self.hooks_added()["SessionEnd"][-1]
        # The same openmemory reached another way (as an upgrade into a new venv would be).
        moved = self.tmp / "moved"
        shutil.copytree(ROOT / "openmemory", moved / "openmemory", ignore=shutil.ignore_patterns("__pycache__"))
        env = self.env()
        env["PYTHONPATH"] = str(moved)
        p = subprocess.run([sys.executable, "-m", "openmemory", "setup", "--yes", "--schedule", "cron"],
                           capture_output=True, text=True, env=env, cwd=str(self.tmp), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(in place of setup's earlier", p.stdout)
        hooks = self.hooks_added()
        self.assertEqual({len([c for c in cmds if "openmemory" in c]) for cmds in hooks.values()}, {1})
        self.assertNotEqual(hooks["SessionEnd"][-1], before)
        self.assertIn(f"PYTHONPATH={moved} ", hooks["SessionEnd"][-1])
        cron = self.crontab_file.read_text().splitlines()
        self.assertEqual(len(cron), 2, cron)
        self.assertIn(f"PYTHONPATH={moved} ", cron[1])
        p = subprocess.run([sys.executable, "-m", "openmemory", "setup", "--undo", "--yes"], capture_output=True,
                           text=True, env=env, cwd=str(self.tmp), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(self.settings.read_text(encoding="utf-8")), USER_SETTINGS)
        self.assertEqual(self.crontab_file.read_text(), "0 9 * * 1 ~/bin/weekly.sh\n")

    def test_a_moved_venvs_script_is_not_written_into_the_hooks_its_python_is(self):
        # `mv ~/.openmemory-venv ~/tools/om-venv`: the venv's python runs, but bin/openmemory still
        # starts the python of the old place (`required file not found`): setup, run again from the
        # moved venv as doctor's fix says, must write a command that runs.
        bin_dir = self.tmp / "tools" / "om venv" / "bin"
        bin_dir.mkdir(parents=True)
        python = bin_dir / "python3"
        python.symlink_to(sys.executable)
        script = bin_dir / "openmemory"
        from unittest import mock
        with mock.patch.object(setup, "installed", return_value=True), \
                mock.patch.object(sys, "executable", str(python)):
            for first_lines in ("#!/home/me/.openmemory-venv/bin/python3\n",
                                "#!/bin/sh\n'''exec' \"/home/me/old venv/bin/python3\" \"$0\" \"$@\"\n' '''\n"):
                script.write_text(first_lines + "from openmemory.cli import main\n")
                script.chmod(0o755)
                self.assertTrue(setup.shell_command("hook").endswith(f"'{python}' -m openmemory hook"),
                                setup.shell_command("hook"))
                self.assertEqual(setup.mcp_server()["command"], str(python))
            # pip's two forms: the interpreter's path on the first line, or (long, or with a space) the second
            for first_lines in ("#!/usr/bin/env python3\n",
                                f"#!/bin/sh\n'''exec' \"{python}\" \"$0\" \"$@\"\n' '''\n"):
                script.write_text(first_lines + "from openmemory.cli import main\n")
                self.assertTrue(setup.shell_command("hook").endswith(f"'{script}' hook"), first_lines)


class DoctorOnHooks(SetupCase):
    def test_sessions_the_hook_never_ingested_fail_the_check_one_left_open_does_not(self):
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.ok("ingest")  # the database exists; the hook has never run
        record = json.loads((self.home / "setup.json").read_text())
        record["created"] = "2026-01-01T00:00:00.000000Z"  # set up long ago
        (self.home / "setup.json").write_text(json.dumps(record))
        old = 1_790_000_000  # later than setup, and hours before now
        for n in range(2):
            t = test_session(cwd=str(self.tmp / f"p{n}")).write(self.projects / f"-p{n}")
            os.utime(t, (old, old))
            out = self.cli("doctor").stdout
            line = next(x for x in out.splitlines() if "last hook run" in x)
            if n == 0:
                self.assertTrue(line.startswith("• last hook run: no session has ended since setup"), line)
            else:
                self.assertTrue(line.startswith("✘ last hook run: 2 sessions ended since setup and the hook "
                                                "ingested none of them"), line)
        event = json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(t)})
        self.assertEqual(self.cli("hook", input=event).returncode, 0)
        line = next(x for x in self.cli("doctor").stdout.splitlines() if "last hook run" in x)
        self.assertTrue(line.startswith("✔ last hook run: "), line)


def setup_server(env) -> dict:
    """The server entry setup registers, as `claude mcp add` writes it into .claude.json."""
    p = subprocess.run([sys.executable, "-c", "import json; from openmemory import setup; "
                                              "print(json.dumps(setup.mcp_server()))"],
                       capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout)
