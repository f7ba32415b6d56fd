"""What the person asked never to keep: memories forgotten, and projects kept out.

Forgetting: `plan` decides what goes: the episodes named (or found by a query, or of a
project), the lessons fed only by them, the lessons named; a lesson with other sources left
is worded again from those. `apply` makes it so in the database (tombstones, deletes, the
text index rebuilt where it held them, secure_delete, the WAL checkpointed); the CLI then
renders, which rewrites the lesson files, MEMORY.md sections and lessons.jsonl. A tombstone
is the sha256 of an episode's `key` (the identity of the event, never its words):
re-ingesting its transcript never brings it back, nor its words into the session's own
episode. Tombstones are written first to a file beside the database, which every ingest
reads (`adopt`): a database moved aside and begun again keeps them.

Keeping out (`OptOut`): a session whose working folder is at or below a folder holding
`.openmemory-ignore`, or at or below a folder listed in ~/.openmemory/ignore (one per line,
`#` comments, `~` expanded: for places the person cannot write a file into), or at the
same place in a linked git worktree of such a repository, is not ingested, a session that moves into one is stored up to its first record there, no note is
remembered for one, and no lesson is rendered into that project's memory folder. A session
forgotten whole (`forget --session`) is kept out the same way, by a line `session <id>` in
~/.openmemory/ignore: what its transcript says later is not ingested either, until the line goes.
"""
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import embed, files, paths, transcripts
from .errors import OpenMemoryError, UsageError
from .passages import sentences as passage_sentences

FORGOTTEN = "[forgotten]"
QUOTE_MIN = 12          # characters: shorter text is too common to scrub from other memories
PREFIX = 60             # a copy clipped with "…" is found by this much of its start


@dataclass
class Plan:
    """What one forget will do; `episodes` and `lessons` are rows as the store returns them."""
    episodes: list = field(default_factory=list)
    passages: list = field(default_factory=list)         # passage rows (what was said)
    lessons: list = field(default_factory=list)          # forgotten (and vetoed)
    reworded: list = field(default_factory=list)         # (lesson, new text, remaining source ids)
    quotes: list = field(default_factory=list)           # words to take out of every copy
    sessions: list = field(default_factory=list)         # session rows to drop (forget --project, --session)
    kept_out: list = field(default_factory=list)         # session ids kept out from now on (forget --session)
    words: list = field(default_factory=list)            # a query's words (the model's answers holding them go)
    moved: dict = field(default_factory=dict)            # lesson id -> its new folder (forget --project: learnt elsewhere too)
    elsewhere: list = field(default_factory=list)        # [(folder, episodes, passages)] of the project kept (--project)
    finished: tuple = ((), (), ())                       # (episode, lesson, passage) ids the last forget took already
    held: dict = field(default_factory=dict)             # correction id -> the passage id holding its message whole


def tombstone(key: str) -> str:
    """The hash that keeps an event out of memory for good: of its identity, not its words."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def tombstones(ep: dict, session_id=None) -> list:
    """An episode's tombstones: of its `key`, and of what happened when in which session, so a
    later change of how keys are made (a new identity scheme) does not bring it back; a
    session's also of its first record (a resumed or copied transcript keeps the records'
    uuids under a new session id; its surprises' keys are their records' uuids already)."""
    out = [tombstone(ep["key"])] if ep.get("key") else []
    sid = session_id or ep.get("session_id")
    if sid and ep.get("at") and ep.get("kind") not in NO_ALIAS:
        out.append(tombstone(f"event:{ep['kind']}:{sid}:{ep['at']}"))
    origin = (ep.get("facts") or {}).get("origin") if ep.get("kind") == "session" else None
    if origin and isinstance(origin, str):
        out.append(tombstone(f"record:{origin}"))
    return out


# A note is its own event; a passage is one of several with its exchange's kind, session and
# time, so only its key names it (passages.py keys them by the record and their place in it).
NO_ALIAS = ("note", "exchange", "summary", "plan", "question", "script", "edit", "command")

# A passage's key is its place among the passages of its record, so a change of how passages are
# cut (a refusal's words become a passage of their own; a new size) gives the same words another
# key. What stays is its sentences: each of SAID_MIN_WORDS words or more has an alias tombstone,
# of its session and its words ("said:<session>:<sentence>"), and a sentence held by one is taken
# out of whatever passage holds it next, and its copies out of the session's other memories (as a
# forgotten memory's words are). Shorter ones ("Done.", "Let me check.") are common in any session.
SAID_MIN_WORDS = 4


def sentences_of(passage: dict) -> list:
    """[(words folded, as written)] of each sentence of a passage's text of SAID_MIN_WORDS words or
    more (who said it left out), split as passages are packed (passages.sentences)."""
    out = []
    for line in (passage.get("text") or "").split("\n"):
        for sentence in passage_sentences(_LABEL.sub("", _QUOTED_LABEL.sub("", line))):
            if len(sentence.split()) >= SAID_MIN_WORDS and FORGOTTEN not in sentence:
                out.append((sentence.lower(), sentence))
    return out


def said_tombstones(passage: dict, session_id=None) -> list:
    """The alias tombstones of a passage's sentences in its session (above; none for a note)."""
    sid = session_id or passage.get("session_id")
    if not sid or passage.get("kind") not in NO_ALIAS[1:]:
        return []
    return [tombstone(f"said:{sid}:{folded}") for folded, _ in sentences_of(passage)]


def said_forgotten(passages: list, forgotten: set, session_id) -> list:
    """The sentences, as written, of these passages that an alias tombstone holds (said_tombstones)."""
    return [written for p in passages if p.get("kind") in NO_ALIAS[1:]
            for folded, written in sentences_of(p) if tombstone(f"said:{session_id}:{folded}") in forgotten]


# The tombstones are also kept in a file beside the database (paths.tombstones_path), one a
# line: "<sha256> <0|1 alias> <when>". A database moved aside (damaged, or a first ingest cut
# by a power loss) takes its own with it; a new one reads them back at its first ingest.
TOMBSTONES_READ = "tombstones_read"     # state: how many bytes of the file this database has read


def keep_tombstones(rows, now: str) -> None:
    """Add tombstones [(hash, alias)] to the file beside the database, before the database."""
    rows = [(h, a) for h, a in rows if re.fullmatch(r"[0-9a-f]{64}", h or "")]
    if rows:
        files.append_own(paths.tombstones_path(), "".join(f"{h} {int(bool(a))} {now}\n" for h, a in rows).encode())


def kept_tombstones(offset: int = 0) -> tuple:
    """([(hash, alias)] in the file beside the database from offset on, the file's size);
    a line a killed writer left unfinished, or anything else, is skipped."""
    try:
        with open(paths.tombstones_path(), "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], 0
    rows = []
    for line in data.decode("ascii", "replace").splitlines():
        m = re.fullmatch(r"([0-9a-f]{64}) ([01])(?: \S*)?", line.strip())
        if m:
            rows.append((m.group(1), m.group(2) == "1"))
    return rows, offset + len(data)


def adopt(store, now: str) -> int:
    """Bring the database and the file beside it to the same tombstones (an ingest's first step,
    cheap when nothing changed: one stat); returns how many the database had not.

    A database that never read the file gives it its own first (forgotten before the file was
    kept), then reads it whole; afterwards only what was added since is read."""
    try:
        size = os.stat(paths.tombstones_path()).st_size
    except FileNotFoundError:
        size = 0
    except OSError:
        return 0     # an unreadable file: the database's own tombstones still hold
    read = store.get_state(TOMBSTONES_READ)
    if read is not None and read.isdigit() and int(read) == size:
        return 0
    offset = int(read) if read is not None and read.isdigit() and int(read) < size else 0
    if read is None:
        in_file = {h for h, _ in kept_tombstones()[0]}
        keep_tombstones([r for r in store.all_tombstones() if r[0] not in in_file], now)
    rows, size = kept_tombstones(offset)
    with store.transaction():
        added = store.add_tombstones(rows, now)
        store.set_state(TOMBSTONES_READ, str(size))
    return added


def is_forgotten(ep: dict, forgotten: set, session_id=None) -> bool:
    return any(h in forgotten for h in tombstones(ep, session_id))


_ID = re.compile(r"(?i)(?:(episode|e|lesson|l|passage|p)[:#]?)?([0-9]{1,18})")    # ASCII digits, within SQLite's integers


def parse_ids(words: list) -> tuple:
    """("12", "e7", "lesson:3", "L3", "p45", "passage:9") -> ([12, 7], [3], [45, 9]): episodes,
    lessons, passages, as recall shows their ids; anything else is an error."""
    episodes, lessons, passages = [], [], []
    for word in words:
        m = _ID.fullmatch(word.strip())
        if not m:
            raise UsageError(f"{word!r} is not an id: give one as recall shows it (e12, p45, l3), or an "
                                  f"episode id (12), or a lesson id as lesson:3")
        kind = (m.group(1) or "e").lower()[0]
        {"e": episodes, "l": lessons, "p": passages}[kind].append(int(m.group(2)))
    return episodes, lessons, passages


# Where an item's own words are in the text index (a memory's context is its neighbours' words).
OWN_FIELDS = "{title body detail}"


def query_words(query: str) -> list:
    """The words of a query the text index reads (one with a letter or a digit)."""
    return [w for w in (query or "").split() if re.search(r"[^\W_]", w)]


def query_match(query: str) -> str:
    """The text index's query for the items that hold every word of query, as the index reads
    words (each quoted: nothing in it is FTS5 syntax; a word of several tokens is a phrase)."""
    words = query_words(query)
    if not words:
        raise UsageError(f"{query!r} holds no word to look for; give words, or ids to forget by id")
    return OWN_FIELDS + " : (" + " AND ".join(_phrase(w) for w in words) + ")"


def _phrase(word: str) -> str:
    """A word as one quoted FTS5 phrase; one holding Chinese or Japanese as the pairs of characters the
    index reads (embed.grams: "镜像拉取" -> "镜像 像拉 拉取", found inside a longer run as they follow each other)."""
    grams = embed.grams(word)
    return '"%s"' % (grams.strip() if grams else word).replace('"', '""')


def matching(store, query: str) -> tuple:
    """(episode ids, lesson ids, passage ids) of every memory holding each word of query, never by relevance."""
    if not store.has_recall_index():
        raise OpenMemoryError("forget --query needs the text index, which this database lacks (its SQLite "
                              "has no FTS5); forget by id instead: `openmemory recall --json` shows them")
    words = query_words(query)
    alone = [w for w in words if any(len(run) == 1 for run in embed.SPACELESS_RUN.findall(w))]
    if not alone:
        return store.holding(query_match(query))
    # a Chinese or Japanese character alone ("林", "鍵"): the index holds pairs of them, never one (red47)
    held = store.holding_as_written(alone)
    rest = [w for w in words if w not in alone]
    if not rest:
        return held
    return tuple(sorted(set(a) & set(b)) for a, b in zip(store.holding(query_match(" ".join(rest))), held))


def quotes_of(ep: dict) -> list:
    """The words of an episode (or passage) that other memories copy: what was said, the error
    lines, a note, each part of a passage."""
    facts = ep.get("facts") or {}
    found = []
    if ep["kind"] in NO_ALIAS[1:]:
        found += [re.sub(r"^(?:person|agent): ", "", part) for part in ep["text"].split("\n")]
    elif ep["kind"] == "correction":
        found.append(facts.get("said") or "")
    elif ep["kind"] == "error":
        found += [line for line in facts.get("error") or [] if not re.match(r"Exit code \d+$", line or "")]
    elif ep["kind"] == "note":
        found += [ep.get("gist") or "", ep.get("title") or ""]
    else:
        found += [ep.get("title") or ""]
    out = []
    for text in found:
        text = " ".join(str(text).split())
        if len(text) >= QUOTE_MIN and text not in out and text != FORGOTTEN:
            out.append(text)
    return out


def scrub(text, quotes: list):
    """text with every copy of the quotes (also one clipped with "…") replaced by [forgotten]."""
    if not isinstance(text, str) or not text or not quotes:
        return text
    for q in sorted(quotes, key=len, reverse=True):  # a quote inside a longer one must not break its match
        words = q.split()
        exact = r"\s+".join(map(re.escape, words))
        text = re.sub(exact, FORGOTTEN, text)
        head = q[:PREFIX]
        if len(head) < len(q) or head in text:
            # a copy clipped somewhere after its start: from the start to the end of the line
            text = re.sub(r"\s+".join(map(re.escape, head.split())) + r"[^\n]*", FORGOTTEN, text)
    return _without_short_clips(text, quotes) if "…" in text else text


def _without_short_clips(text: str, quotes: list) -> str:
    """text without a copy of a quote's start clipped with "…" before PREFIX characters (as
    shorten.clip cuts a title into a neighbour's context): at least QUOTE_MIN of them."""
    out, end = [], len(text)
    for pos in sorted((m.start() for m in re.finditer("…", text)), reverse=True):
        if pos >= end:
            continue
        before = text[:pos]
        start = max((pos - n for q in quotes for n in range(min(len(q), PREFIX), QUOTE_MIN - 1, -1)
                     if before.endswith(q[:n].rstrip()) and len(q[:n].rstrip()) == n), default=None)
        if start is not None:
            out.append(FORGOTTEN + text[pos + 1:end])
            end = start
    return text[:end] + "".join(reversed(out)) if out else text


_LABEL = re.compile(r"^(?:person|agent): ")
# passages.QUOTED_LABEL before words that open as a label does: left out of a sentence's words, so
# its tombstone is the one it had before passages quoted such words.
_QUOTED_LABEL = re.compile(r"(?:^|(?<=\s))> (?=(?i:person|agent)\s*:)")


# The labels openmemory itself writes around what was said (a passage's speakers, a session's and
# a failure's summary): a memory holding nothing but these and [forgotten] says nothing.
_OWN_LABELS = re.compile(r"(?m)^(?:person|agent): |\b(?:Asked|Outcome|Trouble|Correction|While working on):")


def says_nothing(*texts) -> bool:
    """Whether these texts (a passage's; a session episode's title, gist and detail) hold no word once
    what was forgotten and openmemory's own labels are taken out: recall would show "[forgotten]"
    and nothing else, in a hit's place, so the memory goes (a forget) or is not stored (an ingest)."""
    return not any(re.search(r"[^\W_]", _OWN_LABELS.sub("", _QUOTED_LABEL.sub("", (t or "").replace(FORGOTTEN, ""))))
                   for t in texts)


def scrub_passage(text: str, quotes: list) -> str:
    """A passage's text without the quotes (scrub), and without any part of it that is a piece
    of one: a long message is cut into several passages, each holding a piece of its words."""
    text = scrub(text, quotes)
    if not quotes:
        return text
    parts = []
    for part in text.split("\n"):
        label = _LABEL.match(part)
        words = " ".join(part[label.end() if label else 0:].split())
        if len(words) >= QUOTE_MIN and words != FORGOTTEN and any(words in q for q in quotes):
            part = (label.group() if label else "") + FORGOTTEN
        parts.append(part)
    return "\n".join(parts)


CONTEXT_FIELD = "{context}"


def _word(w: str):
    """A word as the text index finds it: from a word's start, any case, with its endings; one holding
    Chinese or Japanese wherever it is written (the index reads their pairs of characters: _phrase)."""
    if embed.grams(w):
        return re.compile(re.escape(w))
    return re.compile(r"(?i)(?<![^\W_])" + re.escape(w) + r"\w*")


def without_words(text, words: list):
    """text with each of words replaced by [forgotten], when it holds every one of them."""
    if not isinstance(text, str) or not text or not words:
        return text
    found = [_word(w) for w in words]
    if not all(f.search(text) for f in found):
        return text
    for f in found:
        text = f.sub(FORGOTTEN, text)
    return text


def without_words_obj(value, words: list):
    """A JSON value's strings without the words, when the value holds every one of them."""
    if not words:
        return value
    found = [_word(w) for w in words]
    if not all(f.search(json.dumps(value, ensure_ascii=False)) for f in found):
        return value

    def strip(v):
        if isinstance(v, str):
            for f in found:
                v = f.sub(FORGOTTEN, v)
            return v
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return strip(value)


def scrub_obj(value, quotes: list):
    if isinstance(value, str):
        return scrub(value, quotes)
    if isinstance(value, dict):
        return {k: scrub_obj(v, quotes) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_obj(v, quotes) for v in value]
    return value


def without_forgotten(episodes: list, forgotten: set, session_id=None, passages=()) -> tuple:
    """Episodes and passages about to be stored, minus the forgotten ones and their words;
    (episodes, passages, quotes).

    forgotten: the tombstones among theirs. Used by ingest on every transcript.
    """
    if not forgotten:
        return episodes, list(passages), []
    gone = [ep for ep in [*episodes, *passages] if is_forgotten(ep, forgotten, session_id)]
    quotes = [q for ep in gone for q in quotes_of(ep)]
    quotes += [q for q in said_forgotten([p for p in passages if not is_forgotten(p, forgotten, session_id)],
                                         forgotten, session_id) if q not in quotes]     # cut otherwise since
    said = [dict(p, text=scrub_passage(p["text"], quotes), context=scrub(p["context"], quotes))
            for p in passages if not is_forgotten(p, forgotten, session_id)]
    said = [p for p in said if not says_nothing(p["text"])]    # nothing of its own left: not stored
    kept = []
    for ep in episodes:
        if is_forgotten(ep, forgotten, session_id):
            continue
        if ep["kind"] == "correction" and not ep["title"]:
            continue    # a light episode (a message kept for a judge only): forgetting wins over asking
        ep = dict(ep, title=scrub(ep["title"], quotes), gist=scrub(ep["gist"], quotes),
                  detail=scrub(ep.get("detail") or "", quotes), facts=scrub_obj(ep.get("facts") or {}, quotes),
                  around=scrub(ep.get("around") or "", quotes))  # the turns around, for recall's context
        if ep["kind"] == "session" and says_nothing(ep["title"], ep["gist"], ep["detail"]):
            continue    # every word of it forgotten (as a forget leaves none: apply)
        kept.append(ep)
    return kept, said, quotes


LAST = "forget_last"  # state: the ids the last forget took out of the database, and whether its files are done


def last_forget(store) -> tuple:
    """(episode ids, lesson ids, passage ids, finished) of the last forget: what it took out of
    the database, and whether its files were rewritten (False: it was stopped, killed or by a
    power cut, and its re-run finishes them)."""
    try:
        found = json.loads(store.get_state(LAST) or "{}")
        return (tuple(found.get("episodes") or ()), tuple(found.get("lessons") or ()),
                tuple(found.get("passages") or ()), bool(found.get("finished", True)))
    except (ValueError, AttributeError):
        return (), (), (), True


def unfinished(store) -> bool:
    """Whether the last forget was stopped before its files were rewritten."""
    return not last_forget(store)[3]


def finished(store) -> tuple:
    """Mark the last forget's files rewritten and compact the database; returns (whether the
    WAL was emptied, whether the database was compacted)."""
    eps, lessons, passages, _ = last_forget(store)
    return store.forget_finished(json.dumps({"episodes": list(eps), "lessons": list(lessons),
                                             "passages": list(passages), "finished": True}))


def _gone(ids: set, found: dict, done: list, kind: str, shown) -> set:
    """The ids not found that the same forget, run again, already forgot; any other id not
    found is an error naming it as recall shows it."""
    gone = (ids - set(found)) & set(done)
    missing = sorted(ids - set(found) - gone)
    if missing:
        raise UsageError(f"no {kind} {', '.join(map(shown, missing))} in memory; "
                              f"`openmemory recall --json` shows the ids")
    return gone


def plan(store, episode_ids=(), lesson_ids=(), project=None, passage_ids=(), words=(), session=None) -> Plan:
    """What forgetting these episodes, passages and lessons (or everything of a project, or of a
    session: its id as find_session gives it) takes; ids the last forget took out already are
    done (the same forget run again finishes its files)."""
    p = Plan(words=[w.lower() for w in words])
    episode_ids, lesson_ids, passage_ids = set(episode_ids), set(lesson_ids), set(passage_ids)
    project_lessons = set()
    if project:
        found_l = []
        for folder in [project] + aliases(store, project):     # the folder as named, and as stored through a link
            found_e, more_l, sessions, found_p = store.memories_under(folder)
            episode_ids |= set(found_e)
            found_l += [i for i in more_l if i not in found_l]
            p.sessions += [s for s in sessions if s not in p.sessions]
            passage_ids |= set(found_p)
        project_lessons = set(found_l) - lesson_ids     # those not named: kept when learnt elsewhere too
        lesson_ids |= set(found_l)
        p.elsewhere = kept_of_project(store, project)
    if session:
        found_e, found_p, stored = store.memories_of_session(session)
        episode_ids |= set(found_e)
        passage_ids |= set(found_p)
        p.sessions += [session] if stored and session not in p.sessions else []
        # an id a line cannot hold (a made-up transcript's: a space, a '#') is forgotten, not kept out
        p.kept_out = [] if session in ignored_sessions() or not re.fullmatch(r"[^\s#]+", session) else [session]
    done_e, done_l, done_p, _ = last_forget(store)
    found_p = store.passages_by_id(passage_ids)
    gone_p = _gone(passage_ids, found_p, done_p, "passage", lambda i: f"p{i}")
    p.passages = [found_p[i] for i in sorted(found_p)]
    p.held = {i: ps for i, ps in _messages_held(store, p.passages).items() if i not in episode_ids}
    episode_ids |= set(p.held)
    episodes = store.episodes_by_id(episode_ids)
    gone_e = _gone(episode_ids, episodes, done_e, "episode", str)
    p.episodes = [episodes[i] for i in sorted(episodes)]
    all_lessons = {ls["id"]: ls for ls in store.all_lessons()}
    gone_l = (lesson_ids - set(all_lessons)) & set(done_l)
    p.finished = (sorted(gone_e), sorted(gone_l), sorted(gone_p))
    missing = sorted(lesson_ids - set(all_lessons) - gone_l)
    if missing:
        raise UsageError(f"no lesson {', '.join(map(str, missing))} in memory")
    gone = set(episodes)
    for ls in all_lessons.values():     # a lesson of the folder learnt in another clone too: that clone's now
        if ls["id"] in project_lessons and (folder := _learnt_elsewhere(store, ls, gone, project)):
            lesson_ids.discard(ls["id"])
            p.moved[ls["id"]] = folder
    for ls in all_lessons.values():
        if ls["id"] in lesson_ids:
            p.lessons.append(ls)
            continue
        fed_by = set(ls["sources"]) & gone
        if not fed_by or not ls["text"]:
            continue
        remaining = [i for i in ls["sources"] if i not in gone]
        if (ls.get("backing") or {}).get("edited"):
            p.reworded.append((ls, ls["text"], remaining))  # the person's own words: kept as they are
            continue
        text = _reword(store, ls, remaining) if remaining else None
        if text is None:
            p.lessons.append(ls)  # fed only by forgotten episodes (or nothing left to say)
            p.moved.pop(ls["id"], None)
        else:
            p.reworded.append((ls, text, remaining))
    for ep in p.episodes + p.passages:
        p.quotes += [q for q in quotes_of(ep) if q not in p.quotes]
    # a lesson's wording, forgotten or replaced, was made of what is forgotten: no copy of it stays
    # (a report's, a log line's), as none of the memories' own words does
    for text in [ls["text"] for ls in p.lessons] + [ls["text"] for ls, new, _ in p.reworded if new != ls["text"]]:
        text = " ".join((text or "").split())
        if len(text) >= QUOTE_MIN and text not in p.quotes:
            p.quotes.append(text)
    return p


def _learnt_elsewhere(store, lesson: dict, gone: set, folder: str) -> str | None:
    """The project folder a lesson of a forgotten folder is learnt in too (its earliest source
    that stays: another clone of its repository; a linked worktree of the folder forgotten is
    its own), or None when every source goes."""
    left = [ep for i, ep in store.episodes_by_id([i for i in lesson["sources"] if i not in gone]).items()
            if ep.get("cwd")]
    first = min(left, key=lambda ep: (ep["at"], ep["id"]), default=None)
    if first is None:
        return None
    root = paths.project_of(first["cwd"])
    return (_tree_of(first["cwd"]) or first["cwd"]) if _within(root, folder) else root


def _within(cwd: str, folder: str) -> bool:
    return cwd == folder or cwd.startswith(folder.rstrip("/") + "/")


def _tree_of(cwd: str) -> str | None:
    """The working tree a stored folder is in (a linked worktree is its own), None when none is here
    (one removed since is its own folder as written: paths.gone_from)."""
    try:
        tree = paths.work_tree(cwd) if os.path.isabs(cwd) else None
    except OSError:
        tree = None
    return str(tree) if tree else None


def aliases(store, folder: str) -> list:
    """The working folders stored under another spelling of folder (resolved) or of a folder
    below it: a path through a symlink, as a session started there recorded it. memories_under
    reads folders as written, so `forget --project` (which resolves what it is given) left
    their memories, and said to forget them with the very command just run."""
    cwds = {cwd for cwd, _, _ in store.memories_by_folder()} | set(store.session_cwds()) | \
        {ls["cwd"] for ls in store.all_lessons() if ls.get("cwd")}
    return sorted(cwd for cwd in cwds if cwd and os.path.isabs(cwd) and not paths.is_foreign(cwd)
                  and not _within(cwd, folder) and _within(os.path.realpath(cwd), folder))


def kept_of_project(store, folder: str) -> list:
    """[(folder, episodes, passages)] of the memories of folder's project that a forget of
    folder keeps: stored outside it (another clone or worktree of its repository, the rest of
    the repository a subfolder is in), by working tree (`forget --project` of it takes them),
    most first."""
    kept, same, identity = {}, {}, paths.project_identity(folder)    # each repository's config read once
    linked = set(aliases(store, folder))
    for cwd, episodes, passages in store.memories_by_folder():
        if not cwd or _within(cwd, folder) or cwd in linked:    # as forget --project reads
            continue
        # by working tree: a linked worktree is named as its own folder, which its forget takes
        root = _tree_of(cwd) or (cwd if paths.gone_from(cwd) else paths.project_of(cwd))
        if root not in same:
            same[root] = paths.project_identity(root) == identity
        if same[root]:
            e, p = kept.get(root, (0, 0))
            kept[root] = (e + episodes, p + passages)
    return sorted(((root, e, p) for root, (e, p) in kept.items()), key=lambda k: (-k[1] - k[2], k[0]))


def _messages_held(store, passages: list) -> dict:
    """{correction id: passage id} of the corrections whose message these passages hold whole: the
    same words, so forgotten with them (cleaned of them instead, a correction's lesson, worded from
    it, kept them: `forget p45` left "… like Marguerite Vasquez said" in MEMORY.md). A message cut
    across several passages is held by the first of them."""
    held = {}
    for ps in passages:
        if ps.get("kind") == "exchange" and ps.get("session_id"):
            words = " ".join(" ".join(_LABEL.sub("", _QUOTED_LABEL.sub("", line)).split())   # a message folded
                             for line in (ps.get("text") or "").split("\n"))
            held.setdefault(ps["session_id"], []).append((ps["id"], words))
    out = {}
    for sid, said_in in held.items():
        for ep in store.episodes(kind="correction", session_id=sid):
            said = " ".join(str((ep.get("facts") or {}).get("said") or "").split())
            if len(said.split()) < SAID_MIN_WORDS:
                continue
            by = next((i for i, words in said_in if said in words), None)
            if by is None and said in " ".join(words for _, words in said_in):
                by = said_in[0][0]
            if by is not None:
                out[ep["id"]] = by
    return out


def _reword(store, lesson: dict, remaining: list) -> str | None:
    """The lesson worded again from the sources it has left, as sleep would word it; None if
    they hold none of its kind."""
    eps = [ep for ep in store.episodes_by_id(remaining).values()]
    corrections = sorted((e for e in eps if e["kind"] == "correction"), key=lambda e: (e["at"], e["id"]))
    errors = sorted((e for e in eps if e["kind"] == "error"), key=lambda e: (e["at"], e["id"]))
    # Of the same kind as sleep made it: a correction's lesson from the corrections left (the
    # failed calls they answered alone do not make it), an error's from the errors left.
    from . import backing, wording  # here: ingest and render ask this module, but only a forget words lessons
    from .redact import mostly_secret

    def said(facts: dict) -> str | None:
        """A correction's lesson as sleep words it: the judge's when it found one lasting (a
        judge's lesson the rules do not see was forgotten and vetoed for good, though another
        clone taught it too), else the rules'."""
        judged = backing.judged_lesson(facts)
        text = wording.unscoped(judged) if judged else None
        return text if text and not mostly_secret(text) else wording.correction_lesson(facts)
    if lesson["kind"] == "feedback":
        body = next((b for b in (said(e["facts"]) for e in corrections) if b), None)
    else:
        body = wording.error_lesson([e["facts"] for e in errors]) if errors else None
    if body is None:
        return None
    return wording.scoped(body, lesson["cwd"])


def incident(ep: dict) -> str:
    """What `seen` counts: sessions (a note is its own)."""
    return ep.get("session_id") or f"episode:{ep['id']}"


def sessions_of(store, source_ids) -> set:
    """The sessions a lesson's sources came from (what `seen` counts; sleep's too)."""
    return {incident(ep) for ep in store.episodes_by_id(source_ids, ("id", "session_id")).values()}


def seen_of(store, source_ids: list) -> int:
    """How many sessions a lesson's sources came from."""
    return len(sessions_of(store, source_ids))


def apply(store, p: Plan, now: str) -> dict:
    """Forget in the database; returns what was done (counts and whether the WAL was emptied)."""
    reworded = [(ls["id"], text, remaining, seen_of(store, remaining)) for ls, text, remaining in p.reworded]
    sessions = {ep["session_id"] for ep in p.episodes + p.passages if ep.get("session_id")}
    affected, titles = store.of_sessions(sessions)
    said = store.passages_of_sessions(sessions)
    if any(ep["kind"] == "note" for ep in p.episodes):  # a note's words are in its neighbours' context
        affected += store.episodes("note")
    gone = {ep["id"] for ep in p.episodes}
    gone_passages = {ps["id"] for ps in p.passages}
    if p.words and store.has_recall_index():  # the words asked for, in the context others keep of them
        known, known_p = {ep["id"] for ep in affected}, {ps["id"] for ps in said}
        found, _, found_p = store.holding(
            CONTEXT_FIELD + " : (" + " AND ".join(_phrase(w) for w in p.words) + ")")
        affected += list(store.episodes_by_id([i for i in found if i not in known and i not in gone]).values())
        said += [ps for i, ps in sorted(store.passages_by_id(
            [i for i in found_p if i not in known_p and i not in gone_passages]).items())]
    scrubbed = []
    for ep in affected:
        if ep["id"] in gone:
            continue
        new = {"title": scrub(ep["title"], p.quotes), "gist": scrub(ep["gist"], p.quotes),
               "detail": scrub(ep["detail"], p.quotes), "facts": scrub_obj(ep["facts"], p.quotes),
               "context": scrub(ep.get("context") or "", p.quotes)}
        # a neighbour's words a memory keeps as its context, or facts that hold every word asked for
        new["context"] = without_words(new["context"], p.words)
        new["facts"] = without_words_obj(new["facts"], p.words)
        if any(new[k] != ep[k] for k in new):
            scrubbed.append((ep["id"], new))
    scrubbed_passages = []
    for ps in said:
        if ps["id"] not in gone_passages:
            text, context = scrub_passage(ps["text"], p.quotes), scrub(ps["context"], p.quotes)
            context = without_words(context, p.words)   # a neighbour's words it keeps as its context
            if (text, context) != (ps["text"], ps["context"]):
                scrubbed_passages.append((ps["id"], text, context))
    # A memory left with no word of its own ("person: [forgotten]\nagent: [forgotten]", a session
    # episode whose request and outcome were all forgotten) goes: recall would show it in a hit's
    # place, saying nothing. Not tombstoned: an ingest leaves it out the same way (without_forgotten).
    emptied = {i for i, new in scrubbed if says_nothing(new["title"], new["gist"], new["detail"])
               and next(ep["kind"] for ep in affected if ep["id"] == i) == "session"}
    emptied_passages = {i for i, text, _ in scrubbed_passages if says_nothing(text)}
    gone_sessions = {ep["session_id"] for ep in p.episodes if ep["kind"] == "session"}
    titles = [(sid, "" if sid in gone_sessions else scrub(t, p.quotes)) for sid, t in titles.items()]
    report = _scrubbed_morning(store, p)
    # The model's cached answers are a cache: one that may hold forgotten words goes (asked again if need be).
    # Its item named (m014): the model's words about a forgotten memory go though they quote none of it.
    # ... and so do those about a memory cleaned of its words (what the model said of it, before).
    cleaned = {i for i, _ in scrubbed}
    items = {ep["key"] for ep in p.episodes + [ep for ep in affected if ep["id"] in cleaned] if ep.get("key")} \
        | {f"lesson:{ls['id']}" for ls in p.lessons}
    answers = [key for key, answer, item in store.model_answers()
               if item in items or scrub(answer, p.quotes) != answer
               or (p.words and all(w in answer.lower() for w in p.words))]
    gone_for_good = [(h, n > 0) for ep in p.episodes + p.passages for n, h in enumerate(tombstones(ep))]
    gone_for_good += [(h, True) for ps in p.passages for h in said_tombstones(ps)]
    dropped = [row for row in map(store.session, p.sessions) if row and row.get("path")]
    for sid in p.kept_out:  # first of all: what the session says after this is never ingested
        keep_session_out(sid, now)
    keep_tombstones(gone_for_good, now)  # first where a recovery keeps them: a kill here forgets on the re-run
    log_lines = forget_in_log(p, items)     # before the database: a kill after this takes them on the re-run too
    done = store.forget(tombstones=gone_for_good,
                        episode_ids=sorted(gone | emptied), scrubbed=[x for x in scrubbed if x[0] not in emptied],
                        lesson_ids=[ls["id"] for ls in p.lessons], passage_ids=sorted(gone_passages | emptied_passages),
                        scrubbed_passages=[x for x in scrubbed_passages if x[0] not in emptied_passages],
                        reworded=reworded, session_ids=p.sessions,
                        titles=[(sid, t) for sid, t in titles if sid not in p.sessions], now=now,
                        answers=answers, moved=sorted(p.moved.items()),
                        last=json.dumps({"episodes": sorted(gone), "lessons": [ls["id"] for ls in p.lessons],
                                         "passages": sorted(gone_passages), "finished": False}),
                        morning=None if report is None else json.dumps(report, ensure_ascii=False, sort_keys=True))
    # A transcript whose session is dropped and that the next ingest keeps out (the project's
    # .openmemory-ignore, the ignore list, a session forgotten whole) is counted kept out now:
    # status said neither "ingested" nor "kept out" of it until that ingest.
    optout = OptOut()
    for row in dropped:
        if os.path.exists(row["path"]) and (optout.reason(row["cwd"]) or row["id"] in p.kept_out
                                            or optout.session(row["id"])):
            store.note_opted_out(transcript_hash(row["path"]))
    done["morning"] = report is not None
    done["episodes"] -= len(emptied)
    done["passages"] -= len(emptied_passages)
    done["emptied"] = len(emptied) + len(emptied_passages)
    done["answers"] = len(answers)
    done["log_lines"] = log_lines
    return done


def transcript_hash(path) -> str:
    """A transcript's path as a hash: counts a kept-out session without naming it (table opted_out)."""
    return hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def forget_in_log(p: Plan, items: set) -> int:
    """Take out of the log (and its rotated file) each line about a forgotten memory, or one cleaned of
    its words: one that names its key (items: the judge's and the model's answers not used name the
    item asked about, and hold the model's words of it), holds its words (p.quotes), or every word of
    the query. Returns how many."""
    keys = sorted(items)
    named = re.compile("|".join(re.escape(k) + r"(?![\w:-])" for k in keys)) if keys else None

    def gone(line: str) -> bool:
        return bool((named and named.search(line)) or (p.quotes and scrub(line, p.quotes) != line)
                    or (p.words and all(w in line.lower() for w in p.words)))
    log = paths.log_path()
    return sum(files.drop_own_lines(path, gone) for path in (log, log.with_name(log.name + ".1")))


def _scrubbed_morning(store, p: Plan):
    """The stored morning report without the forgotten memories and words (None: no report)."""
    try:
        report = json.loads(store.get_state("morning") or "null")
    except ValueError:
        return None
    if not isinstance(report, dict):
        return None
    gone_lessons = {ls["id"] for ls in p.lessons}
    new_text = {ls["id"]: text for ls, text, _ in p.reworded}
    gone_eps = {ep["id"] for ep in p.episodes}
    for key in ("lessons_new", "candidates_new", "lessons_strengthened", "lessons_to_candidates", "approved"):
        if key not in report:
            continue
        items = []
        for item in report.get(key) or []:
            if not isinstance(item, dict) or item.get("id") in gone_lessons:
                continue
            if item.get("id") in new_text:
                item["text"] = new_text[item["id"]]
            if item.get("id") in p.moved and "cwd" in item:     # filed under the clone that taught it too
                item["cwd"] = p.moved[item["id"]]
            if "sources" in item:
                item["sources"] = [s for s in item["sources"] or [] if not (isinstance(s, dict) and s.get("id") in gone_eps)]
            items.append(item)
        report[key] = items
    report["vetoed"] = [dict(v, text=new_text[v["id"]]) if isinstance(v, dict) and v.get("id") in new_text and "text" in v else v
                        for v in report.get("vetoed") or [] if not (isinstance(v, dict) and v.get("id") in gone_lessons)]
    # A forgotten lesson's predictions go with it (the rows cascade): the night's count and lists too.
    for key in ("predictions_confirmed", "predictions_failed"):
        if key in report:
            report[key] = [x for x in report.get(key) or []
                           if not (isinstance(x, dict) and x.get("lesson_id") in gone_lessons)]
    night = report.get("night")
    if gone_lessons and isinstance(night, str) and isinstance(report.get("predictions_made"), int):
        by_lesson = store.predictions_by_lesson()
        made_tonight = sum(1 for i in gone_lessons for pr in by_lesson.get(i, []) if (pr["made"] or "") >= night)
        report["predictions_made"] = max(0, report["predictions_made"] - made_tonight)
    return scrub_obj(report, p.quotes)


# --------------------------------------------------------------------------------------
# Projects kept out

IGNORE_MARKER = ".openmemory-ignore"
TRANSCRIPTS_READ = 20       # a project folder's transcripts read (first records only) to learn its folder


SESSION_LINE = "session "  # an ignore-list line that keeps one session out: "session <its full id>"
SESSION_MIN = 8            # characters of a session id forget --session takes: recall and show print 8


def _ignore_lines() -> list:
    """The lines of ~/.openmemory/ignore without comments; a missing or unreadable file has none."""
    try:
        text = paths.ignore_list_path().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in (raw.split("#", 1)[0].strip() for raw in text.splitlines()) if line]


def ignored_folders() -> list:
    """The folders of ~/.openmemory/ignore, resolved (its `session <id>` lines are no folders)."""
    return [Path(os.path.realpath(os.path.expanduser(line))) for line in _ignore_lines()
            if not line.startswith(SESSION_LINE)]


def ignored_sessions() -> list:
    """The session ids of ~/.openmemory/ignore's `session <id>` lines (forget --session wrote them)."""
    return [line[len(SESSION_LINE):].strip() for line in _ignore_lines()
            if line.startswith(SESSION_LINE) and line[len(SESSION_LINE):].strip()]


def keep_session_out(session_id: str, now: str) -> None:
    """Keep a session forgotten whole out of every later ingest: a line in ~/.openmemory/ignore,
    which the person deletes to let what it says next in (what was forgotten stays forgotten)."""
    files.append_own(paths.ignore_list_path(), (
        f"{SESSION_LINE}{session_id}  # forgotten {now[:10]} (openmemory forget --session); delete this "
        f"line to let what it says from now on in\n").encode("utf-8", "surrogatepass"))


def find_session(store, given: str) -> str:
    """The session id of a full session id or a prefix of SESSION_MIN characters or more that
    names one session stored or kept out, or one of them holding memories; else UsageError
    naming the candidates (a prefix matching none, or several)."""
    given = (given or "").strip()
    if len(given) < SESSION_MIN:
        raise UsageError(f"--session {given!r} is too short: give the session's id, or its first {SESSION_MIN} "
                         f"characters or more, as recall and show print it (`session 0f6074fc`)")
    stored = {s["id"]: s for s in store.sessions_starting(given)}
    listed = [sid for sid in ignored_sessions() if sid.startswith(given)]
    if given in stored or given in listed:
        return given
    found = sorted(set(stored) | set(listed))
    if len(found) == 1:
        return found[0]
    # A prefix as recall shows it names the session it has memories of (or one forgotten: the
    # same forget run again): a session of the same prefix with none (a Codex subagent's own
    # rollout, read through its parent's, whose id shares the parent's first characters as
    # UUIDv7 ids started together do) does not count.
    holding = [sid for sid in found if sid in stored and any(store.memories_of_session(sid)[:2])
               or sid in listed and sid not in stored]
    if len(holding) == 1:
        return holding[0]
    if not found:
        raise UsageError(f"no session {given} in memory; recall and show print each memory's session "
                         f"(`session 0f6074fc`), `openmemory recall --json` its whole id")
    told = [f"{sid} ({stored[sid]['started'][:10] if stored[sid]['started'] else 'no date'}, "
            f"{paths.one_line(stored[sid]['cwd']) if stored[sid]['cwd'] else 'no folder'})"
            if sid in stored else f"{sid} (forgotten)" for sid in found]
    raise UsageError(f"{len(found)} sessions start with {given}: {'; '.join(told)}; give more of the id")


class OptOut:
    """Answers "is this working folder kept out?", reading the list once and each folder once."""

    def __init__(self):
        self.listed = ignored_folders()
        self.sessions = set(ignored_sessions())
        self._seen = {}
        self._folders = None
        self._folder_seen = {}

    def reason(self, cwd) -> str | None:
        """Why a session in cwd is kept out (the marker or the list entry), or None."""
        if not cwd or not isinstance(cwd, str):
            return None
        if cwd not in self._seen:
            self._seen[cwd] = self._reason(cwd)
        return self._seen[cwd]

    def session(self, *session_ids) -> str | None:
        """Why a session (by its own id, or the id it is stored under) is kept out, or None."""
        found = next((sid for sid in session_ids if sid and sid in self.sessions), None)
        return f"session {found} (listed in {paths.ignore_list_path()})" if found else None

    def transcript(self, path) -> str | None:
        """Why a transcript is kept out before it is read, by its name (Claude Code's is its
        session's id, a Codex rollout's ends with it), or None: one forgotten is not read again."""
        if not self.sessions:
            return None
        stem = Path(path).stem
        return self.session(stem, *(sid for sid in self.sessions if stem.endswith("-" + sid)))

    def memory_folder(self, folder: Path, cwds=()) -> str | None:
        """Why a Claude Code memory folder belongs to a project kept out, or None.

        Its project is known from the stored sessions' working folders (cwds) that map to
        it, and from the first records of the transcripts Claude Code keeps beside it.
        """
        key = str(folder)
        if key not in self._folder_seen:
            self._folder_seen[key] = None
            if self._folders is None:  # each stored working folder's memory folder, found once
                self._folders = {}
                for cwd in cwds:
                    self._folders.setdefault(str(paths.memory_dir_for(cwd)), []).append(cwd)
            known = self._folders.get(key, [])
            for cwd in known:
                if self.reason(cwd):
                    self._folder_seen[key] = self.reason(cwd)
                    break
            if not known:  # a project never ingested: its transcripts' first records say where
                for transcript in sorted(Path(folder).parent.glob("*.jsonl"))[:TRANSCRIPTS_READ]:
                    try:
                        with open(transcript, "rb") as f:
                            cwd = transcripts.working_folder(f)
                    except OSError:
                        continue
                    if self.reason(cwd):
                        self._folder_seen[key] = self.reason(cwd)
                        break
        return self._folder_seen[key]

    def _reason(self, cwd: str) -> str | None:
        here = Path(os.path.realpath(os.path.expanduser(cwd)))
        chain = (here, *here.parents)
        twin = _twin(os.path.expanduser(cwd), here)
        if twin is not None:    # the repository's marker or list line keeps its worktrees out too
            chain += tuple(folder for folder in (twin, *twin.parents) if folder not in chain)
        for folder in chain:
            try:
                if (folder / IGNORE_MARKER).exists():
                    return str(folder / IGNORE_MARKER)
            except OSError:  # a name too long for this file system, a folder we may not read
                continue
        for folder in self.listed:
            if folder in chain:
                return f"{folder} (listed in {paths.ignore_list_path()})"
        return None


def _twin(cwd: str, here: Path) -> Path | None:
    """The same place in the repository's main working tree when cwd is in a linked worktree of it
    (`git worktree add ../shop-fix`: a sibling folder, where the repository's untracked marker is
    not, nor a committed one the worktree's older branch lacks), or was (a worktree removed since,
    a folder moved: paths.project_of); else None. Its lessons are the repository's: so is its opt-out."""
    try:
        if here.exists():
            top = paths.work_tree(here)
            root = paths.git_root(here) if top is not None else None
            return root / here.relative_to(top) if root is not None and root != top else None
        project = paths.project_of(cwd) if os.path.isabs(cwd) else cwd
    except (OSError, ValueError):
        return None
    return Path(os.path.realpath(project)) if os.path.isabs(project) and project != cwd else None


def kept_out(cwd) -> str | None:
    """Why a session in cwd is kept out of memory, or None (one-off; use OptOut for many)."""
    return OptOut().reason(cwd)


def refuse_kept_out(cwd) -> None:
    """Refuse a note for a project kept out of memory, in one line (`remember`, CLI and MCP)."""
    why = kept_out(cwd) if cwd else None
    if why:
        raise OpenMemoryError(f"{paths.one_line(cwd)} is kept out of memory ({paths.one_line(why)}), so nothing is remembered for it; "
                              f"remove that to let notes in")
