"""A memory's neighbours: the context it is indexed with besides its own words, what happened
around it.

A transcript episode is understood with its session (the request and the session's gist)
and the surprises just before and after it (for a surprise, also the turns around it, which
ingest passes as `around`); a note stored with `remember` with the notes stored just before
and after it in the same conversation. Recall indexes this text as a fourth, lower-weight
field (recall.FIELD_WEIGHTS), so "the tests" finds the correction about `pytest -q` made
while the person asked to run the test suite, and a note that says "its password is in the
vault" is found by a question about the staging database the note before it named.
Pure functions: the store calls them when it writes, and migration m007 to backfill.
"""
import json
from datetime import timedelta
from itertools import islice

from .clock import iso, parse_time
from .shorten import clip

# Characters of context: a transcript episode's at most CONTEXT_LIMIT, cut from the end
# (least specific last), each turn around a surprise at most AROUND_LIMIT; a note's each
# neighbour at most NOTE_LIMIT (a conversation's turn needs its neighbours whole, and notes
# are few). Both sets measured flat for transcript contexts from 120 to 600 characters and
# with or without the session's gist (OPERATIONS.md), so the bound is set by size: 150
# keeps a store of large sessions within 3 KB an episode (`tests.bench`).
CONTEXT_LIMIT = 150
AROUND_LIMIT = 100
NOTE_LIMIT = 200
NEIGHBOURS = 1              # memories on each side (2 or 3 measured no better on either set)

# One MCP server process is one Claude Code session, so notes the same server stores for
# the same working folder are one conversation, as long as no more than this passes
# between two of them: a session left open overnight starts a new conversation in the
# morning. Two hours covers a working session's pauses (lunch, a long build).
CONVERSATION_GAP_SECONDS = 2 * 3600


def session_contexts(episodes: list) -> list:
    """The context of each episode of one transcript (dicts with kind, title, gist, at and, for
    surprises, an optional `around`), in the order given: for a surprise, the session's
    request, the neighbouring surprises' titles, the turns around it and the session's gist;
    for the session episode, the titles of its surprises. Neighbours are neighbours in time."""
    by_time = sorted(episodes, key=lambda e: (e["at"] or "", e["kind"] != "session"))
    if by_time != episodes:
        found = dict(zip(map(id, by_time), session_contexts(by_time)))
        return [found[id(e)] for e in episodes]
    session = next((e for e in episodes if e["kind"] == "session"), None)
    surprises = [e for e in episodes if e["kind"] != "session" and e["title"]]    # a light episode is no one's neighbour
    out = []
    for e in episodes:
        if e["kind"] == "session":
            parts = [s["title"] for s in surprises]
        elif not e["title"]:
            parts = []          # a light episode (episodes.SETTLED): nothing in the text index finds it
        else:
            i = next(j for j, s in enumerate(surprises) if s is e)
            near = surprises[max(0, i - NEIGHBOURS):i] + surprises[i + 1:i + 1 + NEIGHBOURS]
            # Most specific first, as the limit cuts from the end: the request, the
            # neighbours, the turns around, then the session's gist.
            parts = ([session["title"]] if session else []) + [s["title"] for s in near] + \
                [e.get("around") or ""] + ([session["gist"]] if session else [])
        out.append(clip(" / ".join(p for p in parts if p), CONTEXT_LIMIT))
    return out


def note_context(before: list, after: list) -> str:
    """A note's context: the notes (dicts with title and gist) just before and after it."""
    return " / ".join(clip(_note_text(n), NOTE_LIMIT) for n in [*before, *after])


def note_contexts(thread: list) -> list:
    """The context of each note of one conversation, given in time order."""
    return [note_context(thread[max(0, i - NEIGHBOURS):i], thread[i + 1:i + 1 + NEIGHBOURS])
            for i in range(len(thread))]


def new_note_contexts(thread: list, note: dict) -> tuple:
    """(context of a new note, [(context, id)] of the notes before it whose context it changes),
    given the thread before it (thread_before)."""
    contexts = note_contexts(thread + [note])
    changed = list(zip(thread, contexts))[-NEIGHBOURS:]  # the new note is next to these
    return contexts[-1], [(c, n["id"]) for n, c in changed if n["context"] != c]


def same_conversation(earlier: str, later: str) -> bool:
    """Whether two notes of one server and folder, stored at these times, are one conversation."""
    return (parse_time(later) - parse_time(earlier)).total_seconds() <= CONVERSATION_GAP_SECONDS


def window_start(now: str) -> str:
    """How far back a new note's thread (2·NEIGHBOURS notes, each within the gap) can reach."""
    return iso(parse_time(now) - timedelta(seconds=2 * NEIGHBOURS * CONVERSATION_GAP_SECONDS))


def thread_before(recent: list, conversation: str, cwd, now: str) -> list:
    """Of recent notes (newest first), the last 2·NEIGHBOURS of this conversation and folder,
    each within the gap of the next, oldest first: a new note's neighbours, and theirs."""
    found, later = [], now
    for row in recent:
        if row["cwd"] != cwd or conversation_of(row["facts"]) != conversation:
            continue
        if not same_conversation(row["at"], later) or len(found) == 2 * NEIGHBOURS:
            break
        found.append(dict(row))
        later = row["at"]
    return found[::-1]


def conversation_of(facts: str) -> str:
    """The conversation a note was stored in, from its facts (JSON); '' when none."""
    try:
        facts = json.loads(facts or "{}")
    except ValueError:
        return ""
    return str(facts.get("conversation") or "") if isinstance(facts, dict) else ""


def places(turns: list) -> dict:
    """{record uuid: its place among turns} of the person's messages, the first of a uuid written
    twice. A message's place in the file says what came before and after it where times do not: a
    session resumed in Claude Code 1.0.x is written again with every record of the agent's dated at
    the resume, while the person's messages keep their own times, so the first turn later than a
    message was the session's start. Made once a session: each correction looks itself up."""
    found: dict = {}
    for n, turn in enumerate(turns):
        if turn.role == "user" and turn.uuid:
            found.setdefault(turn.uuid, n)
    return found


def around(turns: list, at: str, first=None, here: int | None = None) -> str:
    """The turns just before and after a surprise at `at`: the person's last words before it
    (unless that is `first`, the session's request, already in the context) and the agent's
    first words after it; from `here`, its place among turns when it is a message of theirs
    (places), else by time."""
    before = after = ""
    if here is not None:
        before = next((turns[n].text for n in range(here - 1, -1, -1) if turns[n].role == "user"
                       and turns[n].source in ("prompt", "queued") and turns[n] is not first), "")
        after = next((t.text for t in islice(turns, here + 1, None) if t.role == "assistant" and t.text), "")
        return " / ".join(clip(t, AROUND_LIMIT) for t in (before, after) if t)
    for turn in turns:
        if not turn.at or not at:
            continue
        if turn.at < at and turn.role == "user" and turn.source in ("prompt", "queued") and turn is not first:
            before = turn.text
        elif turn.at > at and turn.role == "assistant" and turn.text:
            after = turn.text
            break
    return " / ".join(clip(t, AROUND_LIMIT) for t in (before, after) if t)


def _note_text(note) -> str:
    title, gist = note["title"] or "", note["gist"] or ""
    return gist if not title or gist.startswith(title.rstrip("…").rstrip()) else f"{title}: {gist}"
