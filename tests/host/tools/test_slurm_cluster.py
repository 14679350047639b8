"""A real Slurm cluster: `tools/grade --submissions DIR --slurm`, then `submit.sh`.

Starts a one-node cluster on localhost in a temporary folder (munged, slurmctld
and slurmd of the machine's slurm-wlm, each with its own socket, ports, state
and logs there; nothing of the machine's own Slurm or MUNGE is used), with a
`gpu` GRES of one "device" (/dev/null: this Slurm drops a file-less GPU), so
the scripts' `--gres=gpu:1` jobs are scheduled without a GPU. A class made by
tools/make-class (3 students, exercise 1.1 only, to keep the instructor's
build small: about 30 s on 2 cores) goes through the real course:
prepare.sbatch builds the instructor's tree (CMake, nvcc), the array grades
one student per task, the merge writes the gradebook. Without a GPU every
exercise is "not graded: no CUDA device", which is enough to check the
orchestration: the array indices, the dependencies, the merge, a task that
fails (its student's folder gone) while the others are merged, and a build
that fails (the array is cancelled, the merge names every task).

The daemons get SIGTERM when the test's process ends, however it ends
(PR_SET_PDEATHSIG), and the jobs are cancelled first on any other way out
(tearDownClass, or atexit after Ctrl-C); a test killed outright (SIGKILL)
mid-run may leave a running job's slurmstepd behind, waiting for its slurmd:
end it by its pid.

Skipped only where the daemons are not installed (`apt-get install
slurm-wlm`; CI installs it). A cluster that cannot start is a failure, with
the daemons' logs.
"""
from __future__ import annotations

import atexit
import csv
import ctypes
import io
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from toolload import ROOT

# The daemons are in /usr/sbin, which a user's PATH may lack.
SEARCH = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
SEARCH += ["/usr/sbin", "/sbin", "/usr/bin"]


def _find(name: str) -> str | None:
    for d in SEARCH:
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


PROGRAMS = {n: _find(n) for n in ("munged", "slurmctld", "slurmd", "sbatch", "scontrol",
                                  "scancel")}
MISSING = sorted(n for n, p in PROGRAMS.items() if p is None)
NODE = "cudalab-node"
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
            "PREEMPTED", "BOOT_FAIL", "DEADLINE"}
WAIT = 600  # seconds for one class (prepare, array, merge); ~1 minute on 2 cores


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _end_with_the_test() -> None:
    """In a daemon before exec: SIGTERM when the test's process dies, however it dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _tail(p: Path, n: int = 40) -> str:
    try:
        return "\n".join(p.read_text(errors="replace").splitlines()[-n:])
    except OSError as e:
        return f"({e})"


class Cluster:
    """munged, slurmctld and slurmd in `base`, as the user running the test."""

    def __init__(self, base: Path):
        self.base = base
        self.procs: dict[str, subprocess.Popen] = {}
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.conf = base / "slurm.conf"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        self.env["SLURM_CONF"] = str(self.conf)

    def logs(self) -> str:
        parts = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log", "munged.out", "slurmctld.out",
                     "slurmd.out"):
            p = self.base / name
            if p.exists():
                parts.append(f"--- {name} (last lines)\n{_tail(p)}")
        return "\n".join(parts)

    def _spawn(self, name: str, argv: list[str]) -> None:
        with open(self.base / f"{name}.out", "wb") as out:
            self.procs[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                                stderr=subprocess.STDOUT, env=self.env,
                                                start_new_session=True,
                                                preexec_fn=_end_with_the_test)

    def _until(self, what: str, ok, timeout: float) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with status {p.returncode} while waiting "
                                       f"for {what}\n{self.logs()}")
            if ok():
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}\n{self.logs()}")

    def start(self) -> None:
        atexit.register(self.stop)  # also after Ctrl-C, which skips tearDownClass
        b = self.base
        b.chmod(0o755)  # munged wants the socket's folders searchable by everyone
        for d in ("state", "spool", "munge"):
            (b / d).mkdir()
        (b / "munge").chmod(0o700)
        key = b / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        sock = b / "munge.socket"
        self._spawn("munged", [PROGRAMS["munged"], "--foreground", f"--socket={sock}",
                               f"--key-file={key}", f"--log-file={b / 'munged.log'}",
                               f"--pid-file={b / 'munged.pid'}",
                               f"--seed-file={b / 'munge' / 'seed'}"])
        self._until("munged's socket", sock.exists, 20)
        host = socket.gethostname().split(".")[0]
        ports = _free_ports(2)
        self.conf.write_text(f"""\
ClusterName=cudalabtest
SlurmctldHost={host}(127.0.0.1)
SlurmUser={self.user}
SlurmdUser={self.user}
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={b / 'state'}
SlurmdSpoolDir={b / 'spool'}
SlurmctldPidFile={b / 'slurmctld.pid'}
SlurmdPidFile={b / 'slurmd.pid'}
SlurmctldLogFile={b / 'slurmctld.log'}
SlurmdLogFile={b / 'slurmd.log'}
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=3600
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName={NODE} NodeHostname={host} NodeAddr=127.0.0.1 CPUs=4 RealMemory=4000 Gres=gpu:1 State=UNKNOWN
PartitionName=gpu Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
""")
        # No GPU: a GRES "device" that exists. This Slurm (22.05) drops a GPU without File=.
        (b / "gres.conf").write_text(f"NodeName={NODE} Name=gpu Count=1 File=/dev/null\n")
        self._spawn("slurmctld", [PROGRAMS["slurmctld"], "-D", "-i", "-f", str(self.conf)])
        self._spawn("slurmd", [PROGRAMS["slurmd"], "-D", "-N", NODE, "-f", str(self.conf)])

        def idle() -> bool:
            p = self.scontrol("show", "node", NODE, check=False)
            m = re.search(r"State=(\S+)", p.stdout)
            return p.returncode == 0 and m is not None and m.group(1) in ("IDLE", "MIXED")
        self._until(f"node {NODE} to be idle", idle, 60)

    def stop(self) -> None:
        """Cancel every job of this cluster, then stop the daemons (they are ours: by pid)."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            subprocess.run([PROGRAMS["scancel"], "--user", self.user], env=self.env,
                           capture_output=True, timeout=30)
            end = time.monotonic() + 20
            while time.monotonic() < end:
                p = self.scontrol("show", "job", check=False)
                if p.returncode != 0 or not re.search(r"JobState=(RUNNING|COMPLETING|PENDING)",
                                                      p.stdout):
                    break
                time.sleep(0.5)
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def scontrol(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([PROGRAMS["scontrol"], *args], env=self.env, capture_output=True,
                           text=True, timeout=30)
        if check and p.returncode != 0:
            raise RuntimeError(f"scontrol {' '.join(args)}: {p.stderr}\n{self.logs()}")
        return p

    def jobs(self, job_id: str) -> list[dict[str, str]]:
        """`scontrol show job -o`: one dict per job (per task of an array)."""
        p = self.scontrol("show", "job", "-o", job_id)
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in p.stdout.splitlines() if line]

    def wait(self, job_id: str, timeout: float = WAIT) -> None:
        def done() -> bool:
            return all(j.get("JobState") in TERMINAL for j in self.jobs(job_id))
        self._until(f"job {job_id} to end", done, timeout)


@unittest.skipIf(MISSING, f"Slurm is not installed here (no {', '.join(MISSING)}): "
                          "apt-get install slurm-wlm")
class SlurmClusterTest(unittest.TestCase):
    """One cluster; a class graded through submit.sh (setUpClass), then graded again with one
    student's folder gone, so that its array task fails."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="test-slurm-", ignore_cleanup_errors=True)
        cls.tmp = Path(cls._tmp.name)
        cls.cluster = Cluster(cls.tmp / "cluster")
        cls.cluster.base.mkdir()
        cls.tmp.chmod(0o755)
        try:
            cls.cluster.start()
            cls.subs = cls.tmp / "class"
            cls.make_class()
            cls.entries = sorted(c.name for c in cls.subs.iterdir())
            cls.out = cls.tmp / "out"
            cls.first = cls.submit()
            cls.snapshot = cls.tmp / "first"
            for name in ("gradebook.csv", "summary.md", "students"):
                src = cls.out / name
                if src.is_dir():
                    shutil.copytree(src, cls.snapshot / name)
                elif src.exists():
                    cls.snapshot.mkdir(exist_ok=True)
                    shutil.copy(src, cls.snapshot / name)
        except BaseException:
            cls.cluster.stop()
            cls._tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()
        cls._tmp.cleanup()

    @classmethod
    def make_class(cls) -> None:
        """Three students by tools/make-class; in the student edition, which leaves that tool
        out, three copies of the starter's 1.1 (without a GPU, all are graded alike)."""
        if not (ROOT / "tools" / "make-class").exists():
            for name in ("s001", "s002", "s003"):
                d = cls.subs / name / "01-reduce-scan-histogram"
                d.mkdir(parents=True)
                shutil.copy(ROOT / "starter" / "01-reduce-scan-histogram" / "sum_atomic.cu", d)
            return
        p = subprocess.run([sys.executable, str(ROOT / "tools" / "make-class"), str(cls.subs),
                            "-n", "3", "--kinds", "correct,starter,wrong"],
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"make-class: {p.stdout}{p.stderr}")

    @classmethod
    def grade(cls, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(ROOT / "tools" / "grade"), *args],
                              env=cls.cluster.env, capture_output=True, text=True, timeout=120)

    @classmethod
    def submit(cls, before_submit=None) -> dict:
        """Write the scripts, run submit.sh, wait for the merge; the jobs as scontrol shows them."""
        p = cls.grade("1.1", "--submissions", str(cls.subs), "--out", str(cls.out), "--slurm",
                      "--slurm-partition", "gpu", "--slurm-time", "00:10:00", "--jobs", "2")
        if p.returncode != 0:
            raise RuntimeError(f"tools/grade --slurm: {p.stdout}{p.stderr}")
        if before_submit:
            before_submit()
        p = subprocess.run([str(cls.out / "slurm" / "submit.sh")], env=cls.cluster.env,
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"submit.sh: {p.stdout}{p.stderr}\n{cls.cluster.logs()}")
        m = re.search(r"prepare job (\d+), grading array (\d+), merge job (\d+)", p.stdout)
        if m is None:
            raise RuntimeError(f"submit.sh said: {p.stdout}")
        prep, arr, merge = m.groups()
        cls.cluster.wait(merge)
        return {"prepare": cls.cluster.jobs(prep)[0], "merge": cls.cluster.jobs(merge)[0],
                "array": sorted(cls.cluster.jobs(arr), key=lambda j: j["ArrayTaskId"]),
                "ids": (prep, arr, merge)}

    def log(self, name: str) -> str:
        return (self.out / "slurm" / "logs" / name).read_text(errors="replace")

    def explain(self, jobs: dict) -> str:
        """Everything a failed check needs: the jobs' states and the logs."""
        lines = [f"{k}: {j['JobState']} exit {j['ExitCode']}" for k, j in
                 [("prepare", jobs["prepare"]), ("merge", jobs["merge"])]
                 + [(f"task {j['ArrayTaskId']}", j) for j in jobs["array"]]]
        for p in sorted((self.out / "slurm" / "logs").glob("*.out")):
            lines.append(f"--- {p.name}\n{_tail(p, 30)}")
        return "\n".join(lines) + "\n" + self.cluster.logs()

    # ------------------------------------------------------------------ one class, no failures

    def test_prepare_then_array_then_merge(self):
        jobs = self.first
        why = self.explain(jobs)
        self.assertEqual(jobs["prepare"]["JobState"], "COMPLETED", why)
        self.assertEqual([j["ArrayTaskId"] for j in jobs["array"]], ["0", "1", "2"], why)
        self.assertEqual({j["JobState"] for j in jobs["array"]}, {"COMPLETED"}, why)
        self.assertEqual(jobs["merge"]["JobState"], "COMPLETED", why)
        # each task started after the build ended, the merge after every task ended
        for j in jobs["array"]:
            self.assertGreaterEqual(j["StartTime"], jobs["prepare"]["EndTime"], why)
            self.assertLessEqual(j["EndTime"], jobs["merge"]["StartTime"], why)
            self.assertEqual((j["TresPerNode"], j["Partition"]), ("gres:gpu:1", "gpu"), why)
        self.assertFalse((self.out / "slurm" / "failed-tasks.txt").exists(), why)

    def test_task_i_grades_line_i_plus_1_of_entries(self):
        listed = (self.out / "slurm" / "entries.txt").read_text().split()
        self.assertEqual(listed, self.entries)
        _, arr, _ = self.first["ids"]
        for i, entry in enumerate(listed):
            text = self.log(f"grade-{arr}_{i}.out")
            self.assertIn(f"1 submission(s) graded: {self.out}/tasks/{entry}/gradebook.csv", text)

    def test_merged_gradebook_every_student_not_graded_no_gpu(self):
        rows = list(csv.DictReader(io.StringIO((self.snapshot / "gradebook.csv").read_text())))
        self.assertEqual([r["student"] for r in rows], self.entries, self.explain(self.first))
        for r in rows:
            self.assertEqual((r["1.1 sum_atomic"], r["total"], r["problems"]),
                             ("0.0", "0.0", "1.1: no GPU"))
        for entry in self.entries:
            data = json.loads((self.snapshot / "students" / entry / "results.json").read_text())
            self.assertEqual([(e["id"], e["status"], e["reason"]) for e in data["cudalab"]["exercises"]],
                             [("1.1", "no_gpu", "not graded: no CUDA device (grading needs a GPU)")])
            self.assertIn("not graded: no CUDA device",
                          (self.snapshot / "students" / entry / "report.md").read_text())
        summary = (self.snapshot / "summary.md").read_text()
        self.assertIn("3 submissions", summary)
        self.assertIn("not graded for lack of a CUDA device", summary)

    # ------------------------------------------------------------------ one task fails

    def test_x_failed_task_is_named_and_the_others_merged(self):
        """Graded again (same OUT, as a regrade): s002's folder is gone when its task runs."""
        gone = self.entries[1]
        away = self.tmp / "away"

        def remove():
            away.mkdir()
            (self.subs / gone).rename(away / gone)
        try:
            jobs = type(self).submit(remove)
        finally:
            if (away / gone).exists():
                (away / gone).rename(self.subs / gone)
        why = self.explain(jobs)
        _, arr, _ = jobs["ids"]
        self.assertEqual(jobs["prepare"]["JobState"], "COMPLETED", why)
        states = [(j["ArrayTaskId"], j["JobState"]) for j in jobs["array"]]
        self.assertEqual(states, [("0", "COMPLETED"), ("1", "FAILED"), ("2", "COMPLETED")], why)
        self.assertIn(f"no submission named {gone}", self.log(f"grade-{arr}_1.out"))
        # the merge ran after the failure, merged the others and named the failed task
        rows = list(csv.DictReader(io.StringIO((self.out / "gradebook.csv").read_text())))
        self.assertEqual([r["student"] for r in rows], [self.entries[0], self.entries[2]], why)
        self.assertFalse((self.out / "tasks" / gone).exists(), "the first run's output of "
                         f"{gone} was kept")
        summary = (self.out / "summary.md").read_text()
        self.assertIn(f"array task 1 ({gone})", summary, why)
        self.assertIn(f"grade-{arr}_1.out", summary, why)
        merge_log = self.log(f"merge-{jobs['ids'][2]}.out")
        self.assertIn(f"array task 1 ({gone})", merge_log, why)
        self.assertEqual(jobs["merge"]["JobState"], "FAILED", why)  # so sacct/mail show it

    def test_y_failed_build_cancels_the_array_and_the_merge_says_so(self):
        """prepare.sbatch fails (made to, in this test's copy): the array must not wait forever."""
        prepare = self.out / "slurm" / "prepare.sbatch"

        def break_the_build():
            text = prepare.read_text()
            prepare.write_text(text.replace("set -euo pipefail\n", "set -euo pipefail\n"
                                            "echo 'the build fails (test)' >&2; exit 1\n", 1))
        jobs = type(self).submit(break_the_build)
        why = self.explain(jobs)
        self.assertEqual(jobs["prepare"]["JobState"], "FAILED", why)
        self.assertEqual({(j["JobState"], j["Reason"]) for j in jobs["array"]},
                         {("CANCELLED", "DependencyNeverSatisfied")}, why)
        self.assertEqual(jobs["merge"]["JobState"], "FAILED", why)
        failed = (self.out / "slurm" / "failed-tasks.txt").read_text().splitlines()
        self.assertEqual([line.split(" did not finish")[0] for line in failed],
                         [f"array task {i} ({e})" for i, e in enumerate(self.entries)], why)
        # nothing of the earlier runs is merged as if it were this one's
        self.assertEqual((self.out / "gradebook.csv").read_text().splitlines()[1:], [], why)
        self.assertEqual(list((self.out / "tasks").iterdir()), [], why)


if __name__ == "__main__":
    unittest.main()
