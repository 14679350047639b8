"""Tests of the GPU's readers-writer lock (tools/cudalab_grade/gpulock.py) and of its use by
grading: a class's tests share a GPU, a benchmark has it alone, and a failure a neighbour on
the GPU may have caused is graded again alone."""
from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))

from cudalab_grade import grading, report  # noqa: E402
from cudalab_grade.gpulock import GpuLock  # noqa: E402
from cudalab_grade.manifest import load_all  # noqa: E402
from test_grade import Tree, _write_exe, gtest_json  # noqa: E402

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

    def test_a_hold_says_whether_another_shared_it(self):
        lock = GpuLock()
        first_in, second_in, release = threading.Event(), threading.Event(), threading.Event()
        holds = {}

        def reader(name, entered):
            with lock.shared() as hold:
                holds[name] = hold
                entered.set()
                release.wait(5)

        with lock.shared() as alone:  # nobody beside it, from start to end
            pass
        self.assertEqual((alone.overlapped, alone.others), (False, 0))
        a = threading.Thread(target=reader, args=("a", first_in))
        a.start()
        first_in.wait(5)
        self.assertFalse(holds["a"].overlapped)  # alone so far
        b = threading.Thread(target=reader, args=("b", second_in))
        b.start()
        second_in.wait(5)
        self.assertEqual((holds["a"].others, holds["b"].others), (1, 1))  # each saw the other
        release.set()
        for t in (a, b):
            t.join(5)
        self.assertTrue(holds["a"].overlapped)  # stays set after the other left
        with lock.shared() as later:
            pass
        self.assertFalse(later.overlapped)  # the earlier readers were gone
        with lock.exclusive() as hold:
            self.assertFalse(hold.overlapped)

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



# What a CUDA allocation that failed says in a test's failure (cudalab::CudaError)
OOM = ("C++ exception with description \"chapters/common/include/cudalab/device_buffer.cuh:29: "
       "cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)) failed: "
       "cudaErrorMemoryAllocation (out of memory)\" thrown in the test body.")
MISMATCH = "[1.1 alpha] n = 33, seed = 7\nExpected equality of these values:\n  got\n    Which is: 41\n  want\n    42"


def flaky_test(path: Path, first: str, counter: Path) -> None:
    """A class's checker (test program) of Alpha.T0 and Alpha.T1: its first run fails T1 with
    the message `first` ("hang": it sleeps 60 s instead), every later run passes both. Each run
    adds a line to `counter`."""
    passing = gtest_json([("Alpha", "T0", "COMPLETED", []), ("Alpha", "T1", "COMPLETED", [])])
    failing = gtest_json([("Alpha", "T0", "COMPLETED", []), ("Alpha", "T1", "COMPLETED", [first])])
    _write_exe(path, f"""
        import json, os, sys, time
        if "--gtest_list_tests" in sys.argv:
            print("Alpha.\\n  T0\\n  T1")
            sys.exit(0)
        runs = open({str(counter)!r}).read().count("\\n") if os.path.exists({str(counter)!r}) else 0
        with open({str(counter)!r}, "a") as f:
            f.write("run\\n")
        if runs == 0 and {first!r} == "hang":
            print("[ RUN      ] Alpha.T1", flush=True)
            time.sleep(60)
        data = {failing!r} if runs == 0 else {passing!r}
        for a in sys.argv[1:]:
            if a.startswith("--gtest_output=json:"):
                with open(a.split(":", 1)[1], "w") as f:
                    json.dump(data, f)
        sys.exit(1 if runs == 0 else 0)
    """)


class ConfirmAloneTest(unittest.TestCase):
    """grading._confirm_alone: a class's exercise that failed in a way another submission on the
    GPU can cause (out of memory, a timeout) while the GPU's lock was shared is graded again
    under the exclusive lock, and that second verdict is the verdict."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-confirm-alone-")
        tmp = Path(self._tmp.name)
        self.tree = Tree(tmp)
        self.counter = tmp / "runs.txt"
        self.ex = next(e for c in load_all(self.tree.root) for e in c.exercises if e.id == "1.1")

    def tearDown(self):
        self._tmp.cleanup()

    def grade(self, first: str, lock: GpuLock | None, neighbour: bool, **opts):
        """(result, [(readers, writer) of the lock at each run of the tests], runs of the checker):
        1.1 graded as a class grades it, its checker's first run failing with `first`; with
        `neighbour`, another submission holds the lock shared when the grading takes it, and lets
        go once the grading holds it too."""
        flaky_test(self.tree.bin / "alpha_test_starter", first, self.counter)
        seen = []
        real = grading.run_tests

        def spy(ex, opts_, res):
            seen.append((lock._readers, lock._writer) if lock else None)
            return real(ex, opts_, res)

        entered = threading.Event()

        def other_submission():
            with lock.shared():
                entered.set()
                end = time.monotonic() + 10
                while lock._readers < 2 and time.monotonic() < end:
                    time.sleep(0.005)

        t = threading.Thread(target=other_submission)
        if neighbour:
            t.start()
            self.assertTrue(entered.wait(5))
        o = grading.Options(root=self.tree.root, build_dir=self.tree.build, checker_bin=self.tree.bin,
                            gpu_lock=lock, **opts)
        with mock.patch.dict(os.environ, self.tree.env), mock.patch.object(grading, "run_tests", spy):
            res = grading.grade(self.ex, o)
        if neighbour:
            t.join(10)
        runs = self.counter.read_text().count("\n") if self.counter.exists() else 0
        return res, seen, runs

    def test_out_of_memory_beside_another_is_graded_again_alone(self):
        res, seen, runs = self.grade(OOM, GpuLock(), neighbour=True)
        self.assertEqual(runs, 2)
        self.assertEqual(seen[1], (0, True))  # the second run: the lock exclusive, no reader
        self.assertEqual((res.status, res.correctness_points), ("passed", 10.0))  # the second verdict
        self.assertEqual(res.reason, "all 2 tests passed")
        self.assertEqual(len(res.details), 1, res.details)  # the first run's failure is gone
        self.assertTrue(res.details[0].startswith(
            "graded again alone on the GPU: its first run, beside 1 other submission on the GPU, ran out "
            "of memory (1 of 2 tests failed"), res.details)
        self.assertTrue(res.details[0].endswith("; the verdict is the second run's"))
        self.assertEqual(res.alone, res.details[0])  # for the class's summary ("Needs a look")
        self.assertEqual(report._machine(res)["alone"], res.alone)
        from cudalab_grade import classreport
        record = {"score": res.points, "cudalab": {"student": "s1", "exercises": [report._machine(res)]}}
        summary = classreport.summary([record])
        self.assertIn("## Needs a look", summary)
        self.assertIn("- s1 " + self.ex.id + ": graded again alone on the GPU: its first run, beside 1 other",
                      summary)

    def test_timeout_beside_another_is_graded_again_alone(self):
        res, seen, runs = self.grade("hang", GpuLock(), neighbour=True, timeout=1.0)
        self.assertEqual((runs, res.status), (2, "passed"))
        self.assertIn("beside 1 other submission on the GPU, timed out (timed out after 1 s in Alpha.T1)",
                      res.details[-1])

    def test_no_rerun_without_another_on_the_gpu(self):
        # the lock was never shared: out of memory is the exercise's own
        res, _, runs = self.grade(OOM, GpuLock(), neighbour=False)
        self.assertEqual((runs, res.status, res.correctness_points), (1, "failed", 0.0))
        self.assertNotIn("alone", "\n".join(res.details))
        self.assertIn("out of memory", "\n".join(res.details))
        self.assertEqual(res.alone, "")

    def test_no_rerun_without_a_lock(self):
        # a student's own grading (no lock): nothing else grades on the GPU
        res, _, runs = self.grade(OOM, None, neighbour=False)
        self.assertEqual((runs, res.status), (1, "failed"))

    def test_no_rerun_for_a_wrong_answer(self):
        # a neighbour cannot change what a kernel computes
        res, seen, runs = self.grade(MISMATCH, GpuLock(), neighbour=True)
        self.assertEqual((runs, res.status, res.correctness_points), (1, "failed", 0.0))
        self.assertEqual(len(seen), 1)
        self.assertNotIn("alone", "\n".join(res.details))

    def test_no_rerun_once_the_submission_is_out_of_time(self):
        # its first run stopped by the submission's deadline: said, not run again
        res, _, runs = self.grade("hang", GpuLock(), neighbour=True, deadline=time.monotonic() + 1.5)
        self.assertEqual((runs, res.status), (1, "timeout"))
        self.assertTrue(res.details[-1].startswith("not graded again alone on the GPU: its first run, beside "
                                                   "1 other submission on the GPU, timed out"), res.details)
        self.assertEqual(res.alone, res.details[-1])

    def test_what_a_neighbour_can_cause(self):
        def res(status, reason="", details=()):
            r = grading.Result(self.ex, 10.0, status=status, reason=reason, details=list(details))
            return grading.neighbour_failure(r)
        failed = "1 of 2 tests failed (all must pass for the points)"
        self.assertEqual(res("failed", failed, ["FAILED Alpha.T1\n" + OOM]), "ran out of memory")
        self.assertEqual(res("crashed", "crashed: exit code 1 without a test report",
                             ["cudalab remote: the runner could not start: cudalab remote: creating the "
                              "allocation: CUDA_ERROR_OUT_OF_MEMORY"]), "ran out of memory")
        self.assertEqual(res("sanitizer", "compute-sanitizer memcheck: Internal Sanitizer Error: The Sanitizer "
                             "encountered an error while launching k and didn't track the launch. Errors might "
                             "go undetected. (Unable to allocate enough memory to perform the requested "
                             "operation)"), "ran out of memory")
        self.assertEqual(res("sanitizer", "compute-sanitizer racecheck: timed out after 300 s"), "timed out")
        self.assertEqual(res("timeout", "hidden tests: timed out after 300 s in A.B"), "timed out")
        self.assertEqual(res("crashed", "crashed: SIGKILL in Alpha.T1"), "was killed (SIGKILL)")
        self.assertIsNone(res("crashed", "crashed: SIGSEGV in Alpha.T1"))
        self.assertIsNone(res("failed", failed, ["FAILED Alpha.T1\n" + MISMATCH]))
        self.assertIsNone(res("sanitizer", "compute-sanitizer memcheck: Invalid __global__ write of size 4 bytes"))
        self.assertIsNone(res("memory", "killed: used more than 8192 MiB of host memory"))  # its own limit
        self.assertIsNone(res("forbidden", "uses forbidden API 'cudaMalloc' (out of memory)"))
        self.assertIsNone(res("passed", "all 2 tests passed", ["skipped: out of memory"]))


if __name__ == "__main__":
    unittest.main()
