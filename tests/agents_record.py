#!/usr/bin/env python3
"""Re-make the recordings under tests/data/agents/<agent>/ with the real, pinned binaries, offline.

    python3 -m tests.agents_record codex [NAME ...]     # or: gemini; no NAME: every recording
    python3 -m tests.agents_record codex --keep          # leave the throwaway homes, print them

Each recording runs one session through tests/agents_e2e.py against the scripted fake model and
copies what the client wrote (its session file, subagent files, hook payloads) next to a digest
of what the model received (`<name>.requests.jsonl`: per request its path, the scenario step
it took, the tool names offered and the input that was new since the model last spoke). The
files are the binaries' own output, byte for byte; the README beside them says how each was made.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

from tests import agents_e2e as e2e

PROBE = os.path.join(e2e.ROOT, "..", "shared", "e2e", "examples", "probe_mcp.py")
HOOK = os.path.join(e2e.ROOT, "..", "shared", "e2e", "examples", "record_hook.py")
TEST_OK = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n"
# A short stand-in for Codex's ~20 KB built-in prompt, so that session_meta stays small (set with
# `model_instructions_file`; Codex copies it into session_meta.base_instructions).
SHORT_INSTRUCTIONS = "You are a coding agent running in the Codex CLI (recording for openmemory's tests).\n"


def probe_path():
    path = os.path.realpath(PROBE)
    if not os.path.exists(path):
        raise RuntimeError(f"the MCP probe is not at {path}")
    return path


def project(home, name="work"):
    """A git repository with one passing unittest under home."""
    cwd = os.path.join(home, name)
    os.makedirs(os.path.join(cwd, "tests"), exist_ok=True)
    with open(os.path.join(cwd, "tests", "__init__.py"), "w"):
        pass
    with open(os.path.join(cwd, "tests", "test_ok.py"), "w") as f:
        f.write(TEST_OK)
    return cwd


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def digest(log, agent):
    """One line per request the fake model got: what a test of 'the model saw X' needs, small."""
    out = []
    for e in e2e.read_jsonl(log):
        body = e.get("body") or {}
        if agent == "codex":
            tools = []
            for t in body.get("tools") or []:
                if t.get("type") == "namespace":
                    tools += [f"{t['name']}.{x.get('name')}" for x in t.get("tools") or []]
                else:
                    tools.append(t.get("name") or t.get("type"))
            text, has_output = e2e.codex_new_input(body) if body.get("input") is not None else ("", False)
        else:
            tools = [f["name"] for t in body.get("tools") or [] for f in t.get("functionDeclarations") or []]
            text, has_output = e2e.gemini_new_input(body) if body.get("contents") else ("", False)
        out.append({"n": e["n"], "path": e["path"], "step": e["step"], "tools": tools,
                    "new_input_has_tool_output": has_output, "new_input": text[:3000]})
    return "".join(json.dumps(o) + "\n" for o in out)


def canary_context(log, canaries, width=160):
    """For each canary: in which requests it was, and the text around its first sighting."""
    seen = {}
    for e in e2e.read_jsonl(log):
        s = json.dumps(e["body"])
        for c in canaries:
            if c in s:
                seen.setdefault(c, {"requests": [], "context": None})["requests"].append(e["n"])
                if seen[c]["context"] is None:
                    i = s.index(c)
                    seen[c]["context"] = s[max(0, i - width):i + width]
    return {c: seen.get(c, {"requests": [], "context": None}) for c in canaries}


def check(res):
    bad = [t for t in res["turns"] if t["rc"] != 0]
    if bad or not res["turns"]:
        raise RuntimeError(f"a turn failed: {json.dumps(bad or res, indent=1)[:4000]}")


# ---------------------------------------------------------------- Codex

def codex_config(home, extra=""):
    write(os.path.join(home, "instructions.md"), SHORT_INSTRUCTIONS)
    return f'model_instructions_file = "{home}/instructions.md"\n' + extra


def codex_fail_then_work(home):
    cwd = project(home)
    scenario = {"steps": [
        {"match": "run the tests", "reply": [{"text": "I'll run the test suite."},
                                             {"tool_call": {"name": "exec_command", "args": {"cmd": "python3 run_tests.py"}}}]},
        {"match": "tool_result", "reply": [{"tool_call": {"name": "exec_command", "args": {"cmd": "python3 -m unittest -q"}}}]},
        {"match": "tool_result", "reply": [{"text": "The tests pass: python3 -m unittest ran 1 test, OK."}]}]}
    res = e2e.run_codex(scenario, ["run the tests"], home=home, cwd=cwd, config=codex_config(home))
    check(res)
    return res, {"": res["rollout"]}


def codex_correction(home):
    cwd = project(home)
    scenario = {"steps": [
        {"match": "run the tests", "reply": [{"tool_call": {"name": "exec_command", "args": {"cmd": "python3 -m pytest -q"}}}]},
        {"match": "tool_result", "reply": [{"text": "I ran the tests with pytest."}]},
        {"match": "use unittest", "reply": [{"tool_call": {"name": "exec_command", "args": {"cmd": "python3 -m unittest -q"}}}]},
        {"match": "tool_result", "reply": [{"text": "Understood: python3 -m unittest, 1 test OK."}]}]}
    res = e2e.run_codex(scenario, ["run the tests", "No, don't use pytest here, use unittest: python3 -m unittest"],
                        home=home, cwd=cwd, config=codex_config(home))
    check(res)
    return res, {"": res["rollout"]}


def _codex_mcp(home, approve):
    cwd = project(home)
    config = codex_config(home)
    write(os.path.join(home, ".codex", "config.toml"), config)
    add = e2e.codex_cli(home, "mcp", "add", "openmemory", "--", "python3", probe_path(), os.path.join(home, "mcp.log"))
    if add["rc"] != 0:
        raise RuntimeError(add)
    if approve:
        with open(os.path.join(home, ".codex", "config.toml"), "a") as f:
            f.write('\n[mcp_servers.openmemory.tools.recall]\napproval_mode = "approve"\n')
    scenario = {"steps": [
        {"match": "recall", "reply": [{"text": "Checking memory."}, {"tool_call": {
            "namespace": "mcp__openmemory", "name": "recall", "args": {"query": "how are tests run here"}}}]},
        {"match": "tool_result", "reply": [{"text": "Memory answered."}]}]}
    res = e2e.run_codex(scenario, ["recall how tests are run here"], home=home, cwd=cwd)
    check(res)
    listing = e2e.codex_cli(home, "mcp", "list")
    files = {"": res["rollout"], ".config.toml": os.path.join(home, ".codex", "config.toml"),
             ".mcp-list.txt": ("text", f"$ codex mcp list\n{listing['stdout']}"),
             ".mcp-add.txt": ("text", f"$ codex mcp add openmemory -- python3 <probe_mcp.py> <log>\n{add['stdout']}{add['stderr']}")}
    if os.path.exists(os.path.join(home, "mcp.log")):
        files[".mcp.log"] = os.path.join(home, "mcp.log")
    return res, files


def codex_mcp_recall(home):
    return _codex_mcp(home, approve=True)


def codex_mcp_denied(home):
    return _codex_mcp(home, approve=False)


def codex_memory_files(home):
    """Which AGENTS.md files reach the model: global, repository root, folders down to cwd; not a sibling."""
    repo = project(home, "repo")
    subprocess.run(["git", "init", "-q", repo], check=True, capture_output=True)
    cwd = os.path.join(repo, "sub", "dir")
    write(os.path.join(home, ".codex", "AGENTS.md"), "OM-CANARY-CODEX-GLOBAL: global AGENTS.md in $CODEX_HOME\n")
    write(os.path.join(repo, "AGENTS.md"), "OM-CANARY-CODEX-REPO: AGENTS.md at the repository root\n")
    write(os.path.join(repo, "sub", "AGENTS.md"), "OM-CANARY-CODEX-SUB: AGENTS.md in repo/sub\n")
    write(os.path.join(cwd, "AGENTS.md"), "OM-CANARY-CODEX-CWD: AGENTS.md in the working folder\n")
    write(os.path.join(repo, "other", "AGENTS.md"), "OM-CANARY-CODEX-SIBLING: AGENTS.md in a sibling folder\n")
    write(os.path.join(home, ".codex", "memories", "MEMORY.md"), "OM-CANARY-CODEX-MEMORIES: $CODEX_HOME/memories/MEMORY.md\n")
    scenario = {"steps": [], "default": "Hello."}
    res = e2e.run_codex(scenario, ["hello", "and again"], home=home, cwd=cwd, config=codex_config(home))
    check(res)
    canaries = ["OM-CANARY-CODEX-GLOBAL", "OM-CANARY-CODEX-REPO", "OM-CANARY-CODEX-SUB", "OM-CANARY-CODEX-CWD",
                "OM-CANARY-CODEX-SIBLING", "OM-CANARY-CODEX-MEMORIES"]
    return res, {"": res["rollout"], ".canaries.json": ("json", canary_context(res["log"], canaries))}


def codex_subagent(home):
    cwd = project(home)
    scenario = {"steps": [
        {"match": "delegate", "reply": [{"text": "I'll ask a helper agent."}, {"tool_call": {
            "namespace": "multi_agent_v1", "name": "spawn_agent",
            "args": {"message": "SUBTASK: run python3 missing.py and report what happened"}}}]},
        {"match": "\"agent_id\":\\s*\"(?P<agent>[^\"]+)\"", "reply": [{"tool_call": {
            "namespace": "multi_agent_v1", "name": "wait_agent", "args": {"targets": ["{{agent}}"], "timeout_ms": 60000}}}]},
        {"match": "SUBTASK", "reply": [{"tool_call": {"name": "exec_command", "args": {"cmd": "python3 missing.py"}}}]},
        {"match": "missing\\.py", "reply": [{"text": "SUBRESULT: python3 missing.py failed with exit code 2 (no such file)."}]},
        {"match": "SUBRESULT", "reply": [{"text": "The helper reports that python3 missing.py fails: the file does not exist."}]}]}
    res = e2e.run_codex(scenario, ["delegate: check why missing.py does not run"], home=home, cwd=cwd,
                        config=codex_config(home))
    check(res)
    files = {"": res["rollout"]}
    for i, p in enumerate(x for x in res["rollouts"] if x != res["rollout"]):
        files[f".subagent{i + 1 if i else ''}.jsonl"] = p
    return res, files


def codex_denied(home):
    """What a sandbox refusal looks like: a write in the read-only sandbox, then an escalation request
    that approval_policy=never turns down."""
    cwd = project(home)
    scenario = {"steps": [
        {"match": "build log", "reply": [{"tool_call": {"name": "exec_command", "args": {"cmd": "touch build.log"}}}]},
        {"match": "tool_result", "reply": [{"tool_call": {"name": "exec_command", "args": {
            "cmd": "touch build.log", "sandbox_permissions": "require_escalated",
            "justification": "Create build.log in the project?"}}}]},
        {"match": "tool_result", "reply": [{"text": "I could not create build.log: the sandbox is read-only."}]}]}
    res = e2e.run_codex(scenario, ["create an empty build log"], home=home, cwd=cwd, config=codex_config(home))
    check(res)
    return res, {"": res["rollout"]}


def codex_hooks(home):
    """Which hooks Codex runs in `codex exec`, with what payload, and the legacy `notify` program."""
    cwd = project(home)
    out = os.path.join(home, "hooks.jsonl")
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd",
              "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PermissionRequest"]
    hooks = {"hooks": {ev: [{"hooks": [{"type": "command", "command": f"python3 {os.path.realpath(HOOK)} {out} {ev}"}]}]
                       for ev in events}}
    write(os.path.join(home, ".codex", "hooks.json"), json.dumps(hooks, indent=1))
    notify = os.path.join(home, "notify.py")
    write(notify, "import json, sys\nopen(sys.argv[1], 'a').write(json.dumps({'argv': sys.argv[2:]}) + '\\n')\n")
    config = codex_config(home, f'notify = ["python3", "{notify}", "{home}/notify.jsonl"]\n')
    scenario = {"steps": [
        {"match": "run the tests", "reply": [{"tool_call": {"name": "exec_command", "args": {"cmd": "python3 run_tests.py"}}}]},
        {"match": "tool_result", "reply": [{"text": "run_tests.py does not exist."}]},
        {"match": "unittest", "reply": [{"tool_call": {"name": "exec_command", "args": {"cmd": "python3 -m unittest -q"}}}]},
        {"match": "tool_result", "reply": [{"text": "OK."}]}]}
    res = e2e.run_codex(scenario, ["run the tests", "use python3 -m unittest"], home=home, cwd=cwd, config=config,
                        exec_args=["--dangerously-bypass-hook-trust"])
    check(res)
    files = {"": res["rollout"], ".hooks.json": os.path.join(home, ".codex", "hooks.json")}
    for name in ("hooks.jsonl", "notify.jsonl"):
        if os.path.exists(os.path.join(home, name)):
            files["." + name] = os.path.join(home, name)
    return res, files


def codex_interrupt(home):
    """SIGINT to `codex exec` while a command runs: how an interrupted turn is recorded."""
    home, cwd = e2e._prepare(home, project(home), git=True)
    scenario = {"steps": [
        {"match": "wait", "reply": [{"text": "Waiting."}, {"tool_call": {"name": "exec_command", "args": {"cmd": "sleep 30", "yield_time_ms": 30000}}}]}],
        "default": "Done."}
    log = os.path.join(home, "requests.jsonl")
    write(os.path.join(home, ".codex", "config.toml"), codex_config(home))
    before = set(e2e.codex_rollouts(home))
    with e2e.FakeModel(scenario, log) as port:
        argv = [e2e.find_codex(), "exec"] + e2e.codex_provider_args(port) + ["wait for the slow job"]
        p = subprocess.Popen(argv, cwd=cwd, env=e2e.codex_env(home), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and p.poll() is None and not (os.path.exists(log) and e2e.read_jsonl(log)):
            time.sleep(0.2)
        time.sleep(2)  # the command is running now
        p.send_signal(signal.SIGINT)
        try:
            stdout, stderr = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
    rollouts = [x for x in e2e.codex_rollouts(home) if x not in before]
    res = {"home": home, "cwd": cwd, "log": log, "rollout": rollouts[0] if rollouts else None,
           "turns": [{"argv": argv, "rc": p.returncode, "stdout": stdout, "stderr": stderr}]}
    if not rollouts:
        raise RuntimeError(res)
    return res, {"": res["rollout"], ".exit.txt": ("text", f"exit code after SIGINT: {p.returncode}\n--- stderr (tail)\n{stderr[-1500:]}")}


def codex_compaction(home):
    """A session Codex compacts (its auto-compaction at a low token limit): the summary the model
    wrote is kept in the rollout as a `compacted` line."""
    cwd = project(home)
    scenario = {"steps": [
        {"match": "run the tests", "reply": [{"text": "The suite runs with python3 -m unittest; 1 test, OK."}]},
        {"match": "go on", "reply": [{"text": "Carrying on from the summary."}]}],
        "side": "SUMMARY-CANARY: the person asked to run the tests; they run with python3 -m unittest, never pytest."}
    res = e2e.run_codex(scenario, ["run the tests", "go on"], home=home, cwd=cwd,
                        config=codex_config(home, "model_auto_compact_token_limit = 2000\n"))
    check(res)
    return res, {"": res["rollout"]}


def _app_server(home, cwd, port, log_calls):
    """`codex app-server` (the JSON-RPC over stdio that Codex's IDE extension and desktop app
    drive), started against the fake model: (call(method, params) -> reply, wait(notification), stop)."""
    import queue
    import threading
    p = subprocess.Popen([e2e.find_codex(), "app-server"] + e2e.codex_provider_args(port), cwd=cwd,
                         env=e2e.codex_env(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    messages = queue.Queue()
    threading.Thread(target=lambda: [messages.put(json.loads(line)) for line in p.stdout], daemon=True).start()
    ids = iter(range(1, 1000))

    def call(method, params):
        n = next(ids)
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n")
        p.stdin.flush()
        while True:
            m = messages.get(timeout=60)
            if m.get("id") == n and ("result" in m or "error" in m):
                log_calls.append({"method": method, "params": params, "reply": m})
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]

    def wait(name):
        while messages.get(timeout=60).get("method") != name:
            pass

    def stop():
        p.stdin.close()
        p.wait(timeout=30)
    call("initialize", {"clientInfo": {"name": "om-record", "version": "0"}})
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
    p.stdin.flush()
    return call, wait, stop


def codex_revert(home):
    """A thread reverted to before its second turn (`thread/revert`, as the IDE extension and the
    desktop app edit an earlier message), then a new turn: 0.171.0 leaves the first rollout as it
    was and goes on in a segment file beside it, `<same name>_<segment id>.jsonl`, whose session_meta
    names the history it keeps (`history_base.end_ordinal_exclusive`)."""
    home, cwd = e2e._prepare(home, project(home), git=True)
    write(os.path.join(home, ".codex", "config.toml"), codex_config(home))
    scenario = {"steps": [{"match": "run the lint", "reply": [{"text": "Linting with ruff."}]},
                          {"match": "push with --force", "reply": [{"text": "Pushing with --force."}]},
                          {"match": "deploy to staging", "reply": [{"text": "Deploying to staging."}]}]}
    log, calls = os.path.join(home, "requests.jsonl"), []
    before = set(e2e.codex_rollouts(home))
    with e2e.FakeModel(scenario, log) as port:
        call, wait, stop = _app_server(home, cwd, port, calls)
        thread = call("thread/start", {"cwd": cwd})["thread"]["id"]
        turns = []
        for text in ("run the lint", "push with --force"):
            turns.append(call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": text}]})["turn"]["id"])
            wait("turn/completed")
        call("thread/revert", {"threadId": thread, "beforeTurnId": turns[1]})
        call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "deploy to staging"}]})
        wait("turn/completed")
        stop()
    rollouts = sorted(x for x in e2e.codex_rollouts(home) if x not in before)
    if len(rollouts) != 2:
        raise RuntimeError(f"expected the rollout and its segment, found {rollouts}")
    res = {"home": home, "cwd": cwd, "log": log, "rollout": rollouts[0], "turns": []}
    return res, {"": rollouts[0], ".segment.jsonl": rollouts[1],
                 ".app-server.txt": ("text", "\n".join(json.dumps({k: c[k] for k in ("method", "params")}) for c in calls) + "\n")}


# What Codex's IDE extension sends as the person's message: the editor's context under its heading,
# then their words after "## My request for Codex:" (the format Codex's own state crate strips,
# USER_MESSAGE_BEGIN). `codex exec` takes the same text as typed, so the rollout is as the extension's.
IDE_PROMPT = ("# Context from my IDE setup:\n\n## Active file: app.py\n\n## Active selection of the file:\n"
              "print('From now on always deploy on Fridays')\n\n## Open tabs:\n- app.py: app.py\n\n"
              "## My request for Codex:\nnever use print here, use logging")


def codex_ide_context(home):
    """A person's words as Codex's IDE extension sends them, after the editor's context."""
    cwd = project(home)
    scenario = {"steps": [{"match": "use logging", "reply": [{"text": "Noted: logging, not print."}]}]}
    res = e2e.run_codex(scenario, [IDE_PROMPT], home=home, cwd=cwd, config=codex_config(home))
    check(res)
    return res, {"": res["rollout"]}


CODEX = {"fail_then_work": codex_fail_then_work, "correction": codex_correction, "mcp_recall": codex_mcp_recall,
         "mcp_denied": codex_mcp_denied, "memory_files": codex_memory_files, "subagent": codex_subagent,
         "denied": codex_denied, "hooks": codex_hooks, "interrupt": codex_interrupt, "compaction": codex_compaction,
         "ide_context": codex_ide_context, "revert": codex_revert}

# ---------------------------------------------------------------- Gemini

SHELL = ["--allowed-tools", "run_shell_command"]  # deprecated flag, still honoured by 0.61.0 (it says so on stderr)


def gemini_fail_then_work(home):
    cwd = project(home)
    scenario = {"steps": [
        {"match": "run the tests", "reply": [{"text": "I'll run the test suite."}, {"tool_call": {
            "name": "run_shell_command", "args": {"command": "python3 run_tests.py", "description": "Run the tests"}}}]},
        {"match": "tool_result", "reply": [{"tool_call": {"name": "run_shell_command", "args": {"command": "python3 -m unittest -q"}}}]},
        {"match": "tool_result", "reply": [{"text": "The tests pass: python3 -m unittest ran 1 test, OK."}]}]}
    res = e2e.run_gemini(scenario, ["run the tests"], home=home, cwd=cwd, args=SHELL)
    check(res)
    return res, {"": res["chat"]}


def gemini_correction(home):
    cwd = project(home)
    scenario = {"steps": [
        {"match": "run the tests", "reply": [{"tool_call": {"name": "run_shell_command", "args": {"command": "python3 -m nosuchrunner -q"}}}]},
        {"match": "tool_result", "reply": [{"text": "I ran the tests with nosuchrunner."}]},
        {"match": "use unittest", "reply": [{"tool_call": {"name": "run_shell_command", "args": {"command": "python3 -m unittest -q"}}}]},
        {"match": "tool_result", "reply": [{"text": "Understood: python3 -m unittest, 1 test OK."}]}]}
    res = e2e.run_gemini(scenario, ["run the tests", "No, don't use nosuchrunner here, use unittest: python3 -m unittest"],
                         home=home, cwd=cwd, args=SHELL)
    check(res)
    return res, {"": res["chat"]}


def _gemini_mcp(home, allow):
    cwd = project(home)
    add = e2e.gemini_cli(home, "mcp", "add", "--scope", "user", "openmemory", "python3", probe_path(),
                         os.path.join(home, "mcp.log"))
    if add["rc"] != 0:
        raise RuntimeError(add)
    files = {}
    if allow:
        policy = 'toolName = "recall"\nmcpName = "openmemory"\ndecision = "allow"\npriority = 100\n'
        write(os.path.join(home, ".gemini", "policies", "openmemory.toml"), "[[rule]]\n" + policy)
        files[".policy.toml"] = os.path.join(home, ".gemini", "policies", "openmemory.toml")
    scenario = {"steps": [
        {"match": "recall", "reply": [{"text": "Checking memory."}, {"tool_call": {
            "name": "mcp_openmemory_recall", "args": {"query": "how are tests run here"}}}]},
        {"match": "tool_result", "reply": [{"text": "Memory answered."}]}]}
    res = e2e.run_gemini(scenario, ["recall how tests are run here"], home=home, cwd=cwd)
    check(res)
    listing = e2e.gemini_cli(home, "mcp", "list", cwd=cwd)
    files.update({"": res["chat"], ".settings.json": os.path.join(home, ".gemini", "settings.json"),
                  ".mcp-list.txt": ("text", f"$ gemini mcp list\n{listing['stdout']}{listing['stderr']}"),
                  ".mcp-add.txt": ("text", f"$ gemini mcp add --scope user openmemory python3 <probe_mcp.py> <log>\n"
                                           f"{add['stdout']}{add['stderr']}")})
    if os.path.exists(os.path.join(home, "mcp.log")):
        files[".mcp.log"] = os.path.join(home, "mcp.log")
    return res, files


def gemini_mcp_recall(home):
    return _gemini_mcp(home, allow=True)


def gemini_mcp_denied(home):
    return _gemini_mcp(home, allow=False)


def gemini_memory_files(home):
    """Which GEMINI.md files reach the model: global, repository root down to cwd, below cwd; and the
    private project memory ~/.gemini/tmp/<project>/memory/MEMORY.md."""
    repo = project(home, "repo")
    subprocess.run(["git", "init", "-q", repo], check=True, capture_output=True)
    cwd = os.path.join(repo, "sub", "dir")
    os.makedirs(cwd, exist_ok=True)
    first = e2e.run_gemini({"steps": [], "default": "Hello."}, ["hello"], home=home, cwd=cwd)  # registers the project
    check(first)
    project_tmp = os.path.dirname(os.path.dirname(first["chat"]))
    write(os.path.join(project_tmp, "memory", "MEMORY.md"), "OM-CANARY-GEMINI-PRIVATE: private project MEMORY.md\n")
    write(os.path.join(home, ".gemini", "GEMINI.md"), "OM-CANARY-GEMINI-GLOBAL: global ~/.gemini/GEMINI.md\n")
    write(os.path.join(repo, "GEMINI.md"), "OM-CANARY-GEMINI-REPO: GEMINI.md at the repository root\n")
    write(os.path.join(repo, "sub", "GEMINI.md"), "OM-CANARY-GEMINI-SUB: GEMINI.md in repo/sub\n")
    write(os.path.join(cwd, "GEMINI.md"), "OM-CANARY-GEMINI-CWD: GEMINI.md in the working folder\n")
    write(os.path.join(cwd, "deeper", "GEMINI.md"), "OM-CANARY-GEMINI-BELOW: GEMINI.md below the working folder\n")
    write(os.path.join(repo, "other", "GEMINI.md"), "OM-CANARY-GEMINI-SIBLING: GEMINI.md in a sibling folder\n")
    write(os.path.join(repo, "AGENTS.md"), "OM-CANARY-GEMINI-AGENTSMD: AGENTS.md at the repository root\n")
    os.remove(first["log"])
    res = e2e.run_gemini({"steps": [], "default": "Hello."}, ["hello again", "and again"], home=home, cwd=cwd)
    check(res)
    canaries = ["OM-CANARY-GEMINI-GLOBAL", "OM-CANARY-GEMINI-REPO", "OM-CANARY-GEMINI-SUB", "OM-CANARY-GEMINI-CWD",
                "OM-CANARY-GEMINI-BELOW", "OM-CANARY-GEMINI-SIBLING", "OM-CANARY-GEMINI-AGENTSMD",
                "OM-CANARY-GEMINI-PRIVATE"]
    return res, {"": res["chat"], ".canaries.json": ("json", canary_context(res["log"], canaries))}


def gemini_subagent(home):
    cwd = project(home)
    scenario = {"steps": [
        {"match": "delegate", "reply": [{"text": "I'll ask the generalist."}, {"tool_call": {
            "name": "invoke_agent", "args": {"agent_name": "generalist",
                                             "prompt": "SUBTASK: run python3 missing.py and report what happened"}}}]},
        {"match": "SUBTASK", "reply": [{"tool_call": {"name": "run_shell_command", "args": {"command": "python3 missing.py"}}}]},
        {"match": "missing\\.py", "reply": [{"tool_call": {"name": "complete_task", "args": {
            "result": {"response": "SUBRESULT: python3 missing.py failed with exit code 2 (no such file)."}}}}]},
        {"match": "SUBRESULT", "reply": [{"text": "The helper reports that python3 missing.py fails: the file does not exist."}]}]}
    res = e2e.run_gemini(scenario, ["delegate: check why missing.py does not run"], home=home, cwd=cwd, args=SHELL)
    check(res)
    files = {"": res["chat"]}
    for i, p in enumerate(x for x in res["chats"] if x != res["chat"]):
        files[f".subagent{i + 1 if i else ''}.jsonl"] = p
    return res, files


def gemini_denied(home):
    """A tool the person did not allow (run_shell_command without --allowed-tools), called anyway."""
    cwd = project(home)
    scenario = {"steps": [
        {"match": "build log", "reply": [{"tool_call": {"name": "run_shell_command", "args": {"command": "touch build.log"}}}]},
        {"match": "tool_result", "reply": [{"text": "I could not run the command."}]}]}
    res = e2e.run_gemini(scenario, ["create an empty build log"], home=home, cwd=cwd)
    check(res)
    return res, {"": res["chat"]}


LEGACY_GEMINI = "0.38.2"  # the last release before chats became .jsonl (google-gemini/gemini-cli#23749, in 0.39.0)


def gemini_legacy_json(home):
    """A session written by 0.38.2 (one JSON document), then continued by 0.61.0, which copies it into a
    .jsonl beside it and appends there."""
    cwd = project(home)
    scenario = {"steps": [
        {"match": "run the tests", "reply": [{"tool_call": {"name": "run_shell_command", "args": {"command": "python3 run_tests.py"}}}]},
        {"match": "tool_result", "reply": [{"text": "run_tests.py is missing."}]},
        {"match": "use unittest", "reply": [{"tool_call": {"name": "run_shell_command", "args": {"command": "python3 -m unittest -q"}}}]},
        {"match": "tool_result", "reply": [{"text": "OK: 1 test."}]},
        {"match": "thanks", "reply": [{"text": "You're welcome."}]}]}
    old = e2e.run_gemini(scenario, ["run the tests", "No, use unittest: python3 -m unittest"], home=home, cwd=cwd,
                         args=SHELL, version=LEGACY_GEMINI, session_flag=False)
    check(old)
    legacy = os.path.join(home, "legacy-copy.json")
    shutil.copyfile(old["chat"], legacy)
    time.sleep(61 - time.time() % 60)  # the next minute: the file names carry the minute they were made in
    new = e2e.run_gemini(scenario, ["thanks"], home=home, cwd=cwd, args=SHELL, resume=old["session_id"], log=old["log"])
    check(new)
    res = dict(old, turns=old["turns"] + new["turns"])
    files = {".json": legacy}
    listing = []
    for i, p in enumerate(sorted(x for x in e2e.gemini_chats(home) if x.endswith(".jsonl"))):
        files[f".resumed{i + 1}.jsonl"] = p
        listing.append(f"legacy_json.resumed{i + 1}.jsonl <- {os.path.relpath(p, home)}")
    listing.append(f"legacy_json.json <- {os.path.relpath(old['chat'], home)} (copied before 0.61.0 resumed it)")
    files[".listing.txt"] = ("text", "\n".join(listing) + "\n")
    return res, files


def gemini_hook_context(home):
    """What hooks' additionalContext becomes in the person's messages (SessionStart's and
    BeforeAgent's), over two turns: the second a resume, which rebuilds the chat's messages."""
    cwd = project(home)
    hook = os.path.join(home, "context_hook.py")
    write(hook, "import json, sys\nsys.stdin.read()\nev = sys.argv[1]\n"
                "ctx = {'SessionStart': 'HOOK-CANARY-START: From now on always run the linter.',\n"
                "       'BeforeAgent': 'HOOK-CANARY-AGENT: never push on red.'}[ev]\n"
                "print(json.dumps({'hookSpecificOutput': {'hookEventName': ev, 'additionalContext': ctx}}))\n")
    settings = {"hooks": {ev: [{"hooks": [{"type": "command", "command": f"python3 {hook} {ev}"}]}]
                          for ev in ("SessionStart", "BeforeAgent")}}
    scenario = {"steps": [{"match": "use unittest", "reply": [{"text": "Noted: unittest."}]},
                          {"match": "thanks", "reply": [{"text": "You're welcome."}]}]}
    res = e2e.run_gemini(scenario, ["No, don't use pytest here, use unittest", "thanks"], home=home, cwd=cwd,
                         settings=settings)
    check(res)
    return res, {"": res["chat"]}


GEMINI = {"fail_then_work": gemini_fail_then_work, "correction": gemini_correction, "mcp_recall": gemini_mcp_recall,
          "mcp_denied": gemini_mcp_denied, "memory_files": gemini_memory_files, "subagent": gemini_subagent,
          "denied": gemini_denied, "legacy_json": gemini_legacy_json, "hook_context": gemini_hook_context}


# ---------------------------------------------------------------- driver

def save(agent, name, res, files, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for suffix, src in files.items():
        dest = os.path.join(out_dir, name + (suffix or (".json" if str(src).endswith(".json") else ".jsonl")))
        if isinstance(src, tuple):
            kind, value = src
            with open(dest, "w") as f:
                f.write(json.dumps(value, indent=1) + "\n" if kind == "json" else value)
        elif src:
            shutil.copyfile(src, dest)
        written.append(dest)
    dest = os.path.join(out_dir, name + ".requests.jsonl")
    with open(dest, "w") as f:
        f.write(digest(res["log"], agent))
    written.append(dest)
    return written


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    keep = "--keep" in argv
    argv = [a for a in argv if a != "--keep"]
    if not argv or argv[0] not in ("codex", "gemini"):
        print(__doc__)
        return 2
    agent, names = argv[0], argv[1:]
    table = CODEX if agent == "codex" else GEMINI
    out_dir = os.path.join(e2e.DATA, agent)
    for name in names or list(table):
        home = tempfile.mkdtemp(prefix=f"om-rec-{agent}-{name}-")
        try:
            res, files = table[name](os.path.realpath(home))
            for path in save(agent, name, res, files, out_dir):
                print(f"{name}: {os.path.relpath(path, e2e.ROOT)} ({os.path.getsize(path)} bytes)")
        finally:
            if keep:
                print(f"{name}: kept {home}")
            else:
                shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
