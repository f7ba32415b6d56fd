"""The harness for the real Codex CLI and Gemini CLI (tests/agents_e2e.py), and what their recordings
under tests/data/agents/ show (the facts the format notes state as seen).

The fake model's matching is tested without a binary. The real-client tests install the pinned
binaries once from npm into ~/.cache/openmemory-e2e/ and skip, saying why, when that cannot be done
(no npm, no network, node < 20 for Gemini); OPENMEMORY_E2E=skip skips them outright.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tests import agents_e2e as e2e

DATA = Path(e2e.DATA)
_found = {}


def binary(agent):
    """The pinned binary of `agent` (installing it once), or SkipTest saying why not."""
    if os.environ.get("OPENMEMORY_E2E") == "skip":
        raise unittest.SkipTest("real-client tests skipped (OPENMEMORY_E2E=skip)")
    if agent not in _found:
        try:
            _found[agent] = (e2e.find_codex() if agent == "codex" else e2e.find_gemini(), None)
        except Exception as e:  # no npm, no network for the one-time install, no node >= 20
            _found[agent] = (None, f"the real {agent} CLI cannot be had: {type(e).__name__}: {e}")
    path, why = _found[agent]
    if why:
        raise unittest.SkipTest(why)
    return path


def records(path):
    return e2e.read_jsonl(path)


class FakeModelMatching(unittest.TestCase):
    """What the scripted model answers, from the request bodies the clients send."""

    def test_codex_new_input_is_what_came_after_the_model_last_spoke(self):
        body = {"input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run it"}]},
                          {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
                          {"type": "function_call_output", "call_id": "c1", "output": "Process exited with code 2"}]}
        self.assertEqual(e2e.codex_new_input(body), ("Process exited with code 2", True))
        self.assertEqual(e2e.codex_new_input({"input": body["input"][:1]}), ("run it", False))

    def test_gemini_new_input_is_the_last_content(self):
        body = {"contents": [{"role": "user", "parts": [{"text": "run it"}]},
                             {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}}]},
                             {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                                                                             "response": {"output": "Exit Code: 2"}}}]}]}
        text, has_result = e2e.gemini_new_input(body)
        self.assertTrue(has_result)
        self.assertIn("Exit Code: 2", text)

    def test_steps_are_used_once_in_order_and_fill_in_what_they_caught(self):
        script = e2e.Script({"steps": [
            {"match": "tool_result", "reply": [{"text": "after a tool"}]},
            {"match": r"agent_id\":\"(?P<agent>\w+)", "reply": [{"tool_call": {"name": "wait", "args": {"id": "{{agent}}"}}}]}],
            "default": "fallback"})
        self.assertEqual(script.pick("hello", False), (None, [{"text": "fallback"}]))
        self.assertEqual(script.pick('{"agent_id":"a7"}', False), (1, [{"tool_call": {"name": "wait", "args": {"id": "a7"}}}]))
        self.assertEqual(script.pick("out", True), (0, [{"text": "after a tool"}]))
        self.assertEqual(script.pick("out", True), (None, [{"text": "fallback"}]))

    def test_a_side_request_asking_for_json_gets_an_object_of_its_schema(self):
        schema = {"type": "OBJECT", "properties": {"complexity_reasoning": {"type": "STRING"},
                                                   "complexity_score": {"type": "INTEGER"}},
                  "required": ["complexity_reasoning", "complexity_score"]}
        self.assertEqual(e2e.fill_schema(schema), {"complexity_reasoning": "fake", "complexity_score": 1})


class CodexRecordings(unittest.TestCase):
    """tests/data/agents/codex/, written by codex-cli 0.171.0 (see its README)."""

    def people_words(self, name):
        return [" ".join(c["text"] for c in r["payload"]["content"])
                for r in records(DATA / "codex" / name) if r["type"] == "response_item"
                and r["payload"].get("type") == "message" and r["payload"].get("role") == "user"
                and r["payload"]["internal_chat_message_metadata_passthrough"]["content_item_metadata"][0]["provenance"]["type"] == "user"]

    def test_a_resumed_turn_lands_in_the_same_rollout_with_the_persons_correction(self):
        self.assertEqual(self.people_words("correction.jsonl"),
                         ["run the tests", "No, don't use pytest here, use unittest: python3 -m unittest"])
        meta = records(DATA / "codex" / "correction.jsonl")[0]
        self.assertEqual((meta["type"], meta["payload"]["cli_version"], meta["payload"]["source"]),
                         ("session_meta", "0.171.0", "exec"))

    def test_a_command_carries_its_exit_code_twice(self):
        recs = records(DATA / "codex" / "fail_then_work.jsonl")
        done = [r["payload"]["item"] for r in recs if r["payload"].get("type") == "item_completed"
                and r["payload"]["item"]["type"] == "CommandExecution"]
        self.assertEqual([(d["command"][-1], d["exit_code"], d["status"]) for d in done],
                         [("python3 run_tests.py", 2, "failed"), ("python3 -m unittest -q", 0, "completed")])
        outputs = [r["payload"]["output"] for r in recs if r["payload"].get("type") == "function_call_output"]
        self.assertIn("Process exited with code 2", outputs[0])

    def test_harness_text_in_a_user_role_message_is_marked_as_not_the_persons(self):
        recs = records(DATA / "codex" / "interrupt.jsonl")
        aborted = [r for r in recs if r["type"] == "response_item" and "<turn_aborted>" in json.dumps(r)]
        self.assertEqual(aborted[0]["payload"]["role"], "user")
        self.assertEqual(self.people_words("interrupt.jsonl"), ["wait for the slow job"])
        self.assertTrue(any(r["payload"].get("type") == "turn_aborted" for r in recs))

    def test_a_subagent_has_its_own_rollout_naming_its_parent(self):
        main = records(DATA / "codex" / "subagent.jsonl")[0]["payload"]
        sub = records(DATA / "codex" / "subagent.subagent.jsonl")[0]["payload"]
        self.assertEqual(sub["parent_thread_id"], main["id"])
        self.assertEqual(sub["thread_source"], "subagent")
        self.assertIn("subagent", sub["source"])

    def test_agents_md_from_codex_home_and_from_the_repository_root_down_to_cwd_reach_the_model(self):
        seen = json.loads((DATA / "codex" / "memory_files.canaries.json").read_text())
        loaded = {c for c, v in seen.items() if v["requests"]}
        self.assertEqual(loaded, {"OM-CANARY-CODEX-GLOBAL", "OM-CANARY-CODEX-REPO", "OM-CANARY-CODEX-SUB",
                                  "OM-CANARY-CODEX-CWD"})

    def test_an_mcp_tool_is_a_namespace_and_needs_approval_in_exec(self):
        denied = [r["payload"]["item"] for r in records(DATA / "codex" / "mcp_denied.jsonl")
                  if r["payload"].get("type") == "item_completed" and r["payload"]["item"]["type"] == "McpToolCall"]
        self.assertEqual((denied[0]["server"], denied[0]["tool"], denied[0]["status"]), ("openmemory", "recall", "failed"))
        allowed = (DATA / "codex" / "mcp_recall.jsonl").read_text()
        self.assertIn("MEMO-CANARY: how are tests run here", allowed)
        digest = records(DATA / "codex" / "mcp_recall.requests.jsonl")
        self.assertIn("mcp__openmemory.recall", digest[0]["tools"])


class GeminiRecordings(unittest.TestCase):
    """tests/data/agents/gemini/, written by gemini-cli 0.61.0 (and 0.38.2 for legacy_json.json)."""

    def messages(self, name):
        """The chat as Gemini CLI itself loads it: records by id, last wins; $set.messages resets; $rewindTo cuts."""
        by_id = {}
        for r in records(DATA / "gemini" / name):
            if "$rewindTo" in r:
                ids = list(by_id)
                by_id = {k: by_id[k] for k in ids[:ids.index(r["$rewindTo"])]} if r["$rewindTo"] in ids else {}
            elif "$set" in r and isinstance(r["$set"].get("messages"), list):
                by_id = {m["id"]: m for m in r["$set"]["messages"]}
            elif "id" in r and "type" in r:
                by_id[r["id"]] = r
        return list(by_id.values())

    def test_a_message_is_written_again_with_its_tool_calls_under_the_same_id(self):
        recs = [r for r in records(DATA / "gemini" / "fail_then_work.jsonl") if r.get("type") == "gemini"]
        ids = [r["id"] for r in recs]
        self.assertLess(len(set(ids)), len(ids))
        calls = [c for r in self.messages("fail_then_work.jsonl") for c in r.get("toolCalls", [])]
        self.assertEqual([c["args"]["command"] for c in calls], ["python3 run_tests.py", "python3 -m unittest -q"])
        self.assertIn("Exit Code: 2", json.dumps(calls[0]["result"]))
        self.assertEqual(calls[0]["status"], "success")  # a failing command is still a successful tool call

    def test_tool_results_are_user_messages_too(self):
        users = [m for m in self.messages("fail_then_work.jsonl") if m["type"] == "user"]
        texts = [p.get("text") for m in users for p in m["content"] if "text" in p]
        self.assertEqual(texts[-1], "run the tests")
        self.assertTrue(any("functionResponse" in p for m in users for p in m["content"]))

    def test_a_resumed_turn_appends_to_the_same_file_after_a_new_metadata_line(self):
        recs = records(DATA / "gemini" / "correction.jsonl")
        metas = [r for r in recs if "sessionId" in r and "projectHash" in r]
        self.assertEqual(len(metas), 2)
        self.assertEqual(metas[0]["sessionId"], metas[1]["sessionId"])
        said = [p["text"] for m in self.messages("correction.jsonl") if m["type"] == "user" for p in m["content"]
                if "text" in p and not p["text"].startswith("<session_context>")]
        self.assertEqual(said, ["run the tests", "No, don't use nosuchrunner here, use unittest: python3 -m unittest"])

    def test_a_subagent_writes_its_own_chat_and_the_parent_names_it(self):
        sub = records(DATA / "gemini" / "subagent.subagent.jsonl")[0]
        self.assertEqual(sub["kind"], "subagent")
        call = next(c for m in self.messages("subagent.jsonl") for c in m.get("toolCalls", []) if c["name"] == "invoke_agent")
        self.assertEqual(call["agentId"], sub["sessionId"])

    def test_the_project_hash_is_the_sha256_of_the_project_root(self):
        import hashlib
        first = records(DATA / "gemini" / "fail_then_work.jsonl")[0]
        root = next(p["text"] for r in records(DATA / "gemini" / "fail_then_work.jsonl") if "$set" in r
                    for m in r["$set"].get("messages", []) for p in m["content"] if "Workspace Directories" in p.get("text", ""))
        folder = root.split("- **Workspace Directories:**\n  - ")[1].split("\n")[0]
        self.assertEqual(first["projectHash"], hashlib.sha256(folder.encode()).hexdigest())

    def test_gemini_md_global_root_to_cwd_and_the_private_memory_reach_the_model(self):
        seen = json.loads((DATA / "gemini" / "memory_files.canaries.json").read_text())
        self.assertEqual({c for c, v in seen.items() if v["requests"]},
                         {"OM-CANARY-GEMINI-GLOBAL", "OM-CANARY-GEMINI-REPO", "OM-CANARY-GEMINI-SUB",
                          "OM-CANARY-GEMINI-CWD", "OM-CANARY-GEMINI-PRIVATE"})

    def test_the_legacy_json_chat_is_one_document(self):
        doc = json.loads((DATA / "gemini" / "legacy_json.json").read_text())
        self.assertEqual(sorted(doc), ["kind", "lastUpdated", "messages", "projectHash", "sessionId", "startTime"])
        self.assertEqual([m["content"][0]["text"] for m in doc["messages"] if m["type"] == "user"],
                         ["run the tests", "No, use unittest: python3 -m unittest"])


# A Codex session with a failed command and then the person's correction (the fake model's script).
CODEX_FAILURE_THEN_CORRECTION = {"steps": [
    {"match": "run the tests", "reply": [{"tool_call": {"name": "exec_command", "args": {"cmd": "python3 run_tests.py"}}}]},
    {"match": "tool_result", "reply": [{"text": "run_tests.py is missing."}]},
    {"match": "use unittest", "reply": [{"text": "Understood."}]}]}


class RealCodex(unittest.TestCase):
    """codex exec against the fake Responses API: a failure, then a correction in a resumed turn."""

    @classmethod
    def setUpClass(cls):
        binary("codex")

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="om-test-codex-")
        self.addCleanup(shutil.rmtree, self.home, True)

    def test_a_failure_and_a_correction_are_recorded_and_the_model_sees_agents_md(self):
        os.makedirs(os.path.join(self.home, ".codex"))
        Path(self.home, ".codex", "AGENTS.md").write_text("OM-TEST-CANARY: global instructions\n")
        r = e2e.run_codex(CODEX_FAILURE_THEN_CORRECTION, ["run the tests", "No, use unittest"], home=self.home)
        self.assertEqual([t["rc"] for t in r["turns"]], [0, 0], r["turns"])
        recs = records(r["rollout"])
        said = [c["text"] for x in recs if x["type"] == "event_msg" and x["payload"].get("type") == "item_completed"
                and x["payload"]["item"]["type"] == "UserMessage" for c in x["payload"]["item"]["content"]]
        self.assertEqual(said, ["run the tests", "No, use unittest"])
        codes = [x["payload"]["item"]["exit_code"] for x in recs if x["payload"].get("type") == "item_completed"
                 and x["payload"]["item"]["type"] == "CommandExecution"]
        self.assertEqual(codes, [2])
        log = e2e.read_jsonl(r["log"])
        self.assertEqual([e["step"] for e in log], [0, 1, 2])
        self.assertTrue(all("OM-TEST-CANARY" in json.dumps(e["body"]) for e in log))


class RealCodexArchive(unittest.TestCase):
    """`codex archive` and `codex unarchive` run for real on a session openmemory stored: the
    session keeps its memories and its row follows the file, never a second copy. Seen with
    0.171.0: archive renames the rollout into $CODEX_HOME/archived_sessions/ (name, bytes, inode
    and mtime kept); unarchive renames it back into its day folder and sets its mtime to now."""

    def setUp(self):
        binary("codex")
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="om-test-archive-"))
        self.addCleanup(shutil.rmtree, self.home, True)

    def stored(self):
        import sqlite3
        from contextlib import closing
        with closing(sqlite3.connect(os.path.join(self.home, "om", "memory.db"))) as db:
            return ([tuple(r) for r in db.execute("SELECT id, session_id, kind, title FROM episodes ORDER BY id")],
                    [tuple(r) for r in db.execute("SELECT id, session_id, text FROM passages ORDER BY id")],
                    [tuple(r) for r in db.execute("SELECT id, path FROM sessions ORDER BY id")])

    def test_an_archived_session_is_the_same_session_in_memory(self):
        r = e2e.run_codex(CODEX_FAILURE_THEN_CORRECTION, ["run the tests", "No, use unittest"], home=self.home)
        self.assertEqual([t["rc"] for t in r["turns"]], [0, 0], r["turns"])
        openmemory(self.home, "ingest")
        episodes, passages, sessions = self.stored()
        self.assertEqual(sessions, [(r["session_id"], r["rollout"])])
        self.assertTrue(episodes and passages)
        out = e2e.codex_cli(self.home, "archive", r["session_id"])
        self.assertEqual(out["rc"], 0, out)
        archived = os.path.join(self.home, ".codex", "archived_sessions", os.path.basename(r["rollout"]))
        self.assertTrue(os.path.isfile(archived) and not os.path.exists(r["rollout"]))
        report = json.loads(openmemory(self.home, "ingest", "--json").stdout)
        self.assertEqual((report["read"], report["moved"]), (0, 1))
        self.assertEqual(self.stored(), (episodes, passages, [(r["session_id"], archived)]))
        out = e2e.codex_cli(self.home, "unarchive", r["session_id"])
        self.assertEqual(out["rc"], 0, out)
        report = json.loads(openmemory(self.home, "ingest", "--json").stdout)
        # unarchive sets the file's mtime to now (0.171.0): read again, as the same session
        self.assertEqual((report["read"], report["moved"], report["added"], report["passages"]), (1, 1, {}, 0))
        self.assertEqual(self.stored(), (episodes, passages, [(r["session_id"], r["rollout"])]))


class RealGemini(unittest.TestCase):
    """gemini -p against the fake Gemini API: a failure, then a correction in a resumed turn."""

    @classmethod
    def setUpClass(cls):
        binary("gemini")

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="om-test-gemini-")
        self.addCleanup(shutil.rmtree, self.home, True)

    def test_a_failure_and_a_correction_are_recorded_and_the_model_sees_gemini_md(self):
        os.makedirs(os.path.join(self.home, ".gemini"))
        Path(self.home, ".gemini", "GEMINI.md").write_text("OM-TEST-CANARY: global instructions\n")
        scenario = {"steps": [
            {"match": "run the tests", "reply": [{"tool_call": {"name": "run_shell_command", "args": {"command": "python3 run_tests.py"}}}]},
            {"match": "tool_result", "reply": [{"text": "run_tests.py is missing."}]},
            {"match": "use unittest", "reply": [{"text": "Understood."}]}]}
        r = e2e.run_gemini(scenario, ["run the tests", "No, use unittest"], home=self.home,
                           args=["--allowed-tools", "run_shell_command"])
        self.assertEqual([t["rc"] for t in r["turns"]], [0, 0], r["turns"])
        recs = records(r["chat"])
        said = [p["text"] for x in recs if x.get("type") == "user" for p in x["content"] if "text" in p]
        self.assertEqual(said, ["run the tests", "No, use unittest"])
        self.assertIn("Exit Code: 2", json.dumps([x.get("toolCalls") for x in recs]))
        main = [e for e in e2e.read_jsonl(r["log"]) if e["step"] is not None]
        self.assertEqual([e["step"] for e in main], [0, 1, 2])
        self.assertTrue(all("OM-TEST-CANARY" in json.dumps(e["body"]) for e in main))


def openmemory(home, *args, env=None):
    """Run this checkout's openmemory as the person would, with HOME and its memory under `home`."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "GEMINI_", "CLAUDE", "OPENMEMORY_"))}
    base.update(HOME=home, OPENMEMORY_HOME=os.path.join(home, "om"), CLAUDE_CONFIG_DIR=os.path.join(home, "claude"),
                PYTHONPATH=e2e.ROOT, PATH="/usr/bin:/bin")     # no `claude`: setup prints its command
    base.update(env or {})
    p = subprocess.run([sys.executable, "-m", "openmemory", *args], env=base, capture_output=True, text=True,
                       timeout=120, cwd=home)
    if p.returncode != 0:
        raise AssertionError(f"openmemory {' '.join(args)} failed: {p.stderr}")
    return p


MEMORY = "In this project the tests run with python3 -m unittest, never with pytest"


class RecallThroughSetup(unittest.TestCase):
    """`openmemory setup` connects each installed agent; its model then calls openmemory's `recall`
    through the server setup registered (absolute paths, the tool allowed by name) and gets an answer."""

    def setUp(self):
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="om-test-recall-"))
        self.addCleanup(shutil.rmtree, self.home, True)
        openmemory(self.home, "remember", MEMORY)

    def answers(self, log):
        """The tool outputs the fake model was sent after its recall call."""
        return json.dumps([e["body"] for e in e2e.read_jsonl(log) if e["step"] == 1])

    def test_codex_calls_recall_and_gets_the_memory(self):
        binary("codex")
        os.makedirs(os.path.join(self.home, ".codex"))
        out = openmemory(self.home, "setup", "--yes", "--schedule", "none").stdout
        self.assertIn("with Codex", out)
        scenario = {"steps": [
            {"match": "how are tests run", "reply": [{"tool_call": {
                "namespace": "mcp__openmemory", "name": "recall", "args": {"query": "how are the tests run"}}}]},
            {"match": "tool_result", "reply": [{"text": "Memory answered."}]}]}
        r = e2e.run_codex(scenario, ["how are tests run here?"], home=self.home)
        self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])
        self.assertIn("python3 -m unittest, never with pytest", self.answers(r["log"]))
        self.assertEqual(self.doctor("codex")["status"], "ok")

    def test_gemini_calls_recall_and_gets_the_memory(self):
        binary("gemini")
        os.makedirs(os.path.join(self.home, ".gemini"))
        out = openmemory(self.home, "setup", "--yes", "--schedule", "none").stdout
        self.assertIn("with Gemini", out)
        scenario = {"steps": [
            {"match": "how are tests run", "reply": [{"tool_call": {
                "name": "mcp_openmemory_recall", "args": {"query": "how are the tests run"}}}]},
            {"match": "tool_result", "reply": [{"text": "Memory answered."}]}]}
        r = e2e.run_gemini(scenario, ["how are tests run here?"], home=self.home)
        self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])
        self.assertIn("python3 -m unittest, never with pytest", self.answers(r["log"]))
        self.assertEqual(self.doctor("gemini")["status"], "ok")
        # the policy setup wrote draws no warning from Gemini (shown at each start, to the person)
        self.assertNotIn("openmemory.toml", r["turns"][0]["stderr"])

    def test_what_was_said_to_gemini_comes_back_to_codex_as_a_passage_from_gemini(self):
        binary("gemini")
        binary("codex")
        os.makedirs(os.path.join(self.home, ".codex"))
        os.makedirs(os.path.join(self.home, ".gemini"))
        openmemory(self.home, "setup", "--yes", "--schedule", "none")
        said = "the staging database listens on port 6543, not 5432"
        r = e2e.run_gemini({"steps": [{"match": "staging database", "reply": [{"text": "Noted: port 6543."}]}]},
                           [f"remember that {said}"], home=self.home)
        self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])
        openmemory(self.home, "ingest")         # as the nightly job does: no Gemini hook runs it
        scenario = {"steps": [
            {"match": "which port", "reply": [{"tool_call": {
                "namespace": "mcp__openmemory", "name": "recall", "args": {"query": "staging database port"}}}]},
            {"match": "tool_result", "reply": [{"text": "Memory answered."}]}]}
        r = e2e.run_codex(scenario, ["which port does the staging database use?"], home=self.home)
        self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])
        outputs = [item.get("output") for e in e2e.read_jsonl(r["log"]) if e["step"] == 1
                   for item in e["body"].get("input", []) if item.get("type") == "function_call_output"]
        text = json.dumps(outputs, ensure_ascii=False)
        self.assertIn("port 6543, not 5432", text)
        self.assertRegex(text, r"\[p\d+\] exchange · [^\\]* · from gemini · session ", text)

    def doctor(self, check):
        """doctor's finding for one agent (the rest fails here: Claude Code is not connected)."""
        base = dict(os.environ, HOME=self.home, OPENMEMORY_HOME=os.path.join(self.home, "om"),
                    CLAUDE_CONFIG_DIR=os.path.join(self.home, "claude"), PYTHONPATH=e2e.ROOT, PATH="/usr/bin:/bin")
        p = subprocess.run([sys.executable, "-m", "openmemory", "doctor", "--json"], env=base, capture_output=True,
                           text=True, timeout=120)
        return next(c for c in json.loads(p.stdout)["checks"] if c["check"] == check)


class LessonFromCodex(unittest.TestCase):
    """The whole loop with the real Codex CLI: a correction typed in Codex becomes a lesson that
    reaches Claude Code's MEMORY.md and the AGENTS.md Codex loads, and the next Codex session's
    requests to the model carry it."""

    def setUp(self):
        binary("codex")
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="om-test-loop-"))
        self.addCleanup(shutil.rmtree, self.home, True)

    def test_a_correction_typed_in_codex_reaches_claude_code_and_the_next_codex_session(self):
        os.makedirs(os.path.join(self.home, ".codex"))
        os.makedirs(os.path.join(self.home, "claude"))       # Claude Code has run here too
        Path(self.home, "claude", ".claude.json").write_text("{}")
        openmemory(self.home, "setup", "--yes", "--schedule", "none")
        cwd = os.path.join(self.home, "shop")
        os.makedirs(cwd)
        subprocess.run(["git", "init", "-q", cwd], check=True)
        # The person asked for the project's lessons in its AGENTS.md: they put the markers there,
        # in a file of theirs git ignores (no commit takes the lessons along).
        Path(cwd, "AGENTS.md").write_text("# Shop\n\n<!-- openmemory:begin -->\n<!-- openmemory:end -->\n")
        with open(os.path.join(cwd, ".git", "info", "exclude"), "a") as f:
            f.write("AGENTS.md\n")
        said = "No, don't use nosuchrunner here, use unittest: python3 -m unittest"
        for _ in range(2):      # the same correction in two sessions
            scenario = {"steps": [
                {"match": "run the tests", "reply": [{"tool_call": {"name": "exec_command",
                                                                    "args": {"cmd": "python3 -m nosuchrunner -q"}}}]},
                {"match": "tool_result", "reply": [{"text": "I ran the tests with nosuchrunner."}]},
                {"match": "use unittest", "reply": [{"text": "Understood."}]}]}
            r = e2e.run_codex(scenario, ["run the tests", said], home=self.home, cwd=cwd)
            self.assertEqual([t["rc"] for t in r["turns"]], [0, 0], r["turns"])
        openmemory(self.home, "ingest")
        openmemory(self.home, "sleep", "--no-model")
        lessons = [json.loads(line) for line in Path(self.home, "om", "lessons.jsonl").read_text().splitlines()]
        (lesson,) = [l for l in lessons if "unittest" in l["text"]]
        memory = "".join(p.read_text() for p in Path(self.home, "claude", "projects").rglob("MEMORY.md"))
        words = lesson["text"].split(":")[0]
        self.assertIn(words, memory)                                        # Claude Code's memory
        self.assertIn(words, Path(cwd, "AGENTS.md").read_text())            # the file Codex loads
        r = e2e.run_codex({"steps": [], "default": "Hello."}, ["hello"], home=self.home, cwd=cwd,
                          log=os.path.join(self.home, "next-session.jsonl"))
        self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])
        sent = [json.dumps(e["body"]) for e in e2e.read_jsonl(r["log"])]
        self.assertTrue(sent and all(words in body for body in sent), "the lesson is in every request")

    def test_a_lesson_from_codex_reaches_geminis_private_project_memory(self):
        binary("gemini")
        os.makedirs(os.path.join(self.home, ".codex"))
        os.makedirs(os.path.join(self.home, ".gemini"))
        cwd = os.path.join(self.home, "shop")
        os.makedirs(cwd)
        subprocess.run(["git", "init", "-q", cwd], check=True)
        said = "No, don't use nosuchrunner here, use unittest: python3 -m unittest"
        for _ in range(2):
            scenario = {"steps": [
                {"match": "run the tests", "reply": [{"tool_call": {"name": "exec_command",
                                                                    "args": {"cmd": "python3 -m nosuchrunner -q"}}}]},
                {"match": "tool_result", "reply": [{"text": "I ran the tests with nosuchrunner."}]},
                {"match": "use unittest", "reply": [{"text": "Understood."}]}]}
            e2e.run_codex(scenario, ["run the tests", said], home=self.home, cwd=cwd)
        first = e2e.run_gemini({"steps": [], "default": "Hello."}, ["hello"], home=self.home, cwd=cwd)
        self.assertEqual([t["rc"] for t in first["turns"]], [0], first["turns"])   # Gemini registers the project
        openmemory(self.home, "ingest")
        openmemory(self.home, "sleep", "--no-model")                                # renders at its end
        private = Path(self.home, ".gemini", "tmp", "shop", "memory", "MEMORY.md")
        self.assertIn("unittest", private.read_text())
        self.assertFalse(Path(cwd, "GEMINI.md").exists())                           # never the repository
        r = e2e.run_gemini({"steps": [], "default": "Hello."}, ["hello"], home=self.home, cwd=cwd,
                           log=os.path.join(self.home, "next-gemini.jsonl"))
        main = [json.dumps(e["body"]) for e in e2e.read_jsonl(r["log"]) if e["step"] is not None or
                "systemInstruction" in e["body"] and e["body"].get("tools")]
        self.assertTrue(main and all("python3 -m unittest" in body for body in main), "the lesson reaches Gemini")


def every_and_mine(home: str, every: str, mine: str, project: str) -> None:
    """Put into the memory under home an every-project lesson and the project's own version of it."""
    from openmemory import store
    from tests.test_render import add_lesson
    with mock.patch.dict(os.environ, OPENMEMORY_HOME=os.path.join(home, "om")):
        with store.connect() as db:
            add_lesson(db, every, seen=3, strength=1.5)
            add_lesson(db, mine, cwd=project, strength=1.2)


class OneRuleOnceInGemini(unittest.TestCase):
    """The real Gemini CLI reads ~/.gemini/GEMINI.md and the project's private MEMORY.md both: an
    every-project rule and a project's own version of it went one into each, and reached its model
    twice (lessons34 de-duplicated within one file only)."""

    def setUp(self):
        binary("gemini")
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="om-test-once-"))
        self.addCleanup(shutil.rmtree, self.home, True)

    def test_the_model_reads_the_projects_own_words_once(self):
        os.makedirs(os.path.join(self.home, ".gemini"))
        openmemory(self.home, "setup", "--yes", "--schedule", "none")
        every = "Always run the tests with `pytest -q`."
        mine = "In this repository run the tests with `pytest -q`, not `python -m unittest`."
        roots = {}
        for name in ("shop", "blog"):
            roots[name] = os.path.join(self.home, name)
            os.makedirs(roots[name])
            subprocess.run(["git", "init", "-q", roots[name]], check=True)
            r = e2e.run_gemini({"steps": [], "default": "Hello."}, ["hello"], home=self.home, cwd=roots[name])
            self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])     # Gemini registers it
        every_and_mine(self.home, every, mine, roots["shop"])
        openmemory(self.home, "render")
        for name, want in (("shop", mine), ("blog", every)):
            r = e2e.run_gemini({"steps": [], "default": "Hello."}, ["hello"], home=self.home, cwd=roots[name],
                               log=os.path.join(self.home, f"{name}.jsonl"))
            self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])
            main = [json.dumps(e["body"], ensure_ascii=False) for e in e2e.read_jsonl(r["log"])
                    if "systemInstruction" in e["body"] and e["body"].get("tools")]
            self.assertTrue(main)
            for body in main:
                said = [line for line in (every, mine) if json.dumps(line, ensure_ascii=False)[1:-1] in body]
                self.assertEqual(said, [want], name)


class OneRuleOnceInCodex(unittest.TestCase):
    """The real Codex CLI reads $CODEX_HOME/AGENTS.md and the repository's AGENTS.md both: with the
    person's markers in the repository's, an every-project rule and the project's own version of it
    went one into each and reached its model twice (agents38)."""

    def setUp(self):
        binary("codex")
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="om-test-once-codex-"))
        self.addCleanup(shutil.rmtree, self.home, True)

    def test_the_model_reads_the_rule_once(self):
        os.makedirs(os.path.join(self.home, ".codex"))
        openmemory(self.home, "setup", "--yes", "--schedule", "none")
        every = "Always run the tests with `pytest -q`."
        mine = "In this repository run the tests with `pytest -q`, not `python -m unittest`."
        shop = os.path.join(self.home, "shop")
        os.makedirs(shop)
        subprocess.run(["git", "init", "-q", shop], check=True)
        Path(shop, "AGENTS.md").write_text("# Shop\n\n<!-- openmemory:begin -->\n<!-- openmemory:end -->\n")
        with open(os.path.join(shop, ".git", "info", "exclude"), "a") as f:
            f.write("AGENTS.md\n")
        every_and_mine(self.home, every, mine, shop)
        openmemory(self.home, "render")
        r = e2e.run_codex({"steps": [], "default": "Hello."}, ["hello"], home=self.home, cwd=shop,
                          log=os.path.join(self.home, "shop.jsonl"))
        self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])
        sent = [json.dumps(e["body"], ensure_ascii=False) for e in e2e.read_jsonl(r["log"])]
        self.assertTrue(sent)
        for body in sent:
            said = [line for line in (every, mine) if json.dumps(line, ensure_ascii=False)[1:-1] in body]
            self.assertEqual(said, [every])


class CatchUpFromCodex(unittest.TestCase):
    """With Codex alone and no nightly job (`--schedule none`), a Codex session's start catches up: the
    server Codex starts reads the session waiting since a night two days old, and sleeps on it."""

    def setUp(self):
        binary("codex")
        self.home = os.path.realpath(tempfile.mkdtemp(prefix="om-test-catchup-"))
        self.addCleanup(shutil.rmtree, self.home, True)

    def last_sleep(self):
        return json.loads(openmemory(self.home, "status", "--json").stdout)["last_sleep"]

    def test_a_codex_session_start_reads_the_waiting_session_and_sleeps(self):
        self.catches_up("codex")

    def test_a_gemini_session_start_too(self):
        binary("gemini")
        self.catches_up("gemini")

    def catches_up(self, agent):
        import sqlite3
        import time
        os.makedirs(os.path.join(self.home, f".{agent}"))
        openmemory(self.home, "setup", "--yes", "--schedule", "none")
        two_days_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2 * 86400))
        openmemory(self.home, "sleep", "--no-model", "--now", two_days_ago)
        last = self.last_sleep()
        om = Path(self.home, "om")
        (om / "morning.md").unlink()
        # A Codex session since, with a correction (the recording of 0.171.0), that nothing has read.
        source = DATA / "codex" / "correction.jsonl"
        sid = json.loads(source.read_text().splitlines()[0])["payload"]["id"]
        day = Path(self.home, ".codex", "sessions", "2026", "12", "03")
        day.mkdir(parents=True)
        waiting = day / f"rollout-2026-12-03T12-28-21-{sid}.jsonl"
        shutil.copy(source, waiting)
        run = e2e.run_codex if agent == "codex" else e2e.run_gemini
        r = run({"steps": [], "default": "Hello."}, ["hello"], home=self.home)
        self.assertEqual([t["rc"] for t in r["turns"]], [0], r["turns"])
        sent = [json.dumps(e["body"]) for e in e2e.read_jsonl(r["log"])]
        tool = "mcp__openmemory" if agent == "codex" else "mcp_openmemory_recall"
        self.assertTrue(sent and any(tool in body for body in sent), f"{agent} listed openmemory's tools")
        for _ in range(600):
            if (om / "morning.md").exists() and self.last_sleep() != last:   # the night is written
                break
            time.sleep(0.1)
        self.assertNotEqual(self.last_sleep(), last)
        with sqlite3.connect(f"file:{om / 'memory.db'}?mode=ro", uri=True) as db:
            stored = [row[0] for row in db.execute("SELECT path FROM sessions")]
        self.assertIn(str(waiting), stored)
        self.assertIn("1 new candidate", (om / "morning.md").read_text())
        name = {"codex": "codex-mcp-client", "gemini": "gemini-cli-mcp-client"}[agent]
        self.assertRegex((om / "logs" / "openmemory.log").read_text(),
                         rf"INFO initialize from {name} [^\n]*\n(.*\n)*.* INFO {agent} session start: "
                         r"last sleep \S+: catch-up sleep started\n")

if __name__ == "__main__":
    unittest.main()
