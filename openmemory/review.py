"""The lessons as the person reviews them: which are live and which candidates (what backs
each, backing.py decides), the candidates that lapse, and the person's own acts: approve,
reject (a veto, as deleting the lesson's file is), edit (the text is theirs from then on).

Only the person approves: the CLI's `openmemory lessons approve` is the one way in; the MCP
server and the model never call approve or edit (test_mcp pins it).
"""
import re

from . import backing, counts, paths, render
from .clock import iso, parse_time
from .errors import OpenMemoryError, UsageError
from .forget import incident
from .shorten import clip
from .store import Store
from .wording import LESSON_CHARS, call_about, source

SOURCES_LISTED = 3          # where a lesson came from, newest first, in `openmemory lessons`

# The words `openmemory lessons` says what backs a lesson in (backing.BACKERS).
BACKED_BY = {"approved": "you approved it", "edited": "you wrote its text", "judge": "the judge found it lasting",
             "standing": "you said it as a standing rule", "sessions": "it came up in {seen} sessions"}


# --------------------------------------------------------------------------------------
# Live or candidate

def _sources(store: Store, lessons: list) -> dict:
    return store.episodes_by_id(sorted({i for ls in lessons for i in ls["sources"]}),
                                ("id", "session_id", "kind", "at", "cwd", "title", "facts"))


def settle(store: Store, ids=None, now: str | None = None) -> dict:
    """Decide each lesson's state from what backs it now (these ids, or every lesson not vetoed).

    Returns {"live": ids that went live, "candidate": ids that became candidates}; a lesson
    whose backing did not change is not written. Call inside a transaction (or alone).
    """
    now = iso(now)
    wanted = None if ids is None else set(ids)
    lessons = [ls for ls in store.all_lessons() if not ls["vetoed"] and (wanted is None or ls["id"] in wanted)]
    episodes = store.backing_sources(sorted({i for ls in lessons for i in ls["sources"]}))
    updates, moved = [], {"live": [], "candidate": []}
    for ls in lessons:
        by = backing.backers(ls, [episodes[i] for i in ls["sources"] if i in episodes])
        state = backing.LIVE if by else backing.CANDIDATE
        if state == ls["state"] and by == ls["backing"].get("by"):
            continue
        updates.append((ls["id"], state, dict(ls["backing"], by=by)))
        if state != ls["state"]:
            moved[state].append(ls["id"])
    if updates:
        with store.transaction():
            store.set_lesson_states(updates, now)
    return moved


def lapse(store: Store, now: str) -> list:
    """Archive the candidates nothing backed within backing.LAPSE_DAYS; returns their ids."""
    gone = [ls["id"] for ls in store.all_lessons() if ls["state"] == backing.CANDIDATE and not ls["archived"]
            and not ls["vetoed"] and backing.lapses(ls["since"], now)]
    if gone:
        with store.transaction():
            store.lapse_lessons(gone, now)
    return gone


# --------------------------------------------------------------------------------------
# The list

def state_name(lesson: dict) -> str:
    """live, candidate, vetoed or archived: what the person sees."""
    if lesson["vetoed"]:
        return "vetoed"
    if lesson["archived"]:
        return "archived"
    return lesson["state"]


ORDER = {"candidate": 0, "live": 1, "archived": 2, "vetoed": 3}


def listing(store: Store) -> list:
    """Every lesson and candidate, candidates first, each with its state, what backs it and where
    it came from (the date, the project, the person's words or the failure's cause)."""
    lessons = store.all_lessons()
    episodes = _sources(store, lessons)
    out = []
    for ls in lessons:
        srcs = sorted((episodes[i] for i in ls["sources"] if i in episodes), key=lambda e: (e["at"], e["id"]))
        cwds = {ep["id"]: ep["cwd"] for ep in srcs}
        came = [{"episode": s["id"], "kind": s["kind"], "at": s["at"], "project": project_name(cwds[s["id"]]),
                 "what": s["what"]} for s in by_session(srcs)]
        out.append({
            "id": ls["id"], "ref": f"lesson:{ls['id']}", "state": state_name(ls), "text": ls["text"],
            "kind": ls["kind"], "seen": ls["seen"], "scope": "project" if ls["cwd"] else "everywhere",
            "project": paths.moved_to(ls["cwd"]) if ls["cwd"] and paths.is_absolute(ls["cwd"]) else ls["cwd"],
            "strength": round(float(ls["strength"]), 4),
            "backed_by": list(ls["backing"].get("by") or []),
            "judged": "not lasting" if backing.judged_no(ls, srcs) else None,
            "edited": bool(ls["backing"].get("edited")), "approved": ls["backing"].get("approved"),
            "created": ls["created"], "updated": ls["updated"],
            "since": ls["since"] if ls["state"] == backing.CANDIDATE else None,
            "episodes": [ep["id"] for ep in srcs], "sources": came})
    out.sort(key=lambda e: (ORDER[e["state"]], -_newest(e), e["id"]))
    return out


def _newest(entry: dict) -> float:
    at = max([s["at"] for s in entry["sources"]] + [entry["updated"] or ""])
    return parse_time(at).timestamp() if at else 0.0


def project_name(cwd) -> str:
    """A project in one word: its folder's name (a path from another machine too)."""
    if not cwd:
        return ""
    root = paths.one_line(paths.project_of(cwd) if paths.is_absolute(cwd) else str(cwd))
    return root.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or root


def by_session(eps: list) -> list:
    """One line per session a lesson came from: the correction if there was one, else the error."""
    best: dict = {}
    for ep in eps:
        key = incident(ep)
        rank = {"correction": 0, "error": 1}.get(ep["kind"], 2)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, ep)
    failed = {(ep["session_id"], ep["facts"].get("command")) for ep in eps if ep["kind"] == "error"}
    out = []
    for _, ep in sorted(best.values(), key=lambda x: (x[1]["at"], x[1]["id"])):
        item = source(ep)
        if ep["kind"] == "correction" and (ep["session_id"], call_about(ep["facts"])[0]) in failed \
                and not ep["facts"].get("rejected") and call_about(ep["facts"])[0]:
            item["what"] += " failed"
        out.append(item)
    return out


def told(entry: dict) -> list:
    """A listed lesson as a few lines for the person (`openmemory lessons`)."""
    where = f"project {paths.one_line(entry['project'])}" if entry["project"] else "every project"
    head = f"{entry['ref']} · {entry['state']} · {counts.seen_words(entry['seen'])} · {where}"
    lines = [head, "  " + entry["text"]]
    if entry["state"] == "live":
        said = [BACKED_BY[b].format(seen=entry["seen"]) for b in entry["backed_by"] if b in BACKED_BY]
        if said:
            lines.append("  live because " + "; ".join(said))
    elif entry["state"] == "candidate":
        why = "the judge found nothing lasting in it" if entry["judged"] else "nothing backs it yet"
        lines.append(f"  candidate since {(entry['since'] or '')[:10]}: {why}; "
                     f"approve: openmemory lessons approve {entry['ref']}")
    elif entry["state"] == "archived" and entry["since"]:
        lines.append(f"  lapsed: nothing backed it in {backing.LAPSE_DAYS} days from {entry['since'][:10]}; "
                     f"approve: openmemory lessons approve {entry['ref']}")
    elif entry["state"] == "archived":
        lines.append(f"  faded: it did not come up again, so it left the agent's memory; to keep it: "
                     f"openmemory lessons approve {entry['ref']}")
    for src in reversed(entry["sources"][-SOURCES_LISTED:]):
        project = f", {src['project']}" if src["project"] else ""
        lines.append(f"  - {src['at'][:10]}{project}: {src['what']}")
    if len(entry["sources"]) > SOURCES_LISTED:
        lines.append(f"  - and {len(entry['sources']) - SOURCES_LISTED} earlier")
    return lines


# --------------------------------------------------------------------------------------
# The person's acts

_LESSON_ID = re.compile(r"(?i)(?:lesson[:#]?|l)?(\d+)")


def parse_id(word: str) -> int:
    """A lesson id as `forget` takes it (`lesson:3`), as recall shows it (`l3`), or its number alone."""
    m = _LESSON_ID.fullmatch(str(word).strip())
    if not m or int(m.group(1)) < 1:
        raise UsageError(f"{word!r} is not a lesson id; `openmemory lessons` lists them as lesson:N "
                              f"(recall shows them as lN)")
    return int(m.group(1))


def _lesson(store: Store, lesson_id: int) -> dict:
    found = next((ls for ls in store.all_lessons() if ls["id"] == lesson_id), None)
    if found is None:
        raise UsageError(f"no lesson {lesson_id} in memory; `openmemory lessons` lists them")
    return found


def _not_vetoed(store: Store, lesson: dict, act: str, undo_veto: bool = False, text: str | None = None) -> None:
    """A vetoed lesson is approved or edited only when the person takes the veto back, by name;
    never into the words of a lesson they forgot (text: an edit's), whose veto no command takes
    back (the next render vetoes it again)."""
    if render.forgotten_wording(lesson["text"] if text is None else text):
        raise OpenMemoryError(f"lesson:{lesson['id']} would have the words of a lesson you forgot, which stay out "
                              f"for good; to keep it, put it in other words: openmemory lessons edit "
                              f"lesson:{lesson['id']} \"text\"{' --undo-veto' if lesson['vetoed'] else ''}")
    if lesson["vetoed"] and undo_veto:
        render.undo_veto(store, lesson)
    elif lesson["vetoed"]:
        text = '"text" ' if act == "edit" else ""
        raise OpenMemoryError(f"lesson:{lesson['id']} was rejected (vetoed) and stays so; to {act} it all the same, "
                              f"take the veto back: openmemory lessons {act} lesson:{lesson['id']} {text}--undo-veto")


def approve(store: Store, lesson_id: int, now: str | None = None, undo_veto: bool = False) -> dict:
    """The person approves a lesson: it is live (and back from the archive), whatever else says;
    a vetoed one only with undo_veto (the veto taken back).

    Returns the lesson as it is now."""
    now = iso(now)
    lesson = _lesson(store, lesson_id)
    _not_vetoed(store, lesson, "approve", undo_veto)
    with store.transaction():
        store.set_lesson_states([(lesson_id, backing.LIVE, dict(lesson["backing"], approved=now,
                                  by=["approved"] + [b for b in lesson["backing"].get("by") or [] if b != "approved"]))],
                                now)
        store.unarchive_lesson(lesson_id, now)
        store.set_lesson_strength(lesson_id, max(float(lesson["strength"]), 1.0) + backing.APPROVED_BOOST, now)
    return _lesson(store, lesson_id)


def reject(store: Store, lesson_id: int, now: str | None = None) -> dict:
    """The person rejects a lesson or candidate: a veto by its wording, as deleting its file is."""
    now = iso(now)
    lesson = _lesson(store, lesson_id)
    if not lesson["vetoed"]:
        render.reject(store, lesson, now)
    return _lesson(store, lesson_id)


def edit(store: Store, lesson_id: int, text: str, now: str | None = None, undo_veto: bool = False) -> dict:
    """The person's own text for a lesson: kept whatever rewords lessons (a forgotten source, a
    wider scope, a judge), and live, as approving it is: a lesson the person had neither approved
    nor edited is made as strong as approve makes it (so it gets its prediction, and fades no
    sooner than an approved one)."""
    now = iso(now)
    text = " ".join(str(text or "").split())
    if len(text) > LESSON_CHARS:      # said first: a long text of one word is too long before it is too short
        raise UsageError(f"a lesson is one line of at most {LESSON_CHARS} characters (Claude Code's "
                              f"MEMORY.md index line); this one has {len(text)}")
    if len(text.split()) < 2:
        raise UsageError("say the lesson in a few words: openmemory lessons edit lesson:N \"the lesson\"")
    lesson = _lesson(store, lesson_id)
    _not_vetoed(store, lesson, "edit", undo_veto, text)
    by = ["edited"] + [b for b in lesson["backing"].get("by") or [] if b != "edited"]
    with store.transaction():
        store.edit_lesson(lesson_id, text, dict(lesson["backing"], edited=now, by=by))
        store.unarchive_lesson(lesson_id, now)
        if not ({"approved", "edited"} & set(lesson["backing"].get("by") or [])):
            store.set_lesson_strength(lesson_id, max(float(lesson["strength"]), 1.0) + backing.APPROVED_BOOST, now)
    return _lesson(store, lesson_id)


def brief(lesson: dict) -> str:
    """One line on a lesson after the person acted on it."""
    return f"lesson:{lesson['id']} · {state_name(lesson)} · {clip(lesson['text'], 110)}"
