"""Sleep: the nightly passes that turn repeated surprises into lessons and keep them honest.

`night(store, now, render)` runs decay → consolidation → verification → prediction, each
in its own transaction and each safe to re-run at the same `now` (a second run changes
nothing), then render (when given one), and writes the morning report (at the end of this module).
What a lesson says is wording.py's; what counts as an error worth one is failures.py's.
"""
import gc
import json
import math
import re
import shlex
from contextlib import contextmanager
from datetime import timedelta
from functools import partial

from . import backing, counts, embed, files, forget, judge, llm, paths, render, review
from .clock import iso, parse_time
from .corrections import correction_head, lasting_sentence, own_lines, what_lasts
from .failures import cause_key, error_line, is_lesson_error, is_work_failure, project_bound, telling_lines
from .forget import incident
from .redact import mostly_secret, redact, redact_obj, redacted
from .review import by_session
from .shorten import clip, unhidden
from .store import Store, shared_loads
from .wording import (LESSON_FACTS, ONE_FAILURE_KINDS, call_about, core_command, correction_lesson, environment_cause,
                      environment_key, environment_lesson, error_lesson, other_rules, said_of_this_project, same_rule, scoped,
                      source, stance, unscoped)

# --------------------------------------------------------------------------------------
# The numbers. The first six are the design's (../shared/spec, "Sleep runs ..."); the rest
# are openmemory's choices, each with its reason.

HALF_LIFE_DAYS = 45.0        # design: strength × 2^(−days since last touch / 45)
ARCHIVE_BELOW = 0.15         # design: below this a memory is archived, never deleted (~123 days untouched)
JOIN_SIMILARITY = 0.55       # design: a surprise joins the nearest lesson at cosine ≥ 0.55
MATCH_SIMILARITY = 0.5       # design: an episode confirms a prediction at cosine ≥ 0.5
PREDICTION_DAYS = 14         # design: a prediction fails after 14 days without a match
PREDICT_FROM = 1.0           # design: lessons with strength ≥ 1 get a prediction
PREDICTION_WAIT_DAYS = 90    # a prediction whose project has no session lapses (neither confirmed nor
                             # failed) after this long: nothing tested it; ~3 months covers a long break
ERROR_SESSIONS = 2           # design: an error must repeat, in two or more different sessions

NEW_LESSON_STRENGTH = 1.0    # a new lesson starts where a new episode does, enough for a prediction
SEEN_BOOST = 0.5             # each further session it comes up in; and never below a new lesson's
CONFIRMED_BOOST = 0.5        # a confirmed prediction counts as much as being seen again
FAILED_FACTOR = 0.5          # a lesson that did not come up in 14 days keeps half its strength
REACH_MARGIN = 1e-9          # a lesson whose bound (Lesson.reach) is below a threshold by more than this cannot
                             # reach it: a cosine's rounding (256 products of unit vectors: 256 × 2^-53 at
                             # most, 3e-14) is 30,000 times smaller
SIGNATURE_SOURCES = 16       # a lesson is compared as the centroid of its latest sources: what it has
                             # been lately, at a bounded cost a night (all joined at cosine ≥ 0.55 anyway)
ARCHIVE_AFTER_DAYS = round(HALF_LIFE_DAYS * math.log2(1 / ARCHIVE_BELOW))   # 123: untouched, from 1.0

SETTLED = "settled"          # episodes.SETTLED: a light episode, for a judge only (examined for no lesson)
EVIDENCE_KINDS = ("error", "correction", "note")   # what can confirm a prediction (not session summaries)
OLD_GENERATION_AFTER = 1_000  # while a night runs, Python's whole heap is collected after this many
                             # collections of the younger generations, not 10: the rows, vectors and
                             # lessons it holds make no reference cycle, and each full collection walked
                             # them all (21 a first night over 60,000 sessions, 5.4 s of its 24); the
                             # young ones, where a cycle made would be, are collected as ever
WRITE_PATIENCE_MS = 120_000  # a night waits this long for each pass's write lock (never less than the busy
                             # timeout): nothing waits on a night, and servers and hooks writing without a
                             # pause kept a 5 s wait from getting it (tests.locks --full --judge: a first
                             # night failed "stayed locked"); waiting holds no lock


# --------------------------------------------------------------------------------------
# The night

def night(store: Store, now: str | None = None, render=None, model=None) -> dict:
    """Run the four passes, then render, and write the morning report; returns the report's facts.

    render: a callable `render(store, now=...) -> dict` with `written`, `vetoed` (lessons
    newly vetoed) and `warnings`, or None when render is not wired in. model: tonight's
    optional model (llm.open_model) or None; as the judge (judge.py) it reads the messages
    before consolidation, the repeated failures' candidates after it, then which of a project's
    lessons say the same (judge.judge_same), and it leads recent session gists, each outside any
    transaction; where it fails, the rules' result stands.
    """
    with _few_full_collections():
        return _night(store, iso(now), render, model)


@contextmanager
def _few_full_collections():
    """Python's full collections rare while inside (OLD_GENERATION_AFTER); as they were after."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], max(before[2], OLD_GENERATION_AFTER))
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _night(store: Store, now: str, render, model) -> dict:
    # Each pass commits in its own short transaction together with what it did (kept in
    # `night_facts` until the report is written): a sleep stopped anywhere (killed, power cut)
    # and run again for the same night skips the passes done and ends exactly as one never
    # stopped, and a note, a recall or a hook's ingest waits at most one pass meanwhile
    # (consolidation computes before it takes the write lock). A model's calls take seconds,
    # so the judge's passes hold no lock while it thinks: each verdict commits alone, and what
    # the pass did is kept after it (a judge stopped midway asks the rest when run again).
    with store.facts_once():    # each pass, render and the report read the same sources
        facts = _load_json(store.get_state("night_facts"))
        if not facts or facts.get("night") != now:
            with store.transaction():
                facts = {"night": now, "through": store.last_episode_id(),   # what is new after it waits for the next
                         "to_candidates": _upgraded(store)}
                _keep(store, facts)
        judge_failures = partial(judge.judge_failures, join_at=JOIN_SIMILARITY)
        for name, run in (("decay", decay), ("judged_messages", _judging(judge.judge_messages, model)),
                          ("consolidation", consolidate), ("judged_failures", _judging(judge_failures, model)),
                          ("judged_same", _judging(judge.judge_same, model)), ("states", _settle_judged),
                          ("verification", verify), ("prediction", predict)):
            if name not in facts:
                facts[name] = run(store, now, keep=lambda done, name=name: _keep(store, dict(facts, **{name: done})))
        facts = json.loads(store.get_state("night_facts"))  # the same shape whichever way it came
        judged = [("message", facts.pop("judged_messages")), ("failure", facts.pop("judged_failures")),
                  ("same", facts.pop("judged_same"))]
        gists = llm.write_gists(store, model)
        facts.update(_rendered(store, now, render))
        report = morning_facts(store, facts)
        if model is not None:
            report["model"] = dict(model.facts(), judged=judge.night_facts(judged, model), gists=gists)
            report["warnings"] = report["warnings"] + llm.warnings_of(report["model"])
    # Their decoded facts are let go here, before the report is stored and written again.
    previous = _load_json(store.get_state("morning"))
    total, keep = report, False
    if previous and previous.get("night", "")[:10] == now[:10]:
        # Another sleep the same night: morning shows the night's total, and the run says it; one
        # that changed nothing keeps the report as it was, unless it has something new to warn of (a
        # judge that could not be reached on the second run: the warning was printed, never kept).
        keep = not eventful(report) and set(report["warnings"]) <= set(previous.get("warnings") or []) \
            and report.get("gone") == previous.get("gone")
        total = previous if keep else merge_nights(previous, report)
        report = dict(report, tonight={k: v for k, v in total.items() if k != "errors"})
    morning = None if keep else json.dumps(_redacted(total), ensure_ascii=False, sort_keys=True)
    with store.transaction():
        store.set_state("last_sleep", now)
        store.set_state("slept_through", str(facts.get("through", 0)))  # a catch-up needs something after it
        store.set_state("night_facts", "{}")
        if not keep:
            store.set_state("morning", morning)
    # Written every time from what is stored (unchanged files are left alone): a sleep stopped
    # between its last commit and this file finds it rewritten by the next one. (What was just
    # stored is not read back: a first night's is 21 MB.)
    morning = shared_loads(store.get_state("morning") if keep else morning)
    write_morning(morning_text(morning, PREDICTION_DAYS, ARCHIVE_AFTER_DAYS))
    return report


def _redacted(value):
    """redact_obj(value), what redaction left unchanged not copied (the same JSON: a first night's
    report over 60,000 sessions is 130,000 sources, each a dict, its copy 50 MB more at once)."""
    if isinstance(value, str):
        said = redacted(value)
        return value if said == value else said
    if isinstance(value, (dict, list)):
        out = None
        for k, v in (value.items() if isinstance(value, dict) else enumerate(value)):
            said = _redacted(v)
            if said is not v and out is None:
                out = dict(value) if isinstance(value, dict) else list(value)
            if out is not None:
                out[k] = said
        return value if out is None else out
    return value


def _keep(store: Store, facts: dict) -> None:
    """Keep what the night has done so far (call it in the transaction that did it)."""
    with store.transaction():
        store.set_state("night_facts", json.dumps(facts, ensure_ascii=False, sort_keys=True))


def _judging(ask, model):
    """A judge's pass: no transaction while the model thinks (each verdict commits alone), what it did kept after it."""
    def run(store: Store, now: str, keep) -> dict:
        done = ask(store, model, now)
        keep(done)
        return done
    return run


def _settle_judged(store: Store, now: str, keep) -> dict:
    """The states tonight's lessons are in: consolidation's, and what the judge's verdicts back now."""
    facts = _load_json(store.get_state("night_facts"))
    judged = [("message", facts["judged_messages"]), ("failure", facts["judged_failures"]),
              ("same", facts["judged_same"])]
    with store.transaction():
        moved = review.settle(store, judge.touched(judged), now)
        states = {"live": facts["consolidation"]["went_live"] + moved["live"],
                  "candidate": facts["consolidation"]["went_candidate"] + moved["candidate"]}
        keep(states)
    return states


def _upgraded(store: Store) -> list:
    """The lessons the upgrade to lesson states (m009) made candidates, told once by this night's report."""
    ids = _load_json(store.get_state("lessons_to_candidates")) or []
    if ids:
        with store.transaction():
            store.set_state("lessons_to_candidates", "[]")
    return [i for i in ids if isinstance(i, int)]


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
    # What is in place, not what this run wrote: a sleep stopped mid-render and run again
    # reports the same night as one never stopped.
    folders = out.get("folders") or []
    gone = out.get("gone") if isinstance(out.get("gone"), dict) else {}
    return {"render": {"lessons": int(out.get("lessons") or 0),
                       "folders": len(folders) if isinstance(folders, (list, tuple, set, dict)) else int(folders)},
            "vetoed": vetoed, "warnings": [str(w) for w in (out.get("warnings") or []) + (out.get("errors") or [])],
            **({"gone": {str(k): sorted(map(int, v)) for k, v in sorted(gone.items())}} if gone else {}),
            **({"errors": [str(e) for e in out["errors"]]} if out.get("errors") else {})}


# --------------------------------------------------------------------------------------
# Pass 1: decay

def decay(store: Store, now: str, keep=None) -> dict:
    """Fade every memory (episodes, passages, lessons) by 2^(−days/45) since it was last touched
    or decayed; archive below 0.15; archive the candidates nothing backed within
    backing.LAPSE_DAYS (the report counts them, never lists them). A lesson the person approved
    or wrote does not fade: theirs to remove (backing.kept_by_person).

    The clock of a memory is the later of its last touch (when openmemory stored it, or when
    recall last used it: `last_touched`) and the last time decay brought its strength up to
    date (`decayed`), so decaying twice a night changes nothing and nightly equals weekly; a
    first night over months of history fades nothing before it has learnt from it, and a
    `now` before an episode was stored gives it no age at all.
    """
    t_now = parse_time(now)
    archived: dict = {}
    passages: dict = {}         # passages fade as episodes do; counted apart (the report names episodes)
    lessons = []
    ages: dict = {}             # days since each clock reading, once: a transcript's episodes and passages share one
    with store.transaction():
        for rows, write, counted in ((store.episodes_to_decay(), store.decay_episodes, archived),
                                     (store.passages_to_decay(), store.decay_passages, passages)):
            updates = []
            for row in rows:
                since = max(row["last_touched"], row["decayed"] or "")
                if since not in ages:
                    ages[since] = _days_since(since, t_now)
                strength = _faded(row["strength"], ages[since])
                if strength is None:
                    continue
                gone = strength < ARCHIVE_BELOW
                updates.append((strength, now, int(gone), row["id"]))
                if gone:
                    counted[row["kind"]] = counted.get(row["kind"], 0) + 1
            write(updates)
        updates, faded = [], []
        for row in store.lessons_to_decay():
            if backing.kept_by_person(row["backing"]):
                continue        # the person approved it or wrote it: theirs to remove, not time's
            strength = _decayed(row["strength"], row["decayed"] or row["created"], t_now)
            if strength is None:
                continue
            gone = strength < ARCHIVE_BELOW
            updates.append((strength, now, int(gone), row["id"]))
            if gone and row["state"] == backing.LIVE:    # a candidate fades quietly, as it lapses
                lessons.append({"id": row["id"], "text": row["text"], "cwd": row["cwd"]})
            elif gone and row["state"] == backing.CANDIDATE:
                faded.append(row["id"])     # counted as lapsed, as `lessons` lists it: a first night
                                            # 123 days or more after it was made fades it before lapse sees it
        store.decay_lessons(updates)
        lapsed = review.lapse(store, now)
        done = {"archived": archived, "lessons_archived": lessons, "passages_archived": passages,
                "lapsed": len(lapsed) + len(faded)}
        if keep:
            keep(done)  # in the same transaction (night)
    return done


def _decayed(strength: float, since: str, t_now) -> float | None:
    """strength × 2^(−days/HALF_LIFE) from since to now; None when no time has passed."""
    return _faded(strength, _days_since(since, t_now))


def _days_since(since: str, t_now) -> float:
    return (t_now - parse_time(since)).total_seconds() / 86400


def _faded(strength: float, days: float) -> float | None:
    return None if days <= 0 else strength * 2 ** (-days / HALF_LIFE_DAYS)


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
        self.edited = bool(row and json.loads(row["backing"] or "{}").get("edited"))   # the person's words
        self.sessions: set = set()
        self.causes: set = set()        # (cause key, project or None) of its failures
        self.sum: dict = {}             # sparse sum of its sources' unit vectors
        self.dense = [0.0] * embed.DIMENSIONS   # the same sum in every dimension (0.0 where no source has one)
        self.dims = 0                   # the dimensions it has, one bit each (embed.Against.most)
        self._norm = 0.0
        self._peak = 0.0                # its largest component's size over its norm, beside the norm
        self.new = row is None
        self.before = self.strength
        self.joined: list = []          # episode ids that joined tonight (not for new lessons)
        self.counted: list = []         # of those, the ones from a session not seen before
        self.widened = False            # a source from another project: now applies everywhere
        self.here = False               # the person said it of this project ("in this repo ..."): a source's words
        self.revived = False
        self.by_model = False           # worded by the model (a doubtful turn's lesson line)
        self.members: list = []         # the episodes summed in its signature, for their words (alike)
        self._words: dict | None = None
        # the sum of its members' word units, kept up as they join once alike has read it: summed
        # again from every member at each join, a lesson of thousands of sources made the first
        # night quadratic (60,000 dense sessions: 1,941 s against 19 before Lesson.alike)
        self._word_sum: dict | None = None
        self._memo: dict | None = None

    def add(self, ep: dict, unit: dict) -> None:
        total, dense, dims = self.sum, self.dense, self.dims
        for i, x in unit.items():
            total[i] = dense[i] = dense[i] + x      # dense[i] is total.get(i, 0.0)
            dims |= 1 << i
        self.dims, self._norm = dims, 0.0
        self.sessions.add(incident(ep))
        self.members.append(ep)
        if self._word_sum is not None:
            for k, x in surprise_words(ep, self._memo).items():
                self._word_sum[k] = self._word_sum.get(k, 0.0) + x
        self._words = None

    def stands_for(self, unit: dict) -> None:
        """Its signature is this vector (its sources are gone: its own words'), and no source's."""
        self.sum, self.dense, self._norm = dict(unit), [unit.get(i, 0.0) for i in range(embed.DIMENSIONS)], 0.0
        self.dims = sum(1 << i for i in unit)

    def similarity(self, unit: dict, against: "embed.Against | None" = None) -> float:
        """Cosine between the lesson (its sources' centroid) and a unit vector. against: the unit as
        embed.Against lays it out, for one unit against every lesson (near): the same float, sooner."""
        if not self._sized():
            return 0.0
        if against is None:
            return embed.dot(self.sum, unit) / self._norm
        return against.dot(self.sum, self.dense) / self._norm

    def reach(self, against: "embed.Against") -> float:
        """The most its cosine with against's vector can be (embed.Against.most), read in a few steps."""
        return against.most(self.dims, self._peak) if self._sized() else 0.0

    def _sized(self) -> float:
        """Its norm, worked out again after a join, and its largest component's size over it (_peak)."""
        if not self._norm:
            self._norm = math.hypot(*self.sum.values())
            self._peak = max(map(abs, self.sum.values())) / self._norm if self._norm else 0.0
        return self._norm

    def alike(self, words: dict, memo: dict | None = None) -> bool:
        """Whether the words of a surprise (embed.word_unit) are as alike to its sources' words as
        joining asks (JOIN_SIMILARITY): the hashed cosine of two short texts can reach it through
        one shared slot alone ("use your LSP" and "use mode auto skill", 0.61: "lsp" and "mode"
        hash alike), and that is no rule in common."""
        if self._words is None:
            if not self.members:
                total = dict(embed.word_unit(self.text))
            elif self._word_sum is None:
                self._memo, total = memo, {}
                for m in self.members:
                    for k, x in surprise_words(m, memo).items():
                        total[k] = total.get(k, 0.0) + x
                self._word_sum = total
            else:
                total = self._word_sum
            norm = math.hypot(*total.values())
            self._words = {k: x / norm for k, x in total.items()} if norm else {}
        return embed.dot(self._words, words) >= JOIN_SIMILARITY

    def sessions_known(self, store: Store) -> set:
        """The sessions of all its sources (what `seen` counts), beyond the ones in its signature."""
        return forget.sessions_of(store, self.sources)

    def vector(self) -> list:
        return list(self.dense)


def consolidate(store: Store, now: str, keep=None, hold: bool = False) -> dict:
    """Join new surprises to the nearest lesson (cosine ≥ 0.55) or make new lessons of them.

    A correction with an instruction in it makes a lesson alone; an error makes one only
    when similar errors happened in two or more sessions. A vetoed lesson takes in what is
    nearest to it and stays vetoed. Each surprise is examined once (`consolidated` is the
    lesson it fed, or 0: examined, no lesson yet); an error, and a correction that made no
    lesson, stay in the pool and join a later lesson that says the same, until archived.
    A doubtful correction is left for a model to decide. Where a judge read a correction
    (judge.py), its verdict decides: nothing lasting, and it makes no lesson and joins none;
    lasting, and the lesson it made is in the judge's words and scope.

    The night is worked out in a read snapshot, without the write lock (a first night over a
    year takes seconds), and written in a short transaction if what it read is unchanged;
    else worked out again holding the lock (hold). keep(report) is called in the writing
    transaction (night).
    """
    with store.transaction() if hold else store.snapshot():
        version, rows = store.data_version(), store.lessons_to_consolidate()
        places = _Places()
        lessons = _load_lessons(store, places=places, rows=rows)
        pending = store.pending_surprises(now)
        tonight = _Consolidation(lessons, _Vectors(pending), places)
        vectors, fed = tonight.vectors, tonight.fed
        examined = [ep["id"] for ep in pending if ep["consolidated"] is None
                    and (not ep["facts"].get("doubtful") or ep["facts"].get("form") == SETTLED)]  # light: no lesson alone

        # Corrections first: each is examined once, and one suffices for a lesson. A doubtful
        # one waits, unexamined, for a model to decide (Store.doubtful_corrections).
        errors_by_session: dict = {}
        for ep in pending:
            if ep["kind"] == "error":
                errors_by_session.setdefault(ep["session_id"], []).append(ep)
        for ep in pending:
            if ep["kind"] != "correction" or ep["consolidated"] is not None or ep["facts"].get("doubtful") \
                    or _judged_not_lasting(ep):
                continue
            lesson = tonight.nearest(vectors[ep["id"]], ep)
            if lesson is not None:
                tonight.join(lesson, ep)
            else:
                judged = backing.verdict(ep["facts"]) or {}
                said = backing.judged_lesson(ep["facts"])      # in the judge's (a model's) words
                body = unscoped(said) if said else (tonight.lesson_words(ep) if lasts(ep["facts"])
                                                    else tonight.ban_words(ep))
                if body is None or mostly_secret(body):
                    continue            # nothing a person could approve, or a secret is its instruction: an episode
                lesson = tonight.found("feedback", [ep], body, everywhere=judged.get("scope") == "everywhere")
                lesson.by_model = lesson.by_model or bool(said)
            # The failed call the person was answering is part of the same surprise: the one they
            # refused, the one their words name (`trigger`), or the one the lesson names ("use
            # `pytest -q`, not `python -m unittest`"); not merely the last call before their words.
            facts = ep["facts"]
            command = facts.get("command")
            if command and not (facts.get("rejected") or facts.get("trigger") == command
                                or f"`{core_command(command)}`" in lesson.text):
                command = None
            for err in errors_by_session.get(ep["session_id"], []):
                if command and err["id"] not in fed and err["facts"].get("command") == command \
                        and is_lesson_error(err["facts"]):
                    tonight.join(lesson, err)

        # Corrections examined before without a lesson join one that says the same thing,
        # whatever night or order it was formed in ("always pnpm" typed before "pnpm, not npm").
        for ep in pending:
            if ep["kind"] == "correction" and ep["id"] not in fed and not ep["facts"].get("doubtful") \
                    and not _judged_not_lasting(ep):
                lesson = tonight.nearest(vectors[ep["id"]], ep)
                if lesson is not None:
                    tonight.join(lesson, ep)

        # A rule said again in another session lasts, though neither saying lasts alone (a ban
        # not said as standing): together they make a lesson.
        _said_again(tonight, [ep for ep in pending if ep["kind"] == "correction" and ep["id"] not in fed
                              and not ep["facts"].get("doubtful")])

        # Then errors, by their cause (failures.cause_key): a new one joins the lesson of its
        # cause, or gathers the failures of the pool with the same cause.
        pool = [ep for ep in pending if ep["kind"] == "error" and _teaches(ep) and cause_of(ep)]
        by_cause: dict = {}             # the pool by cause, in its order (a year's pool is 100,000 failures)
        for ep in pool:
            by_cause.setdefault(cause_of(ep), []).append(ep)
        for ep in pool:
            if ep["consolidated"] is not None or ep["id"] in fed:
                continue
            lesson = tonight.of_cause(ep)
            if lesson is not None:
                tonight.join(lesson, ep)
                continue
            where = tonight.cause_place(ep)
            members = sorted([m for m in by_cause[cause_of(ep)] if m["id"] not in fed
                              and tonight.cause_place(m) == where], key=lambda m: (m["at"], m["id"]))
            if len({m["session_id"] for m in members}) >= ERROR_SESSIONS or _shows_its_fix(members) \
                    or _environment_again(members) or _environment_always(members):
                word = environment_lesson if environment_key(ep["facts"]) else error_lesson
                tonight.found("project", members, word([m["facts"] for m in members], _cwd_of(members)))

        if hold:
            return _write_lessons(store, lessons, fed, examined, now, keep)
    with store.transaction():
        if _unchanged(store, now, version, rows, pending):
            return _write_lessons(store, lessons, fed, examined, now, keep)
    return consolidate(store, now, keep, hold=True)  # something it read changed meanwhile (a forget, an ingest)


def _unchanged(store: Store, now: str, version: int, rows: list, pending: list) -> bool:
    """Whether what consolidation read is still what is stored: every lesson as it was and the
    surprises it examined unchanged (surprises stored since wait for the next night)."""
    if store.data_version() == version:
        return True  # no other connection has committed since
    stored = {ep["id"]: ep for ep in store.pending_surprises(now)}
    return store.lessons_to_consolidate() == rows and all(stored.get(ep["id"]) == ep for ep in pending)


def lasts(facts: dict) -> bool:
    """Whether a correction lasts alone (its `lasting` fact; for one stored before there was
    one, read again from its words)."""
    if "lasting" in facts:
        return bool(facts["lasting"])
    return what_lasts(facts.get("own") or facts.get("said") or "", facts.get("form") or "")["lasting"]


def _said_again(tonight: "_Consolidation", corrections: list) -> None:
    """Corrections with a rule that none of them makes alone, said again in another session in
    the same words or naming the same tools the same way: one lesson of them."""
    ruled = [(ep, tonight.lesson_words(ep)) for ep in corrections]
    ruled = [(ep, body) for ep, body in ruled if body]
    for ep, body in ruled:
        if ep["id"] in tonight.fed:
            continue
        vec, mine = tonight.vectors[ep["id"]], stance(body)
        same = [m for m, other in ruled if m["id"] != ep["id"] and m["id"] not in tonight.fed
                and incident(m) != incident(ep) and tonight.places.project(m["cwd"]) == tonight.places.project(ep["cwd"])
                and (embed.dot(vec, tonight.vectors[m["id"]]) >= JOIN_SIMILARITY or same_rule(mine, stance(other)))
                and not other_rules(body, other)]
        if same:
            tonight.found("feedback", sorted([ep] + same, key=lambda m: (m["at"], m["id"])), body)


class _Consolidation:
    """One night's consolidation: its lessons while surprises join them, which surprise fed which
    lesson, and how a lesson changes when one joins it (its sources, seen, strength, scope)."""

    def __init__(self, lessons: list, vectors: "_Vectors", places: "_Places"):
        self.lessons = lessons          # every lesson; the new ones are appended as they are found
        self.vectors = vectors
        self.places = places
        self.fed: dict = {}             # episode id -> lesson fed tonight
        self.words: dict = {}           # episode id -> its lesson in the rules' words (lesson_words)
        self.rules: dict = {}           # episode id -> the stance of those words (_same_rule)

    def join(self, lesson: _Lesson, ep: dict) -> None:
        """The surprise joins the lesson: a session not seen before counts, and strengthens it."""
        self.fed[ep["id"]] = lesson
        lesson.here = lesson.here or self._only_here(ep) is not None
        if ep["kind"] == "error" and cause_of(ep):
            lesson.causes.add((cause_of(ep), self.cause_place(ep)))
        lesson.sources.append(ep["id"])
        new_incident = incident(ep) not in lesson.sessions
        lesson.add(ep, self.vectors[ep["id"]] if ep["id"] in self.vectors else surprise_unit(ep))
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
        project = self.places.project(ep["cwd"])
        if lesson.cwd and project and project != self.places.project(lesson.cwd):
            lesson.cwd, lesson.widened = None, not lesson.new
            if not lesson.edited:       # the person's own text stays as they wrote it
                lesson.text = unscoped(lesson.text)

    def nearest(self, vec, ep=None) -> _Lesson | None:
        """The lesson nearest a surprise's vector at JOIN_SIMILARITY or more; for a correction, else
        one that says the same rule in other words."""
        best, score = None, JOIN_SIMILARITY
        here = self._only_here(ep)
        mine, own, own_score = None if ep is None else self.places.project(ep["cwd"]), None, JOIN_SIMILARITY
        said = self.rule_words(ep)
        for lesson, s in self.near(vec, JOIN_SIMILARITY):
            if here and lesson.cwd and self.places.project(lesson.cwd) != here:
                continue
            if said and other_rules(said, lesson.text):
                continue        # another command: another rule, however alike in words (`make test-integration`)
            if ep is not None and not lesson.alike(self.words_of(ep), self.vectors.memo):
                continue        # alike only where two words hash alike: no word in common
            if s >= score:
                best, score = lesson, s
            if mine and lesson.cwd and s >= own_score and self.places.project(lesson.cwd) == mine:
                own, own_score = lesson, s
        if own is not None and best.cwd and self.places.project(best.cwd) != mine:
            # its own project's lesson, not another's that it would widen to every project beside
            # that one (two of one rule, split by a correction said "in this repo": _only_here)
            best = own
        if best is None and ep is not None and ep["kind"] == "correction":
            best = _same_rule(ep, vec, self) or self.said_alike(ep, said)    # the same rule in other words
        return best

    def near(self, vec: dict, least: float):
        """(lesson, cosine) of each lesson at least `least` alike to a surprise's unit vector, in the
        lessons' order: the only ones nearest weighs. One surprise against every lesson (a first night
        over a year's history: 1.6 million pairs), so a lesson that cannot reach `least` (Lesson.reach:
        too few dimensions in common, three pairs in four there) is passed over without its cosine."""
        against, bar = embed.Against(vec), least - REACH_MARGIN
        for lesson in self.lessons:
            if lesson.reach(against) < bar:
                continue
            s = lesson.similarity(vec, against)
            if s >= least:
                yield lesson, s

    def said_alike(self, ep: dict, said: str | None) -> "_Lesson | None":
        """A feedback lesson of the correction's project (or every project) whose words say its rule
        as its own lesson's words do (the judge's, else the rules': rule_words) at JOIN_SIMILARITY or
        more. Its vector is those words and the call they answered (surprise_unit), which one
        saying has and another has not: two corrections of one session whose judge wrote "Keep the
        diff to main minimal and reuse the existing audited logic ..." and "Reuse the existing
        audited logic ..., and keep the diff to main minimal." are 0.60 alike in words, 0.53 as
        surprises (the second answered `cargo test`), and made two lessons of one rule. Their words
        too (embed.word_unit) must be that alike: "From now on use strict mode." is 0.71 alike to
        "Use your LSP." in hashed slots ("lsp" and "mode" share one), 0.36 in words (red42)."""
        if not said:
            return None
        memo, project = self.vectors.memo, self.places.project(ep["cwd"])
        mine, my_words = embed.unit_of(said), embed.word_unit(said)
        best, score = None, JOIN_SIMILARITY
        for lesson in self.lessons:
            if lesson.kind != "feedback" or (lesson.cwd and self.places.project(lesson.cwd) != project):
                continue
            words = unscoped(lesson.text)
            if ("lesson words", words) not in memo:
                memo["lesson words", words] = embed.unit_of(words), embed.word_unit(words)
            slots, its_words = memo["lesson words", words]
            s = embed.dot(mine, slots)
            if s >= score and embed.dot(my_words, its_words) >= JOIN_SIMILARITY and \
                    not other_rules(said, lesson.text):     # the words alike, not their hashed slots alone
                best, score = lesson, s
        return best

    def words_of(self, ep: dict) -> dict:
        """A surprise's words as alike compares them (surprise_words), once a night (and once more
        for the lesson it joins, which reads them here: Lesson.add)."""
        if ("words", ep["id"]) not in self.vectors.memo:
            self.vectors.memo["words", ep["id"]] = surprise_words(ep, self.vectors.memo)
        return self.vectors.memo["words", ep["id"]]

    def _only_here(self, ep: dict | None):
        """The project a correction is of when the person's words said it is this project's ("in this
        repo we ..."): it joins no lesson of another project, which would make it every project's."""
        if ep is None or ep["kind"] != "correction" or not said_of_this_project(ep["facts"]):
            return None
        return self.places.project(ep["cwd"])

    def rule_words(self, ep: dict | None) -> str | None:
        """A correction's lesson as words to tell its rule by (wording.other_rules): the judge's, else
        the rules'; None for a failure or words with no lesson."""
        if ep is None or ep["kind"] != "correction":
            return None
        judged = backing.judged_lesson(ep["facts"])
        return unscoped(judged) if judged else self.lesson_words(ep)

    def lesson_words(self, ep: dict) -> str | None:
        """A correction's lesson in the rules' words (wording.correction_lesson), worked out once a
        night (consolidation, _same_rule and _said_again each ask), and what lasts of the same
        words (corrections.what_lasts) once, for a correction said again."""
        if ep["id"] not in self.words:
            facts, memo = ep["facts"], self.vectors.memo
            key = ("lesson",) + tuple(map(_same_json, map(facts.get, LESSON_FACTS)))
            if key not in memo:
                memo[key] = correction_lesson(facts, self.what_lasts(ep))
            self.words[ep["id"]] = memo[key]
        return self.words[ep["id"]]

    def what_lasts(self, ep: dict) -> dict:
        """corrections.what_lasts of a correction's own words, once a night for the same words."""
        facts, memo = ep["facts"], self.vectors.memo
        said, form = facts.get("own") or facts.get("said") or "", facts.get("form") or ""
        if ("lasts", said, form) not in memo:
            memo["lasts", said, form] = what_lasts(said, form)
        return memo["lasts", said, form]

    def ban_words(self, ep: dict) -> str | None:
        """A correction that lasts not alone because it is a ban not said as standing ("dont just
        push through the migrations by executing them directly on the server"): a candidate all
        the same, in the rules' words, backed when it is said again as before (issue 24: one
        correction makes a candidate). None for anything else (a one-off, no rule read)."""
        found = self.what_lasts(ep)
        return self.lesson_words(ep) if found["sentence"] is not None and found["ban"] and not found["one_off"] else None

    def cause_place(self, ep: dict):
        """Where a failure's cause holds: its project when the cause names the project's own
        things (a file, a quoted name: `failures.project_bound`), else anywhere (None)."""
        return self.places.project(ep["cwd"]) if project_bound(cause_of(ep)) else None

    def of_cause(self, ep: dict) -> "_Lesson | None":
        """The lesson of a failure's cause (and place), if there is one: of the failure's own project
        first, as nearest prefers (one of another project would be widened to every project beside
        that project's own)."""
        mine = (cause_of(ep), self.cause_place(ep))
        here = self.places.project(ep["cwd"])
        # a rule the person said of another project (tonight or on a night before: _Lesson.here) is
        # not made every project's by a failure here
        held = [ls for ls in self.lessons if mine in ls.causes
                and not (ls.here and ls.cwd and self.places.project(ls.cwd) != here)]
        return next((ls for ls in held if ls.cwd and self.places.project(ls.cwd) == here), held[0] if held else None)

    def found(self, kind: str, members: list, body: str, everywhere: bool = False) -> _Lesson:
        """A new lesson of these surprises (or the one that already says it), each of them joined;
        everywhere: for every project whatever its sources' (a judge said so)."""
        projects = {self.places.project(m["cwd"]) for m in members} - {None}
        cwd = projects.pop() if len(projects) == 1 and not everywhere else None
        text = scoped(body, cwd, self.places.is_repository(cwd))
        here = {self._only_here(m) for m in members} - {None}
        # the same text, or a lesson for every project in the same words (it holds here already: two
        # projects' "In this project do not add dependencies …" widened it, and two more made a
        # second "Do not add dependencies …"); never another project's failure lesson, whose cause
        # is that project's (a quoted name of its own: it was made every project's, and the next
        # project's own was shown beside it)
        bare = unscoped(text).lower()
        same = next((ls for ls in self.lessons
                     if (ls.text.lower() == text.lower() or (not ls.cwd and ls.text.lower() == bare))
                     and not (here and ls.cwd and self.places.project(ls.cwd) not in here)
                     and not (kind == "project" and ls.cwd and self.places.project(ls.cwd) != cwd)), None)
        if same is not None:        # never a second copy of a lesson, vetoed or not
            for m in members:
                self.join(same, m)
            return same
        lesson = _Lesson()
        lesson.kind, lesson.cwd, lesson.text = kind, cwd, text
        self.lessons.append(lesson)
        for m in members:
            self.join(lesson, m)
        return lesson


def _same_json(value):
    """A key equal for two values exactly when their JSON is (a string or None as itself, anything else as
    its JSON beside a mark no string is): lesson_words asks it of 9 facts of each correction a night."""
    return value if value is None or value.__class__ is str else ("json", json.dumps(value, sort_keys=True))


def _judged_not_lasting(ep: dict) -> bool:
    """Whether a judge read this correction and found nothing lasting (not a correction, or momentary)."""
    judged = backing.verdict(ep["facts"])
    return judged is not None and not judged.get("lasting")


def _write_lessons(store: Store, lessons: list, fed: dict, examined: list, now: str, keep=None) -> dict:
    new, strengthened = [], []
    for lesson in lessons:
        if lesson.new:
            lesson.id = store.add_lesson(lesson.text, lesson.kind, lesson.cwd, lesson.strength, lesson.seen,
                                         lesson.sources, now)
            new.append({"id": lesson.id, "text": redact(lesson.text), "kind": lesson.kind, "cwd": lesson.cwd,
                        "seen": lesson.seen, "strength": round(lesson.strength, 2), "sources": lesson.sources})
            if lesson.by_model:
                new[-1]["by_model"] = True
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
    # Live or candidate, by what backs each lesson tonight (backing.py): a new one, or one joined.
    moved = review.settle(store, [ls["id"] for ls in new] + [ls.id for ls in lessons if not ls.new and ls.joined],
                          now)
    states = {ls["id"]: ls["state"] for ls in store.all_lessons() if ls["id"] in {n["id"] for n in new}}
    for item in new:
        item["state"] = states.get(item["id"], backing.LIVE)
    report = {"new": new, "strengthened": strengthened, "examined": len(examined), "joined": len(fed),
              "went_live": [i for i in moved["live"] if i not in states],
              "went_candidate": [i for i in moved["candidate"] if i not in states]}
    if keep:
        keep(report)  # in the same transaction (night)
    return report


RULE_SIMILARITY = 0.3        # two corrections naming the same tools the same way join at this cosine:
                             # "use pnpm, not npm" and "always pnpm, never npm" hash far apart


def _same_rule(ep: dict, vec: dict, tonight: "_Consolidation") -> "_Lesson | None":
    """A feedback lesson of the same project (or every project) that names the same tools
    the same way as the correction, and is somewhat alike in words."""
    text = tonight.lesson_words(ep)
    if ep["id"] not in tonight.rules:     # or, without a lesson of its own, its own lines
        tonight.rules[ep["id"]] = stance(text or "\n".join(own_lines(ep["facts"].get("said") or ""))[:240])
    mine = tonight.rules[ep["id"]]
    if not mine:
        return None
    project = tonight.places.project(ep["cwd"])
    best, score = None, RULE_SIMILARITY
    for lesson in tonight.lessons:
        if lesson.kind != "feedback" or (lesson.cwd and tonight.places.project(lesson.cwd) != project):
            continue
        s = lesson.similarity(vec)
        if s >= score and same_rule(mine, stance(lesson.text)) and not other_rules(text or "", lesson.text):
            best, score = lesson, s
    return best


class _Vectors(dict):
    """Unit surprise vectors of episodes, computed when first asked for."""

    def __init__(self, episodes):
        super().__init__()
        self.episodes = {ep["id"]: ep for ep in episodes}
        self.memo: dict = {}        # what surprise_unit works out of the same words, worked out once

    def __contains__(self, eid):
        return eid in self.episodes

    def __missing__(self, eid):
        self[eid] = surprise_unit(self.episodes[eid], self.memo)
        return self[eid]


def _load_lessons(store: Store, only: set | None = None, places: "_Places | None" = None, rows=None,
                  sessions: bool = True) -> list:
    """Every lesson (vetoed and archived too: what is near them joins them), with signatures
    and the causes of their failures. rows: the lessons as already read (consolidation);
    sessions: the sessions of all its sources too (what a join counts: not a prediction's)."""
    places = places or _Places()
    rows = store.lessons_to_consolidate() if rows is None else rows
    lessons = [_Lesson(r) for r in rows if only is None or r["id"] in only]
    for lesson in lessons:
        places.project(lesson.cwd)      # a lesson's folder spells its project tonight
    ids = sorted({i for ls in lessons for i in ls.sources[-SIGNATURE_SOURCES:]})
    episodes = store.episodes_by_id(ids)
    for lesson in lessons:
        lesson.sessions = set(lesson.sessions_known(store) if sessions and len(lesson.sources) > SIGNATURE_SOURCES
                              else ())
        for eid in lesson.sources[-SIGNATURE_SOURCES:]:
            ep = episodes.get(eid)
            if ep is not None:
                lesson.add(ep, surprise_unit(ep))
                # said of its project ("in this repo ..."), on any night: no failure elsewhere widens it
                lesson.here = lesson.here or (ep["kind"] == "correction" and said_of_this_project(ep["facts"]))
                if ep["kind"] == "error" and cause_of(ep):
                    lesson.causes.add((cause_of(ep), places.project(ep["cwd"]) if project_bound(cause_of(ep)) else None))
        if not lesson.sum:              # its sources are gone: its own words stand for it
            lesson.stands_for(embed.unit(embed.vector(lesson.text)))
    return lessons


class _Places:
    """The project of a cwd (paths.project_of), asked once a night; two clones of one repository
    here (paths.Identities: the same `origin` and a commit in common) are one project, spelt as the first seen
    (a lesson's own folder, when it has one: _load_lessons asks for those first)."""

    def __init__(self):
        self._roots: dict = {}
        self._spelling: dict = {}      # paths.Identities -> the first spelling seen tonight
        self._identity = paths.Identities()

    def project(self, cwd):
        if not cwd:
            return None
        if cwd not in self._roots:     # also for a folder since deleted: its repository may remain
            root = paths.project_of(cwd)
            self._roots[cwd] = self._spelling.setdefault(self._identity(root), root)
        return self._roots[cwd]

    def is_repository(self, cwd) -> bool:
        return bool(cwd) and paths.git_root(cwd) is not None


# --------------------------------------------------------------------------------------
# What a surprise is about: the vector sleep compares

def surprise_unit(ep: dict, memo: dict | None = None) -> dict:
    """The hashed vector (embed.unit_of) of what a surprise is about: the command and its error,
    or the words said and the call they answered (a correction a judge found lasting: the lesson
    it worded, which says what was meant where the words lean on their moment: "Seems you did
    commit by yourself?" and "Next time you made changes, let me commit" share no word, their
    judged lessons most); a note's title and text. Not the episode's gist, whose session
    context ("While working on ...") would make unrelated surprises look alike.

    memo: a night's {words: what they give} (a failure that recurs all year, a correction said
    again): the same vector, worked out once; its vectors are read, never changed."""
    memo = {} if memo is None else memo
    text = surprise_text(ep, memo)
    if ("text", text) not in memo:
        memo["text", text] = embed.unit_of(text)
    return memo["text", text]


def surprise_words(ep: dict, memo: dict | None = None) -> dict:
    """A surprise's words as Lesson.alike compares them (embed.word_unit of surprise_text): as the
    night worked them out already (memo: _Consolidation.words_of's), or else now."""
    found = None if memo is None else memo.get(("words", ep["id"]))
    return found if found is not None else embed.word_unit(surprise_text(ep, memo))


def surprise_text(ep: dict, memo: dict | None = None) -> str:
    """What surprise_unit hashes: the command and its error lines, the words said and what they
    answered, a note's title and text."""
    memo = {} if memo is None else memo
    facts = ep.get("facts") or {}
    if ep.get("kind") == "error":
        text = core_command(facts.get("command") or facts.get("tool") or "") + "\n" + \
            "\n".join(telling_lines(facts))
    elif ep.get("kind") == "correction":
        judged = backing.judged_lesson(facts)
        said = facts.get("own") or facts.get("said") or ""
        strict = facts.get("form") in ("review", "pasted-failure")
        if judged:
            meant = unscoped(judged)
        else:
            if ("said", said, strict) not in memo:
                found = lasting_sentence(said, strict=strict)
                memo["said", said, strict] = found[0] if found else correction_head(said)
            meant = memo["said", said, strict]
        text = meant + "\n" + _about(facts)
    else:
        text = (ep.get("title") or "") + "\n" + (ep.get("gist") or "")
    return text


def cause_of(ep: dict) -> str:
    """An error episode's cause key: the environment's cause whatever the program and its
    arguments (wording.environment_key: zsh's "no matches found" after `gh api` and after `ls`,
    a variable not set whichever script needed it), else `facts.cause` (for one stored before
    there was one, read again from its lines). Read from the stored lines each night, so a
    database ingested before groups the same way with no migration."""
    facts = ep.get("facts") or {}
    return environment_key(facts) or (facts["cause"] if "cause" in facts else cause_key(facts))


def _teaches(ep: dict) -> bool:
    """Whether a failure may make or join a failure lesson: one that can teach (failures.
    is_lesson_error), or one of the environment (wording.environment_cause) that the session did
    not get past by editing code: "DATABASE_URL environment variable is required but not set" is
    a ValueError, which the rules read as the code's when it is the shell's."""
    facts = ep["facts"]
    return is_lesson_error(facts) or (bool(environment_key(facts)) and not facts.get("work")
                                      and not (facts.get("guard") and not facts.get("found")))


def _environment_again(members: list) -> bool:
    """Whether failures of the environment (wording.environment_cause) of one session happened
    twice or more (two calls, or one call failing again the same way: `count`): a program not
    installed, a hook that blocks, a variable not set will be met again (issue 24, item 5)."""
    return bool(environment_key(members[0]["facts"])) and \
        sum(max(1, int(m["facts"].get("count") or 1)) for m in members) >= 2


def _environment_always(members: list) -> bool:
    """Whether failures are of what the Bash tool is on every call (wording.ONE_FAILURE_KINDS: it
    has no terminal, its shell is bash, which expands `$` in a double-quoted PowerShell script and
    is not cmd.exe, and Claude Code keeps it in the session's folders): once is enough, the next
    session meets the same (public14: `sudo` with no terminal, `tmux attach`, bash eating
    PowerShell's `$env:`, `taskkill /F`; public15: `cd` blocked; each a lasting failure no rule read)."""
    found = environment_cause(members[0]["facts"])
    return bool(found) and found[0] in ONE_FAILURE_KINDS


def _shows_its_fix(members: list) -> bool:
    """Whether failures of one session teach alone: a later turn showed what made the same thing
    work, and the cause is not the code's (a failing test, a type error: the work itself)."""
    return any(m["facts"].get("fix") for m in members) and not any(is_work_failure(m["facts"]) for m in members)


def _cwd_of(members: list):
    """The working folder the members share, for wording their paths from it; None when they differ."""
    folders = {m.get("cwd") for m in members}
    return folders.pop() if len(folders) == 1 else None


# Where a command's own words end: its first quoted argument or substitution (a commit message, a
# heredoc, a script passed with -c, `"$(cat <<'EOF' …"`)
_ARGUMENT_TEXT = re.compile(r"""\s*(?:["'`]|\$\().*""", re.S)
ARGUMENT_WORDS = 6          # a quoted argument this short, on one line, is part of what the call is


def _about(facts: dict) -> str:
    """The command a correction's words are about, up to its first quoted argument, or the name of
    the file: never a path, whose folders would make every correction of one project look alike,
    nor a commit message, which made two refusals of one commit ("Pleas do not add your signature
    on the commit messages", then "The CLAUDE file is on the gitignore, dont talk about it") look
    alike through its fifty words whatever the person said of it."""
    command, tool = call_about(facts)
    if tool == "Bash":
        core = core_command(command)
        argument = _ARGUMENT_TEXT.search(core)
        # a short one on one line is kept: `-m "wip"` and `-m "Add login page"` tell two corrections
        # of a commit apart ("don't commit wip", "don't commit yet": red46)
        short = argument and "\n" not in argument.group() and len(argument.group().split()) <= ARGUMENT_WORDS
        return core if short else _ARGUMENT_TEXT.sub("", core)
    return command.split(" ", 1)[-1].rsplit("/", 1)[-1] if tool in ("Edit", "MultiEdit", "Write", "Read") else ""


# --------------------------------------------------------------------------------------
# Pass 3: verification

def verify(store: Store, now: str, keep=None) -> dict:
    """Resolve open predictions: confirmed by a matching episode in their 14 days, else failed.

    A match is an error, correction or note that happened (its `at`) after the prediction
    was made and within its 14 days, in the lesson's project (any project for a lesson that
    applies everywhere), at cosine ≥ 0.5 to the lesson's sources. Without a session of its
    project in those 14 days nothing tested it: it is not failed but waits, its 14 days
    starting again with the project's next session; with none for PREDICTION_WAIT_DAYS it
    lapses, neither confirmed nor failed.
    """
    t_now = parse_time(now)
    places = _Places()
    confirmed, failed = [], []
    with store.transaction():
        store.close_predictions_not_live(now)  # vetoed before this code closed them at the veto
        open_ = store.open_predictions()
        if not open_:
            if keep:
                keep({"confirmed": [], "failed": []})
            return {"confirmed": [], "failed": []}
        since = min(r["made"] for r in open_)
        evidence = store.episodes_between(EVIDENCE_KINDS, since, now)
        evidence = [ep for ep in evidence if ep["kind"] != "error" or is_lesson_error(ep["facts"])]
        vectors: dict = {}
        strengths: dict = {}
        sessions = store.sessions_between(since, now)
        for p in open_:
            # Judged only on what happens after it was made, in its project; when the project
            # has no session in the 14 days, nothing tested it: the 14 days start again with
            # the project's next session, and with none for PREDICTION_WAIT_DAYS it lapses.
            made = parse_time(p["made"])
            first = next((at for cwd, at in sessions if at > p["made"]
                          and (not p["cwd"] or places.project(cwd) == places.project(p["cwd"]))), None)
            deadline = made + timedelta(days=PREDICTION_DAYS)
            if first is not None and parse_time(first) > deadline:
                deadline = parse_time(first) + timedelta(days=PREDICTION_DAYS)
            end = iso(min(deadline, t_now)) if first is not None else now
            expected = embed.unit(p["embedding"])
            match = None
            for ep in evidence:
                if ep["at"] <= p["made"]:
                    continue
                if ep["at"] > end:
                    break
                if p["cwd"] and places.project(ep["cwd"]) != places.project(p["cwd"]):
                    continue
                if ep["id"] not in vectors:
                    vectors[ep["id"]] = surprise_unit(ep)
                if embed.dot(vectors[ep["id"]], expected) >= MATCH_SIMILARITY:
                    match = ep
                    break
            before = strengths.get(p["lesson_id"], p["strength"])
            if match is not None:
                after = before + CONFIRMED_BOOST
                store.resolve_prediction(p["id"], now, "confirmed", match["id"])
                confirmed.append({"id": p["id"], "lesson_id": p["lesson_id"], "lesson": p["text"],
                                  "made": p["made"], "evidence": source(match),
                                  "before": round(before, 2), "strength": round(after, 2)})
            elif first is None:
                if t_now >= made + timedelta(days=PREDICTION_WAIT_DAYS):
                    store.resolve_prediction(p["id"], now, None)      # lapsed: nothing tested it
                continue
            elif t_now >= deadline:
                kept = backing.kept_by_person(p["backing"])
                after = before if kept else before * FAILED_FACTOR   # kept: the person's, not weakened
                store.resolve_prediction(p["id"], now, "failed")
                failed.append({"id": p["id"], "lesson_id": p["lesson_id"], "lesson": p["text"],
                               "made": p["made"], "deadline": iso(deadline),
                               "before": round(before, 2), "strength": round(after, 2), "kept": kept})
            else:
                continue
            strengths[p["lesson_id"]] = after
            store.set_lesson_strength(p["lesson_id"], after, now)
        if keep:
            keep({"confirmed": confirmed, "failed": failed})
    return {"confirmed": confirmed, "failed": failed}


# --------------------------------------------------------------------------------------
# Pass 4: prediction

def predict(store: Store, now: str, keep=None) -> dict:
    """One new prediction for each live lesson with strength ≥ 1 and none open: that what it is
    about comes up again within 14 days (an error, correction or note like its sources)."""
    made = []
    with store.transaction():
        wanted = set(store.lessons_without_prediction(PREDICT_FROM - 1e-9))
        if wanted:
            deadline = (parse_time(now) + timedelta(days=PREDICTION_DAYS)).strftime("%Y-%m-%d")
            for lesson in _load_lessons(store, only=wanted, sessions=False):    # its signature: lesson.vector()
                where = f"in {lesson.cwd}" if lesson.cwd else "in any project"
                text = (f"By {deadline}, this comes up again {where}: an error, correction or note like "
                        f"the ones this lesson was learnt from.")
                pid = store.add_prediction(lesson.id, text, now, lesson.vector())
                made.append({"id": pid, "lesson_id": lesson.id, "text": text})
        if keep:
            keep({"made": made})
    return {"made": made}


def _load_json(text):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


# --------------------------------------------------------------------------------------
# The morning report: what a night of sleep did, as facts (`morning --json`) and as
# Markdown (morning.md), in the person's words: each lesson with the sessions it came from.
#
# Pure but for `write_morning`, which writes through the own-folder writer.

REPORT_ITEMS = 8             # lines per section of the morning report before "and N more"
SOURCES_SHOWN = 3            # sources shown under each lesson in the report


def morning_facts(store: Store, facts: dict) -> dict:
    """What the night did, in the words and order the report uses (also `morning --json`).

    A lesson is told as it is when the report is made (live or candidate, in its final words):
    new lessons are the live ones made tonight and the candidates that went live; candidates
    are the ones made tonight (a judge's "nothing lasting" aside); lessons that left the
    agent's memory are those that became candidates (the upgrade's, said once, and tonight's).
    """
    cons, ver = facts["consolidation"], facts["verification"]
    now_lessons = {ls["id"]: ls for ls in store.all_lessons()}
    states = facts.get("states") or {"live": cons.get("went_live", []), "candidate": cons.get("went_candidate", [])}
    made = {ls["id"] for ls in cons["new"]}
    went_live = set(states["live"])
    counted = {ls["id"] for ls in cons["strengthened"]}     # told under Strengthened, with what changed
    promoted = [now_lessons[i] for i in dict.fromkeys(states["live"])
                if i in now_lessons and i not in made and i not in counted]
    promoted = [{"id": ls["id"], "text": ls["text"], "kind": ls["kind"], "cwd": ls["cwd"], "seen": ls["seen"],
                 "strength": round(ls["strength"], 2), "sources": ls["sources"], "was": "candidate"}
                for ls in promoted if _shown_state(ls) == backing.LIVE]
    ids = {i for ls in cons["new"] + promoted for i in ls["sources"]} | \
        {i for ls in cons["strengthened"] for i in ls["sources"]}
    episodes = store.episodes_by_id(sorted(ids), ("id", "session_id", "kind", "at", "title", "facts"))  # what source() reads

    def sources(source_ids):
        return by_session([episodes[i] for i in source_ids if i in episodes])

    def now_as(item):
        ls = now_lessons.get(item["id"])
        return dict(item, text=ls["text"], seen=ls["seen"], state=_shown_state(ls)) if ls else \
            dict(item, state="forgotten")

    # a new lesson with the sources it has now: those of the lessons found to say the same joined it (judge.judge_same)
    new = [dict(now_as(ls), sources=now_lessons[ls["id"]]["sources"]) if ls["id"] in now_lessons else now_as(ls)
           for ls in cons["new"]]
    srcs_of = {i: [episodes[e] for e in now_lessons[i]["sources"] if e in episodes] for i in made if i in now_lessons}
    left = [i for i in dict.fromkeys(facts.get("to_candidates", []) + states["candidate"])
            if i in now_lessons and _shown_state(now_lessons[i]) == backing.CANDIDATE and i not in made]
    report = {
        "night": facts["night"],
        "lessons_new": [dict(ls, sources=sources(ls["sources"])) for ls in new if ls["state"] == backing.LIVE] +
                       [dict(ls, sources=sources(ls["sources"])) for ls in promoted],
        "candidates_new": [dict(ls, sources=sources(ls["sources"])) for ls in new
                           if ls["state"] == backing.CANDIDATE
                           and not backing.judged_no(now_lessons[ls["id"]], srcs_of.get(ls["id"], []))],
        "lessons_to_candidates": [{"id": i, "text": now_lessons[i]["text"], "cwd": now_lessons[i]["cwd"]}
                                  for i in left],
        "candidates_waiting": sum(1 for ls in now_lessons.values() if _shown_state(ls) == backing.CANDIDATE),
        "candidates_lapsed": facts["decay"].get("lapsed", 0),
        "lessons_strengthened": [dict(ls, sources=sources(ls["sources"]), went_live=ls["id"] in went_live)
                                 for ls in map(now_as, cons["strengthened"]) if ls["state"] == backing.LIVE],
        "predictions_confirmed": ver["confirmed"],
        "predictions_failed": ver["failed"],
        "predictions_made": len(facts["prediction"]["made"]),
        "archived": {"episodes": facts["decay"]["archived"], "lessons": facts["decay"]["lessons_archived"]},
        "vetoed": facts.get("vetoed", []),
        "warnings": facts.get("warnings", []),
        "render": facts.get("render"),
    }
    if facts.get("gone"):       # project folders no longer here: their live lessons reach no agent
        report["gone"] = facts["gone"]
    if facts.get("errors"):
        report["errors"] = facts["errors"]
    return report


def _shown_state(lesson: dict) -> str:
    """live, candidate, or what it is instead (vetoed, archived)."""
    return review.state_name(lesson)


def eventful(report: dict) -> bool:
    """Whether the night changed anything (warnings alone, which render repeats, do not count)."""
    return any([report["lessons_new"], report.get("candidates_new"), report.get("lessons_to_candidates"),
                report["lessons_strengthened"], report["predictions_confirmed"],
                report["predictions_failed"], report["predictions_made"], report["archived"]["episodes"],
                report["archived"]["lessons"], report.get("candidates_lapsed"), report.get("approved"),
                report["vetoed"], report.get("errors")])


def merge_nights(earlier: dict, later: dict) -> dict:
    """One report for two sleeps of the same night: all either did, each thing once (the later
    version of it), counts summed; warnings, render and errors as the later run saw them."""
    def union(key, drop=()):
        by_id = {}
        for item in earlier.get(key, []) + later.get(key, []):
            by_id[item.get("id")] = item
        return [item for i, item in by_id.items() if i not in drop]

    vetoed = union("vetoed")
    gone = {v["id"] for v in vetoed}                  # a veto takes a lesson out of every list
    approved = union("approved", drop=gone)
    back = {ls["id"] for ls in later.get("lessons_to_candidates", [])}   # no longer in the agent's memory
    new = union("lessons_new", drop=gone | back)
    again = {ls["id"]: ls for ls in later["lessons_strengthened"]}
    new = [_strengthened_since(ls, again[ls["id"]]) if ls["id"] in again else ls for ls in new]
    backed = {ls["id"] for ls in later["lessons_strengthened"]}   # live now: strengthened lists only those
    candidates = union("candidates_new", drop={ls["id"] for ls in new} | backed | gone | {a["id"] for a in approved})
    episodes = dict(earlier["archived"]["episodes"])
    for kind, n in later["archived"]["episodes"].items():
        episodes[kind] = episodes.get(kind, 0) + n
    merged = dict(later, night=earlier["night"], runs=earlier.get("runs", 1) + 1, lessons_new=new,
                  lessons_strengthened=union("lessons_strengthened", drop={ls["id"] for ls in new} | gone | back),
                  predictions_confirmed=union("predictions_confirmed"),
                  predictions_failed=union("predictions_failed"),
                  candidates_new=candidates, lessons_to_candidates=union("lessons_to_candidates", drop=gone),
                  candidates_lapsed=earlier.get("candidates_lapsed", 0) + later.get("candidates_lapsed", 0),
                  predictions_made=earlier["predictions_made"] + later["predictions_made"],
                  archived={"episodes": episodes,
                            "lessons": earlier["archived"]["lessons"] + later["archived"]["lessons"]},
                  vetoed=vetoed)
    if approved:
        merged["approved"] = approved
    merged.pop("errors", None)
    if later.get("errors"):
        merged["errors"] = later["errors"]
    return merged


LISTED = ("lessons_new", "lessons_strengthened", "candidates_new", "lessons_to_candidates", "approved")
WAITING = ("candidates_new", "lessons_to_candidates")     # what the report asks the person to review


def told_vetoed(store: Store, vetoed: list, how: str) -> bool:
    """A veto after the night (`lessons reject`, or `render` finding a lesson file deleted): the
    last morning report no longer lists the lesson as new, strengthened, a candidate or approved,
    and says it was vetoed (how: "rejected" or "deleted"); morning.md is written again. Whether it changed."""
    report = _load_json(store.get_state("morning"))
    ids = {int(v["id"]) for v in vetoed}
    if not report or not any(ls["id"] in ids for key in LISTED for ls in report.get(key, [])):
        return False
    report = dict(report, **{key: [ls for ls in report.get(key, []) if ls["id"] not in ids] for key in LISTED})
    told = {v["id"] for v in report.get("vetoed", [])}
    report["vetoed"] = report.get("vetoed", []) + [{"id": int(v["id"]), "text": v["text"], "how": how}
                                                   for v in vetoed if int(v["id"]) not in told]
    _tell_again(store, report)
    return True


def told_approved(store: Store, approved: list, how: str) -> bool:
    """An approval after the night (`lessons approve`, or `lessons edit`, how: "approved" or
    "edited"): the last morning report no longer lists the lesson as a candidate to review (nor
    asks for its approval) and says the person approved it; where it lists the lesson, it shows
    the lesson's text as it is now (the person's, after an edit); morning.md is written again.
    Whether it changed."""
    report = _load_json(store.get_state("morning"))
    texts = {int(a["id"]): a["text"] for a in approved}
    if not report or not any(ls["id"] in texts for key in LISTED + ("vetoed",) for ls in report.get(key, [])):
        return False
    # a veto taken back (`--undo-veto`) leaves "Vetoed by you" for "Approved by you" too
    decided = [ls["id"] for key in WAITING + ("vetoed",) for ls in report.get(key, []) if ls["id"] in texts]
    report = dict(report, **{key: [dict(ls, text=texts.get(ls["id"], ls["text"])) for ls in report.get(key, [])
                                   if key not in WAITING or ls["id"] not in texts] for key in LISTED},
                  vetoed=[v for v in report.get("vetoed", []) if v["id"] not in texts])
    told = {a["id"] for a in report["approved"]}
    report["approved"] = [dict(a, how="edited") if a["id"] in texts and how == "edited" else a
                          for a in report["approved"]] + \
        [{"id": i, "text": texts[i], "how": how} for i in dict.fromkeys(decided) if i not in told]
    _tell_again(store, report)
    return True


def _tell_again(store: Store, report: dict) -> None:
    """Store the last morning report as the person's review left it, and write morning.md again."""
    report["candidates_waiting"] = sum(1 for ls in store.all_lessons() if _shown_state(ls) == backing.CANDIDATE)
    with store.transaction():
        store.set_state("morning", json.dumps(redact_obj(report), ensure_ascii=False, sort_keys=True))
    write_morning(morning_text(report, PREDICTION_DAYS, ARCHIVE_AFTER_DAYS))


def _strengthened_since(made: dict, again: dict) -> dict:
    """A lesson new tonight that a later sleep of the night strengthened: still new, as it is now."""
    sources = made["sources"] + [s for s in again["sources"] if s not in made["sources"]]
    return dict(made, text=again["text"], seen=again["seen"], strength=again["strength"],
                sources=sorted(sources, key=lambda s: s.get("at") or ""))


def summary(report: dict) -> str:
    """The night in one line: each count the length of the report's list (the morning report's
    sections). A sleep after another the same night says which lessons it strengthened were
    new earlier tonight (its total counts them as new)."""
    archived = sum(report["archived"]["episodes"].values()) + len(report["archived"]["lessons"])
    made = {ls["id"] for ls in (report.get("tonight") or {}).get("lessons_new", [])}
    earlier = sum(1 for ls in report["lessons_strengthened"] if ls["id"] in made)
    parts = [_count(len(report["lessons_new"]), "new lesson"),
             f"{len(report['lessons_strengthened'])} strengthened"
             + (f" ({earlier} new earlier tonight)" if earlier else ""),
             _count(len(report["predictions_confirmed"]), "prediction") + " confirmed",
             f"{sum(1 for p in report['predictions_failed'] if not p.get('kept'))} failed",
             _count(archived, "memory", "memories") + " archived"]
    kept = sum(1 for p in report["predictions_failed"] if p.get("kept"))
    if kept:                            # the person's own lessons: followed, not wrong (prediction below)
        parts.insert(4, f"{kept} not needed yet")
    if report.get("candidates_lapsed"):
        parts.append(_count(report["candidates_lapsed"], "candidate") + " lapsed")
    if report.get("candidates_new"):
        parts.append(_count(len(report["candidates_new"]), "new candidate") + " to review")
    if report.get("lessons_to_candidates"):
        parts.append(_count(len(report["lessons_to_candidates"]), "lesson") + " back to candidates")
    if report.get("approved"):
        parts.append(_count(len(report["approved"]), "lesson") + " approved by you")
    if report["vetoed"]:
        parts.append(_count(len(report["vetoed"]), "lesson") + " vetoed")
    if report["warnings"]:
        parts.append(_count(len(report["warnings"]), "warning"))
    return ", ".join(parts)


def morning_text(report: dict, prediction_days: int, archive_after_days: int) -> str:
    """The morning report as Markdown: short enough to read over coffee.

    prediction_days and archive_after_days are sleep's numbers, said in the report's words."""
    when = report["night"][:16].replace("T", " ")
    runs = f" (in all, over {report['runs']} sleeps)" if report.get("runs", 1) > 1 else ""
    lines = [f"# openmemory: the night of {when} UTC", "",
             (summary(report) + runs + ".") if eventful(report) else "Nothing changed tonight.", ""]

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
        out = [f"  - {s['at'][:10]}: {_md(s['what'])}" for s in srcs[:SOURCES_SHOWN]]
        if len(srcs) > SOURCES_SHOWN:
            out.append(f"  - and {len(srcs) - SOURCES_SHOWN} more")
        return out

    def new(ls):
        was = "; was a candidate, now backed" if ls.get("was") == "candidate" else ""
        return [f"- {_md(ls['text'])}", f"  ({ls['kind']}, {_md(paths.one_line(ls['cwd'])) if ls['cwd'] else 'every project'}; "
                f"{counts.seen_words(ls['seen'])}{was})"] + sources(ls["sources"])

    def candidate(ls):
        where = f"{_md(review.project_name(ls['cwd'])) or 'every project'}; " if "cwd" in ls else ""
        return [f"- {_md(ls['text'])} ({where}lesson:{ls['id']}; approve: `openmemory lessons approve lesson:{ls['id']}`)"]

    def strengthened(ls):
        notes = "".join([f"; strength {ls['before']:.2f} → {ls['strength']:.2f}",
                         "; now applies in every project" if ls["everywhere"] else "",
                         "; was a candidate, now backed" if ls.get("went_live") else "",
                         "; back from the archive" if ls["revived"] else ""])
        return [f"- {_md(ls['text'])}", f"  ({counts.seen_words(ls['seen'])}{notes})"] + sources(ls["sources"])

    def prediction(item):
        outcome, p = item
        change = f"strength {p['before']:.2f} → {p['strength']:.2f}"
        if outcome == "confirmed":
            return [f"- Confirmed: {_md(p['lesson'])}",
                    f"  It came up again on {p['evidence']['at'][:10]}: {_md(p['evidence']['what'])} ({change})"]
        if p.get("kept"):               # the mistake not coming back is what following it looks like
            return [f"- Not needed yet: {_md(p['lesson'])}",
                    f"  It did not come up between {p['made'][:10]} and {p['deadline'][:10]} (strength "
                    f"{p['strength']:.2f}, kept: you approved it or wrote it)"]
        return [f"- Failed: {_md(p['lesson'])}",
                f"  It did not come up between {p['made'][:10]} and {p['deadline'][:10]} ({change})"]

    section("New lessons", report["lessons_new"], new)
    waiting = report.get("candidates_waiting", 0)
    section("Candidates to review", report.get("candidates_new", []), candidate, after=[
        f"Not in the agent's memory until backed: your approval, your standing words, another session or a "
        f"judge. {_count(waiting, 'candidate')} in all: `openmemory lessons` lists them with where each came "
        f"from."] if report.get("candidates_new") else ())
    section("Back to candidates", report.get("lessons_to_candidates", []), candidate, after=[
        "These left the agent's memory: nothing backs them yet (openmemory now renders a lesson only when "
        "something does; ARCHITECTURE.md says why)."] if report.get("lessons_to_candidates") else ())
    gone = sorted((report.get("gone") or {}).items())
    section("Folders no longer here", gone, _gone_line, after=[
        f"`openmemory doctor` names each of the {len(gone)}."] if len(gone) > REPORT_ITEMS else ())
    section("Strengthened", report["lessons_strengthened"], strengthened)
    made = report["predictions_made"]
    section("Predictions", [("confirmed", p) for p in report["predictions_confirmed"]]
            + [("failed", p) for p in report["predictions_failed"]], prediction,
            after=[f"{_count(made, 'new prediction')}: each says its lesson will come up again within "
                   f"{prediction_days} days."] if made else ())
    archived = report["archived"]
    memories = []
    if archived["episodes"]:
        kinds = ", ".join(_count(n, k) for k, n in sorted(archived["episodes"].items()))
        memories = [f"- {_count(sum(archived['episodes'].values()), 'memory', 'memories')} not used for "
                    f"{archive_after_days} days or more ({kinds}): archived, not deleted."]
    if report.get("candidates_lapsed"):
        it = "it" if report["candidates_lapsed"] == 1 else "them"
        memories.append(f"- {_count(report['candidates_lapsed'], 'candidate')} lapsed: nothing backed {it} in "
                        f"{backing.LAPSE_DAYS} days (archived, not deleted; `openmemory lessons` lists {it}).")
    section("Archived", archived["lessons"], lambda ls: [
        f"- Lesson faded: {_md(ls['text'])}", f"  (out of the agent's memory; to keep it: "
        f"`openmemory lessons approve lesson:{ls['id']}`)"], after=memories)
    section("Approved by you", report.get("approved", []), lambda a: [
        f"- {_md(a['text'])}", "  (you wrote its text with `openmemory lessons edit`; it is in the agent's memory now)"
        if a.get("how") == "edited" else
        "  (you approved it with `openmemory lessons approve`; it is in the agent's memory now)"])
    section("Vetoed by you", report["vetoed"], lambda v: [
        f"- {_md(v['text'])}", ("  (you rejected it with `openmemory lessons reject`" if v.get("how") == "rejected" else
                           "  (you deleted it from Claude Code's memory") +
        f"; it will not come back unless you take the veto back: "
        f"`openmemory lessons approve lesson:{v['id']} --undo-veto`)"])
    section("The model", [report["model"]] if report.get("model") else [], _model_line)
    section("Warnings", report["warnings"], lambda w: [f"- {_md(w)}"])
    return "\n".join(lines).rstrip() + "\n"


def _gone_line(item) -> list:
    """A project folder no longer here, its live lessons and the command that files them where it went."""
    folder, ids = item
    n = len(ids)
    it = "it" if n == 1 else "them"
    return [f"- {_count(n, 'live lesson')} {'is' if n == 1 else 'are'} filed under {_md(paths.one_line(folder))}, a "
            f"folder no longer here, so no agent reads {it}. If the folder was moved or renamed, "
            f"`openmemory lessons move {_md(paths.one_line(shlex.quote(folder)))} <its new folder>` files {it} "
            f"under the new one."]


def told_gone(store: Store, gone: dict) -> bool:
    """After a render (`lessons move`, `forget`, `render`): the last morning report names only the
    folders still no longer here, with only their lessons still filed there; morning.md is
    written again. Whether it changed."""
    report = _load_json(store.get_state("morning"))
    if not report or not report.get("gone"):
        return False
    now = {folder: [i for i in ids if i in set(gone.get(folder) or [])] for folder, ids in report["gone"].items()}
    now = {folder: ids for folder, ids in now.items() if ids}
    if now == report["gone"]:
        return False
    report = dict(report, gone=now) if now else {k: v for k, v in report.items() if k != "gone"}
    _tell_again(store, report)
    return True


def _md(text) -> str:
    """A lesson's, a source's, a project's or a warning's words in the report's Markdown, shown as they
    are written (render.neutralise, as MEMORY.md's lines, but `<!--` kept: the report holds no
    markers): a lesson holding `<!--` hid what followed it when the report was rendered, a `#`
    or `-` after the list's dash opens a heading or a list, and a bidi or zero-width mark shows
    it otherwise than it reads."""
    return render.neutralise(str(text or ""), block_start=True, markers=False)


def _model_line(m: dict) -> list:
    j = m.get("judged") or {}
    cap = m.get("cap") or {}
    spent = f"{_count(m['calls'], 'call')}, {m.get('tokens', 0):,} tokens" + (
        f" (${m['cost_usd']:.2f})" if m.get("cost_usd") else "") + (
        f", of a cap of {cap['calls']} calls and {cap['tokens']:,} tokens a night" if cap else "")
    return [f"- {m['model']}: {_count(m['asked'], 'question')} ({m['cached']} answered from the cache), "
            f"{_count(m['answered'], 'new answer')}, {_count(m['failures'], 'failure')}; {spent}.",
            f"  Asked about {_count(j.get('messages', 0), 'message')} ({_count(j.get('corrections', 0), 'correction')}, "
            f"{j.get('lasting', 0)} lasting) and {_count(j.get('failures', 0), 'repeated failure')} "
            f"({j.get('failures_lasting', 0)} lasting)"
            + (f", and whether the lessons of {_count(j['same_asked'], 'project')} say the same thing"
               if j.get("same_asked") else "")
            + f"; {_count(m.get('gists', 0), 'session gist')} led by it."
            + (f" {_count(j['joined'], 'new lesson')} said what another lesson of {'its' if j['joined'] == 1 else 'their'} "
               f"project says, and joined it." if j.get("joined") else "")
            + (f" {_count(j['unusable'], 'answer')} not used: not the form asked for (one JSON object, a lesson the "
               f"checks pass); the log has each." if j.get("unusable") else "")
            + (f" {_count(j['live'], 'question')} about a session written to in the last hour, maybe still going "
               f"on, {'wait' if j['live'] != 1 else 'waits'} for the next night." if j.get("live") else "")]


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def write_morning(text: str) -> None:
    """Write the report atomically (a reader never sees half of it), private to the person."""
    data = unhidden(redact(text)).encode("utf-8")
    if files.read(paths.morning_path()) != data:
        files.write_own(paths.morning_path(), data)
