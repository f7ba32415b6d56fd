"""MEMORY.md and om-<id>.md as text: what a lesson looks like in Claude Code's memory, and
the section of MEMORY.md between openmemory's markers. Pure functions over strings: the
reconcile loop (render.py) reads and writes the files.

Lesson text is data, never markup: every line is redacted, put on one line and neutralised.
"""
import json
import re
import unicodedata

from .errors import RenderError
from .redact import redact
from .shorten import clip

BEGIN = "<!-- openmemory:begin -->"
END = "<!-- openmemory:end -->"
HEADING = "## Learnt from past sessions (openmemory)"

LINE_CHARS = 150            # Claude Code's memory prompt: index entries "under ~150 characters"
# Measured with Claude Code 2.1.328 (PROTOCOL.md, "Written: Claude Code's memory folder"):
# MEMORY.md is loaded after block-level HTML comments are stripped (so the markers cost
# nothing), up to 200 lines or 25,000 bytes ("limit: 24.4KB"), whichever first, at a whole line.
LOAD_LINES = 200
LOAD_BYTES = 25_000
WHY_SOURCES = 5             # source episodes listed under **Why:** (most recent first)
WHY_CHARS = 240             # characters of one source's account

# --------------------------------------------------------------------------------------
# Markdown safety: lesson text is data, never markup.

_URL = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.\-]*://|www\.)[^\s`]+|[\w.+\-]+@[\w\-]+\.[\w.\-]+")
_CODE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_BIDI = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"))


def one_line(text: str) -> str:
    """Redacted text on one line: control characters gone, HTML comment tokens broken."""
    text = redact(text or "").translate(_BIDI)
    text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    text = " ".join(text.split())  # every Unicode line break and space run
    while True:  # "<!---->" needs more than one pass
        broken = text.replace("<!--", "<! --").replace("--!>", "-- !>").replace("-->", "-- >")
        if broken == text:
            return text
        text = broken


def neutralise(text: str, block_start: bool = False) -> str:
    """One line of Markdown that shows text as it is: no raw HTML, no links, no comments.

    Code spans stay code spans; elsewhere backslashes, brackets, angle brackets and stray
    backticks are escaped, and URLs become code spans (so no viewer turns them into links). With block_start, a leading character
    that would open a heading, list, quote or rule is escaped too.
    """
    text = one_line(text)
    out, last = [], 0
    for m in _CODE.finditer(text):
        out.append(_escape_plain(text[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_escape_plain(text[last:]))
    text = "".join(out)
    if block_start and re.match(r"[#+*=|~_-]|\d+[.)]", text):
        text = re.sub(r"^(\d*)(.)", r"\1\\\2", text, count=1)
    return text


def _escape_plain(text: str) -> str:
    out, last = [], 0
    for m in _URL.finditer(text):
        out.append(re.sub(r"([\\\[\]<>`])", r"\\\1", text[last:m.start()]))
        out.append("`" + m.group(0) + "`")
        last = m.end()
    out.append(re.sub(r"([\\\[\]<>`])", r"\\\1", text[last:]))
    return "".join(out)


# --------------------------------------------------------------------------------------
# What a lesson looks like in Claude Code's memory (pure).

def file_name(lesson: dict) -> str:
    return f"om-{int(lesson['id'])}.md"


def index_line(lesson: dict, sources: list | None = None) -> str:
    """`- [lesson](om-<id>.md) — seen N×, last DATE`, under LINE_CHARS characters."""
    link = f"]({file_name(lesson)}) — "
    last = max((s["at"] for s in sources or [] if s.get("at")), default=lesson.get("updated") or "")
    hooks = [f"seen {lesson['seen']}×" + (f", last {last[:10]}" if last else ""), f"seen {lesson['seen']}×"]
    words = one_line(lesson["text"]).split(" ")
    for hook in hooks:  # the lesson whole matters more than the date
        for n in range(len(words), 0, -1):
            title = " ".join(words[:n]) + ("" if n == len(words) else " …")
            line = "- [" + neutralise(title) + link + hook
            if len(line) < LINE_CHARS:
                return line
    return ("- [" + neutralise(words[0][:40] + " …") + link + hooks[-1])[:LINE_CHARS - 1]


def topic_file(lesson: dict, sources: list) -> str:
    """The om-<id>.md Claude Code reads on demand: frontmatter, the lesson, Why, How to apply."""
    kind = lesson["kind"] if lesson["kind"] in ("feedback", "project") else "feedback"
    lines = ["---",
             f"name: om-{int(lesson['id'])}",
             "description: " + json.dumps(neutralise(lesson["text"]), ensure_ascii=False),
             f"type: {kind}",
             "metadata:",
             f"  type: {kind}",
             "---",
             "",
             neutralise(lesson["text"], block_start=True),
             "",
             "**Why:** " + _why_intro(lesson, kind, sources)]
    shown = sorted(sources, key=lambda s: (s.get("at") or "", s["id"]), reverse=True)[:WHY_SOURCES]
    for s in shown:
        lines.append(f"- {(s.get('at') or '')[:10] or 'undated'}: " + neutralise(clip(s["gist"], WHY_CHARS)))
    if len(sources) > len(shown):
        lines.append(f"- and {len(sources) - len(shown)} earlier time(s)")
    lines += ["", "**How to apply:** " + _how_to_apply(lesson, kind, sources), "",
              f"_Written by openmemory (lesson {int(lesson['id'])}). Delete this file and openmemory will not "
              f"write this lesson again; edit it and openmemory leaves your version as it is._", ""]
    return "\n".join(lines)


def _why_intro(lesson: dict, kind: str, sources: list) -> str:
    n = int(lesson.get("seen") or 1)
    times = "once" if n == 1 else f"{n} times"
    said = f"the user corrected this {times}" if kind == "feedback" else f"this went wrong {times}"
    return said + (":" if sources else " (its sources are no longer in memory).")


def _how_to_apply(lesson: dict, kind: str, sources: list) -> str:
    # A lesson with a folder is written only into that project's memory, so "this project" says
    # where without putting a path from the person's machine into the model's context.
    where = " in this project" if lesson.get("cwd") else " in any project"
    command = next(filter(None, map(_bash_command, sources)), "")
    command = neutralise("`" + clip(command.replace("`", "'"), 80) + "`") if command else ""
    if kind == "project":
        if command:
            return f"Before you run {command}{where}, act on this first: each time above, it failed without it."
        return f"Before doing what this is about{where}, act on it first."
    if command:
        return f"When you are about to run {command}{where}, follow this lesson, without waiting to be told."
    return f"Whenever this comes up{where}, do it this way from the start, without waiting to be told."


def _bash_command(source: dict):
    """The command a source was about (never a file path from the machine), or None."""
    facts = source.get("facts") or {}
    if source.get("kind") == "correction":
        return facts.get("trigger") if facts.get("trigger_tool") == "Bash" else None
    return facts.get("command") if facts.get("tool") == "Bash" else None


# --------------------------------------------------------------------------------------
# MEMORY.md: only the section between the markers is ours (pure functions over text).

def split_lines(text: str) -> list:
    """[(content, ending), ...] for any mix of \\n, \\r\\n and \\r; joining them gives text back."""
    parts = re.split(r"(\r\n|\r|\n)", text)
    pairs = [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
    if parts[-1]:
        pairs.append((parts[-1], ""))
    return pairs


def _is_marker(content: str, marker: str, first: bool) -> bool:
    if first:
        content = content.lstrip("\ufeff")
    return content.strip() == marker


def find_section(text: str):
    """(start, end) offsets of the section (begin line through the end marker's text), None if
    there is none; raises RenderError when the markers are damaged (unpaired or repeated)."""
    offset, begins, ends = 0, [], []
    for i, (content, ending) in enumerate(split_lines(text)):
        if _is_marker(content, BEGIN, i == 0):
            begins.append((offset, offset + len(content)))
        elif _is_marker(content, END, i == 0):
            ends.append((offset, offset + len(content)))
        offset += len(content) + len(ending)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0][0] < begins[0][0]:
        raise RenderError(f"its openmemory markers are damaged ({len(begins)} begin, {len(ends)} end)")
    start = begins[0][0]
    if start == 0 and text.startswith("\ufeff"):
        start = 1  # the byte-order mark stays first
    return start, ends[0][1]


def section_text(lines: list, newline: str = "\n") -> str:
    """The managed section: markers, and when there are lessons a heading and their lines."""
    body = [HEADING, *lines] if lines else []
    return newline.join([BEGIN, *body, END])


def own_newline(text: str, section=None) -> str:
    """The file's own line ending: the most common one outside our section (the first on a tie)."""
    outside = text if section is None else text[:section[0]] + text[section[1]:]
    endings = [e for _, e in split_lines(outside) if e]
    if not endings:
        endings = [e for _, e in split_lines(text) if e]
    return max(endings, key=lambda e: (endings.count(e), -endings.index(e))) if endings else "\n"


def merge(text: str | None, lines: list) -> tuple:
    """(new MEMORY.md text, how): replace our section, or create the file or section.

    Everything outside the markers is kept byte for byte. A new section goes after the
    person's content when all of it then loads; otherwise at the top (below a first `# `
    title), so the lessons are seen.
    """
    if not text or text == "\ufeff":
        return (text or "") + section_text(lines) + "\n", "created"
    found = find_section(text)
    pairs = split_lines(text)
    newline = own_newline(text, found)
    section = section_text(lines, newline)
    if found:
        start, end = found
        rest = text[end:]
        ending = next((e for e in ("\r\n", "\n", "\r") if rest.startswith(e)), "")
        if ending:  # the end marker's own line ending is the section's too
            rest = newline + rest[len(ending):]
        return text[:start] + section + rest, "replaced"
    tail = text if text.endswith(("\n", "\r")) else text + newline
    last = pairs[-1][0].strip()
    appended = tail + (newline if last else "") + section + newline
    if unseen(appended)[0] == 0:
        return appended, "appended"
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    first, ending = pairs[0]
    if first.lstrip("\ufeff").startswith("# ") and ending:
        at = len(first) + len(ending)
        return text[:at] + section + newline + text[at:], "inserted"
    return bom + section + newline + text[len(bom):], "inserted"


def counted_lines(text: str) -> list:
    """(start, end, bytes) of each line Claude Code counts: block-level HTML comments (a
    comment that opens a line, possibly over several lines) are stripped, the rest stays."""
    out, offset, in_comment = [], 0, False
    for content, ending in split_lines(text):
        start, end = offset, offset + len(content)
        offset = end + len(ending)
        rest = content
        if in_comment:
            if "-->" not in rest:
                continue
            rest, in_comment = rest.split("-->", 1)[1], False
            if not rest.strip():
                continue
        elif rest.lstrip(" \t\ufeff").startswith("<!--"):
            body = rest.lstrip(" \t\ufeff")[4:]
            if "-->" not in body:
                in_comment = True
                continue
            rest = body.split("-->", 1)[1]
            if not rest.strip():
                continue
        out.append((start, end, len(rest.encode("utf-8", "surrogateescape")) + 1))
    return out


def unseen(text: str) -> tuple:
    """(lines of our section, lines outside it) that Claude Code does not load: it keeps the
    counted lines up to LOAD_LINES or LOAD_BYTES, whichever comes first."""
    lines = counted_lines(text)
    kept, used = 0, 0
    for _, _, size in lines:
        if kept >= LOAD_LINES or used + size > LOAD_BYTES:
            break
        kept, used = kept + 1, used + size
    found = find_section(text)
    ours = mine = 0
    for start, end, _ in lines[kept:]:
        if found and start < found[1] and end > found[0]:
            ours += 1
        else:
            mine += 1
    return ours, mine
