"""`openmemory setup`, `--undo` and `doctor` for Codex CLI and Gemini CLI, against a temporary HOME.

Each agent's configuration holds the person's own content first; setup adds openmemory's
server (and, for Gemini, a policy file), `--undo` puts each file back byte for byte, and
`doctor` starts the registered server and checks that `recall` is allowed. The real binaries
calling `recall` through what setup wrote are in test_e2e_agents.py.
"""
import json

from openmemory import agents
from tests.helpers import SetupCase

CODEX_CONFIG = 'model = "o3"\n\n[profiles.fast]\nmodel = "o4-mini"   # the person\'s comment\n\n[mcp_servers.github]\ncommand = "gh-mcp"'
GEMINI_SETTINGS = '{\n    "theme": "Dracula",\n    "mcpServers": {"github": {"command": "gh-mcp"}},\n    "ui": {"hideTips": true}\n}\n'


class AgentSetup(SetupCase):
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

    def test_doctor_checks_each_agents_server_and_that_recall_is_allowed(self):
        p = self.cli("doctor", "--json")
        found = {f["check"]: f for f in json.loads(p.stdout)["checks"]}
        self.assertEqual((found["codex"]["status"], found["gemini"]["status"]), ("fail", "fail"))
        self.assertIn("setup", found["codex"]["fix"])
        self.setup_cli("--yes", "--schedule", "none")
        found = {f["check"]: f for f in json.loads(self.cli("doctor", "--json").stdout)["checks"]}
        self.assertEqual((found["codex"]["status"], found["gemini"]["status"]), ("ok", "ok"), found)
        self.assertIn("recall, show, remember", found["codex"]["text"])
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


class TheBlock(SetupCase):
    def test_the_block_parses_as_toml_to_the_server_it_was_made_of(self):
        server = {"command": "/opt/venv/bin/openmemory", "args": ["serve"], "env": {"OPENMEMORY_HOME": '/a "b"\\c'}}
        text = agents.codex_appended('model = "x"', server)
        self.assertTrue(text.startswith("\n"))
        parsed = agents.codex_server('model = "x"' + text)
        self.assertEqual((parsed["command"], parsed["args"], parsed["env"]),
                         (server["command"], server["args"], server["env"]))
        self.assertEqual(agents._codex_server_by_lines('model = "x"' + text), parsed)   # without tomllib too
