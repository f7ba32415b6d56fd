"""What a failure or a person's words are: an error worth a lesson, a correction, a redirect.

Ingest (transcripts.surprises) and sleep (consolidation, verification, the morning report)
ask the same questions of the same text; this module answers them once. Pure: text in,
a decision or the telling lines out.
"""
import re

from . import embed
from .shorten import clip

# "Exit code N" is the first line Claude Code writes for a failed Bash call (N may be negative
# when the process died of a signal); it says that the command failed, not why.
_EXIT = re.compile(r"^Exit code -?\d+$")


# --------------------------------------------------------------------------------------
# The person's words: a correction, a redirect after an interrupt

# An opener that rejects or redirects: "no, ...", "stop", "don't ...", "wrong", "instead ..."
_OPENER = re.compile(
    r"^(?:(?:ok(?:ay)?|ah+|hm+|uh+|um+|well|sorry|so|oh|hey|wait|actually|nope)[\s,.!:;-]+)*"
    r"(?:no\b(?!\s+(?:problem|worries|rush|idea|doubt)\b)|nope\b|nah\b|wrong\b|incorrect\b|stop\b|"
    r"don'?t\b|do not\b|never\b|instead\b|rather\b|not\s+(?:that|this|what|like|quite|there|yet)\b|"
    r"undo\b|revert\b|wait\b|hold on\b|actually\b|that'?s (?:not|wrong|incorrect|bad|broken)\b|"
    r"this is (?:not|wrong|incorrect)\b|you (?:didn'?t|did not|forgot|missed|broke|shouldn'?t|should not|"
    r"should have|need to|must|were supposed|are supposed)\b|why (?:did|are|would|do) you\b|"
    r"i (?:said|told you|asked|meant)\b|please (?:don'?t|do not|stop|never)\b|use\s+\S+\s+instead\b)",
    re.I)
# Phrases that reject or redirect wherever they appear early in the message.
_PHRASE = re.compile(
    r"(?:\binstead of\b|\s+instead\b|\brather than\b|\bnot what i\b|\bthat'?s not\b|\bthat is not\b|"
    r"\bis(?:n'?t| not) (?:right|correct|what)\b|\b(?:is|are|was) wrong\b|"
    r"\b(?:still )?(?:doesn'?t|does not|didn'?t|did not) (?:work|help|fix|start|run|seem to work)\b|"
    r"\bstill (?:not|fail\w*|broken|bro?ke|seeing|getting|the same|doesn'?t|does not|isn'?t|is not)\b|"
    r"\byou (?:forgot|missed|broke|ignored|skipped|didn'?t|did not|shouldn'?t|should not|should have)\b|"
    r"\bshouldn'?t (?:have|be|use|do)\b|\bshould not (?:have|be|use|do)\b|"
    r"\b(?:the|real) (?:issue|problem|bug|cause) is\b|,\s*not\s+\S+|"
    r"(?:^|[.!?]\s+)(?:please\s+)?(?:don'?t|do not|never|stop)\s+\w+|"
    r"(?:^|[.!?]\s+)no[.,!]\s|\bbroke\b|\bnot like that\b|\bwrong (?:file|one|place|command|branch|approach)\b)",
    re.I)
_EARLY = 240  # a correction says so at once; long pasted logs and reviews are not scanned deep


def correction_head(said: str) -> str:
    """The part of a message a correction lives in: its first _EARLY characters."""
    return (said or "").strip()[:_EARLY]


def is_correction_text(text: str) -> bool:
    """Whether the person's words reject or redirect what the agent did (deterministic)."""
    head = text.strip().replace("\u2019", "'")[:_EARLY]
    return bool(_OPENER.search(head) or _PHRASE.search(head))


# After an interrupt, a short imperative that does something else is a redirect
# ("create the beads", "push up and make a pr"); approval is not ("it works, commit").
_APPROVAL = re.compile(r"\b(?:works?|worked|great|good|thanks?|thank you|perfect|nice|lgtm|looks good|"
                       r"yes|yep|sure|fine|continue|go on|go ahead|carry on)\b", re.I)


def is_redirect_after_interrupt(text: str) -> bool:
    """After the person interrupted: whether a short message sends the agent elsewhere."""
    head = text.strip()
    return len(head) <= 120 and "\n" not in head and not head.endswith("?") and not _APPROVAL.search(head)



# --------------------------------------------------------------------------------------
# A failed tool call: the lines that say what went wrong

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\]8;[^\x1b\x07]*(?:\x1b\\\\|\x07)")
_BOX = re.compile(r"^[\s\u2500-\u259f\u2190-\u21ff\u2700-\u27bf\U0001f300-\U0001faff|┃❯•·-]*$")
ERRORISH = re.compile(r"(?i)(?:\berror\b|\berr!|\bfatal\b|\bfail(?:ed|ure|s)?\b|\bexception\b|traceback|"
                       r"\bnot found\b|no such file|permission denied|\bdenied\b|\binvalid\b|\bcannot\b|"
                       r"\bcan't\b|\bunable\b|\bmissing\b|\bundefined\b|\brefused\b|\btimed? ?out\b|"
                       r"\bunrecognized\b|\bunknown\b|\bdoes not exist\b|\bunused\b|^[×✖✗✘]|\bpanic)")


def error_lines(result: str, limit: int = 3) -> list:
    """The lines of a failed tool call's output that say what went wrong, first ones first.

    Output often opens with banners, progress and environment noise: the exit code is
    kept, then lines that look like errors, and only without those the first lines.
    """
    text = _ANSI.sub("", result or "")
    text = re.sub(r"</?tool_use_error>", "", text)
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if line and not _BOX.match(line):
            lines.append(clip(line, 200))
    head = [lines.pop(0)] if lines and _EXIT.match(lines[0]) else []
    errorish = [line for line in lines if ERRORISH.search(line)]
    return head + (errorish or lines)[: limit - len(head)]


def telling_lines(facts: dict) -> list:
    """An error's lines that say what went wrong (not the bare "Exit code N")."""
    return [line for line in facts.get("error") or [] if not _EXIT.match(line)]


# Failures that are Claude Code's own checks, not the project's: its file tools' guards
# (also flagged as `guard` by ingest) and its permission prompts in -p mode.
_HARNESS = re.compile(r"requires approval|haven't granted it yet|permission to use|"
                      r"has not been read yet|String to replace not found|No changes to make|"
                      r"modified since read|File has been unexpectedly modified", re.I)
# Failures of the code being worked on, not of the command: a failing test, a compiler or
# type error, a lint finding. They are the work itself; "don't run the tests" is no lesson.
_WORK = re.compile(r"""(?x)
      [\w./-]+\.[A-Za-z]{1,5}[:(]\d+                   # a place in the code: app.py:12, a.ts(3,4)
    | ^\s*(?:FAILED|FAIL|ERROR)\s+\S+(?:::|\s-\s|\s*$)  # a failing test: FAILED tests/x.py::t
    | \b\d+\s+(?:failed|failures?|errors?)\b            # a test summary: 3 failed, 1 error
    | \b(?:tests?|examples?|specs?|assertions?)\s+failed\b
    | ^\s*\d+\)\s                                       # numbered test failures: 3) test ...
    | \bAssert(?:ion)?(?:Error)?\b | \bassert\b | \bexpected\b.*\b(?:got|received|to\s+(?:be|equal))\b
    | \berror\s*(?:\[E\d+\]|TS\d+|CS\d+)               # compiler diagnostics with codes
    | \b(?:Syntax|Type|Name|Attribute|Key|Index|Value|ZeroDivision|Reference|Range)Error\b
    | \bundefined\s+(?:function|method|variable|local|reference)\b
    | \bnot\s+assignable\b | \bunused\b | \bpanicked\s+at\b
    | \bcould\s+not\s+apply\b | \bCONFLICT\b | \bmerge\s+conflict
    """, re.I)


def is_lesson_error(facts: dict) -> bool:
    """Whether a failure can teach a lesson: it says what went wrong, about the command or
    the environment; not one of Claude Code's own guards, not a failing test or type error."""
    if facts.get("guard"):
        return False
    head = error_line(facts)
    if len(embed.words(head)) < 2:
        return False                    # "Exit code 1", "Error", a banner: nothing to learn from
    return not (_HARNESS.search(head) or _WORK.search(head))


def error_line(facts: dict) -> str:
    """The line of a failure's output that says what went wrong: the first that reads as an
    error, else the first that is not a banner or a progress meter; '' when there is none."""
    lines = [line for line in telling_lines(facts) if not _JUNK.search(line)]
    return next((line for line in lines if ERRORISH.search(line) or _ERROR_NAME.search(line)),
                lines[0] if lines else "")


_JUNK = re.compile(r"[\u2500-\u259f\u2700-\u27bf\U0001f300-\U0001faff]|^%\s*Total\b|\bDload\b")
_ERROR_NAME = re.compile(r"[a-z](?:Error|Exception)\b")          # ImportError, FileNotFoundException


# Claude Code's own checks on file tools ("File has not been read yet", "String to replace
# not found"): real failures of the agent, but about the tool, not the project.
_GUARDED_TOOLS = ("Edit", "MultiEdit", "Write", "Read", "NotebookEdit")
_GUARD_PHRASES = ("has not been read yet", "String to replace not found", "No changes to make",
                  "Found ", "File does not exist", "modified since read", "File is too large",
                  "exceeds maximum allowed")


def is_guard(tool: str, lines: list) -> bool:
    """Whether a failed file tool hit one of Claude Code's own checks (its first error line says so)."""
    return tool in _GUARDED_TOOLS and bool(lines) and any(p in lines[0] for p in _GUARD_PHRASES)


# --------------------------------------------------------------------------------------
# What `seen` counts

def incident(ep: dict) -> str:
    """What `seen` counts: sessions (a note is its own)."""
    return ep.get("session_id") or f"episode:{ep['id']}"
