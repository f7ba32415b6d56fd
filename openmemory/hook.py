"""`openmemory hook`: what Claude Code's hooks run. SessionEnd and PreCompact ingest that transcript.

Claude Code passes one JSON object on stdin and can leave stdin open; it cancels SessionEnd
hooks after about 1.5 s; a hook's exit code 2 means "block"; a SessionStart hook's stdout
goes into the model's context. So the hook reads with a deadline, prints nothing, always
exits 0, logs instead, and hands a transcript too big to read in time, or one it cannot
store at once because another process holds the database (a sleep, a bulk ingest), to a
detached process.
"""
import json
import logging
import os
import select
import sqlite3
import time
from pathlib import Path

from . import errors, paths, schedule, store
from .clock import iso

log = logging.getLogger(__name__)

INGEST_EVENTS = ("SessionEnd", "PreCompact")
CATCH_UP_EVENT = "SessionStart"  # a night over a day old, and something new: sleep in the background
STDIN_DEADLINE_S = 1.0          # Claude Code writes the payload at once; an open pipe must not hold us
MAX_EVENT_BYTES = 1024 * 1024   # SessionEnd/PreCompact payloads are a few hundred bytes
# Transcripts larger than this are ingested by a detached process, so the hook stays well
# inside Claude Code's 1.5 s. Measured with tests/bench_hook.py on the 2-core machine, start-up
# included: 5.3 MB in 2.1.328's shape 0.22-0.29 s inline; 5.2 MB of small records only (the
# worst case per byte) 0.53-0.63 s, up to 1.0 s under load; 2.1 MB of those 0.40 s (max 0.47).
INLINE_MAX_BYTES = 2 * 1024 * 1024
# An inline ingest waits this long for another process's write (a note, a touch: milliseconds)
# before it hands the transcript to a detached process: the hook returns within its 1 s whatever
# holds the database. The detached one waits up to DETACHED_PATIENCE_S, then leaves the
# transcript to the next ingest (the nightly job's, the next hook's), which finds it changed.
INLINE_WAIT_MS = 200
DETACHED_PATIENCE_S = 600


def read_event(stream, deadline: float = STDIN_DEADLINE_S) -> dict | None:
    """The first JSON object on stream, read for at most `deadline` seconds; None if none came."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    buf = b""
    end = time.monotonic() + deadline
    while len(buf) <= MAX_EVENT_BYTES:
        remaining = end - time.monotonic()
        if remaining <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                break
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break  # end of input
        buf += chunk
        event = _first_object(buf)
        if event is not None:
            return event
    return _first_object(buf)


def _first_object(buf: bytes) -> dict | None:
    try:
        text = buf.decode("utf-8").lstrip()
        value, _ = json.JSONDecoder().raw_decode(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None  # incomplete so far (or never valid)
    return value if isinstance(value, dict) else None


def run(event: dict | None, detach: str = "auto") -> str:
    """Do what the event asks and log it; return the line logged. Never raises on bad input.

    detach: "auto" (transcripts over INLINE_MAX_BYTES), "always" or "never".
    """
    if not isinstance(event, dict):
        return _said(logging.WARNING, "no hook event on stdin; nothing done")
    name = event.get("hook_event_name")
    if os.environ.get(paths.JUDGE_MARK):
        # openmemory's own judge (`claude -p`, llm.headless) runs with hooks off; were one to
        # fire anyway, it must not ingest or start a catch-up: that would recurse.
        return _said(logging.DEBUG, f"{name}: inside openmemory's judge; nothing done")
    if name in INGEST_EVENTS + (CATCH_UP_EVENT,) and _setup_runs_the_hooks():
        return _said(logging.DEBUG, f"{name}: `openmemory setup` installed hooks here; the plugin's does nothing")
    if name == CATCH_UP_EVENT:
        done = schedule.start_catch_up(_since_last_night)
        # A catch-up started is said (at most once an hour); the usual "not due" only when debugging.
        return _said(logging.INFO if done.endswith(schedule.CATCH_UP_STARTED) else logging.DEBUG, f"{name}: {done}")
    if name not in INGEST_EVENTS:
        return _said(logging.DEBUG, f"{name!r}: nothing to do")
    value = event.get("transcript_path")
    path = transcript_path(value)
    if path is None:
        if never_written(value):
            # Normal: every `claude mcp list` ends a session that wrote no transcript (2.1.328).
            return _said(logging.DEBUG, f"{name}: no transcript at {value!r} (a session that wrote none); "
                                        f"nothing to ingest")
        return _said(logging.WARNING, f"{name}: no readable transcript at {value!r}; nothing done")
    size = path.stat().st_size
    if detach == "always" or (detach == "auto" and size > INLINE_MAX_BYTES):
        run_detached(lambda: ingest_patiently(path, name))
        return _said(logging.INFO, f"{name}: ingesting {path} ({size} bytes) in a detached process")
    if detach == "never":
        return ingest_transcript(path, name)
    try:
        return ingest_transcript(path, name, busy_ms=INLINE_WAIT_MS)
    except sqlite3.OperationalError as e:
        if not errors.is_busy(e):
            raise
    run_detached(lambda: ingest_patiently(path, name))
    return _said(logging.INFO, f"{name}: another openmemory holds the memory database; ingesting {path} "
                               f"in a detached process")


def _setup_runs_the_hooks() -> bool:
    """Under the plugin, whether `openmemory setup` also put hooks in settings.json (one must be quiet)."""
    if os.environ.get("OPENMEMORY_INSTALL") != "plugin":
        return False
    from . import setup
    return bool(setup.record().get("hooks"))


def _since_last_night() -> tuple:
    """(the last sleep's time, whether an error or a correction came since)."""
    with store.connect() as db:
        return db.get_state("last_sleep"), db.new_since_last_night()


def _said(level: int, line: str) -> str:
    log.log(level, "%s", line)
    return line


def ingest_transcript(path: Path, name: str = "hook", busy_ms: int | None = None) -> str:
    """Ingest one transcript unless it is unchanged since the last ingest. busy_ms: wait at most
    this long for another process's write (sqlite3.OperationalError, busy, past it)."""
    with store.connect(busy_ms=busy_ms) as db:
        if busy_ms is not None and not db.writable_now():
            raise sqlite3.OperationalError("database is locked")  # before reading it: hand it over at once
        from . import ingest  # not at import: a SessionStart hook must return in well under 100 ms
        report = ingest.ingest_file(db, path)  # holds the transcript's lock: one ingest of it at a time
        with db.transaction():
            now = iso()
            db.set_state("last_hook", now)      # doctor: is the hook running?
            if not report.unchanged:
                db.set_state("last_ingest", now)  # status: the hook's ingest is the last ingest
    if report.unchanged:
        return _said(logging.DEBUG, f"{name}: {path} unchanged")
    return _said(logging.WARNING if report.failed else logging.INFO, f"{name}: {path}: {report.line()}")


def ingest_patiently(path: Path, name: str = "hook") -> str:
    """Ingest one transcript, trying again while another process holds the database, up to
    DETACHED_PATIENCE_S; then it is left for the next ingest."""
    deadline = time.monotonic() + DETACHED_PATIENCE_S
    while True:
        try:
            return ingest_transcript(path, name)
        except sqlite3.OperationalError as e:
            if not errors.is_busy(e):
                raise
            if time.monotonic() >= deadline:
                return _said(logging.WARNING, f"{name}: the memory database stayed locked for "
                                              f"{DETACHED_PATIENCE_S} s; {path} is left for the next ingest")
        time.sleep(1)


def transcript_path(value) -> Path | None:
    """The transcript a hook names, spelled as `openmemory ingest` spells it, or None."""
    path = _named(value)
    if path is None or not path.is_absolute() or not path.is_file():
        return None
    # The same file under Claude Code's folder as ingest's scan sees it, so a symlinked home
    # does not store one session twice under two paths.
    usual = paths.projects_dir() / path.parent.name / path.name
    try:
        if usual != path and usual.is_file() and os.path.samefile(usual, path):
            return usual
    except OSError:
        pass
    return path


def never_written(value) -> bool:
    """Whether a hook names a transcript file, whole, that is not there: a session that wrote none."""
    path = _named(value)
    return path is not None and path.is_absolute() and not os.path.lexists(path)


def _named(value) -> Path | None:
    """The .jsonl file a hook's value names, ~ expanded; None for anything else ('~someone/x.jsonl'
    of a user this machine does not have: Path.expanduser raises RuntimeError)."""
    if not isinstance(value, str) or not value.endswith(".jsonl"):
        return None
    try:
        return Path(value).expanduser()
    except RuntimeError:
        return None


def run_detached(work) -> None:
    """Run work() in a grandchild in its own session, with no tie to Claude Code's pipes.

    The hook returns at once; the grandchild survives Claude Code exiting or cancelling the
    hook (which signals the hook's process group, not this new session).
    """
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)  # the intermediate child exits at once
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)  # Claude Code waits on these pipes, not just the hook's pid
        try:
            work()
        except BaseException:
            log.exception("detached ingest failed")
    finally:
        os._exit(0)
