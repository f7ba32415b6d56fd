"""Work in forked worker processes: results in order, and nothing hangs when a worker dies."""
import os
import unittest

from openmemory import workers


def square(n):
    return n * n


def die_on_seven(n):
    if n == 7:
        os._exit(3)  # as a worker killed by the kernel for its memory would
    return n * n


def worker_pid(_):
    return os.getpid()


def open_it(path):
    with open(path):
        return path


class Ordered(unittest.TestCase):
    def test_results_come_in_the_items_order(self):
        items = list(range(200))
        got = list(workers.ordered(square, items, [1 << 19] * 200, 2, chunk_items=3))
        self.assertEqual(got, [n * n for n in items])

    def test_without_workers_the_work_is_done_here(self):
        self.assertEqual(list(workers.ordered(square, [1, 2, 3], [1, 1, 1], 1)), [1, 4, 9])

    def test_a_dead_worker_leaves_none_for_what_is_not_done_and_nothing_hangs(self):
        items = list(range(40))
        got = list(workers.ordered(die_on_seven, items, [1] * 40, 2, chunk_items=2, ahead=1))
        self.assertEqual(len(got), 40)
        self.assertEqual(got[0], 0)                 # done before the death
        self.assertEqual(got[6:8], [None, None])    # the dead worker's chunk
        for n, value in enumerate(got):
            self.assertIn(value, (None, n * n))     # the rest: done, or left to the caller

    def test_an_exception_in_a_worker_is_raised_here(self):
        with self.assertRaises(FileNotFoundError):
            list(workers.ordered(open_it, ["/nonexistent/openmemory"] * 4, [1] * 4, 2, chunk_items=1))
        self.assertEqual(list(workers.ordered(square, list(range(9)), [1] * 9, 2, chunk_items=1)),
                         [n * n for n in range(9)])  # and the next run starts afresh

    def test_when_no_process_can_be_forked_the_work_is_done_here(self):
        from unittest import mock
        with mock.patch.object(workers.os, "fork", side_effect=BlockingIOError(11, "Resource temporarily unavailable")):
            got = list(workers.ordered(worker_pid, list(range(5)), [1] * 5, 2, chunk_items=1))
        self.assertEqual(got, [os.getpid()] * 5)
        forks = []

        def one_fork():     # the first fork works, the second finds no process to be had
            if forks:
                raise BlockingIOError(11, "Resource temporarily unavailable")
            forks.append(1)
            return real_fork()
        real_fork = os.fork
        with mock.patch.object(workers.os, "fork", side_effect=one_fork):
            got = list(workers.ordered(worker_pid, list(range(6)), [1] * 6, 2, chunk_items=1))
        self.assertEqual(len(set(got)), 1)      # all done, by the one worker
        self.assertNotEqual(got[0], os.getpid())

    def test_leaving_early_stops_the_workers(self):
        got = workers.ordered(worker_pid, list(range(100)), [1] * 100, 2, chunk_items=1)
        pids = {next(got), next(got), next(got)}
        self.assertNotIn(os.getpid(), pids)
        for pid in pids:
            os.kill(pid, 0)     # running
        got.close()
        for pid in pids:        # gone, and reaped: no process of that number is left
            with self.assertRaises(ProcessLookupError):
                os.kill(pid, 0)

    def test_a_worker_collects_garbage_rarely_and_never_walks_what_it_inherited(self):
        import gc
        got = list(workers.ordered(lambda _: (gc.get_threshold()[0], gc.get_freeze_count() > 0), list(range(4)),
                                   [1] * 4, 2, chunk_items=1))
        self.assertEqual(got, [(workers.GC_YOUNG, True)] * 4)
        self.assertNotEqual(gc.get_threshold()[0], workers.GC_YOUNG)   # this process keeps Python's own
