"""Work spread over processes: while this process stores (the database has one writer),
worker processes do the reading and preparing that needs no database.

Workers are forked, so they start in milliseconds with everything this process has loaded;
where fork is not available (Windows) the work runs here, one item after another.
"""
import multiprocessing
import os
import signal
from collections import deque

_fn = None  # the function a worker applies: set before the fork, inherited


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
    comes first; at most `ahead` chunks per worker are in flight, so when this process is the
    slower side results do not pile up in memory. A worker ignores SIGINT: Ctrl-C stops this
    process, and leaving the generator stops the workers.
    """
    if processes < 2 or "fork" not in multiprocessing.get_all_start_methods():
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
    global _fn
    _fn = fn
    pool = multiprocessing.get_context("fork").Pool(processes, initializer=_quiet)
    started = list(pool._pool)  # a pool replaces a dead worker, but the chunk it held is lost
    try:
        waiting = deque()
        queue = iter(chunks)
        for c in queue:
            waiting.append((c, pool.apply_async(_run, (c,))))
            if len(waiting) >= ahead * processes:
                break
        while waiting:
            c, result = waiting.popleft()
            while not result.ready() and not any(p.exitcode is not None for p in started):
                result.wait(0.2)
            if not result.ready():
                result.wait(1.0)    # another worker's chunk may still come
            if not result.ready():  # a worker died (killed, out of memory): None for what is left
                for c in [c] + [c for c, _ in waiting] + list(queue):
                    yield from [None] * len(c)
                return
            yield from result.get()
            c = next(queue, None)
            if c is not None:
                waiting.append((c, pool.apply_async(_run, (c,))))
        pool.close()
    finally:
        pool.terminate()
        pool.join()
        _fn = None


def _quiet() -> None:
    """A worker ignores Ctrl-C (its parent stops it) and writes nothing: should its parent be
    killed, the broken pipe it meets is not a traceback on the person's terminal or log."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def _run(chunk: list) -> list:
    return [_fn(item) for item in chunk]
