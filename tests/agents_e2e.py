#!/usr/bin/env python3
"""Run the real OpenAI Codex CLI and Google Gemini CLI against a scripted fake model on 127.0.0.1.

The same idea as ../shared/e2e/ for Claude Code: the pinned binary from npm, a throwaway HOME,
and a fake model that speaks each client's real wire format (Codex: the OpenAI Responses API,
streamed as SSE, `POST /v1/responses`; Gemini: `POST /v1beta/models/M:streamGenerateContent?alt=sse`
and `:generateContent`), whose replies, tool calls included, come from a scenario. Offline: the
only network step is the one-time `npm install` of each CLI. Standard library only.

Library:  from tests.agents_e2e import run_codex, run_gemini, find_codex, find_gemini
CLI:      python3 -m tests.agents_e2e codex --scenario s.json --prompt "first" [--prompt "follow-up"]
          python3 -m tests.agents_e2e gemini --scenario s.json --prompt "first" [--prompt ...]
          python3 -m tests.agents_e2e codex --which        # locate (or install) the binary
          python3 -m tests.agents_e2e record codex|gemini  # re-make tests/data/agents/<agent>/

Scenario: `[step, ...]` or `{"steps": [...], "default": "text"}`; a step is
    {"match": REGEX | "tool_result", "reply": [{"text": "..."}, {"reasoning": "..."},
                                                {"tool_call": {"name": "exec_command", "args": {...}}}]}
Each main-loop request (one that offers tools) takes the first unused step whose `match` fits the
input that is new since the model last spoke (Codex: the `input` items after the last assistant
item; Gemini: the last `contents` entry): a regex is searched (re.S) in all of its text, tool
outputs included; "tool_result" fits when that input holds a tool's output; no `match` fits
anything. Each step is used once. Other requests get the `default` text, or, when they ask for
JSON by schema (Gemini's model router), the smallest object that fits the schema. Every request
is appended to the log as {"n", "agent", "path", "step", "body"}.
"""
import argparse
import fcntl
import glob
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CODEX_VERSION = os.environ.get("OM_E2E_CODEX_VERSION", "0.171.0")
GEMINI_VERSION = os.environ.get("OM_E2E_GEMINI_VERSION", "0.61.0")
DEFAULT_TEXT = "OK (fake model: no scripted step matched)."
FAKE_CODEX_MODEL = "gpt-fake"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "agents")


# ---------------------------------------------------------------- binaries

def cache_dir(name, version):
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "openmemory-e2e", f"{name}-{version}")


def npm_install_once(cache, spec, found):
    """`npm install --ignore-scripts spec` into `cache` unless found() already finds the binary."""
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test runs install only once
        if not found():
            if not shutil.which("npm"):
                raise RuntimeError(f"npm is not on PATH, so {spec} cannot be installed")
            p = subprocess.run(["npm", "install", "--prefix", cache, "--no-audit", "--no-fund",
                                "--ignore-scripts", spec], capture_output=True, text=True, timeout=900)
            if p.returncode != 0:
                why = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise RuntimeError(f"npm install {spec} failed: {why}")
    hit = found()
    if not hit:
        raise RuntimeError(f"{spec} installed into {cache}, but its binary is not there")
    return hit


def find_codex(version=CODEX_VERSION):
    """$CODEX_BIN, else the native binary of npm's @openai/codex@version, installed once into a cache.

    --ignore-scripts is enough: the package has no install script; its bin/codex.js only picks the
    platform package (an optional dependency, `@openai/codex-<os>-<arch>`) and execs
    vendor/<target>/bin/codex, which we call directly (no node needed at run time)."""
    if os.environ.get("CODEX_BIN"):
        return os.environ["CODEX_BIN"]
    cache = cache_dir("codex", version)
    patterns = [os.path.join(cache, "node_modules", "@openai", "codex-*", "vendor", "*", "bin", "codex"),
                os.path.join(cache, "node_modules", "@openai", "codex", "vendor", "*", "codex", "codex")]

    def found():
        hits = sorted(h for p in patterns for h in glob.glob(p))
        return hits[0] if hits else None
    return npm_install_once(cache, f"@openai/codex@{version}", found)


def find_gemini(version=GEMINI_VERSION):
    """argv prefix that runs Gemini CLI: $GEMINI_BIN, else `node bundle/gemini.js` of
    npm's @google/gemini-cli@version installed once into a cache (a bundle: no dependencies,
    no install script; needs node >= 20)."""
    if os.environ.get("GEMINI_BIN"):
        return [os.environ["GEMINI_BIN"]]
    node = shutil.which("node")
    if not node:
        raise RuntimeError("node is not on PATH (Gemini CLI needs node >= 20)")
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    major = int(re.match(r"v(\d+)", out).group(1)) if re.match(r"v(\d+)", out) else 0
    if major < 20:
        raise RuntimeError(f"Gemini CLI needs node >= 20, this is {out or 'an unknown node'}")
    cache = cache_dir("gemini-cli", version)
    script = os.path.join(cache, "node_modules", "@google", "gemini-cli", "bundle", "gemini.js")
    legacy = os.path.join(cache, "node_modules", "@google", "gemini-cli", "dist", "index.js")
    return [node, npm_install_once(cache, f"@google/gemini-cli@{version}",
                                   lambda: next((p for p in (script, legacy) if os.path.exists(p)), None))]


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# ---------------------------------------------------------------- the fake model

def _texts(value):
    """Every string inside a JSON value, in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


ASSISTANT_ITEMS = {"function_call", "custom_tool_call", "local_shell_call", "reasoning", "web_search_call",
                   "tool_search_call", "image_generation_call"}


def codex_new_input(body):
    """(text, holds a tool output) of the Responses `input` items after the model last spoke."""
    items = body.get("input") or []
    if isinstance(items, str):
        return items, False
    new = []
    for item in reversed(items):
        if item.get("type") in ASSISTANT_ITEMS or (item.get("type") == "message" and item.get("role") == "assistant"):
            break
        new.append(item)
    new.reverse()
    has_output = any(str(i.get("type", "")).endswith("_output") for i in new)
    return "\n".join(t for i in new for t in _item_texts(i)), has_output


def _item_texts(item):
    """The text of a Responses input item: a message's text parts, a tool output's text."""
    value = item.get("content") if item.get("type") == "message" else item.get("output")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [c["text"] for c in value if isinstance(c, dict) and isinstance(c.get("text"), str)]
    return _texts(value)


def gemini_new_input(body):
    """(text, holds a functionResponse) of the last `contents` entry."""
    contents = body.get("contents") or []
    last = contents[-1] if contents else {}
    parts = last.get("parts") or []
    has_result = any("functionResponse" in p for p in parts)
    text = "\n".join([p["text"] for p in parts if isinstance(p.get("text"), str)] +
                     [t for p in parts if "functionResponse" in p for t in _texts(p["functionResponse"].get("response"))])
    return text, has_result


class Script:
    def __init__(self, scenario):
        if isinstance(scenario, list):
            scenario = {"steps": scenario}
        self.steps = scenario.get("steps", [])
        self.default = scenario.get("default", DEFAULT_TEXT)
        self.side = scenario.get("side")    # the answer to a request that offers no tools (Codex's compaction)
        self.used = set()
        self.lock = threading.Lock()
        self.counter = itertools.count(1)

    def pick(self, text, has_result):
        """(step index or None, reply blocks) for a main-loop request. `{{name}}` in a reply's strings
        becomes what the match's group `(?P<name>...)` caught (an id the client made up, say)."""
        with self.lock:
            for i, step in enumerate(self.steps):
                m = step.get("match")
                if i in self.used:
                    continue
                hit = None if m in (None, "tool_result") else re.search(m, text, re.S)
                if m is None or (m == "tool_result" and has_result) or hit:
                    self.used.add(i)
                    return i, _fill(step["reply"], hit.groupdict() if hit else {})
        return None, [{"text": self.default}]


def _fill(value, groups):
    if isinstance(value, str):
        return re.sub(r"\{\{(\w+)\}\}", lambda m: groups.get(m.group(1)) or m.group(0), value)
    if isinstance(value, dict):
        return {k: _fill(v, groups) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, groups) for v in value]
    return value


def fill_schema(schema):
    """The smallest value that fits a JSON schema (Gemini's side requests ask for JSON by schema)."""
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: fill_schema(v) for k, v in props.items() if k in (schema.get("required") or props)}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return "fake"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.record("GET", None, None)
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            return self.send_json(200, {"object": "list", "data": [], "models": []})
        self.send_json(404, {"error": {"code": 404, "message": f"not found: {self.path}", "status": "NOT_FOUND"}})

    def record(self, agent, step, body):
        srv = self.server
        n = next(srv.script.counter)
        with srv.log_lock:
            srv.log.write(json.dumps({"n": n, "agent": agent, "method": self.command, "path": self.path,
                                      "step": step, "body": body}) + "\n")
            srv.log.flush()
        return n

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        path = self.path.split("?")[0]
        if path.endswith("/responses"):
            return self.codex(body)
        if re.search(r"/models/[^/:]+:(streamGenerateContent|generateContent|countTokens)$", path):
            return self.gemini(body, path.rsplit(":", 1)[1])
        self.record(None, None, body)
        self.send_json(404, {"error": {"code": 404, "message": f"not found: {self.path}", "status": "NOT_FOUND"}})

    # -- Codex: the OpenAI Responses API, streamed
    def codex(self, body):
        script = self.server.script
        step, blocks = None, [{"text": script.side or script.default}]
        if body.get("tools"):
            step, blocks = script.pick(*codex_new_input(body))
        n = self.record("codex", step, body)
        items = []
        for k, b in enumerate(blocks):
            if "text" in b:
                items.append({"type": "message", "id": f"msg_fake_{n}_{k}", "status": "completed", "role": "assistant",
                              "content": [{"type": "output_text", "text": b["text"], "annotations": []}]})
            elif "reasoning" in b:
                items.append({"type": "reasoning", "id": f"rs_fake_{n}_{k}",
                              "summary": [{"type": "summary_text", "text": b["reasoning"]}]})
            else:
                t = b["tool_call"]
                item = {"type": "function_call", "id": f"fc_fake_{n}_{k}", "status": "completed",
                        "call_id": t.get("id", f"call_fake_{n}_{k}"), "name": t["name"],
                        "arguments": json.dumps(t.get("args", {}))}
                if t.get("namespace"):
                    item["namespace"] = t["namespace"]
                items.append(item)
        usage = {"input_tokens": max(1, len(json.dumps(body)) // 4), "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        response = {"id": f"resp_fake_{n}", "object": "response", "created_at": int(time.time()),
                    "status": "in_progress", "model": body.get("model", FAKE_CODEX_MODEL), "output": []}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        seq = itertools.count()

        def ev(data):
            data = dict(data, sequence_number=next(seq))
            self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())
        ev({"type": "response.created", "response": response})
        ev({"type": "response.in_progress", "response": response})
        for i, item in enumerate(items):
            if item["type"] == "message":
                text = item["content"][0]["text"]
                ev({"type": "response.output_item.added", "output_index": i, "item": dict(item, status="in_progress", content=[])})
                part = {"type": "output_text", "text": "", "annotations": []}
                ev({"type": "response.content_part.added", "item_id": item["id"], "output_index": i, "content_index": 0, "part": part})
                ev({"type": "response.output_text.delta", "item_id": item["id"], "output_index": i, "content_index": 0, "delta": text})
                ev({"type": "response.output_text.done", "item_id": item["id"], "output_index": i, "content_index": 0, "text": text})
                ev({"type": "response.content_part.done", "item_id": item["id"], "output_index": i, "content_index": 0,
                    "part": dict(part, text=text)})
            elif item["type"] == "reasoning":
                ev({"type": "response.output_item.added", "output_index": i, "item": dict(item, summary=[])})
                text = item["summary"][0]["text"]
                ev({"type": "response.reasoning_summary_part.added", "item_id": item["id"], "output_index": i,
                    "summary_index": 0, "part": {"type": "summary_text", "text": ""}})
                ev({"type": "response.reasoning_summary_text.delta", "item_id": item["id"], "output_index": i,
                    "summary_index": 0, "delta": text})
                ev({"type": "response.reasoning_summary_text.done", "item_id": item["id"], "output_index": i,
                    "summary_index": 0, "text": text})
                ev({"type": "response.reasoning_summary_part.done", "item_id": item["id"], "output_index": i,
                    "summary_index": 0, "part": {"type": "summary_text", "text": text}})
            else:
                ev({"type": "response.output_item.added", "output_index": i, "item": dict(item, status="in_progress", arguments="")})
                ev({"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": i, "delta": item["arguments"]})
                ev({"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": i, "arguments": item["arguments"]})
            ev({"type": "response.output_item.done", "output_index": i, "item": item})
        ev({"type": "response.completed", "response": dict(response, status="completed", output=items, usage=usage)})
        self.wfile.flush()

    # -- Gemini: generateContent and streamGenerateContent (alt=sse)
    def gemini(self, body, method):
        script = self.server.script
        if method == "countTokens":
            self.record("gemini", None, body)
            return self.send_json(200, {"totalTokens": max(1, len(json.dumps(body)) // 4)})
        step, blocks = None, [{"text": script.default}]
        tools = [f for t in body.get("tools") or [] for f in t.get("functionDeclarations") or []]
        schema = (body.get("generationConfig") or {}).get("responseJsonSchema") or \
            (body.get("generationConfig") or {}).get("responseSchema")
        if tools:
            step, blocks = script.pick(*gemini_new_input(body))
        elif schema:
            blocks = [{"text": json.dumps(fill_schema(schema))}]
        n = self.record("gemini", step, body)
        parts = []
        for k, b in enumerate(blocks):
            if "text" in b:
                parts.append({"text": b["text"]})
            elif "reasoning" in b:
                parts.append({"text": b["reasoning"], "thought": True})
            else:
                t = b["tool_call"]
                parts.append({"functionCall": {"name": t["name"], "args": t.get("args", {})}})
        prompt_tokens = max(1, len(json.dumps(body)) // 4)
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": 5,
                                   "totalTokenCount": prompt_tokens + 5},
                 "modelVersion": self.path.split("/models/")[1].split(":")[0], "responseId": f"fake-{n}"}
        if method == "generateContent":
            return self.send_json(200, chunk)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        self.wfile.flush()


class FakeModel:
    """The fake model on 127.0.0.1, in a thread of this process: `with FakeModel(scenario, log) as port:`."""

    def __init__(self, scenario, log_path):
        if isinstance(scenario, str):
            with open(scenario) as f:
                scenario = json.load(f)
        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.srv.daemon_threads = True
        self.srv.script, self.srv.log, self.srv.log_lock = Script(scenario or []), open(log_path, "a"), threading.Lock()
        self.thread = threading.Thread(target=self.srv.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self.srv.server_address[1]

    def __exit__(self, *exc):
        self.srv.shutdown()
        self.srv.server_close()
        self.srv.log.close()


# ---------------------------------------------------------------- running the clients

def clean_env(home, extra=None):
    """The caller's env minus anything that would point a client at a real account or the real home."""
    drop = ("OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "ANTHROPIC_", "CLAUDE", "OTEL_", "AWS_", "AZURE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and k not in ("CLOUD_SHELL", "XDG_CONFIG_HOME",
                                                                                         "XDG_DATA_HOME", "XDG_STATE_HOME")}
    tmp = os.path.join(home, "tmp")  # Gemini writes error reports into os.tmpdir()
    os.makedirs(tmp, exist_ok=True)
    env.update(HOME=home, TMPDIR=tmp, NO_PROXY=",".join(filter(None, ["127.0.0.1,localhost", os.environ.get("NO_PROXY")])),
               no_proxy="127.0.0.1,localhost", NO_COLOR="1")
    env.update(extra or {})
    return env


def in_git_repo(path):
    path = os.path.realpath(path)
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return True
        if os.path.dirname(path) == path:
            return False
        path = os.path.dirname(path)


def _prepare(home, cwd, git):
    home = home or tempfile.mkdtemp(prefix="om-agents-home-")
    cwd = cwd or os.path.join(home, "work")
    os.makedirs(cwd, exist_ok=True)
    if git and not in_git_repo(cwd) and shutil.which("git"):
        subprocess.run(["git", "init", "-q", cwd], check=True, capture_output=True)
    return os.path.realpath(home), os.path.realpath(cwd)


def _run(argv, cwd, env, timeout):
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout)
        return {"argv": argv, "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
        return {"argv": argv, "rc": None, "stdout": out, "stderr": f"timeout after {timeout}s"}


CODEX_KEY_ENV = "OM_FAKE_OPENAI_KEY"


def codex_provider_args(port):
    """`-c` overrides that point Codex at the fake model, leaving $CODEX_HOME/config.toml as the person's."""
    provider = (f'{{ name = "fake", base_url = "http://127.0.0.1:{port}/v1", env_key = "{CODEX_KEY_ENV}", '
                f'wire_api = "responses", request_max_retries = 0, stream_max_retries = 0 }}')
    return ["-c", f'model_provider="fake"', "-c", f"model_providers.fake={provider}", "-c", f'model="{FAKE_CODEX_MODEL}"']


def codex_env(home, extra=None):
    return clean_env(home, dict({CODEX_KEY_ENV: "sk-fake-e2e"}, **(extra or {})))


def codex_cli(home, *args, cwd=None, env=None, timeout=120):
    """Run `codex ARGS` (e.g. `mcp add ...`, `mcp list`) with the harness's HOME and environment."""
    return _run([find_codex(), *args], cwd or home, codex_env(home, env), timeout)


def codex_rollouts(home):
    return sorted(glob.glob(os.path.join(home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl")))


def codex_meta(path):
    """The session_meta payload of a rollout file (its first line), or None."""
    try:
        with open(path, encoding="utf-8") as f:
            first = json.loads(f.readline())
    except (OSError, ValueError):
        return None
    return first.get("payload") if first.get("type") == "session_meta" else None


def is_subagent(meta):
    return bool(meta.get("parent_thread_id") or meta.get("thread_source") == "subagent"
                or isinstance(meta.get("source"), dict) and "subagent" in meta["source"])


def run_codex(scenario, prompts, home=None, cwd=None, config=None, exec_args=(), env=None, log=None,
              timeout=180, git=True):
    """One Codex session of len(prompts) turns: `codex exec PROMPT`, then `codex exec resume ID PROMPT`.

    `config`: TOML text written to $HOME/.codex/config.toml (None leaves the file as it is).
    Returns {"home", "cwd", "session_id", "rollout", "rollouts", "log", "turns": [{"argv","rc","stdout","stderr"}]}.
    """
    home, cwd = _prepare(home, cwd, git)
    os.makedirs(os.path.join(home, ".codex"), exist_ok=True)
    if config is not None:
        with open(os.path.join(home, ".codex", "config.toml"), "w") as f:
            f.write(config)
    log = log or os.path.join(home, "requests.jsonl")
    codex = find_codex()
    before = set(codex_rollouts(home))
    turns, session_id = [], None
    with FakeModel(scenario, log) as port:
        child_env = codex_env(home, env)
        for i, prompt in enumerate(prompts):
            head = [codex, "exec"] + codex_provider_args(port) + list(exec_args)
            argv = head + (["resume", session_id, prompt] if i else [prompt])
            turns.append(_run(argv, cwd, child_env, timeout))
            if i == 0:
                metas = [codex_meta(p) for p in codex_rollouts(home) if p not in before]
                top = sorted((m.get("timestamp", ""), m["id"]) for m in metas if m and not is_subagent(m))
                if not top:
                    break
                session_id = top[0][1]
            if turns[-1]["rc"] is None:
                break
    rollouts = [p for p in codex_rollouts(home) if p not in before]
    main = [p for p in rollouts if session_id and session_id in os.path.basename(p)]
    return {"home": home, "cwd": cwd, "session_id": session_id, "rollout": main[0] if main else None,
            "rollouts": rollouts, "log": log, "turns": turns}


GEMINI_BASE_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},  # the choice the interactive auth dialog saves
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
}


def _merge(base, over):
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def gemini_env(home, port=None, extra=None):
    env = {"GEMINI_API_KEY": "fake-gemini-key"}
    if port:
        env["GOOGLE_GEMINI_BASE_URL"] = f"http://127.0.0.1:{port}"
    return clean_env(home, dict(env, **(extra or {})))


def gemini_cli(home, *args, cwd=None, env=None, timeout=120):
    """Run `gemini ARGS` (e.g. `mcp add ...`, `mcp list`) with the harness's HOME and environment."""
    return _run(find_gemini() + list(args), cwd or home, gemini_env(home, extra=env), timeout)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def gemini_settings(home, settings=None, trust=()):
    """Merge the harness's needs (API-key auth, no update check, no usage statistics) and `settings`
    into $HOME/.gemini/settings.json, keeping what is there; mark `trust` folders trusted."""
    gdir = os.path.join(home, ".gemini")
    os.makedirs(gdir, exist_ok=True)
    path = os.path.join(gdir, "settings.json")
    current = read_json(path) if os.path.exists(path) else {}
    with open(path, "w") as f:
        json.dump(_merge(_merge(GEMINI_BASE_SETTINGS, current), settings or {}), f, indent=2)
    if trust:
        tpath = os.path.join(gdir, "trustedFolders.json")
        folders = read_json(tpath) if os.path.exists(tpath) else {}
        folders.update({t: "TRUST_FOLDER" for t in trust})
        with open(tpath, "w") as f:
            json.dump(folders, f, indent=2)


def gemini_chats(home):
    return sorted(glob.glob(os.path.join(home, ".gemini", "tmp", "*", "chats", "session-*.json*")) +
                  glob.glob(os.path.join(home, ".gemini", "tmp", "*", "chats", "*", "*.json*")))


def gemini_first_record(path):
    """The metadata of a chat file: the first line of a .jsonl, the whole record of a legacy .json."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f) if path.endswith(".json") else json.loads(f.readline())
    except (OSError, ValueError):
        return None


def run_gemini(scenario, prompts, home=None, cwd=None, settings=None, args=(), env=None, log=None,
               timeout=180, git=True, trust=True, resume=None, version=GEMINI_VERSION, session_flag=True):
    """One Gemini CLI session of len(prompts) turns: `gemini -p PROMPT --session-id UUID`, then
    `gemini -p PROMPT --resume UUID`. `resume`: continue that earlier session from the first prompt on.

    Returns {"home", "cwd", "session_id", "chat", "chats", "log", "turns": [...]}."""
    home, cwd = _prepare(home, cwd, git)
    gemini_settings(home, settings, trust=[cwd] if trust else ())
    log = log or os.path.join(home, "requests.jsonl")
    gemini = find_gemini(version)
    before = {p: os.path.getsize(p) for p in gemini_chats(home)}
    # --session-id came after 0.38.2; without it the first turn starts a session and the next ones
    # continue the newest (`--resume latest`).
    session_id = resume or (str(uuid.uuid4()) if session_flag else None)
    turns = []
    with FakeModel(scenario, log) as port:
        child_env = gemini_env(home, port, env)
        for i, prompt in enumerate(prompts):
            # The prompt goes right after -p: array options (--allowed-tools ...) would swallow it.
            if i or resume:
                how = ["--resume", session_id if session_flag else "latest"]
            else:
                how = ["--session-id", session_id] if session_flag else []
            turns.append(_run(gemini + ["-p", prompt] + how + list(args), cwd, child_env, timeout))
            if turns[-1]["rc"] is None:
                break
    chats = [p for p in gemini_chats(home) if before.get(p) != os.path.getsize(p)]
    if session_id is None:
        firsts = [gemini_first_record(p) for p in chats]
        session_id = next((f.get("sessionId") for f in firsts if f and f.get("kind") != "subagent"), None)
    main = [p for p in chats if session_id and session_id[:8] in os.path.basename(p)]
    return {"home": home, "cwd": cwd, "session_id": session_id, "chat": main[0] if main else None,
            "chats": chats, "log": log, "turns": turns}


# ---------------------------------------------------------------- CLI

def main(argv=None):
    ap = argparse.ArgumentParser(description="Run Codex CLI or Gemini CLI against the scripted fake model.")
    ap.add_argument("agent", choices=["codex", "gemini", "record"])
    ap.add_argument("what", nargs="?", help="record: codex or gemini")
    ap.add_argument("--which", action="store_true", help="print the binary (installing it if missing)")
    ap.add_argument("--scenario")
    ap.add_argument("--prompt", action="append", default=[], help="repeat for follow-up turns")
    ap.add_argument("--home")
    ap.add_argument("--cwd")
    ap.add_argument("--config", help="codex: a config.toml to install as $HOME/.codex/config.toml")
    ap.add_argument("--settings", help="gemini: settings.json to merge into $HOME/.gemini/settings.json")
    ap.add_argument("--env", action="append", default=[], metavar="K=V")
    ap.add_argument("--timeout", type=int, default=180)
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    a.extra = extra  # after --: extra arguments for `codex exec` or `gemini`
    if a.agent == "record":
        from tests import agents_record
        return agents_record.main([a.what] if a.what else [])
    if a.which:
        print(find_codex() if a.agent == "codex" else " ".join(find_gemini()))
        return 0
    if not a.prompt:
        ap.error("--prompt is required")
    env = dict(kv.split("=", 1) for kv in a.env)
    if a.agent == "codex":
        config = open(a.config).read() if a.config else None
        res = run_codex(a.scenario, a.prompt, home=a.home, cwd=a.cwd, config=config, exec_args=a.extra, env=env,
                        timeout=a.timeout)
    else:
        settings = json.load(open(a.settings)) if a.settings else None
        res = run_gemini(a.scenario, a.prompt, home=a.home, cwd=a.cwd, settings=settings, args=a.extra, env=env,
                         timeout=a.timeout)
    print(json.dumps(res, indent=1))
    return 0 if all(t["rc"] == 0 for t in res["turns"]) else 1


if __name__ == "__main__":
    sys.exit(main())
