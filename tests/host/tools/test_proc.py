"""Tests of stopping a grader (tools/cudalab_grade/proc.py): a grader told to stop, or timed out
by its caller, leaves none of the programs it started running. Without a sandbox those programs
run in sessions of their own, out of reach of a kill of the grader's process group (a class
graded with CUDALAB_SANDBOX=none and then stopped left a hanging test on the GPU, which then
slowed every benchmark of the next run on the H100)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[3] / "tools"
sys.path.insert(0, str(TOOLS))

from cudalab_grade import proc  # noqa: E402

# A fake grader: two worker threads each run a "test" (sleep, in its own session) through
# proc.run, as the class grader does; it writes the tests' pids to PIDS, then waits.
GRADER = textwrap.dedent("""
    import sys, threading, time
    sys.path.insert(0, {tools!r})
    from pathlib import Path
    from cudalab_grade import proc
    proc.terminate_on_signals()
    pids = []
    def worker():
        while True:  # one test after another, as a grader's worker does
            proc.run(["sleep", "600"], None, Path("."), on_start=lambda pid: pids.append(pid) or
                     Path({pids!r}).write_text(" ".join(map(str, pids))))
    for _ in range(2):
        threading.Thread(target=worker, daemon=True).start()
    time.sleep(600)
""")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class StopTest(unittest.TestCase):
    def start_grader(self, d: Path) -> tuple[list[str], Path]:
        script, pids = d / "grader.py", d / "pids"
        script.write_text(GRADER.format(tools=str(TOOLS), pids=str(pids)))
        return [sys.executable, str(script)], pids

    def wait_pids(self, pids: Path, n: int = 2) -> list[int]:
        for _ in range(200):
            if pids.exists() and len(pids.read_text().split()) >= n:
                return [int(x) for x in pids.read_text().split()]
            time.sleep(0.05)
        self.fail("the fake grader started no tests")

    def assert_gone(self, pids: list[int]) -> None:
        for _ in range(100):
            if not any(alive(p) for p in pids):
                return
            time.sleep(0.05)
        self.fail(f"tests still running after the grader stopped: {[p for p in pids if alive(p)]}")

    def test_sigterm_stops_the_graders_tests(self):
        with tempfile.TemporaryDirectory() as d:
            argv, pids_file = self.start_grader(Path(d))
            g = subprocess.Popen(argv, start_new_session=True)
            try:
                pids = self.wait_pids(pids_file)
                g.send_signal(signal.SIGTERM)
                self.assertEqual(g.wait(timeout=20), 128 + signal.SIGTERM)
                self.assert_gone(self.wait_pids(pids_file) + pids)
            finally:
                g.kill()

    def test_a_timed_out_grader_gets_sigterm_and_stops_its_tests(self):
        with tempfile.TemporaryDirectory() as d:
            argv, pids_file = self.start_grader(Path(d))
            p = proc.run(argv, 1.5, Path(d), term_grace=15, limit_files=False)
            self.assertTrue(p.timed_out)
            self.assert_gone(self.wait_pids(pids_file))

    def test_nothing_starts_after_stop_all(self):
        # in a child: stop_all is for good in the process that calls it
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import sys; sys.path.insert(0, {str(TOOLS)!r})
            from pathlib import Path
            from cudalab_grade import proc
            proc.stop_all()
            p = proc.run(["true"], 5, Path("."))
            print(p.returncode, p.output)
        """)], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.stdout.strip(), "None not started: true: the grader is stopping")


if __name__ == "__main__":
    unittest.main()
