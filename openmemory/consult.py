"""Where openmemory consults the optional model: doubtful turns, lesson wording, session gists.

Only `sleep` and `ingest --model` come here, never the hook nor the MCP server: a question
may wait up to its deadline. No transaction is held while the model thinks (the hook's
ingest must never wait on it); each answer is written in a short transaction of its own.
The model sees what the rules use (llm.py says what), and where it fails or its answer is
not valid, the deterministic result stands untouched.
"""
import json
import logging

from . import llm, paths
from .clock import iso
from .wording import scoped, unscoped
from .render import vetoed_wording
from .store import Store

log = logging.getLogger(__name__)

GIST_SESSIONS = 20          # new gist questions a run, newest sessions first: lessons come first
GIST_SCAN = 500             # sessions looked at a run (those answered before come from the cache)
SESSION_COMMANDS = 12       # of a session's commands, shown to the model: every failed one, then the first


# --------------------------------------------------------------------------------------
# Tonight's model: its cache and budget live in the store

def open_model(store: Store, now: str) -> "llm.Model | None":
    """Tonight's model, with its answers cached in the store and what today already spent; None without one."""
    cfg = llm.config()
    if cfg is None:
        if llm.problem():
            log.warning("no model: %s", llm.problem())
        return None
    spent = _load(store.get_state("model_spent"))
    day = now[:10]
    calls, seconds = (spent.get("calls", 0), spent.get("seconds", 0.0)) if spent.get("day") == day else (0, 0.0)
    model = llm.Model(cfg, cache=_StoreCache(store, cfg.model, now), spent=(calls, seconds))
    model.day = day
    return model


def close_model(store: Store, model: "llm.Model | None") -> dict | None:
    """Keep what the model spent today and when it last answered (for `status`); its night's facts."""
    if model is None:
        return None
    facts = model.facts()
    with store.transaction():
        store.set_state("model_spent", json.dumps({"day": model.day, "calls": model.calls,
                                                   "seconds": round(model.seconds, 1)}))
        if model.last_answer is not None:
            store.set_state("model_answered", iso(_utc(model.last_answer)))
        store.set_state("model_night", json.dumps(facts, sort_keys=True))
    return facts


def warnings_of(facts: dict | None) -> list:
    """What the person should know about tonight's model, for the morning report."""
    if not facts or not facts.get("stopped"):
        return []
    return [f"the model ({facts['model']}) was set aside tonight: {facts['stopped']}; "
            f"the rules' results stand (see the log for each failure)"]


class _StoreCache:
    """The model's answers, kept in the store by the hash of their question."""

    def __init__(self, store: Store, model: str, now: str):
        self.store, self.model, self.now = store, model, now

    def get(self, key: str):
        return self.store.model_answer(key)

    def put(self, key: str, text: str) -> None:
        with self.store.transaction():
            self.store.save_model_answer(key, self.model, text, self.now)


# --------------------------------------------------------------------------------------
# The three passes

def decide_doubtful(store: Store, model, now: str) -> dict:
    """Put each turn the rules found doubtful to the model; record its verdict on the episode.

    A YES makes the turn a correction (with the model's lesson line when it gave a valid
    one), to be examined again by consolidation; a NO is recorded so it is not asked
    again. No answer: the rules' verdict (doubtful, no lesson) stands.
    """
    out = {"asked": 0, "corrections": 0, "not": 0}
    if model is None:
        return out
    for ep in store.doubtful_corrections(now):
        out["asked"] += 1
        room = llm.LESSON_CHARS - (len(scoped("x", paths.project_of(ep["cwd"]) if ep["cwd"] else None)) - 1)
        verdict = llm.decide_doubtful(correction_context(ep, _errors(store, ep)), model, limit=room)
        if verdict is None:
            continue
        yes, lesson = verdict
        facts = dict(ep["facts"], decided="model", doubtful=not yes)
        if yes and lesson:
            facts["model_lesson"] = lesson
        with store.transaction():
            store.settle_doubtful(ep["id"], facts, reexamine=yes)
        out["corrections" if yes else "not"] += 1
    return out


def word_lessons(store: Store, model, new: list, scope) -> list:
    """Reword tonight's new lessons in the model's words where its answer is valid; returns those reworded.

    new: the consolidation report's new lessons ({id, text, cwd, sources}); scope:
    a callable (body, cwd) -> the lesson as the agent reads it ("In this repository ...").
    A lesson the model already worded (a doubtful turn's) and a vetoed draft are left alone.
    """
    if model is None:
        return []
    reworded = []
    for lesson in new:
        draft = unscoped(lesson["text"])
        if lesson.get("by_model") or vetoed_wording(lesson["text"]):
            continue
        sources = store.episodes_by_id(lesson["sources"])
        contexts = [source_context(sources[i], _errors(store, sources[i])) for i in lesson["sources"] if i in sources]
        room = llm.LESSON_CHARS - (len(scope("x", lesson["cwd"])) - 1)
        body = llm.word_lesson(contexts, draft=draft, limit=room, model=model)
        if body is None:
            continue
        text = scope(unscoped(body), lesson["cwd"])
        with store.transaction():
            store.reword_lesson(lesson["id"], text)
        reworded.append({"id": lesson["id"], "was": lesson["text"], "text": text})
        lesson["text"] = text
    return reworded


def write_gists(store: Store, model, limit: int = GIST_SESSIONS) -> int:
    """Lead recent sessions' gists with the model's sentence on what each did and how it ended.

    At most `limit` new questions a run, newest sessions first; a session whose answer is
    in the cache (valid or not) costs nothing and does not count.
    """
    if model is None:
        return 0
    done = sent = 0
    for ep in store.sessions_without_summary(GIST_SCAN):
        if sent >= limit or model.stopped:
            break
        calls = model.calls
        sentence = llm.session_gist(session_context(ep, _errors(store, ep)), model)
        sent += model.calls - calls
        if sentence is None:
            continue
        with store.transaction():
            store.set_session_summary(ep["id"], sentence)
        done += 1
    return done


# --------------------------------------------------------------------------------------
# What the model is shown: built from stored episodes, the same way every night, so a
# re-run asks the very same question and the cache answers it.

def correction_context(ep: dict, errors: list) -> dict:
    """A correction episode as llm.decide_doubtful and llm.word_lesson read it."""
    facts = ep.get("facts") or {}
    context = {"said": facts.get("said") or ""}
    command = facts.get("command") or ""
    shown = [c for c in (facts.get("trigger") or "", command) if c]    # what the words name, then the last call
    if shown:
        context["commands"] = []
        for c in dict.fromkeys(shown):
            failed = [e for e in errors if (e.get("facts") or {}).get("command") == c]
            context["commands"].append({"command": c, "failed": bool(failed),
                                        "refused": bool(facts.get("rejected")) and c == command,
                                        "errors": (failed[-1]["facts"].get("error") or []) if failed else []})
    agent_said = facts.get("agent_said") or ("" if command else facts.get("agent_did") or "")
    if agent_said:
        context["agent_said"] = agent_said
    return context


def source_context(ep: dict, errors: list) -> dict:
    """A lesson's source: a correction as above, a failure as its command and error lines."""
    if ep["kind"] == "correction":
        return correction_context(ep, errors)
    facts = ep.get("facts") or {}
    return {"commands": [{"command": facts.get("command") or facts.get("tool") or "", "failed": True,
                          "errors": facts.get("error") or []}]}


def session_context(ep: dict, errors: list) -> dict:
    """A session episode as llm.session_gist reads it: the requests, the commands, how it ended."""
    facts = ep.get("facts") or {}
    asked = [line[2:] if line.startswith("- ") else line for line in (ep.get("detail") or "").splitlines()]
    failed = {}
    for e in errors:
        ef = e.get("facts") or {}
        if ef.get("tool") == "Bash" and ef.get("command"):
            failed[_same(ef["command"])] = ef.get("error") or []
    commands = [{"command": c, "failed": _same(c) in failed, "errors": failed.get(_same(c), [])}
                for c in facts.get("commands") or []]
    commands = [c for c in commands if c["failed"]] + [c for c in commands if not c["failed"]]
    gist = ep.get("gist") or ""
    ended = facts.get("ended") or (gist.rsplit(". Ended: ", 1)[1] if ". Ended: " in gist else "")
    return {"asked": [a for a in asked if a.strip()], "commands": commands[:SESSION_COMMANDS],
            "files": facts.get("files") or [], "agent_said": ended}


def _errors(store: Store, ep: dict) -> list:
    return store.episodes(kind="error", session_id=ep["session_id"]) if ep.get("session_id") else []


def _same(command: str) -> str:
    """A command as both records spell it: a session keeps its first line, an error all of it, clipped."""
    return " ".join(command.split())[:100]


def _load(text) -> dict:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _utc(seconds: float):
    from datetime import datetime, timezone
    return datetime.fromtimestamp(seconds, timezone.utc)

