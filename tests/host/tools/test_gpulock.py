"""Tests of the GPU's readers-writer lock (tools/cudalab_grade/gpulock.py) and of its use by
grading: a class's tests share a GPU, a benchmark has it alone."""
from __future__ import annotations

import sys
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))

from cudalab_grade import grading  # noqa: E402
from cudalab_grade.gpulock import GpuLock  # noqa: E402
from cudalab_grade.manifest import load_all  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


class LockTest(unittest.TestCase):
    def test_readers_share(self):
        lock, inside, peak = GpuLock(), [0], [0]
        mu = threading.Lock()
        barrier = threading.Barrier(3)

        def reader():
            with lock.shared():
                with mu:
                    inside[0] += 1
                    peak[0] = max(peak[0], inside[0])
                barrier.wait(timeout=5)  # all three hold it at once, or this times out
                with mu:
                    inside[0] -= 1
        ts = [threading.Thread(target=reader) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(5)
        self.assertEqual(peak[0], 3)

    def test_writer_waits_for_readers_and_excludes_them(self):
        lock, events = GpuLock(), []
        reading = threading.Event()
        release = threading.Event()

        def reader():
            with lock.shared():
                events.append("read start")
                reading.set()
                release.wait(5)
                events.append("read end")

        def writer():
            with lock.exclusive():
                events.append("write")

        r = threading.Thread(target=reader)
        r.start()
        reading.wait(5)
        w = threading.Thread(target=writer)
        w.start()
        time.sleep(0.1)
        self.assertEqual(events, ["read start"])  # the writer waits for the reader
        late = threading.Thread(target=reader)  # a reader that comes after a waiting writer
        release.set()
        late.start()
        for t in (r, w, late):
            t.join(5)
        self.assertEqual(events[:3], ["read start", "read end", "write"])
        self.assertEqual(len(events), 5)

    def test_writer_preferred_over_new_readers(self):
        lock, order = GpuLock(), []
        first = threading.Event()
        go = threading.Event()

        def long_reader():
            with lock.shared():
                first.set()
                go.wait(5)
            order.append("r1 out")

        def writer():
            with lock.exclusive():
                order.append("w")

        def new_reader():
            with lock.shared():
                order.append("r2")

        t1 = threading.Thread(target=long_reader)
        t1.start()
        first.wait(5)
        tw = threading.Thread(target=writer)
        tw.start()
        time.sleep(0.1)
        t2 = threading.Thread(target=new_reader)
        t2.start()
        time.sleep(0.1)
        self.assertNotIn("r2", order)  # held back behind the waiting writer
        go.set()
        for t in (t1, tw, t2):
            t.join(5)
        self.assertLess(order.index("w"), order.index("r2"))

    def test_released_on_exception(self):
        lock = GpuLock()
        with self.assertRaises(RuntimeError):
            with lock.exclusive():
                raise RuntimeError("boom")
        done = threading.Event()
        threading.Thread(target=lambda: (lock.shared().__enter__(), done.set())).start()
        self.assertTrue(done.wait(2))


class GradingUsesLockTest(unittest.TestCase):
    """grading.grade: the tests and sanitizer runs under the lock shared, the benchmark exclusive."""

    def test_tests_shared_benchmark_exclusive(self):
        ex = next(e for c in load_all(ROOT) for e in c.exercises if e.perf)
        lock = GpuLock()
        seen = []

        def fake_tests(ex_, opts, res):
            seen.append(("tests", lock._readers, lock._writer))
            res.status, res.correctness_points = grading.PASSED, float(ex_.points)
            return True

        def fake_perf(ex_, opts, res):
            seen.append(("perf", lock._readers, lock._writer))

        opts = grading.Options(root=ROOT, build_dir=ROOT / "build" / "none", perf=True, gpu_lock=lock)
        with mock.patch.object(grading, "run_tests", fake_tests), \
                mock.patch.object(grading, "run_perf", fake_perf), \
                mock.patch.object(grading.source, "check", lambda *a, **k: None):
            grading.grade(ex, opts)
        self.assertEqual(seen, [("tests", 1, False), ("perf", 0, True)])
        self.assertEqual((lock._readers, lock._writer), (0, False))  # both released


if __name__ == "__main__":
    unittest.main()
