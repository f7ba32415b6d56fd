"""Work spread over processes: while this process stores (the database has one writer),
worker processes do the reading and preparing that needs no database.

Workers are forked, so they start in milliseconds with everything this process has loaded;
where fork is not available (Windows) the work runs here, one item after another.

Each worker has two pipes: the numbers of the chunks it is to do come down one, their results
go back up the other, and this process waits on the result pipes itself. (multiprocessing.Pool
was used before: its worker-handling thread waits on the pipe results arrive on without
reading it, so it spun while a large result was read, a tenth of a core at a bulk ingest.
multiprocessing itself is not used either: importing it was a sixtieth of a small first
ingest, for a fork and two pipes.)
"""
import gc
import os
import pickle
import select
import signal
import struct
from collections import deque

PIPE_BYTES = 1 << 20  # a result pipe's buffer (Linux allows an unprivileged process 1 MB)
# A worker's collections: a transcript's records make tens of thousands of dicts and lists and
# no reference cycle, so collecting every 700 new ones (Python's default) was 5-6% of its time
# for nothing; every 50,000 keeps a collector should a cycle ever be made.
GC_YOUNG = 50_000
_fn = None      # the function a worker applies: set before the fork, inherited
_chunks = None  # the chunks of items, inherited the same way: only their numbers are sent
_TASK = struct.Struct("<I")     # a chunk's number, down the task pipe
_SIZE = struct.Struct("<Q")     # a result's length in bytes, before it on the result pipe


class WorkerDied(Exception):
    """A worker's result pipe ended before its result did: the worker is gone."""


def jobs() -> int:
    """Worker processes a bulk job may use: $OPENMEMORY_JOBS, else the CPUs this process may
    run on. 0 or 1 means none: the work runs in this process."""
    try:
        return max(0, int(os.environ["OPENMEMORY_JOBS"]))
    except (KeyError, ValueError):
        pass
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def ordered(fn, items: list, sizes: list, processes: int, chunk_bytes: int = 1 << 20, chunk_items: int = 16,
            ahead: int = 4):
    """Yield fn(item) for every item, in the items' order, computed by `processes` forked
    workers (or here, one by one, when there are fewer than 2 or fork is missing). Should a
    worker die, None is yielded for every item not yet done: the caller does those itself.

    Items go to workers in chunks of about chunk_bytes (by `sizes`) or chunk_items, whichever
    comes first, each chunk to the first worker free; at most `ahead` chunks per worker are in
    flight or done and waiting, so when this process is the slower side results do not pile up
    in memory. A worker ignores SIGINT: Ctrl-C stops this process, and leaving the generator
    stops the workers. An exception fn raises in a worker is raised here.
    """
    if processes < 2 or not hasattr(os, "fork"):
        yield from map(fn, items)
        return
    chunks, current, weight = [], [], 0
    for item, size in zip(items, sizes):
        current.append(item)
        weight += size
        if weight >= chunk_bytes or len(current) >= chunk_items:
            chunks.append(current)
            current, weight = [], 0
    if current:
        chunks.append(current)
    global _fn, _chunks
    _fn, _chunks = fn, chunks
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
        given, done, dead = 0, {}, False
        for n in range(len(chunks)):
            while not dead:
                try:  # keep every worker busy, within the bound of chunks in flight or waiting
                    for w in workers:
                        while given < len(chunks) and len(w.holds) < ahead and given - n < ahead * len(workers):
                            w.give(given)
                            given += 1
                    if n in done:
                        break
                    for fd, _ in poll.poll():
                        w = by_fd[fd]
                        if w.holds:
                            done[w.holds.popleft()] = w.receive()
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
        _fn = _chunks = None


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
                _serve(task_in, result_out)
                code = 0
            finally:
                os._exit(code)
        os.close(task_in)     # the worker's ends: closed here, so its death reads as the end of its pipe
        os.close(result_out)
        self.holds = deque()

    def give(self, n: int) -> None:
        os.write(self.tasks, _TASK.pack(n))     # 4 bytes: one write, never split (PIPE_BUF)
        self.holds.append(n)

    def receive(self) -> bytearray:
        """The next result on the pipe, whole (its worker may still be writing it)."""
        size = _SIZE.unpack(_read(self.results, _SIZE.size))[0]
        return _read(self.results, size)

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


def _read(fd: int, size: int) -> bytearray:
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


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _serve(tasks: int, results: int) -> None:
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
            n = _TASK.unpack(_read(tasks, _TASK.size))[0]
        except WorkerDied:
            return      # its parent is done with it
        try:
            reply = pickle.dumps((True, [_fn(item) for item in _chunks[n]]), pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # noqa: BLE001 - raised again in the parent
            try:
                reply = pickle.dumps((False, e))
            except Exception:  # noqa: BLE001 - an exception that does not pickle: its words do
                reply = pickle.dumps((False, RuntimeError(f"{type(e).__name__}: {e}")))
        _write(results, _SIZE.pack(len(reply)) + reply)
