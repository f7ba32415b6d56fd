"""Transcripts stored many to a transaction, each kept locked until its transaction commits.

A bulk ingest stores many transcripts per transaction (a commit per small transcript was a
tenth of a first ingest's time; 400 rewrite the indexes' pages a quarter as often as 100).
A transaction is closed after BATCH_SECONDS or BATCH_FILES transcripts (fewer where the
process may open few files), so a hook's write behind it waits well under its busy timeout.
"""
import fcntl
import resource
import time

from .store import Store

BATCH_SECONDS = 0.5
BATCH_FILES = 400


def files_held_at_most() -> int:
    """BATCH_FILES, or half the files this process may have open, when that is fewer (macOS
    lets a terminal's process open 256 by default: 400 held, the rest failed to open)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return BATCH_FILES if soft == resource.RLIM_INFINITY else max(1, min(BATCH_FILES, soft // 2))


class Batch:
    """Transcripts stored in one transaction, each kept locked until it commits.

    A kill before the commit leaves none of them stored nor marked ingested: the next ingest
    reads them again. Use as a context manager: it commits on leaving, or rolls back on error.
    """

    def __init__(self, store: Store):
        self.store = store
        self.held = []              # open transcripts whose locks we hold until the commit
        self._tx = None
        self._began = 0.0
        self._lists = None          # store.forgets_or_keeps_out() in this transaction
        self._most = files_held_at_most()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.commit(exc_type)

    def lock(self, f) -> None:
        """Take a transcript's lock; when another ingest has it, commit first (never wait holding the database)."""
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.commit()
            fcntl.flock(f, fcntl.LOCK_EX)

    def transaction(self):
        """The batch's transaction, begun if need be; one transcript's writes go inside it."""
        if self._tx is None:
            self._tx = self.store.transaction()
            self._tx.__enter__()
            self._began = time.monotonic()
        return self.store.transaction()  # joins the batch's

    def lists(self) -> tuple:
        """(anything forgotten, any transcript marked kept out), asked once per transaction:
        nothing but this connection writes while it is open. (The marks it writes itself are of
        transcripts this ingest is done with: none of them is looked up again.)"""
        if self._tx is None:
            return self.store.forgets_or_keeps_out()
        if self._lists is None:
            self._lists = tuple(self.store.forgets_or_keeps_out())
        return self._lists

    def hold(self, f) -> None:
        """Keep a transcript locked until the commit."""
        self.held.append(f)

    def full(self) -> None:
        """Commit when the batch has enough transcripts or has held the database long enough."""
        if len(self.held) >= self._most or time.monotonic() - self._began >= BATCH_SECONDS:
            self.commit()

    def commit(self, exc_type=None) -> None:
        """Commit (or, after an error, roll back) what is stored, then release the transcripts."""
        tx, self._tx, self._lists = self._tx, None, None
        try:
            if tx is not None:
                tx.__exit__(exc_type, None, None)
        finally:
            held, self.held = self.held, []
            for f in held:
                f.close()
