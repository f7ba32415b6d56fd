"""The other agents as setup, doctor and render meet them: OpenAI Codex CLI and Google Gemini CLI.

Which are installed here; openmemory's MCP server in each one's configuration (Codex's
`config.toml`, Gemini's `settings.json` and a policy file that allows its tools by name), as
text or data, and read back. Measured with codex-cli 0.171.0 and gemini-cli 0.61.0
(tests/data/agents/: `mcp_recall.config.toml`, `mcp_recall.settings.json`, `mcp_recall.policy.toml`;
without the allowing entry neither lets its model call `recall` in a non-interactive run,
`mcp_denied.*`). Pure but for `found` and the readers; files.py writes, setup decides.
"""
import json
import re
import shutil

from . import paths

CODEX, GEMINI = "codex", "gemini"
NAME = "openmemory"
TOOLS = ("recall", "remember", "show")      # openmemory's MCP tools, allowed by name in each agent
MARK = "# openmemory: its MCP server, its tools allowed by name (`openmemory setup --undo` removes this)"


def found() -> list[str]:
    """The other agents this person has: the program on PATH, or its folder in their home."""
    out = []
    if shutil.which("codex") or paths.codex_home().is_dir():
        out.append(CODEX)
    if shutil.which("gemini") or paths.gemini_dir().is_dir():
        out.append(GEMINI)
    return out


def read_text(path) -> str | None:
    """A configuration file's text, or None when there is none (or it is not text)."""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# -- Codex: config.toml ------------------------------------------------------------------------

# A table of openmemory's server, however spelled: [mcp_servers.openmemory], [mcp_servers."openmemory".env]
_CODEX_TABLE = re.compile(r'^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:openmemory|"openmemory")[ \t]*[\].]', re.M)
# mcp_servers as a key of the root (an inline table, or dotted keys): a table header after it is no TOML
_CODEX_INLINE = re.compile(r"^[ \t]*mcp_servers[ \t]*[.=]", re.M)


def _toml(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def codex_block(server: dict) -> str:
    """openmemory's server for Codex as TOML tables, each tool allowed by name (approval_mode =
    "approve": without it `codex exec` refuses the call, as its approval policy is never)."""
    lines = ["", MARK, f"[mcp_servers.{NAME}]", f"command = {_toml(server['command'])}",
             f"args = [{', '.join(_toml(a) for a in server['args'])}]"]
    if server.get("env"):
        lines += ["", f"[mcp_servers.{NAME}.env]"] + [f"{k} = {_toml(v)}" for k, v in server["env"].items()]
    for tool in TOOLS:
        lines += ["", f"[mcp_servers.{NAME}.tools.{tool}]", 'approval_mode = "approve"']
    return "\n".join(lines) + "\n"


def codex_appended(text: str | None, server: dict) -> str:
    """What setup appends to config.toml's text: the block, after a line end if the file lacks one."""
    block = codex_block(server)
    return block if not text or text.endswith("\n") else "\n" + block


def codex_has_server(text: str | None) -> bool:
    """Whether config.toml already defines a server named openmemory (a second table would break it)."""
    return bool(text) and (_CODEX_TABLE.search(text) is not None or re.search(
        r'^[ \t]*mcp_servers[ \t]*\.[ \t]*"?openmemory"?[ \t]*[.=]', text, re.M) is not None)


def codex_unreadable(text: str | None) -> str:
    """tomllib's word on why this config.toml is no TOML ("" when it is, or tomllib is not here to
    tell): codex-cli 0.171.0 does not start on such a file, so no server in it ever runs."""
    if not text:
        return ""
    try:
        import tomllib
    except ImportError:
        return ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return str(e)
    return ""


def codex_switched_off(server: dict | None, tool: str = "recall") -> str:
    """How config.toml keeps Codex from offering a tool of openmemory's server ("" when it does not):
    the server's `enabled = false`, its `disabled_tools`, or an `enabled_tools` list without it
    (`codex mcp list` says `disabled`)."""
    if not server:
        return ""
    if server.get("enabled") is False:
        return "the server is switched off there (`enabled = false`)"
    if isinstance(server.get("disabled_tools"), list) and tool in server["disabled_tools"]:
        return f"its `disabled_tools` names `{tool}`"
    if isinstance(server.get("enabled_tools"), list) and tool not in server["enabled_tools"]:
        return f"its `enabled_tools` leaves `{tool}` out"
    return ""


def codex_cannot_take(text: str | None) -> str:
    """Why a block cannot be appended to this config.toml ("" when it can)."""
    if codex_unreadable(text):
        return f"it is not valid TOML ({codex_unreadable(text)}), so Codex does not start"
    if text and _CODEX_INLINE.search(text):
        return "it sets mcp_servers as a key of its root, where a table of it cannot follow"
    return ""


_TOML_HEADER = re.compile(r'^[ \t]*\[\[?[ \t]*([^\]]+?)[ \t]*\]\]?[ \t]*(?:#.*)?$')


def codex_without_server(text: str) -> str | None:
    """config.toml's text without openmemory's tables, wherever Codex moved them (`codex mcp add`
    rewrites the file: openmemory's tables go up beside the other servers, setup's comment line
    is dropped); the person's lines, comments included, kept. None when that cannot be done
    safely: without tomllib to check it, or when what is left is not the same file less openmemory."""
    before = _toml_load(text)
    if before is None or not isinstance(before.get("mcp_servers"), dict) or NAME not in before["mcp_servers"]:
        return None
    out, ours = [], False
    for line in text.splitlines(keepends=True):
        header = _TOML_HEADER.match(line)
        if header:
            name = header.group(1).replace('"', "").replace(" ", "").replace("\t", "")
            ours = name == f"mcp_servers.{NAME}" or name.startswith(f"mcp_servers.{NAME}.")
            if ours:
                continue
        if line.strip() == MARK:
            continue
        if ours and (not line.strip() or not line.lstrip().startswith("#")):
            continue        # openmemory's keys and the blank lines among them; a comment stays
        out.append(line)
    rest = "".join(out)
    after = _toml_load(rest)
    want = json.loads(json.dumps(before))
    del want["mcp_servers"][NAME]
    if not want["mcp_servers"] and "mcp_servers" not in (after or {}):
        del want["mcp_servers"]
    return rest if after == want else None


def codex_server(text: str | None) -> dict | None:
    """openmemory's server as config.toml defines it ({command, args, env, approvals}), or None."""
    data = _toml_load(text)
    if data is not None:
        server = data.get("mcp_servers", {}).get(NAME) if isinstance(data.get("mcp_servers"), dict) else None
        if not isinstance(server, dict):
            return None
        tools = server.get("tools") if isinstance(server.get("tools"), dict) else {}
        return {"command": server.get("command"), "args": list(server.get("args") or []),
                "env": dict(server.get("env") or {}),
                "approvals": {t: v.get("approval_mode") for t, v in tools.items() if isinstance(v, dict)},
                **{k: server[k] for k in ("enabled", "enabled_tools", "disabled_tools") if k in server}}
    return _codex_server_by_lines(text) if codex_has_server(text) else None


def _toml_load(text):
    """config.toml parsed (tomllib, Python 3.11 on), or None where it cannot be."""
    if text is None:
        return None
    try:
        import tomllib
    except ImportError:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _codex_server_by_lines(text: str) -> dict | None:
    """Without tomllib: openmemory's tables read line by line, as setup writes them."""
    out, table = {"command": None, "args": [], "env": {}, "approvals": {}}, None
    for line in text.splitlines():
        header = re.match(r'^\s*\[\s*([^\]]+?)\s*\]\s*$', line)
        if header:
            table = header.group(1).replace('"', "")
            continue
        pair = re.match(r'^\s*([A-Za-z0-9_-]+)\s*=\s*(.+?)\s*$', line)
        if not pair or not table or not table.startswith(f"mcp_servers.{NAME}"):
            continue
        try:
            value = json.loads(pair.group(2))
        except ValueError:
            continue
        if table == f"mcp_servers.{NAME}" and pair.group(1) in ("command", "args", "enabled", "enabled_tools",
                                                               "disabled_tools"):
            out[pair.group(1)] = value
        elif table == f"mcp_servers.{NAME}.env":
            out["env"][pair.group(1)] = value
        elif table.startswith(f"mcp_servers.{NAME}.tools.") and pair.group(1) == "approval_mode":
            out["approvals"][table.rsplit(".", 1)[1]] = value
    return out if out["command"] else None


# -- Gemini: settings.json and a policy file --------------------------------------------------

# Variables Gemini drops from a server's `env` (0.61.0, BLOCKED_EXECUTION_ENVS: "Blocked dangerous
# environment variable override for MCP server"): passed through env(1) on the command line instead.
GEMINI_BLOCKED_ENV = ("PYTHONPATH",)


def without_json_comments(text: str) -> str:
    """settings.json's text with its // and /* */ comments blanked out, as gemini-cli 0.61.0 reads
    it (strip-json-comments before JSON.parse); line ends and every other byte kept, so a parse
    error still names the person's line."""
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\r\n]", " ", text[i:end]))
            i = end
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def gemini_entry(server: dict) -> dict:
    """openmemory's server as Gemini's settings.json names one (`gemini mcp add` writes command,
    args). A checkout's PYTHONPATH, which Gemini would drop, goes through /usr/bin/env."""
    env = dict(server.get("env") or {})
    through = [f"{k}={env.pop(k)}" for k in GEMINI_BLOCKED_ENV if k in env]
    entry = {"command": "/usr/bin/env", "args": [*through, server["command"], *server["args"]]} if through \
        else {"command": server["command"], "args": list(server["args"])}
    if env:
        entry["env"] = env
    return entry


def gemini_server(settings: dict) -> dict | None:
    servers = settings.get("mcpServers") if isinstance(settings, dict) else None
    server = servers.get(NAME) if isinstance(servers, dict) else None
    return server if isinstance(server, dict) else None


def gemini_blocked(settings: dict) -> str:
    """Why Gemini will not offer openmemory's `recall` ("" when it will): the entry's `excludeTools`
    names it or its `includeTools` leaves it out (0.61.0's isEnabled), or settings.json's
    `mcp.excluded` names the server or `mcp.allowed` is a list without it (listed as Blocked)."""
    server = gemini_server(settings) or {}
    if isinstance(server.get("excludeTools"), list) and "recall" in server["excludeTools"]:
        return f"its `{NAME}` entry's \"excludeTools\" names `recall`"
    if isinstance(server.get("includeTools"), list) and not any(
            isinstance(t, str) and (t == "recall" or t.startswith("recall(")) for t in server["includeTools"]):
        return f"its `{NAME}` entry's \"includeTools\" leaves `recall` out"
    mcp = settings.get("mcp") if isinstance(settings, dict) else None
    if not isinstance(mcp, dict):
        return ""
    if isinstance(mcp.get("excluded"), list) and NAME in mcp["excluded"]:
        return f'its "mcp": {{"excluded": [...]}} names `{NAME}`'
    if isinstance(mcp.get("allowed"), list) and NAME not in mcp["allowed"]:
        return f'its "mcp": {{"allowed": [...]}} lists the servers Gemini may start, and `{NAME}` is not among them'
    return ""


def with_gemini_server(settings: dict, server: dict) -> dict:
    """settings with mcpServers.openmemory set (every other key kept, in its order)."""
    out = json.loads(json.dumps(settings))
    servers = out.get("mcpServers")
    if not isinstance(servers, dict):
        servers = out["mcpServers"] = {}
    servers[NAME] = gemini_entry(server)
    return out


def without_gemini_server(settings: dict) -> dict:
    out = json.loads(json.dumps(settings))
    servers = out.get("mcpServers")
    if isinstance(servers, dict) and NAME in servers:
        del servers[NAME]
        if not servers:
            del out["mcpServers"]
    return out


def gemini_policy() -> str:
    """The policy file that lets Gemini's model call openmemory's tools without asking (in `-p`
    mode a tool not allowed is not even offered)."""
    rules = [MARK.replace("this)", "this file)")]
    for tool in TOOLS:
        # The full name, mcp_<server>_<tool>, not mcpName with a bare toolName: 0.61.0 checks a bare
        # name against its own tools and warns at every start about one a typo away ("show" is
        # three edits from "glob": 'Unrecognized tool name "show"'), though the rule works.
        rules += ["", "[[rule]]", f'toolName = "{GEMINI_PREFIX}{tool}"', 'decision = "allow"', "priority = 100"]
    return "\n".join(rules) + "\n"


GEMINI_PREFIX = f"mcp_{NAME}_"      # how Gemini names an MCP server's tool: mcp_<server>_<tool>


def gemini_allowed(policy: str | None) -> set:
    """The openmemory tools a policy file's rules allow by name: `mcpName = "openmemory"` with a
    tool's name (or none: all of them), or the full name `mcp_openmemory_<tool>` (or `_*`)."""
    allowed = set()
    for rule in re.split(r"^\s*\[\[rule\]\]\s*$", policy or "", flags=re.M)[1:]:
        if not re.search(r'^\s*decision\s*=\s*"allow"\s*$', rule, re.M):
            continue
        found = re.search(r'^\s*toolName\s*=\s*"([^"]+)"\s*$', rule, re.M)
        tool = found.group(1) if found else None
        if re.search(rf'^\s*mcpName\s*=\s*"{NAME}"\s*$', rule, re.M):
            allowed |= {tool} if tool else set(TOOLS)
        elif tool and tool.startswith(GEMINI_PREFIX) and not re.search(r"^\s*mcpName\s*=", rule, re.M):
            name = tool[len(GEMINI_PREFIX):]
            allowed |= set(TOOLS) if name == "*" else {name}
    return allowed


# -- where each agent loads instructions at start (render writes a section of each) ------------

def gemini_projects() -> dict:
    """{project root: Gemini's short id} from ~/.gemini/projects.json (0.61.0's registry)."""
    try:
        known = json.loads(paths.gemini_dir().joinpath("projects.json").read_text("utf-8")).get("projects", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return {root: name for root, name in known.items() if isinstance(root, str) and isinstance(name, str)
            and re.fullmatch(r"[A-Za-z0-9._-]+", name) and name not in (".", "..")}


def gemini_private_memory(short_id: str):
    """A project's private memory index Gemini loads at start (not in the repository):
    <gemini dir>/tmp/<id>/memory/MEMORY.md."""
    return paths.gemini_chats_root() / short_id / "memory" / "MEMORY.md"
