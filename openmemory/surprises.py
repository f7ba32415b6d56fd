"""What did not go as the agent expected in a session: its failed tool calls and what the
person said to correct it, read from a transcripts.Session (PROTOCOL.md has the rules).
Pure, like the reading it follows: a Session in, Surprises out."""
import re
from dataclasses import dataclass
from functools import lru_cache

from .corrections import correction_verdict
from .failures import error_lines
from .shorten import clip
from .transcripts import OWN_TOOL, Session, ToolCall, Turn


@dataclass
class Surprise:
    """Something that did not go as the agent expected: a failed tool call or a correction."""
    kind: str                   # "error" or "correction"
    anchor: str                 # the event's identity: its record's uuid (event_id)
    at: str
    text: str                   # the error's first lines, or what the person said
    tool: str = ""              # the tool that failed or was just used
    command: str = ""           # that tool call in a few words
    agent_did: str = ""         # for corrections: what the agent had just done
    agent_said: str = ""        # for corrections: the agent's last words before them (its claim)
    rejected: bool = False      # a refused tool use
    count: int = 1              # identical errors in one session are one surprise
    legacy: str = ""            # the identity older versions gave it (the tool-use id), to rekey in place
    verdict: str = ""           # corrections: correction | doubtful | standing (corrections.correction_verdict)
    form: str = ""              # which rule said so: words, question, review, pasted-failure, ...
    trigger: str = ""           # corrections: the call the words are about (its summary), if any
    trigger_tool: str = ""
    trigger_failed: bool = False
    fixed_by: str = ""          # errors: the command after which the same command succeeded
    work: bool = False          # errors: fixed in the same session by editing code (the work itself)
    before_edit: bool = False   # errors: came before any edit of the session



def of(s: Session) -> list:
    """Every error and correction of a session, in order (PROTOCOL.md has the rules).

    A correction is what the person typed that corrections.correction_verdict calls one,
    doubtful (kept, marked, for a model to decide) or, in a first message, standing.
    """
    found = []
    errors: dict = {}
    last_assistant = None       # the agent's most recent response
    agent_said = ""             # its latest words (a claim of being done, perhaps)
    calls = []                  # the agent's tool calls since the person last spoke
    interrupted = False
    history = [c for c in s.tool_calls if not OWN_TOOL.match(c.name)]
    for turn in s.turns:
        if turn.role == "assistant":
            last_assistant = turn
            agent_said = turn.text or agent_said
            for call in turn.tools:
                if OWN_TOOL.match(call.name):
                    continue
                calls.append(call)
                if call.interrupted:
                    interrupted = True
                elif call.is_error and not call.rejected:
                    _note_error(found, errors, call, s.id, history)
            continue
        if turn.source == "interrupt":
            interrupted = True
            continue
        first = last_assistant is None
        if turn.source not in ("prompt", "queued") and not (first and turn.source == "command"):
            continue
        refused = any(c.rejected for c in calls)
        verdict, form = correction_verdict(turn.text, agent_said, refused, interrupted, first)
        if verdict:
            found.append(_correction(turn, last_assistant, calls, verdict, form, agent_said))
        calls, interrupted, agent_said = [], False, ""
    for call in calls:  # refused at the very end, with no words after
        if call.rejected:
            found.append(Surprise("correction", event_id(call, s.id), call.at, "", call.name, call.summary(),
                                  agent_did=call.summary(), rejected=True, legacy=call.id, verdict="correction",
                                  form="refusal", trigger=call.summary(), trigger_tool=call.name))
    return found


def event_id(call: ToolCall, session_id: str) -> str:
    """A failed or refused call's identity: the uuid of its result record (a copy in a resumed
    or forked transcript keeps it), else session, call id and time together; never the
    tool-use id alone (local models and proxies reuse ids such as `call_0`)."""
    return call.result_uuid or f"{session_id}:{call.id}:{call.at or call.result_at}"


def _note_error(found: list, errors: dict, call: ToolCall, session_id: str, history: list) -> None:
    lines = error_lines(call.result or "")
    key = (call.name, call.summary(), lines[0] if lines else "")  # a failure with no output too
    if key in errors:
        errors[key].count += 1
        return
    surprise = Surprise("error", event_id(call, session_id), call.at, "\n".join(lines), call.name, call.summary(),
                        legacy=call.id)
    _aftermath(surprise, call, history)
    errors[key] = surprise
    found.append(surprise)


_EDITS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
# Commands that only look (they fix nothing): what runs between a failure and its retry.
_LOOKING = re.compile(r"^(?:ls|cat|head|tail|less|grep|rg|find|fd|echo|pwd|which|type|env|printenv|ps|wc|file|"
                      r"stat|tree|sed -n|git (?:status|log|diff|show|branch|remote)|docker (?:ps|logs|images))\b")


def _aftermath(surprise: Surprise, call: ToolCall, history: list) -> None:
    """What the session did about a failure: fixed by editing code (the work itself), or by a
    command or a setup step (what a lesson may name), before the same command succeeded."""
    at = next((i for i, c in enumerate(history) if c is call), None)
    if at is None:
        return
    surprise.before_edit = not any(c.name in _EDITS for c in history[:at])     # not even an attempt
    if call.name != "Bash":
        return
    failed = _bare(call.summary())
    edits, steps = False, []
    for later in history[at + 1:]:
        if later.name in _EDITS and not later.is_error:
            edits = True
        elif later.name == "Bash":
            command = _bare(later.summary())
            if command == failed or (command.endswith(failed) and len(command) > len(failed)):
                if later.is_error or later.interrupted:
                    continue            # failed again: keep looking for the run that worked
                if edits:
                    surprise.work = True
                elif steps:
                    surprise.fixed_by = steps[-1]
                elif command != failed:
                    surprise.fixed_by = later.summary()     # the same command, run another way
                return
            if not later.is_error and not _LOOKING.match(command):
                steps.append(command)


@lru_cache(maxsize=4096)  # commands repeat within and across sessions
def _bare(command: str) -> str:
    """A command without `cd x &&`, its output plumbing and leading VAR=value settings."""
    command = " ".join((command or "").split())
    command = re.sub(r"\s*(?:\|\s*(?:head|tail|grep|less|more|cat|tee)\b[^|]*)+$", "", command)
    command = re.sub(r"\s*\d?>&\d|\s*2>\s*/dev/null", "", command)
    parts = [p.strip() for p in command.split("&&") if p.strip() and not re.match(r"^(?:cd|pushd)\s", p.strip())]
    return " && ".join(parts)


def _correction(turn: Turn, agent: Turn | None, calls: list, verdict: str, form: str,
                agent_said: str = "") -> Surprise:
    """A correction, tied to what the agent had just done: the call it refused, else the
    call that failed, else the last call, else what the agent last said; and to the call its
    words are about (its trigger), when they name one. agent_said: the agent's latest words
    before them (what corrections judged a claim by; kept for the optional model)."""
    recent = (next((c for c in reversed(calls) if c.rejected), None)
              or next((c for c in reversed(calls) if c.is_error and not c.interrupted), None)
              or (calls[-1] if calls else None))
    did = recent.summary() if recent else (clip(agent.text, 160) if agent and agent.text else "")
    about = _trigger(turn.text, calls)
    return Surprise("correction", turn.uuid, turn.at, turn.text, recent.name if recent else "",
                    recent.summary() if recent else "", agent_did=did, rejected=bool(recent and recent.rejected),
                    verdict=verdict, form=form, trigger=about.summary() if about else "",
                    trigger_tool=about.name if about else "", trigger_failed=bool(about and about.is_error),
                    agent_said=clip(agent_said, 300))


_GENERIC = {"run", "use", "git", "npm", "npx", "python", "python3", "the", "and", "file", "test", "tests"}
_SAID_WORD = re.compile(r"[a-z0-9][a-z0-9_.:-]*")
_COMMAND_WORD = re.compile(r"^[a-z0-9][a-z0-9_.:@-]*$")


def _trigger(text: str, calls: list):
    """The call the person's words are about: the refused one, else the latest whose command
    (or file name) shares a word with what they typed; failed calls first."""
    refused = next((c for c in reversed(calls) if c.rejected), None)
    if refused is not None:
        return refused
    said = set(_SAID_WORD.findall(text.lower()))
    said |= {w.strip(".:") for w in said}

    def named(call):
        if call.name == "Bash":         # the program, its subcommand or first argument: not any word
            words = {w for step in _bare(call.summary()).lower().split("&&")
                     for w in step.split()[:3] if _COMMAND_WORD.match(w)}
        elif call.name in _EDITS or call.name == "Read":
            path = str(call.input.get("file_path") or call.input.get("notebook_path") or "")
            name = path.rsplit("/", 1)[-1].lower()
            words = {name, name.rsplit(".", 1)[0]} if path else set()
        else:
            return False
        shared = said & words
        return bool(shared - _GENERIC) or (bool(shared) and call.name == "Bash" and
                                           _bare(call.summary()).split(" ")[0].lower() in said)

    def step(call):
        """The step of a chain (`git add -A && git commit && git push`) the words name."""
        if call.name != "Bash" or "&&" not in call.summary():
            return call
        steps = [p.strip() for p in _bare(call.summary()).split("&&")]
        named_steps = [p for p in steps if said & set(p.lower().split()[:3])]
        if not named_steps:
            return call
        return ToolCall(call.id, call.name, {"command": named_steps[-1]}, call.at, call.result, call.is_error,
                        call.rejected, call.interrupted)

    found = (next((c for c in reversed(calls) if c.is_error and named(c)), None)
             or next((c for c in reversed(calls) if named(c)), None))
    return step(found) if found else None


def incident(ep: dict) -> str:
    """What `seen` counts: sessions (a note is its own)."""
    return ep.get("session_id") or f"episode:{ep['id']}"
