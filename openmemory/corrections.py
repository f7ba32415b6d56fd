"""What a person's words mean: a correction (and by which rule), doubtful, or not one; and the
sentence of them that lasts beyond the moment.

Ingest (episodes.surprises_of) and sleep (consolidation, lesson wording) ask the same questions of
the same text; this module answers them once, by the rules written down in ARCHITECTURE.md
("What a correction is", "What is worth remembering"). Pure: text in, a decision or a
sentence out. What a failed tool call's output means is failures.py's.
"""
import re
from functools import lru_cache
from typing import NamedTuple

from . import embed

try:
    from re import _constants as _sre, _parser as _sre_parse
except ImportError:                     # Python 3.10
    import sre_constants as _sre
    import sre_parse as _sre_parse


class _Source(NamedTuple):
    """A pattern's text and flags, compiled once at the end of this module, led by what its
    matches can open with (_led): compiling it here as well cost every start 7 ms."""
    pattern: str
    flags: int = 0


# --------------------------------------------------------------------------------------
# The person's words: a correction, doubtful, or not one

# What no one bans: understanding, knowing, remembering, whatever follows ("don't understand the
# issue", "don't know what you mean": the person's "I" left out; public16, sessions 50 and 51), and
# "get it" or "follow" ending a clause ("don't follow the old layout" is a ban). _DONT and
# _NOT_UNDERSTOOD read it alike.
_UNBANNABLE = r"(?:understand|know|remember|recall)\b|(?:get\s+it|follow)\s*(?=[.!?,;\n]|$)"
# "don't" that bans
_DONT = r"(?:don'?t|do not)(?!\s+(?:" + _UNBANNABLE + r"))"
# An opener that rejects or redirects: "no, ...", "stop", "don't ...", "wrong", "instead ..."
_OPENER = re.compile(
    r"^(?:(?:ok(?:ay)?|ah+|hm+|uh+|um+|well|sorry|so|oh|hey|wait|actually|nope)[\s,.!:;-]+)*"
    r"(?:no\b(?!\s+(?:problem|worries|rush|idea|doubt)\b)|nope\b|nah\b|wrong\b|incorrect\b|stop\b|"
    + _DONT + r"\b|never\b|instead\b|rather\b|"
    r"not\s+(?:that|this|what|like|quite|there|yet)\b|"
    r"undo\b|revert\b|wait\b|hold on\b|actually\b|that'?s (?:not|wrong|incorrect|bad|broken)\b|"
    r"this is (?:not|wrong|incorrect)\b|you (?:didn'?t|did not|forgot|missed|broke|shouldn'?t|should not|"
    r"should have|need to|must|were supposed|are supposed)\b|why (?:did|are|would|do) you\b|"
    r"i (?:said|told you|asked|meant)\b|please (?:don'?t|do not|stop|never)\b|use\s+\S+\s+instead\b|"
    r"let'?s not\b|let us not\b|i mean\b|are you (?:sure|certain)\b|really\s*[?!])",
    re.I)
# Phrases that reject or redirect wherever they appear early in the message.
_PHRASE = _Source(
    r"(?:\binstead of\b|\s+instead\b|\brather than\b|\bnot what i\b|\bthat'?s not\b|\bthat is not\b|"
    r"\bis(?:n'?t| not) (?:right|correct|what)\b|\b(?:is|are|was) wrong\b|"
    r"\b(?:still )?(?:doesn'?t|does not|didn'?t|did not) (?:work|help|fix|start|run|seem to work|compile|build|"
    r"pass|load|render)\b|\b(?:this|that|it|you) (?:breaks|broke)\b|\balready exists?\b|"
    r"\bstill (?:not|fail\w*|broken|bro?ke|seeing|getting|the same|doesn'?t|does not|isn'?t|is not|too\s+(?!early|soon)\w+|"
    r"having\s+(?:trouble|issues?|problems?)\b(?!\s+(?:understanding|following|figuring)))\b|"
    r"\byou (?:forgot|missed|broke|ignored|skipped|didn'?t|did not|shouldn'?t|should not|should have)\b|"
    # what the agent should be doing instead of what it is ("i am sorry, you should be updating
    # index.html": public15, session 49; every such message labelled is a correction)
    r"\byou\s+should\s+be\s+(?!(?:able|seeing|getting|receiving|noticing|hearing)\b)\w+ing\b|"
    # doubt of what the agent reported, and a change it reported that shows nothing ("I still don't
    # trust you, test thoroughly", "still looks too good to be true", "there was no visual
    # difference": public15, session 49, each after the agent said it was done)
    r"\bi\s+(?:still\s+)?(?:don'?t|do\s+not)\s+trust\s+(?:you|it|this|that|these|those|the)\b|\btoo\s+good\s+to\s+be\s+true\b|"
    # ("I am even skeptical about this one, test the baseline again", "I am still a bit skeptical so
    # test again": public15, session 50, each after the agent reported its results)
    r"\bi(?:'m|\s+am)\s+(?:(?:still|even|a\s+(?:bit|little)|very|quite|really|so|somewhat)\s+)*"
    r"(?:skeptical|sceptical|not\s+convinced)\b|"
    r"\b(?:there\s+(?:is|was|'s)|i\s+(?:see|saw))\s+(?:still\s+)?no\s+(?:visual\s+|visible\s+)?(?:difference|change)\b"
    r"(?!\s+between)|"
    r"\bshouldn'?t (?:have|be|use|do)\b|\bshould not (?:have|be|use|do)\b|"
    r"\b(?:the|real) (?:issue|problem|bug|cause) is\b|,\s*not\s+\S+|"
    r"(?:^|[.!?]\s+)(?:please\s+)?(?:" + _DONT + r"|never|stop)\s+\w+|"      # a ban
    r"(?:^|[.!?]\s+)no[.,!]\s|\bbroke\b|\bnot like that\b|\bwrong (?:file|one|place|command|branch|approach)\b)",
    re.I)
_EARLY = 240  # a correction says so at once: openers and phrases are looked for this far in
# A request that opens like a rejection ("stop the server when you're done", "don't forget X"), and
# the person's own slip of typing into the wrong session ("wait, wrong session sry", "oops, that was
# meant for another window": public21, session 55, read as "wait" rejecting the agent's work).
_REQUEST = re.compile(r"^(?:(?:ok(?:ay)?|great|good|thanks?|perfect|nice|cool)\b[\s,.!]*)*"
                      r"(?:stop\s+(?:the|that|this|my|your|our|all)\s+\w+(?:\s+\w+)?\s+(?:when|after|once|before)\b|"
                      r"stop\s+(?:here|for\s+(?:now|today|the\s+day))\b|don'?t\s+forget\b|do not forget\b|no\s+rush\b|"
                      r"(?:wait|hold on)\b[,.!\s]+(?:before you \w+[,:]?\s+)?(?:what|when|where|who|which|how)(?:'s)?\b|"
                      r"(?:(?:wait|oops|oh|sorry|sry|ah)\b[,.!\s]+)*(?:(?:that|this)\s+(?:was|is)\s+(?:meant\s+)?for\s+"
                      r"(?:another|a\s+different|the\s+other)|wrong)\s+(?:session|window|chat|tab|terminal|conversation|thread)\b)",
                      re.I)
# A rule set against what the agent did, anywhere in the person's own lines.
_RULE = _Source(r"""(?xi)
      \bwe\s+(?:don'?t|do\s+not)\s+use\b | \bwe\s+(?:always|only|never|don'?t\s+ever)\s+\w+ | ,\s*never\s+\S+
    | \bwe\s+use\s+\S+(?![^\n]*(?:\b(?:can|could|would)\s+you\b|\?)) | ^\s*(?:and\s+|also\s+)?(?:please\s+)?(?:remember|keep\s+in\s+mind)\s*(?:that\b|:|,)
    | ,\s*(?:please\s+)?(?:don'?t|do\s+not|never)\s+(?!worry|bother|mind)\w+
    | \b(?:is|are)\s+(?:banned|forbidden|not\s+allowed)\b | \b(?:is|are)\s+not\s+(?:a|an|the)\s+(?:fix|solution|option|answer)\b
    | \bwe\s+(?:already\s+)?have\s+(?:our\s+own|an?\s+\w+\s+for\s+that)\b
    | \b(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|next\s+time)\b
    | \b(?:we|i)\s+(?:\w+\s+)?(?:don'?t|do\s+not)\s+want\b | \b(?:i|we)'?d\s+rather\b | \brather\s+than\b
    | \binstead\s+of\b | \b(?:try|check|look)\s+(?:it\s+)?again\b | \bre-?check\b | \bit\s+still\s+(?!works?\b)\w+
    | \blet'?s\s+not\b | \b(?:should|would)\s+rather\b
    | \bnot\s+(?:fully\s+|entirely\s+|quite\s+|completely\s+|really\s+)?(?:true|correct|accurate|right(?!\s+now))\b
    | \b(?:is|are|was|were)(?:n'?t|\s+not)\s+working\b | \b(?:happen|occur|fail|break|broke|show)\w*\s+(?:up\s+)?again\b
    | \bi\s+(?:don'?t|do\s+not|can'?t|cannot|still\s+don'?t)\s+see\b | \bi'?m\s+(?:still\s+)?not\s+seeing\b
    | \bi\s+(?:see|get)\b[^.?!]*\bbut\s+not\b
    | (?:^|[.!;]\s+)not\s+(?!sure\b|bad\b|now\b|yet\b|much\b|really\b|urgent\b|a\s+(?:problem|big\s+deal)\b)\w+""")
# A plain statement of a fact the agent got wrong.
_WRONG_FACT = _Source(r"""(?xi)
      \b(?:since|after)\s+your\s+(?:knowledge\s+|training\s+)?cut-?off\b
    | \b(?:was|were|has\s+been|have\s+been|got|is\s+now)\s+(?:already\s+)?(?:removed|deprecated|renamed|merged|
        deleted|dropped|moved|replaced|released)\b
    | \bwe\s+(?:already\s+)?(?:merged|dropped|removed|deleted|switched|migrated|renamed|replaced)\s+(?:that|this|it|
        those|the)\b
    | \bhas\s+(?:since\s+)?become\s+available\b | \bno\s+longer\s+(?:exists?|used|supported|there)\b
    | \b(?:that|this|it)'?s\s+(?:an?\s+|so\s+|really\s+|pretty\s+)*(?:\w+\s+)?(?:ancient|outdated|deprecated|
        obsolete|years\s+old)\b""")
# Pushback phrased as a question: it presumes the agent is wrong ("didn't we already ...?",
# "why is X still there?", "isn't that years old?", "I see four uncommitted files?"). "still" of
# the person's own time or understanding presumes nothing ("how can I test this while still on a
# branch?", "I still don't understand why the subagent can't reach the MCP server?").
_PUSHBACK = _Source(r"""(?xi)
      \b(?:didn'?t|did\s+not|haven'?t|weren'?t|aren'?t|wasn'?t|isn'?t|shouldn'?t|doesn'?t|don'?t)\s+(?:we|you|it|
        that|this|there|they)\b | \bdidn'?t\s+i\s+(?:say|tell|ask|mention)\b
    | ^(?:(?:\w+\s*[,:-]+\s*)?(?:but|so|and|hmm+|emm+|um+|uh+|well)\b[\s,.:-]*)?(?:doesn'?t|don'?t|isn'?t|aren'?t|
        wasn'?t|weren'?t|didn'?t|wouldn'?t|shouldn'?t|couldn'?t|won'?t|can'?t|haven'?t|hasn'?t)\s+\S
    | \breally\b | \bare\s+you\s+(?:sure|certain)\b | \bat\s+all\b
    | \bwhy\b[^?]*\b(?:not|no|n't)\b | ^(?:\w+\s*[,:]\s*)?you\s+(?:wrote|said|claimed)\b
    | \bwhy\s+(?:is|are|does|do|did|was|were)\b.*\b(?:still|again|back|there|here|not|twice)\b
    | \bwhy\s+(?:would|did|are|were)\s+you\b
    | \b(?:(?<!\bwhile\s)(?<!\bwhen\s)(?<!\bi\s)still|already|again|uncommitted|ancient|outdated|deprecated|obsolete|
        years?\s+old|old\s+version|implausible|wrong|broken|missing|twice|two\s+different)\b
    | \bi\s+still\b(?!\s+(?:don'?t|do\s+not|can'?t|cannot)\s+(?:understand|get|see|know)\s+(?:why|how|what)\b)""")
_ASKS = _Source(r"(?i)\b(?:can|could|would|will) (?:you|we)\b|\bplease\b")   # a request, not pushback
# The person asking what they may or should do, or what they are missing ("can I still run it with
# npx?", "what should I do about the email, it is still missing?", "what am I missing?", "how do I
# make sure the same file isn't fetched twice?": public21, session 55): advice asked for, no claim
# that the agent is wrong; "still", "missing" and "twice" there are the person's.
_ADVICE = re.compile(r"(?i)\b(?:can|could|should|shall|may|must)\s+i\b(?!\s+(?:really\s+|even\s+)?(?:have|need)\s+to\b)|\b(?:am\s+i|i'?m|i\s+am)\s+missing\b"
                     r"|\bhow\s+(?:do|can|should|would|could)\s+i\b")
_PLAIN_QUESTION = re.compile(r"(?i)^(?:(?:ok(?:ay)?|so|and|sure|also)[\s,.]+)*(?:did|have|has|are|were|is|was|do|"
                             r"does)\s+(?:you|we|it|they)\b")
_THINK = re.compile(r"(?i)^(?:(?:ok(?:ay)?|so|hm+|well)[\s,.]+)*i\s+(?:think|guess|feel|wonder)\b")
# The agent saying it is done: what failing output pasted next contradicts.
_CLAIM = _Source(r"(?i)\b(?:all (?:\d+ )?(?:tests?|checks?|specs?) (?:pass|passed|passing|green)|"
                 r"tests? pass(?:es|ed|ing)?\b|passes|passing|green|fixed|done\b|complete(?:d|ly)?\b|ready\b|"
                 r"works?\b|working\b|pushed|merged|resolved|succeed(?:s|ed)?|successful(?:ly)?|"
                 r"should (?:now )?(?:work|pass|be green|build)|builds? (?:now|fine|cleanly)|is live|committed|"
                 r"deployed|implemented)")
# The agent asking the person to run or try something and look at what it shows (public18, session
# 52: eight console logs pasted back as asked, "Now try the upload process again. This will show us
# if …", read as review findings pasted back): what they paste then is what was asked for.
_ASKED_TO_LOOK = re.compile(r"(?i)\b(?:try|run|refresh|reload|re-?test|test|check|open)\b[^.!?\n]{0,120}?"
                            r"\b(?:again|console|browser|page|output|logs?|devtools)\b|\bwhat (?:do you see|does "
                            r"it (?:say|show|print))\b|\byou(?:'ll| will| should) (?:now )?see\b|"
                            r"\bthis (?:will|should) (?:show|tell) us\b")
# What says the work is put right (narrower than _CLAIM, whose "successfully", "complete" or "working"
# a diagnostic step's own words hold: "this will show whether the call completes successfully").
_FIXED = re.compile(r"(?i)\b(?:fixed|resolved|should (?:now )?(?:work|be fixed|pass)|(?:is|are) now (?:working|"
                    r"fixed|gone)|now works|(?:tests?|checks?) (?:now )?pass)\b")
# A line of pasted output that says something failed; not one the person opens as themselves ("I am on a
# mobile hotspot. The SFTP connection is failing with 'Authentication failed'. Please update …",
# public24, session 58: read as pasted, the message held no words of theirs).
_FAIL_LINE = re.compile(r"""(?xi)^\s*(?:
      (?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception):\s | Traceback\s\(most | error(?:\[\w+\])?:\s | ERROR[:\s] | FAILED\b
    | FAIL\s | npm\s(?:ERR!|error)\s | .*\berror\sTS\d+: | .*\bexit\s(?:code|status):?\s*[1-9]
    | (?!(?:i|i'm|i've|i'd|we|we're|my|our)\s).*\bfailed\b
    | fatal:\s | \[CLIENT\sERROR\] | ×\s | ✖ | .*\bpanicked\sat\b | E\s{2,}\S )""")
# Review findings pasted back: a header, or an item naming a place in the code.
_REVIEW_HEAD = re.compile(r"(?im)^\s*(?:more\s+)?(?:(?:pr|code|review(?:er)?'?s?|coderabbit|copilot)\s+(?:feedback|"
                          r"review|comments?|says|notes|findings)\b|code review for\b|request changes\b|review:)")
_REVIEW_ITEM = re.compile(r"(?im)^\s*(?:\d+[.)]\s+|[-*•]\s+)?(?:in\s+)?`?[\w./-]+\.[A-Za-z]{1,5}`?(?:[:(]\s*\d+|"
                          r"\s+(?:around\s+)?lines?\s+\d+|\s+\(\d+\)\s*$)")
# A line of review findings pasted without their header, from a review tool or another model: a
# finding opened by its severity or kind ("1. Critical Bug: ...", "**Suggestion:** ...", "⚠️
# Potential issue: ..."), or a list item that opens with a place in the code or names one in
# parentheses or backticks ("- `store.go:42` ...", "2. Missing check (cmd/run.go:10-20)"). A
# person's own list says what to do ("1. in store.go:42 use the cache"): no severity, no place
# set apart.
_REVIEW_LINE = re.compile(r"""(?xi)^\s*(?:\d+[.)]\s*|[-*•]\s+)?(?:\*\*|__)?[^\w\s`'"(]{0,3}\s*(?:\*\*|__)?
    (?:critical|blocker|major|minor|nit(?:pick)?|suggestions?|potential\s+issues?|refactor\s+suggestions?|
       (?:high|medium|low)(?:\s*[-/]\s*|\s+)(?:severity|priority|risk))
    (?:\s+(?:bugs?|issues?|problems?|findings?|errors?|risks?|nits?|security|performance|correctness|style)){0,2}
    \s*(?:\*\*|__)?\s*[:\]]
    | ^\s*(?:\d+[.)]\s+|[-*•]\s+)(?:.*?[(`]|\*\*)?[\w./-]+\.[A-Za-z]{1,5}:\d+(?:-\d+)?\b""")
# A line of pasted output (a log, a diff, a prompt, a frame: "at f (/x.js:1:2)", `File "x.py", line 3`,
# never a sentence that opens with "at" or "File": "at this point, you should be updating the .md
# backup", public15, session 49, was read as a frame), not the person's own words. A line with
# no space is one token of output ("Compiling…", a hash, a path), unless it holds two letters running
# of a script written without spaces between words (SPACELESS: Chinese, Japanese, Thai): "未解决我的根本
# 问题。" ("my root problem is not solved.") is a sentence; a message of such lines, or one over 100
# characters (_WORD_ALONE), held no words of the person's before 2026-12-06.
SPACELESS = embed.SPACELESS_CHARS + "\u0e00-\u0e7f"     # what recall reads as pairs, and Thai
_OUTPUT = re.compile(r"""(?x)^(?:\s{2,}|\t|[❯$>#+|│└├╰━─=@\[]|\s*-{2,}|\s*\d+(?:\.\d+)?\s|.*[\u2500-\u259f]|.*\.{4,}|
                     \s*at\s(?=.*(?::\d+\)?\s*$|<anonymous>|\(native\)|\(Unknown\ Source\)))|\s*File\s"|
                     .*\s{3,}\S|(?!\S*[""" + SPACELESS + "]{2})\\S+$)")
_APPROVAL = re.compile(r"\b(?:works?|worked|great|good|thanks?|thank you|perfect|nice|lgtm|looks good|"
                       r"yes|yep|yeah|yup|sure|fine|continue|go on|go ahead|carry on)\b", re.I)


def correction_head(said: str) -> str:
    """The part of a message its opener and early phrases are looked for in."""
    return (said or "").strip()[:_EARLY]


def is_correction_text(text: str) -> bool:
    """Whether the opening of the person's words rejects or redirects (openers and phrases)."""
    head = text.strip().replace("\u2019", "'")[:_EARLY]
    return bool(_OPENER.search(head) or _PHRASE.search(head)) and not _REQUEST.match(head)


def is_redirect_after_interrupt(text: str) -> bool:
    """After the person interrupted: whether a short message sends the agent elsewhere (not a nudge
    to go on or an approval, _NOTHING_MORE, in any language it reads)."""
    head = text.strip()
    return len(head) <= 120 and "\n" not in head and not head.endswith("?") and not _APPROVAL.search(head) \
        and not _NOTHING_MORE.match(head)


# A line of a log, wherever it starts: a process tag `(node:4242)`, a code in brackets
# `[DEP0180]`, a named warning or error with its message `DeprecationWarning: ...`, a time, a level.
_LOG_START = re.compile(r"""(?x)\s*(?:\(\w[\w.-]*:\d+\) | \[?\d{4}-\d\d-\d\d[T\s]\d | \[?\d\d:\d\d:\d\d\b
    | \[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL)\]?[\s:])""")
_LOG_CODE = re.compile(r"\[[A-Z]{2,}\d+\]")
_LOG_NAMED = re.compile(r"[A-Z]\w*(?:Warning|Error|Exception): ")


def _log_line(line: str) -> bool:
    """Whether a line reads as a line of a log (_LOG_START, _LOG_CODE, _LOG_NAMED); the latter two
    tried only on a line that holds what they need."""
    return bool(_LOG_START.match(line) or ("[" in line and _LOG_CODE.search(line))
                or (": " in line and _LOG_NAMED.search(line)))


_LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s")
_WORD_ALONE = re.compile(r"[^\W\d_]\S{0,99}")     # a word or a name, as typed: "stop", "wait...", "origin/main"


def own_lines(text: str) -> list:
    """The lines the person typed themselves: not pasted output (logs, diffs, frames, and a
    line in parentheses that goes on from one: a tool's hint), nor review findings pasted
    without their header (_REVIEW_LINE, with the lines of a finding's text after it up to a
    blank line or the next item). A message of one line that is one word or name ("stop", "revert",
    "origin/main") is the person's: a word alone reads as output only among other lines."""
    return list(_own_lines(text))


# A message is asked for its own lines by several of the rules in turn (a third of the calls on
# the dev corpus are new texts): the last few texts' answers are kept.
@lru_cache(maxsize=64)
def _own_lines(text: str) -> tuple:
    lines = (text or "").splitlines()
    if len([ln for ln in lines if ln.strip()]) == 1 and _WORD_ALONE.fullmatch(text.strip()):
        return tuple(ln for ln in lines if ln.strip())
    out, pasted, finding = [], False, False
    kinds = []                              # per line: "own", "pasted" or "" (blank)
    for line in lines:
        if not line.strip():
            pasted = finding = False
            kinds.append("")
            continue
        if _REVIEW_LINE.match(line) or (finding and not _LIST_MARK.match(line)):
            pasted = finding = True         # a finding, and the lines of its text up to a blank line
            kinds.append("pasted")
            continue
        typed = _typed_before_a_gap(line)
        if (_OUTPUT.match(line) and not typed) or _FAIL_LINE.match(line) or _log_line(line) \
                or (pasted and line.strip().startswith("(") and line.strip().endswith(")")):
            pasted, finding = True, False
            kinds.append("pasted")
            continue
        pasted = finding = False
        kinds.append("typed, then a paste" if typed else "own")
    # A paste is one block: lines between two pasted lines with no blank line between are the
    # paste's too ("Enumerating objects: 86, done." among git's output), unless the person speaks
    # in them (I, you, we, a question). A line the person typed before a prompt's gap starts one.
    # The nearest other kind before and after each line, found in one pass each way (looked for
    # from each line, a pasted list of 40,000 lines took a minute).
    before, last = [], ""
    for kind in kinds:
        before.append(last)
        last = kind if kind != "own" else last
    after, last = [""] * len(kinds), ""
    for i in range(len(kinds) - 1, -1, -1):
        after[i] = last
        last = kinds[i] if kinds[i] != "own" else last
    for i, kind in enumerate(kinds):
        if kind == "own":
            if before[i] in ("pasted", "typed, then a paste") and after[i] == "pasted" \
                    and not _PERSON.search(lines[i]) and "?" not in lines[i]:
                continue
        if kind in ("own", "typed, then a paste"):
            out.append(lines[i])
    return tuple(out)


def _typed_before_a_gap(line: str) -> bool:
    """A line the person typed that a pasted prompt or column follows after a gap of spaces
    ("I just pushed and got this error: git push      💀 37%"): what comes before the gap is a
    sentence of theirs (_PERSON, a few words)."""
    parts = re.split(r"\s{3,}", line.strip(), maxsplit=1)
    if len(parts) < 2:
        return False
    head = parts[0]
    return len(head.split()) >= 4 and bool(_PERSON.search(head)) and not _OUTPUT.match(head)


def pasted_failure(text: str) -> bool:
    """Whether the message holds pasted output that says something failed."""
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) >= 2 and any(_FAIL_LINE.match(line) for line in lines)


# The person saying, beside failing output, that something is wrong or asking for help ("hmm
# something's wrong: `Error: ...`", a log then "HALP"): the failure is theirs to report, whether
# or not the agent had said it was done. Read on their own lines and on a line's words outside
# its code spans, never on a line of the output ("Error: something went wrong" is the tool's).
_TROUBLE = re.compile(r"""(?xi)\bsomething(?:'s|\s+is|\s+was)?\s+(?:(?:still|really|seriously|definitely|clearly)\s+)?
        (?:wrong|off|broken)\b | \b(?:something|it)\s+went\s+wrong\b | ^\W*(?:ha+l+p+|he+l+p+)\W*$""", re.M)
_FAILURE_WORD = re.compile(r"(?i)(?:error|exception)\b|\b(?:failed|failure|fatal|panic(?:ked)?)\b")  # "TypeError" too


def reports_trouble(text: str) -> bool:
    """Whether the person says something is wrong (_TROUBLE) beside failing output: pasted lines
    (pasted_failure) or an error quoted in a code span."""
    if not _TROUBLE.search(text or ""):
        return False                # most messages: one search
    spans = _CODE_SPAN.findall(text)
    if not (pasted_failure(text) or any(_FAILURE_WORD.search(span) for span in spans)):
        return False
    for line in text.splitlines():
        words = _CODE_SPAN.sub(" ", line).strip()
        if words and not _log_line(words) and not _FAIL_LINE.match(words) and _TROUBLE.search(words):
            return True
    return False


# A review finding pasted bare, as a review tool writes one: about the code in the third person
# (no "I", "you", "we", no question), naming it (`Foo()`, `pkg.Func`, `CamelCase`), and saying
# what is wrong with it or what to consider ("it can hang indefinitely", "is checked but not
# included", "Consider using context.WithTimeout").
_FINDING = re.compile(r"""(?xi)\bconsider\s+\w+ing\b
    | \b(?:can|could|may|might)\s+(?:\w+\s+)?(?:hang|panic|deadlock|leak|race|crash|break|fail|lead\s+to|cause|result\s+in)\b
    | \b(?:is|are)\s+(?:inaccurate|incorrect|misleading|redundant|unused|unnecessary)\b
    | \b(?:is|are)\s+(?:\w+\s+but\s+)?not\s+(?:included|checked|handled|closed|released|propagated|wrapped|validated|
        escaped)\b""")
_CODE_NAME = re.compile(r"\w\(\)|\b[a-z]\w*\.[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*")
_PERSON = re.compile(r"(?i)\b(?:i|i'm|i'd|i've|me|my|you|your|you're|we|we're|our|us|let's)\b")


def bare_finding(text: str) -> bool:
    """Whether the message is a review finding pasted without a header (_FINDING, _CODE_NAME),
    with no words of the person's around it (_PERSON, a question)."""
    t = (text or "").strip().replace("\u2019", "'")
    return len(t) <= 1200 and "?" not in t and bool(_FINDING.search(t)) and bool(_CODE_NAME.search(t)) \
        and not _PERSON.search(t)


def review_findings(text: str) -> bool:
    """Whether the message is review findings: a header, or items naming a file and line."""
    return bool(_REVIEW_HEAD.search(text[:400]) or _REVIEW_ITEM.search(text[:1200])
                or any(_REVIEW_LINE.match(line) for line in text[:1200].splitlines()))


# The agent offering to do something ("Want me to also set gc.auto?"), and a reply that declines.
_OFFER = re.compile(r"(?i)\b(?:want me to|should i|shall i|would you like(?: me)? to|do you want(?: me)? to|"
                    r"would you prefer|or should)\b[^?]*\?\s*$")
_DECLINE = re.compile(r"(?i)(?:no+|nope|nah|don'?t|do not)\b")
# An answer that picks another way than the one offered ("yes, put them into a dist dir instead"
# after "... or would you like me to add *.js to .gitignore?"; "Add it to the project memory
# instead" after "Want me to add it to your CLAUDE.md?"): a choice asked for, not a correction.
_OTHER_CHOICE = re.compile(r"(?i)\binstead\b(?!\s+of\b)")
# Work the agent says it did before its offer ("Done: added getUser() to api.ts. Want me to wire it
# in?", "I created the helper in utils/date.ts. Should I add tests?"): "X instead" then may set that
# work right ("call it fetchUser instead"), not pick among what was offered (red46).
_DID = re.compile(r"(?i)\bI(?:'ve|\s+have)?\s+(?:created|added|moved|renamed|wrote|switched|replaced|changed|"
                  r"updated|put|made|removed|deleted)\b")


def _last_sentence(said: str) -> str:
    """The agent's last sentence (what an answer answers)."""
    said = (said or "").strip()
    return re.split(r"(?<=[.!?])\s+|\n", said)[-1] if said else ""


# A question: to its "?" ("...working!?" asks too), from the end of the sentence before (a "." in
# `registryMu.Lock()` ends none).
_QUESTION = re.compile(r"(?:[^.?!\n]|\.(?=\S))*(?:!\?|\?)")
# A command that destroys work or history: what a short alarmed question right after it is about.
_DESTRUCTIVE = re.compile(r"""(?xi)\bgit\s+(?:reset\s+--hard|clean\s+-\w*f|push\s+(?:.*\s)?(?:-f\b|--force)|checkout\s+(?:--\s|\.(?:\s|$))
    |restore\s+(?:--\S+\s+)*\.(?:\s|$)|branch\s+-D\b|stash\s+(?:drop|clear)\b|filter-branch\b)
    | \brm\s+-\w*[rf] | \bdrop\s+(?:table|database|schema)\b | \btruncate\s+table\b | \bdocker\s+(?:system|volume)\s+prune\b""")
# A short alarmed reaction: "what are you doing...??", "why did you reset??", "wtf", "whoa, stop".
_ALARM = re.compile(r"(?i)^(?:what\s+(?:are\s+you\s+doing|did\s+you|have\s+you|was\s+that|the\b)|why\s+(?:did|would|are)\s+you\b"
                    r"|wtf\b|whoa\b|woah\b|wait\b|stop\b|huh\b|excuse\s+me\b|dude\b|hey\b)|[?!]{2}")
# What the agent just offered, as a whole: "I don't like any approach" (public9) pushes back on
# this moment's proposals (a correction) and names no kind of thing to avoid ("avoid any approach").
# "any of these", "either of your plans" too; "any of the mocking libraries" names a kind (red47b).
_PROPOSED = r"(?:approach|option|solution|idea|plan|proposal|choice|suggestion|alternative)(?:e?s)?\b"
_OF_THE_OFFERED = re.compile(r"(?i)(?:any|either|both|neither)(?:\s+of\s+(?:these|those|them|this|that|your|you|"
                             r"the\s+above|the\s+" + _PROPOSED + r")\b|\s+" + _PROPOSED + r"|\s*[.!]*$)")
# A preference about a kind of thing, in the person's own words: "i hate .sh tests", "i don't like mocks".
_DISLIKE = re.compile(r"(?i)^(?:\w+[,.!]?\s+)?i\s+(?:really\s+|just\s+)?(?:hate|dislike|can'?t\s+stand|don'?t\s+like)\s+"
                      r"(?!it\b|this\b|that\b|these\b|those\b|when\b|how\b|what\b|the\s+way\b|to\b|your\b|you\b|"
                      r"the\s+(?:new|last|current)\b)([^,;!?\n]{2,60}?)(?=\s*(?:[,;!?\n]|\.(?:\s|$)|$))")

_DISLIKE_ANYWHERE = re.compile(r"(?i)\bi\s+(?:really\s+|just\s+)?(?:hate|dislike|can'?t\s+stand|don'?t\s+like)\s")

# A practice about a whole kind of work rather than one item, said in passing: a rule the person
# keeps ("keep each commit with working code", "link every entry to its PR"), a sign-like ban
# ("(no micro-committing broken state)"), work put off to the end ("let's not leave all the tests
# to the very end"). Each/every needs a manner with it: "fix every test" is one task.
_WORK = (r"(?:new\s+|unit\s+|single\s+)?(?:commits?|tests?|prs?|pull\s+requests?|changes?|steps?|entr(?:y|ies)|"
         r"files?|functions?|releases?|migrations?|endpoints?)")
_EMPHASIS = re.compile(r"(?<!\w)[_*]{1,2}(\w[\w\s]*?)[_*]{1,2}(?!\w)")      # "_all_", "**every**"
# A verb of a practice (how each piece of work is done), not of one task over many items
# ("check every file", "fix each test").
_PRACTICE_VERB = re.compile(r"(?i)^(?:don'?t\s+|do\s+not\s+|never\s+|always\s+)?(?:keep|make|write|run|add|put|give|use|"
                            r"leave|split|name|document|include|link|label|tag|squash|sign|ship|wrap|cover|pair|"
                            r"follow)\b")
_EACH = re.compile(r"(?i)\b(?:each|every)\s+" + _WORK + r"\b(?=[^.?!]*\b(?:with|as|before|after|alongside|working|"
                   r"green|passing|separately|small|its|their)\b)")
# "no X-ing Y" as a sign says it ("no force-pushing to main"), but "no existing tests", "no
# working solution yet" describe: a participle that reads as an adjective is no ban.
_SIGN = re.compile(r"(?i)^no\s+(?!(?:existing|working|matching|pending|missing|remaining|failing|passing|running|"
                   r"outstanding|leading|trailing|following|corresponding|conflicting|interesting|breaking|blocking|"
                   r"loading|changing|nothing|something|thing|string|anything|everything)\b)[\w-]+ing(?:\s+[\w./-]+){1,4}"
                   r"[.)!]*$")
_PUT_OFF = re.compile(r"(?i)^(?:don'?t|do\s+not|never|not)\b[^.?!]*\b(?:leave|save|defer|postpone|keep)\b[^.?!]*"
                      r"\b(?:to|until|for)\s+(?:the\s+)?(?:very\s+)?(?:end|last|later)\b")
_HABIT_WORDS = re.compile(r"(?i)\b(?:each|every|no|leave|save|defer|postpone|keep)\b")


def practice(part: str) -> bool:
    """Whether one sentence of the person's sets a practice: an instruction with a practice's
    verb over each piece of a kind of work, with a manner (_EACH); a sign-like ban (_SIGN); work
    not to be put off to the end (_PUT_OFF)."""
    part = re.sub(r"(?i)^let'?s\s+not\b", "don't", FILLER.sub("", part.strip()))
    if part.rstrip(").").endswith("?"):
        return False
    bare = LEAD.sub("", part)
    return bool((_EACH.search(bare) and _PRACTICE_VERB.match(bare)) or _SIGN.match(part) or _PUT_OFF.match(bare))


def habit(text: str) -> bool:
    """Whether the person's own lines set a practice for a whole kind of work (practice): a
    standing preference said in passing, worth a candidate though no standing word comes with it."""
    if not _HABIT_WORDS.search(text or ""):
        return False                # most messages: one search
    return any(practice(part) for line in own_lines(_EMPHASIS.sub(r"\1", text))
               for part in split_outside_code(r"(?<=[.!?])\s+|\s*\(", line.strip()) if part.strip())
# A fact the person states against what the agent just said or did, in a short reply that asks
# for nothing: what a thing is for ("it's a test value for gitleaks detection", "that's a
# fixture for the tests"), or what it only does set against what it should ("the command
# string only contains the last command. ... it should send the whole one"). After the agent's
# question it is an answer; "this is a test", "it's in the README" say too little to tell.
_STATES = re.compile(r"""(?xi)^(?:\w+[,.]?\s+)?(?:it'?s|it\s+is|that'?s|that\s+is|this\s+is)\s+(?:only\s+|just\s+)?
        (?:a|an)\s+(?:[\w-]+\s+){0,3}?[\w-]+\s+for\s+\S
    | ^[\w\s"'`.-]{3,60}?\s+only\s+(?:contains?|has|have|sends?|returns?|works?|runs?|supports?|accepts?|takes?|
        reads?|writes?)\b.*\bshould\b""")
# Pushback that says the agent missed something it has or does: "but we do track multiple
# sessions, how ...?", "you can use your LSP right?".
_BUT_WE_DO = re.compile(r"(?i)\bbut\s+(?:we|you)\s+(?:do|does|did)\s+(?!not\b|n't)[a-z]\w+")
_YOU_CAN = re.compile(r"(?i)^(?:but\s+|and\s+)?you\s+(?:can|could)\s+(?:just\s+|also\s+)?(use)\s+"
                      r"(your\s+[^?,]{2,40}?),?\s+(?:right|no|correct)\s*\?+$")    # a tool it has: "your LSP"


def states_otherwise(text: str, agent_said: str = "") -> bool:
    """A short plain statement of how things are (_STATES) after the agent said or did something
    other than ask: the person setting a fact straight."""
    t = (text or "").strip()
    if len(t) > 200 or "?" in t or "\n" in t or _ASKS.search(t) or _APPROVAL.search(t):
        return False
    return bool(_STATES.search(t)) and not _last_sentence(agent_said).rstrip().endswith("?")


# Forms anyone uses to say the agent got it wrong, wherever they stand in the person's own
# lines (ARCHITECTURE.md, "What a correction is"): the wrong thing done ("you edited the wrong
# file"), a thing the agent assumed that is not there ("there is no such flag", "that method
# doesn't exist"), too much done ("this is overkill", "you're overcomplicating it"), undo to how
# it was ("put it back", "leave it as it was", "go back to the previous version"), what they
# asked for ("I asked for a table", "I never said to delete it"), no change ("same error",
# "nothing changed"), and not liking what was done or proposed ("Version 2 might affect the
# performance. I don't like it": public23, session 56; not when they let it stand, "i don't like it
# but fine"; what the person dislikes as a kind of thing, "i don't like mocks", is a preference,
# _DISLIKE).
_SET_BACK = re.compile(r"""(?xi)\b(?:the|a)\s+wrong\s+(?!with\b|about\b)[a-z]\w*
    | \bthere(?:'s|\s+is|\s+are)\s+no\s+such\b
    | (?<!\bif\s)(?<!\bwhen\s)(?<!\bunless\s)(?<!\bwhether\s)(?<!\bsure\s)(?<!\bensure\s)\b(?:it|this|that)\s+(?:\w+\s+){0,3}?(?:does\s*n[o']?t|do\s*n[o']?t)
        \s+exist\b
    | \bover-?complicat\w* | \bover-?engineer\w* | \boverkill\b | \btoo\s+(?:complicated|complex)\b
    | \bput\s+(?:it|that|them|this|those)\s+back\b | \b(?:leave|keep)\s+(?:it|that|them|this|those)\s+as\s+(?:it\s+was|they\s+were)\b
    | \bgo\s+back\s+to\s+(?:the\s+)?(?:previous|old|original|earlier)\b
    | \bi\s+(?:never\s+)?(?:asked\s+(?:you|for|to)|said\s+(?:to|that|we|you|it|not|no)|told\s+you)\b
    | \bsame\s+(?:error|issue|problem|failure)\b | \bnothing\s+(?:changed|happens|happened)\b
    | \bi\s+(?:really\s+)?(?:do\s*n[o']?t|do\s+not)\s+like\s+(?:it|this|that|these|those)\b
        (?![\s,.]*but\s+(?:fine|ok|okay|whatever|go\s+ahead|keep\s+it|leave\s+it))""")
# The person reporting that something fails since the agent's work ("now I get an error", "the
# build is broken now"): a correction after the agent said it was done (_CLAIM), else doubtful.
# Without "now" it may be a new problem ("the login page is broken on staging, can you look?").
_REPORTS_FAILURE = re.compile(r"""(?xi)\bnow\s+i\s+(?:get|see|am\s+getting|'m\s+getting)\s+
        (?:an?\s+|the\s+|this\s+|that\s+)?(?:\w+\s+)?(?:error|exception|panic|crash)\b
    | \bi\s+(?:get|see|am\s+getting|'m\s+getting)\s+(?:an?\s+|the\s+|this\s+|that\s+)?(?:\w+\s+)?(?:error|exception|
        panic|crash)\s+now\b
    | \b(?:is|are|'s|'re)\s+now\s+(?:broken|failing|crashing)\b | \b(?:broken|failing|crashing)\s+now\b""")


# The agent saying something cannot be done ("the API only supports projects", "there is no way
# to ...", "it isn't possible"), and the person saying they did it or it works for them ("I was
# able to do it through the UI", "works fine for me", "it is possible"): a fact it got wrong.
_CANNOT = re.compile(r"""(?xi)\b(?:can'?t|cannot|can\s+not|unable\s+to|(?:is|isn'?t|is\s+not)\s+(?:not\s+)?(?:possible|
    supported|available)|not\s+(?:possible|supported|available)|(?:doesn'?t|does\s+not|don'?t|do\s+not)\s+(?:support|
    allow|let)|only\s+supports?|no\s+way\s+to|impossible)\b""")
_DID_IT = re.compile(r"""(?xi)\bi\s+(?:was\s+able\s+to|managed\s+to|just\s+did\s+(?:it|that|this))\b
    | \b(?:it\s+)?(?:works?|worked)\s+(?:fine\s+|just\s+fine\s+)?for\s+me\b | \bit\s+(?:is|'s)\s+(?:possible|supported)\b""")


def contradicts_limit(text: str, agent_said: str) -> bool:
    """Whether the person says, in their own lines, that they did what the agent's last words said
    cannot be done (their lines read only after the agent's words said so: most messages follow
    no such words)."""
    return bool(agent_said and _CANNOT.search(agent_said[-1200:]) and _DID_IT.search("\n".join(own_lines(text))))


def is_pushback_on_destructive(text: str, agent_ran: str) -> bool:
    """A short alarmed reaction ("what are you doing...??") right after the agent ran a command
    that destroys work (git reset --hard, rm -rf, a force push, ...): the person objects to it."""
    t = (text or "").strip()
    return bool(agent_ran and _DESTRUCTIVE.search(agent_ran) and len(t) <= 100 and "\n" not in t
                and (_ALARM.match(t) or _ALARM.search(t[-4:])) and ("?" in t or "!" in t or len(t.split()) <= 3))


def dislike(text: str):
    """What the person says they hate or dislike, as a kind of thing ("i hate .sh tests" ->
    ".sh tests"), or None."""
    if not _DISLIKE_ANYWHERE.search(text or ""):
        return None                 # most messages: one search, not a reading of every line
    for line in own_lines(text or ""):
        for part in re.split(r"(?<=[.!?])\s+", line.strip()):
            found = _DISLIKE.match(part)
            if found:
                return found.group(1).strip()
    return None


# A question the agent ended on with options to choose from ("**Question 12:** What about historical
# Cases? / - Migrate them to Salesforce? / - Archive separately? / - No migration needed?", or the
# options then "Which approach?"): a short reply is the person's choice, whatever its words ("No
# migration needed", "Nope, and we're not considering adding it", "Not our concern": public13,
# session 48, four of its false corrections), unless it says the agent got something wrong.
_CHOICE_REPLY_CHARS = 160
_SAYS_WRONG = re.compile(r"(?i)\b(?:wrong|incorrect|mistake|not\s+what\s+i|i\s+(?:said|asked|told)|"
                         r"you\s+(?:forgot|missed|didn'?t|did\s+not|broke))\b")


def asked_to_choose(agent_said: str) -> bool:
    """Whether the agent's words end on a question with two options or more listed under it."""
    lines = [line.strip() for line in (agent_said or "").strip().splitlines()[-30:] if line.strip()]
    if lines and not _LIST_MARK.match(lines[-1]) and lines[-1].endswith("?") and len(lines[-1]) <= 80:
        lines = lines[:-1]      # "Which approach?" after the options
    options = 0
    while lines and _LIST_MARK.match(lines[-1]):
        lines.pop()
        options += 1
    return options >= 2 and bool(lines) and "?" in lines[-1]


def chose(text: str, agent_said: str) -> bool:
    """Whether what the person typed is a short reply to a question with options (asked_to_choose)
    that says nothing was wrong: an answer, not a correction."""
    said = " ".join(own_lines(text)).strip()
    return 0 < len(said) <= _CHOICE_REPLY_CHARS and not _SAYS_WRONG.search(said) and asked_to_choose(agent_said)


def correction_verdict(text: str, agent_said: str = "", refused: bool = False, interrupted: bool = False,
                       first: bool = False, agent_ran: str = "") -> tuple:
    """(verdict, form) of what the person typed, by the rules of ARCHITECTURE.md.

    verdict: 'correction', 'doubtful', 'standing' (a first message that sets a lasting rule)
    or None; form: which rule decided ('refusal', 'words', 'redirect', 'fact', 'question',
    'review', 'pasted-failure', 'late-instruction', 'standing', '').
    agent_said: the agent's last words before (its claim of being done, if any).
    agent_ran: the commands it ran since the person last spoke (pushback on a destructive one).
    """
    t = (text or "").strip().replace("\u2019", "'")
    if t.count("\n") >= _TASK_ITEMS and task_written_out(t) and not rules_written_out(t):
        t = task_opening(t)     # a task written out starts new work: only its opening may say the last was wrong
    head = t[:_EARLY]
    if first:
        if not _STANDING_LEAD.match(head) and not _MAY_STAND.search(t):
            return None, ""     # no standing word anywhere in it: no standing rule (most first messages)
        found = lasting_sentence(t)
        standing = found and (_STANDING.search(found[0].split(";")[0]) or _STANDING_LEAD.match(head))
        return ("standing", "standing") if standing else (None, "")
    if refused:
        return "correction", "refusal"
    if _REQUEST.match(head) or chose(head, agent_said):
        return None, ""
    if _OPENER.search(head) or _PHRASE.search(head):
        if (_DECLINE.match(head) or _OTHER_CHOICE.search(head) and not _OPENER.search(head)
                and not _PHRASE.search(_OTHER_CHOICE.sub(" ", head))
                and not _CLAIM.search(agent_said or "") and not _DID.search(agent_said or "")) \
                and _OFFER.search(_last_sentence(agent_said)) and not any(_RULE.search(line) for line in own_lines(t)):
            return None, ""     # "no" or "X instead" to "Want me to ...?": an answer, not a correction
        return "correction", "words"
    if interrupted and is_redirect_after_interrupt(t):
        return "correction", "redirect"
    if _WRONG_FACT.search(head):
        return "correction", "fact"
    if states_otherwise(t, agent_said):
        return "correction", "fact"
    if contradicts_limit(head, agent_said):
        return "correction", "fact"     # "I was able to do it through the UI" after "it only supports ..."
    if _YOU_CAN.match(head) or _BUT_WE_DO.search(head):
        return "correction", "question"
    if _SET_BACK.search(head) or _REPORTS_FAILURE.search(head):
        said = "\n".join(own_lines(head))
        if _SET_BACK.search(said):
            return "correction", "words"
        if _REPORTS_FAILURE.search(said):
            return ("correction" if _CLAIM.search((agent_said or "")[-600:]) else "doubtful"), "fact"
    if habit(t):
        return "correction", "words"        # "keep each commit with working code": a practice, said in passing
    if is_pushback_on_destructive(t, agent_ran):
        return "correction", "question"
    if dislike(t):
        return "correction", "words"        # "i hate .sh tests, ...": a preference, after the agent acted
    mine = own_lines(t)
    if any(_RULE.search(line) for line in mine):
        return "correction", "words" if len(t) <= _EARLY else "late-instruction"
    questions = [q.strip() for q in _QUESTION.findall(head)] if "?" in head else []   # each ends with "?"
    if questions:
        if _THINK.match(head):
            return "doubtful", "question"
        if any(_PUSHBACK.search(q) and not _ASKS.search(q) and not _ADVICE.search(q) for q in questions):
            return "correction", "question"
    if review_findings(t) or bare_finding(t):
        # output the agent asked the person to produce ("Now run `debugWorkers()` in the console",
        # "try the upload again: this will show us …"), without saying its work was done: an answer
        # to it, which a judge may read; after a claim it still says the work was not done
        asked = _ASKED_TO_LOOK.search((agent_said or "")[-2000:]) and not _FIXED.search((agent_said or "")[-2000:])
        return ("doubtful" if asked else "correction"), "review"
    if reports_trouble(t):
        return "correction", "pasted-failure"      # "something's wrong: `Error: ...`", a log then "HALP"
    if pasted_failure(t):
        return ("correction" if _CLAIM.search((agent_said or "")[-600:]) else "doubtful"), "pasted-failure"
    if len(t) > _EARLY and lasting_sentence(t[_EARLY:]):
        return "correction", "late-instruction"
    rule = lasting_sentence(t) if _MAY_STAND.search(t) else None  # a standing word in it, first
    if rule and _STANDING.search(rule[0]):
        return "correction", "words"        # a standing rule, said after the agent acted
    if questions and any(_PLAIN_QUESTION.match(q) for q in questions):
        return "doubtful", "question"
    return chinese_verdict(t, agent_said)


# --------------------------------------------------------------------------------------
# Chinese: the plainest ways of saying the agent was wrong
#
# The language's common ways of saying "no, that's wrong", "it still doesn't work", "don't ...",
# "you forgot ...", "from now on ..." were written before any labelled Chinese session was read
# (session 55; public10, public11 and public20 had a third of their sessions in Chinese, and the
# rules found no correction typed in it); measured blind on public22 (ten sessions of six people
# typed in Chinese), they took detection there from 0.80 / 0.10 to 0.84 / 0.20. What public22 then
# showed was added (its figures since are no longer blind): Traditional characters read as the
# Simplified ones (_TRADITIONAL), a ban after a comma, "shouldn't", "(I) said so before", "think it
# over again", "not X but Y", a rhetorical "isn't it ...?", and a report that something does not
# show or cannot be opened, a correction after the agent said it was done (_ZH_CLAIM) and doubtful
# otherwise, as in English. Each is read at the start of the person's own lines or, for the phrases,
# early in them; what none of them says stays unread (a judge's). A correction found here is
# recalled as one and put to a judge first, but makes no lesson by the rules alone: they word none
# from Chinese.

# The Traditional characters of the words below, read as their Simplified ones (public22: two of
# its ten sessions were typed in Traditional characters, "還是點不開", "並沒有看到").
_TRADITIONAL = str.maketrans(
    "沒還對錯這說讓講後從開為麼確難應該記統刪樣個寫問題報敗變實現復決過銷滾別緊擔稱處經嗎請準須來點並啟動連論討覺順遍認誤標紅當",
    "没还对错这说让讲后从开为么确难应该记统删样个写问题报败变实现复决过销滚别紧担称处经吗请准须来点并启动连论讨觉顺遍认误标红当")
_ZH_EARLY = 100         # characters: as far in as a Chinese message is read for how it opens
_ZH_FILLER = r"^(?:(?:[嗯啊呃额哦噢哎唉诶欸]+|好吧|等等|等一下|那个)[\s,，.。!！、~～…]*)*"
# An opening that rejects or redirects: "不对" (that's wrong; not "对不对", right or not), "不是这样"
# (not like that), "错了" (wrong), "不行" (that won't do; not "行不行", "不行的话"), "别" and "不要"
# (don't; not "别的" other, "别忘了" don't forget, "不要紧" never mind), "停" (stop), "撤销", "回滚"
# (undo, roll back), "我的意思是" (I mean), "我说的是" and "我讨论的是" (what I said, what I was
# talking about), "你忘了" (you forgot), "你又" (you ... again).
_ZH_OPENER = re.compile(_ZH_FILLER + r"""(?:
      不对(?!吗) | 不是的 | 不是(?:这样|这个|那个|那样|我要的|我想要的) | (?:你|完全|全都|又)?(?:搞|弄|理解|写|改)?错了
    | 不行(?!的话|吗) | 别(?!的|人|名|处|称|急|忘|担心) | 不要(?!紧|急|客气|忘|担心)
    | 停(?:下来?|止|一下)?(?=[\s,，.。!！]|$) | 撤销 | 撤回 | 回滚 | 还原
    | 我(?:说|讲|讨论|问|指)的(?:是|不是) | 我的意思是 | 我是说 | 我不是(?:要|让|说)
    | 你(?:没有?(?!问题)|忘了|忘记|漏了|又|怎么又|怎么还) | 你为什么 | 为什么你(?!们)
    )""", re.X)
# Said early in a message, wherever: it still fails after the agent's work ("还是不行" still doesn't
# work, "又报错了" an error again, "依然没有生效" still no effect, "还是点不开" still can't be opened,
# "还没改" not changed yet; not the person's own "还是不能理解", I still can't understand, nor "没有生效
# 的话", if it takes no effect); a ban after a comma ("…，不要把变化放在右上角"); "不应该" (shouldn't);
# "之前讨论过" and "早就说过" (we went over this before); "再想想", "重新分析" (think it over again);
# "不是 X 而是 Y" (not X but Y); "没必要" (there is no need; not "不必要的代码", the unneeded code a
# new request names).
_ZH_PHRASE = re.compile(r"""(?x)
      (?:还是|依然|仍然|依旧|又)(?:是)?(?:不行|不对|没用|没有用|不起作用|没反应|没有反应|没变化|没有变化|一样|报错|出错|
        失败|有问题|有错|错|不能(?!理解|明白|确定)|没(?:有)?(?:生效|成功|通过|解决|修复|好|改|变))
    | (?:还是|依然|仍然|依旧)[\u4e00-\u9fff]{0,3}?不(?:开|了|到|上|出来|动|掉|进去|通)
    | 还没(?:有)?(?:生效|成功|通过|解决|修复|改|变)
    | (?:不|没|没有|未)(?:起作用|生效)(?!的话|就|吗)
    | [，,。；;！!]\s*(?:请)?(?:不要|别)(?!忘|担心|急|客气|紧|的|人)
    | 不应(?:该|当)?(?![^，,。？?]{0,12}[吗呢][？?]?)
    | (?:之前|刚才|早就|已经|上次)(?:就)?(?:讨论|说|讲|提|告诉你|强调)过
    | 再(?:想想|仔细|检查一下|确认一下)|重新(?:想|检查|分析|考虑)
    | 不是[^，,。？?]{1,15}而是
    | (?:没|没有|不太)必要""")
# Pushback as a question: "你确定" or "你确认" (are you sure; not "你确定一下", please check: public23's
# "你确认nvfp4的和mxfp4mxfp8的都实现对了吗", are you sure both are implemented right), "难道" (surely not
# ...?), "怎么又" (how come ... again), "不是……吗" (isn't it ...?; not "不是很好吗", isn't that good).
_ZH_PUSHBACK = re.compile(r"你确[定认](?!一下)|难道|怎么又|怎么还是|不是(?!很|挺|蛮|更|太)[^？?，,。]{0,20}[吗啊](?:[？?]|$)")
# Something the agent made does not show, or cannot be got or opened ("没看到这个表", "没实现拖拽",
# "获取不到数据", "点不开"): after the agent said it was done (_ZH_CLAIM, or in English _CLAIM) a
# correction, else doubtful, as a failure reported in English is.
_ZH_REPORTS = re.compile(r"(?:没|没有|并没有)(?:看到|实现|显示|出现|反应|效果)|(?:获取|拿|找|打|点|用|跑|启动|连|加载|登录)不(?:到|开|了|起来|上)")
_ZH_CLAIM = re.compile(r"已(?:经)?(?:完成|修复|解决|实现|更新|添加|修改|改好|搞定|部署|提交|推送)|(?:完成|修复|解决|实现|搞定)了|"
                       r"(?:测试|构建|编译)(?:全部|都)?通过|成功")
# A rule from now on: "以后都用 pnpm" (from now on always use pnpm), "以后不要" (never again), "永远不要"
# (never), "一律" (without exception), "记住：" (remember:). Not "每次都要" (public22: "现在每次都要
# 独立对话手动做", every time it has to be done by hand, says how it is now).
_ZH_STANDING = re.compile(r"(?:以后|今后|往后|从现在(?:开始|起))[,，\s]*(?:都|请|一律|必须|记得|永远|每次|不要|别|不准|禁止|统一)"
                          r"|永远(?:不要|别|不准|都)|一律(?:用|使用|不要|不准)|记住[：:，,]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def chinese_verdict(text: str, agent_said: str = "") -> tuple:
    """(verdict, form) of a message the person typed in Chinese, by its plainest ways of saying the
    agent was wrong (_ZH_OPENER, _ZH_PHRASE, _ZH_PUSHBACK, _ZH_REPORTS, _ZH_STANDING); (None, "")
    where none says it, or where the person's own lines hold fewer Chinese characters than words in
    Latin letters ("不要用 mock" is Chinese, "use the 中文 docs" is not)."""
    mine = "\n".join(own_lines(text)).strip()
    han = len(_HAN.findall(mine))
    if not han or han < len(_LATIN_WORD.findall(mine)):
        return None, ""
    mine = mine.translate(_TRADITIONAL)
    head = mine[:_ZH_EARLY]
    if _ZH_OPENER.match(head) or _ZH_PHRASE.search(head) or _ZH_STANDING.search(mine):
        return "correction", "words"
    if _ZH_PUSHBACK.search(head):
        return "correction", "question"
    if _ZH_REPORTS.search(head):
        claimed = (agent_said or "")[-600:]
        return ("correction" if _ZH_CLAIM.search(claimed.translate(_TRADITIONAL)) or _CLAIM.search(claimed)
                else "doubtful"), "fact"
    return None, ""

# What may say the agent was wrong, where no rule above decided: a negation, a contrast, a
# question, a rule word, "we", or a statement of how things are ("it's a test value"). A message
# with none of these is settled by the rules as a new request or a plain answer.
_UNSETTLED = _Source(r"""(?xi)\?|n't\b|\b(?:not|no|nope|but|instead|rather|still|why|wrong|again|should|always|never|
    actually|already|correct|incorrect|however|though|prefer|keep|we|our|only|anymore|every|whenever|mean|meant)\b
    | ^(?:\w+[,.]?\s+)?(?:it|that|this|there)(?:'s|\s+(?:is|was|are|were))\b""")
UNSETTLED_WORDS = 4             # "yes", "go ahead", "commit and push": settled as what they are


def unsettled(text: str) -> bool:
    """Whether the rules leave a message that is not a correction by them to a judge: the person's
    own lines (pasted output left out) hold UNSETTLED_WORDS words or more and something that may
    say the agent was wrong (_UNSETTLED). Only a judge reads such a message; the rules alone make
    nothing of it."""
    mine = " ".join(own_lines((text or "").replace("\u2019", "'")))
    return len(mine.split()) >= UNSETTLED_WORDS and bool(_UNSETTLED.search(mine))


# What cannot carry anything, whoever reads it: a plain approval or a nudge to go on ("yes",
# "lgtm", "go ahead", "continue", "resume" after a usage limit), nothing else in it. In the
# languages people here have written in too (public10 and public11, session 47: "继续" after an
# interrupt read as a redirect three times; the 36 such one-word messages of public3-11, in
# Chinese, Russian, Japanese, Korean and English, are every one labelled no correction).
_NOTHING_MORE = re.compile(r"""(?xi)^(?:(?:ok(?:ay)?|k|y|yes|yep|yeah|yup|sure|fine|great|good|thanks?|thank\s+you|
    thx|ty|perfect|nice|cool|awesome|excellent|lgtm|looks\s+good(?:\s+to\s+me)?|sounds\s+good|go\s+ahead|go\s+on|
    go\s+for\s+it|do\s+it|continue|resume|proceed|carry\s+on|keep\s+going|please|approved?|correct|right|
    alright|all\s+right|done|
    继续执行|继续吧|继续|好的|好吧|可以|同意|是的|开始执行|执行吧|执行|行|嗯|
    続けてください|続けて|お願いします|はい|
    продолжай|продолжи|продолжаем|давай|хорошо|да|ок|
    계속해(?:요|줘)?|계속|네|좋아요|좋아|
    s[ií]|sigue|contin[uú]a|dale|vale|adelante|
    ja|weiter|oui|vas-y)[\s,.!:)，。！、～~啊吧呀哦嘛]*)+$""")


# A message that is one block Claude Code wrote into the person's turn (`<agent-notification>`
# with its id, output file and status: a background agent finished), not words anyone typed.
_HARNESS_BLOCK = re.compile(r"(?s)^\s*<([a-z][a-z0-9]*(?:-[a-z0-9]+)+)>.*</\1>?\s*$")


def carries_nothing(text: str, earlier=()) -> bool:
    """Whether a message the person typed cannot carry a correction or a lesson, by its words
    alone: no words of their own (empty, or only pasted output), only approval or a nudge to go
    on (_NOTHING_MORE: "yes", "lgtm", "continue", "resume"), one block Claude Code wrote
    (_HARNESS_BLOCK: a background agent's notification), or the same words as a message sent
    before in the session (earlier: those messages' texts)."""
    mine = " ".join(" ".join(own_lines((text or "").replace("\u2019", "'"))).split())
    if not re.search(r"\w", mine) or _NOTHING_MORE.match(mine) or _HARNESS_BLOCK.match(text or ""):
        return True
    said = " ".join((text or "").split()).lower()
    return any(said == " ".join(str(e).split()).lower() for e in earlier)


# --------------------------------------------------------------------------------------
# What lasts: the sentence of the person's words worth keeping beyond this moment

# Openers that carry no instruction ("ok so", "no,", "wait.", "actually").
FILLER = re.compile(r"^(?:(?:ok(?:ay)?|ah+|oh+|hm+|uh+|um+|well|so|hey|sorry|actually|alright|right|hmm+|yes|yeah|"
                    r"sure|great|good|never mind|nevermind)\b[\s,.!:;…—-]*|(?:no+|nope|nah|wait|stop|hold on|wrong|incorrect|"
                    r"(?:that|this|it)(?:'?s| is) (?:wrong|incorrect|not (?:right|correct)))(?:[\s]*[,.!:;…—-]+\s*|\s+"
                    r"(?=don'?t\b|do not\b|never\b|use\b|run\b|just\b|please\b|not\b|we\b|you\b|let'?s\b|i\b)))+", re.I)
# Leads before the instruction itself; the person's scope words go too (the lesson's own
# "In this repository" stands for them).
LEAD = re.compile(r"^(?:please\s+|just\s+|let'?s\s+|let us\s+|you (?:should|need to|must|have to)\s+|"
                  r"we (?:should|need to|must|have to)\s+|i (?:want|need) you to\s+|make sure (?:to|you)\s+|"
                  r"(?:and\s+)?remember (?:to|that)\s+|from now on,?\s+|going forward,?\s+|in (?:the )?future,?\s+|"
                  r"next time,?\s+|in this (?:repo|repository|project|codebase),?\s+|here,\s+|"
                  r"(?=we (?:use|always|never|only|don'?t)\b)we\s+|(?=we \w+ [^,]*,\s*not\b)we\s+)+", re.I)
IMPERATIVE = re.compile(
    r"^(?:don'?t|do not|(?:never|always)(?!\s+(?:nice|good|great|fun|cool|happy|so|a|an|the|been)\b)|only|stop|avoid|use|run|prefer|keep|put|call|add|remove|write|check|make|"
    r"set|pass|install|import|leave|ask|read|edit|delete|commit|push|test|build|start|restart|switch|move|"
    r"rename|follow|include|exclude|skip|point|mock|return|wrap|target|pin|try|change|update|create|open|"
    r"store|save|log|print|handle|name|place|stick|go|look|search|merge|rebase|deploy|format|lint|type|"
    r"split|join|drop|stay|work|ship|reuse|document|comment|mention|tell|show|catch|raise|open)\b", re.I)
# An imperative after a condition: "in the container use ...", "before you push, run ...".
# (a verb after its subject is no instruction: "if we use a key that is X, this could ..." is a thought)
_CONDITIONED = re.compile(r"^(?:(?:in|on|for|inside|within|when|whenever|before|after|if)\s+(?:[\w./`'-]+,?\s+)"
                          r"{1,5}?(?<!\bwe\s)(?<!\byou\s)(?<!\bi\s)(?<!\bthey\s)(?<!\bit\s)(?<!\bhe\s)(?<!\bshe\s))?"
                          + IMPERATIVE.pattern[1:], re.I)
# What makes an instruction last beyond the moment: a prohibition, a rule, a preference, a
# contrast, or a named tool to do it with.
_LASTING = _Source(r"\b(?:don'?t|do not|never|always|only|stop|avoid|prefer|instead|rather than|use|using)\b|"
                   r",\s*not\b|\bnot\s+[`'\"]|\bwith\s+[`'\"]", re.I)
# Words that make a sentence a standing rule (what a first message, a paste or a review needs).
# ("so that in future we can recall …" gives a purpose, no rule: public20, session 54, a live lesson)
_STANDING = _Source(r"(?i)\b(?:always|never|from now on|going forward|(?<!so )(?<!so that )in (?:the )?future|"
                    r"every ?time|whenever|"
                    r"everywhere|in this (?:repo|repository|project|codebase)|"
                    # (not what "we" want, need or have to do now: "but not too many as we don't want to max
                    # out on tokens", public15, session 49, a live lesson quoting it)
                    r"(?<!so )(?<!if )(?<!that )(?<!when )(?<!until )we (?:always|never|only|don'?t|do not)"
                    r"(?!\s+(?:want|need|have)\s+to\b)|"
                    r"don'?t ever|(?:should|must|shall)(?:n'?t|\s+not)\s+(?:\w+\s+){0,3}?ever|"
                    # "next time" before what to do then, not ending what is asked now ("save our
                    # conversation for when i reopen next time": public13, session 48, a live lesson)
                    r"next time(?![ \t]*(?:[.!?;)]|$)))\b")
# Where _STANDING finds nothing in a message it finds nothing in a sentence lasting_sentence
# cuts from it, but for the word boundary at its end (a cut can end a word): so without that.
_MAY_STAND = _Source(_STANDING.pattern.removesuffix(r"\b"), _STANDING.flags)
_STANDING_LEAD = re.compile(r"(?i)\s*(?:from now on|going forward|in (?:the )?future|for (?:all|every) future)\b")
_STRONG = _Source(r"(?i)\b(?:always|never|instead|rather than|'d rather|not|don'?t|do not|avoid|only|must|"
                  r"everywhere|from now on|in future)\b|,\s*not\b")
# A statement of how things are, set against what the agent assumed ("X, not Y") ...
FACT = _Source(r"(?:\b(?:is|are|lives?|goes|go|belongs?|runs?|sits?|comes?)\b|'s\b).*(?:,\s*not\s+\S|\binstead of\b|"
               r"\brather than\b)", re.I)
# "it's `make lint`, not `npm run lint`": code set against code is a fact, not a diagnosis
_CODE_CONTRAST = re.compile(r"`[^`]+`,?\s+not\s+`[^`]+`")
# A claim about a named thing set straight with what it is ("claude stop is not correct, that is
# at the end of the turn", "the full schema should not be updated ever, it is a snapshot"): the
# claim judged wrong or a rule, then what the thing is, where or when. Not a pronoun's state of the
# moment ("it's not right, it's too small", "the page isn't loading, it's blank").
_SET_STRAIGHT = re.compile(r"""(?xi)^(?!(?:it|that|this|they|there|he|she|you|i|we)\b)(?:[\w`'".-]+\s+){1,4}?
    (?:(?:is|are|was|were)(?:n'?t|\s+not)\s+(?:correct|right|true|accurate|how|what|where|when)\b
       | (?:should|must|shall)(?:n'?t|\s+not)\s+\w)[^,;]{0,60},\s+(?:since\s+|because\s+)?
    (?:it|that|this|they)(?:'s|\s+is|\s+are|'re)\s+(?:only\s+|just\s+)?(?:a|an|the|at|in|on|for|when|where|part\s+of)\s""")
# ... but not a diagnosis of the moment ("the issue is the linter, not db:generate").
_DIAGNOSIS = re.compile(r"^(?:the\s+(?:issue|problem|bug|cause|error|reason|fix|culprit)|it|it'?s|that|that'?s|"
                        r"this|this is|i|i'?m|we'?re|you|you'?re|maybe|probably|seems)\b", re.I)
# A standing statement in the person's own voice ("we do container-first", "I'd rather X than
# Y", "that endpoint was removed", "X is banned"): kept, quoted, as it was said.
_STATEMENT = _Source(r"""(?xi)
      \b(?:we|i)\s+(?:\w+\s+)?(?:don'?t|do\s+not|never)\s+(?:want|use|do)\b | \b(?:we|i)'?d\s+rather\b.*\bthan\b
    | (?<!so\s)(?<!if\s)(?<!that\s)(?<!when\s)(?<!until\s)(?<!because\s)\bwe\s+(?:don'?t|do\s+not|never)\s+(?!need|have|know|see|get|care|mind|think|understand|really|even|yet|just|
        actually|want|use|do|forget|lose|break)[a-z]\w+
    | \bwe\s+(?:always|only|never)\b | \bwe\s+do\s+(?!need|want|have|not|know|see|get)[\w-]+
    | \bwe'?re\s+(?:on|using)\s+\S+ | (?<!if\s)(?<!when\s)(?<!whether\s)\bwe\s+(?:use|moved\s+to|switched\s+to|migrated\s+to)\s+\S+
    | \bour\s+\w+(?:\s+\w+)?\s+(?:runs?|lives?|uses?)\s+(?:on|in|at)?\s*\S+
    | \b(?:is|are)\s+(?:banned|forbidden|not\s+allowed|deprecated|obsolete|no\s+longer\s+used)\b
    | \b(?:is|are)\s+not\s+(?:a|an|the)\s+(?:fix|solution|option|answer)\b
    | \bwe\s+(?:already\s+)?have\s+(?:our\s+own|an?\s+\w+\s+for\s+that)\b
    | \b(?:was|were|has\s+been|have\s+been)\s+(?:removed|deprecated|renamed|dropped|replaced)\b
    | \bhas\s+(?:since\s+)?become\s+available\b""")
# ... and one that needs a contrast or a standing word to last ("it needs to be local, not in
# the cloud"; not "it needs to be faster").
_NEEDS = re.compile(r"(?i)\b(?:needs?|has|have)\s+to\s+(?:be|call|use|run)\b|\bmust\s+(?:be|use|run)\b")
_CONTRASTED = re.compile(r"(?i),\s*not\b|\binstead of\b|\brather than\b|\bnot\s+\w+\s+(?:but|in)\b")
_ALREADY = re.compile(r"(?i)^(?:didn'?t|don'?t|haven'?t)\s+we\s+already\b")
_REMEMBER = re.compile(r"(?i)^\s*(?:and\s+|also\s+)?(?:please\s+)?(?:remember|note|keep in mind|fyi)\s*(?:that\b|:|,)\s*")
# Words of the moment: what holds them holds nothing lasting ("try again", "still", "I think").
_MOMENT = _Source(r"(?i)\b(?:again|still|right now|for now|this time|wth|looks like|seems|i think|maybe|"
                  r"probably|yet|this test|this file|the other one|the other file|"
                  r"for a (?:second|sec|moment|minute|bit))\b|\?$"
                  r"|^(?:don'?t\s+|do not\s+|never\s+)?\w+\s+(?:it|that|this|them|those|these)\b(?!\s+(?:is|are)\b)"
                  # "(we) don't need to restore the server": a step is unneeded now, no rule
                  r"|^(?:don'?t|do not|no)\s+(?:need|have)\s+to\b")
# Markers that alone do not make an instruction last: they need something concrete with them
# (code, a path, a flag, a tool) or a standing word ("use the other file" is of the moment).
_FIRM = _Source(r"(?i)\b(?:never|always|don'?t|do not|avoid|stop|prefer|rather than|'d rather|must)\b|,\s*not\b")
# Tools a person names in prose: concrete enough for a rule, and put in backticks in a lesson.
TOOLS = frozenset({
    "npm", "pnpm", "yarn", "bun", "deno", "node", "npx", "pip", "pipx", "uv", "poetry", "pytest", "ruff", "black",
    "isort", "flake8", "mypy", "pyright", "eslint", "biome", "prettier", "tsc", "vitest", "jest", "mocha",
    "playwright", "cypress", "tox", "nox", "cargo", "rustc", "docker", "podman", "kubectl", "git", "gh", "psql",
    "mysql", "curl", "wget", "python", "python3", "bundle", "rake", "rails", "mix", "alembic", "prisma",
    "terraform", "httpx"})
_CONCRETE = re.compile(r"`[^`]+`|['\"][^'\"]+['\"]|\S+[./:=]\S+|(?<!\w)--?[A-Za-z][\w-]*|\b[a-z]+_[a-z_]+\b|"
                       r"\b[a-z]+[A-Z]\w*\b|\b(?:make|unittest|" + "|".join(sorted(TOOLS)) + r")\b")
_FEELING = re.compile(r"(?:,\s+|\s+and\s+)i\s+(?:don'?t|do not|want|need|think|feel|hate|like)\b.*$", re.I)


# Go's package patterns end in three dots ("go test ./...", "pkg/..."): part of the command, not
# an ellipsis, so never a sentence's end nor punctuation to trim.
_PATH_DOTS = "/..."


def end_trimmed(text: str, chars: str = ".!") -> str:
    """text without the sentence punctuation (chars) it ends with; a path's "/..." stays, also
    before other punctuation ("run go test ./...!")."""
    kept = text.rstrip(chars.replace(".", "") + " ")
    return kept if kept.endswith(_PATH_DOTS) else text.rstrip(chars)


def sentences(said: str):
    """The person's own sentences, list marks and pasted output left out."""
    for sentence, _ in _sentences(said):
        yield sentence


def _sentences(said: str):
    """(sentence, of a question) of the person's own sentences (sentences): of a question are
    its parts, what the person asks about and not what they ask for — an aside in parentheses
    after a question ("…, right? (we use go-git elsewhere …)") and the options listed under one
    ("Which approach is better?" then "1. Asking only once …")."""
    options, before = False, ""
    for line in own_lines(said):
        listed = bool(_LIST_MARK.match(line))
        options = listed and (options if before == "list" else before.endswith("?"))
        before = "list" if listed else line.rstrip()
        line = re.sub(r"^\s*(?:\d+[.)]|[-*•])\s+", "", line)
        aside = last = ""
        for s in split_outside_code(r"(?<=[.!?])(?<!/\.\.\.)\s+|\s{2,}|\s+-\s+|(\()|(\))", line):
            if s is None:           # a separator other than a parenthesis
                continue
            if s == "(":
                aside = "?" if last.endswith("?") else "("
            elif s == ")":
                aside = ""
            elif s.strip():
                yield s.strip(), options or aside == "?"
                last = s.strip()


_CODE_SPAN = re.compile(r"`[^`\n]+`")


def split_outside_code(pattern: str, line: str) -> list:
    """re.split(pattern, line) where code spans stay whole: "run `source <(kubectl completion
    bash)` first" is one sentence, not "run `source <" and what follows its parenthesis."""
    spans = _CODE_SPAN.findall(line)
    if not spans:
        return re.split(pattern, line)
    masked = _CODE_SPAN.sub(lambda m: f"\x00{spans.index(m.group())}\x00", line.replace("\x00", ""))
    return [re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], part)
            for part in re.split(pattern, masked) if part is not None]


def lasting_sentence(said: str, strict: bool = False):
    """(sentence, form) of the sentence of what the person typed that holds the most lasting
    thing, or None: form is 'imperative', 'fact' or 'statement'. strict (the words come with
    pasted output or review findings): only a standing rule counts."""
    found = _lasting(said, strict)
    return found[:2] if found else None


# The person asking for it to be kept beyond this session ("so you remember this", "add this to
# CLAUDE.md"): what they said before it is what to keep.
_KEEP_IT = re.compile(r"(?i)\bso (?:that )?you(?:'ll| will)? remember\b|\bremember (?:this|that) (?:for|next|from)\b|"
                      r"\badd (?:this|that|it) to (?:your |the )?(?:claude\.md|memory|memories)\b|"
                      r"\bkeep (?:this|that) in mind (?:for|next|from)\b|\bfor future (?:reference|sessions)\b")
# A sentence of the moment whatever its words: a task about one item (#91, this PR) or a
# request to explain or show something rather than to do it, or to report back on it ("dont
# necessary fix it, just check it let me know why its flaky").
_ONE_OFF = _Source(r"(?i)(?<![\w&])#\d+\b|\bthis\s+(?:pr|pull request|branch|commit|issue|ticket|change|diff|"
                   r"function|method|line|section|readme)\b|^(?:explain|tell|show|describe|walk me|summari[sz]e|"
                   r"give me)\b|\blet me know\s+(?:why|what|how|if|whether|which)\b"
                   # answer only, this time: "please don't make any changes", "don't touch anything" (public12)
                   r"|\b(?:don'?t|do\s+not|dont)\s+(?:\w+\s+){0,3}?(?:make|do)\s+any\s+(?:changes|edits)\b"
                   r"(?!\s+(?:to|in|under|inside|within|on|of|from)\b)"
                   r"|\b(?:don'?t|do\s+not|dont)\s+(?:change|edit|modify|touch)\s+anything\b"
                   r"(?!\s+(?:in|under|inside|within|on|of|from|else)\b)")
# Said of this session only ("Only answer questions for this session"): what it asks lasts no further.
_THIS_SESSION = re.compile(r"(?i)\bfor\s+this\s+(?:session|conversation|chat)\b")
# A clause that only asks not to do something: a ban, lasting when said as standing or said again.
_NEGATIVE_CLAUSE = re.compile(r"(?i)^(?:don'?t|do not|never|not|no|stop|avoid)\b")


def right_under_a_paste(said: str, sentence: str) -> bool:
    """Whether the line that holds `sentence` comes right under pasted lines, with no blank line
    between: a line of prose a tool printed last (a traceback's "Never edit config.json by hand,
    always run ops-sync instead.") reads there exactly as what the person typed under their
    paste, so neither may stand as a rule on its own (ARCHITECTURE.md, "Who said what")."""
    probe = (sentence or "").strip()[:40]
    if not probe:
        return False
    lines = (said or "").splitlines()
    own = set(own_lines(said))
    for n, line in enumerate(lines):
        if probe in line:
            return _after_pasted(lines, own, n)
    return False


def _after_pasted(lines: list, own: set, n: int) -> bool:
    """Whether lines[n] comes right after a pasted line (not blank, not one of own)."""
    return n > 0 and bool(lines[n - 1].strip()) and lines[n - 1] not in own


def lines_under_a_paste(said: str) -> list:
    """The person's own lines (own_lines) that sit right under pasted lines, with no blank line
    between, read on a message's whole text: a correction stores them (facts `under`) where what it
    stores of the text is cut (episodes.DETAIL_LIMIT), as a line past the cut can no longer be
    told from one typed apart from the paste (session 58: a traceback of 3,200 characters whose
    last line read "From now on never edit config.json by hand …" was made live on its standing
    words)."""
    lines = (said or "").splitlines()
    own = set(own_lines(said))
    return [line.strip() for n, line in enumerate(lines) if line in own and _after_pasted(lines, own, n)]


def under_a_paste(facts: dict, sentence: str) -> bool:
    """right_under_a_paste for a stored correction: on the lines its whole text had right under a
    paste (facts `under`, stored where its text was cut), else on the text it stores."""
    probe = (sentence or "").strip()[:40]
    if not probe:
        return False
    if "under" in facts:
        return any(probe in str(line) for line in facts.get("under") or ())
    return right_under_a_paste(str(facts.get("said") or ""), sentence)


# The rules read English (ROADMAP, "Languages"): in a message written in another language with
# Latin letters they find English words ("Merci. Stop ici. Je passe en review humaine …" made the
# candidate "In this project stop ici.", public13, session 48) and no rule. Its function words
# tell it: French, Spanish, Portuguese, Italian, German and Dutch ones that English does not share.
_OTHER_WORDS = frozenset("""
le les une des du et est je tu il elle nous vous ils que qui ne pas cette pour dans sur avec au aux
mais ou donc ici moi toi oui merci fais faire tout nos notre votre c'est j'ai n'est d'un
el los las unos del es por para muy pero como esto esta este hola gracias puedes quiero también
os um uma da dos das não com você isso obrigado
gli di è che non della questo grazie
der das und ist nicht ich wir ein eine mit für auf dem zu im auch bitte danke
het een niet ik je wij voor op
""".split())
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def in_other_language(text: str) -> bool:
    """Whether the person wrote this in a language with Latin letters other than English: more of
    its function words (_OTHER_WORDS, two at least) than English ones (embed.STOP_WORDS)."""
    words = [w.lower() for w in _WORD.findall(text or "")]
    other = sum(w in _OTHER_WORDS for w in words)
    return other >= 2 and other > sum(w in embed.STOP_WORDS for w in words)


OTHER_SCRIPT_SHARE = 0.2     # of its letters beyond ASCII: Chinese, Russian, Korean, Vietnamese (0.29), not "café"


def not_english(text: str) -> bool:
    """Whether the rules cannot read this: another language with Latin letters (in_other_language),
    or letters mostly of another script or with a language's marks (a fifth of them or more)."""
    letters = [c for c in text or "" if c.isalpha()]
    if len(letters) < 4:
        return False
    return in_other_language(text) or sum(c > "\x7f" for c in letters) >= OTHER_SCRIPT_SHARE * len(letters)


# "Don't get what you're trying to figure out" is "I don't get …" with its subject dropped, not a
# ban on getting (public13, session 48: the candidate "In this project don't get what you're trying
# to figure out."): what the person does not understand, know or see, up to the clause's end. No one
# bans understanding, knowing or remembering, whatever follows: "don't understand the issue" after an
# interrupt made the candidate "In this project don't understand the issue." (public16, session 51).
_NOT_UNDERSTOOD = re.compile(r"(?i)(?:^|(?<=[.!?]\s))(?:don'?t|do\s+not)\s+(?:"
                             r"(?:get|know|understand|see|follow)\s+(?:what|why|how|where|which|whether|if|who|when|the\s+point)\b|"
                             + _UNBANNABLE + r")[^.!?,;\n]*[.!?,;]?[ \t]*")


def what_lasts(said: str, form: str = "") -> dict:
    """What of the person's own words lasts beyond this moment, by the rules (ARCHITECTURE.md,
    "What is worth remembering"): {"sentence", "kind" (imperative | fact | statement),
    "standing" (said as a standing rule: always, never, from now on, in this repo we ...),
    "lasting" (worth keeping: not a one-off task or a request to explain, and a ban only when
    standing), "ban", "one_off" (a task about one item or a request to explain)}. sentence
    None: nothing lasts. form: the correction's; after pasted output or review findings only a
    standing rule in the person's own lines counts."""
    said = said or ""
    if in_other_language(said):
        return {"sentence": None, "kind": "", "standing": False, "lasting": False, "ban": False, "one_off": False}
    said = _NOT_UNDERSTOOD.sub("", said)
    found = _lasting(said, form in ("review", "pasted-failure"))
    disliked = dislike(said) if form not in ("review", "pasted-failure") else None
    if disliked and _OF_THE_OFFERED.match(disliked):
        disliked = None         # a verdict on what was just offered: no rule
    if disliked and (found is None or not _STANDING.search(found[2])):
        found = (f"avoid {disliked}", "imperative", said)     # "i hate .sh tests": a preference that lasts
    keep = bool(_KEEP_IT.search(said)) or bool(disliked)
    task = task_written_out(said)
    if task and found is not None and not _STANDING.search(found[2]):
        found = _lasting(said, True) or found       # of a task's list, its standing rule if it has one
    if found is None and keep:
        found = _said_before_keep(said)
    if found is None:
        return {"sentence": None, "kind": "", "standing": False, "lasting": False, "ban": False, "one_off": False}
    sentence, kind, raw = found
    standing = bool(_STANDING.search(raw) or _STANDING_LEAD.match(said.strip()))
    clauses = [c for c in re.split(r",\s+|;\s+|\s+but\s+", sentence) if c.strip()]
    ban = kind == "imperative" and all(_NEGATIVE_CLAUSE.match(c.strip()) for c in clauses)
    one_off = bool(_ONE_OFF.search(sentence)) or (task and not standing and not keep) or bool(_THIS_SESSION.search(said))
    lasting = not one_off and (standing or keep or practice(sentence) or not ban)
    return {"sentence": sentence, "kind": kind, "standing": standing, "lasting": lasting, "ban": ban,
            "one_off": one_off}


# A task written out as a list of its steps or requirements (a spec given as the prompt, "1. ...",
# "- Don't skip ahead.", "- `schema.ts`: locked, do not change."): what it asks is this task's own.
_TASK_ITEMS = 5


def task_written_out(said: str) -> bool:
    """Whether the person's own lines list a task's steps or requirements: five list items or more.
    Its constraints hold for that task; one lasts beyond it only when said as a standing rule
    ("from now on", "always", "in this repo we ...") or asked to be kept (what_lasts)."""
    return sum(1 for line in own_lines(said) if _LIST_MARK.match(line)) >= _TASK_ITEMS


# An item that is a rule by its first word: "1. Never push to main", "- Don't edit generated files"
_RULE_ITEM = re.compile(r"(?i)^\s*(?:\d+[.)]|[-*•])\s+(?:\*\*)?(?:never|always|don'?t|do\s+not|avoid|no\s+longer)\b")


def rules_written_out(said: str) -> bool:
    """Whether a list the person wrote out is one of rules, not a task's steps: half its items or
    more open with a rule's word ("A few rules for this repo: 1. Never push to main 2. Always use
    pnpm ..."). Read by its opening alone (task_opening) it said nothing, and every rule in it was
    lost; a task's "Don't" lines that scope it are a few among its steps."""
    items = [line for line in own_lines(said) if _LIST_MARK.match(line)]
    return bool(items) and 2 * sum(1 for line in items if _RULE_ITEM.match(line)) >= len(items)


def task_opening(said: str) -> str:
    """What a written-out task (task_written_out) says before it: its lines up to the first blank
    line or the first item of its list ("The dashboard has real layout bugs. Fix these ..."; "We're
    making three changes to the dashboard. Do them in this order."), else its first line. A task
    written out is a new request, whatever its length and its items say: its "don't ..." lines
    scope that task, and a rule deep in it is one of its requirements, not a late instruction
    after a paste. Only the words that open it can say the agent's last work was wrong."""
    lines = said.strip().splitlines()
    opening = []
    for line in lines:
        if not line.strip() or _LIST_MARK.match(line):
            break
        opening.append(line)
    return "\n".join(opening) or (lines[0] if lines else "")


def _said_before_keep(said: str):
    """What the person asked to keep: the first sentence of theirs before the asking."""
    before = _KEEP_IT.split(said, maxsplit=1)[0]
    for part in sentences(before):
        words = part.split()
        if len(words) >= 5 and not part.endswith("?") and not _KEEP_IT.search(part) \
                and not re.match(r"(?i)i\s+(?:wonder|think|guess)\b", part):
            return end_trimmed(part), "statement", part
    return None


def _lasting(said: str, strict: bool):
    """lasting_sentence's reading, with the person's sentence as they wrote it: (sentence, form, raw)."""
    found = []
    read = list(_sentences(said))
    parts = [sentence for sentence, _ in read]
    for n, raw in enumerate(parts):
        after = parts[n + 1] if n + 1 < len(parts) else ""
        judged = _judge(raw) if raw and not read[n][1] else None     # a question's part asks
        # a sentence that opens a list ("instruct Claude to do the following:") is not the first
        # half of the next ("- Never use the `any` type …"), which is read on its own (public17's
        # "… do the following:, Never use the `any` type when writing TypeScript.")
        opens = raw.rstrip().endswith(":")
        if judged is None and raw and not opens and re.match(r"(?i)(?:not|never)\s", after) and len(after.split()) <= 8:
            judged = _judge(f"{end_trimmed(raw)}, {after}")     # "it needs to be local. not in the cloud"
            after = parts[n + 1] = "" if judged else after
        if judged is None or (strict and not _STANDING.search(raw)):
            continue
        if judged[1] == "statement" and after and not opens and len(judged[0]) + len(after) < 110 and (
                re.match(r"(?i)(?:not|never)\s", after) and len(after.split()) <= 8 or _judge(after)):
            judged = (f"{judged[0]}, {end_trimmed(after)}", judged[1])   # "..., not claude in the cloud"
        score = 2 if (_STRONG.search(judged[0]) or judged[1] != "imperative") else 1
        found.append((score, -len(found), judged + (raw,)))
    return max(found)[2] if found else None


# A step of the task at hand, finished or done again ("complete the commit", "fix the test"), said
# before a standing rule ("complete the commit, always verify and run hooks"): what lasts is the rule.
_TASK_NOW = re.compile(r"(?i)^(?:please\s+)?(?:complete|finish|redo|retry|continue|resume|fix|undo|amend|re-?run|"
                       r"commit|push)\s+(?:the|this|that|it|your|my)\b[^,;]*$")
# How the person wants it, against how the agent did it: "not as a comment, but as a document".
_NOT_BUT = re.compile(r"(?i)^not\s+(?:as|in|with|on|via|through|by|using|into|under|from)\s+[^,.]{2,60},?\s*but\s+"
                      r"(?:as|in|with|on|via|through|by|using|into|under|from)\s+\S")
# A convention of the team said in a clause after another ("that is not correct, we don't ...").
# What the task at hand needs, said as such ("we need to fetch the commit date too"): no rule.
_TASK_NEED = re.compile(r"(?i)\s*(?:we|you|i)\s+(?:will\s+)?(?:also\s+)?(?:need|have|want)\s+to\b")
_CONVENTION_CLAUSE = re.compile(r"(?i)(?:,|;|\bbut)\s+(?=we\s+(?:don'?t|do\s+not|never|always|only)\s+[a-z])")


def _judge(raw: str):
    raw = _EMPHASIS.sub(r"\1", raw)
    asked = _YOU_CAN.match(raw.strip())
    if asked:
        return f"{asked.group(1)} {asked.group(2)}", "imperative"    # "you can use your LSP right?"
    if _NOT_BUT.match(raw):
        return end_trimmed(raw, ".!… "), "statement"
    if _ALREADY.match(raw):
        return raw.rstrip("?") + "?", "statement"     # "didn't we already drop 3.8?": a fact, asked
    remember = _REMEMBER.match(raw)
    if remember and _TASK_NEED.match(raw[remember.end():]) and not _STANDING.search(raw):
        return None     # "keep in mind that we need to build metrics on the whole files": this task's need
    if remember and len(raw[remember.end():].split()) >= 3:
        return end_trimmed(raw[remember.end():].strip()), "statement"   # "remember: staging needs VPN"
    opened = re.sub(r"(?i)^let'?s\s+not\b", "don't", FILLER.sub("", raw).strip())
    s = LEAD.sub("", opened).strip()
    # "ok" a word of its own, not the end of one ("sales hook." was "sales ho", "webhook" "webho": public14)
    s = re.sub(r"[,;]?\s*(?:please|thanks|thank you|i think|i guess|\bok\??)[.!]*$", "", s, flags=re.I).strip()
    s = end_trimmed(_FEELING.sub("", s), ".!…, ")
    task, sep, rule = s.partition(", ")
    if sep and _TASK_NOW.match(task) and _STANDING.search(rule) and not _STANDING.search(task):
        s = opened = re.sub(r"(?i)^(?:and|but|so|then)\s+", "", rule).strip()    # the task goes, the rule stays
    if not s or s.endswith("?") or len(s.split()) < 2 or _MOMENT.search(s):
        return None
    if _CONDITIONED.match(s):
        marked = _LASTING.search(re.sub(r"\bto avoid\b", "", s))
        strong = _STANDING.search(opened) or _FIRM.search(s) or practice(s)
        if strong or (marked and _CONCRETE.search(s)):
            return s, "imperative"
        return None
    if _SET_STRAIGHT.match(s):
        return s, "fact"                # "claude stop is not correct, that is at the end of the turn"
    if FACT.search(s) and (not _DIAGNOSIS.match(s) or _CODE_CONTRAST.search(s)):
        return s, "fact"
    if re.search(r"(?i),\s+(?:please\s+)?(?:don'?t|do not|never|always)\s+(?!worry|bother|mind)\w+", s):
        return s, "fact"                # "the docs are generated, don't edit docs/api by hand"
    clause = _CONVENTION_CLAUSE.search(s)
    if clause and _STATEMENT.search(s[clause.end():]):
        return s[clause.end():], "statement"     # "..., we don't gitignore the whole folder"
    if _STATEMENT.search(s) or (_NEEDS.search(s) and (_CONTRASTED.search(s) or _STANDING.search(opened))):
        return s, "statement"
    return None


# --------------------------------------------------------------------------------------
# The patterns above, each led by what its matches can open with

# A search tries a pattern of many alternatives (each opening with \b) at every place of the
# text, every alternative in turn. Led by a look-ahead for the characters a match can open
# with (read from the pattern itself, so a rule added above is covered), most places fail at
# once: the same matches, in 0.5-0.8 of the time on the dev corpus's messages (OPERATIONS.md,
# "The tenth round"). A pattern whose openings cannot be told is kept as it is.
_CATEGORIES = {_sre.CATEGORY_SPACE: r"\s", _sre.CATEGORY_NOT_SPACE: r"\S", _sre.CATEGORY_DIGIT: r"\d",
               _sre.CATEGORY_NOT_DIGIT: r"\D", _sre.CATEGORY_WORD: r"\w", _sre.CATEGORY_NOT_WORD: r"\W"}
_REPEATS = tuple(op for op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None)) if op)


class _Untold(Exception):
    """What a match of the pattern can open with is not told by _openings."""


def _char(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _openings(items) -> tuple:
    """(characters as a class's parts, whether at the start, whether empty) of what a match of
    these parsed items can open with: a zero-width assertion (\\b, a look-around) passes it on
    to what follows, an optional part adds what follows it, `^` stands for the start itself."""
    found, start = set(), False
    for op, av in items:
        if op is _sre.AT:
            if av in (_sre.AT_BOUNDARY, _sre.AT_NON_BOUNDARY):
                continue
            if av in (_sre.AT_BEGINNING, _sre.AT_BEGINNING_STRING):
                return found, True, False
            raise _Untold
        if op in (_sre.ASSERT, _sre.ASSERT_NOT):
            continue
        if op is _sre.LITERAL:
            return found | {_char(av)}, start, False
        if op is _sre.IN:
            for kind, value in av:
                if kind is _sre.LITERAL:
                    found.add(_char(value))
                elif kind is _sre.RANGE:
                    found.add(f"{_char(value[0])}-{_char(value[1])}")
                elif kind is _sre.CATEGORY and value in _CATEGORIES:
                    found.add(_CATEGORIES[value])
                else:
                    raise _Untold       # a negated class, a category not listed
            return found, start, False
        if op is _sre.SUBPATTERN and not av[1] and not av[2]:     # a group that sets no flag
            inner = [av[3]]
        elif op is _sre.BRANCH:
            inner = av[1]
        elif op in _REPEATS:
            inner = [av[2]]
        else:
            raise _Untold
        empty = op in _REPEATS and av[0] == 0
        for seq in inner:
            f, s, e = _openings(seq)
            found, start, empty = found | f, start or s, empty or e
        if not empty:
            return found, start, False
    return found, start, True


def _led(source) -> re.Pattern:
    """The pattern (a _Source, or compiled) led by a look-ahead for what its matches can open
    with (or the start, for an alternative anchored there), under its own flags (those given and
    those inline, as the pattern compiled alone has them): the same matches and groups; the
    pattern as it is when that cannot be told."""
    try:
        parsed = _sre_parse.parse(source.pattern, source.flags)
        flags = parsed.state.flags
        found, start, empty = _openings(parsed)
    except (_Untold, re.error, TypeError, ValueError, AttributeError):
        return _as_is(source)
    if empty or not found:
        return _as_is(source)
    body = re.sub(r"^\(\?[aiLmsux]+\)", "", source.pattern)     # its flags are given below
    lead = ("(?:^|" if start else "(?:") + "(?=[" + "".join(sorted(found)) + "]))"
    return re.compile(f"{lead}(?:{body}{chr(10) if flags & re.X else ''})", flags)


def _as_is(source) -> re.Pattern:
    return source if isinstance(source, re.Pattern) else re.compile(source.pattern, source.flags)


(_PHRASE, _RULE, _WRONG_FACT, _PUSHBACK, _ASKS, _CLAIM, _MAY_STAND, _UNSETTLED, _LASTING, _STANDING, _STRONG,
 FACT, _STATEMENT, _MOMENT, _FIRM, _ONE_OFF) = map(_led, (
    _PHRASE, _RULE, _WRONG_FACT, _PUSHBACK, _ASKS, _CLAIM, _MAY_STAND, _UNSETTLED, _LASTING, _STANDING, _STRONG,
    FACT, _STATEMENT, _MOMENT, _FIRM, _ONE_OFF))
