"""Ingest: the agents' logs into the store, each as its session's episodes (episodes.py):
Claude Code's transcripts, Codex CLI's rollouts and Gemini CLI's chats, each read by its own
module (transcripts, codex, gemini) into the same Session.

Incremental: a file whose mtime and size are unchanged is only stat'ed; a changed file
is read again and replaces what it produced before (episodes keep their identity). Many
transcripts are stored to a transaction (Batch), each locked until it commits; a bulk
ingest reads and prepares them in forked worker processes while this one, the store's one
writer, stores them in order (worker_results).
"""
import errno
import fcntl
import gc
import json
import os
import pickle
import resource
import select
import signal
import struct
import time
from collections import deque
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import NamedTuple

from . import forget, paths, redact, settings, transcripts
from .clock import iso, iso_or_none, parse_time
from .episodes import episodes_of
from .errors import UsageError
from .passages import passages_of
from .shorten import wellformed
from .store import Store, prepare, prepare_passages

# A transaction (Batch) is also closed before reading a transcript over BATCH_ALONE_BYTES,
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
    passages: int = 0           # passages added (what was said, passages.py)
    skipped_lines: int = 0
    opted_out: int = 0          # sessions in a folder kept out (.openmemory-ignore): not read
    moved: int = 0              # Codex rollouts archived or unarchived: their sessions' rows followed them
    not_transcripts: list = field(default_factory=list)  # files skipped whole: not Claude Code transcripts

    def line(self) -> str:
        """One line for a person."""
        kinds = ", ".join(f"{n} {k}{'' if n == 1 else 's'}" for k, n in sorted(self.added.items()) if n)
        parts = [f"read {self.read} of {self.files} transcript{'' if self.files == 1 else 's'}"
                 f" ({self.unchanged} unchanged)",
                 f"new episodes: {kinds or 'none'}"]
        if self.passages:
            parts.append(f"{self.passages} new passage{'' if self.passages == 1 else 's'}")
        if self.updated or self.removed:
            parts.append(f"{self.updated} updated, {self.removed} removed")
        if self.skipped_lines:
            parts.append(f"{self.skipped_lines} malformed line{'' if self.skipped_lines == 1 else 's'} skipped")
        if self.moved:
            parts.append(f"{self.moved} moved by Codex (archived or unarchived: the same session{'' if self.moved == 1 else 's'})")
        if self.opted_out:
            parts.append(f"{self.opted_out} kept out (.openmemory-ignore or the ignore list)")
        if self.failed:
            parts.append(f"{len(self.failed)} unreadable")
        if self.not_transcripts:
            n = len(self.not_transcripts)
            parts.append(f"{n} file{'' if n == 1 else 's'} skipped (not a transcript)")
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {"files": self.files, "read": self.read, "unchanged": self.unchanged,
                "added": dict(self.added), "updated": self.updated, "removed": self.removed,
                "passages": self.passages,
                "skipped_lines": self.skipped_lines, "not_transcripts": list(self.not_transcripts),
                "opted_out": self.opted_out, "moved": self.moved,
                "failed": [{"path": p, "reason": r} for p, r in self.failed]}


def agent_of(path) -> str:
    """Whose log a file is, by its name: codex (rollout-*.jsonl), gemini (chats/session-*.json[l]),
    else claude-code. Told without importing the other readers: a hook's ingest of one Claude
    Code transcript loads none of them."""
    path = os.fspath(path)
    name = os.path.basename(path)
    if name.startswith("rollout-") and name.endswith(".jsonl"):
        return "codex"
    if name.startswith("session-") and name.endswith((".jsonl", ".json")) and \
            os.path.basename(os.path.dirname(path)) == "chats":
        return "gemini"
    return "claude-code"


def reader_for(path):
    """The module that reads a log: Codex's rollouts, Gemini's chats, else Claude Code's transcripts."""
    agent = agent_of(path)
    if agent == "codex":
        from . import codex
        return codex
    if agent == "gemini":
        from . import gemini
        return gemini
    return transcripts


def log_kind(path) -> str:
    """What a log is, in a person's words: a Claude Code transcript, a Codex rollout, a Gemini chat."""
    return {"codex": "Codex rollout", "gemini": "Gemini chat"}.get(agent_of(path), "Claude Code transcript")


def _folder_of(reader, f, path: str) -> str:
    """A log's working folder from its first records (a Gemini chat's from beside it)."""
    return reader.working_folder(f) if reader is transcripts or agent_of(path) != "gemini" else \
        reader.working_folder(f, path)


def _read(reader, f, path: str, kept_out=None):
    """A log read into its Session; another agent's with its subagents' logs (their failures are its)."""
    session = reader.parse_lines(f, path, kept_out=kept_out)
    if not session.kept_out and not session.not_transcript:
        reader.read_subagents(session)
    return session


def default_roots() -> list:
    """Where each agent keeps its logs: Claude Code's projects, Codex's sessions and archived
    sessions, Gemini's tmp."""
    return [paths.projects_dir(), paths.codex_sessions_dir(), paths.codex_archived_dir(), paths.gemini_chats_root()]


def codex_logs(root: str) -> list:
    """Codex's rollouts under its sessions folder: YYYY/MM/DD/rollout-*.jsonl (sorted)."""
    found = []
    for year in _entries(root):
        for month in _entries(year.path) if _is(year.is_dir) else ():
            for day in _entries(month.path) if _is(month.is_dir) else ():
                found += [e.path for e in _entries(day.path, ".jsonl")
                          if agent_of(e.name) == "codex" and _is(e.is_file)] if _is(day.is_dir) else []
    return sorted(found)


def codex_archived_logs(root: str) -> list:
    """The rollouts of the sessions the person archived in Codex: archived_sessions/rollout-*.jsonl
    (sorted; flat, as `codex archive` moves them)."""
    return sorted(e.path for e in _entries(root, ".jsonl") if agent_of(e.name) == "codex" and _is(e.is_file))


def gemini_logs(root: str) -> list:
    """Gemini's chats under its tmp folder: <project>/chats/session-*.jsonl, and a legacy .json
    only where no .jsonl of the same name replaced it (0.39 on copies it and goes on there)."""
    found = []
    for project in _entries(root):
        chats = os.path.join(project.path, "chats")
        names = {e.name for e in _entries(chats) if agent_of(os.path.join(chats, e.name)) == "gemini"
                 and _is(e.is_file)}
        found += [os.path.join(chats, n) for n in names if not (n.endswith(".json") and n + "l" in names)]
    return sorted(found)


def discover(roots=None) -> list:
    """Every top-level transcript's path: projects/<project>/*.jsonl (subagent folders are
    skipped), in the order of their paths' parts.

    A root may be the projects folder, one project folder, or a transcript file. Folders are
    listed with os.scandir (a heavy user has tens of thousands of transcripts: pathlib's glob
    and sort took a second of a first ingest before any transcript was read).
    """
    found = {}  # path -> its parts, to sort by (as pathlib orders paths)
    others = []  # the other agents' logs, after Claude Code's
    for root in (roots or default_roots()):
        root = Path(root).expanduser()
        if root.is_file():
            found[str(root)] = root.parts
            continue
        if root == paths.codex_sessions_dir() or (roots and root.name == "sessions" and any(
                e.name.isdigit() and len(e.name) == 4 for e in _entries(str(root)))):   # sessions/YYYY/
            others += codex_logs(str(root))
            continue
        if root == paths.codex_archived_dir() or (roots and root.name == "archived_sessions"):
            others += codex_archived_logs(str(root))
            continue
        if root == paths.gemini_chats_root() or (roots and root.name == "tmp" and root.parent.name == ".gemini"):
            others += gemini_logs(str(root))
            continue
        here = _entries(str(root), ".jsonl")
        if here:        # a project folder
            folders = [(_child(str(root), ""), root.parts, here)]
        elif root.is_dir():
            folders = [(_child(str(root), e.name), root.parts + (e.name,), _entries(e.path, ".jsonl"))
                       for e in _entries(str(root)) if _is(e.is_dir)]
        elif roots:
            raise UsageError(f"no transcript or folder at {root}; pass a .jsonl file or a folder "
                                  f"of Claude Code projects, Codex's sessions or Gemini's tmp")
        else:
            folders = []
        for prefix, parts, entries in folders:
            for e in entries:
                if _is(e.is_file):
                    found[prefix + e.name] = parts + (e.name,)
    return sorted(found, key=found.__getitem__) + [p for p in dict.fromkeys(others) if p not in found]


def waiting(store: Store, after: str | None) -> bool:
    """Whether a transcript written after `after` (an ISO time; None: ever) is not stored as it is
    now: what the next ingest would read. Stops at the first one found."""
    try:
        since = parse_time(after).timestamp() if after else None
    except ValueError:
        since = None
    known = store.file_index()
    known.update(not_transcripts(store))
    for path in reversed(discover()):   # newest last among Codex's dated folders: look there first
        try:
            st = transcripts.file_stat(path)
        except OSError:
            continue
        if (since is None or st.st_mtime_ns / 1e9 > since) and known.get(path) != (st.st_mtime_ns, st.st_size):
            return True
    return False


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
    optout = forget.OptOut()
    stats = []
    for path in files:
        try:
            if not path.isascii() and path != wellformed(path):    # bytes that are not UTF-8 in its name: no text can name it in the store
                raise OSError(errno.EILSEQ, "its path is not UTF-8 text (rename the folder or file to have it read)")
            stats.append(transcripts.file_stat(path, os.stat(path)))
        except OSError as e:
            stats.append(e)
    changed = [(p, st.st_size) for p, st in zip(files, stats) if not isinstance(st, OSError)
               and (force or known.get(p) != (st.st_mtime_ns, st.st_size))]
    # A Codex thread reverted goes on in a new segment file; what the revert took back is in the
    # files before it, unchanged on disk: they are read again, without it.
    again = _reverted_before(p for p, _ in changed) if not force else set()
    if again:
        changed = [(p, st.st_size) for p, st in zip(files, stats) if not isinstance(st, OSError)
                   and (p in again or known.get(p) != (st.st_mtime_ns, st.st_size))]
    # Codex rollouts archived or unarchived since: their rows follow them (ingest_file), not read by workers.
    moved = {p for p, _ in changed if p not in known and agent_of(p) == "codex" and _codex_held_at(store, p)}
    changed = [(p, size) for p, size in changed if p not in moved]
    # Reading and preparing in worker processes while this one stores: for a bulk ingest only
    # (a hook's one transcript is read here, without starting workers).
    processes = min(worker_processes(), len(changed)) if sum(size for _, size in changed) >= PARALLEL_BYTES else 0
    if processes >= 2:
        redact.ready()   # compiled once, here, before the fork: not again in every worker
    # Whether a judge is on: the settings read once for the whole ingest and handed to the workers
    # (not once per transcript, 12 µs each).
    prepared = worker_results(partial(read_ready, optout=optout, settled=for_judge()), [p for p, _ in changed],
                              [size for _, size in changed], processes) if processes >= 2 else None
    try:
        with store.bulk_writes() if prepared else nullcontext(), Batch(store) as batch:
            for n, (path, st) in enumerate(zip(files, stats), 1):
                if progress:
                    progress(n, len(files), path)
                if isinstance(st, OSError):
                    report.failed.append((path, st.strerror or str(st)))
                elif not force and path not in again and known.get(path) == (st.st_mtime_ns, st.st_size):
                    report.unchanged += 1
                else:
                    if prepared and st.st_size > BATCH_ALONE_BYTES:
                        batch.commit()  # never hold the database while a large transcript is read
                    ingest_file(store, path, report, force=force or path in again, now=now, optout=optout, batch=batch,
                                ready=next(prepared) if prepared and path not in moved else None)
    finally:
        if prepared:
            prepared.close()    # stops the workers, also after an error or Ctrl-C
    with store.transaction():
        store.set_state("last_ingest", iso(now))    # a replay's (--now) own time, as sleep's last_sleep
    return report


def _reverted_before(changed) -> set:
    """The rollouts of a Codex thread before a segment file among `changed` (a revert started it:
    what it took back from them goes, codex.reverted_from)."""
    segments = [p for p in changed if agent_of(p) == "codex" and "_" in os.path.basename(p)]
    if not segments:
        return set()
    from . import codex
    out = set()
    for path in segments:
        if codex.SEGMENT.match(os.path.basename(path)):
            files = codex.thread_files(path)
            out.update(files[:files.index(path)] if path in files else ())
    return out


def ingest_file(store: Store, path, report: Report | None = None, force: bool = False,
                now: str | None = None, optout: forget.OptOut | None = None, batch: "Batch | None" = None,
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
        st = transcripts.file_stat(path, os.fstat(f.fileno()))
        state = store.file_state(str(path))
        if not force and state == (st.st_mtime_ns, st.st_size):
            report.unchanged += 1
            f.close()
            return report
        held = _codex_held(store, path, f) if state is None and agent_of(path) == "codex" else None
        if held is not None and os.path.lexists(held[0]) and _archived(path):
            report.unchanged += 1   # a copy of a live rollout in archived_sessions: the live one is the session's
            f.close()
            return report
        if held is not None and not force and held[1:] == (st.st_mtime_ns, st.st_size):
            batch.hold(f)   # archived or unarchived, nothing added since: its row follows it, nothing is read
            with batch.transaction():
                report.moved += store.move_session(held[0], path)
            report.unchanged += 1
            batch.full()
            return report
        if ready is not None and not _still_ready(store, path, ready, st, batch.marks().forgets):
            ready = None
        # Kept out by the person: only the first records are read, to learn the folder
        # (should the folder show up only later in the file, nothing is stored either).
        optout = optout or forget.OptOut()
        session = None
        reader = reader_for(path)
        if optout.transcript(path):     # a session forgotten whole (forget --session): not read again
            ready = None
        elif ready is None and not optout.reason(_folder_of(reader, f, path)):
            if st.st_size > BATCH_ALONE_BYTES:
                batch.commit()  # never hold the database while reading a large transcript
            f.seek(0)
            session = _read(reader, f, str(path), kept_out=optout.reason)
    except OSError as e:
        f.close()
        report.failed.append((str(path), e.strerror or str(e)))
        return report
    except BaseException:
        f.close()
        raise
    batch.hold(f)   # released at the commit; an error while storing rolls the whole batch back
    with batch.transaction():
        if agent_of(path) == "gemini" and path.endswith(".jsonl") and os.path.isfile(path[:-1]):
            store.move_session(path[:-1], path)     # Gemini 0.39+ went on in a .jsonl copy of a .json chat
        if held is not None:    # a Codex rollout archived or unarchived, and grown since: its row first
            report.moved += store.move_session(held[0], path)
        kept_out = ready.opted_out if ready is not None else session is None or bool(optout.reason(session.cwd))
        if not kept_out and optout.sessions:    # forgotten whole, read under another name (a copy)
            own = ready.session_id if ready is not None else session.id
            kept_out = bool(optout.session(own, store.session_id_for(own, str(path))))
        if kept_out:
            report.opted_out += 1
            store.note_opted_out(_path_hash(path))
        elif ready is not None:
            _store_ready(store, path, ready, st, report, now, batch.marks().keeps_out)
        else:
            _store_session(store, path, session, st, report, now, batch.marks().forgets)
    batch.full()
    return report


def _archived(path) -> bool:
    from . import codex
    return codex.is_archived(path)


def _codex_held(store: Store, path: str, f):
    """Where a Codex rollout's session is stored when Codex moved its file there from: `codex
    archive` moves sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl into archived_sessions/ under the
    same name (`unarchive` moves it back; codex-cli 0.171.0). Known by the session id its first
    record carries, not by the name: (stored path, mtime_ns, size) when that path is gone, or is
    the same session's rollout on the other side (one archived, the other not); None when its
    session is not stored, or is stored from this file, or from a copy elsewhere (stored apart, as before)."""
    from . import codex
    f.seek(0)
    held = store.session_file(codex.session_id(f, path))
    f.seek(0)
    if held is None or held[0] == path or agent_of(held[0]) != "codex" or paths.same_file(held[0], path):
        return None
    if os.path.lexists(held[0]) and _archived(held[0]) == _archived(path):
        return None
    return held


def _codex_held_at(store: Store, path: str) -> bool:
    """Whether _codex_held finds a rollout's session stored from where Codex moved it (unreadable: no)."""
    try:
        with open(path, "rb") as f:
            return _codex_held(store, path, f) is not None
    except OSError:
        return False


@dataclass
class Ready:
    """A transcript as a worker read and prepared it (read_ready), for the store to write."""
    stat: tuple                 # (mtime_ns, size) of the file it read
    opted_out: bool = False
    not_transcript: bool = False
    session_id: str = ""        # the transcript's own session id
    row: dict = field(default_factory=dict)         # the session row's fields from the transcript
    episodes: list = field(default_factory=list)    # store.prepare(episodes_of(session))
    passages: list = field(default_factory=list)    # store.prepare_passages(passages_of(session))
    tombstones: list = field(default_factory=list)  # of the episodes and passages as made (forget.tombstones)


def read_ready(path: str, optout: forget.OptOut, settled: bool | None = None) -> "Ready | None":
    """Read and prepare one transcript without the store: a worker's part of a bulk ingest.
    settled: for_judge(), as the ingest read it at its start (None: read here).

    None when anything goes wrong: the writer then reads the file itself and meets the error
    as a serial ingest does."""
    try:
        with open(path, "rb") as f:
            st = transcripts.file_stat(path, os.fstat(f.fileno()))
            stat = (st.st_mtime_ns, st.st_size)
            if optout.transcript(path):     # a session forgotten whole: not read
                return Ready(stat, opted_out=True)
            session = _read(reader_for(path), f, path, kept_out=optout.reason)  # stops at a kept-out folder
        if session.kept_out or optout.reason(session.cwd):
            return Ready(stat, opted_out=True)
        if session.not_transcript:
            return Ready(stat, not_transcript=True)
        # Passages first: they redact the agent's words whole, and the cuts episodes_of makes of the
        # same words then read that redaction (redact.secret_safe_clip) instead of searching again.
        passages = passages_of(session)
        episodes = episodes_of(session, session.id, settled=for_judge() if settled is None else settled)
        return Ready(stat, session_id=session.id, row=_row_of(session), episodes=prepare(episodes),
                     passages=prepare_passages(passages),
                     tombstones=[h for ep in episodes + passages for h in forget.tombstones(ep, session.id)])
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
            and not (forgets and store.forgotten_among(
                ready.tombstones + [h for p in ready.passages for h in forget.said_tombstones(p, ready.session_id)])))


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
    _count(report, store.replace_session(row, ready.episodes, now=now, prepared=True, passages=ready.passages))


def for_judge() -> bool:
    """Whether a judge is on (settings): only then are the messages the rules settled as nothing
    kept, as light episodes for it alone (on the benchmark's dense sessions they cost a fifth of a
    first ingest's CPU and a tenth of the database, for nothing when no judge will read them)."""
    if (os.environ.get("OPENMEMORY_LLM_URL") or os.environ.get("OPENMEMORY_LLM_MODEL") or "").strip():
        return True     # a model named for this run (llm.config reads the same two first)
    try:
        return settings.judge().backend != "off"
    except OSError:
        return False


def _path_hash(path) -> str:
    """A transcript's path as a hash: counts a kept-out session without naming it (forget's too)."""
    return forget.transcript_hash(path)


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
    return {"cwd": session.cwd or None, "project": paths.project_here(session.cwd), "title": session.title,
            "started": iso_or_none(session.started),
            "ended": iso_or_none(session.ended), "version": session.version, "turns": len(session.turns),
            "skipped": session.skipped}


def _count(report: Report, counts: dict) -> None:
    for kind, n in counts["added"].items():
        report.added[kind] = report.added.get(kind, 0) + n
    report.updated += counts["updated"]
    report.removed += counts["removed"]
    report.passages += counts.get("passages", 0)


def _store_session(store: Store, path: str, session, st, report: Report, now: str | None = None,
                   forgets: bool = True) -> None:
    """forgets: whether anything is forgotten at all (else no tombstone is looked for)."""
    if session.not_transcript:
        _note_not_transcript(store, path, st, report)
        return
    report.read += 1
    report.skipped_lines += session.skipped
    store.note_opted_out(_path_hash(path), out=False)
    sid = store.session_id_for(session.id, str(path))
    passages = passages_of(session)    # first: episodes_of's cuts read their redactions (read_ready)
    episodes = episodes_of(session, sid, settled=for_judge())
    row = dict(_row_of(session), id=sid, path=str(path), mtime_ns=st.st_mtime_ns, size=st.st_size)
    # What the person made openmemory forget stays forgotten, and its words out of the rest.
    forgotten = set()
    if forgets:
        forgotten = store.forgotten_among([h for ep in episodes + passages for h in forget.tombstones(ep, sid)]
                                          + [h for p in passages for h in forget.said_tombstones(p, sid)])
    if forgotten:
        session_gone = any(ep["kind"] == "session" and forget.is_forgotten(ep, forgotten, sid) for ep in episodes)
        episodes, passages, quotes = forget.without_forgotten(episodes, forgotten, sid, passages)
        row["title"] = "" if session_gone else forget.scrub(row["title"], quotes)
    _count(report, store.replace_session(row, episodes, now=now, passages=passages))


# --------------------------------------------------------------------------------------
# Transcripts stored many to a transaction, each kept locked until its transaction commits.
#
# A bulk ingest stores many transcripts per transaction (a commit per small transcript was a
# tenth of a first ingest's time; 400 rewrite the indexes' pages a quarter as often as 100).
# A transaction is closed after BATCH_SECONDS or BATCH_FILES transcripts (fewer where the
# process may open few files), so a hook's write behind it waits well under its busy timeout.

BATCH_SECONDS = 0.5
BATCH_FILES = 400


def files_held_at_most() -> int:
    """BATCH_FILES, or half the files this process may have open, when that is fewer (macOS
    lets a terminal's process open 256 by default: 400 held, the rest failed to open)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return BATCH_FILES if soft == resource.RLIM_INFINITY else max(1, min(BATCH_FILES, soft // 2))


class Marks(NamedTuple):
    """What a batch asks the store once a transaction (Batch.marks)."""
    forgets: bool       # anything is forgotten: a worker's episodes are checked against the tombstones
    keeps_out: bool     # any transcript is marked kept out: one stored now may be, from before


class Batch:
    """Transcripts stored in one transaction, each kept locked until it commits.

    A kill before the commit leaves none of them stored nor marked ingested: the next ingest
    reads them again. Use as a context manager: it commits on leaving, or rolls back on error.
    """

    def __init__(self, store: Store):
        self.store = store
        forget.adopt(store, iso())  # tombstones kept beside the database: also a new one's
        self.held = []              # open transcripts whose locks we hold until the commit
        self._open = None           # the ExitStack holding the batch's transaction, while one is open
        self._began = 0.0
        self._marks = None          # marks() in this transaction
        self._most = files_held_at_most()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self._end(exc_type, exc, tb)

    def lock(self, f) -> None:
        """Take a transcript's lock; when another ingest has it, commit first (never wait holding the database)."""
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.commit()
            fcntl.flock(f, fcntl.LOCK_EX)

    def transaction(self):
        """The batch's transaction, begun if need be; one transcript's writes go inside it."""
        if self._open is None:
            self._open = ExitStack()
            self._open.enter_context(self.store.transaction())
            self._began = time.monotonic()
        return self.store.transaction()  # joins the batch's

    def marks(self) -> "Marks":
        """Whether anything is forgotten, whether any transcript is marked kept out: asked once per
        transaction, as nothing but this connection writes while it is open. (The marks it writes
        itself are of transcripts this ingest is done with: none of them is looked up again.)"""
        if self._open is None:
            return Marks(*self.store.forgets_or_keeps_out())
        if self._marks is None:
            self._marks = Marks(*self.store.forgets_or_keeps_out())
        return self._marks

    def hold(self, f) -> None:
        """Keep a transcript locked until the commit."""
        self.held.append(f)

    def full(self) -> None:
        """Commit when the batch has enough transcripts or has held the database long enough."""
        if len(self.held) >= self._most or time.monotonic() - self._began >= BATCH_SECONDS:
            self.commit()

    def commit(self) -> None:
        """Commit what is stored, then release the transcripts (the next transcript begins another)."""
        self._end(None, None, None)

    def _end(self, exc_type, exc, tb) -> None:
        """Commit (or, after an error, roll back) what is stored, then release the transcripts."""
        open_, self._open, self._marks = self._open, None, None
        try:
            if open_ is not None:
                open_.__exit__(exc_type, exc, tb)
        finally:
            held, self.held = self.held, []
            for f in held:
                f.close()


# --------------------------------------------------------------------------------------
# Work spread over processes: while this process stores (the database has one writer),
# worker processes do the reading and preparing that needs no database.
#
# Workers are forked, so they start in milliseconds with everything this process has loaded;
# where fork is not available (Windows) the work runs here, one item after another.
#
# Each worker has two pipes: the numbers of the chunks it is to do come down one, their results
# go back up the other, and this process waits on the result pipes itself. (multiprocessing.Pool
# was used before: its worker-handling thread waits on the pipe results arrive on without
# reading it, so it spun while a large result was read, a tenth of a core at a bulk ingest.
# multiprocessing itself is not used either: importing it was a sixtieth of a small first
# ingest, for a fork and two pipes.)

PIPE_BYTES = 1 << 20  # a result pipe's buffer (Linux allows an unprivileged process 1 MB)
# A worker's collections: a transcript's records make tens of thousands of dicts and lists and
# no reference cycle, so collecting every 700 new ones (Python's default) was 5-6% of its time
# for nothing; every 50,000 keeps a collector should a cycle ever be made.
GC_YOUNG = 50_000
_work_fn = None      # the function a worker applies: set before the fork, inherited
_work_chunks = None  # the chunks of items, inherited the same way: only their numbers are sent
_TASK = struct.Struct("<I")     # a chunk's number, down the task pipe
_SIZE = struct.Struct("<Q")     # a result's length in bytes, before it on the result pipe


class WorkerDied(Exception):
    """A worker's result pipe ended before its result did: the worker is gone."""


def worker_processes() -> int:
    """Worker processes a bulk ingest may use: $OPENMEMORY_JOBS, else the CPUs this process may
    run on. 0 or 1 means none: the work runs in this process."""
    try:
        return max(0, int(os.environ["OPENMEMORY_JOBS"]))
    except (KeyError, ValueError):
        pass
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_results(fn, items: list, sizes: list, processes: int, chunk_bytes: int = 1 << 20, chunk_items: int = 16,
            ahead: int = 4):
    """Yield fn(item) for every item, in the items' order, computed by `processes` forked
    workers (or here, one by one, when there are fewer than 2 or fork is missing). Should a
    worker die, None is yielded for every item not yet done: the caller does those itself.

    Items go to workers in chunks of about chunk_bytes (by `sizes`) or chunk_items, whichever
    comes first. Each chunk goes to the worker holding the fewest bytes of chunks not yet
    received (given four to a worker at the start, the public corpus's four chunks all went to
    one worker, and the other had none); of the chunks not yet given among the next `ahead`
    per worker from the one to yield, those of more whole chunk_bytes go first (a transcript
    of several MB late in the list then does not keep one worker busy while the other has
    finished), the rest in order. At most `ahead` chunks per worker are in flight or done and
    waiting, so when this process is the slower side results do not pile up in memory. A
    worker ignores SIGINT: Ctrl-C stops this process, and leaving the generator stops the
    workers. An exception fn raises in a worker is raised here.
    """
    if processes < 2 or not hasattr(os, "fork"):
        yield from map(fn, items)
        return
    chunks, weights, current, weight = [], [], [], 0
    for item, size in zip(items, sizes):
        current.append(item)
        weight += size
        if weight >= chunk_bytes or len(current) >= chunk_items:
            chunks.append(current)
            weights.append(weight)
            current, weight = [], 0
    if current:
        chunks.append(current)
        weights.append(weight)
    global _work_fn, _work_chunks
    _work_fn, _work_chunks = fn, chunks
    workers = []
    try:
        for _ in range(min(processes, len(chunks))):
            try:
                workers.append(_Worker(workers))
            except OSError:     # no process to be had (the system's limit, its memory): fewer workers
                break
        if not workers:
            yield from map(fn, items)
            return
        by_fd = {w.results: w for w in workers}
        poll = select.poll()
        for w in workers:
            poll.register(w.results, select.POLLIN)
        given, done, dead = bytearray(len(chunks)), {}, False
        window = ahead * len(workers)
        for n in range(len(chunks)):
            while not dead:
                try:  # keep every worker busy, within the bound of chunks in flight or waiting
                    while True:
                        room = [w for w in workers if len(w.holds) < ahead]
                        waiting = [c for c in range(n, min(n + window, len(chunks))) if not given[c]]
                        if not room or not waiting:
                            break
                        c = max(waiting, key=lambda c: (weights[c] // chunk_bytes, -c))
                        min(room, key=lambda w: w.bytes).give(c, weights[c])
                        given[c] = 1
                    if n in done:
                        break
                    for fd, _ in poll.poll():
                        w = by_fd[fd]
                        if w.holds:
                            done[w.take()] = w.receive()
                        else:
                            raise WorkerDied    # it holds nothing, yet its pipe ended: it is gone
                except (WorkerDied, OSError):  # a worker died (killed, out of memory)
                    dead = True
            if n in done:
                ok, value = pickle.loads(done.pop(n))
                if not ok:
                    raise value
                yield from value
            else:
                yield from [None] * len(chunks[n])   # the caller does what a dead worker held
    finally:
        for w in workers:
            w.stop()
        _work_fn = _work_chunks = None


class _Worker:
    """A forked worker process, the pipes to and from it, and the chunk numbers it holds."""

    def __init__(self, others: list):
        task_in, self.tasks = os.pipe()
        self.results, result_out = os.pipe()
        try:  # room for a few chunks' results: a worker does not wait while this process stores
            import fcntl
            fcntl.fcntl(self.results, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (ImportError, AttributeError, OSError):
            pass  # not Linux, or above the system's limit: the default pipe
        try:
            self.pid = os.fork()
        except OSError:
            for fd in (task_in, self.tasks, self.results, result_out):
                os.close(fd)
            raise
        if self.pid == 0:   # the worker: it never returns into its parent's code
            code = 1
            try:
                for fd in [self.tasks, self.results] + [end for w in others for end in (w.tasks, w.results)]:
                    os.close(fd)    # only its own ends: its parent's closing them is the end of its work
                _work(task_in, result_out)
                code = 0
            finally:
                os._exit(code)
        os.close(task_in)     # the worker's ends: closed here, so its death reads as the end of its pipe
        os.close(result_out)
        self.holds = deque()    # (chunk number, its bytes) given and not yet received, in order
        self.bytes = 0          # their bytes

    def give(self, n: int, size: int = 0) -> None:
        os.write(self.tasks, _TASK.pack(n))     # 4 bytes: one write, never split (PIPE_BUF)
        self.holds.append((n, size))
        self.bytes += size

    def take(self) -> int:
        """The number of the chunk whose result comes next on the pipe (received next)."""
        n, size = self.holds.popleft()
        self.bytes -= size
        return n

    def receive(self) -> bytearray:
        """The next result on the pipe, whole (its worker may still be writing it)."""
        size = _SIZE.unpack(_read_pipe(self.results, _SIZE.size))[0]
        return _read_pipe(self.results, size)

    def stop(self) -> None:
        """End the worker (it may be mid-chunk: its work is not wanted) and reap it."""
        os.close(self.tasks)
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass    # reaped already (SIGCHLD ignored)
        os.close(self.results)


def _read_pipe(fd: int, size: int) -> bytearray:
    """Exactly size bytes from a pipe, or WorkerDied when it ends first."""
    out = bytearray(size)
    view = memoryview(out)
    got = 0
    while got < size:
        n = os.readv(fd, [view[got:]])
        if not n:
            raise WorkerDied
        got += n
    return out


def _write_pipe(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _work(tasks: int, results: int) -> None:
    """A worker: do each chunk whose number comes down `tasks`, send back (True, results) or
    (False, the exception). It ignores Ctrl-C (its parent stops it), ends at SIGTERM, and writes
    nothing: should its parent be killed, the broken pipe it meets is not a traceback on the
    person's terminal or log."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)   # whatever its parent had set
    gc.freeze()     # what the parent holds is never garbage here: no collection walks it
    gc.set_threshold(GC_YOUNG, 20, 20)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
    while True:
        try:
            n = _TASK.unpack(_read_pipe(tasks, _TASK.size))[0]
        except WorkerDied:
            return      # its parent is done with it
        try:
            reply = pickle.dumps((True, [_work_fn(item) for item in _work_chunks[n]]), pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # noqa: BLE001 - raised again in the parent
            try:
                reply = pickle.dumps((False, e))
            except Exception:  # noqa: BLE001 - an exception that does not pickle: its words do
                reply = pickle.dumps((False, RuntimeError(f"{type(e).__name__}: {e}")))
        _write_pipe(results, _SIZE.pack(len(reply)) + reply)
