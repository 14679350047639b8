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
import time
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))

from cudalab_grade import gpuwatch, proc  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
