"""OpenAI Codex CLI rollouts -> the same `Session` of `Turn`s transcripts.py makes of Claude Code's.

A rollout is `<codex home>/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl` (once the person
archives the session, `<codex home>/archived_sessions/` under the same name), one line per
record: `{timestamp, ordinal?, type, payload}` (PROTOCOL.md, "Read: Codex CLI rollouts";
measured with codex-cli 0.171.0, tests/data/agents/codex/). Both generations of its events are
read: 0.171's `item_completed` items (`UserMessage`, `CommandExecution` with `exit_code`) and the
older `user_message` / `exec_command_end`. What a revert took back is not read (the segment file
the thread goes on in says where that starts). Tool calls are told in Claude Code's words (a shell
command is a `Bash` call, a patch an `Edit`), so every later stage reads them unchanged. Pure but
for `subagent_paths` and `reverted_from`, which look beside a rollout for its subagents' rollouts
and its thread's segments; nothing here raises on bad input.
"""
import json
import os
import re
import shlex

from .shorten import clip, wellformed
from .transcripts import Session, ToolCall, Turn, _ends, _str, jsonl_record, with_subagents

AGENT = "codex"
ROLLOUT = re.compile(r"^rollout-.*\.jsonl$")
# A thread reverted (`thread/revert`: the IDE extension and the desktop app editing an earlier
# message) goes on in a segment file beside its rollout, `<its name without .jsonl>_<segment
# id>.jsonl`, whose session_meta says how much of the thread it keeps: `history_base.
# end_ordinal_exclusive`, the first record ordinal taken back (0.171.0, tests/data/agents/codex/revert.*).
SEGMENT = re.compile(r"^(rollout-.*)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")
ARCHIVED = "archived_sessions"  # `codex archive` moves a session's rollouts here, flat, names kept (0.171.0)
KNOWN_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted",
                         "world_state", "token_usage_record"})
SNIFF_LINES = 50
WORKING_FOLDER_LINES = 20       # session_meta is line 0; turn_context comes within the first lines

# Text Codex puts into user-role messages that the person did not type (older rollouts carry no
# provenance): its environment, the AGENTS.md it loaded, an interrupt's marker, a subagent's report.
_HARNESS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
            "<turn_aborted>", "<subagent_notification>", "<user_shell_command>", "<permissions instructions>")
# What Codex's IDE extension and desktop app put before the person's words (the open file and tabs,
# a selection's code, the files attached), under a heading of theirs, and the line that ends it:
# Codex itself titles a thread by what follows that line (its state crate's USER_MESSAGE_BEGIN;
# codex-cli 0.171.0 writes the whole text into the rollout, tests/data/agents/codex/ide_context.jsonl).
_IDE_HEADINGS = ("# Context from my IDE setup:", "# Files mentioned by the user:")
_REQUEST_BEGIN = "## My request for Codex:"
# What the output of a command a person's Ctrl-C stopped says (0.171.0, tests/data/agents/codex/interrupt.jsonl).
_ABORTED = "aborted by user"
# exec_command's output: a header, then the command's own output after "Output:".
_HEADER_EXIT = re.compile(r"^Process exited with code (-?\d+)$", re.M)
_HEADER_END = "\nOutput:\n"
# Shell tools across versions: exec_command (0.171, `cmd`), shell (`command` as argv), shell_command.
_SHELL_TOOLS = {"exec_command", "shell", "shell_command", "container.exec", "local_shell"}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)


def is_rollout(path) -> bool:
    """Whether a file is named as a Codex rollout."""
    return bool(ROLLOUT.match(os.path.basename(os.fspath(path))))


def is_archived(path) -> bool:
    """Whether a rollout is in Codex's archived_sessions folder (the person archived its session)."""
    return os.path.basename(os.path.dirname(os.fspath(path))) == ARCHIVED


def thread_files(path) -> list:
    """The files of a rollout's thread in its folder, in the order Codex wrote them: the rollout,
    then each segment a revert started (their ids, UUIDv7, sort by time); [] when none is there."""
    folder, name = os.path.split(os.fspath(path))
    segment = SEGMENT.match(name)
    stem = segment.group(1) if segment else name[:-len(".jsonl")]
    try:
        names = set(os.listdir(folder)) if folder else set()
    except OSError:
        return []
    first = [stem + ".jsonl"] if stem + ".jsonl" in names else []
    return [os.path.join(folder, n) for n in first + sorted(n for n in names if n.startswith(stem + "_")
                                                            and SEGMENT.match(n))]


def reverted_from(path):
    """The first record ordinal of a rollout that a revert took back (the history the next file of
    its thread keeps ends there); None when nothing was."""
    files = thread_files(path)
    here = os.fspath(path)
    if here not in files or files[-1] == here:
        return None
    try:
        with open(files[files.index(here) + 1], "rb") as f:
            meta = json.loads(f.readline()).get("payload")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    base = meta.get("history_base") if isinstance(meta, dict) else None
    cut = base.get("end_ordinal_exclusive") if isinstance(base, dict) else None
    return cut if isinstance(cut, int) and not isinstance(cut, bool) else None


def session_id(lines, path: str = "") -> str:
    """A rollout's session id from its first records (session_meta's), as parse_lines takes it;
    its file name's stem when it has none, as there."""
    for n, (rec, _) in enumerate(_records(lines)):
        if n >= WORKING_FOLDER_LINES:
            break
        payload = rec.get("payload") if rec else None
        if isinstance(payload, dict) and rec.get("type") == "session_meta":
            found = _str(payload.get("id")) or _str(payload.get("session_id"))
            if found:
                return found
    return _stem(path) if path else ""


def parse(path) -> Session:
    """Read one rollout; never raises on its content (an unreadable file raises OSError)."""
    with open(path, "rb") as f:
        return parse_lines(f, str(path))


def _records(lines):
    """(record, raw) of each line: a dict, or None for a line that is not one."""
    for raw in lines:
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", errors="replace")
        if not raw.strip():
            continue
        try:
            rec = jsonl_record(raw.strip())
        except (ValueError, RecursionError):
            rec = None
        yield (rec if isinstance(rec, dict) else None), raw


def working_folder(lines) -> str:
    """The session's working folder from its first records (session_meta's, else a turn_context's)."""
    for n, (rec, _) in enumerate(_records(lines)):
        if n >= WORKING_FOLDER_LINES:
            break
        payload = rec.get("payload") if rec else None
        if isinstance(payload, dict) and rec.get("type") in ("session_meta", "turn_context"):
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd:
                return cwd
    return ""


def parse_lines(lines, path: str = "", kept_out=None, subagent: bool = False) -> Session:
    """Build a Session from a rollout's lines (bytes or str).

    subagent: the rollout is read for the session that started it: its calls, not its words.
    kept_out: as transcripts.parse_lines: the question asked of the working folder once it is
    known; when kept out, reading stops there and `kept_out` says why."""
    s = Session(path=path, agent=AGENT)
    calls: dict = {}            # call_id -> ToolCall
    exits: dict = {}            # call_id -> (exit code, output, declined) from the events
    said: list = []             # (turn, "event" | "item"): the person's words, as each kind records them
    sniffed, asked = 0, kept_out is None
    current = None              # the agent's turn its calls join
    taken_back = reverted_from(path) if path else None
    for rec, _ in _records(lines):
        if rec is None:
            if sniffed is not None:
                sniffed += 1
                if sniffed > SNIFF_LINES:
                    break
            s.skipped += 1
            continue
        kind, payload, at = rec.get("type"), rec.get("payload"), _str(rec.get("timestamp"))
        if not isinstance(kind, str):
            kind = None                 # a record of no type it names (an object, a list: not hashable)
        if sniffed is not None:
            if kind in KNOWN_TYPES and isinstance(payload, dict):
                sniffed = None
            else:
                sniffed += 1
                if sniffed > SNIFF_LINES:
                    break
                continue
        ordinal = rec.get("ordinal")
        if taken_back is not None and isinstance(ordinal, int) and ordinal >= taken_back:
            continue            # reverted: gone from the thread, and from memory too
        s.records += 1
        if not isinstance(payload, dict):
            s.skipped += 1
            continue
        if at:
            s.started = min(s.started or at, at)
            s.ended = max(s.ended, at)
        try:
            if kind == "session_meta":
                _on_meta(s, payload)
            elif kind == "turn_context" and not s.cwd:
                s.cwd = _str(payload.get("cwd"))
            elif kind == "response_item":
                current = _on_item(s, payload, at, calls, said, current)
            elif kind == "event_msg":
                current = _on_event(s, payload, at, exits, said, current)
            elif kind == "compacted":
                current = _on_compacted(s, payload, at)
        except (AttributeError, TypeError, KeyError, ValueError):
            s.skipped += 1
        if not asked and (s.cwd or s.records >= WORKING_FOLDER_LINES):
            asked = True
            s.kept_out = kept_out(s.cwd) or ""
            if s.kept_out:
                return s
    if not asked:
        s.kept_out = kept_out(s.cwd) or ""
    s.not_transcript = bool(sniffed)
    for call_id, (code, output, declined) in exits.items():
        call = calls.get(call_id)
        if call is not None:
            _settle(call, code, output, declined)
    # The person's words: the events' (only ever theirs) where the rollout has them, else the
    # user-role messages the harness did not write.
    events = any(how == "event" for _, how in said)
    dropped = {id(t) for t, how in said if how != ("event" if events else "item")}
    s.turns = [t for t in s.turns if id(t) not in dropped]
    if subagent:
        s.turns = [t for t in s.turns if t.role == "assistant"]
        s.agent_id = s.id
    elif s.automated:
        s.turns = []        # a subagent's own rollout: read through the session that started it
    if not s.id:
        s.id = _stem(path)
    return s


# What Codex puts before the summary its model wrote when it compacts (0.171.0's summary prefix,
# tests/data/agents/codex/compaction.jsonl): its words to the next model, not the summary.
_SUMMARY_LEAD = "use the information in this summary to assist with your own analysis:"


def _on_compacted(s: Session, p: dict, at: str):
    """A compaction: the summary the model wrote becomes a `summary` turn, as Claude Code's
    compaction summary is. Codex also keeps that answer as an assistant message just before
    (the compaction's own request): it is the summary, not a reply, so it is taken back."""
    message = _str(p.get("message")).strip()
    last = s.turns[-1] if s.turns else None
    if last is not None and last.role == "assistant" and last.text and message.endswith(last.text.strip()):
        summary = last.text.strip()
        if last.tools:
            last.text = ""
        else:
            s.turns.pop()
    else:
        lead = message.find(_SUMMARY_LEAD)
        summary = message[lead + len(_SUMMARY_LEAD):].strip() if lead >= 0 else message
    if summary:
        s.turns.append(Turn("user", summary, at, f"compacted:{s.id}:{s.records}", "summary"))
        s.compactions += 1
    return None


def _on_meta(s: Session, p: dict) -> None:
    """session_meta: the session's id, folder, version and branch, and who started it."""
    if s.id:
        return  # a forked or resumed rollout may copy another's meta: the first one is this file's
    s.id = _str(p.get("id")) or _str(p.get("session_id"))
    s.cwd = _str(p.get("cwd")) or s.cwd
    s.version = _str(p.get("cli_version"))
    git = p.get("git")
    if isinstance(git, dict):
        s.git_branch = _str(git.get("branch"))
    source = p.get("source")
    # Started by an agent, not the person: a subagent's thread, or Codex run as another program's
    # MCP server.
    s.automated = (isinstance(source, dict) and "subagent" in source) or source == "mcp" \
        or p.get("thread_source") == "subagent" or bool(_str(p.get("parent_thread_id")))


def _on_item(s: Session, p: dict, at: str, calls: dict, said: list, current):
    """A response_item: what the model was sent and said."""
    kind = p.get("type")
    if kind == "message":
        role, text = p.get("role"), _text(p.get("content"))
        if role == "assistant":
            turn = Turn("assistant", text.strip(), at, _str(p.get("id")) or f"msg:{at}", "model")
            s.turns.append(turn)
            return turn
        if role == "user" and _said_by_person(p, text):
            turn = Turn("user", _typed(text), at, _str(p.get("id")) or f"user:{at}", "prompt")
            s.turns.append(turn)
            said.append((turn, "item"))
            return None
        return current
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call = _call(p, at)
        if current is None or current.role != "assistant":
            current = Turn("assistant", "", at, f"calls:{call.id}", "model")
            s.turns.append(current)
        current.tools.append(call)
        calls[call.id] = call
        return current
    if kind in ("function_call_output", "custom_tool_call_output"):
        call = calls.get(_str(p.get("call_id")))
        if call is not None:
            _output(call, p.get("output"), at)
    return current


def _on_event(s: Session, p: dict, at: str, exits: dict, said: list, current):
    """An event_msg: what the client did (the person's prompt, a command's end, an interrupt)."""
    kind = p.get("type")
    if kind == "item_completed" and isinstance(p.get("item"), dict):
        item = p["item"]
        if item.get("type") == "UserMessage":
            return _person(s, _text(item.get("content")), at, _str(item.get("id")), said) or current
        if item.get("type") == "CommandExecution":
            exits[_str(item.get("id"))] = (item.get("exit_code"), item.get("aggregated_output"),
                                           item.get("status") == "declined")
    elif kind == "user_message":
        return _person(s, _str(p.get("message")), at, "", said) or current
    elif kind == "exec_command_end":
        output = p.get("aggregated_output")
        if not isinstance(output, str):
            output = "\n".join(x for x in (_str(p.get("stdout")), _str(p.get("stderr"))) if x)
        exits[_str(p.get("call_id"))] = (p.get("exit_code"), output, False)
    elif kind == "turn_aborted":
        s.turns.append(Turn("user", "", at, f"interrupt:{at}", "interrupt"))
        return None
    return current


def _typed(text: str) -> str:
    """The words of a user message after the context an IDE or the desktop app put before them
    (none when it carried no words: an image alone); other text as it is."""
    text = text.strip()
    if not text.startswith(_IDE_HEADINGS):
        return text
    begin = text.find(_REQUEST_BEGIN)
    return text[begin + len(_REQUEST_BEGIN):].strip() if begin >= 0 else ""


def _person(s: Session, text: str, at: str, uid: str, said: list):
    text = _typed(text)
    if not text or text.startswith(_HARNESS):
        return None
    turn = Turn("user", text, at, uid or f"prompt:{at}", "prompt")
    s.turns.append(turn)
    said.append((turn, "event"))
    return None


def _said_by_person(p: dict, text: str) -> bool:
    """A user-role message the person typed: provenance `user` where the rollout records it
    (0.171), else text that is not one of the harness's blocks."""
    meta = p.get("internal_chat_message_metadata_passthrough")
    marks = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    if isinstance(marks, list) and marks:
        return all(isinstance(m, dict) and isinstance(m.get("provenance"), dict)
                   and m["provenance"].get("type") == "user" for m in marks) and bool(_typed(text))
    return bool(_typed(text)) and not text.strip().startswith(_HARNESS)


def _text(content) -> str:
    """The text of a message's content: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _call(p: dict, at: str) -> ToolCall:
    """A tool call in Claude Code's words: a shell command is `Bash`, a patch `Edit`."""
    call_id = _str(p.get("call_id")) or _str(p.get("id")) or f"call:{at}"
    name, namespace = _str(p.get("name")), _str(p.get("namespace"))
    if p.get("type") == "local_shell_call":
        action = p.get("action") if isinstance(p.get("action"), dict) else {}
        return ToolCall(call_id, "Bash", {"command": _command(action.get("command"))}, at)
    raw = p.get("arguments") if p.get("type") == "function_call" else p.get("input")
    args = raw
    if isinstance(raw, str) and p.get("type") == "function_call":
        try:
            args = json.loads(raw)
        except ValueError:
            args = {"input": raw}
    if not isinstance(args, dict):
        args = {"input": args if isinstance(args, str) else ""}
    if name in _SHELL_TOOLS and not namespace:
        return ToolCall(call_id, "Bash", {"command": _command(args.get("cmd", args.get("command")))}, at)
    if name == "apply_patch" and not namespace:
        patch = _str(args.get("input")) or _str(args.get("patch"))
        files = _PATCH_FILE.findall(patch)
        return ToolCall(call_id, "Edit", {"file_path": files[0].strip() if files else "", "patch": clip(patch, 2000)}, at)
    if namespace.startswith("mcp__"):
        name = f"{namespace}__{name}"       # mcp__openmemory__recall: openmemory's own, as Claude Code names it
    elif namespace:
        name = f"{namespace}.{name}"
    return ToolCall(call_id, name or "?", args, at)


def _command(value) -> str:
    """A shell command as one line: `bash -lc X` is X; an argv is joined as a shell would read it."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) == 3 and os.path.basename(value[0]) in ("bash", "sh", "zsh") and value[1] in ("-lc", "-c"):
            return value[2]
        return shlex.join(value)
    return ""


def _output(call: ToolCall, output, at: str) -> None:
    """A function_call_output: the text the model was sent."""
    if isinstance(output, dict):            # older rollouts: {"content": ..., "success": bool}
        text, ok = _str(output.get("content")), output.get("success")
        if ok is False:
            call.is_error = True
        output = text
    elif isinstance(output, list):
        output = "\n".join(b["text"] for b in output if isinstance(b, dict) and isinstance(b.get("text"), str))
    text = _str(output)
    if text.startswith("{") and '"metadata"' in text:   # 0.2x-0.4x: {"output": ..., "metadata": {"exit_code": n}}
        try:
            value = wellformed(json.loads(text))
            if isinstance(value, dict) and isinstance(value.get("metadata"), dict):
                code = value["metadata"].get("exit_code")
                text = _str(value.get("output"))
                if isinstance(code, int) and call.name == "Bash":
                    _settle(call, code, text, False)
                    call.result_at = at
                    return
        except ValueError:
            pass
    call.result_at = at
    code = None
    if call.name == "Bash" and _HEADER_END in text[:400]:
        header, _, body = text.partition(_HEADER_END)
        found = _HEADER_EXIT.search(header)
        code = int(found.group(1)) if found else None
        text = body
    if code is None and (text.strip() == _ABORTED or text.rstrip().endswith("\n" + _ABORTED)):
        # Codex's own last line for a call the person's Ctrl-C stopped: it never exited, so no
        # "Process exited" header (a command that prints these words has one)
        call.interrupted = True
    call.result = _ends(text)
    if code is not None:
        _settle(call, code, text, False)


def _settle(call: ToolCall, code, output, declined: bool) -> None:
    """A command's end, by its exit code: a failure reads as Claude Code writes one (`Exit code N`)."""
    if declined:
        call.rejected, call.is_error = True, True
        return
    if call.interrupted or not isinstance(code, int) or isinstance(code, bool):
        return
    text = output if isinstance(output, str) else (call.result or "")
    if code != 0:
        call.is_error = True
        call.result = _ends(f"Exit code {code}\n{text}")
    else:
        call.is_error = False
        call.result = _ends(text)


def _stem(path: str) -> str:
    name = os.path.basename(path)
    return name[:-6] if name.endswith(".jsonl") else name


# --------------------------------------------------------------------------------------
# Subagents: each writes its own rollout in the sessions tree (session_meta.parent_thread_id =
# the parent's id); the parent's spawn_agent output names it ({"agent_id": ...}).

_AGENT_ID = re.compile(r'"agent_id"\s*:\s*"([0-9a-fA-F-]{8,})"')


def subagent_ids(session: Session) -> list:
    """The thread ids of the subagents a session started, from its spawn calls' outputs."""
    found = []
    for call in session.tool_calls:
        if call.name.endswith("spawn_agent") and call.result:
            found += [m for m in _AGENT_ID.findall(call.result) if m not in found]
    return found


def subagent_paths(session: Session) -> list:
    """The rollouts of a session's subagents: in its own day folder or a day after, or beside it
    in archived_sessions (`codex archive` moves them with it) (sorted)."""
    ids = subagent_ids(session)
    if not ids or not session.path:
        return []
    day = os.path.dirname(session.path)
    folders = [day]
    month, day_name = os.path.split(day)
    try:    # a subagent started near midnight writes into the next day's folder
        if day_name != ARCHIVED:    # archived: they were moved beside it, into the one folder
            folders += [os.path.join(month, e) for e in sorted(os.listdir(month)) if e > day_name][:1]
    except OSError:
        pass
    found = []
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found += [os.path.join(folder, n) for n in names if is_rollout(n) and any(i in n for i in ids)]
    return sorted(found)


def read_subagents(session: Session) -> Session:
    """The session with its subagents' rollouts read into `session.subagents`: their calls (a
    failure in one is the session's), none of their words (a subagent's task is its parent's)."""
    return with_subagents(session, subagent_paths(session), _read_subagent)


def _read_subagent(path: str) -> Session:
    with open(path, "rb") as f:
        return parse_lines(f, path, subagent=True)
