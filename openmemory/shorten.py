"""Shortening text for a line or a field: the one way openmemory cuts text, with '…'; and mending
what no file or database can hold (`wellformed`)."""
import re


def clip(text, limit: int) -> str:
    """Text on one line (whitespace runs folded) of at most limit characters, cut with '…'."""
    text = str(text or "")
    if len(text) > 4 * limit > 0:
        # A long text's start, folded, is the start of the whole text folded: when it is already
        # longer than limit, the rest (a whole tool output, say) need not be folded at all.
        head = " ".join(text[: 4 * limit].split())
        if len(head) > limit:
            return head[: limit - 1].rstrip() + "…"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clip_block(text: str, limit: int) -> str:
    """Text with its lines kept (a pasted message, an error output), at most limit characters."""
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# Characters no reader sees that a model reads, or that change what a reader sees without showing
# themselves: Unicode's tag characters (U+E0000-E007F), each the invisible shadow of an ASCII one
# ("ASCII smuggling"); the marks that reorder text (bidi embeddings, overrides and isolates,
# U+202A-202E and U+2066-2069, and the direction marks U+200E/200F and U+061C), which make
# "run `make test`" read otherwise than it runs; and the zero-width ones (space, non-joiner and
# joiner U+200B-200D, word joiner and the invisible operators U+2060-2064, the byte-order mark,
# the soft hyphen U+00AD, the grapheme joiner U+034F, the Mongolian vowel separator U+180E),
# which hide a word's break or a word inside another. A command's output, a page or a file can
# carry an order in them that no person reviewing a lesson, MEMORY.md or a recall ever sees:
# what openmemory writes for an agent or a model holds none (lessons as stored, rendered files,
# lessons.jsonl, the morning report, the MCP tools' answers, questions to a model, failures'
# cause lines: `unhidden`), and the person's terminal shows them escaped (cli.shown). A joiner
# dropped from an emoji sequence leaves its emoji side by side, the price of one rule.
HIDDEN = ("\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
          "\U000e0000-\U000e007f")
_HIDDEN = re.compile(f"[{HIDDEN}]")


def unhidden(text: str) -> str:
    """text without the characters a reader cannot see and a model reads (HIDDEN)."""
    return _HIDDEN.sub("", text) if text else text


# A half of a surrogate pair alone: JavaScript cuts strings by UTF-16 unit, so a tool output or a
# message cut in the middle of an emoji is written by JSON.stringify as "\ud83d" with no low half
# (Claude Code's own API calls have failed on such transcripts: "no low surrogate in string").
# json.loads keeps it, and SQLite, UTF-8 files and terminals refuse it: one such string stopped
# a whole ingest. After json.loads a pair is one character, so any surrogate left is alone.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def wellformed(value):
    """value (a str, or JSON's lists and dicts of them) with every lone surrogate made U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [wellformed(v) for v in value]
    if isinstance(value, dict):
        return {wellformed(k): wellformed(v) for k, v in value.items()}
    return value
