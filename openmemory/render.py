"""Render: lessons into Claude Code's own memory folders, and lessons.jsonl.

The reconcile loop: which lessons go in which memory folder, what changed since the last
render, what the person vetoed. It writes only through files.py: into Claude Code's memory
folders (inside `<config dir>/projects/*/memory/`: one `om-<id>.md` per lesson and the section
of `MEMORY.md` between the openmemory markers) and its own state under OPENMEMORY_HOME.
Everything else in that folder is the person's or Claude Code's and is never touched. The person decides: a lesson file they
delete is a veto (never written again), a file they edit is theirs (left as it is).
"""
import hashlib
import json
import os
from pathlib import Path

from . import embed, files, forget, paths
from .clock import iso
from .errors import RenderError
from .memorymd import (BEGIN, END, LOAD_BYTES, LOAD_LINES, file_name, index_line, merge, section_text, topic_file,
                       unseen)
from .redact import redact
from .store import Store

INDEX_LINES = 20            # lessons indexed per MEMORY.md; OPENMEMORY_INDEX_LINES overrides
INDEX_LINES_ENV = "OPENMEMORY_INDEX_LINES"
WRITE_ATTEMPTS = 5          # a MEMORY.md that changes under us this often is left for next time
LOCK_WAIT_SECONDS = 60      # how long a render waits for another one to finish
JSONL_SCHEMA = 1            # lessons.jsonl "schema" (PROTOCOL.md)
STATE_VERSION = 1           # written.json / vetoed.json "version"


def _project_or_none(cwd):
    return paths.project_of(cwd) if _usable_cwd(cwd) else None


def lesson_record(lesson: dict, sources: list, predictions: list) -> dict:
    """One line of lessons.jsonl (PROTOCOL.md)."""
    resolved = [p for p in predictions if p.get("resolved")]
    open_ = [p for p in predictions if not p.get("resolved")]
    return {
        "schema": JSONL_SCHEMA,
        "id": lesson["id"],
        "text": redact(lesson["text"]),
        "kind": lesson["kind"],
        "cwd": lesson["cwd"],
        "project": _project_or_none(lesson["cwd"]),
        "strength": round(float(lesson["strength"]), 4),
        "seen": lesson["seen"],
        "sources": [{"episode": s["id"], "kind": s["kind"], "at": s["at"], "title": redact(s["title"])}
                    for s in sorted(sources, key=lambda s: (s.get("at") or "", s["id"]))],
        "created": lesson["created"],
        "updated": lesson["updated"],
        "predictions": {
            "confirmed": sum(p.get("outcome") == "confirmed" for p in resolved),
            "failed": sum(p.get("outcome") == "failed" for p in resolved),
            "open": {"text": redact(open_[-1]["text"]), "made": open_[-1]["made"]} if open_ else None,
            "history": [{"text": redact(p["text"]), "made": p["made"], "resolved": p["resolved"],
                         "outcome": p["outcome"]} for p in resolved],
        },
    }


# --------------------------------------------------------------------------------------
# Render's state files (under OPENMEMORY_HOME).

def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load_state(path: Path, key: str, kind) -> object:
    """A state file's `key` list or dict; missing means empty; unreadable stops the render."""
    data = files.read(path)
    if data is None:
        return kind()
    try:
        value = json.loads(data.decode("utf-8")).get(key, kind())
        if not isinstance(value, kind):
            raise ValueError(f"'{key}' is not a {kind.__name__}")
        return value
    except (ValueError, AttributeError, UnicodeDecodeError) as e:
        raise RenderError(f"cannot read {path} ({e}); fix or restore it before rendering again, "
                          f"it records what openmemory wrote and what you vetoed") from e


def _dump(value) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------
# The render itself.

def index_lines_limit(value=None) -> int:
    """Lessons per MEMORY.md: value, else $OPENMEMORY_INDEX_LINES, else INDEX_LINES."""
    raw = value if value is not None else os.environ.get(INDEX_LINES_ENV)
    if raw is None or raw == "":
        return INDEX_LINES
    try:
        n = int(raw)
    except (TypeError, ValueError):
        n = -1
    if n < 0:
        raise RenderError(f"the number of index lines must be a whole number ≥ 0, not {raw!r} "
                          f"(set by --max-lines or {INDEX_LINES_ENV})")
    return n


def veto_key(text: str) -> str:
    """A lesson's identity for vetoes: its content words in order (case, punctuation aside)."""
    return " ".join(embed.words(text)) or " ".join((text or "").lower().split())


def forgotten_key(text: str) -> str:
    """A forgotten lesson's veto: the hash of its veto key, so its words are not kept to match."""
    return _sha(veto_key(text).encode("utf-8"))


def veto_forgotten(texts: list, quotes: list, now: str) -> None:
    """Veto forgotten lessons by hash, and take their words out of the vetoes already kept."""
    with files.Lock("render.lock", LOCK_WAIT_SECONDS, "forget"):
        vetoes = _load_state(paths.vetoed_path(), "lessons", list)
        kept = []
        for v in vetoes:
            text = v.get("text") or ""
            if text and (forget.scrub(text, quotes) != text or text in texts):
                kept.append({"sha256": forgotten_key(text), "id": v.get("id"), "vetoed": v.get("vetoed")})
            else:
                kept.append(v)
        have = {v.get("sha256") for v in kept}
        for text in texts:
            if text and forgotten_key(text) not in have:
                kept.append({"sha256": forgotten_key(text), "forgotten": now})
        if kept != vetoes:
            files.write_own(paths.vetoed_path(), _dump({"version": STATE_VERSION, "lessons": kept}))
        written = _load_state(paths.written_path(), "files", dict)
        sections = _load_state(paths.written_path(), "sections", dict)
        changed = False
        for rec in written.values():  # files the person edited (left in place) keep a record
            text = rec.get("text") or ""
            if text and (text in texts or forget.scrub(text, quotes) != text):
                rec["text"], changed = forget.scrub(text, quotes + list(texts)), True
        if changed:
            files.write_own(paths.written_path(), _dump({"version": STATE_VERSION, "files": written,
                                                            "sections": sections}))


def _usable_cwd(cwd) -> bool:
    return bool(cwd) and os.path.isabs(cwd)


def project_folders(store: Store) -> list:
    """Every project's memory folder: those that exist, and those of the projects whose
    transcripts Claude Code still keeps (for lessons with no cwd)."""
    projects = paths.projects_dir()
    found = {p for p in projects.glob("*/memory") if p.is_dir()} if projects.is_dir() else set()
    for cwd in store.session_cwds():
        if _usable_cwd(cwd) and (projects / paths.project_slug(os.path.realpath(cwd))).is_dir():
            found.add(paths.memory_dir_for(cwd))
    return sorted(found)


def _folder_ok(folder: Path) -> bool:
    """A memory folder render may write: projects/<one name>/memory, also once symlinks resolve."""
    projects = Path(os.path.realpath(paths.projects_dir()))
    real = Path(os.path.realpath(folder))
    return real.name == "memory" and real.parent.parent == projects and folder.parent.parent == paths.projects_dir()


def vetoed_wording(text: str) -> bool:
    """Whether the person vetoed a lesson worded like text, so no new wording (the model's) brings it back.

    An unreadable vetoed.json counts as a veto: render stops on it and says why.
    """
    try:
        vetoes = _load_state(paths.vetoed_path(), "lessons", list)
    except RenderError:
        return True
    key = veto_key(text)
    return any((v.get("key") or veto_key(v.get("text", ""))) == key for v in vetoes if isinstance(v, dict))


def render(store: Store, now: str | None = None, max_lines=None, before_replace=None) -> dict:
    """Write every live lesson into Claude Code's memory folders and lessons.jsonl.

    Returns {"written", "removed", "left", "vetoed", "warnings", "folders", "lessons",
    "lessons_jsonl"}: files written and removed this time, edited files left as they are,
    lessons the person vetoed since the last render ({"id", "text"}), and plain-English
    warnings (a MEMORY.md whose section Claude Code does not load, damaged markers, ...).
    """
    now = iso(now)
    limit = index_lines_limit(max_lines)
    result = {"written": [], "removed": [], "left": [], "vetoed": [], "warnings": [], "folders": [],
              "lessons": 0, "lessons_jsonl": str(paths.lessons_path())}
    with files.Lock("render.lock", LOCK_WAIT_SECONDS, "render"):
        written = _load_state(paths.written_path(), "files", dict)
        sections = _load_state(paths.written_path(), "sections", dict)
        vetoes = _load_state(paths.vetoed_path(), "lessons", list)
        lessons = {l["id"]: l for l in store.all_lessons()}
        vetoes_before = len(vetoes)

        optout = forget.OptOut()
        files.sweep_own_temps()  # what a render or sleep killed mid-write left behind
        if paths.projects_dir().is_dir():
            for folder in paths.projects_dir().glob("*/memory"):
                if _folder_ok(folder):
                    files.sweep_memory_temps(folder)
        # Where each lesson belongs now: a file gone from a folder its lesson no longer belongs
        # in was removed by a render that was stopped before it said so, not by the person.
        meant = {(folder, l["id"]) for folder, ls in _place(
            store, [l for l in lessons.values() if not l["archived"] and not l["vetoed"]], limit,
            {"warnings": []}, optout).items() for l in ls}
        _collect_vetoes(store, lessons, written, vetoes, now, result, meant)
        if len(vetoes) != vetoes_before:  # before written.json forgets the deleted files
            files.write_own(paths.vetoed_path(), _dump({"version": STATE_VERSION, "lessons": vetoes}))
        live = [l for l in lessons.values() if not l["archived"] and not l["vetoed"]]
        sources = store.episodes_by_id((i for l in live for i in l["sources"]),  # what the files say of them
                                       ("id", "session_id", "kind", "at", "title", "gist", "facts"))
        placed = _place(store, live, limit, result, optout)

        projects = paths.projects_dir()
        visit = set(placed)
        for name in list(written) + list(sections):
            folder = Path(name).parent
            if folder.parent.parent == projects:
                visit.add(folder)
        for folder in sorted(visit):
            if not _folder_ok(folder):
                result["warnings"].append(f"skipped {folder}: it is not a memory folder inside {projects} "
                                          f"(a symbolic link elsewhere?); nothing was written there")
                continue
            try:
                _render_folder(folder, placed.get(folder, []), sources, written, sections, now, before_replace,
                               result)
            except OSError as e:  # one unwritable folder does not stop the others
                result["warnings"].append(f"could not write in {folder}: {e.strerror or e}; check its permissions")
        result["folders"] = [str(f) for f in sorted(placed)]
        result["lessons"] = len(live)

        predictions = store.predictions_by_lesson()
        records = [lesson_record(l, [sources[i] for i in l["sources"] if i in sources],
                                 predictions.get(l["id"], [])) for l in sorted(live, key=lambda l: l["id"])]
        jsonl = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        if files.read(paths.lessons_path()) != jsonl:
            files.write_own(paths.lessons_path(), jsonl)
        state = _dump({"version": STATE_VERSION, "files": written, "sections": sections})
        if files.read(paths.written_path()) != state:
            files.write_own(paths.written_path(), state)
    return result


def _record(lesson: dict, data: bytes, now: str) -> dict:
    return {"lesson": lesson["id"], "created": lesson["created"], "text": redact(lesson["text"]),
            "sha256": _sha(data), "written": now}


def _collect_vetoes(store: Store, lessons: dict, written: dict, vetoes: list, now: str, result: dict,
                    meant: set) -> None:
    """A lesson file openmemory wrote that is gone, from a folder that is still there, is the
    person's veto; vetoes (by wording) then apply to every lesson, old or rebuilt."""
    keys = {v.get("key") or veto_key(v.get("text", "")) for v in vetoes if not v.get("sha256")}
    hashed = {v["sha256"] for v in vetoes if v.get("sha256")}  # forgotten lessons: no words kept
    projects = paths.projects_dir()
    vetoed_ids = set()
    for name, rec in sorted(written.items()):
        path = Path(name)
        if path.parent.parent.parent != projects or os.path.lexists(path):
            continue  # another config folder's file is not ours to judge here
        del written[name]
        if not path.parent.is_dir():
            continue  # the whole memory folder went: a reset, not a veto of each lesson
        lesson = lessons.get(rec.get("lesson"))
        if lesson and lesson["created"] != rec.get("created"):
            lesson = None  # the id now belongs to another lesson (a rebuilt database)
        if lesson and (path.parent, lesson["id"]) not in meant:
            continue  # not meant to be there any more: removed by a render that was stopped
        for text in {rec.get("text") or "", lesson["text"] if lesson else ""} - {""}:
            key = veto_key(text)
            if key not in keys:
                keys.add(key)
                vetoes.append({"id": rec.get("lesson"), "text": text, "key": key, "file": name,
                               "cwd": lesson["cwd"] if lesson else None, "vetoed": now})
        if lesson and not lesson["vetoed"]:
            vetoed_ids.add(lesson["id"])
            lesson["vetoed"] = 1
            result["vetoed"].append({"id": lesson["id"], "text": lesson["text"]})
    for lesson in lessons.values():  # survives re-ingest, re-consolidation and rebuilt databases
        if not lesson["vetoed"] and (veto_key(lesson["text"]) in keys or forgotten_key(lesson["text"]) in hashed):
            lesson["vetoed"] = 1
            vetoed_ids.add(lesson["id"])
    if vetoed_ids:
        store.veto_lessons(sorted(vetoed_ids))


def _place(store: Store, live: list, limit: int, result: dict, optout: forget.OptOut) -> dict:
    """{memory folder: its lessons, strongest first, at most limit}; none in a project kept out."""
    everywhere = None
    folders_of = {}
    placed = {}
    cwds = store.session_cwds()
    for lesson in live:
        cwd = lesson["cwd"]
        if cwd and not _usable_cwd(cwd):
            result["warnings"].append(f"lesson {lesson['id']} has a working folder that is not an absolute "
                                      f"path ({cwd!r}); it was not written into any memory folder")
            continue
        if cwd:
            if cwd not in folders_of:
                folders_of[cwd] = [] if optout.reason(cwd) else [paths.memory_dir_for(cwd)]
            folders = folders_of[cwd]
        else:
            if everywhere is None:
                everywhere = project_folders(store)
            folders = everywhere
        for folder in folders:
            if not optout.memory_folder(folder, cwds):
                placed.setdefault(folder, []).append(lesson)
    for lessons in placed.values():  # strongest first; ties: seen more, updated later, older id
        lessons.sort(key=lambda l: l["id"])
        lessons.sort(key=lambda l: (l["strength"], l["seen"], l["updated"] or ""), reverse=True)
        del lessons[limit:]
    return placed


def _render_folder(folder: Path, lessons: list, sources: dict, written: dict, sections: dict, now: str,
                   before_replace, result: dict) -> None:
    """Lesson files and the MEMORY.md section of one memory folder."""
    if lessons and not folder.is_dir():
        files.make_memory_folder(folder)
    index, kept = [], set()
    for lesson in lessons:
        path = folder / file_name(lesson)
        srcs = [sources[i] for i in lesson["sources"] if i in sources]
        if _write_lesson(path, lesson, topic_file(lesson, srcs).encode("utf-8"), written, now, before_replace,
                         result):
            index.append((lesson["id"], index_line(lesson, srcs)))
            kept.add(str(path))
    for name, rec in sorted(written.items()):  # ours, in this folder, no longer wanted here
        path = Path(name)
        if path.parent != folder or name in kept:
            continue
        current = files.read(path)
        if current is None:
            del written[name]
        elif _sha(current) == rec["sha256"] and files.remove_memory_file_if_unchanged(path, current):
            del written[name]
            result["removed"].append(name)
        elif name not in result["left"]:
            result["left"].append(name)  # the person's version now; its record stays (a deletion is a veto)
    _write_index(folder / "MEMORY.md", index, sections, now, before_replace, result)


def _write_lesson(path: Path, lesson: dict, data: bytes, written: dict, now: str, before_replace,
                  result: dict) -> bool:
    """Write or refresh one lesson file unless the person edited it; False if it is not ours."""
    name = str(path)
    rec = written.get(name)
    current = files.read(path)
    if current is not None and rec is None:
        if current != data:
            result["warnings"].append(f"{path} was not written by openmemory; it was left as it is and "
                                      f"lesson {lesson['id']} is not indexed there")
            return False
        written[name] = _record(lesson, data, now)  # exactly what we would write: adopt it
        return True
    if current == data:  # also after a render stopped between writing it and saying so
        if rec.get("lesson") != lesson["id"] or rec.get("created") != lesson["created"] \
                or rec.get("sha256") != _sha(data):
            written[name] = _record(lesson, data, now)
        return True
    if current is not None and _sha(current) != rec["sha256"]:
        result["left"].append(name)  # edited by the person (or Claude Code): theirs
        return True
    if files.replace_memory_file_if_unchanged(path, current, data, before_replace):
        written[name] = _record(lesson, data, now)
        result["written"].append(name)
        return True
    if current is None:
        result["warnings"].append(f"{path} appeared while openmemory was writing it; it was left as it is")
        return False
    result["left"].append(name)  # changed while we wrote: the newer content stays
    return True


def _write_index(md: Path, index: list, sections: dict, now: str, before_replace, result: dict) -> None:
    """Rewrite the section of MEMORY.md, retrying when someone writes the file meanwhile."""
    lines = [line for _, line in index]
    for _ in range(WRITE_ATTEMPTS):
        current = files.read(md)
        text = None if current is None else current.decode("utf-8", "surrogateescape")
        if not lines and (text is None or BEGIN not in text and END not in text):
            sections.pop(str(md), None)
            return  # nothing to say and no section to empty
        try:
            new, how = merge(text, lines)
        except RenderError as e:
            result["warnings"].append(f"left {md} as it is: {e}; keep exactly one `{BEGIN}` line and one "
                                      f"`{END}` line after it, or remove both")
            return
        data = new.encode("utf-8", "surrogateescape")
        if data == current or files.replace_memory_file_if_unchanged(md, current, data, before_replace):
            break
    else:
        result["warnings"].append(f"{md} kept changing while openmemory wrote it ({WRITE_ATTEMPTS} tries); "
                                  f"its section was not updated this time")
        return
    record = {"lessons": [i for i, _ in index], "sha256": _sha(section_text(lines).encode("utf-8"))}
    if data != current:
        result["written"].append(str(md))
    if data != current or {k: sections.get(str(md), {}).get(k) for k in record} != record:
        sections[str(md)] = dict(record, written=now)
    ours, mine = unseen(new)
    if ours:
        result["warnings"].append(
            f"{ours} line(s) of openmemory's section of {md} fall past what Claude Code loads (the first "
            f"{LOAD_LINES} lines or {LOAD_BYTES:,} bytes, HTML comments aside): the lessons there are not "
            f"seen; move the section up or shorten the file")
    if how == "inserted" and mine:
        result["warnings"].append(
            f"openmemory's section was put at the top of {md}, which is long: {mine} of your own line(s) "
            f"now fall past what Claude Code loads (the first {LOAD_LINES} lines); shorten the file")


def summary(result: dict) -> str:
    """One line for a person."""
    written = len(result["written"])
    parts = [f"{result['lessons']} live lesson{'' if result['lessons'] == 1 else 's'} in "
             f"{len(result['folders'])} memory folder{'' if len(result['folders']) == 1 else 's'}",
             f"{written} file{'' if written == 1 else 's'} written"]
    if result["removed"]:
        parts.append(f"{len(result['removed'])} removed")
    if result["left"]:
        parts.append(f"{len(result['left'])} edited by you and left as they are")
    if result["vetoed"]:
        parts.append(f"{len(result['vetoed'])} vetoed (file deleted)")
    return "; ".join(parts)
