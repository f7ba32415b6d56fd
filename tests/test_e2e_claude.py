"""End to end with the real Claude Code CLI (2.1.328) through ../shared/e2e/harness.py.

The harness runs `claude -p` in a throwaway HOME against a scripted fake model on loopback.
openmemory is registered exactly as OPERATIONS.md says (`openmemory serve`, `openmemory hook`,
found on PATH through a shim that runs this checkout). Skipped, with the reason, when the
harness or the binary cannot be had (tests/helpers.py `claude_code`).
"""
import glob
import json
import os
import subprocess
import sys
import time
import unittest

from openmemory import ingest, mcp, store
from tests.fixtures import test_session
from tests.helpers import TempHome, claude_code

harness = None


def setUpModule():
    global harness
    harness, _ = claude_code()


class ClaudeCode(TempHome):
    def setUp(self):
        super().setUp()
        self.user_home = self.tmp / "claude-home"  # HOME for claude: its config is user_home/.claude
        self.work = self.user_home / "work"
        self.work.mkdir(parents=True)
        self.project = os.path.realpath(self.work)
        self.child_env = {"PATH": self.path_with_openmemory(), "OPENMEMORY_HOME": str(self.home)}

    def run_claude(self, scenario, prompts, hook="openmemory hook", env=None, allowed="mcp__openmemory"):
        settings = {"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": hook}]}]}} if hook else None
        mcp = {"mcpServers": {"openmemory": {"command": "openmemory", "args": ["serve"]}}}
        r = harness.run_session(scenario, prompts, home=str(self.user_home), cwd=str(self.work), settings=settings,
                                mcp_config=mcp, allowed_tools=allowed, env=dict(self.child_env, **(env or {})),
                                timeout=120)
        for turn in r["turns"]:
            self.assertEqual(turn["rc"], 0, turn)
            self.assertNotIn("Hook cancelled", turn["stderr"])
            self.assertNotIn("hook error", turn["stderr"])
        return r

    def tool_results(self, r):
        """Each tool_result the fake model received, in order, as the text it was shown."""
        out = []
        for entry in harness.read_jsonl(r["log"]):
            users = [m for m in entry["body"]["messages"] if m["role"] == "user"]
            content = users[-1]["content"] if users else []
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    text = block["content"] if isinstance(block["content"], str) else \
                        "".join(b.get("text", "") for b in block["content"])
                    out.append((text, bool(block.get("is_error"))))
        return out

    def instructions_reached_the_model(self, r):
        """The server's instructions, verbatim, in the first request (a role: system message)."""
        messages = harness.read_jsonl(r["log"])[0]["body"]["messages"]
        texts = [c if isinstance(c, str) else "".join(b.get("text", "") for b in c)
                 for c in (m["content"] for m in messages)]
        self.assertTrue(any(mcp.INSTRUCTIONS in t for t in texts), "server instructions not sent to the model")

    def connection(self):
        """What Claude Code's own MCP log says about the connection to openmemory."""
        logs = glob.glob(str(self.user_home / ".cache" / "claude-cli-nodejs" / "*" / "mcp-logs-openmemory" / "*"))
        for path in logs:
            with open(path) as f:
                lines = f.readlines()
            for line in lines:
                debug = json.loads(line).get("debug", "")
                if debug.startswith("Connection established with capabilities: "):
                    return json.loads(debug.split(": ", 1)[1])
        self.fail(f"no MCP connection to openmemory in Claude Code's logs {logs}")

    def episodes(self, **kw):
        with store.connect() as db:
            return db.episodes(**kw)

    def remembered_memory(self):
        """An earlier session of this project, ingested: its error episode is what recall should find."""
        t = test_session(cwd=self.project)
        path = t.write(self.claude / "projects" / "earlier")
        with store.connect() as db:
            ingest.ingest(db, [path])
        return next(e for e in self.episodes(kind="error"))


class Server(ClaudeCode):
    def test_modern_era_recall_remember_recall_and_the_session_end_hook(self):
        error = self.remembered_memory()
        note = "The shop project runs its tests with pytest -q, never python -m unittest."
        scenario = {"steps": [
            {"match": "what went wrong", "reply": [{"tool_use": {"name": "mcp__openmemory__recall",
                                                                 "input": {"query": "unittest ImportError"}}}]},
            {"match": "tool_result", "reply": [{"tool_use": {"name": "mcp__openmemory__show",
                                                             "input": {"id": f"e{error['id']}"}}}]},
            {"match": "tool_result", "reply": [{"tool_use": {"name": "mcp__openmemory__remember",
                                                             "input": {"text": note}}}]},
            {"match": "tool_result", "reply": [{"tool_use": {"name": "mcp__openmemory__recall",
                                                             "input": {"query": "how does the shop project run tests",
                                                                       "k": 2}}}]},
            {"match": "tool_result", "reply": [{"text": "Use pytest -q."}]}]}
        r = self.run_claude(scenario, ["what went wrong with the tests last time?"])

        # Claude Code took the server/discover path, not the initialize fallback.
        conn = self.connection()
        self.assertEqual((conn["protocolEra"], conn["negotiatedProtocolVersion"]), ("modern", "2026-07-28"))
        self.assertEqual(conn["serverVersion"]["name"], "openmemory")
        self.instructions_reached_the_model(r)

        first, opened, said, second = self.tool_results(r)
        self.assertFalse(first[1] or opened[1] or said[1] or second[1])
        self.assertIn(f"[e{error['id']}] error · ", first[0])
        self.assertIn(error["gist"], first[0])  # the memory reached the model, whole
        # show opened that hit in full: its header with the whole session id, the error lines,
        # and what was said in its session around it.
        self.assertTrue(opened[0].startswith(f"[e{error['id']}] error · "), opened[0])
        self.assertIn(f"session {error['session_id']}", opened[0])
        self.assertIn("error lines:\n  Exit code 1\n  ImportError: No module named shop.tests", opened[0])
        self.assertIn("person: No, don't use unittest here, run the tests with pytest -q", opened[0])
        [stored] = self.episodes(kind="note")
        self.assertEqual(said[0], f"Remembered as note [e{stored['id']}] (project {self.project}); "
                                  f"recall finds it from now on.")
        self.assertIn(f"[e{stored['id']}] note · ", second[0])
        self.assertIn(note, second[0])

        # The SessionEnd hook ingested this very session before `claude -p` returned.
        [session] = [e for e in self.episodes(kind="session") if e["session_id"] == r["session_id"]]
        self.assertEqual(session["cwd"], self.project)
        self.assertIn("what went wrong with the tests last time?", session["gist"])
        self.assertFalse([e for e in self.episodes(kind="error") if e["session_id"] == r["session_id"]],
                         "openmemory's own tool calls are not errors")

    def test_legacy_fallback_with_ingest_quiet_as_the_hook(self):
        error = self.remembered_memory()
        scenario = {"steps": [
            {"match": "remind me", "reply": [{"tool_use": {"name": "mcp__openmemory__recall",
                                                           "input": {"query": "shop.tests ImportError"}}}]},
            {"match": "tool_result", "reply": [{"text": "It was the unittest import error."}]}]}
        r = self.run_claude(scenario, ["remind me about the tests"], hook="openmemory ingest --quiet",
                            env={"MCP_PROTOCOL_NEGOTIATION": "legacy"})
        conn = self.connection()
        self.assertEqual((conn["protocolEra"], conn["negotiatedProtocolVersion"]), ("legacy", "2025-11-25"))
        self.instructions_reached_the_model(r)
        [(text, is_error)] = self.tool_results(r)
        self.assertFalse(is_error)
        self.assertIn(error["gist"], text)
        self.assertIn("initialize from claude-code 2.1.328: asks 2025-11-25, answered 2025-11-25",
                      (self.home / "logs" / "openmemory.log").read_text())
        self.assertEqual(len([e for e in self.episodes(kind="session") if e["session_id"] == r["session_id"]]), 1)

    def test_without_permission_the_model_is_told_and_nothing_is_stored(self):
        scenario = [{"match": "note", "reply": [{"tool_use": {"name": "mcp__openmemory__remember",
                                                              "input": {"text": "should not be stored"}}}]},
                    {"match": "tool_result", "reply": [{"text": "ok"}]}]
        r = self.run_claude(scenario, ["note this"], hook=None, allowed=None)
        [(text, is_error)] = self.tool_results(r)
        self.assertTrue(is_error)
        self.assertIn("haven't granted it yet", text)
        self.assertEqual(self.episodes(kind="note"), [])


class Hook(ClaudeCode):
    def test_detached_hook_outlives_claude_over_two_turns(self):
        correction = "No, don't use no_such_test_runner, use unittest"
        scenario = {"steps": [
            {"match": "run the tests", "reply": [{"text": "Running the test suite."}, {"tool_use": {
                "name": "Bash", "input": {"command": "python3 -m no_such_test_runner -q"}}}]},
            {"match": "tool_result", "reply": [{"text": "The test command failed."}]},
            {"match": "No, don't use", "reply": [{"text": "Switching."}, {"tool_use": {
                "name": "Bash", "input": {"command": "python3 -c \"print('tests passed')\""}}}]},
            {"match": "tests passed", "reply": [{"text": "Tests pass."}]}]}
        r = self.run_claude(scenario, ["run the tests", correction], hook="openmemory hook --detach always",
                            allowed="Bash")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            kinds = sorted(e["kind"] for e in self.episodes() if e["session_id"] == r["session_id"])
            if kinds == ["correction", "error", "session"]:
                break
            time.sleep(0.2)
        self.assertEqual(kinds, ["correction", "error", "session"],
                         (self.home / "logs" / "openmemory.log").read_text())
        [said] = self.episodes(kind="correction")
        self.assertIn(correction, said["gist"])
        self.assertIn("no_such_test_runner", said["facts"]["command"])


# A permission prompt tool (`claude -p --permission-prompt-tool`, as an SDK host answers a prompt):
# a stdio MCP server whose one tool refuses every call with the person's words.
GATE = r"""
import json, sys
WORDS = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                  "serverInfo": {"name": "gate", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "approve", "description": "Ask the person",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        answer = {"behavior": "deny", "message": WORDS}
        result = {"content": [{"type": "text", "text": json.dumps(answer)}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": method}}),
              flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


class Refusal(ClaudeCode):
    def test_a_refusal_through_a_permission_prompt_tool_is_a_correction_in_the_persons_words(self):
        # Found by a fresh-user pass: the refused `npm test` was stored as an error whose output was
        # the person's words ("`npm test` failed: No, never run ..."), never as their correction.
        words = "No, never run npm test here, we use pnpm test"
        gate = self.tmp / "gate.py"
        gate.write_text(GATE)
        scenario = {"steps": [
            {"match": "run the tests", "reply": [{"text": "Running the tests."}, {"tool_use": {
                "name": "Bash", "input": {"command": "npm test"}}}]},
            {"match": "tool_result", "reply": [{"text": "OK, I won't run npm test."}]}]}
        r = harness.run_session(scenario, ["run the tests"], home=str(self.user_home), cwd=str(self.work),
                                mcp_config={"mcpServers": {"gate": {"command": sys.executable,
                                                                    "args": [str(gate), words]}}},
                                extra_args=["--permission-prompt-tool", "mcp__gate__approve"],
                                env=self.child_env, timeout=120)
        self.assertEqual(r["turns"][0]["rc"], 0, r["turns"])
        self.assertEqual(self.tool_results(r), [(words, True)])     # what the model was told
        with store.connect() as db:
            ingest.ingest(db, [r["transcript"]])
        self.assertEqual(self.episodes(kind="error"), [])
        [said] = self.episodes(kind="correction")
        self.assertIn(words, said["gist"])
        self.assertEqual(said["facts"]["command"], "npm test")


class Subagents(ClaudeCode):
    def test_a_subagents_failed_call_is_read_and_credited_to_its_session(self):
        # The layout the real client writes: <project>/<session>/subagents/agent-<id>.jsonl
        # (and a .meta.json naming the Agent call), its records marked isSidechain.
        failing = "python3 -c \"import sys; sys.exit('ConfigError: BUILD_ENV is not set')\""
        scenario = {"steps": [
            {"match": "check the build", "reply": [{"text": "Asking a helper."}, {"tool_use": {
                "name": "Agent", "input": {"description": "Run the build", "subagent_type": "general-purpose",
                                           "prompt": "SUBAGENT-TASK: run the build and report"}}}]},
            {"match": "SUBAGENT-TASK", "reply": [{"tool_use": {"name": "Bash", "input": {"command": failing}}}]},
            {"match": "BUILD_ENV is not set", "reply": [{"text": "SUBAGENT-REPORT: BUILD_ENV is not set."}]},
            {"match": "SUBAGENT-REPORT", "reply": [{"text": "The build needs BUILD_ENV."}]}], "default": "ok"}
        r = self.run_claude(scenario, ["please check the build"], allowed="Bash,Agent")
        folder = os.path.join(os.path.dirname(r["transcript"]), r["session_id"], "subagents")
        [meta] = glob.glob(os.path.join(folder, "agent-*.meta.json"))
        self.assertTrue(os.path.isfile(meta.replace(".meta.json", ".jsonl")))
        with open(meta) as f:
            self.assertEqual(json.load(f)["description"], "Run the build")
        with store.connect() as db:        # read again, the subagent's file as it is now
            ingest.ingest(db, [r["transcript"]], force=True)
        [error] = [e for e in self.episodes(kind="error") if e["session_id"] == r["session_id"]]
        self.assertIn("ConfigError: BUILD_ENV is not set", error["facts"]["error"])
        self.assertEqual(error["facts"]["subagent"], os.path.basename(meta).removesuffix(".meta.json")[len("agent-"):])
        self.assertFalse([e for e in self.episodes(kind="correction") if e["session_id"] == r["session_id"]])


class Registration(ClaudeCode):
    def test_documented_registration_shows_connected(self):
        env = harness.clean_env(dict(self.child_env, HOME=str(self.user_home)))
        add = subprocess.run([os.environ["CLAUDE_BIN"], "mcp", "add", "--scope", "user", "openmemory", "--",
                              "openmemory", "serve"], capture_output=True, text=True, env=env, cwd=str(self.work),
                             timeout=120)
        self.assertEqual(add.returncode, 0, add.stderr)
        config = json.loads((self.user_home / ".claude.json").read_text())
        self.assertEqual({k: config["mcpServers"]["openmemory"][k] for k in ("command", "args")},
                         {"command": "openmemory", "args": ["serve"]})
        listed = subprocess.run([os.environ["CLAUDE_BIN"], "mcp", "list"], capture_output=True, text=True,
                                env=env, cwd=str(self.work), timeout=120)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn("openmemory: openmemory serve - ✔ Connected", listed.stdout)


if __name__ == "__main__":
    unittest.main()
