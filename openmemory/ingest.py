"""Ingest: Claude Code's transcripts into the store, each as its session's episodes (episodes.py).

Incremental: a file whose mtime and size are unchanged is only stat'ed; a changed file
is read again and replaces what it produced before (episodes keep their identity).
"""
import hashlib
import json
import os
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from . import forget, paths, transcripts, workers
from .batch import Batch
from .clock import iso, iso_or_none
from .episodes import episodes_of
from .errors import OpenMemoryError
from .optout import OptOut
from .store import Store, prepare

# A transaction (batch.Batch) is also closed before reading a transcript over BATCH_ALONE_BYTES,
# so a hook's write behind it waits well under its busy timeout.
BATCH_ALONE_BYTES = 1 << 20
PARALLEL_BYTES = 4 << 20    # changed transcripts worth starting worker processes for


@dataclass
class Report:
    """What one ingest did, for the CLI and the hook's log."""
    files: int = 0              # transcripts considered
    read: int = 0               # read and stored (new or changed)
    unchanged: int = 0
    failed: list = field(default_factory=list)   # (path, reason): unreadable files
    added: dict = field(default_factory=dict)    # kind -> episodes added
    updated: int = 0
    removed: int = 0
    skipped_lines: int = 0
    opted_out: int = 0          # sessions in a folder kept out (.openmemory-ignore): not read
    not_transcripts: list = field(default_factory=list)  # files skipped whole: not Claude Code transcripts

    def line(self) -> str:
        """One line for a person."""
        kinds = ", ".join(f"{n} {k}{'' if n == 1 else 's'}" for k, n in sorted(self.added.items()) if n)
        parts = [f"read {self.read} of {self.files} transcript{'' if self.files == 1 else 's'}"
                 f" ({self.unchanged} unchanged)",
                 f"new episodes: {kinds or 'none'}"]
        if self.updated or self.removed:
            parts.append(f"{self.updated} updated, {self.removed} removed")
        if self.skipped_lines:
            parts.append(f"{self.skipped_lines} malformed line{'' if self.skipped_lines == 1 else 's'} skipped")
        if self.opted_out:
            parts.append(f"{self.opted_out} kept out by .openmemory-ignore")
        if self.failed:
            parts.append(f"{len(self.failed)} unreadable")
        if self.not_transcripts:
            n = len(self.not_transcripts)
            parts.append(f"{n} file{'' if n == 1 else 's'} skipped (not a transcript)")
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {"files": self.files, "read": self.read, "unchanged": self.unchanged,
                "added": dict(self.added), "updated": self.updated, "removed": self.removed,
                "skipped_lines": self.skipped_lines, "not_transcripts": list(self.not_transcripts),
                "opted_out": self.opted_out,
                "failed": [{"path": p, "reason": r} for p, r in self.failed]}


def discover(roots=None) -> list:
    """Every top-level transcript's path: projects/<project>/*.jsonl (subagent folders are
    skipped), in the order of their paths' parts.

    A root may be the projects folder, one project folder, or a transcript file. Folders are
    listed with os.scandir (a heavy user has tens of thousands of transcripts: pathlib's glob
    and sort took a second of a first ingest before any transcript was read).
    """
    found = {}  # path -> its parts, to sort by (as pathlib orders paths)
    for root in (roots or [paths.projects_dir()]):
        root = Path(root).expanduser()
        if root.is_file():
            found[str(root)] = root.parts
            continue
        here = _entries(str(root), ".jsonl")
        if here:        # a project folder
            folders = [(_child(str(root), ""), root.parts, here)]
        elif root.is_dir():
            folders = [(_child(str(root), e.name), root.parts + (e.name,), _entries(e.path, ".jsonl"))
                       for e in _entries(str(root)) if _is(e.is_dir)]
        elif roots:
            raise OpenMemoryError(f"no transcript or folder at {root}; pass a .jsonl file or a folder "
                                  f"of Claude Code projects")
        else:
            folders = []
        for prefix, parts, entries in folders:
            for e in entries:
                if _is(e.is_file):
                    found[prefix + e.name] = parts + (e.name,)
    return sorted(found, key=found.__getitem__)


def _entries(folder: str, suffix: str = "") -> list:
    """The entries of a folder whose names end with suffix; none when it cannot be listed."""
    try:
        with os.scandir(folder) as it:
            return [e for e in it if e.name.endswith(suffix)]
    except OSError:
        return []


def _child(folder: str, name: str) -> str:
    """The prefix of the paths in folder/name, spelled as pathlib spells them ('.' is left out)."""
    path = folder if not name else name if folder == "." else os.path.join(folder, name)
    return "" if path == "." else path.rstrip("/") + "/"


def _is(check) -> bool:
    """A DirEntry's is_dir or is_file (symlinks followed), False when it cannot be told."""
    try:
        return check()
    except OSError:
        return False


def ingest(store: Store, roots=None, progress=None, force: bool = False, now: str | None = None) -> Report:
    """Ingest every new or changed transcript under roots (default: Claude Code's projects).

    now: when this happens (new episodes' `created`, the clock decay starts from); default now."""
    files = discover(roots)
    known = store.file_index()
    known.update(not_transcripts(store))  # skipped whole once, then silent until they change
    report = Report(files=len(files))
    optout = OptOut()
    stats = []
    for path in files:
        try:
            stats.append(os.stat(path))
        except OSError as e:
            stats.append(e)
    changed = [(p, st.st_size) for p, st in zip(files, stats) if not isinstance(st, OSError)
               and (force or known.get(p) != (st.st_mtime_ns, st.st_size))]
    # Reading and preparing in worker processes while this one stores: for a bulk ingest only
    # (a hook's one transcript is read here, without starting workers).
    processes = min(workers.jobs(), len(changed)) if sum(size for _, size in changed) >= PARALLEL_BYTES else 0
    prepared = workers.ordered(partial(read_ready, optout=optout), [p for p, _ in changed],
                               [size for _, size in changed], processes) if processes >= 2 else None
    try:
        with store.bulk_writes() if prepared else nullcontext(), Batch(store) as batch:
            for n, (path, st) in enumerate(zip(files, stats), 1):
                if progress:
                    progress(n, len(files), path)
                if isinstance(st, OSError):
                    report.failed.append((path, st.strerror or str(st)))
                elif not force and known.get(path) == (st.st_mtime_ns, st.st_size):
                    report.unchanged += 1
                else:
                    if prepared and st.st_size > BATCH_ALONE_BYTES:
                        batch.commit()  # never hold the database while a large transcript is read
                    ingest_file(store, path, report, force=force, now=now, optout=optout, batch=batch,
                                ready=next(prepared) if prepared else None)
    finally:
        if prepared:
            prepared.close()    # stops the workers, also after an error or Ctrl-C
    with store.transaction():
        store.set_state("last_ingest", iso())
    return report


def ingest_file(store: Store, path, report: Report | None = None, force: bool = False,
                now: str | None = None, optout: OptOut | None = None, batch: "Batch | None" = None,
                ready: "Ready | None" = None) -> Report:
    """Read one transcript and store its session and surprises, unless it is unchanged.

    The transcript is held under an advisory lock while it is read and stored (until its
    transaction commits), so two ingests of one growing file (the SessionEnd hook's, a detached
    one, cron's) take turns, and the later one sees the newer file instead of committing an
    older snapshot over it. ready: what a worker read and prepared (read_ready); used when the
    file is still the one it read, else the file is read here.
    """
    report = report or Report(files=1)
    if batch is None:
        with Batch(store) as own:
            return ingest_file(store, path, report, force, now, optout, own, ready)
    path = os.fspath(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        report.failed.append((str(path), e.strerror or str(e)))
        return report
    try:
        batch.lock(f)
        st = os.fstat(f.fileno())
        if not force and store.file_state(str(path)) == (st.st_mtime_ns, st.st_size):
            report.unchanged += 1
            f.close()
            return report
        if ready is not None and not _still_ready(store, path, ready, st, batch.lists()[0]):
            ready = None
        # Kept out by the person: only the first records are read, to learn the folder
        # (should the folder show up only later in the file, nothing is stored either).
        optout = optout or OptOut()
        session = None
        if ready is None and not optout.reason(transcripts.working_folder(f)):
            if st.st_size > BATCH_ALONE_BYTES:
                batch.commit()  # never hold the database while reading a large transcript
            f.seek(0)
            session = transcripts.parse_lines(f, str(path))
    except OSError as e:
        f.close()
        report.failed.append((str(path), e.strerror or str(e)))
        return report
    except BaseException:
        f.close()
        raise
    batch.hold(f)   # released at the commit; an error while storing rolls the whole batch back
    with batch.transaction():
        kept_out = ready.opted_out if ready is not None else session is None or bool(optout.reason(session.cwd))
        if kept_out:
            report.opted_out += 1
            store.note_opted_out(_path_hash(path))
        elif ready is not None:
            _store_ready(store, path, ready, st, report, now, batch.lists()[1])
        else:
            _store_session(store, path, session, st, report, now)
    batch.full()
    return report


@dataclass
class Ready:
    """A transcript as a worker read and prepared it (read_ready), for the store to write."""
    stat: tuple                 # (mtime_ns, size) of the file it read
    opted_out: bool = False
    not_transcript: bool = False
    session_id: str = ""        # the transcript's own session id
    row: dict = field(default_factory=dict)         # the session row's fields from the transcript
    episodes: list = field(default_factory=list)    # store.prepare(episodes_of(session))
    tombstones: list = field(default_factory=list)  # of the episodes as made (forget.tombstones)


def read_ready(path: str, optout: OptOut) -> "Ready | None":
    """Read and prepare one transcript without the store: a worker's part of a bulk ingest.

    None when anything goes wrong: the writer then reads the file itself and meets the error
    as a serial ingest does."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            stat = (st.st_mtime_ns, st.st_size)
            session = transcripts.parse_lines(f, path, kept_out=optout.reason)  # stops at a kept-out folder
        if session.kept_out or optout.reason(session.cwd):
            return Ready(stat, opted_out=True)
        if session.not_transcript:
            return Ready(stat, not_transcript=True)
        episodes = episodes_of(session, session.id)
        return Ready(stat, session_id=session.id, row=_row_of(session), episodes=prepare(episodes),
                     tombstones=[h for ep in episodes for h in forget.tombstones(ep, session.id)])
    except Exception:  # noqa: BLE001 - any failure is met again, and reported, by the writer
        return None


def _still_ready(store: Store, path: str, ready: Ready, st, forgets: bool) -> bool:
    """Whether a worker's reading stands: the file is the one it read, its session keeps its
    own id here, and none of its episodes was forgotten (those cases are read here).
    forgets: whether anything is forgotten at all."""
    if ready.stat != (st.st_mtime_ns, st.st_size):
        return False
    if ready.opted_out or ready.not_transcript:
        return True
    return (store.session_id_for(ready.session_id, str(path)) == ready.session_id
            and not (forgets and store.forgotten_among(ready.tombstones)))


def _store_ready(store: Store, path: str, ready: Ready, st, report: Report, now: str | None,
                 kept_out: bool) -> None:
    """kept_out: whether any transcript is marked kept out (this one may be, from before)."""
    if ready.not_transcript:
        _note_not_transcript(store, path, st, report)
        return
    report.read += 1
    report.skipped_lines += ready.row["skipped"]
    if kept_out:
        store.note_opted_out(_path_hash(path), out=False)
    row = dict(ready.row, id=ready.session_id, path=str(path), mtime_ns=st.st_mtime_ns, size=st.st_size)
    _count(report, store.replace_session(row, ready.episodes, now=now, prepared=True))


def _path_hash(path) -> str:
    """A transcript's path as a hash: counts a kept-out session without naming it."""
    return hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:32]


NOT_TRANSCRIPTS = "not_transcripts"  # state: {path: [mtime_ns, size]} of files skipped whole


def not_transcripts(store: Store) -> dict:
    """{path: (mtime_ns, size)} of the files ingest skipped whole as not Claude Code transcripts."""
    try:
        found = json.loads(store.get_state(NOT_TRANSCRIPTS) or "{}")
    except ValueError:
        return {}
    return {p: tuple(v) for p, v in found.items() if isinstance(v, list) and len(v) == 2}


def _note_not_transcript(store: Store, path: str, st, report: Report) -> None:
    report.not_transcripts.append(str(path))
    skipped = {p: list(v) for p, v in not_transcripts(store).items()}
    skipped[str(path)] = [st.st_mtime_ns, st.st_size]
    with store.transaction():
        store.set_state(NOT_TRANSCRIPTS, json.dumps(skipped, sort_keys=True))


def _row_of(session) -> dict:
    """The session row's fields that come from the transcript itself."""
    return {"cwd": session.cwd or None, "title": session.title, "started": iso_or_none(session.started),
            "ended": iso_or_none(session.ended), "version": session.version, "turns": len(session.turns),
            "skipped": session.skipped}


def _count(report: Report, counts: dict) -> None:
    for kind, n in counts["added"].items():
        report.added[kind] = report.added.get(kind, 0) + n
    report.updated += counts["updated"]
    report.removed += counts["removed"]


def _store_session(store: Store, path: str, session, st, report: Report, now: str | None = None) -> None:
    if session.not_transcript:
        _note_not_transcript(store, path, st, report)
        return
    report.read += 1
    report.skipped_lines += session.skipped
    store.note_opted_out(_path_hash(path), out=False)
    sid = store.session_id_for(session.id, str(path))
    episodes = episodes_of(session, sid)
    row = dict(_row_of(session), id=sid, path=str(path), mtime_ns=st.st_mtime_ns, size=st.st_size)
    # What the person made openmemory forget stays forgotten, and its words out of the rest.
    forgotten = store.forgotten_among(h for ep in episodes for h in forget.tombstones(ep, sid))
    if forgotten:
        session_gone = any(ep["kind"] == "session" and forget.is_forgotten(ep, forgotten, sid) for ep in episodes)
        episodes, quotes = forget.without_forgotten(episodes, forgotten, sid)
        row["title"] = "" if session_gone else forget.scrub(row["title"], quotes)
    _count(report, store.replace_session(row, episodes, now=now))
