"""`openmemory setup`, `--undo` and `doctor` for Codex CLI and Gemini CLI, against a temporary HOME.

Each agent's configuration holds the person's own content first; setup adds openmemory's
server (and, for Gemini, a policy file), `--undo` puts each file back byte for byte, and
`doctor` starts the registered server and checks that `recall` is allowed. The real binaries
calling `recall` through what setup wrote are in test_e2e_agents.py.
"""
import json
import os
import re
import sys
import unittest

from openmemory import agents
from tests.helpers import SetupCase, git_repository

CODEX_CONFIG = 'model = "o3"\n\n[profiles.fast]\nmodel = "o4-mini"   # the person\'s comment\n\n[mcp_servers.github]\ncommand = "gh-mcp"'
GEMINI_SETTINGS = '{\n    "theme": "Dracula",\n    "mcpServers": {"github": {"command": "gh-mcp"}},\n    "ui": {"hideTips": true}\n}\n'


class AgentHome(SetupCase):
    """Codex's and Gemini's configurations under the temporary HOME, the person's content in each."""

    def setUp(self):
        super().setUp()
        self.user = self.tmp / "user-home"
        self.codex = self.user / ".codex" / "config.toml"
        self.gemini = self.user / ".gemini" / "settings.json"
        self.policy = self.user / ".gemini" / "policies" / "openmemory.toml"
        self.codex.parent.mkdir(parents=True)
        self.gemini.parent.mkdir(parents=True)
        self.codex.write_text(CODEX_CONFIG)
        self.gemini.write_text(GEMINI_SETTINGS)


class AgentSetup(AgentHome):
    def test_setup_registers_both_allows_the_tools_and_undo_puts_every_byte_back(self):
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("register the MCP server `openmemory` with Codex", p.stdout)
        self.assertIn("register the MCP server `openmemory` with Gemini", p.stdout)
        text = self.codex.read_text()
        self.assertTrue(text.startswith(CODEX_CONFIG + "\n"))       # the person's bytes, then ours
        server = agents.codex_server(text)
        self.assertEqual(server["args"][-1], "serve")
        self.assertTrue(server["command"].startswith("/"))           # absolute, as for Claude Code
        self.assertEqual(server["approvals"], {"recall": "approve", "remember": "approve", "show": "approve"})
        self.assertEqual(server["env"]["OPENMEMORY_HOME"], str(self.home))
        settings = json.loads(self.gemini.read_text())
        self.assertEqual(settings["theme"], "Dracula")
        self.assertEqual(settings["mcpServers"]["github"], {"command": "gh-mcp"})
        self.assertEqual(settings["mcpServers"]["openmemory"]["args"][-1], "serve")
        self.assertEqual(agents.gemini_allowed(self.policy.read_text()), {"recall", "remember", "show"})

        again = self.setup_cli("--yes", "--schedule", "none")
        self.assertIn("Codex's MCP server `openmemory` is in", again.stdout)
        self.assertIn("Gemini's policy", again.stdout)
        self.assertEqual(agents.codex_server(self.codex.read_text()), server)   # not added twice

        p = self.setup_cli("--undo", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.codex.read_bytes(), CODEX_CONFIG.encode())
        self.assertEqual(self.gemini.read_bytes(), GEMINI_SETTINGS.encode())
        self.assertFalse(self.policy.exists())
        self.assertFalse(self.policy.parent.exists())     # the policies folder setup made goes too

    def test_the_policy_names_each_tool_in_full_and_an_earlier_setups_file_is_brought_up_to_date(self):
        # gemini-cli 0.61.0 checks a bare toolName against its own tools and warns at every start
        # about one a typo away ('Unrecognized tool name "show"'): the full name is never a typo.
        self.setup_cli("--yes", "--schedule", "none")
        text = self.policy.read_text()
        self.assertEqual(re.findall(r'toolName = "([^"]+)"', text),
                         ["mcp_openmemory_recall", "mcp_openmemory_remember", "mcp_openmemory_show"])
        self.assertNotIn("mcpName", text)
        earlier = "# openmemory\n" + "".join(f'\n[[rule]]\nmcpName = "openmemory"\ntoolName = "{t}"\ndecision = "allow"\n'
                                             f"priority = 100\n" for t in agents.TOOLS)
        self.assertEqual(agents.gemini_allowed(earlier), {"recall", "remember", "show"})    # doctor reads both
        self.policy.write_text(earlier)
        record = self.home / "setup.json"
        rec = json.loads(record.read_text())
        rec["gemini"]["policy"]["text"] = earlier
        record.write_text(json.dumps(rec))
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertIn("by their full names", p.stdout)
        self.assertEqual(self.policy.read_text(), text)
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        self.assertFalse(self.policy.exists())

    def test_undo_leaves_a_policies_folder_that_was_there_and_what_is_in_it(self):
        self.policy.parent.mkdir()
        (self.policy.parent / "mine.toml").write_text("# the person's own policy\n")
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.assertEqual(self.setup_cli("--undo", "--yes").returncode, 0)
        self.assertFalse(self.policy.exists())
        self.assertEqual((self.policy.parent / "mine.toml").read_text(), "# the person's own policy\n")

    def test_what_the_person_changed_after_setup_survives_undo(self):
        self.setup_cli("--yes", "--schedule", "none")
        self.codex.write_text(self.codex.read_text() + '\n[mcp_servers.later]\ncommand = "later"\n')
        settings = json.loads(self.gemini.read_text())
        settings["theme"] = "Light"
        self.gemini.write_text(json.dumps(settings, indent=4) + "\n")
        self.setup_cli("--undo", "--yes")
        text = self.codex.read_text()
        self.assertTrue(text.startswith(CODEX_CONFIG))
        self.assertIn("[mcp_servers.later]", text)
        self.assertIsNone(agents.codex_server(text))
        after = json.loads(self.gemini.read_text())
        self.assertEqual((after["theme"], list(after["mcpServers"])), ("Light", ["github"]))

    def test_a_gemini_allowlist_without_openmemory_is_told_not_passed(self):
        # gemini-cli 0.61.0 starts only the servers settings.json's mcp.allowed names, and none
        # mcp.excluded names: `gemini mcp list` said "openmemory ... Blocked" while doctor said ✔.
        self.gemini.write_text('{"mcpServers": {"github": {"command": "gh-mcp"}}, "mcp": {"allowed": ["github"]}}\n')
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertIn("`openmemory` is not among them, so Gemini's model cannot call `recall`", p.stdout)
        self.assertEqual(json.loads(self.gemini.read_text())["mcp"], {"allowed": ["github"]})   # theirs to change
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["gemini"]["status"], "fail")
        self.assertIn('"allowed"', found["gemini"]["text"])
        settings = json.loads(self.gemini.read_text())
        settings["mcp"] = {"allowed": ["github", "openmemory"]}
        self.gemini.write_text(json.dumps(settings))
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["gemini"]["status"], "ok", found["gemini"])
        settings["mcp"] = {"excluded": ["openmemory"]}
        self.gemini.write_text(json.dumps(settings))
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["gemini"]["status"], "fail")
        self.assertIn('"excluded"', found["gemini"]["text"])
        # the entry's own tool lists (0.61.0 offers no tool excludeTools names, none includeTools leaves out)
        settings.pop("mcp")
        for key, tools, ok in (("excludeTools", ["recall"], "fail"), ("includeTools", ["show"], "fail"),
                               ("includeTools", ["recall(query)", "show"], "ok"), ("excludeTools", ["show"], "ok")):
            entry = dict(settings["mcpServers"]["openmemory"])
            entry[key] = tools
            self.gemini.write_text(json.dumps(dict(settings, mcpServers=dict(settings["mcpServers"], openmemory=entry))))
            found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
            self.assertEqual(found["gemini"]["status"], ok, (key, tools, found["gemini"]))

    def test_doctor_fails_when_codex_has_openmemorys_server_or_recall_switched_off(self):
        # `codex mcp list` (0.171.0) says `disabled` for a server with `enabled = false`; doctor said ✔.
        self.setup_cli("--yes", "--schedule", "none")
        connected = self.codex.read_text()
        header = "[mcp_servers.openmemory]\n"
        for extra, told in (("enabled = false\n", "enabled = false"),
                            ('disabled_tools = ["recall"]\n', "disabled_tools"),
                            ('enabled_tools = ["show"]\n', "enabled_tools")):
            self.codex.write_text(connected.replace(header, header + extra))
            found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
            self.assertEqual(found["codex"]["status"], "fail", extra)
            self.assertIn(told, found["codex"]["text"])
        self.codex.write_text(connected.replace(header, header + 'enabled_tools = ["recall", "show"]\n'))
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["codex"]["status"], "ok", found["codex"])

    def test_the_nightly_job_reads_the_agents_folders_setup_was_given(self):
        # Codex's and Gemini's sessions are read only by an ingest openmemory runs (no hook of
        # theirs): the nightly one must look where they are, not in ~/.codex and ~/.gemini.
        codex_home, gemini_home = self.tmp / "elsewhere" / "codex", self.tmp / "elsewhere" / "g home"
        (codex_home / "sessions").mkdir(parents=True)
        (gemini_home / ".gemini").mkdir(parents=True)
        env = self.env(CODEX_HOME=codex_home, GEMINI_CLI_HOME=gemini_home)
        p = self.setup_cli("--yes", "--schedule", "cron", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        line = self.crontab_file.read_text().splitlines()[-1]
        self.assertIn(f"CODEX_HOME={codex_home} ", line)
        self.assertIn(f"GEMINI_CLI_HOME='{gemini_home}' ", line)
        self.assertIn(str(codex_home / "config.toml"), p.stdout)      # and the rest of setup went there
        again = self.setup_cli("--yes", "--schedule", "cron", env=env)
        self.assertEqual(self.crontab_file.read_text().splitlines()[-1], line)
        self.assertNotIn("+ ", again.stdout)                            # nothing left to change

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib (Python 3.11 on) tells that a file Codex wrote again is the same file less openmemory")
    def test_undo_takes_openmemorys_server_out_after_codex_rewrote_the_file(self):
        # `codex mcp add foo -- /bin/true` (0.171.0) writes config.toml again: openmemory's tables
        # move up beside the other servers and setup's comment line goes. Undo left the server in.
        self.setup_cli("--yes", "--schedule", "none")
        block = self.codex.read_text()[len(CODEX_CONFIG) + 1:]
        ours = block.replace(agents.MARK + "\n", "").strip("\n") + "\n"
        rewritten = ('model = "o3"\n\n[profiles.fast]\nmodel = "o4-mini"   # the person\'s comment\n\n'
                     '[mcp_servers.github]\ncommand = "gh-mcp"\n\n' + ours +
                     '\n[mcp_servers.foo]\ncommand = "/bin/true"\n# mine, about what follows\n[profiles.slow]\nmodel = "o3"\n')
        self.codex.write_text(rewritten)
        p = self.setup_cli("--undo", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"take out what setup added to {self.codex}", p.stdout)
        text = self.codex.read_text()
        self.assertIsNone(agents.codex_server(text))
        self.assertEqual(text, rewritten.replace(ours + "\n", ""))      # every line of the person's kept

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib (Python 3.11 on) tells that a file Codex wrote again is the same file less openmemory")
    def test_setup_moves_its_server_to_a_new_install_after_codex_rewrote_the_file(self):
        # An earlier setup's server, for an install since moved, in a file Codex wrote again: setup
        # said "already has an MCP server `openmemory` ... that setup did not add; left as it is".
        old = {"command": "/old/venv/bin/openmemory", "args": ["serve"], "env": {}}
        added = agents.codex_appended(CODEX_CONFIG, old)
        moved = added.replace(agents.MARK + "\n", "").strip("\n") + "\n"
        self.codex.write_text('model = "o3"\n\n[mcp_servers.github]\ncommand = "gh-mcp"\n\n' + moved +
                              '\n[profiles.fast]\nmodel = "o4-mini"\n')
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "setup.json").write_text(json.dumps(
            {"codex": {"config": str(self.codex), "before": CODEX_CONFIG, "after": CODEX_CONFIG + added, "added": added}}))
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("register the MCP server `openmemory` with Codex", p.stdout)
        text = self.codex.read_text()
        self.assertNotIn("/old/venv", text)
        self.assertEqual(text.count("[mcp_servers.openmemory]"), 1)
        self.assertEqual(agents.codex_server(text)["args"][-1], "serve")
        self.assertIn('[profiles.fast]\nmodel = "o4-mini"\n', text)
        self.assertTrue(text.startswith('model = "o3"\n\n[mcp_servers.github]\ncommand = "gh-mcp"\n\n'))

    def test_setup_again_keeps_an_approval_the_person_changed(self):
        self.setup_cli("--yes", "--schedule", "none")
        mine = self.codex.read_text().replace('[mcp_servers.openmemory.tools.remember]\napproval_mode = "approve"',
                                              '[mcp_servers.openmemory.tools.remember]\napproval_mode = "prompt"')
        self.codex.write_text(mine)
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        self.assertEqual(self.codex.read_text(), mine)

    def test_a_server_named_openmemory_the_person_added_is_left_alone(self):
        mine = CODEX_CONFIG + '\n\n[mcp_servers.openmemory]\ncommand = "my-openmemory"\n'
        self.codex.write_text(mine)
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertIn("that setup did not add; left as it is", p.stdout)
        self.assertEqual(self.codex.read_text(), mine)
        self.setup_cli("--undo", "--yes")
        self.assertEqual(self.codex.read_text(), mine)

    def test_an_agent_that_is_not_installed_is_not_touched(self):
        self.codex.unlink()
        self.codex.parent.rmdir()
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertNotIn("Codex", p.stdout)
        self.assertFalse(self.codex.parent.exists())
        self.assertIn("with Gemini", p.stdout)

    def test_doctor_passes_for_codex_and_gemini_alone_without_claude_code(self):
        # Only Codex and Gemini here (no `claude` on PATH, no .claude.json): doctor failed
        # "no openmemory MCP server is registered with Claude Code" for ever, exit 1, though
        # nothing was wrong with what a Codex or Gemini user has.
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none").returncode, 0)
        p = self.cli("doctor", "--json")
        found = {f["check"]: f for f in json.loads(p.stdout)["checks"]}
        self.assertEqual(found["mcp server"]["status"], "note", found["mcp server"])
        self.assertIn("Claude Code is not installed here", found["mcp server"]["text"])
        self.assertIn("Codex and Gemini recall through", found["mcp server"]["text"])
        self.assertEqual((found["codex"]["status"], found["gemini"]["status"]), ("ok", "ok"))
        self.assertEqual(p.returncode, 0, p.stdout)
        # Claude Code has run here (its .claude.json), without openmemory's server: that fails, as before
        (self.claude / ".claude.json").write_text("{}")
        p = self.cli("doctor", "--json")
        found = {f["check"]: f for f in json.loads(p.stdout)["checks"]}
        self.assertEqual(found["mcp server"]["status"], "fail", found["mcp server"])
        self.assertEqual(p.returncode, 1)

    def test_without_claude_code_a_session_start_of_codex_or_gemini_catches_up(self):
        # Codex and Gemini run no hook of openmemory's, but start its server at each session's start,
        # which catches up a night (test_schedule.ServerCatchup): setup and doctor said "no session
        # start catches up a night here", and sent the person to run ingest and sleep by hand.
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertIn("nightly sleep: not scheduled (--schedule none); a session start catches up a night over a "
                      "day old once there is something new (Codex and Gemini start openmemory's server, which "
                      "does it)", p.stdout)
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["nightly job"]["status"], "note")
        self.assertIn("a session start catches up a night", found["nightly job"]["text"])
        self.assertNotIn("no session start", found["nightly job"]["text"])
        self.assertNotIn("`openmemory ingest` and `openmemory sleep`", found["nightly job"]["text"])
        (self.claude / ".claude.json").write_text("{}")     # Claude Code here too: its SessionStart hook as well
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertIn("a session start catches up a night", found["nightly job"]["text"])

    def test_doctor_checks_each_agents_server_and_that_recall_is_allowed(self):
        p = self.cli("doctor", "--json")
        found = {f["check"]: f for f in json.loads(p.stdout)["checks"]}
        self.assertEqual((found["codex"]["status"], found["gemini"]["status"]), ("fail", "fail"))
        self.assertIn("setup", found["codex"]["fix"])
        self.setup_cli("--yes", "--schedule", "none")
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual((found["codex"]["status"], found["gemini"]["status"]), ("ok", "ok"), found)
        self.assertIn("recall, show, remember", found["codex"]["text"])
        # `show` refused alone leaves the model with hits it cannot open: each tool is checked
        # (doctor checked recall only, and said ✔)
        full = self.codex.read_text()
        self.codex.write_text(full.replace('[mcp_servers.openmemory.tools.show]\napproval_mode = "approve"',
                                           '[mcp_servers.openmemory.tools.show]\napproval_mode = "prompt"'))
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["codex"]["status"], "fail", found["codex"])
        self.assertIn("`show`", found["codex"]["text"])
        self.assertIn("tools.show", found["codex"]["fix"])
        self.codex.write_text(full)
        # without the approval Codex's model cannot call recall in `codex exec`
        self.codex.write_text(self.codex.read_text().replace('approval_mode = "approve"', 'approval_mode = "auto"'))
        self.policy.unlink()
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual((found["codex"]["status"], found["gemini"]["status"]), ("fail", "fail"))
        self.assertIn("approval_mode", found["codex"]["fix"])
        self.assertIn("policy", found["gemini"]["fix"])

    def test_a_config_toml_that_sets_mcp_servers_inline_is_left_for_the_person(self):
        inline = 'mcp_servers = { github = { command = "gh-mcp" } }\n'
        self.codex.write_text(inline)
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertIn("add openmemory's server there yourself", p.stdout)
        self.assertEqual(self.codex.read_text(), inline)

    def test_a_gemini_settings_json_with_comments_is_read_and_its_comments_are_not_lost(self):
        # gemini-cli 0.61.0 reads settings.json through strip-json-comments: comments are valid
        # there. Setup said "not valid JSON; Claude Code ignores such a file too" and doctor failed.
        commented = ('{\n  // my theme\n  "theme": "Dracula", /* "ui": {} */\n'
                     '  "mcpServers": {"github": {"command": "gh-mcp", "args": ["//not a comment"]}}\n}\n')
        self.gemini.write_text(commented)
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.gemini.read_text(), commented)        # the person's comments stay
        self.assertNotIn("Claude Code ignores", p.stdout)
        self.assertIn("comments", p.stdout)
        self.assertIn('"openmemory": {"command":', p.stdout)        # the entry to add, by hand
        self.assertIn("recall", self.policy.read_text())            # the policy file is setup's own
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["gemini"]["status"], "fail")
        self.assertIn("no openmemory MCP server", found["gemini"]["text"])  # read, not "not valid JSON"
        self.assertIn("it has comments", found["gemini"]["fix"])
        told = next(line for line in p.stdout.splitlines() if line.strip().startswith('"openmemory": {'))
        entry = json.dumps(json.loads("{" + told + "}")["openmemory"])    # as the person pastes it
        self.gemini.write_text(commented.replace('"mcpServers": {', '"mcpServers": {"openmemory": ' + entry + ', // mine\n'))
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["gemini"]["status"], "ok", found["gemini"])
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertIn("Gemini's MCP server `openmemory` is in", p.stdout)

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib (Python 3.11 on) tells a config.toml Codex cannot read")
    def test_a_config_toml_codex_cannot_read_is_left_and_doctor_says_so(self):
        # codex-cli 0.171.0 refuses to start on it ("failed to load bootstrap configuration ...
        # unclosed table"): a server appended there would never run, and doctor said ✔.
        broken = 'model = "o3"\n[mcp_servers.github\ncommand = "gh-mcp"\n'
        self.codex.write_text(broken)
        p = self.setup_cli("--yes", "--schedule", "none")
        self.assertEqual(self.codex.read_text(), broken)
        self.assertIn(f"{self.codex} is not valid TOML", p.stdout)
        self.assertIn("with Gemini", p.stdout)                  # the other agent is still connected
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["codex"]["status"], "fail")
        self.assertIn("not valid TOML", found["codex"]["text"])
        self.assertIn("line 2", found["codex"]["text"])
        self.codex.write_text(broken + agents.codex_block({"command": "/bin/openmemory", "args": ["serve"]}))
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["codex"]["status"], "fail")      # openmemory's block is there, but unread


class FoldersSetupMade(SetupCase):
    """Codex and Gemini on PATH that have not run yet, and no Claude Code folder: setup makes
    ~/.codex, ~/.gemini and the Claude Code folder for the files it writes there; undo leaves the
    home as it was. It left each of them behind, empty (measured with codex-cli 0.171.0 and
    gemini-cli 0.61.0 on PATH in a fresh home), and an empty ~/.codex or ~/.gemini alone is what
    makes setup and doctor take that agent as installed (agents.found)."""

    def test_undo_takes_away_the_folders_setup_made_and_keeps_one_in_use(self):
        import shutil
        shutil.rmtree(self.claude)
        for name in ("codex", "gemini"):
            (self.bin / name).write_text("#!/bin/sh\nexit 0\n")
            (self.bin / name).chmod(0o755)
        user = self.tmp / "user-home"
        user.mkdir()
        env = self.env(PATH=f"{self.bin}:/usr/bin:/bin")
        before = sorted(str(p.relative_to(self.tmp)) for p in self.tmp.rglob("*") if "om-home" not in p.parts)
        p = self.setup_cli("--yes", "--schedule", "none", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        for folder in (user / ".codex", user / ".gemini"):
            self.assertTrue(folder.is_dir(), folder)
        self.assertFalse(self.claude.exists())      # Claude Code is not here: none of its folder
        p = self.setup_cli("--undo", "--yes", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        after = sorted(str(p.relative_to(self.tmp)) for p in self.tmp.rglob("*") if "om-home" not in p.parts)
        self.assertEqual(after, before)
        # a folder setup made that holds something since (Codex ran) stays, with what is in it
        self.assertEqual(self.setup_cli("--yes", "--schedule", "none", env=env).returncode, 0)
        (user / ".codex" / "sessions").mkdir()
        self.assertEqual(self.setup_cli("--undo", "--yes", env=env).returncode, 0)
        self.assertEqual(os.listdir(user / ".codex"), ["sessions"])
        self.assertFalse((user / ".gemini").exists())

    def test_codex_or_gemini_alone_gets_nothing_of_claude_codes(self):
        # codex-cli (or gemini-cli) alone in a fresh home: setup wrote Claude Code's settings.json
        # (allow rules, three hooks) into a ~/.claude it made, said "`claude` is not on PATH: register
        # the MCP server yourself", doctor then failed 'tools allowed' and 'hook' (exit 1), and render
        # made <claude>/projects/<project>/memory/ for a project's lessons nobody reads there.
        import shutil
        from pathlib import Path
        from openmemory import store
        from tests.test_render import add_lesson
        shutil.rmtree(self.claude)
        user = self.tmp / "user-home"
        user.mkdir()
        repo = Path(os.path.realpath(self.tmp)) / "shop"
        repo.mkdir()
        with store.connect() as db:
            add_lesson(db, "In this repository run the tests with make test", cwd=str(repo), strength=1.2)
        for name in ("codex", "gemini"):
            with self.subTest(agent=name):
                for other in ("codex", "gemini"):
                    (self.bin / other).unlink(missing_ok=True)
                (self.bin / name).write_text("#!/bin/sh\nexit 0\n")
                (self.bin / name).chmod(0o755)
                env = self.env(PATH=f"{self.bin}:/usr/bin:/bin")
                p = self.setup_cli("--yes", "--schedule", "none", env=env)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertFalse(self.claude.exists())
                self.assertNotIn(str(self.claude), p.stdout.split("\n", 1)[1])    # but for "no .claude.json"
                self.assertNotIn("claude mcp add", p.stdout)
                self.assertIn("Claude Code is not installed here", p.stdout)
                self.assertIn(f"with {name.capitalize()}", p.stdout)
                doctor = self.cli("doctor", "--json", env=env)
                checks = {f["check"]: f["status"] for f in json.loads(doctor.stdout)["checks"]}
                self.assertEqual(doctor.returncode, 0, doctor.stdout)
                self.assertEqual(checks[name], "ok")
                self.assertNotIn("hook", checks)
                self.assertNotIn("tools allowed", checks)
                self.assertEqual(self.cli("render", env=env).returncode, 0)
                self.assertFalse(self.claude.exists())
                self.assertEqual(self.setup_cli("--undo", "--purge", "--yes", env=env).returncode, 0)
                self.assertEqual(os.listdir(user), [])


class Purge(AgentHome):
    """`setup --undo --purge` takes the lessons out of Codex's and Gemini's instruction files too."""

    def render_into_every_agent_file(self):
        from pathlib import Path
        from openmemory import paths, store
        from tests.test_render import add_lesson
        repo = self.repo = git_repository(Path(os.path.realpath(self.tmp)) / "shop")
        (self.user / ".gemini" / "projects.json").write_text(json.dumps({"projects": {str(repo): "shop"}}))
        (self.user / ".gemini" / "tmp" / "shop").mkdir(parents=True)
        self.gemini_md = self.user / ".gemini" / "GEMINI.md"
        self.gemini_md.write_bytes(GEMINI_MD)
        self.repo_md = repo / "AGENTS.md"
        self.repo_md.write_bytes(REPO_MD)
        with store.connect() as db:
            add_lesson(db, "Write commit messages in the imperative mood", cwd=None, strength=1.5)
            add_lesson(db, "In this repository run the tests with python3 -m unittest", cwd=str(repo), strength=1.2)
        self.assertEqual(self.ok("render").returncode, 0)
        self.codex_md = paths.codex_agents_md()
        self.private = paths.gemini_chats_root() / "shop" / "memory" / "MEMORY.md"
        for path in (self.codex_md, self.gemini_md, self.private, self.repo_md):
            self.assertIn("openmemory:begin", path.read_text(), path)

    def test_undo_purge_takes_openmemorys_sections_out_markers_and_all_and_keeps_the_persons_bytes(self):
        self.setup_cli("--yes", "--schedule", "none")
        self.render_into_every_agent_file()
        p = self.setup_cli("--undo", "--purge", "--dry-run")
        for path in (self.codex_md, self.gemini_md, self.private, self.repo_md):
            self.assertIn(str(path), p.stdout)
            self.assertIn("openmemory:begin", path.read_text())             # a dry run touches nothing
        p = self.setup_cli("--undo", "--purge", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(self.codex_md.exists())                 # the section was all it held
        self.assertFalse(self.private.exists())
        # and the memory folder render made for it, left empty (gemini-cli 0.61.0 had made only
        # tmp/shop/, its chats and logs: purge left an empty memory/ behind)
        self.assertFalse(self.private.parent.exists())
        self.assertTrue(self.private.parent.parent.is_dir())
        self.assertIn(f"removed {self.private.parent}, left empty", p.stderr)
        self.assertEqual(self.gemini_md.read_bytes(), GEMINI_MD)  # the person's bytes, as they were
        for path in (self.codex_md, self.gemini_md, self.private):
            self.assertIn(f"took openmemory's section out of {path}", p.stderr)
        # A repository's AGENTS.md: the markers are the person's (render wrote there only because
        # they put them): the lessons go, the markers stay, and stderr says so.
        self.assertEqual(self.repo_md.read_bytes(), REPO_MD)
        self.assertIn(f"took the lessons out of {self.repo_md}; the markers you put there stay", p.stderr)
        self.assertEqual(self.codex.read_bytes(), CODEX_CONFIG.encode())  # and the undo itself
        self.assertIn("nothing to purge", self.setup_cli("--undo", "--purge", "--dry-run").stdout)
        self.assertEqual(json.loads(self.ok("render", "--json").stdout)["vetoed"], [])    # no veto

    def test_a_forgotten_lesson_leaves_every_agents_file(self):
        self.render_into_every_agent_file()
        self.assertIn("imperative mood", self.codex_md.read_text())
        self.assertIn("python3 -m unittest", self.private.read_text())
        p = self.ok("forget", "l1", "l2", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        for path in (self.codex_md, self.gemini_md, self.private, self.repo_md):
            text = path.read_text() if path.exists() else ""
            self.assertNotIn("imperative mood", text, path)
            self.assertNotIn("python3 -m unittest", text, path)
        self.assertEqual(self.gemini_md.read_bytes(), GEMINI_MD)    # the person's bytes stay

    def test_a_repositorys_markers_stay_when_its_last_lesson_goes(self):
        # The markers in a repository's AGENTS.md are the person's opt-in, in a committed file:
        # the project's last lesson going empties the section; the markers stay for the next one.
        from openmemory import store
        from tests.test_render import add_lesson
        self.render_into_every_agent_file()
        self.assertEqual(self.ok("forget", "l2", "--yes").returncode, 0)
        self.assertEqual(self.repo_md.read_bytes(), REPO_MD)
        self.assertFalse(self.private.exists())         # Gemini's private file is openmemory's: it goes
        with store.connect() as db:
            add_lesson(db, "In this repository build with make build, not make bild",
                       cwd=str(self.repo_md.parent), strength=1.2)
        self.assertEqual(self.ok("render").returncode, 0)
        self.assertIn("make build, not make bild", self.repo_md.read_text())

    def test_a_section_whose_markers_the_person_broke_is_left_and_said(self):
        self.render_into_every_agent_file()
        broken = self.gemini_md.read_text().replace("<!-- openmemory:end -->\n", "")
        self.gemini_md.write_text(broken)
        p = self.setup_cli("--undo", "--purge", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.gemini_md.read_text(), broken)
        self.assertIn(f"left {self.gemini_md} as it is: its openmemory markers are damaged", p.stderr)
        self.assertFalse(self.codex_md.exists())

    def test_doctor_checks_the_lessons_files_of_each_agent(self):
        self.setup_cli("--yes", "--schedule", "none")
        self.render_into_every_agent_file()
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["codex lessons"]["status"], "ok", found["codex lessons"])
        self.assertEqual(found["gemini lessons"]["status"], "ok", found["gemini lessons"])
        self.assertIn("1 project", found["gemini lessons"]["text"])
        self.private.write_text(self.private.read_text().replace("<!-- openmemory:end -->", ""))
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual(found["gemini lessons"]["status"], "fail")
        self.assertIn(str(self.private), found["gemini lessons"]["text"])

    def test_doctor_names_the_projects_whose_lessons_reach_codex_through_recall_only(self):
        # Codex alone for a week: a project's lesson learnt, in no file Codex loads (no markers in
        # its AGENTS.md), and doctor said only "codex lessons: ~/.codex/AGENTS.md does not exist yet".
        from pathlib import Path
        from openmemory import store
        from tests.test_render import add_lesson
        self.setup_cli("--yes", "--schedule", "none")
        repo = git_repository(Path(os.path.realpath(self.tmp)) / "shop")
        with store.connect() as db:
            add_lesson(db, "In this repository run the tests with python3 -m unittest", cwd=str(repo), strength=1.2)
        notes = [f["text"] for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]
                 if f["check"] == "codex lessons" and "recall only" in f["text"]]
        self.assertEqual(len(notes), 1, notes)
        self.assertIn(f"the lessons of 1 project ({repo}) reach Codex through recall only", notes[0])
        (repo / "AGENTS.md").write_text("<!-- openmemory:begin -->\n<!-- openmemory:end -->\n")
        self.assertEqual(self.ok("render").returncode, 0)
        self.assertIn("python3 -m unittest", (repo / "AGENTS.md").read_text())
        checks = json.loads(self.cli("doctor", "--json").stdout)["checks"]
        self.assertEqual([f["text"] for f in checks if "recall only" in f["text"]], [])

    def test_doctor_says_a_repositorys_agents_md_git_would_commit_gets_no_lessons(self):
        # The markers in an AGENTS.md git tracks: doctor said "✔ codex lessons: ... and the lessons
        # of 1 project in <repo>/AGENTS.md", the lessons on their way into the next commit.
        self.setup_cli("--yes", "--schedule", "none")
        self.render_into_every_agent_file()
        import subprocess
        subprocess.run(["git", "-C", str(self.repo), "add", "-f", "AGENTS.md"], check=True, capture_output=True,
                       env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull))
        p = self.cli("doctor", "--json")
        codex = [f for f in json.loads(p.stdout)["checks"] if f["check"] == "codex lessons"]
        self.assertEqual(codex[0]["status"], "ok")
        self.assertNotIn(str(self.repo_md), codex[0]["text"])
        self.assertEqual([(f["status"], str(self.repo_md) in f["text"], "git tracks it" in f["text"])
                          for f in codex[1:]], [("note", True, True)])
        self.assertIn(".git/info/exclude", codex[1]["text"])
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(self.ok("render").returncode, 0)
        self.assertNotIn("python3 -m unittest", self.repo_md.read_text())


GEMINI_MD = b"# My Gemini notes\r\n\r\nAlways answer in British English.\r\n"
REPO_MD = b"# Shop\n\nUse tabs.\n\n<!-- openmemory:begin -->\n<!-- openmemory:end -->\n\nMore of mine.\n"


class TheBlock(SetupCase):
    def test_the_block_parses_as_toml_to_the_server_it_was_made_of(self):
        server = {"command": "/opt/venv/bin/openmemory", "args": ["serve"], "env": {"OPENMEMORY_HOME": '/a "b"\\c'}}
        text = agents.codex_appended('model = "x"', server)
        self.assertTrue(text.startswith("\n"))
        parsed = agents.codex_server('model = "x"' + text)
        self.assertEqual((parsed["command"], parsed["args"], parsed["env"]),
                         (server["command"], server["args"], server["env"]))
        self.assertEqual(agents._codex_server_by_lines('model = "x"' + text), parsed)   # without tomllib too
