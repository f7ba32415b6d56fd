"""Google Gemini CLI chats -> the same `Session` of `Turn`s transcripts.py makes of Claude Code's.

A chat is `<gemini dir>/tmp/<project id>/chats/session-<time>-<id8>.jsonl` (0.39 on; measured
with gemini-cli 0.61.0, tests/data/agents/gemini/) or, before, one JSON document `.json` (0.38.2).
The `.jsonl` has four kinds of line: a metadata line (again at each resume), messages by `id`
(one written again once its tool calls ran: the last wins), `{"$set": ...}` (`messages` replaces
the list: a checkpoint) and `{"$rewindTo": id}` (that message and all after it are gone, from
memory too). PROTOCOL.md, "Read: Gemini CLI chats". Tool calls are told in Claude Code's words
(`run_shell_command` is `Bash`, its exit code read from the wrapper Gemini puts around its
output), so every later stage reads them unchanged. The project's folder is not in a chat:
`project_root` finds it beside the chat (`.project_root`) or in `projects.json`. Nothing here
raises on bad input.
"""
import hashlib
import json
import os
import re

from .shorten import wellformed
from .transcripts import Session, ToolCall, Turn, _ends, _str, jsonl_record, with_subagents

AGENT = "gemini"
SNIFF_LINES = 50
# The harness's first user message of every run (date, OS, workspace, folder listing).
_CONTEXT = "<session_context>"
# What a hook gave Gemini CLI to tell its model (SessionStart's and BeforeAgent's additionalContext),
# which it wraps in these tags inside the person's message (0.61.0: SessionStart's before the
# words, in displayContent too; BeforeAgent's as a part after them), or sends as a message of its
# own (SessionStart in an interactive session). Gemini's own resume skips a message that opens
# with one. tests/data/agents/gemini/hook_context.jsonl.
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>", re.S)
# What Gemini CLI sends in IDE mode before the person's turn, as a user message of its own with no
# displayContent (its client's getIdeContextParts, 0.61.0 bundle): the open files, the cursor, the
# selected text. The editor's, never the person's words.
_IDE_CONTEXT = ("Here is the user's editor context as a JSON object. This is for your information only.",
                "Here is a summary of changes in the user's editor context, in JSON format. "
                "This is for your information only.")
# What Gemini CLI sends after the typed words when they name a file (`@README.md`): the file's
# text, then "--- End of content ---". A message recorded without its displayContent (older
# versions) holds it: a file's words, anyone's, never the person's.
_REFERENCED = "--- Content from referenced files ---"
# run_shell_command's output, wrapped by Gemini: "Output: ...\nExit Code: N\n...Process Group PGID: N";
# no Exit Code line when it is 0. Read from the end, where Gemini writes it after the command's own text.
_SHELL_END = re.compile(r"\nExit Code: (-?\d+)\n(?:(?:Signal|Background PIDs|Error): [^\n]*\n)*"
                        r"Process Group PGID: [^\n]*\n?(?:</untrusted_context>)?\s*$")
_WRAPPER = re.compile(r"^\s*<untrusted_context>\n?|\n?</untrusted_context>\s*$")
_TRAILER = re.compile(r"\n(?:Exit Code|Signal|Background PIDs|Process Group PGID): [^\n]*(?=\n|$)")
# Gemini's reason when the person declines a tool's confirmation (a `cancelled` call, its error
# "[Operation Cancelled] Reason: User denied execution."); an Esc while it runs is "User cancelled
# tool execution." [read: the 0.61.0 bundle's scheduler; older versions said "User did not allow tool call"]
_DECLINED = ("User denied execution", "User did not allow tool call")
_TOOLS = {"run_shell_command": "Bash", "replace": "Edit", "write_file": "Write", "read_file": "Read"}


def parse(path) -> Session:
    """Read one chat; never raises on its content (an unreadable file raises OSError)."""
    with open(path, "rb") as f:
        return parse_lines(f, str(path))


def project_root(path) -> str:
    """The folder a chat's project is: `.project_root` in its tmp/<id>/, else projects.json's
    entry for that id; "" when neither says."""
    project = os.path.dirname(os.path.dirname(os.fspath(path)))      # tmp/<id>
    try:
        with open(os.path.join(project, ".project_root"), encoding="utf-8") as f:
            root = f.read().strip()
        if root:
            return root
    except (OSError, UnicodeDecodeError):
        pass
    short = os.path.basename(project)
    try:
        with open(os.path.join(os.path.dirname(os.path.dirname(project)), "projects.json"), encoding="utf-8") as f:
            known = json.load(f).get("projects", {})
        return next((root for root, name in known.items() if name == short and isinstance(root, str)), "")
    except (OSError, ValueError, AttributeError):
        return ""


def working_folder(lines, path: str = "") -> str:
    """The session's working folder (its project's root; lines are not needed for it)."""
    return project_root(path) if path else ""


def parse_lines(lines, path: str = "", kept_out=None, subagent: bool = False) -> Session:
    """Build a Session from a chat's lines (bytes or str), or a legacy `.json` chat's.

    subagent: the chat is a subagent's, read for the session that started it (its calls).
    kept_out: as transcripts.parse_lines; the folder is known before any line is read."""
    s = Session(path=path, agent=AGENT)
    s.cwd = project_root(path) if path else ""
    if kept_out is not None:
        s.kept_out = kept_out(s.cwd) or ""
        if s.kept_out:
            return s
    meta, order, rich = {}, [], {}      # the chat's metadata; message ids in order; id -> its fullest record
    sniffed = 0
    if path.endswith(".json"):          # before 0.39: one JSON document, rewritten whole
        text = "".join(raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw for raw in lines)
        try:
            doc = wellformed(json.loads(text))
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list) and "sessionId" in doc:
            sniffed = None
            s.records = 1 + len(doc["messages"])
            _apply({k: v for k, v in doc.items() if k != "messages"}, meta, order, rich)
            _apply({"$set": {"messages": doc["messages"]}}, meta, order, rich)
        lines = ()
    for raw in lines:
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", errors="replace")
        if not raw.strip():
            continue
        try:
            rec = jsonl_record(raw.strip())
        except (ValueError, RecursionError):
            rec = None
        if not isinstance(rec, dict):
            s.skipped += 1
            if sniffed is not None:
                sniffed += 1
                if sniffed > SNIFF_LINES:
                    break
            continue
        if sniffed is not None:
            if not ("sessionId" in rec or "$set" in rec or "$rewindTo" in rec or ("id" in rec and "type" in rec)):
                sniffed += 1
                if sniffed > SNIFF_LINES:
                    break
                continue
            sniffed = None
        s.records += 1
        _apply(rec, meta, order, rich)
    s.not_transcript = sniffed is not None
    s.id = _str(meta.get("sessionId")) or _stem(path)
    s.automated = meta.get("kind") == "subagent"
    if not s.cwd:
        dirs = meta.get("directories")
        s.cwd = dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else \
            _hashed_root(path, meta.get("projectHash")) or _workspace(order, rich)
    for mid in order:
        try:
            _turn(s, rich[mid])
        except (AttributeError, TypeError, KeyError, ValueError):
            s.skipped += 1
    if subagent:
        s.turns = [t for t in s.turns if t.role == "assistant"]
        s.agent_id = s.id
    elif s.automated:
        s.turns = []        # a subagent's own chat: read through the session that started it
    return s


_WORKSPACE = re.compile(r"\*\*Workspace Directories:\*\*\n\s*- (/[^\n]*)")


def _workspace(order: list, rich: dict) -> str:
    """The first workspace folder the harness's session context names (a chat moved from its project)."""
    for mid in order:
        m = rich.get(mid)
        text = _parts_text(m.get("content")) if isinstance(m, dict) and m.get("type") == "user" else ""
        if text.startswith(_CONTEXT):
            found = _WORKSPACE.search(text)
            return found.group(1).strip() if found else ""
    return ""


def _apply(rec: dict, meta: dict, order: list, rich: dict) -> None:
    """One line's change to the chat: metadata, a message, a $set or a $rewindTo."""
    if "$rewindTo" in rec:
        target = rec["$rewindTo"]
        cut = order.index(target) if target in order else 0
        for mid in order[cut:]:
            rich.pop(mid, None)         # rewound: gone from openmemory too
        del order[cut:]
        return
    if "$set" in rec:
        change = rec["$set"] if isinstance(rec["$set"], dict) else {}
        for key, value in change.items():
            if key == "messages" and isinstance(value, list):
                # A checkpoint: the list is the chat now. At a resume it is rebuilt from what the
                # model was sent (calls flattened, every time the resume's): a message already
                # read keeps its own record, with its calls, statuses and time. A person's
                # message the resume passed over (one a hook's context opens) stays where it was.
                order.clear()
                for m in value:
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        if m["id"] not in order:
                            order.append(m["id"])
                        rich.setdefault(m["id"], m)
                _keep_passed_over(order, rich)
            elif key != "messages":
                meta[key] = value
        return
    if isinstance(rec.get("id"), str) and isinstance(rec.get("type"), str):
        mid = rec["id"]
        if mid not in order:
            order.append(mid)
        old = rich.get(mid)
        # The same id again: its tool calls have run (the last wins), unless it is a checkpoint's
        # flattened copy, which never replaces a record that has its calls.
        if old is None or rec.get("toolCalls") is not None or old.get("toolCalls") is None:
            rich[mid] = rec
        return
    if "sessionId" in rec:
        meta.update({k: v for k, v in rec.items() if k != "messages"})


def _passed_over_at_resume(m) -> bool:
    """Whether Gemini's resume leaves a user message out of the history it rebuilds though the
    person typed it: its content opens with a hook's context (0.61.0's isIgnoredUserContent)."""
    return isinstance(m, dict) and m.get("type") == "user" and \
        _parts_text(m.get("content")).strip().startswith("<hook_context>") and bool(_person_text(m))


def _keep_passed_over(order: list, rich: dict) -> None:
    """Put back into a checkpoint's order the messages read before it that its resume passed over,
    each where it was first read (`rich` keeps the order messages were first read in)."""
    rank = {mid: n for n, mid in enumerate(rich)}
    now = set(order)
    for mid in rich:
        if mid in now or not _passed_over_at_resume(rich[mid]):
            continue
        after = next((n for n, m in enumerate(order) if rank.get(m, -1) > rank[mid]), len(order))
        order.insert(after, mid)
        now.add(mid)


def _turn(s: Session, m: dict) -> None:
    kind, at, mid = m.get("type"), _str(m.get("timestamp")), m["id"]
    if at:
        s.started = min(s.started or at, at)
        s.ended = max(s.ended, at)
    if kind == "user":
        text = _person_text(m)
        if text:
            s.turns.append(Turn("user", text, at, mid, "prompt"))
    elif kind == "gemini":
        text = _parts_text(m.get("content")).strip()
        calls = [_call(c, at, mid, n) for n, c in enumerate(m.get("toolCalls") or []) if isinstance(c, dict)]
        if text or calls:
            s.turns.append(Turn("assistant", text, at, mid, "model", calls))


def _person_text(m: dict) -> str:
    """What the person typed: the text parts of a user message (what they saw typed, where Gemini
    keeps it apart), never a tool's response, the harness's session context, a hook's context or
    the editor's."""
    content = m.get("content")
    if isinstance(content, list) and any(isinstance(p, dict) and "functionResponse" in p for p in content):
        return ""       # a tool's result, sent to the model as a user message
    text = _parts_text(m.get("displayContent")) or _parts_text(content).split(_REFERENCED, 1)[0]
    text = _HOOK_CONTEXT.sub("", text).strip()
    return "" if text.startswith(_CONTEXT) or text.startswith(_IDE_CONTEXT) else text


def _parts_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _call(c: dict, at: str, mid: str, n: int) -> ToolCall:
    """A tool call in Claude Code's words, with its result and how it ended."""
    name, args = _str(c.get("name")), c.get("args") if isinstance(c.get("args"), dict) else {}
    cid = _str(c.get("id")) or f"{mid}:{n}"
    when = _str(c.get("timestamp")) or at
    if name in _TOOLS:
        mapped = _TOOLS[name]
        if mapped == "Bash":
            args = {"command": _str(args.get("command"))}
        else:
            args = {"file_path": _str(args.get("file_path") or args.get("absolute_path") or args.get("path"))}
        name = mapped
    elif name.startswith("mcp_openmemory_"):
        name = "mcp__openmemory__" + name[len("mcp_openmemory_"):]     # openmemory's own: not evidence
    call = ToolCall(cid, name or "?", args, when)
    call.result_uuid = f"gemini:{cid}"  # its identity, the same in every copy of the chat
    call.result_at = when
    output, error = _response(c.get("result"))
    status = c.get("status")
    if status == "cancelled":
        if any(d in (error or "") or d in _str(c.get("resultDisplay")) for d in _DECLINED):
            call.rejected, call.is_error = True, True
        else:
            call.interrupted = True
        call.result = _ends(error or output)
        return call
    if error is not None or status == "error":
        call.is_error = True
        call.result = _ends(error or output)
        return call
    if name == "Bash":
        found = _SHELL_END.search(output)
        body = _TRAILER.sub("", _WRAPPER.sub("", output[:found.start()] if found else output))
        body = body[len("Output: "):] if body.startswith("Output: ") else body
        if found and int(found.group(1)) != 0:
            call.is_error = True
            call.result = _ends(f"Exit code {found.group(1)}\n{body}")
            return call
        output = body
    call.result = _ends(output)
    return call


def _response(result):
    """(output, error) of a tool call's recorded result: the functionResponse's `output`, and
    its `error` or None."""
    output, error = "", None
    if isinstance(result, list):
        for part in result:
            response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
            if isinstance(response, dict):
                if isinstance(response.get("error"), str):
                    error = response["error"]
                if isinstance(response.get("output"), str):
                    output = response["output"]
    elif isinstance(result, str):
        output = result
    return output, error


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def project_hash(root: str) -> str:
    """Gemini's projectHash of a folder: SHA-256 of its path (packages/core/src/utils/paths.ts)."""
    return hashlib.sha256(root.encode("utf-8")).hexdigest()


def _hashed_root(path: str, wanted) -> str:
    """The folder projects.json names whose hash is the chat's projectHash (a chat in a folder
    named by the hash, as before the short ids); "" when none is."""
    if not path or not isinstance(wanted, str):
        return ""
    registry = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.fspath(path))))),
                            "projects.json")
    try:
        with open(registry, encoding="utf-8") as f:
            roots = json.load(f).get("projects", {})
    except (OSError, ValueError, AttributeError):
        return ""
    return next((root for root in roots if isinstance(root, str) and project_hash(root) == wanted), "")


def subagent_paths(session: Session) -> list:
    """The chats of a session's subagents: chats/<session id>/*.jsonl beside its own (sorted)."""
    if not session.path or not session.id:
        return []
    folder = os.path.join(os.path.dirname(session.path), session.id)
    try:
        return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".jsonl"))
    except OSError:
        return []


def read_subagents(session: Session) -> Session:
    """The session with its subagents' chats read into `session.subagents`: their calls (a
    failure in one is the session's), none of their words (a subagent's task is its parent's)."""
    return with_subagents(session, subagent_paths(session), _read_subagent)


def _read_subagent(path: str) -> Session:
    with open(path, "rb") as f:
        return parse_lines(f, path, subagent=True)
