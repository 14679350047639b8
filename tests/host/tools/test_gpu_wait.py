"""A benchmark never timed on a busy GPU, without a GPU: the wait for the GPU to be free before
each benchmark (gpuwatch.wait_idle, grading.wait_for_gpu), the grader's own programs that
outlive their checker (proc.leftovers), the second run when the first missed its target while
another process was on the GPU or the SM clock fell, and the verdict 'gpu_busy' when it stays
busy: the speed points neither earned nor counted. On fake nvidia-smi answers and fake
benchmark programs.

Seen on an H100: `tools/grade 7 --solutions --perf --parallel 8` timed 7.1 while a process of
its own test phase was still on the GPU ("GPU shared with 1 other process(es): 30339 [No
data]") and gave 0.82 of the baseline against a target of 0.85, which the same code meets alone.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path
from unittest import mock

from test_grade import GradeTestCase, _write_exe
from test_speed import reps

from cudalab_grade import gpuwatch, grading, leaderboard, proc
from cudalab_grade.gpucheck import results as gcresults

OTHER = "30339, [No data]\n"


class FakeClock:
    """time.monotonic and time.sleep of a wait that takes no time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def smi_answers(apps: list[str | None], clocks: str = "1980, 2619, 1980"):
    """A fake run_smi: the compute-apps query answers apps[0], apps[1], ... (the last one
    again and again); records the argv of every call in .calls."""
    answers = list(apps)

    def smi(args):
        smi.calls.append(args)
        if args[0].startswith("--query-gpu"):
            return clocks
        return answers.pop(0) if len(answers) > 1 else answers[0]
    smi.calls = []
    return smi


class WaitIdleTest(unittest.TestCase):
    def wait(self, smi, **kw):
        clock = FakeClock()
        kw.setdefault("limit", 20.0)
        idle = gpuwatch.wait_idle(kw.pop("env", {}), poll=0.5, smi=smi, clock=clock,
                                  sleep=clock.sleep, **kw)
        return idle, clock.now

    def test_waits_then_proceeds_when_the_other_process_is_gone(self):
        smi = smi_answers([OTHER] * 4 + [""])
        idle, now = self.wait(smi, env={"CUDA_VISIBLE_DEVICES": "2"})
        self.assertEqual((idle.others, idle.blocking, idle.busy()), ([], [], False))
        self.assertEqual(now, 2.0)  # four polls saw it, 0.5 s apart; the fifth did not
        self.assertEqual(idle.describe(), "waited 2 s for the GPU to be free")
        self.assertTrue(all(c[-2:] == ["-i", "2"] for c in smi.calls))  # the slot's GPU alone

    def test_free_at_once_says_nothing(self):
        idle, now = self.wait(smi_answers([f"{os.getpid()}, python3\n"]))  # the grader is ours
        self.assertEqual((now, idle.others, idle.describe()), (0.0, [], ""))

    def test_gives_up_after_the_bound_and_says_what_stayed(self):
        idle, now = self.wait(smi_answers([OTHER]))
        self.assertEqual(now, 20.0)
        self.assertTrue(idle.busy())
        self.assertEqual((idle.others, idle.blocking), (["30339 [No data]"], ["30339 [No data]"]))
        self.assertEqual(idle.describe(),
                         "waited 20 s for the GPU to be free, in vain: 30339 [No data] still there")

    def test_a_process_waited_for_in_vain_before_is_not_waited_for_again(self):
        idle, now = self.wait(smi_answers([OTHER]), ignore=frozenset({30339}))
        self.assertEqual(now, 0.0)
        self.assertTrue(idle.busy())  # still reported: the benchmark will share the GPU
        self.assertEqual(idle.blocking, [])
        self.assertEqual(idle.describe(), "30339 [No data] on the GPU, waited for in vain before")

    def test_waits_for_the_graders_own_programs_still_ending(self):
        left = [[(123, "runner")], [(123, "runner")], []]
        idle, now = self.wait(smi_answers([""]), pending=lambda: left.pop(0))
        self.assertEqual((now, idle.others, idle.blocking), (1.0, [], []))
        # without nvidia-smi: the grader's programs alone, other processes unknown
        left = [[(123, "runner")]] * 3 + [[]]
        idle, now = self.wait(lambda args: None, pending=lambda: left.pop(0))
        self.assertEqual((now, idle.others, idle.busy()), (1.5, gpuwatch.UNKNOWN, False))

    def test_without_nvidia_smi_nothing_to_wait_for(self):
        idle, now = self.wait(lambda args: None)
        self.assertEqual((now, idle.others, idle.describe()), (0.0, gpuwatch.UNKNOWN, ""))


class ClockDropTest(unittest.TestCase):
    def monitor(self, clocks: list[str]):
        answers = list(clocks)
        m = gpuwatch.Monitor({}, interval=60, smi=lambda a: answers.pop(0) if a[0].startswith("--query-gpu") else "")
        return m

    def test_a_sample_during_the_run_far_below_the_maximum(self):
        m = self.monitor(["1980, 2619, 1980", "900, 2619, 1980"])
        m.sample()
        m.sample(during=True)
        self.assertEqual(m.clock_drop(), "the SM clock fell to 900 MHz of 1980")

    def test_an_idle_gpu_before_the_run_and_a_loaded_one_during_it(self):
        m = self.monitor(["345, 2619, 1980", "1755, 2619, 1980", "345, 2619, 1980"])
        m.sample()               # before: idle clocks do not count
        m.sample(during=True)    # 1755 of 1980: a loaded H100, not a fall
        m.sample()
        self.assertIsNone(m.clock_drop())
        self.assertIsNone(self.monitor([]).clock_drop())  # nothing sampled: unknown, no fall


class LeftoversTest(unittest.TestCase):
    """proc.leftovers: what the grader's ended GPU programs left running, and their reaping."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="test-gpu-wait-")
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)
        patch = mock.patch.object(proc, "_ended", {})
        patch.start()
        self.addCleanup(patch.stop)

    def test_a_child_that_outlives_its_program_is_listed_until_it_ends(self):
        pid_file = self.tmp / "child.pid"
        # a "checker" that starts a "runner" (same process group) and exits before it
        prog = (f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
                f"'import time; time.sleep(1.0)'], stdout=subprocess.DEVNULL, "
                f"stderr=subprocess.DEVNULL); open({str(pid_file)!r}, 'w').write(str(p.pid))")
        p = proc.run([sys.executable, "-c", prog], 30, self.tmp, gpu="3")
        self.assertEqual(p.returncode, 0)
        child = int(pid_file.read_text())
        self.assertIn(child, [pid for pid, _ in proc.leftovers("3")])
        self.assertIn(child, [pid for pid, _ in proc.leftovers()])  # any GPU
        self.assertEqual(proc.leftovers("0"), [])                   # another GPU's programs
        deadline = time.monotonic() + 20
        while proc.leftovers("3") and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(proc.leftovers("3"), [])
        self.assertEqual(proc._ended, {})  # the empty group forgotten

    def test_a_program_run_without_gpu_is_not_watched(self):
        proc.run([sys.executable, "-c", "pass"], 30, self.tmp)
        self.assertEqual(proc._ended, {})

    def test_an_unreaped_child_is_reaped(self):
        p = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
        proc._ended[p.pid] = ""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # until it is a zombie
            with open(f"/proc/{p.pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.05)
        self.assertEqual(proc.leftovers(""), [])  # dead: nothing to wait for ...
        self.assertFalse(Path(f"/proc/{p.pid}").exists())  # ... and reaped, not left a zombie
        p.wait()  # subprocess takes the reaping by another for an exit status 0


# The bench program of the tests below: run N (1, 2, ...) writes BENCH_<N> (Google Benchmark
# entries), after ACTION_<N> (Python); it counts its runs in RUNS.
BENCH = """
    import json, os, sys, time
    runs = {runs!r}
    n = len(open(runs).read().split()) + 1 if os.path.exists(runs) else 1
    open(runs, "a").write("run\\n")
    entries = {entries!r}
    actions = {actions!r}
    exec(actions[min(n, len(actions)) - 1])
    for a in sys.argv[1:]:
        if a.startswith("--benchmark_out="):
            with open(a.split("=", 1)[1], "w") as f:
                json.dump({{"context": {{}}, "benchmarks": entries[min(n, len(entries)) - 1]}}, f)
"""
SLOW = reps("alpha/int32/1024", [4000] * 5) + reps("cub_base/int32/1024", [1000] * 5)  # 0.25 < 0.5
FAST = reps("alpha/int32/1024", [1000] * 5) + reps("cub_base/int32/1024", [1000] * 5)  # 1.0


class GraderWaitTest(GradeTestCase):
    """The grader before and around a benchmark (tools/grade --perf), with a fake nvidia-smi."""

    def setUp(self):
        super().setUp()
        self.dir = Path(self._tmp.name)
        self.runs = self.dir / "runs"
        for patch in (mock.patch.object(grading, "IDLE_WAIT_S", 1.0),
                      mock.patch.object(grading, "IDLE_POLL_S", 0.05),
                      mock.patch.object(grading, "_waited_out", set())):
            patch.start()
            self.addCleanup(patch.stop)

    def smi(self, apps: str, clocks: str = 'print("1980, 2619, 1980")') -> None:
        """nvidia-smi: the clocks query runs `clocks`, the compute-apps query `apps` (Python)."""
        _write_exe(self.tree.tools / "nvidia-smi",
                   "import os, sys\n"
                   f"d = {str(self.dir)!r}\n"
                   "if any(a.startswith('--query-gpu') for a in sys.argv):\n"
                   + textwrap.indent(textwrap.dedent(clocks).strip(), "    ") + "\n"
                   "else:\n"
                   + textwrap.indent(textwrap.dedent(apps).strip(), "    ") + "\n")

    def bench(self, entries: list[list[dict]], actions: list[str] = ("pass",)) -> None:
        _write_exe(self.tree.bin / "alpha_bench_starter",
                   BENCH.format(runs=str(self.runs), entries=entries, actions=list(actions)))

    def grade(self, *more):
        self.tree.passing("alpha")
        _, data, _ = self.tree.grade_json("--no-build", "--perf", "--fast", *more)
        return data, self.exercise(data, "1.1")

    def nruns(self) -> int:
        return len(self.runs.read_text().split()) if self.runs.exists() else 0

    def test_waits_for_the_other_process_then_measures(self):
        # another process for the first three queries, then none; the benchmark records how
        # many times nvidia-smi had shown it when the benchmark started
        self.smi(f"""
                n = os.path.join(d, "shown")
                k = int(open(n).read()) if os.path.exists(n) else 0
                if k < 3:
                    print({OTHER.strip()!r})
                    open(n, "w").write(str(k + 1))
        """)
        self.bench([FAST], [f"open({str(self.dir / 'at_start')!r}, 'w').write(open("
                            f"{str(self.dir / 'shown')!r}).read())"])
        data, alpha = self.grade("1.1")
        self.assertEqual((self.dir / "at_start").read_text(), "3")  # not before the GPU was free
        self.assertEqual(self.nruns(), 1)
        self.assertEqual(alpha["gpu"]["other_processes"], [])
        self.assertEqual((alpha["perf_verdict"], alpha["perf_points"]), ("ok", 4))
        self.assertRegex(output(data, "1.1"), r"waited [0-9.]+ s for the GPU to be free")

    def test_gives_up_after_the_bound_and_takes_no_points(self):
        self.smi(f"print({OTHER.strip()!r})")  # someone else's job that stays
        self.bench([SLOW])
        start = time.monotonic()
        data, alpha = self.grade("1.1")
        self.assertLess(time.monotonic() - start, 30)
        self.assertEqual(self.nruns(), 2)  # measured again: still shared, still below 0.5
        self.assertEqual(alpha["perf_verdict"], "gpu_busy")
        self.assertEqual(alpha["status"], "passed")
        # the speed points neither earned nor counted: 10 of 10, not 10 of 14
        self.assertEqual((alpha["correctness_points"], alpha["perf_points"], alpha["max_points"]),
                         (10, 0, 10))
        self.assertEqual(data["score"], 10)
        self.assertEqual(alpha["ratio"], 0.25)  # what was measured, for information
        self.assertIn("perf: not measured fairly: another process was on the GPU while it was "
                      "timed (30339 [No data]), after waiting for it, in both runs; the ratio "
                      "measured, 0.25 of cub_base (target 0.5), is not your speed: its 4 speed "
                      "points are neither earned nor counted; grade again on an idle GPU",
                      alpha["reason"])
        details = output(data, "1.1")
        self.assertIn("measured twice: the first run, 0.25, was dropped: another process was on "
                      "the GPU (30339 [No data])", details)
        self.assertIn("in vain: 30339 [No data] still there", details)  # the first wait, 1 s
        self.assertIn("30339 [No data] on the GPU, waited for in vain before", details)  # no second
        self.assertIsNone(leaderboard._ratio(alpha))  # never ranked
        # the scoreboard says it in its own words
        _, out, _ = self.tree.grade("--no-build", "--perf", "--fast", "1.1", "-q")
        self.assertRegex(out, r"1\.1\s+alpha\s+3/3\s+GPU busy\s+10\.0/10\s")
        # gpu-check does not call the solution slow, nor the grader's maximum wrong
        check = gcresults.evaluate_solutions(data, {"1.1": 14.0})
        self.assertEqual(len(check["problems"]), 1)
        self.assertIn("1.1 alpha: speed not measured, another process was on the GPU: run again "
                      "on an idle GPU", check["problems"][0])

    def test_class_reports_leave_the_points_out_and_say_why(self):
        from cudalab_grade import classreport
        from cudalab_grade.manifest import load_all
        self.smi(f"print({OTHER.strip()!r})")
        self.bench([SLOW])
        data, _ = self.grade("1.1")
        data["cudalab"]["student"] = "s1"
        known = {e.id: e for c in load_all(self.tree.root) for e in c.exercises}
        self.assertIsNone(classreport.validate(data, "s1", known))  # a record --merge accepts
        alpha = self.exercise(data, "1.1")
        alpha["perf_points"] = 4.0   # points given for a speed not measured fairly: refused
        self.assertEqual(classreport.validate(data, "s1", known),
                         "exercise 1.1: speed points for a speed not measured fairly")
        alpha["perf_points"], alpha["perf_verdict"] = 0.0, "ok"  # a maximum of 10 otherwise
        self.assertEqual(classreport.validate(data, "s1", known), "exercise 1.1: max_points is not 14")
        alpha["perf_verdict"] = "gpu_busy"
        summary = classreport.summary([data])
        self.assertIn("s1 1.1: speed not measured fairly (another process on the GPU in both runs): "
                      "its speed points are neither earned nor counted; grade its speed again alone",
                      summary)
        self.assertIn("1.1: speed not measured (GPU busy), its points not counted: grade again",
                      classreport.gradebook([data]))

    def test_first_run_shared_and_slow_is_measured_again_alone(self):
        # the other process shows up at the end of the first run and is gone before the second
        self.smi("""
                m = os.path.join(d, "marker")
                if os.path.exists(m):
                    print("30339, [No data]")
                    shown = os.path.join(d, "shown")
                    k = int(open(shown).read()) if os.path.exists(shown) else 0
                    open(shown, "w").write(str(k + 1))
                    if k + 1 >= 2:
                        os.remove(m)
        """)
        self.bench([SLOW, FAST], [f"open({str(self.dir / 'marker')!r}, 'w').close()", "pass"])
        _, alpha = self.grade("1.1")
        self.assertEqual(self.nruns(), 2)
        self.assertEqual(alpha["repetitions"], 5)  # the second run alone: the first is dropped
        self.assertEqual((alpha["ratio"], alpha["perf_points"], alpha["perf_verdict"]), (1.0, 4, "ok"))
        self.assertEqual(alpha["gpu"]["other_processes"], [])
        self.assertIn("(measured twice: the first run, 0.25, was dropped: another process was on "
                      "the GPU (30339 [No data]))", alpha["reason"])

    def test_a_straddling_run_pooled_with_a_shared_one_is_not_scored(self):
        # one second run in all: the first interval straddles 0.5 (pooled, as always); another
        # process comes during the second, and the pooled ratio misses the target
        self.smi(f"""
                if os.path.exists(os.path.join(d, "marker")):
                    print({OTHER.strip()!r})
        """)
        straddling = reps("alpha/int32/1024", [2500, 1667, 2000, 2200, 1800]) \
            + reps("cub_base/int32/1024", [1000] * 5)
        slower = reps("alpha/int32/1024", [2600] * 5) + reps("cub_base/int32/1024", [1000] * 5)
        self.bench([straddling, slower], ["pass", f"open({str(self.dir / 'marker')!r}, 'w').close()"])
        data, alpha = self.grade("1.1")
        self.assertEqual(self.nruns(), 2)
        self.assertEqual(alpha["repetitions"], 10)
        self.assertEqual((alpha["perf_verdict"], alpha["perf_points"], alpha["max_points"]),
                         ("gpu_busy", 0, 10))
        self.assertIn("(measured twice: the first interval straddled the target)", output(data, "1.1"))
        self.assertIn("not measured fairly: another process was on the GPU while it was timed "
                      "(30339 [No data]); the ratio measured, 0.39 of cub_base", alpha["reason"])

    def test_shared_but_fast_enough_is_measured_once(self):
        self.smi(f"print({OTHER.strip()!r})")
        self.bench([FAST])
        _, alpha = self.grade("1.1")
        self.assertEqual(self.nruns(), 1)  # the other process cost the student nothing
        self.assertEqual((alpha["perf_points"], alpha["perf_verdict"]), (4, "ok"))
        self.assertIn("GPU shared with another process", alpha["reason"])

    def test_first_run_with_a_fallen_clock_is_measured_again(self):
        # the SM clock at 900 of 1980 MHz while the first run runs: that run lasts until a
        # sample taken during it (every second) has seen it
        self.smi('print("")', clocks="""
                if os.path.exists(os.path.join(d, "hot")):
                    print("900, 2619, 1980")
                    open(os.path.join(d, "hot_seen"), "w").close()
                else:
                    print("1980, 2619, 1980")
        """)
        hot, seen = str(self.dir / "hot"), str(self.dir / "hot_seen")
        self.bench([SLOW, FAST], [f"open({hot!r}, 'w').close()\n"
                                  "t = time.monotonic()\n"
                                  f"while not os.path.exists({seen!r}) and time.monotonic() - t < 20:\n"
                                  "    time.sleep(0.05)\n"
                                  f"os.remove({hot!r})", "pass"])
        _, alpha = self.grade("1.1")
        self.assertEqual(self.nruns(), 2)
        self.assertEqual((alpha["ratio"], alpha["perf_points"]), (1.0, 4))
        self.assertIn("the first run, 0.25, was dropped: the SM clock fell to 900 MHz of 1980",
                      alpha["reason"])

    def test_parallel_tests_leftovers_are_gone_before_the_benchmark(self):
        # 1.1's test program leaves a "runner" behind for 4 s after it exits; the
        # benchmark (after the parallel test phase) must start only once it is gone
        child = self.dir / "child.pid"
        seen = self.dir / "seen"
        self.tree.passing("alpha")
        self.tree.passing("beta")
        test = self.tree.bin / "alpha_test_starter"
        test.write_text(test.read_text().replace(
            "sys.stdout.write(",
            f"import subprocess as sp; open({str(child)!r}, 'w').write(str(sp.Popen([sys.executable, "
            f"'-c', 'import time; time.sleep(4.0)'], stdout=sp.DEVNULL, stderr=sp.DEVNULL).pid))\n"
            "sys.stdout.write(", 1))
        # alive: in /proc and not a zombie (a dead orphan may wait for a PID 1 that reaps late)
        self.bench([FAST], [f"pid = open({str(child)!r}).read().strip()\n"
                            "try:\n"
                            "    state = open('/proc/' + pid + '/stat').read().rsplit(')', 1)[1].split()[0]\n"
                            "except OSError:\n"
                            "    state = 'gone'\n"
                            f"open({str(seen)!r}, 'w').write(str(state not in ('Z', 'X', 'gone')))"])
        with mock.patch.object(grading, "IDLE_WAIT_S", 20.0):
            _, data, _ = self.tree.grade_json("--no-build", "--perf", "--fast", "--parallel", "2")
        alpha = self.exercise(data, "1.1")
        self.assertTrue(child.exists())
        self.assertEqual(seen.read_text(), "False")  # the runner had ended (nvidia-smi: unknown)
        self.assertEqual((alpha["perf_points"], alpha["gpu"]["other_processes"]), (4, "unknown"))
        self.assertRegex(output(data, "1.1"), r"waited [0-9.]+ s for the GPU to be free")


class ClassLockTest(unittest.TestCase):
    """Class grading (gpulock.py): the wait runs under the GPU's exclusive lock, before the
    benchmark, on the worker's GPU (CUDA_VISIBLE_DEVICES of its slot)."""

    def test_wait_under_the_exclusive_lock_on_the_slots_gpu(self):
        from cudalab_grade.gpulock import GpuLock
        from cudalab_grade.manifest import load_all
        root = Path(__file__).resolve().parents[3]
        ex = next(e for c in load_all(root) for e in c.exercises if e.perf)
        lock, seen = GpuLock(), []

        def fake_tests(ex_, opts, res):
            res.status, res.correctness_points = grading.PASSED, float(ex_.points)
            return True

        def fake_wait(env, limit, poll, pending=None, ignore=frozenset(), **kw):
            seen.append(("wait", lock._writer, env, limit, pending()))
            return gpuwatch.Idle(0.0, [])

        def fake_bench(ex_, opts, target, reps):
            seen.append(("bench", lock._writer))
            return proc.Proc(1, "boom", 0.0), "", {}, None
        opts = grading.Options(root=root, build_dir=root / "build" / "none", perf=True,
                               gpu_lock=lock, extra_env={"CUDA_VISIBLE_DEVICES": "1"})
        with mock.patch.object(grading, "run_tests", fake_tests), \
                mock.patch.object(grading.gpuwatch, "wait_idle", fake_wait), \
                mock.patch.object(grading, "_bench_once", fake_bench), \
                mock.patch.object(grading.source, "check", lambda *a, **k: None), \
                mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": "0"}):
            res = grading.grade(ex, opts)
        self.assertEqual(seen, [("wait", True, {"CUDA_VISIBLE_DEVICES": "1"}, grading.IDLE_WAIT_S, []),
                                ("bench", True)])
        self.assertIn("perf: benchmark exit code 1", res.reason)

    def test_the_graders_own_cuda_visible_devices_counts(self):
        # tools/grade run as CUDA_VISIBLE_DEVICES=3 tools/grade ...: the benchmark runs on GPU 3
        opts = grading.Options(root=Path("."), build_dir=Path("."))
        with mock.patch.dict(os.environ, {"CUDA_VISIBLE_DEVICES": "3"}):
            self.assertEqual(grading._gpu_env(opts), {"CUDA_VISIBLE_DEVICES": "3"})
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(grading._gpu_env(opts), {})


def output(data: dict, ex_id: str) -> str:
    """What the student reads of one exercise: its reason and details (Gradescope's output)."""
    return next(t["output"] for t in data["tests"] if t["number"] == ex_id)


if __name__ == "__main__":
    unittest.main()
