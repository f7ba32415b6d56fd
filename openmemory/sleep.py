"""Sleep: the nightly passes that turn repeated surprises into lessons and keep them honest.

`night(store, now, render)` runs decay → consolidation → verification → prediction, each
in its own transaction and each safe to re-run at the same `now` (a second run changes
nothing), then render (when given one), and writes the morning report.

Lesson wording is deterministic and comes only from what the person typed and from the
agent's own failed commands and their error lines, never from other tool output (file
contents, web pages): that text can carry instructions meant to poison memory.
"""
import json
import math
import re
from datetime import timedelta

from . import embed, paths
from .redact import redact
from .clock import iso, parse_time
from .shorten import clip
from .store import Store
from .transcripts import ERRORISH   # what ingest already calls an error line

# --------------------------------------------------------------------------------------
# The numbers. The first six are the design's (../shared/spec, "Sleep runs ..."); the rest
# are openmemory's choices, each with its reason.

HALF_LIFE_DAYS = 45.0        # design: strength × 2^(−days since last touch / 45)
ARCHIVE_BELOW = 0.15         # design: below this a memory is archived, never deleted (~123 days untouched)
JOIN_SIMILARITY = 0.55       # design: a surprise joins the nearest lesson at cosine ≥ 0.55
MATCH_SIMILARITY = 0.5       # design: an episode confirms a prediction at cosine ≥ 0.5
PREDICTION_DAYS = 14         # design: a prediction fails after 14 days without a match
PREDICT_FROM = 1.0           # design: lessons with strength ≥ 1 get a prediction
ERROR_SESSIONS = 2           # design: an error must repeat, in two or more different sessions

NEW_LESSON_STRENGTH = 1.0    # a new lesson starts where a new episode does, enough for a prediction
SEEN_BOOST = 0.5             # each further session it comes up in; and never below a new lesson's
CONFIRMED_BOOST = 0.5        # a confirmed prediction counts as much as being seen again
FAILED_FACTOR = 0.5          # a lesson that did not come up in 14 days keeps half its strength
LESSON_CHARS = 150           # Claude Code's MEMORY.md index: one line "under ~150 characters"
REPORT_ITEMS = 8             # lines per section of the morning report before "and N more"
SOURCES_SHOWN = 3            # sources shown under each lesson in the report
SIGNATURE_SOURCES = 16       # a lesson is compared as the centroid of its latest sources: what it has
                             # been lately, at a bounded cost a night (all joined at cosine ≥ 0.55 anyway)
ARCHIVE_AFTER_DAYS = round(HALF_LIFE_DAYS * math.log2(1 / ARCHIVE_BELOW))   # 123: untouched, from 1.0

EVIDENCE_KINDS = ("error", "correction", "note")   # what can confirm a prediction (not session summaries)


# --------------------------------------------------------------------------------------
# The night

def night(store: Store, now: str | None = None, render=None) -> dict:
    """Run the four passes, then render, and write the morning report; returns the report's facts.

    render: a callable `render(store, now=...) -> dict` with `written`, `vetoed` (lessons
    newly vetoed) and `warnings`, or None when render is not wired in.
    """
    now = iso(now)
    facts = {"night": now}
    facts["decay"] = decay(store, now)
    facts["consolidation"] = consolidate(store, now)
    facts["verification"] = verify(store, now)
    facts["prediction"] = predict(store, now)
    facts.update(_rendered(store, now, render))
    report = morning_facts(store, facts)
    previous = _load_json(store.get_state("morning"))
    keep = (previous and not _eventful(report) and previous.get("night", "")[:10] == now[:10])
    with store.transaction():
        store.set_state("last_sleep", now)
        if not keep:
            store.set_state("morning", json.dumps(report, ensure_ascii=False, sort_keys=True))
    if not keep:
        write_morning(morning_text(report))
    return report


def _rendered(store: Store, now: str, render) -> dict:
    """Call render and normalise what it says (vetoes with their text, warnings)."""
    if render is None:
        return {"render": None, "vetoed": [], "warnings": []}
    try:
        out = render(store, now=now) or {}
    except Exception as e:  # the passes are committed; the report must still be written
        return {"render": None, "vetoed": [], "warnings": [f"render failed: {type(e).__name__}: {e}"],
                "errors": [f"render failed: {e}"]}
    vetoed = []
    raw = out.get("vetoed") or []
    items = raw.items() if isinstance(raw, dict) else ((v, None) if not isinstance(v, dict)
                                                      else (v.get("id"), v.get("text")) for v in raw)
    for lesson_id, text in items:
        if text is None:
            text = store.lesson_text(lesson_id)
        vetoed.append({"id": int(lesson_id), "text": text})
    written = out.get("written") or []
    return {"render": {"written": len(written) if isinstance(written, (list, tuple, set, dict)) else int(written)},
            "vetoed": vetoed, "warnings": [str(w) for w in out.get("warnings") or []]}


# --------------------------------------------------------------------------------------
# Pass 1: decay

def decay(store: Store, now: str) -> dict:
    """Fade every memory by 2^(−days/45) since it was last touched or decayed; archive below 0.15.

    The clock of a memory is the later of its last touch (when it happened, or when recall
    last used it) and the last time decay brought its strength up to date (`decayed`), so
    decaying twice a night changes nothing and nightly equals weekly.
    """
    t_now = parse_time(now)
    archived: dict = {}
    lessons = []
    with store.transaction():
        updates = []
        for row in store.episodes_to_decay():
            touched = max(row["at"], row["last_touched"]) if row["recalls"] else row["at"]
            strength = _decayed(row["strength"], max(touched, row["decayed"] or ""), t_now)
            if strength is None:
                continue
            gone = strength < ARCHIVE_BELOW
            updates.append((strength, now, int(gone), row["id"]))
            if gone:
                archived[row["kind"]] = archived.get(row["kind"], 0) + 1
        store.decay_episodes(updates)
        updates = []
        for row in store.lessons_to_decay():
            strength = _decayed(row["strength"], row["decayed"] or row["created"], t_now)
            if strength is None:
                continue
            gone = strength < ARCHIVE_BELOW
            updates.append((strength, now, int(gone), row["id"]))
            if gone:
                lessons.append({"id": row["id"], "text": row["text"], "cwd": row["cwd"]})
        store.decay_lessons(updates)
    return {"archived": archived, "lessons_archived": lessons}


def _decayed(strength: float, since: str, t_now) -> float | None:
    """strength × 2^(−days/HALF_LIFE) from since to now; None when no time has passed."""
    days = (t_now - parse_time(since)).total_seconds() / 86400
    if days <= 0:
        return None
    return strength * 2 ** (-days / HALF_LIFE_DAYS)


# --------------------------------------------------------------------------------------
# Pass 2: consolidation

class _Lesson:
    """A lesson while consolidation works on it: its signature is the sum of its sources'."""

    def __init__(self, row=None):
        self.id = row["id"] if row else None
        self.text = row["text"] if row else ""
        self.kind = row["kind"] if row else ""
        self.cwd = row["cwd"] if row else None
        self.strength = row["strength"] if row else NEW_LESSON_STRENGTH
        self.seen = row["seen"] if row else 0
        self.sources = json.loads(row["sources"]) if row else []
        self.archived = bool(row["archived"]) if row else False
        self.vetoed = bool(row["vetoed"]) if row else False
        self.sessions: set = set()
        self.sum: dict = {}             # sparse sum of its sources' unit vectors
        self._norm = 0.0
        self.new = row is None
        self.before = self.strength
        self.joined: list = []          # episode ids that joined tonight (not for new lessons)
        self.counted: list = []         # of those, the ones from a session not seen before
        self.widened = False            # a source from another project: now applies everywhere
        self.revived = False

    def add(self, ep: dict, unit: dict) -> None:
        for i, x in unit.items():
            self.sum[i] = self.sum.get(i, 0.0) + x
        self._norm = 0.0
        self.sessions.add(_incident(ep))

    def similarity(self, unit: dict) -> float:
        """Cosine between the lesson (its sources' centroid) and a unit vector."""
        if not self._norm:
            self._norm = math.hypot(*self.sum.values())
        return _dot(self.sum, unit) / self._norm if self._norm else 0.0

    def sessions_known(self, store: Store) -> set:
        """The sessions of all its sources (what `seen` counts), beyond the ones in its signature."""
        return {_incident(ep) for ep in store.episodes_by_id(self.sources).values()}

    def vector(self) -> list:
        return [self.sum.get(i, 0.0) for i in range(embed.DIMENSIONS)]


def consolidate(store: Store, now: str) -> dict:
    """Join new surprises to the nearest lesson (cosine ≥ 0.55) or make new lessons of them.

    A correction with an instruction in it makes a lesson alone; an error makes one only
    when similar errors happened in two or more sessions. A vetoed lesson takes in what is
    nearest to it and stays vetoed. Each surprise is examined once (`consolidated` is the
    lesson it fed, or 0: examined, no lesson yet); an error stays in the pool for later
    repeats until it is archived.
    """
    places = _Places()
    with store.transaction():
        lessons = _load_lessons(store)
        pending = store.pending_surprises(now)
        vectors = _Vectors(pending)
        fed: dict = {}                  # episode id -> lesson fed tonight
        examined = [ep["id"] for ep in pending if ep["consolidated"] is None]

        def join(lesson: _Lesson, ep: dict) -> None:
            fed[ep["id"]] = lesson
            lesson.sources.append(ep["id"])
            new_incident = _incident(ep) not in lesson.sessions
            lesson.add(ep, vectors[ep["id"]] if ep["id"] in vectors else _unit(surprise_vector(ep)))
            if not lesson.new:
                lesson.joined.append(ep["id"])
            if not new_incident:
                return                  # the same session again: the same occurrence
            lesson.seen += 1
            if lesson.vetoed:
                return                  # joins silently and stays vetoed
            if lesson.new:
                lesson.strength = NEW_LESSON_STRENGTH + SEEN_BOOST * (lesson.seen - 1)
            else:
                lesson.counted.append(ep["id"])
                lesson.strength = max(lesson.strength + SEEN_BOOST, NEW_LESSON_STRENGTH)
                if lesson.archived:
                    lesson.archived, lesson.revived = False, True
            project = places.project(ep["cwd"])
            if lesson.cwd and project and project != lesson.cwd:
                lesson.cwd, lesson.widened = None, not lesson.new
                lesson.text = unscoped(lesson.text)

        def nearest(vec) -> _Lesson | None:
            best, score = None, JOIN_SIMILARITY
            for lesson in lessons:
                s = lesson.similarity(vec)
                if s >= score:
                    best, score = lesson, s
            return best

        def found(kind: str, members: list, body: str) -> _Lesson:
            projects = {places.project(m["cwd"]) for m in members} - {None}
            cwd = projects.pop() if len(projects) == 1 else None
            text = scoped(body, cwd, places)
            same = next((ls for ls in lessons if ls.text.lower() == text.lower()), None)
            if same is not None:        # never a second copy of a lesson, vetoed or not
                for m in members:
                    join(same, m)
                return same
            lesson = _Lesson()
            lesson.kind, lesson.cwd, lesson.text = kind, cwd, text
            lessons.append(lesson)
            for m in members:
                join(lesson, m)
            return lesson

        # Corrections first: each is examined once, and one suffices for a lesson.
        errors_by_session: dict = {}
        for ep in pending:
            if ep["kind"] == "error":
                errors_by_session.setdefault(ep["session_id"], []).append(ep)
        for ep in pending:
            if ep["kind"] != "correction" or ep["consolidated"] is not None:
                continue
            lesson = nearest(vectors[ep["id"]])
            if lesson is not None:
                join(lesson, ep)
            else:
                body = correction_lesson(ep["facts"])
                if body is None:
                    continue            # no instruction in it: it stays an episode
                lesson = found("feedback", [ep], body)
            # The failed call the person was answering is part of the same surprise.
            command = ep["facts"].get("command")
            for err in errors_by_session.get(ep["session_id"], []):
                if command and err["id"] not in fed and err["facts"].get("command") == command \
                        and is_lesson_error(err["facts"]):
                    join(lesson, err)

        # Then errors: the new ones join a lesson, or gather the similar errors of the pool.
        pool = [ep for ep in pending if ep["kind"] == "error" and is_lesson_error(ep["facts"])]
        for ep in pool:
            if ep["consolidated"] is not None or ep["id"] in fed:
                continue
            lesson = nearest(vectors[ep["id"]])
            if lesson is not None:
                join(lesson, ep)
                continue
            vec = vectors[ep["id"]]
            similar = [m for m in pool if m["id"] != ep["id"] and m["id"] not in fed
                       and _dot(vec, vectors[m["id"]]) >= JOIN_SIMILARITY]
            members = sorted([ep] + similar, key=lambda m: (m["at"], m["id"]))
            if len({m["session_id"] for m in members}) >= ERROR_SESSIONS:
                found("project", members, error_lesson([m["facts"] for m in members]))

        report = _write_lessons(store, lessons, fed, examined, now)
    return report


def _write_lessons(store: Store, lessons: list, fed: dict, examined: list, now: str) -> dict:
    new, strengthened = [], []
    for lesson in lessons:
        if lesson.new:
            lesson.id = store.add_lesson(lesson.text, lesson.kind, lesson.cwd, lesson.strength, lesson.seen,
                                         lesson.sources, now)
            new.append({"id": lesson.id, "text": redact(lesson.text), "kind": lesson.kind, "cwd": lesson.cwd,
                        "seen": lesson.seen, "strength": round(lesson.strength, 2), "sources": lesson.sources})
        elif lesson.joined:
            store.update_lesson(lesson.id, lesson.text, lesson.cwd, lesson.strength, lesson.seen, lesson.sources,
                                lesson.archived, now)
            if lesson.counted:
                strengthened.append({
                    "id": lesson.id, "text": lesson.text, "kind": lesson.kind, "cwd": lesson.cwd,
                    "seen": lesson.seen, "before": round(lesson.before, 2), "strength": round(lesson.strength, 2),
                    "sources": lesson.joined, "everywhere": lesson.widened, "revived": lesson.revived})
    store.mark_consolidated({eid: lesson.id for eid, lesson in fed.items()},
                            [eid for eid in examined if eid not in fed])
    return {"new": new, "strengthened": strengthened, "examined": len(examined), "joined": len(fed)}


class _Vectors(dict):
    """Unit surprise vectors of episodes, computed when first asked for."""

    def __init__(self, episodes):
        super().__init__()
        self.episodes = {ep["id"]: ep for ep in episodes}

    def __contains__(self, eid):
        return eid in self.episodes

    def __missing__(self, eid):
        self[eid] = _unit(surprise_vector(self.episodes[eid]))
        return self[eid]


def _load_lessons(store: Store, only: set | None = None) -> list:
    """Every lesson (vetoed and archived too: what is near them joins them), with signatures."""
    lessons = [_Lesson(r) for r in store.lessons_to_consolidate() if only is None or r["id"] in only]
    ids = sorted({i for ls in lessons for i in ls.sources[-SIGNATURE_SOURCES:]})
    episodes = store.episodes_by_id(ids)
    for lesson in lessons:
        lesson.sessions = set(lesson.sessions_known(store) if len(lesson.sources) > SIGNATURE_SOURCES else ())
        for eid in lesson.sources[-SIGNATURE_SOURCES:]:
            ep = episodes.get(eid)
            if ep is not None:
                lesson.add(ep, _unit(surprise_vector(ep)))
        if not lesson.sum:              # its sources are gone: its own words stand for it
            lesson.sum = _unit(embed.vector(lesson.text))
    return lessons


def _incident(ep: dict) -> str:
    """What `seen` counts: sessions (a note is its own)."""
    return ep.get("session_id") or f"episode:{ep['id']}"


class _Places:
    """The project of a cwd (its git repository's root, else the folder), asked once a night."""

    def __init__(self):
        self._roots: dict = {}

    def project(self, cwd):
        if not cwd:
            return None
        if cwd not in self._roots:
            root = paths.git_root(cwd)     # also for a folder since deleted: its repository may remain
            self._roots[cwd] = str(root) if root else cwd.rstrip("/") or "/"
        return self._roots[cwd]

    def is_repository(self, cwd) -> bool:
        return bool(cwd) and paths.git_root(cwd) is not None


# --------------------------------------------------------------------------------------
# What a surprise is about: the vector sleep compares

def surprise_vector(ep: dict) -> list:
    """The hashed vector of what a surprise is about: the command and its error, or the words
    said and the call they answered; a note's title and text. Not the episode's gist, whose
    session context ("While working on ...") would make unrelated surprises look alike."""
    facts = ep.get("facts") or {}
    if ep.get("kind") == "error":
        text = core_command(facts.get("command") or facts.get("tool") or "") + "\n" + \
            "\n".join(telling_lines(facts))
    elif ep.get("kind") == "correction":
        text = _head(facts.get("said") or "") + "\n" + core_command(facts.get("command") or "")
    else:
        text = (ep.get("title") or "") + "\n" + (ep.get("gist") or "")
    return embed.vector(text)


def _unit(vec) -> dict:
    """A vector as {dimension: value} at length 1: hashed vectors of short texts are sparse."""
    norm = math.hypot(*vec)
    return {i: x / norm for i, x in enumerate(vec) if x} if norm else {}


def _dot(a: dict, b: dict) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(i, 0.0) for i, x in a.items())


def telling_lines(facts: dict) -> list:
    """An error's lines that say what went wrong (not the bare "Exit code N")."""
    return [line for line in facts.get("error") or [] if not _EXIT.match(line)]


_EXIT = re.compile(r"^Exit code -?\d+$")
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


# --------------------------------------------------------------------------------------
# Lesson wording, without a model

def correction_lesson(facts: dict) -> str | None:
    """A short imperative line from the person's own words and the call they answered, or None
    when the words hold no instruction that lasts ("check again", "that still fails")."""
    said = facts.get("said") or ""
    command = core_command(facts.get("command") or "") if facts.get("tool") == "Bash" else ""
    sentence = instruction(said)
    if sentence is None:
        return None
    clauses = [c.strip() for c in re.split(r",\s+|;\s+|\s+but\s+", sentence) if c.strip()]
    negative = [c for c in clauses if _NEGATIVE.match(c)]
    positive = [c for c in clauses if not _NEGATIVE.match(c)]
    if command and _IMPERATIVE.match(sentence):     # a fact keeps its own words
        cmd_words = set(embed.words(command))
        about = [c for c in negative if _content(c) & cmd_words]
        vague = [c for c in negative if not _content(c)]
        if about and positive and not any(_CONTRAST.search(c) for c in positive):
            sentence = ", ".join(c for c in clauses if c not in about) + f", not `{command}`"
        elif vague and not positive:
            sentence = f"Don't run `{command}`"
        elif len(clauses) == 1 and re.search(r"\binstead$", sentence) and command not in sentence:
            sentence += f" of `{command}`"      # "use X instead": instead of what the agent ran
    text = codify(sentence, [command] if command else [])
    text = re.sub(r"\s+\bhere\b(?=[\s,.;:!]|$)", "", text)
    return _finish(text)


def error_lesson(members: list) -> str:
    """A line from repeated failures: the command (what they share) and its first error line."""
    commands = [core_command(f.get("command") or f.get("tool") or "") for f in members]
    command = _common_command(commands) or max(commands, key=commands.count)
    tool = members[0].get("tool") or "Bash"
    error = clip(error_line(members[0]).replace('"', "'"), 80)
    verb = "run" if tool == "Bash" else "use"
    return _finish(f"Don't {verb} `{clip(command, 60)}`: it fails with \"{error}\"")


def scoped(body: str, cwd, places: "_Places | None" = None) -> str:
    """The lesson as the agent reads it: "In this repository ..." when it is one project's."""
    if not cwd:
        return _fit(body)
    where = "In this repository" if (places or _Places()).is_repository(cwd) else "In this project"
    if body[1:2].islower():             # "Run ..." -> "run ...", but "PR ..." and "`make` ..." stay
        body = body[:1].lower() + body[1:]
    return _fit(f"{where} {body}")


def unscoped(text: str) -> str:
    """The same lesson for every project."""
    for prefix in ("In this repository ", "In this project "):
        if text.startswith(prefix):
            rest = text[len(prefix):]
            return rest[:1].upper() + rest[1:]
    return text


# The person's openers that carry no instruction ("ok so", "no,", "wait.", "actually").
_FILLER = re.compile(r"^(?:(?:ok(?:ay)?|ah+|oh+|hm+|uh+|um+|well|so|hey|sorry|actually|alright|right|hmm+|yes|yeah)"
                     r"\b[\s,.!:;…—-]*|(?:no+|nope|nah|wait|stop|hold on)(?:[\s]*[,.!:;…—-]+\s*|\s+(?=don'?t\b|do not\b|"
                     r"never\b|use\b|run\b|just\b|please\b|not\b|we\b|you\b|let'?s\b|i\b)))+", re.I)
_LEAD = re.compile(r"^(?:please\s+|just\s+|let'?s\s+|let us\s+|you (?:should|need to|must|have to)\s+|"
                   r"we (?:should|need to|must|have to)\s+|i (?:want|need) you to\s+|make sure (?:to|you)\s+|"
                   r"remember to\s+|(?=we use\b)we\s+)+", re.I)
_IMPERATIVE = re.compile(
    r"^(?:don'?t|do not|never|always|only|stop|avoid|use|run|prefer|keep|put|call|add|remove|write|check|make|"
    r"set|pass|install|import|leave|ask|read|edit|delete|commit|push|test|build|start|restart|switch|move|"
    r"rename|follow|include|exclude|skip|point|mock|return|wrap|target|pin|try|change|update|create|open|"
    r"store|save|log|print|handle|name|place|stick|go|look|search|merge|rebase|deploy|format|lint|type|"
    r"split|join|drop|stay|work|ship|reuse|document|comment|mention|tell|show)\b", re.I)
# What makes an instruction last beyond the moment: a prohibition, a rule, a preference,
# a contrast, or a named tool to do it with.
_LASTING = re.compile(r"\b(?:don'?t|do not|never|always|only|stop|avoid|prefer|instead|rather than|use|using)\b|"
                      r",\s*not\b|\bnot\s+`|\bwith\s+`", re.I)
# A statement of how things are, set against what the agent assumed ("X, not Y").
_FACT = re.compile(r"\b(?:is|are|lives?|goes|go|belongs?|runs?|sits?|comes?)\b.*(?:,\s*not\s+\S|\binstead of\b|"
                   r"\brather than\b)", re.I)
# ... but not a diagnosis of the moment ("the issue is the linter, not db:generate").
_DIAGNOSIS = re.compile(r"^(?:the\s+(?:issue|problem|bug|cause|error|reason|fix|culprit)|it|it'?s|that|that'?s|"
                        r"this|this is|i|i'?m|we'?re|you|you'?re|maybe|probably|seems)\b", re.I)
_NEGATIVE = re.compile(r"^(?:don'?t|do not|never|not|stop|no)\b", re.I)
_CONTRAST = re.compile(r"\b(?:instead|rather than|not)\b", re.I)
_GENERIC = {"use", "run", "do", "make", "try", "call", "don", "not", "never", "stop", "no", "thing", "that",
            "this", "it", "again", "anymore", "ever", "like"}


def instruction(said: str) -> str | None:
    """The first sentence of what the person typed that tells the agent how to work, or None."""
    head = _head(said)
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", head):
        sentence = _FILLER.sub("", sentence.strip()).strip()
        sentence = _LEAD.sub("", sentence).strip()
        sentence = re.sub(r"[,;]?\s*(?:please|thanks|thank you|i think|i guess|ok\??)[.!]*$", "", sentence,
                          flags=re.I).strip()
        if not sentence or sentence.endswith("?"):
            continue
        if _IMPERATIVE.match(sentence) and _LASTING.search(codify(sentence, [])):
            return sentence.rstrip(".!… ")
        if _FACT.search(sentence) and not _DIAGNOSIS.match(sentence):
            return sentence.rstrip(".!… ")    # "the config lives in X, not Y": a fact to keep
    return None


def _content(clause: str) -> set:
    return set(embed.words(clause)) - _GENERIC


def _head(said: str) -> str:
    """The part of a message a correction lives in (transcripts reads the first 240 characters)."""
    return (said or "").strip()[:240]


def core_command(command: str) -> str:
    """A command without its plumbing: `cd x && `, `2>&1`, a trailing `| head -40`."""
    command = " ".join((command or "").split())
    command = re.sub(r"\s*(?:\|\s*(?:head|tail|grep|less|more|cat|tee)\b[^|]*)+$", "", command)
    command = re.sub(r"\s*\d?>&\d|\s*2>\s*/dev/null", "", command)
    parts = [p.strip() for p in command.split("&&")]
    kept = [p for p in parts if p and not re.match(r"^(?:cd|pushd)\s", p)]
    return " && ".join(kept or parts)


def _common_command(commands: list) -> str:
    """The words every command starts with (`python x.py`, `python y.py` -> `python`)."""
    split = [c.split() for c in commands if c]
    if not split:
        return ""
    common = []
    for words in zip(*split):
        if len(set(words)) != 1:
            break
        common.append(words[0])
    return " ".join(common)


_CODE_TOKEN = re.compile(r"""(?x)
    ^(?: [~.]?/\S+                                     # a path: /etc/x, ./run.sh, ~/x
      | \S*[A-Za-z0-9][/\\][A-Za-z0-9]\S* | \w[\w.-]*/   # a/b, a folder/
      | \S*\w\.(?:[A-Za-z]{2,5}|\d+)(?:\W*$|[:(]\S*)   # a file or version: app.py, xterm.js, v1.2
      | \S*\w_\w\S* | \S*::\S* | \S*\(\)\S* | \S+=\S*   # snake_case, a::b, f(), KEY=value
      | \$\S+ | --?[A-Za-z][\w-]* )$""")
_NOT_CODE = {"e.g.", "i.e.", "etc.", "vs.", "and/or", "n/a", "w/o"}
_NOT_PROGRAM = {"use", "run", "with", "try", "call", "and", "or", "the", "a", "not", "of", "to", "in", "on",
                "instead", "then", "just", "also", "always", "never", "only", "via", "using", "is", "be", "but",
                "pass", "add", "set", "skip", "keep", "without", "drop", "give"}   # verbs before a flag


def codify(text: str, commands: list) -> str:
    """Put what looks like code in backticks: the agent's commands, quoted names, flags, paths."""
    spans = []                                          # (start, end) of code in text

    def taken(a, b):
        return any(a < e and s < b for s, e in spans)

    for m in re.finditer(r"`[^`]+`", text):
        spans.append(m.span())
    for m in re.finditer(r"(?<![\w`])['\"]([^'\"\s][^'\"\n]{0,40}?)['\"](?![\w`])", text):
        if not taken(*m.span()):
            spans.append(m.span())
    for command in sorted(filter(None, commands), key=len, reverse=True):
        for m in re.finditer(re.escape(command), text):
            if not taken(*m.span()):
                spans.append(m.span())
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]

    def bare(k):                                        # a token without trailing punctuation
        return tokens[k][2].rstrip(",.;:!?)")

    def free(k):
        return not taken(tokens[k][0], tokens[k][1])

    i = 0
    while i < len(tokens):
        word = bare(i)
        if not free(i) or not word or word.lower() in _NOT_CODE or "[REDACTED" in word \
                or not _CODE_TOKEN.match(word):
            i += 1
            continue
        first = last = i
        if word.startswith("-"):                        # a flag: with the program before it,
            if i > 0 and free(i - 1) and tokens[i - 1][2].lower() not in _NOT_PROGRAM \
                    and re.match(r"^[\w./-]+$", tokens[i - 1][2]):
                first = i - 1
            while last + 1 < len(tokens) and bare(last) == tokens[last][2]:   # ... more flags,
                nxt = bare(last + 1)                    # ... and the argument of a flag
                if not free(last + 1) or nxt.lower() in _NOT_PROGRAM or nxt.lower() in embed.STOP_WORDS \
                        or not re.match(r"^[\w./:=@+-]+$", nxt) \
                        or not (nxt.startswith("-") or bare(last).startswith("-")):
                    break
                last += 1
        spans.append((tokens[first][0], tokens[last][0] + len(bare(last))))
        i = last + 1
    out, pos = [], 0
    for s, e in sorted(spans):
        piece = text[s:e]
        out.append(text[pos:s])
        if piece.startswith("`"):
            out.append(piece)
        elif piece[:1] in "'\"" and piece[-1:] == piece[:1]:
            out.append(f"`{piece[1:-1]}`")
        else:
            out.append(f"`{piece}`")
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _finish(text: str) -> str:
    """One sentence: capitalised, ending with a full stop, within LESSON_CHARS."""
    text = " ".join(text.split()).rstrip(" ,;:")
    if not text:
        return text
    text = text[:1].upper() + text[1:]
    if text[-1] in "!?":
        text = text[:-1] + "."
    elif not (text.endswith(".") or text.endswith('."')):
        text += "."
    return _fit(text)


def _fit(text: str) -> str:
    if len(text) <= LESSON_CHARS:
        return text
    cut = text[:LESSON_CHARS - 1]
    for mark in (", ", "; ", ": "):
        at = cut.rfind(mark)
        if at > LESSON_CHARS // 2 and cut[:at].count("`") % 2 == 0:
            return cut[:at] + "."
    cut = cut.rsplit(" ", 1)[0]
    if cut.count("`") % 2:
        cut = cut[:cut.rfind("`")].rstrip()
    return cut + "…"


# --------------------------------------------------------------------------------------
# Pass 3: verification

def verify(store: Store, now: str) -> dict:
    """Resolve open predictions: confirmed by a matching episode in their 14 days, else failed.

    A match is an error, correction or note that happened (its `at`) after the prediction
    was made and within its 14 days, in the lesson's project (any project for a lesson that
    applies everywhere), at cosine ≥ 0.5 to the lesson's sources.
    """
    t_now = parse_time(now)
    places = _Places()
    confirmed, failed = [], []
    with store.transaction():
        open_ = store.open_predictions()
        if not open_:
            return {"confirmed": [], "failed": []}
        since = min(r["made"] for r in open_)
        evidence = store.episodes_between(EVIDENCE_KINDS, since, now)
        evidence = [ep for ep in evidence if ep["kind"] != "error" or is_lesson_error(ep["facts"])]
        vectors: dict = {}
        strengths: dict = {}
        for p in open_:
            deadline = parse_time(p["made"]) + timedelta(days=PREDICTION_DAYS)
            end = iso(min(deadline, t_now))
            expected = _unit(embed.decode(p["embedding"]))
            match = None
            for ep in evidence:
                if ep["at"] <= p["made"]:
                    continue
                if ep["at"] > end:
                    break
                if p["cwd"] and places.project(ep["cwd"]) != p["cwd"]:
                    continue
                if ep["id"] not in vectors:
                    vectors[ep["id"]] = _unit(surprise_vector(ep))
                if _dot(vectors[ep["id"]], expected) >= MATCH_SIMILARITY:
                    match = ep
                    break
            before = strengths.get(p["lesson_id"], p["strength"])
            if match is not None:
                after = before + CONFIRMED_BOOST
                store.resolve_prediction(p["id"], now, "confirmed", match["id"])
                confirmed.append({"id": p["id"], "lesson_id": p["lesson_id"], "lesson": p["text"],
                                  "made": p["made"], "evidence": _source(match),
                                  "before": round(before, 2), "strength": round(after, 2)})
            elif t_now >= deadline:
                after = before * FAILED_FACTOR
                store.resolve_prediction(p["id"], now, "failed")
                failed.append({"id": p["id"], "lesson_id": p["lesson_id"], "lesson": p["text"],
                               "made": p["made"], "deadline": iso(deadline),
                               "before": round(before, 2), "strength": round(after, 2)})
            else:
                continue
            strengths[p["lesson_id"]] = after
            store.set_lesson_strength(p["lesson_id"], after, now)
    return {"confirmed": confirmed, "failed": failed}


# --------------------------------------------------------------------------------------
# Pass 4: prediction

def predict(store: Store, now: str) -> dict:
    """One new prediction for each live lesson with strength ≥ 1 and none open: that what it is
    about comes up again within 14 days (an error, correction or note like its sources)."""
    made = []
    with store.transaction():
        wanted = set(store.lessons_without_prediction(PREDICT_FROM - 1e-9))
        if wanted:
            deadline = (parse_time(now) + timedelta(days=PREDICTION_DAYS)).strftime("%Y-%m-%d")
            for lesson in _load_lessons(store, only=wanted):
                where = f"in {lesson.cwd}" if lesson.cwd else "in any project"
                text = (f"By {deadline}, this comes up again {where}: an error, correction or note like "
                        f"the ones this lesson was learnt from.")
                pid = store.add_prediction(lesson.id, text, now, lesson.vector())
                made.append({"id": pid, "lesson_id": lesson.id, "text": text})
    return {"made": made}


# --------------------------------------------------------------------------------------
# The morning report

def morning_facts(store: Store, facts: dict) -> dict:
    """What the night did, in the words and order the report uses (also `morning --json`)."""
    cons, ver = facts["consolidation"], facts["verification"]
    ids = {i for ls in cons["new"] for i in ls["sources"]} | {i for ls in cons["strengthened"] for i in ls["sources"]}
    episodes = store.episodes_by_id(sorted(ids))

    def sources(source_ids):
        return _by_session([episodes[i] for i in source_ids if i in episodes])

    report = {
        "night": facts["night"],
        "lessons_new": [dict(ls, sources=sources(ls["sources"])) for ls in cons["new"]],
        "lessons_strengthened": [dict(ls, sources=sources(ls["sources"])) for ls in cons["strengthened"]],
        "predictions_confirmed": ver["confirmed"],
        "predictions_failed": ver["failed"],
        "predictions_made": len(facts["prediction"]["made"]),
        "archived": {"episodes": facts["decay"]["archived"], "lessons": facts["decay"]["lessons_archived"]},
        "vetoed": facts.get("vetoed", []),
        "warnings": facts.get("warnings", []),
        "render": facts.get("render"),
    }
    if facts.get("errors"):
        report["errors"] = facts["errors"]
    return report


def _by_session(eps: list) -> list:
    """One line per session a lesson came from: the correction if there was one, else the error."""
    best: dict = {}
    for ep in eps:
        key = _incident(ep)
        rank = {"correction": 0, "error": 1}.get(ep["kind"], 2)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, ep)
    failed = {(ep["session_id"], ep["facts"].get("command")) for ep in eps if ep["kind"] == "error"}
    out = []
    for _, ep in sorted(best.values(), key=lambda x: (x[1]["at"], x[1]["id"])):
        item = _source(ep)
        if ep["kind"] == "correction" and (ep["session_id"], ep["facts"].get("command")) in failed:
            item["what"] += " failed"
        out.append(item)
    return out


def _source(ep: dict) -> dict:
    """An episode in a few plain words: its date and what happened."""
    facts = ep.get("facts") or {}
    if ep["kind"] == "correction":
        said = clip((facts.get("said") or "").splitlines()[0] if facts.get("said") else "", 100)
        command = facts.get("command") or ""
        action = f"`{clip(core_command(command), 60)}`" if facts.get("tool") == "Bash" else clip(command, 60)
        if facts.get("rejected"):
            what = f"you refused {action}" + (f" and said \"{said}\"" if said else "")
        else:
            what = f"you said \"{said}\"" + (f" after {action}" if command else "")
    elif ep["kind"] == "error":
        command = facts.get("command") or facts.get("tool") or ""
        shown = f"`{clip(core_command(command), 60)}`" if facts.get("tool") == "Bash" else clip(command, 60)
        line = error_line(facts) or next(iter(telling_lines(facts)), "")
        what = f"{shown} failed" + (f": {clip(line, 90)}" if line else "")
    else:
        what = f"{ep['kind']}: {clip(ep.get('title') or '', 100)}"
    return {"id": ep["id"], "kind": ep["kind"], "at": ep["at"], "what": what}


def _eventful(report: dict) -> bool:
    """Whether the night changed anything (warnings alone, which render repeats, do not count)."""
    return any([report["lessons_new"], report["lessons_strengthened"], report["predictions_confirmed"],
                report["predictions_failed"], report["predictions_made"], report["archived"]["episodes"],
                report["archived"]["lessons"], report["vetoed"], report.get("errors")])


def summary(report: dict) -> str:
    """The night in one line."""
    archived = sum(report["archived"]["episodes"].values()) + len(report["archived"]["lessons"])
    parts = [_count(len(report["lessons_new"]), "new lesson"),
             f"{len(report['lessons_strengthened'])} strengthened",
             _count(len(report["predictions_confirmed"]), "prediction") + " confirmed",
             f"{len(report['predictions_failed'])} failed",
             _count(archived, "memory", "memories") + " archived"]
    if report["vetoed"]:
        parts.append(_count(len(report["vetoed"]), "lesson") + " vetoed")
    if report["warnings"]:
        parts.append(_count(len(report["warnings"]), "warning"))
    return ", ".join(parts)


def morning_text(report: dict) -> str:
    """The morning report as Markdown: short enough to read over coffee."""
    when = report["night"][:16].replace("T", " ")
    lines = [f"# openmemory: the night of {when} UTC", "",
             (summary(report) + ".") if _eventful(report) else "Nothing changed tonight.", ""]

    def section(title, items, render, after=()):
        if not items and not after:
            return
        lines.extend([f"## {title}", ""])
        for item in items[:REPORT_ITEMS]:
            lines.extend(render(item))
        if len(items) > REPORT_ITEMS:
            lines.append(f"- and {len(items) - REPORT_ITEMS} more")
        if after:
            lines.extend(([""] if items else []) + list(after))
        lines.append("")

    def sources(srcs):
        out = [f"  - {s['at'][:10]}: {s['what']}" for s in srcs[:SOURCES_SHOWN]]
        if len(srcs) > SOURCES_SHOWN:
            out.append(f"  - and {len(srcs) - SOURCES_SHOWN} more")
        return out

    def new(ls):
        return [f"- {ls['text']}", f"  ({ls['kind']}, {ls['cwd'] or 'every project'}; "
                f"seen in {_count(ls['seen'], 'session')})"] + sources(ls["sources"])

    def strengthened(ls):
        notes = "".join([f"; strength {ls['before']:.2f} → {ls['strength']:.2f}",
                         "; now applies in every project" if ls["everywhere"] else "",
                         "; back from the archive" if ls["revived"] else ""])
        return [f"- {ls['text']}", f"  (seen in {_count(ls['seen'], 'session')}{notes})"] + sources(ls["sources"])

    def prediction(item):
        outcome, p = item
        change = f"strength {p['before']:.2f} → {p['strength']:.2f}"
        if outcome == "confirmed":
            return [f"- Confirmed: {p['lesson']}",
                    f"  It came up again on {p['evidence']['at'][:10]}: {p['evidence']['what']} ({change})"]
        return [f"- Failed: {p['lesson']}",
                f"  It did not come up between {p['made'][:10]} and {p['deadline'][:10]} ({change})"]

    section("New lessons", report["lessons_new"], new)
    section("Strengthened", report["lessons_strengthened"], strengthened)
    made = report["predictions_made"]
    section("Predictions", [("confirmed", p) for p in report["predictions_confirmed"]]
            + [("failed", p) for p in report["predictions_failed"]], prediction,
            after=[f"{_count(made, 'new prediction')}: each says its lesson will come up again within "
                   f"{PREDICTION_DAYS} days."] if made else ())
    archived = report["archived"]
    memories = []
    if archived["episodes"]:
        kinds = ", ".join(_count(n, k) for k, n in sorted(archived["episodes"].items()))
        memories = [f"- {_count(sum(archived['episodes'].values()), 'memory', 'memories')} not used for "
                    f"{ARCHIVE_AFTER_DAYS} days or more ({kinds}): archived, not deleted."]
    section("Archived", archived["lessons"], lambda ls: [f"- Lesson faded: {ls['text']}"], after=memories)
    section("Vetoed by you", report["vetoed"], lambda v: [
        f"- {v['text']}", "  (you deleted it from Claude Code's memory; it will not come back)"])
    section("Warnings", report["warnings"], lambda w: [f"- {w}"])
    return "\n".join(lines).rstrip() + "\n"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def write_morning(text: str) -> None:
    """Write the report atomically (a reader never sees half of it), private to the person."""
    from .render import write_own  # the one writer of openmemory's own files
    write_own(paths.morning_path(), text.encode("utf-8"))


def _load_json(text):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None
