"""Tests of class grading (tools/grade --submissions), without CUDA and without a GPU.

The instructor's build is replaced by a fake one: the "compiler" copies the
student's source into the object, `nm` lists the `// symbol:` lines of an
object. As in the real build, each exercise has a checker (the tests, no
student code: bin/<slug>_test_starter, made once by the instructor's build)
and a runner (bin/<slug>_runner_starter, the student's object linked by the
"linker"). The checker starts the runner as the real one does (the
CUDALAB_RUNNER_PREFIX words, CUDALAB_RUNNER, --cudalab-runner-fd 3; output
in CUDALAB_RUNNER_LOG), sends it a call over the socket and checks the
answer. The runner's behaviour is chosen by a `BEHAVE=...` word in the
student's source: pass, fail, hiddenfail, hang, segv, hog (host memory),
spam (100 MB of output), liar and noisy (print a no-device line and gtest
lines; wrong and right answers). A machine without a GPU is FAKE_NO_GPU=1.
Everything else, from the archives to the gradebook, is the real code.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import threading
import time
import unittest
import zipfile
from pathlib import Path
from unittest import mock

from toolload import load_tool

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tools"))
grade_cli = load_tool("grade", "cudalab_grade_cli_class")
grade_class_cli = load_tool("grade-class", "cudalab_grade_class_cli")
from cudalab_grade import classbuild, classgrade, proc, submissions  # noqa: E402
from cudalab_grade.manifest import load_all  # noqa: E402

PY = sys.executable
MANIFEST = """
[chapter]
number = 1
dir = "01-demo"
title = "Demo"

[[exercise]]
id = "1.1"
slug = "alpha"
title = "First"
file = "alpha.cu"
header = "include/x.cuh"
function = "cudalab::x::alpha"
test_filter = "*Alpha*"
points = 10
forbid = ["cub::"]
hints = ["a", "b"]
hidden_test = "alpha_hidden_test.cu"

[[exercise]]
id = "1.2"
slug = "beta"
title = "Second"
file = "beta.cu"
header = "include/x.cuh"
function = "cudalab::x::beta"
test_filter = "*Beta*"
points = 5
forbid = []
hints = ["a", "b"]
"""


def _exe(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{PY}\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


# The checker the instructor's (fake) build makes: the tests and no student code. Like
# tests/common/remote_checker.cu it starts the runner on the first call as
# <CUDALAB_RUNNER_PREFIX words> <CUDALAB_RUNNER> --cudalab-runner-fd 3, the socket on fd 3,
# the runner's output in CUDALAB_RUNNER_LOG, and checks what the runner answers.
# A machine without a GPU is FAKE_NO_GPU=1 (the checker says so, never the runner).
CHECKER = r'''
import json, os, signal, socket, subprocess, sys
suite, hidden = SUITE, HIDDEN
tests = ["T0", "T1", "T2"]
if "--gtest_list_tests" in sys.argv:
    with open(os.environ.get("FAKE_LOG", os.devnull) + ".list", "a") as log:
        log.write(json.dumps({"checker": os.path.abspath(sys.argv[0])}) + "\n")
    print(suite + ".")
    for t in tests:
        print("  " + t)
    sys.exit(0)
with open(os.environ.get("FAKE_LOG", os.devnull), "a") as log:
    log.write(json.dumps({"argv": sys.argv, "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
                          "seed": os.environ.get("CUDALAB_SEED"),
                          "runner": os.environ.get("CUDALAB_RUNNER"),
                          "runner_log": os.environ.get("CUDALAB_RUNNER_LOG"),
                          "prefix": os.environ.get("CUDALAB_RUNNER_PREFIX")}) + "\n")


def call(n):
    """One call of the exercise's API in the runner: (answer, None) or (None, why it was lost)."""
    prefix = json.loads(os.environ.get("CUDALAB_RUNNER_PREFIX") or "[]")
    argv = prefix + [os.environ["CUDALAB_RUNNER"], "--cudalab-runner-fd", "3"]
    mine, theirs = socket.socketpair()
    fd = theirs.fileno()
    out_path = os.environ.get("CUDALAB_RUNNER_LOG")
    out = open(out_path, "ab") if out_path else subprocess.DEVNULL

    def on_fd_3():
        if fd != 3:
            os.dup2(fd, 3)
        os.set_inheritable(3, True)
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                         close_fds=False, preexec_fn=on_fd_3)
    theirs.close()
    mine.sendall(json.dumps({"n": n}).encode() + b"\n")
    data = b""
    while not data.endswith(b"\n"):
        chunk = mine.recv(65536)
        if not chunk:
            break
        data += chunk
    mine.close()
    try:
        rc = p.wait(timeout=1)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = None
    if rc == 86:  # compute-sanitizer, the runner's prefix, found errors
        sanitizer_found.append(n)
    if data.endswith(b"\n"):
        return json.loads(data)["sum"], None
    if rc is None:
        how = "it did not answer and was killed"
    elif rc < 0:
        how = "it was killed by " + signal.Signals(-rc).name
    else:
        how = "it exited with code %d" % rc
    return None, ("the exercise's code (its runner process) stopped while calling %s: %s"
                  % (suite, how))


sanitizer_found = []
report = [{"name": t, "status": "RUN", "result": "COMPLETED"} for t in tests]
if os.environ.get("FAKE_NO_GPU"):
    print("cudalab: no CUDA device; GPU tests are skipped")
    for t in report:
        t["result"] = "SKIPPED"
else:
    print("[ RUN      ] %s.Big" % suite, flush=True)
    n = 1000 if hidden else 33
    got, lost = call(n)
    course = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0])))))
    if lost:
        report[1]["failures"] = [{"failure": lost}]
    elif got != n * (n + 1) // 2:
        seed = os.environ.get("CUDALAB_SEED", "7")
        report[1]["failures"] = [{"failure": "%s/tests/01-demo/check.cuh:83\n[%s] n = %d, seed = %s: "
                                             "wrong sum\n  rerun: CUDALAB_SEED=%s %s --gtest_filter='%s.T1'"
                                             % (course, suite, n, seed, seed, sys.argv[0], suite)}]
failed = any("failures" in t for t in report)
for a in sys.argv[1:]:
    if a.startswith("--gtest_output=json:"):
        with open(a.split(":", 1)[1], "w") as f:
            json.dump({"testsuites": [{"name": suite, "testsuite": report}]}, f)
if sanitizer_found and not failed:  # as cudalab_remote_finish() after RUN_ALL_TESTS
    print("cudalab: compute-sanitizer found errors in the exercise's code (its report is in the "
          "runner's output)", file=sys.stderr)
    sys.exit(86)
sys.exit(1 if failed else 0)
'''

# The runner the fake linker writes: the student's object (behaviour from its BEHAVE word)
# serving the checker's calls on fd 3. pass, fail, hiddenfail (wrong on the hidden tests'
# inputs), hang, segv, hog (host memory), spam (100 MB of output), liar (prints a no-device
# line and gtest lines, answers wrong), noisy (prints the same, answers right).
RUNNER = r'''
import json, os, re, signal, socket, sys, time
obj = OBJ
text = open(obj).read()
m = re.search(r"BEHAVE=(\w+)", text)
how = m.group(1) if m else "fail"
with open(os.environ.get("FAKE_LOG", os.devnull) + ".runner", "a") as log:
    log.write(json.dumps({"argv": sys.argv, "exe": os.path.abspath(sys.argv[0]), "obj": obj,
                          "gpu": os.environ.get("CUDA_VISIBLE_DEVICES")}) + "\n")
fd = int(sys.argv[sys.argv.index("--cudalab-runner-fd") + 1])
sock = socket.socket(fileno=fd)
line = b""
while not line.endswith(b"\n"):
    chunk = sock.recv(4096)
    if not chunk:
        sys.exit(3)
    line += chunk
n = json.loads(line)["n"]
right = n * (n + 1) // 2
answer = right
if how == "hang":
    time.sleep(60)
if how == "segv":
    os.kill(os.getpid(), signal.SIGSEGV)
if how == "hog":
    junk = bytearray(600 << 20); time.sleep(5)
if how == "spam":
    row = "x" * 1023 + "\n"
    for _ in range(100 * 1024):
        sys.stdout.write(row)
    print("spam: the last line")
    sys.stdout.flush()
if how in ("liar", "noisy"):
    print("cudalab: no CUDA device; GPU tests are skipped")
    print("[  SKIPPED ] Alpha.T1")
    print("[       OK ] Alpha.T1 (0 ms)")
    print("[  PASSED  ] 3 tests.")
    print("my debug line: n = %d" % n, flush=True)
if how in ("fail", "liar") or (how == "hiddenfail" and n > 100):
    answer = right + 1
sock.sendall(json.dumps({"sum": answer}).encode() + b"\n")
sock.recv(1)  # until the checker closes the socket
'''


def write_checker(path: Path, suite: str, hidden: bool) -> None:
    """A checker of the instructor's build (what `shared` makes; never relinked)."""
    prog = CHECKER.replace("SUITE, HIDDEN", f"{suite!r}, {hidden!r}", 1)
    _exe(path, prog)


class FakeCourse:
    """A course tree, a fake shared build, fake compiler/linker/nm on PATH."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.root = tmp / "course"
        ch = self.root / "chapters" / "01-demo"
        ch.mkdir(parents=True)
        (ch / "exercises.toml").write_text(MANIFEST)
        (ch / "include").mkdir()
        (ch / "include" / "x.cuh").write_text("// header\n")
        for name in ("alpha", "beta"):
            p = self.root / "starter" / "01-demo" / f"{name}.cu"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"// starter of {name}: BEHAVE=fail\n")
        (self.root / "CMakeLists.txt").write_text("# fake\n")
        self.bin = tmp / "fakebin"
        _exe(self.bin / "fakecc", """
            import sys, time
            src = next(a for a in sys.argv[1:] if a.endswith(".cu"))
            out = sys.argv[sys.argv.index("-o") + 1]
            text = open(src).read()
            if "SYNTAX_ERROR" in text:
                line = text[:text.index("SYNTAX_ERROR")].count("\\n") + 1
                print(f"{src}({line}): error: expected a declaration")
                sys.exit(1)
            if "COMPILE_HANG" in text:
                time.sleep(60)
            open(out, "w").write(text)
        """)
        # The linker of a runner: the student's object and the shared runner objects
        # (obj/remote_runner.o, relative to the instructor's build: the link runs there).
        _exe(self.bin / "fakeld", f"""
            import json, os, sys
            obj = os.path.abspath(sys.argv[1]); out = sys.argv[sys.argv.index("-o") + 1]
            for o in sys.argv[2:sys.argv.index("-o")]:
                if not os.path.exists(o):
                    print("fakeld: error: cannot find " + o)
                    sys.exit(1)
            with open(os.environ.get("FAKE_LOG", os.devnull) + ".links", "a") as log:
                log.write(json.dumps({{"out": os.path.abspath(out), "obj": obj}}) + "\\n")
            prog = {RUNNER!r}.replace("OBJ", repr(obj), 1)
            open(out, "w").write("#!{PY}\\n" + prog)
            os.chmod(out, 0o755)
        """)
        _exe(self.bin / "nm", """
            import sys
            for line in open(sys.argv[-1]):
                if "// symbol:" in line:
                    print("0000000000000000 T " + line.split("// symbol:", 1)[1].strip())
        """)
        # The machine's own compute-sanitizer (a GPU machine has one) stays out of
        # sight: tests that want one put a fake on PATH.
        system_path = os.pathsep.join(
            d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not (Path(d) / "compute-sanitizer").exists())
        self.env = {"PATH": f"{self.bin}{os.pathsep}{system_path}",
                    "FAKE_LOG": str(tmp / "runs.log"),
                    # the fakes (scripts of this Python) cannot run as `nobody` in the
                    # sandbox; the sandbox has its own tests (test_sandbox.py)
                    "CUDALAB_SANDBOX": "none"}
        self.checkers: dict[Path, tuple[int, str]] = {}  # what `shared` made: (mtime_ns, text)

    def shared(self, root, shared_dir, exercises, perf, hidden_dir, jobs, say, read_only=False):
        """Stands in for classbuild.prepare_shared: the checkers (no student code), the
        starter's runners, and the commands each submission reuses (its runner's link only)."""
        course = shared_dir / "course"
        if not read_only:
            classbuild.sync_tree(root, course)
        sb = classbuild.SharedBuild(course=course, build_dir=course / "build" / "default")
        bin_dir = sb.build_dir / "bin"
        if not read_only:
            bin_dir.mkdir(parents=True, exist_ok=True)
            (sb.build_dir / "obj").mkdir(exist_ok=True)
            (sb.build_dir / "obj" / "remote_runner.o").write_text("// the runner's server\n")
        for ex in exercises:
            src = course / "starter" / ex.chapter_dir / ex.file
            obj = f"obj/{ex.slug}.o"
            sb.compile_cmd[ex.slug] = f"{self.bin}/fakecc -c {src} -o {obj}"
            sb.starter_obj[ex.slug] = obj
            suite = ex.slug.capitalize()
            r = ex.runner_target("starter")
            sb.link_cmd[r] = f"{self.bin}/fakeld {obj} obj/remote_runner.o -o bin/{r}"
            checkers = [(ex.test_target("starter"), suite, False)]
            if hidden_dir is not None and classbuild.hidden_file(ex, hidden_dir):
                sb.hidden.add(ex.slug)
                checkers.append((ex.hidden_target("starter"), f"{suite}Hidden", True))
            if read_only:
                continue
            for cmd in (sb.compile_cmd[ex.slug], sb.link_cmd[r]):
                subprocess.run(cmd, shell=True, cwd=sb.build_dir, check=True,
                               env=os.environ | self.env, stdout=subprocess.DEVNULL)
            for target, s, hidden in checkers:
                p = bin_dir / target
                write_checker(p, s, hidden)
                self.checkers[p] = (p.stat().st_mtime_ns, p.read_text())
        return sb

    def grade(self, *argv, cli=grade_cli):
        """(exit code, stdout, stderr) of tools/grade (cli: or tools/grade-class) on this course."""
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(os.environ, self.env), \
                mock.patch.object(classbuild, "prepare_shared", self.shared), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(argv), root=self.root)
        return code, out.getvalue(), err.getvalue()

    def _log(self, suffix=""):
        p = Path(self.env["FAKE_LOG"] + suffix)
        return [json.loads(x) for x in p.read_text().splitlines()] if p.exists() else []

    def runs(self):
        """The checkers' graded runs (not their --gtest_list_tests)."""
        return self._log()

    def listed(self):
        return self._log(".list")

    def runner_runs(self):
        return self._log(".runner")

    def links(self):
        return self._log(".links")


def src(behave: str, extra: str = "") -> str:
    return f"// BEHAVE={behave}\n{extra}void f() {{}}\n"


def make_class(subs: Path) -> None:
    def folder(name, alpha, beta, prefix="01-demo/"):
        d = subs / name
        if alpha is not None:
            (d / prefix).mkdir(parents=True, exist_ok=True)
            (d / prefix / "alpha.cu").write_text(alpha)
        if beta is not None:
            (d / prefix).mkdir(parents=True, exist_ok=True)
            (d / prefix / "beta.cu").write_text(beta)
        d.mkdir(parents=True, exist_ok=True)

    folder("good", src("pass"), src("pass"))
    folder("failing", src("fail"), src("pass"))
    folder("broken", src("pass"), src("pass", "SYNTAX_ERROR\n"))
    folder("symbol", src("pass", "// symbol: cub::DeviceReduce::Sum(int*)\n"), src("pass"))
    folder("source", src("pass", "int y = cub::Sum();\n"), src("pass"))
    folder("hang", src("hang"), src("pass"))
    folder("spam", src("spam"), src("pass"))
    folder("hog", src("hog"), src("pass"))
    folder("segv", src("segv"), src("pass"))
    folder("hidden", src("hiddenfail"), src("pass"))
    folder("wrapped", src("pass"), src("pass"), prefix="mywork/starter/01-demo/")
    (subs / "good" / "README.txt").write_text("notes\n")
    with zipfile.ZipFile(subs / "partial.zip", "w") as z:
        z.writestr("01-demo/alpha.cu", src("pass"))
        z.writestr("extra/notes.md", "x")
    with tarfile.open(subs / "evil.tar.gz", "w:gz") as t:
        data = b"int x;\n"
        info = tarfile.TarInfo("../../escape.cu")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    (subs / "stray.txt").write_text("not a submission\n")


class ClassRunTest(unittest.TestCase):
    """One class graded once (setUpClass); each test checks one part of the outcome."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="test-class-")
        tmp = Path(cls._tmp.name)
        cls.course = FakeCourse(tmp)
        cls.subs = tmp / "subs"
        make_class(cls.subs)
        cls.hidden = tmp / "hidden"
        (cls.hidden / "01-demo").mkdir(parents=True)
        (cls.hidden / "01-demo" / "alpha_hidden_test.cu").write_text("// hidden\n")
        cls.out = tmp / "out"
        start = time.monotonic()
        cls.code, cls.stdout, cls.stderr = cls.course.grade(
            "--submissions", str(cls.subs), "--out", str(cls.out), "--hidden-tests", str(cls.hidden),
            "--timeout", "2", "--max-output", "1", "--max-memory", "0.25", "--gpus", "0,1",
            "--jobs", "2", "--seed", "99")
        cls.seconds = time.monotonic() - start
        cls.rows = {r["student"]: r for r in csv.DictReader(io.StringIO(
            (cls.out / "gradebook.csv").read_text()))}

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def result(self, student):
        return json.loads((self.out / "students" / student / "results.json").read_text())

    def ex(self, student, ex_id):
        return next(e for e in self.result(student)["cudalab"]["exercises"] if e["id"] == ex_id)

    def test_exit_code_and_speed(self):
        self.assertEqual(self.code, 0, self.stderr)
        self.assertLess(self.seconds, 30)

    def test_gradebook_rows_and_columns(self):
        header = (self.out / "gradebook.csv").read_text().splitlines()[0]
        self.assertEqual(header, "student,1.1 alpha,1.2 beta,total,max,complete,problems")
        self.assertEqual(set(self.rows), {"good", "failing", "broken", "symbol", "source", "hang",
                                          "spam", "hog", "segv", "hidden", "wrapped", "partial",
                                          "evil", "stray.txt"})
        good = self.rows["good"]
        self.assertEqual((good["1.1 alpha"], good["1.2 beta"], good["total"], good["max"],
                          good["complete"]), ("10.0", "5.0", "15.0", "15", "2"))
        self.assertEqual(self.rows["wrapped"]["total"], "15.0")

    def test_each_failure_costs_its_exercise_alone(self):
        cases = {"failing": ("failed", "2 of 6 tests failed, 1 of them hidden"),
                 "broken": None,
                 "symbol": ("forbidden", "uses forbidden API 'cub::' (symbol in the compiled code)"),
                 "source": ("forbidden", "uses forbidden API 'cub::' (line 2)"),
                 "hang": ("timeout", "timed out after 2 s in Alpha.Big"),
                 "hog": ("memory", "killed: used more than 256 MiB of host memory in Alpha.Big"),
                 # the student's code crashes in its runner: the checker's tests that
                 # called it fail (and say how), the checker itself does not crash
                 "segv": ("failed", "2 of 6 tests failed, 1 of them hidden")}
        for student, want in cases.items():
            with self.subTest(student=student):
                if want:
                    a = self.ex(student, "1.1")
                    self.assertEqual(a["status"], want[0])
                    self.assertIn(want[1], a["reason"])
                    self.assertEqual(self.rows[student]["1.2 beta"], "5.0")
        b = self.ex("broken", "1.2")
        self.assertEqual((b["status"], b["reason"]), ("compile_error", "did not compile"))
        out = self.result("broken")["tests"][1]["output"]
        self.assertIn("starter/01-demo/beta.cu(2): error: expected a declaration", out)
        self.assertNotIn(str(self.out), out)
        self.assertEqual(self.rows["broken"]["1.1 alpha"], "10.0")
        failing = self.result("failing")["tests"][0]["output"]
        self.assertIn("\ntests/01-demo/check.cuh:83\n", "\n" + failing)  # the student's path
        self.assertNotIn(str(self.out), failing)
        segv = self.result("segv")["tests"][0]["output"]
        self.assertIn("FAILED Alpha.T1\nthe exercise's code (its runner process) stopped while "
                      "calling Alpha: it was killed by SIGSEGV", segv)
        self.assertIn("FAILED (hidden) AlphaHidden.T1", segv)

    def test_symbol_report_names_the_symbol(self):
        out = self.result("symbol")["tests"][0]["output"]
        self.assertIn("cub::DeviceReduce::Sum(int*)", out)

    def test_huge_output_is_truncated_and_points_kept(self):
        # 100 MB printed by the student's code goes to the runner's log, of which
        # only the tail is shown (the checker's own output is never the student's)
        a = self.ex("spam", "1.1")
        self.assertEqual(a["status"], "passed")
        out = self.result("spam")["tests"][0]["output"]
        self.assertIn("your code printed (last lines):\n", out)
        self.assertIn("x" * 1023 + "\nspam: the last line", out)
        self.assertLess(len(out), 16 << 10)

    def test_hidden_tests_count_like_public_ones(self):
        a = self.ex("hidden", "1.1")
        self.assertEqual(a["status"], "failed")
        self.assertIn("1 of 6 tests failed, 1 of them hidden", a["reason"])
        self.assertIn("FAILED (hidden) AlphaHidden.T1", self.result("hidden")["tests"][0]["output"])
        self.assertIn("3 hidden ones included", self.ex("good", "1.1")["reason"])

    def test_hidden_tests_said_per_exercise(self):
        a, b = self.ex("good", "1.1"), self.ex("good", "1.2")
        self.assertEqual((a["hidden_suite"], a["hidden_tests"]), (True, 3))
        self.assertEqual((b["hidden_suite"], b["hidden_tests"]), (False, None))
        self.assertEqual(self.result("good")["cudalab"]["hidden_suites"], ["1.1"])
        report = (self.out / "students" / "good" / "report.md").read_text()
        self.assertIn("- 1.1 alpha: hidden tests: ran 3", report)
        self.assertIn("- 1.2 beta: no hidden suite for this exercise", report)
        broken = (self.out / "students" / "source" / "report.md").read_text()
        self.assertIn("1.1 alpha: hidden tests: not run", broken)
        self.assertIn("hidden tests: 1.1 alpha: ", self.stderr)
        self.assertIn("no hidden suite for 1 exercise(s)", self.stderr)
        s = (self.out / "summary.md").read_text()
        self.assertIn("hidden tests ran for 1 of 2 exercise(s) (1 of 2 exercise(s) had a hidden "
                      "suite)", s)
        self.assertIn("| hidden tests |", s)
        self.assertRegex(s, r"\| 1\.1 alpha \|.* \| 3 tests, ran for \d+ of 14 \|")
        self.assertRegex(s, r"\| 1\.2 beta \|.* \| no suite \|")

    def test_partial_zip_and_ignored_files(self):
        b = self.ex("partial", "1.2")
        self.assertEqual(b["status"], "not_submitted")
        self.assertEqual(self.ex("partial", "1.1")["status"], "passed")
        files = self.result("partial")["cudalab"]["files"]
        self.assertEqual(files["ignored"], ["extra/notes.md"])
        self.assertEqual(files["not_submitted"], ["01-demo/beta.cu"])
        report = (self.out / "students" / "partial" / "report.md").read_text()
        self.assertIn("not submitted", report)
        self.assertIn("README.txt", (self.out / "students" / "good" / "report.md").read_text())

    def test_evil_archive_rejected_and_nothing_escapes(self):
        self.assertIn("climbs out", self.rows["evil"]["problems"])
        self.assertEqual(self.ex("evil", "1.1")["status"], "rejected")
        self.assertFalse(list(self.out.parent.rglob("escape.cu")))
        self.assertIn("not a folder nor", self.rows["stray.txt"]["problems"])

    def test_gpus_seed_and_filter_reach_the_programs(self):
        runs = self.course.runs()
        self.assertEqual({r["gpu"] for r in runs}, {"0", "1"})
        self.assertEqual({r["seed"] for r in runs}, {"99"})
        self.assertTrue(any("--gtest_filter=*Alpha*" in r["argv"] for r in runs))

    def test_results_json_schema(self):
        data = self.result("good")
        self.assertEqual(data["score"], 15)
        self.assertEqual([t["number"] for t in data["tests"]], ["1.1", "1.2"])
        for t in data["tests"]:
            self.assertEqual(set(t) >= {"name", "score", "max_score", "status", "output"}, True)
        self.assertEqual(data["cudalab"]["student"], "good")
        self.assertEqual((data["cudalab"]["seed"], data["cudalab"]["seed_hidden"]), (None, True))

    def test_seed_hidden_from_students_shown_to_the_instructor(self):
        failing = self.result("failing")["tests"][0]["output"]
        self.assertIn("n = 33, seed = (hidden): wrong sum", failing)
        self.assertIn("rerun: bin/", failing.replace("rerun: build/default/bin/", "rerun: bin/"))
        for p in (self.out / "students").rglob("*"):
            if p.is_file():
                self.assertNotIn("SEED=99", p.read_text(), p)
                self.assertNotRegex(p.read_text(), r"seed\W+99", p)
        self.assertIn("instructor's seed, which this report does not show",
                      (self.out / "students" / "failing" / "report.md").read_text())
        self.assertIn("seed 99 (hidden from the students' reports)",
                      (self.out / "summary.md").read_text())

    def test_summary_has_distribution(self):
        s = (self.out / "summary.md").read_text()
        self.assertIn("14 submissions, 2 exercises, 15 points at most", s)
        self.assertIn("### 1.1 alpha", s)
        self.assertRegex(s, r"10 \| #+ \d+")
        self.assertIn("| exercise | max | mean | passed |", s)
        self.assertIn("submission rejected", s)

    def test_work_copies_are_removed(self):
        self.assertEqual(list((self.out / "work").iterdir()), [])

    def test_student_copy_has_instructor_files_only(self):
        # the shared course is the instructor's: no submission wrote into it
        self.assertEqual((self.out / "shared" / "course" / "starter" / "01-demo" / "alpha.cu")
                         .read_text(), "// starter of alpha: BEHAVE=fail\n")


class StopTest(unittest.TestCase):
    """A class grader told to stop (proc.stop_all, what SIGTERM does) kills the test it is
    running, starts nothing more and writes no record or gradebook from killed programs."""

    def test_stop_during_a_hanging_test(self):
        from cudalab_grade import proc
        with tempfile.TemporaryDirectory(prefix="test-class-stop-") as tmp:
            tmp = Path(tmp)
            course = FakeCourse(tmp)
            subs = tmp / "subs"
            make_class(subs)
            out = tmp / "out"

            def stop_when_hang_runs():
                for _ in range(600):
                    if any("hang" in r["obj"] for r in course.runner_runs()):
                        time.sleep(0.3)
                        proc.stop_all()
                        return
                    time.sleep(0.05)
            watcher = threading.Thread(target=stop_when_hang_runs, daemon=True)
            watcher.start()
            start = time.monotonic()
            try:
                code, stdout, stderr = course.grade("--submissions", str(subs), "--out", str(out),
                                                    "--timeout", "50", "--jobs", "1")
            finally:
                watcher.join(30)
                proc._stopping.clear()  # the flag is for the life of a process: reset for the others
            self.assertLess(time.monotonic() - start, 40)  # not the hang's 60 s, nor its 50 s limit
            self.assertIn("stopped: no gradebook written", stdout + stderr)
            self.assertFalse((out / "gradebook.csv").exists())
            self.assertFalse((out / "students" / "hang" / "results.json").exists())
            for r in out.glob("students/*/results.json"):  # those graded before the stop: whole
                data = json.loads(r.read_text())
                self.assertTrue(data["cudalab"]["exercises"], r)
                for e in data["cudalab"]["exercises"]:
                    self.assertNotIn("stopping", e.get("reason", ""), r)


class MergeAndSlurmTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-class-")
        self.tmp = Path(self._tmp.name)
        self.course = FakeCourse(self.tmp)
        self.subs = self.tmp / "subs"
        for name, a in (("ann", "pass"), ("bob", "fail"), ("cy", "pass")):
            d = self.subs / name / "01-demo"
            d.mkdir(parents=True)
            (d / "alpha.cu").write_text(src(a))
            (d / "beta.cu").write_text(src("pass"))

    def tearDown(self):
        self._tmp.cleanup()

    def test_merge_equals_one_run(self):
        full = self.tmp / "full"
        self.assertEqual(self.course.grade("--submissions", str(self.subs), "--out", str(full),
                                           "-q")[0], 0)
        self.assertEqual(self.course.grade("--submissions", str(self.subs), "--out",
                                           str(self.tmp / "shared-only"), "--prepare-only",
                                           "-q")[0], 0)
        for name in ("ann", "bob", "cy"):
            code, _, err = self.course.grade(
                "--submissions", str(self.subs), "--only", name, "--out",
                str(self.tmp / "tasks" / name), "--shared-build", str(self.tmp / "shared-only" / "shared"),
                "-q")
            self.assertEqual(code, 0, err)
        merged = self.tmp / "merged"
        code, out, _ = self.course.grade("--merge", str(self.tmp / "tasks"), "--out", str(merged))
        self.assertEqual(code, 0)
        self.assertIn("merged 3 student(s)", out)
        self.assertEqual((merged / "gradebook.csv").read_text(), (full / "gradebook.csv").read_text())
        self.assertTrue((merged / "students" / "bob" / "report.md").exists())
        self.assertIn("3 submissions", (merged / "summary.md").read_text())

    def tasks(self, *extra):
        """Each student graded by its own run in tasks/<name>, as Slurm's array does."""
        tasks = self.tmp / "tasks"
        for name in ("ann", "bob", "cy"):
            code, _, err = self.course.grade("--submissions", str(self.subs), "--only", name,
                                             "--out", str(tasks / name), "-q", *extra)
            self.assertEqual(code, 0, err)
        return tasks

    def merge(self, *folders):
        merged = self.tmp / "merged"
        code, out, err = self.course.grade("--merge", *map(str, folders), "--out", str(merged))
        rows = {r["student"]: r for r in csv.DictReader(io.StringIO(
            (merged / "gradebook.csv").read_text()))} if (merged / "gradebook.csv").exists() else {}
        return code, err, rows, merged

    def test_merge_takes_only_what_the_grader_signed(self):
        tasks = self.tasks("--seed", "123456")
        key = tasks / "ann" / "grader-secret.json"
        self.assertEqual(stat.S_IMODE(key.stat().st_mode), 0o600)
        self.assertTrue((tasks / "ann" / "students" / "ann" / "grader.sig").is_file())
        # bob raises his own score
        bob = tasks / "bob" / "students" / "bob" / "results.json"
        data = json.loads(bob.read_text())
        data["score"] = 15.0
        data["cudalab"]["exercises"][0].update(status="passed", correctness_points=10.0)
        bob.write_text(json.dumps(data, indent=2) + "\n")
        # a run folder with no key, and a student's folder copied under another name
        fake = tasks / "mallory" / "students" / "mallory"
        fake.mkdir(parents=True)
        (fake / "results.json").write_text(json.dumps(dict(data, cudalab=dict(
            data["cudalab"], student="mallory"))))
        (fake / "report.md").write_text("# forged\n")
        import shutil
        shutil.copytree(tasks / "cy" / "students" / "cy", tasks / "cy" / "students" / "eve")
        code, err, rows, merged = self.merge(tasks)
        self.assertEqual(code, 0, err)
        self.assertEqual(set(rows), {"ann", "cy"})
        self.assertIn("bob/results.json does not match the grader's signature".replace(
            "bob/", ""), err)
        self.assertIn("mallory: no usable grader key", err)
        self.assertRegex(err, r"students/eve: results.json does not match the grader's signature "
                              r"\(edited, forged, or moved")
        summary = (merged / "summary.md").read_text()
        self.assertIn("seed 123456 (hidden from the students' reports)", summary)
        self.assertIn("## Needs a look", summary)
        # the merged folder is signed with its own key: it merges again
        self.assertEqual(stat.S_IMODE((merged / "grader-secret.json").stat().st_mode), 0o600)
        self.assertNotEqual(json.loads((merged / "grader-secret.json").read_text())["key"],
                            json.loads(key.read_text())["key"])
        again = self.tmp / "again"
        code, out, err = self.course.grade("--merge", str(merged), "--out", str(again))
        self.assertEqual((code, err), (0, ""))
        self.assertIn("merged 2 student(s)", out)

    def test_merge_refuses_links_big_files_loose_keys_and_bad_records(self):
        import shutil
        from cudalab_grade import signing
        tasks = self.tasks()
        # results.json a link to another student's (links are not followed)
        ann = tasks / "ann" / "students" / "ann"
        (ann / "results.json").unlink()
        (ann / "results.json").symlink_to(tasks / "cy" / "students" / "cy" / "results.json")
        # a key others can read
        (tasks / "cy" / "grader-secret.json").chmod(0o644)
        # a signed record (signed with the run's key, as a buggy grader would) out of range
        bob = tasks / "bob" / "students" / "bob"
        key = signing.load(tasks / "bob").key
        checks = [
            (lambda d: d["cudalab"]["exercises"][0].update(correctness_points=11.0),
             "points out of range"),
            (lambda d: d["cudalab"]["exercises"][0].update(status="owned"), "unknown status"),
            (lambda d: d["cudalab"]["exercises"][0].update(id="9.9"), "unknown or repeated"),
            (lambda d: d["cudalab"]["exercises"][1].update(max_points=50), "max_points is not 5"),
            (lambda d: d.update(score=99.0), "score is not the sum"),
            (lambda d: d["cudalab"].update(student="ann"), "student id does not match its folder"),
            (lambda d: d["cudalab"]["exercises"][0].update(reason=["x"]), "reason is not a text"),
            (lambda d: d["cudalab"]["exercises"][0].update(ratio="=1+1"), "ratio is not a speed ratio"),
            (lambda d: d["cudalab"]["exercises"][0].update(ratio=-2.0), "ratio is not a speed ratio"),
        ]
        original = (bob / "results.json").read_text()
        report = (bob / "report.md").read_bytes()
        for change, why in checks:
            with self.subTest(why=why):
                data = json.loads(original)
                change(data)
                text = json.dumps(data).encode()
                (bob / "results.json").write_bytes(text)
                (bob / "build.log").unlink(missing_ok=True)
                signing.sign(key, bob, {"results.json": text, "report.md": report})
                code, err, rows, merged = self.merge(tasks)
                self.assertEqual(code, 1)          # nobody merged
                self.assertRegex(err, rf"results.json refused: (exercise 1\.\d: )?(its )?{why}")
                self.assertIn("ann: results.json cannot be opened", err)
                self.assertIn("can be read or written by others (mode 644", err)
                shutil.rmtree(merged)
        # NaN and Infinity are not JSON: refused wherever they stand, signed or not
        for const in ("NaN", "Infinity", "-Infinity"):
            with self.subTest(const=const):
                text = original.replace('"score": ', f'"extra": {const}, "score": ', 1).encode()
                (bob / "results.json").write_bytes(text)
                signing.sign(key, bob, {"results.json": text, "report.md": report})
                code, err, rows, merged = self.merge(tasks)
                self.assertIn(f"results.json is not JSON ({const} is not a number of JSON)", err)
                shutil.rmtree(merged)
        big = b" " * (9 << 20)
        (bob / "results.json").write_bytes(big)
        code, err, _, _ = self.merge(tasks)
        self.assertIn("results.json is larger than 8388608 bytes", err)

    def test_merge_one_record_per_folder_name(self):
        """Two runs with ids that share a folder name ('al x' and 'al_x') merge into one record,
        the later, and a warning that names both: never two rows over one students/ folder."""
        runs = self.tmp / "runs"
        for run, name, behave in (("r1", "al x", "pass"), ("r2", "al_x", "fail")):
            d = self.tmp / run / name / "01-demo"
            d.mkdir(parents=True)
            (d / "alpha.cu").write_text(src(behave))
            (d / "beta.cu").write_text(src("pass"))
            code, _, err = self.course.grade("--submissions", str(self.tmp / run), "--out",
                                             str(runs / run), "-q")
            self.assertEqual(code, 0, err)
        code, err, rows, merged = self.merge(runs)
        self.assertEqual(code, 0, err)
        self.assertEqual(set(rows), {"al_x"})
        self.assertIn("student 'al_x': " + str(runs / "r2" / "students" / "al_x") + " replaces "
                      + str(runs / "r1" / "students" / "al_x") + " (student 'al x'): the later "
                      "folder wins", err)
        record = json.loads((merged / "students" / "al_x" / "results.json").read_text())
        self.assertEqual(record["cudalab"]["student"], "al_x")

    def test_names_that_are_not_utf8(self):
        """A submission, or a file in it, whose name is not UTF-8 (bytes that Python reads as
        lone surrogates) is graded like any other: no crash of the class run, no lost report."""
        (self.subs / "ann" / "notes\udcfe.txt").write_bytes(b"x")   # an honest Latin-1 name
        bad = Path(os.fsdecode(os.fsencode(self.subs) + b"/b\xffob"))
        shutil.copytree(self.subs / "cy", bad)
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
        self.assertEqual(code, 0, err)
        rows = {r["student"]: r for r in csv.DictReader(io.StringIO(
            (out / "gradebook.csv").read_text()))}
        self.assertEqual(rows["b\\xffob"]["total"], "15.0")
        self.assertEqual(rows["ann"]["total"], "15.0")
        self.assertIn("notes\\xfe.txt", (out / "students" / "ann" / "report.md").read_text())
        self.assertTrue((out / "students" / "b_ob" / "report.md").is_file())
        code, err, rows, merged = self.merge(out)
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(rows["b\\xffob"]["total"], "15.0")
        self.assertEqual(len(list((merged / "students").iterdir())), 4)

    def test_folder_and_misplaced_files_are_explained(self):
        """An exercise's path that is a folder is 'file refused' with what stands there; a file
        handed in two folders deep is 'not submitted' with where it is, never 'no such file'."""
        shutil.rmtree(self.subs / "bob" / "01-demo")
        (self.subs / "bob" / "01-demo" / "alpha.cu").mkdir(parents=True)
        (self.subs / "bob" / "01-demo" / "beta.cu").write_text(src("pass"))
        deep = self.subs / "cy" / "outer" / "inner"
        deep.mkdir(parents=True)
        (self.subs / "cy" / "01-demo").rename(deep / "01-demo")
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
        self.assertEqual(code, 0, err)
        bob = json.loads((out / "students" / "bob" / "results.json").read_text())
        self.assertEqual(bob["cudalab"]["exercises"][0]["status"], "rejected")
        self.assertEqual(bob["cudalab"]["exercises"][0]["reason"],
                         "file refused: 01-demo/alpha.cu is a folder, not a file (refused)")
        self.assertEqual(bob["cudalab"]["exercises"][1]["status"], "passed")
        cy = (out / "students" / "cy" / "report.md").read_text()
        self.assertIn("not submitted", cy)
        self.assertIn("a file named alpha.cu is in the submission at "
                      "outer/inner/01-demo/alpha.cu, not where the grader looks", cy)
        self.assertNotIn("no 01-demo/alpha.cu in the submission", cy)

    def test_thousands_of_ignored_files_survive_the_merge(self):
        """A submission with 12000 other files: its results.json listed each as ignored, and
        --merge (Slurm's last step) refused it (more than 10000 texts in cudalab.files), so the
        student was graded and then left out of the gradebook. The list is bounded."""
        junk = self.subs / "ann" / "junk"
        junk.mkdir()
        for i in range(12000):
            (junk / f"f{i}").touch()
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
        self.assertEqual(code, 0, err)
        files = json.loads((out / "students" / "ann" / "results.json").read_text())["cudalab"]["files"]
        self.assertEqual(len(files["ignored"]), submissions.MAX_LISTED + 1)
        self.assertEqual(files["ignored"][-1], f"... and {12000 - submissions.MAX_LISTED} more (not listed)")
        code, err, rows, _ = self.merge(out)
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(rows["ann"]["total"], "15.0")

    def test_a_reason_quoting_100k_characters_survives_the_merge(self):
        """A warp mask written as a literal of 100000 digits is quoted in the forbidden-API
        reason: results.json held a reason of 100 KB, which --merge refuses (over 64 KiB), so
        under Slurm the student was graded and then left out of the gradebook."""
        mask = "0x" + "0" * 100000 + "7fffffffu"
        (self.subs / "bob" / "01-demo" / "alpha.cu").write_text(
            src("pass", f"__global__ void k() {{ __syncwarp({mask}); }}\n"))
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
        self.assertEqual(code, 0, err)
        e = json.loads((out / "students" / "bob" / "results.json").read_text())["cudalab"]["exercises"][0]
        self.assertEqual(e["status"], "forbidden")
        self.assertTrue(e["reason"].startswith("warp mask: `__syncwarp(0x000"), e["reason"][:80])
        self.assertIn("000...000", e["reason"])
        self.assertIn("7fffffffu)` (line 2) is a constant mask (0x7fffffff)", e["reason"])
        self.assertLess(len(e["reason"]), 2000)
        # whatever a reason quotes, what is written for a student stays within --merge's limits
        long = classgrade._bounded("x" * 100000, classgrade.MAX_REASON)
        self.assertTrue(long.endswith(f" ... ({100000 - classgrade.MAX_REASON} more characters cut)"))
        lines = classgrade._bounded_lines(["y" * 1000] * 3000, classgrade.MAX_DETAILS)
        self.assertLess(sum(map(len, lines)), classgrade.MAX_DETAILS + 200)
        self.assertRegex(lines[-1], r"^\.\.\. \(\d+ more lines cut\)$")
        code, err, rows, _ = self.merge(out)
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(rows["bob"]["problems"], "1.1: forbidden API")

    def test_file_saved_as_utf16_is_named_so(self):
        """A file saved as UTF-16 did not compile with errors that do not say why; the report
        now says what the file is and what to do."""
        (self.subs / "bob" / "01-demo" / "alpha.cu").write_bytes(
            b"\xff\xfe" + src("pass").encode("utf-16-le"))
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
        self.assertEqual(code, 0, err)
        report = (out / "students" / "bob" / "report.md").read_text()
        self.assertIn("did not compile", report)
        self.assertIn("alpha.cu is saved as UTF-16 text (it starts with a UTF-16 byte-order "
                      "mark): the compiler reads UTF-8", report)
        self.assertNotIn("UTF", (out / "students" / "ann" / "report.md").read_text())

    def test_slurm_scripts(self):
        out = self.tmp / "out"
        code, stdout, _ = self.course.grade("--submissions", str(self.subs), "--out", str(out),
                                            "--slurm", "--seed", "5", "--sanitize", "memcheck",
                                            "--slurm-partition", "gpu")
        self.assertEqual(code, 0)
        d = out / "slurm"
        self.assertEqual((d / "entries.txt").read_text().split(), ["ann", "bob", "cy"])
        array = (d / "grade.sbatch").read_text()
        self.assertIn("#SBATCH --array=0-2", array)
        self.assertIn("#SBATCH --gres=gpu:1", array)
        self.assertIn("#SBATCH --partition=gpu", array)
        self.assertIn('--only="$entry"', array)
        self.assertIn(f"--shared-build {out / 'shared'}", array)
        self.assertIn("--seed 5", array)
        self.assertIn("--sanitize memcheck", array)
        self.assertIn("--prepare-only", (d / "prepare.sbatch").read_text())
        self.assertIn(f"--merge {out}/tasks --out {out}", (d / "merge.sbatch").read_text())
        submit = (d / "submit.sh").read_text()
        self.assertIn("--dependency=afterok:", submit)
        self.assertIn("--dependency=afterany:", submit)
        for name in ("prepare.sbatch", "grade.sbatch", "merge.sbatch", "submit.sh"):
            p = subprocess.run(["bash", "-n", str(d / name)], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse((out / "gradebook.csv").exists())  # nothing graded

    def test_slurm_task_of_an_entry_named_like_an_option(self):
        """A submission named '-dash' (a leading '-'): its array task passes it to --only as
        its value, not as an option of its own (argparse: 'expected one argument', the task
        failed and the student was never graded)."""
        import shlex
        from cudalab_grade.clioptions import CLASS, parse_args
        shutil.copytree(self.subs / "ann", self.subs / "-dash")
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out),
                                         "--slurm")
        self.assertEqual(code, 0, err)
        d = out / "slurm"
        self.assertEqual((d / "entries.txt").read_text().split("\n")[0], "-dash")
        (line,) = [ln for ln in (d / "grade.sbatch").read_text().splitlines() if "--only" in ln]
        line = line.split(" || ")[0].replace('"$entry"', shlex.quote("-dash"))
        line = line.replace('"${SLURM_CPUS_PER_TASK:-4}"', "4")
        argv = shlex.split(line)[1:]
        with contextlib.redirect_stderr(io.StringIO()):
            args = parse_args(argv, CLASS, "tools/grade-class", "")
        self.assertEqual(args.only, ["-dash"])
        self.assertEqual(args.out, out / "tasks" / "-dash")
        # the grading of that task, as the array runs it
        code, _, err = self.course.grade(*argv[:argv.index("--shared-build")], "-q")
        self.assertEqual(code, 0, err)
        self.assertTrue((out / "tasks" / "-dash" / "students" / "-dash" / "results.json").is_file())

    def test_slurm_refuses_what_it_cannot_grade(self):
        """--slurm with an --only that names no submission, or with no submission at all,
        wrote an array of one task that failed (exit 0); now a usage error, nothing written."""
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out),
                                         "--slurm", "--only", "nobody")
        self.assertEqual(code, 2)
        self.assertIn("no submission named nobody in", err)
        empty = self.tmp / "empty"
        empty.mkdir()
        code, _, err = self.course.grade("--submissions", str(empty), "--out", str(out), "--slurm")
        self.assertEqual(code, 2)
        self.assertIn("no submission in", err)
        self.assertFalse((out / "slurm").exists())
        shutil.copytree(self.subs / "ann", self.subs / "two\nlines")   # entries.txt: one a line
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "--slurm")
        self.assertEqual(code, 2)
        self.assertIn("has a line break in its name", err)
        self.assertFalse((out / "slurm").exists())

    def test_test_seconds_leave_out_the_wait_for_the_build(self):
        """'build X s, tests Y s': Y counted from when the GPU worker took the submission, the
        build included (a compile of 48 s read 'tests 46 s' on a machine with no GPU)."""
        real = classgrade._prepare

        def slow(co, sb, entry):
            time.sleep(2.0)
            return real(co, sb, entry)

        out = self.tmp / "out"
        with mock.patch.object(classgrade, "_prepare", slow):
            code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out),
                                             "--only", "ann", "-q")
        self.assertEqual(code, 0, err)
        c = json.loads((out / "students" / "ann" / "results.json").read_text())["cudalab"]
        self.assertLess(c["test_seconds"], 1.5, c)
        self.assertIn(f"tests {c['test_seconds']:g} s",
                      (out / "students" / "ann" / "report.md").read_text())

    def test_internal_error_in_one_submission(self):
        real = classgrade._prepare_inner

        def boom(co, sb, b):
            if b.entry.student == "bob":
                raise RuntimeError("disk on fire")
            return real(co, sb, b)

        out = self.tmp / "out"
        with mock.patch.object(classgrade, "_prepare_inner", boom):
            code, _, _ = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
        self.assertEqual(code, 0)
        rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
        self.assertEqual(rows["ann"]["total"], "15.0")
        self.assertEqual(rows["cy"]["total"], "15.0")
        self.assertIn("grader error", rows["bob"]["problems"])
        bob = json.loads((out / "students" / "bob" / "results.json").read_text())
        self.assertIn("disk on fire", bob["cudalab"]["exercises"][0]["reason"])

    def test_no_gpu_exits_3_and_says_so(self):
        self.course.env["FAKE_NO_GPU"] = "1"  # the checkers find no CUDA device
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
        self.assertEqual(code, 3)
        self.assertIn("no CUDA device", err)
        report = (out / "students" / "ann" / "report.md").read_text()
        self.assertIn("not graded: no CUDA device", report)
        self.assertIn("not graded for lack of a CUDA device", (out / "summary.md").read_text())

    def test_hidden_tests_dir_without_suites_is_not_called_hidden_tests(self):
        empty = self.tmp / "hidden-empty"
        empty.mkdir()
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out),
                                         "--hidden-tests", str(empty))
        self.assertEqual(code, 0, err)
        self.assertIn("no hidden suite for any of the 2 exercise(s)", err)
        s = (out / "summary.md").read_text()
        self.assertIn("no hidden tests ran (0 of 2 exercise(s) had a hidden suite)", s)
        self.assertNotIn("hidden tests ran for", s)
        self.assertIn("| 1.1 alpha | 10 | ", s)
        ann = (out / "students" / "ann" / "report.md").read_text()
        self.assertIn("1.1 alpha: no hidden suite for this exercise", ann)
        # without --hidden-tests, a summary does not talk of them beyond saying there were none
        plain = self.tmp / "plain"
        self.course.grade("--submissions", str(self.subs), "--out", str(plain), "-q")
        self.assertIn("no hidden tests;", (plain / "summary.md").read_text())
        self.assertNotIn("hidden", (plain / "students" / "ann" / "report.md").read_text())

    def test_long_seed_hidden_anywhere_and_shown_on_request(self):
        for name in ("ann", "cy"):
            (self.subs / name / "01-demo" / "alpha.cu").write_text(src("fail"))
        out = self.tmp / "out"
        code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q",
                                         "--seed", "20250301")
        self.assertEqual(code, 0, err)
        self.assertEqual({r["seed"] for r in self.course.runs()}, {"20250301"})
        for p in (out / "students").rglob("*"):
            if p.is_file():
                self.assertNotIn("20250301", p.read_text(), p)
        self.assertIn("seed 20250301 (hidden", (out / "summary.md").read_text())
        shown = self.tmp / "shown"
        self.course.grade("--submissions", str(self.subs), "--out", str(shown), "-q",
                          "--seed", "20250301", "--show-seed")
        report = (shown / "students" / "ann" / "report.md").read_text()
        self.assertIn("tests ran with seed 20250301 (CUDALAB_SEED)", report)
        self.assertIn("CUDALAB_SEED=20250301", report)
        self.assertEqual(json.loads((shown / "students" / "ann" / "results.json").read_text())
                         ["cudalab"]["seed"], 20250301)
        self.assertIn("seed 20250301;", (shown / "summary.md").read_text())

    def test_redact_seed(self):
        r = classgrade.redact_seed
        self.assertEqual(r("[1.1] n = 5, seed = 123456\n  rerun: CUDALAB_SEED=123456 bin/x "
                           "--gtest_filter='A.B'", 123456),
                         "[1.1] n = 5, seed = (hidden)\n  rerun: bin/x --gtest_filter='A.B'")
        self.assertEqual(r("Seed: 124 and seed 0x1f; n = 5", 5), "Seed: (hidden) and seed (hidden); n = 5")
        self.assertEqual(r("printed 20250301 or 120250301", 20250301), "printed (hidden) or 120250301")

    def test_a_class_is_graded_in_a_sandbox_or_not_at_all(self):
        from cudalab_grade import sandbox
        self.course.env["CUDALAB_SANDBOX"] = ""  # the default: a sandbox, found by sandbox.detect
        out = self.tmp / "out"
        with mock.patch.object(sandbox, "detect", return_value=None):
            code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
            self.assertEqual(code, 1)
            self.assertIn("no sandbox works on this machine", err)
            self.assertFalse((out / "gradebook.csv").exists())
            self.assertEqual(self.course.runs(), [])
            code, _, err = self.course.grade("--submissions", str(self.subs), "--out",
                                             str(self.tmp / "bare"), "--no-sandbox", "-q")
            self.assertEqual(code, 0, err)
            self.assertEqual({r["prefix"] for r in self.course.runs()}, {None})
        # a sandbox: each student's runner in its own, which reads that student's runners only
        box = self.tmp / "sandboxbin" / "fake-box"
        _exe(box, """
            import os, sys
            rest = sys.argv[sys.argv.index("--") + 1:]
            os.execv(rest[0], rest)
        """)
        asked = []

        def runner_prefix(kind, *, readable, **kw):
            asked.append((kind, [str(p) for p in readable]))
            return [str(box), "--kind", kind, "--"]
        Path(self.course.env["FAKE_LOG"]).unlink()
        compiled = []

        def compile_prefix(kind, *, readable, writable, **kw):  # the compiler is sandboxed too
            compiled.append((kind, [str(p) for p in writable]))
            return [str(box), "--kind", kind, "--"]
        with mock.patch.object(sandbox, "detect", return_value="bwrap"), \
                mock.patch.object(sandbox, "runner_prefix", runner_prefix), \
                mock.patch.object(sandbox, "compile_prefix", compile_prefix):
            code, _, err = self.course.grade("--submissions", str(self.subs), "--out",
                                             str(self.tmp / "boxed"), "--no-sandbox", "-q")
            self.assertEqual(code, 0, err)
            self.assertEqual(asked, [])  # --no-sandbox: none asked for
            code, _, err = self.course.grade("--submissions", str(self.subs), "--out", str(out), "-q")
        self.assertEqual(code, 0, err)
        runs = [r for r in self.course.runs() if str(out) in r["argv"][0]]
        self.assertEqual(len(runs), 6)  # 3 students, 2 exercises, no hidden tests
        self.assertTrue(compiled and all(k == "bwrap" and len(w) == 1 and "/grade-obj" in w[0]
                                         for k, w in compiled), compiled)
        self.assertEqual({r["prefix"] for r in runs}, {json.dumps([str(box), "--kind", "bwrap", "--"])})
        self.assertEqual(sorted(asked), sorted(
            ("bwrap", [str(out / "work" / name / "course" / "build" / "default" / "bin")])
            for name in ("ann", "bob", "cy")))
        for r in runs:  # the runner each checker started is in the folder its sandbox reads
            self.assertIn([str(Path(r["runner"]).parent)], [a[1] for a in asked])
        rows = {r["student"]: r["total"] for r in csv.DictReader(io.StringIO(
            (out / "gradebook.csv").read_text()))}
        self.assertEqual(rows, {"ann": "15.0", "bob": "5.0", "cy": "15.0"})

    def test_compile_time_limit(self):
        (self.subs / "bob" / "01-demo" / "beta.cu").write_text(src("pass", "// COMPILE_HANG\n"))
        out = self.tmp / "out"
        self.course.grade("--submissions", str(self.subs), "--out", str(out), "--only", "bob",
                          "--build-timeout", "1", "-q")
        bob = json.loads((out / "students" / "bob" / "results.json").read_text())
        beta = bob["cudalab"]["exercises"][1]
        self.assertEqual(beta["status"], "compile_error")
        self.assertIn("build time limit (1 s)", beta["reason"])

    def test_usage_errors(self):
        self.assertEqual(self.course.grade("--hidden-tests", str(self.tmp))[0], 2)
        self.assertEqual(self.course.grade("--submissions", str(self.subs), "--gpus", "x,y")[0], 2)
        self.assertEqual(self.course.grade("--submissions", str(self.tmp / "nope"))[0], 2)
        self.assertEqual(self.course.grade("--submissions", str(self.subs), "--only", "zed",
                                           "--out", str(self.tmp / "o"), "-q")[0], 2)


class GradeClassTest(unittest.TestCase):
    """tools/grade-class: the class options of tools/grade, through the same code."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-class-")
        self.tmp = Path(self._tmp.name)
        self.course = FakeCourse(self.tmp)
        self.subs = self.tmp / "subs"
        for name, a in (("ann", "pass"), ("bob", "fail")):
            d = self.subs / name / "01-demo"
            d.mkdir(parents=True)
            (d / "alpha.cu").write_text(src(a))
            (d / "beta.cu").write_text(src("pass"))

    def tearDown(self):
        self._tmp.cleanup()

    def test_grades_and_merges_as_tools_grade_submissions_does(self):
        outs = {}
        for name, cli in (("grade", grade_cli), ("grade-class", grade_class_cli)):
            outs[name] = self.tmp / name
            code, stdout, err = self.course.grade("--submissions", str(self.subs), "--out",
                                                  str(outs[name]), "--seed", "7", "-q", cli=cli)
            self.assertEqual(code, 0, err)
            self.assertIn("2 submission(s) graded", stdout)
        a, b = outs["grade"], outs["grade-class"]
        self.assertEqual((a / "gradebook.csv").read_text(), (b / "gradebook.csv").read_text())
        for student in ("ann", "bob"):
            ra, rb = (json.loads((o / "students" / student / "results.json").read_text())
                      for o in (a, b))
            self.assertEqual([(e["id"], e["status"], e["correctness_points"], e["reason"])
                              for e in ra["cudalab"]["exercises"]],
                             [(e["id"], e["status"], e["correctness_points"], e["reason"])
                              for e in rb["cudalab"]["exercises"]])
            self.assertEqual(ra["score"], rb["score"])
        merged = self.tmp / "merged"
        code, out, _ = self.course.grade("--merge", str(b), "--out", str(merged), cli=grade_class_cli)
        self.assertEqual(code, 0)
        self.assertIn("merged 2 student(s)", out)
        self.assertEqual((merged / "gradebook.csv").read_text(), (b / "gradebook.csv").read_text())

    def test_usage_errors_name_the_command(self):
        with contextlib.redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit) as cm:
            grade_class_cli.main([], root=self.course.root)  # no class: nothing to grade
        self.assertEqual(cm.exception.code, 2)
        self.assertIn("--submissions DIR", err.getvalue())
        for student_only in ("--list", "--solutions", "--compile-only", "--json"):
            with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as cm:
                grade_class_cli.main(["--submissions", str(self.subs), student_only, "x"],
                                     root=self.course.root)
            self.assertEqual(cm.exception.code, 2, student_only)
        code, _, err = self.course.grade("--submissions", str(self.tmp / "nope"), cli=grade_class_cli)
        self.assertEqual(code, 2)
        self.assertTrue(err.startswith("tools/grade-class: --submissions "), err)
        code, _, err = self.course.grade("--submissions", str(self.tmp / "nope"))
        self.assertEqual(code, 2)
        self.assertTrue(err.startswith("tools/grade: --submissions "), err)

    def test_each_help_lists_its_own_options(self):
        helps, listed = {}, {}
        for tool in ("grade", "grade-class"):
            p = subprocess.run([PY, str(REPO / "tools" / tool), "--help"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            helps[tool] = p.stdout
            # the options the help lists, and those its usage line names
            listed[tool] = set(re.findall(r"^  (?:-\w, )?(--[\w-]+)", p.stdout, re.M)) | \
                set(re.findall(r"\[(--[\w-]+)", p.stdout.split("\n\n")[0]))
        student_only = ("--list", "--hint", "--watch", "--profile", "--progress", "--compile-only",
                        "--solutions", "--parallel", "--build-dir", "--no-build", "--json")
        class_only = ("--submissions", "--out", "--only", "--hidden-tests", "--gpus", "--per-gpu",
                      "--slurm", "--similarity", "--merge", "--roster", "--show-seed")
        shared = ("--perf", "--sanitize", "--fast", "--seed", "--timeout", "--jobs", "--no-sandbox")
        for flag in student_only:
            self.assertIn(flag, listed["grade"])
            self.assertNotIn(flag, listed["grade-class"])
        for flag in class_only:
            self.assertNotIn(flag, listed["grade"])
            self.assertIn(flag, listed["grade-class"])
        for flag in shared:
            self.assertIn(flag, listed["grade"])
            self.assertIn(flag, listed["grade-class"])
        self.assertIn("tools/grade-class", helps["grade"])


class RunnerTest(unittest.TestCase):
    """The checker/runner split in a class (graded once, --keep-work): the checker that runs
    is the instructor's, the runner the student's; what the runner prints is shown, never
    believed; a sandbox prefix reaches the checker."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="test-runner-")
        cls.tmp = Path(cls._tmp.name)
        cls.course = FakeCourse(cls.tmp)
        cls.subs = cls.tmp / "subs"
        for name, a, b in (("ann", "pass", "pass"), ("liar", "liar", "pass"),
                           ("noisy", "noisy", "fail")):
            d = cls.subs / name / "01-demo"
            d.mkdir(parents=True)
            (d / "alpha.cu").write_text(src(a))
            (d / "beta.cu").write_text(src(b))
        hidden = cls.tmp / "hidden"
        (hidden / "01-demo").mkdir(parents=True)
        (hidden / "01-demo" / "alpha_hidden_test.cu").write_text("// hidden\n")
        cls.out = cls.tmp / "out"
        cls.code, _, cls.stderr = cls.course.grade(
            "--submissions", str(cls.subs), "--out", str(cls.out), "--hidden-tests", str(hidden),
            "--keep-work", "--seed", "3", "-q")
        cls.shared_bin = (cls.out / "shared" / "course" / "build" / "default" / "bin").resolve()

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def student_bin(self, student):
        return (self.out / "work" / student / "course" / "build" / "default" / "bin").resolve()

    def ex(self, student, ex_id):
        data = json.loads((self.out / "students" / student / "results.json").read_text())
        e = next(e for e in data["cudalab"]["exercises"] if e["id"] == ex_id)
        out = next(t for t in data["tests"] if t["number"] == ex_id)["output"]
        return e, out

    def test_checker_is_the_shared_builds_and_the_runner_the_students(self):
        self.assertEqual(self.code, 0, self.stderr)
        seen = set()
        for run in self.course.runs():
            checker = Path(run["argv"][0]).resolve()
            self.assertEqual(checker.parent, self.shared_bin)
            slug = checker.name.split("_")[0]
            runner = Path(run["runner"])
            self.assertTrue(runner.is_absolute())
            student = runner.parts[runner.parts.index("work") + 1]
            self.assertEqual(runner, self.student_bin(student) / f"{slug}_runner_starter")
            self.assertEqual(run["seed"], "3")
            seen.add((student, checker.name))
        want = {(s, t) for s in ("ann", "liar", "noisy")
                for t in ("alpha_test_starter", "alpha_hidden_test_starter", "beta_test_starter")}
        self.assertEqual(seen, want)
        # the expected list of tests is asked of the same programs, the instructor's
        listed = {Path(r["checker"]).resolve() for r in self.course.listed()}
        self.assertEqual(listed, {self.shared_bin / t for _, t in want})
        # and the code that answered is each student's own object
        for r in self.course.runner_runs():
            exe = Path(r["exe"]).resolve()
            student = exe.parts[exe.parts.index("work") + 1]
            self.assertEqual(exe.parent, self.student_bin(student))
            self.assertEqual(Path(r["obj"]).resolve(), self.student_bin(student).parent
                             / "grade-obj" / exe.name.replace("_runner_starter", ".o"))
            self.assertEqual(r["argv"][1:], ["--cudalab-runner-fd", "3"])

    def test_relink_never_touches_the_checker(self):
        links = [Path(x["out"]).resolve() for x in self.course.links()]
        self.assertEqual(sorted(p.name for p in links if p.parent == self.shared_bin),
                         ["alpha_runner_starter", "beta_runner_starter"])  # the starter's, once
        for student in ("ann", "liar", "noisy"):
            mine = sorted(p.name for p in links if p.parent == self.student_bin(student))
            self.assertEqual(mine, ["alpha_runner_starter", "beta_runner_starter"])
            self.assertEqual(sorted(p.name for p in self.student_bin(student).iterdir()),
                             ["alpha_runner_starter", "beta_runner_starter"])
            log = (self.out / "students" / student / "build.log").read_text()
            self.assertIn("_runner_starter", log)
            self.assertNotIn("_test_", log)
        self.assertFalse([p for p in links if "_test_" in p.name])
        self.assertEqual(len(self.course.checkers), 3)
        for path, (mtime, text) in self.course.checkers.items():
            self.assertEqual((path.stat().st_mtime_ns, path.read_text()), (mtime, text), path)

    def test_runner_output_is_shown_and_never_decides(self):
        liar, out = self.ex("liar", "1.1")
        self.assertEqual(liar["status"], "failed")  # not no_gpu, not passed
        self.assertIn("2 of 6 tests failed, 1 of them hidden", liar["reason"])
        self.assertIn("your code printed (last lines):\ncudalab: no CUDA device; GPU tests are "
                      "skipped\n[  SKIPPED ] Alpha.T1\n[       OK ] Alpha.T1 (0 ms)\n"
                      "[  PASSED  ] 3 tests.\nmy debug line: n = 33", out)
        self.assertIn("my debug line: n = 1000", out)  # the hidden checker's runner too
        self.assertIn("FAILED Alpha.T1", out)
        noisy, out = self.ex("noisy", "1.1")
        self.assertEqual((noisy["status"], noisy["correctness_points"]), ("passed", 10))
        self.assertIn("all 6 tests passed, 3 hidden ones included; ", noisy["reason"])
        self.assertIn("your code printed (last lines):\ncudalab: no CUDA device", out)
        beta, out = self.ex("noisy", "1.2")
        self.assertEqual(beta["status"], "failed")
        self.assertNotIn("your code printed", out)  # a silent runner: nothing to show
        self.assertEqual(self.code, 0)  # graded on a "GPU": no student can say otherwise
        rows = {r["student"]: r for r in csv.DictReader(io.StringIO(
            (self.out / "gradebook.csv").read_text()))}
        self.assertEqual({s: rows[s]["total"] for s in rows},
                         {"ann": "15.0", "liar": "5.0", "noisy": "10.0"})

    def grade_ann(self, **kw):
        """grading.grade of ann's 1.1 in her kept copy, with these Options; (result, runs)."""
        from cudalab_grade import grading
        ex = next(e for c in load_all(self.course.root) for e in c.exercises if e.id == "1.1")
        root = self.out / "work" / "ann" / "course"
        opts = grading.Options(root=root, build_dir=root / "build" / "default",
                               checker_bin=self.shared_bin, timeout=20, **kw)
        log = self.tmp / f"direct-{len(list(self.tmp.glob('direct-*')))}.log"
        with mock.patch.dict(os.environ, self.course.env | {"FAKE_LOG": str(log)}):
            res = grading.grade(ex, opts)
        self.log = log
        runs = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
        return res, runs

    def sandbox(self):
        """A fake sandbox: logs its argv and whether fd 3 came through, then runs the rest."""
        path = self.tmp / "sandboxbin" / "fake-sandbox"
        _exe(path, """
            import json, os, sys
            rest = sys.argv[sys.argv.index("--") + 1:]
            try:
                os.fstat(3); fd3 = True
            except OSError:
                fd3 = False
            with open(os.environ["FAKE_LOG"] + ".sandbox", "a") as log:
                log.write(json.dumps({"argv": sys.argv, "fd3": fd3}) + "\\n")
            os.execv(rest[0], rest)
        """)
        return str(path)

    def test_runner_prefix_reaches_the_checker_as_json(self):
        prefix = [self.sandbox(), "--ro-bind", "/", "/", "--"]
        res, runs = self.grade_ann(runner_prefix=prefix)
        self.assertEqual(res.status, "passed", res.details)
        (run,) = runs
        self.assertEqual(json.loads(run["prefix"]), prefix)
        runner = str(self.student_bin("ann") / "alpha_runner_starter")
        self.assertEqual(run["runner"], runner)
        (boxed,) = [json.loads(x) for x in Path(str(self.log) + ".sandbox").read_text().splitlines()]
        self.assertEqual(boxed["argv"][1:], prefix[1:] + [runner, "--cudalab-runner-fd", "3"])
        self.assertTrue(boxed["fd3"])
        # no prefix: no variable (the checker starts the runner itself)
        res, runs = self.grade_ann()
        self.assertEqual(res.status, "passed", res.details)
        self.assertEqual([r["prefix"] for r in runs], [None])

    def test_sanitizer_runs_in_the_runners_sandbox(self):
        """compute-sanitizer is the runner's prefix inside the sandbox (the checker itself
        runs bare); the checker ends with 86 when the sanitizer found errors."""
        tools = self.tmp / "sanitizerbin"
        _exe(tools / "compute-sanitizer", """
            import json, os, subprocess, sys
            with open(os.environ["FAKE_LOG"] + ".sanitizer", "a") as log:
                log.write(json.dumps(sys.argv[1:]) + "\\n")
            print("========= COMPUTE-SANITIZER")
            rc = subprocess.call(sys.argv[7:], pass_fds=(3,))  # the runner keeps its socket
            print(os.environ.get("FAKE_SANITIZER_SAYS", "========= ERROR SUMMARY: 0 errors"))
            sys.exit(86 if os.environ.get("FAKE_SANITIZER_SAYS") else rc)
        """)
        sanitizer = str(tools / "compute-sanitizer")
        words = [sanitizer, "--tool", "memcheck", "--error-exitcode", "86", "--print-limit", "20"]
        run_prefix = [self.sandbox(), "--unshare-net", "--"]
        runner = str(self.student_bin("ann") / "alpha_runner_starter")
        path = f"{tools}{os.pathsep}{self.course.env['PATH']}"
        with mock.patch.dict(self.course.env, {"PATH": path}):
            res, runs = self.grade_ann(sanitize=("memcheck",), runner_prefix=run_prefix)
        self.assertEqual(res.status, "passed", res.details)
        self.assertIn("memcheck clean", res.reason)
        self.assertEqual([json.loads(r["prefix"]) for r in runs], [run_prefix, run_prefix + words])
        self.assertEqual([r["argv"][0] for r in runs], [str(self.shared_bin / "alpha_test_starter")] * 2)
        boxed = [json.loads(x) for x in Path(str(self.log) + ".sandbox").read_text().splitlines()]
        self.assertEqual([b["argv"][1:] for b in boxed],
                         [run_prefix[1:] + [runner, "--cudalab-runner-fd", "3"],
                          run_prefix[1:] + words + [runner, "--cudalab-runner-fd", "3"]])
        self.assertEqual([b["fd3"] for b in boxed], [True, True])
        (argv,) = [json.loads(x) for x in Path(str(self.log) + ".sanitizer").read_text().splitlines()]
        self.assertEqual(argv, words[1:] + [runner, "--cudalab-runner-fd", "3"])
        # a finding: the sanitizer (in the runner's output) exits 86, so does the checker
        says = "========= Invalid __global__ read of size 4 bytes"
        with mock.patch.dict(self.course.env, {"PATH": path, "FAKE_SANITIZER_SAYS": says}):
            res, runs = self.grade_ann(sanitize=("memcheck",), runner_prefix=run_prefix)
        self.assertEqual((res.status, res.correctness_points), ("sanitizer", 0.0))
        self.assertEqual(res.reason, "compute-sanitizer memcheck: Invalid __global__ read of size 4 bytes")
        self.assertIn(says, res.details[0])


# The instructor's build as CMake and Ninja would make it, for the real prepare_shared:
# `cmake -S ... -B ...` writes the table of commands, `ninja -t targets/commands` reads
# it, `cmake --build --target ...` runs the commands of each target.
FAKE_CMAKE = r'''
import json, os, subprocess, sys
tools = os.path.dirname(os.path.abspath(sys.argv[0]))
fakebin = os.environ["FAKE_BIN"]
if "--build" in sys.argv:
    build = sys.argv[sys.argv.index("--build") + 1]
    table = json.load(open(os.path.join(build, "fake-ninja.json")))
    i = sys.argv.index("--target") + 1
    targets = sys.argv[i:sys.argv.index("--", i)] if "--" in sys.argv[i:] else sys.argv[i:]
    rc = 0
    for t in targets:
        for cmd in table[t]:
            print("[1/1] " + cmd, flush=True)
            if subprocess.call(cmd, shell=True, cwd=build) != 0:
                print("FAILED: " + t, flush=True)
                rc = 1
                break
    sys.exit(rc)
src = sys.argv[sys.argv.index("-S") + 1]
build = sys.argv[sys.argv.index("-B") + 1]
defs = dict(a[2:].split("=", 1) for a in sys.argv if a.startswith("-D"))
os.makedirs(build, exist_ok=True)
broken = set(os.environ.get("FAKE_BROKEN", "").split())
table = {}
for slug in ("alpha", "beta"):
    suite = slug.capitalize()
    compile_ = "%s/fakecc -O2 -c %s/starter/01-demo/%s.cu -o obj/%s.o" % (fakebin, src, slug, slug)
    server = "mkdir -p obj bin && echo server > obj/remote_runner.o"
    table[slug + "_runner_starter"] = [
        "mkdir -p obj bin", compile_, server,
        "%s/fakeld obj/%s.o obj/remote_runner.o -o bin/%s_runner_starter" % (fakebin, slug, slug)]
    checkers = [(slug + "_test_starter", suite, "")]
    if slug == "alpha" and defs.get("CUDALAB_HIDDEN_TESTS_DIR"):
        checkers.append((slug + "_hidden_test_starter", suite + "Hidden", "--hidden"))
    for t, s, h in checkers:
        table[t] = ["mkdir -p obj bin", "echo battery > obj/%s_battery.o" % t,
                    ("false" if t in broken else "%s/fakechk --suite %s %s obj/%s_battery.o -o bin/%s"
                     % (fakebin, s, h, t, t))]
json.dump(table, open(os.path.join(build, "fake-ninja.json"), "w"))
'''

FAKE_NINJA = r'''
import json, os, sys
build = sys.argv[sys.argv.index("-C") + 1]
table = json.load(open(os.path.join(build, "fake-ninja.json")))
tool = sys.argv[sys.argv.index("-t") + 1]
if tool == "targets":
    for t in table:
        print(t + ": phony")
elif tool == "commands":
    for cmd in table[sys.argv[-1]]:
        print(cmd)
'''


class SharedBuildTest(unittest.TestCase):
    """The real prepare_shared and build_exercise over a fake CMake and Ninja: the
    instructor's build makes the checkers; a submission relinks its runner only."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-shared-")
        self.tmp = Path(self._tmp.name)
        self.course = FakeCourse(self.tmp)
        _exe(self.course.bin / "fakechk", f"""
            import os, sys
            suite = sys.argv[sys.argv.index("--suite") + 1]
            out = sys.argv[sys.argv.index("-o") + 1]
            prog = {CHECKER!r}.replace("SUITE, HIDDEN", repr(suite) + ", " + repr("--hidden" in sys.argv), 1)
            open(out, "w").write("#!{PY}\\n" + prog)
            os.chmod(out, 0o755)
        """)
        tools = self.tmp / "buildtools"
        _exe(tools / "cmake", FAKE_CMAKE)
        _exe(tools / "ninja", FAKE_NINJA)
        self.course.env["PATH"] = f"{tools}{os.pathsep}{self.course.env['PATH']}"
        self.course.env["FAKE_BIN"] = str(self.course.bin)
        self.exercises = [e for c in load_all(self.course.root) for e in c.exercises]
        self.hidden = self.tmp / "hidden"
        (self.hidden / "01-demo").mkdir(parents=True)
        (self.hidden / "01-demo" / "alpha_hidden_test.cu").write_text("// hidden\n")

    def tearDown(self):
        self._tmp.cleanup()

    def prepare(self):
        with mock.patch.dict(os.environ, self.course.env):
            return classbuild.prepare_shared(self.course.root, self.tmp / "shared", self.exercises,
                                             False, self.hidden, 2, lambda msg: None)

    def test_shared_build_reads_only_the_runners_commands(self):
        sb = self.prepare()
        self.assertEqual(sb.problems, {})
        self.assertEqual(sb.hidden, {"alpha"})
        self.assertEqual(sorted(sb.link_cmd), ["alpha_runner_starter", "beta_runner_starter"])
        self.assertEqual(sb.starter_obj, {"alpha": "obj/alpha.o", "beta": "obj/beta.o"})
        self.assertIn(" -c ", sb.compile_cmd["alpha"])
        for t in ("alpha_test_starter", "alpha_hidden_test_starter", "beta_test_starter",
                  "alpha_runner_starter", "beta_runner_starter"):
            self.assertTrue((sb.build_dir / "bin" / t).exists(), t)
        # a submission: its object, its runner relinked; the checkers stay the instructor's
        copy = self.tmp / "work" / "ann" / "course"
        classbuild.sync_tree(sb.course, copy)
        (copy / "starter" / "01-demo" / "alpha.cu").write_text(src("pass"))
        checker = sb.build_dir / "bin" / "alpha_test_starter"
        before = (checker.stat().st_mtime_ns, checker.read_text())
        log = io.StringIO()
        ex = self.exercises[0]
        with mock.patch.dict(os.environ, self.course.env):
            eb = classbuild.build_exercise(sb, ex, copy, classbuild.student_targets(ex, False),
                                           60, log)
        self.assertEqual(eb.not_built, {})
        student_bin = copy / "build" / "default" / "bin"
        self.assertEqual([p.name for p in student_bin.iterdir()], ["alpha_runner_starter"])
        self.assertNotIn("_test_", log.getvalue())
        self.assertEqual((checker.stat().st_mtime_ns, checker.read_text()), before)
        (link,) = [x for x in self.course.links() if "work" in x["out"]]
        self.assertEqual(Path(link["out"]), student_bin / "alpha_runner_starter")
        self.assertEqual(Path(link["obj"]), copy / "build" / "default" / "grade-obj" / "alpha.o")

    def test_checker_that_did_not_build_is_not_graded(self):
        self.course.env["FAKE_BROKEN"] = "beta_test_starter"
        sb = self.prepare()
        self.assertIn("did not build in the instructor's tree", sb.problems["beta_test_starter"])
        self.assertIn("beta_runner_starter", sb.link_cmd)
        subs = self.tmp / "subs"
        (subs / "ann" / "01-demo").mkdir(parents=True)
        (subs / "ann" / "01-demo" / "alpha.cu").write_text(src("pass"))
        (subs / "ann" / "01-demo" / "beta.cu").write_text(src("pass"))
        out = self.tmp / "out"
        args = ["--submissions", str(subs), "--out", str(out), "--hidden-tests", str(self.hidden), "-q"]
        err = io.StringIO()
        with mock.patch.dict(os.environ, self.course.env), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(err):
            code = grade_cli.main(args, root=self.course.root)  # the real prepare_shared
        self.assertEqual(code, 0, err.getvalue())
        data = json.loads((out / "students" / "ann" / "results.json").read_text())
        alpha, beta = data["cudalab"]["exercises"]
        self.assertEqual(alpha["status"], "passed")
        self.assertIn("hidden ones included", alpha["reason"])
        self.assertEqual(beta["status"], "compile_error")
        self.assertTrue(beta["reason"].startswith("not graded: beta_test_starter did not build "
                                                  "in the instructor's tree"), beta["reason"])
        self.assertFalse([r for r in self.course.runs() if "beta" in r["argv"][0]])


class BuildLimitsTest(unittest.TestCase):
    """build_exercise within the limits of one build (classbuild.COMPILE_MAX_FILE and
    COMPILE_MAX_RSS, made small here), with shell commands for the compiler and the linker:
    one stopped by a limit is "did not compile" with the limit, whatever it left or said,
    and a file that reached the limit is deleted at once."""

    MAX_FILE, MAX_RSS = 1 << 20, 200 << 20

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-build-limits-")
        self.tmp = Path(self._tmp.name)
        self.ex = [e for c in load_all(FakeCourse(self.tmp).root) for e in c.exercises][0]
        course = self.tmp / "shared" / "course"
        self.sb = classbuild.SharedBuild(course=course, build_dir=course / "build" / "default")
        self.sb.build_dir.mkdir(parents=True)
        self.copy = self.tmp / "work" / "ann" / "course"
        self.copy.mkdir(parents=True)
        self.runner = self.ex.runner_target("starter")
        self.obj = self.copy / "build" / "default" / "grade-obj" / f"{self.ex.slug}.o"
        self.exe = self.copy / "build" / "default" / "bin" / self.runner

    def tearDown(self):
        self._tmp.cleanup()

    def build(self, compile_cmd: str, link_cmd: str = "") -> tuple[str | None, str]:
        """(why the runner was not built or None, the build log); `obj/x.o` is the object
        and `bin/RUNNER` the runner in the commands (moved to the student's copy)."""
        self.sb.compile_cmd[self.ex.slug] = compile_cmd
        self.sb.starter_obj[self.ex.slug] = "obj/x.o"
        self.sb.link_cmd[self.runner] = (link_cmd or "cp obj/x.o bin/RUNNER").replace("RUNNER", self.runner)
        log = io.StringIO()
        start = time.monotonic()
        eb = classbuild.build_exercise(self.sb, self.ex, self.copy, [self.runner], 60, log,
                                       max_file=self.MAX_FILE, max_rss=self.MAX_RSS)
        self.assertLess(time.monotonic() - start, 20)
        got = eb.not_built.get(self.runner)
        if got is not None:
            self.assertEqual(got[1], [])  # the reason says it all
        return (got[0] if got else None), log.getvalue()

    def assert_no_big_file(self):
        for p in self.copy.rglob("*"):
            self.assertFalse(p.is_file() and p.stat().st_size >= self.MAX_FILE, p)

    FILE = ("did not compile: the compiler was stopped: a file it wrote reached 1 MiB, the most one "
            "build may write (a course object is under 2 MiB)")
    HOG = f"{PY} -c 'import time; x = bytearray(600 << 20); time.sleep(30)'"

    def test_within_the_limits(self):
        reason, _ = self.build("head -c 100000 /dev/zero > obj/x.o")
        self.assertIsNone(reason)
        self.assertEqual(self.exe.stat().st_size, 100000)

    def test_an_object_that_reaches_the_limit(self):
        # head is killed by SIGXFSZ at 1 MiB, silently: the file tells
        reason, log = self.build("head -c 3000000 /dev/zero > obj/x.o")
        self.assertEqual(reason, self.FILE)
        self.assertFalse(self.obj.exists())
        self.assertIn("grade: the compiler was stopped", log)
        self.assert_no_big_file()

    def test_any_file_of_the_compile_that_reaches_the_limit(self):
        # an intermediate file stopped at the limit, then a small object and exit 0
        reason, _ = self.build("(head -c 3000000 /dev/zero > obj/x.o.s); echo x > obj/x.o")
        self.assertEqual(reason, self.FILE)
        self.assertEqual(list(self.obj.parent.iterdir()), [])
        self.assert_no_big_file()

    def test_sigxfsz_said_by_the_compiler(self):
        # nvcc when gas is killed: gcc says so and exits 4; no big file left, an empty object
        reason, _ = self.build("echo 'gcc: internal compiler error: File size limit exceeded signal "
                               "terminated program as'; : > obj/x.o; exit 4")
        self.assertEqual(reason, self.FILE)
        self.assertFalse(self.obj.exists())

    def test_a_compiler_past_the_memory_limit(self):
        reason, log = self.build(self.HOG)
        self.assertEqual(reason, "did not compile: the compiler was stopped at 200 MiB of host memory "
                                 "(the limit of one build; a course file needs under 400 MiB): a huge "
                                 "initialised array or a compile-time computation?")
        self.assertIn("(limit 200 MiB)", log)

    def test_a_linker_past_the_limits(self):
        reason, _ = self.build("echo x > obj/x.o", "head -c 3000000 /dev/zero > bin/RUNNER")
        self.assertEqual(reason, "did not compile (link error): the linker was stopped: a file it wrote "
                                 "reached 1 MiB, the most one build may write (a course runner is under 2 MiB)")
        self.assertFalse(self.exe.exists())
        self.assert_no_big_file()
        reason, _ = self.build("echo x > obj/x.o", self.HOG)
        self.assertTrue(reason.startswith("did not compile (link error): the linker was stopped at 200 MiB "
                                          "of host memory (the limit of one build;"), reason)

    def test_the_limits_of_a_class(self):
        self.assertEqual((classbuild.COMPILE_MAX_FILE, classbuild.COMPILE_MAX_RSS), (64 << 20, 2 << 30))


class CompilerReadsTest(unittest.TestCase):
    """What of /opt a submission's sandboxed compiler may read (classbuild.open_parts): a CUDA
    toolkit there, never a course installed there (solutions/, the class's output, the
    submissions, the hidden tests), which an assembler's .incbin would copy into the object
    (red-team attack asm-incbin-exfiltrate) with no #include for the source check to refuse."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-compiler-reads-")
        self.tmp = Path(self._tmp.name)
        self.opt = self.tmp / "opt"
        for d in ("cuda/bin", "prof/cudalab/solutions", "prof/cudalab/.grade/work/ann/course",
                  "prof/notes", "hidden"):
            (self.opt / d).mkdir(parents=True)
        (self.opt / "prof" / "cudalab" / "solutions" / "sum.cu").write_text("the reference\n")
        (self.opt / "prof" / "todo.txt").write_text("x\n")
        (self.opt / "cuda-link").symlink_to(self.opt / "cuda")
        (self.opt / "course-link").symlink_to(self.opt / "prof" / "cudalab")
        self.private = [self.opt / "prof" / "cudalab", self.opt / "hidden"]

    def tearDown(self):
        self._tmp.cleanup()

    def test_open_parts(self):
        o = self.opt
        self.assertEqual(classbuild.open_parts(o, self.private),
                         [o / "cuda", o / "cuda-link", o / "prof" / "notes", o / "prof" / "todo.txt"])
        self.assertEqual(classbuild.open_parts(o, [self.tmp / "elsewhere"]), [o])
        self.assertEqual(classbuild.open_parts(o, [o]), [])
        self.assertEqual(classbuild.open_parts(o / "prof" / "cudalab" / "solutions", self.private), [])
        self.assertEqual(classbuild.open_parts(self.tmp / "none", self.private), [])
        self.assertEqual(classbuild.COMPILER_EXTRA_DIRS, ("/opt",))

    def test_the_compiler_reads_no_private_folder(self):
        ex = [e for c in load_all(FakeCourse(self.tmp).root) for e in c.exercises][0]
        course = self.tmp / "shared" / "course"
        sb = classbuild.SharedBuild(course=course, build_dir=course / "build" / "default")
        sb.build_dir.mkdir(parents=True)
        copy = self.opt / "prof" / "cudalab" / ".grade" / "work" / "ann" / "course"
        runner = ex.runner_target("starter")
        sb.compile_cmd[ex.slug] = f"cat {self.opt}/prof/cudalab/solutions/sum.cu > obj/x.o"
        sb.starter_obj[ex.slug] = "obj/x.o"
        sb.link_cmd[runner] = f"cp obj/x.o bin/{runner}"
        from cudalab_grade import sandbox
        asked = []

        def compile_prefix(kind, *, readable, writable, **kw):
            asked.append(sorted(str(p) for p in readable))
            return []
        with mock.patch.object(classbuild, "COMPILER_EXTRA_DIRS", (str(self.opt),)), \
                mock.patch.object(sandbox, "compile_prefix", compile_prefix):
            classbuild.build_exercise(sb, ex, copy, [runner], 60, io.StringIO(), sandbox_kind="bwrap",
                                      private=self.private)
        self.assertEqual(asked, [sorted(str(p) for p in (copy, self.opt / "cuda", self.opt / "cuda-link",
                                                         self.opt / "prof" / "notes",
                                                         self.opt / "prof" / "todo.txt"))])
        kind = sandbox.detect()
        if kind is None:
            self.skipTest("no sandbox works here")
        log = io.StringIO()
        with mock.patch.object(classbuild, "COMPILER_EXTRA_DIRS", (str(self.opt),)):
            eb = classbuild.build_exercise(sb, ex, copy, [runner], 60, log, sandbox_kind=kind,
                                           private=self.private)
        self.assertIn(runner, eb.not_built, log.getvalue())   # the sandboxed cat found no solution
        self.assertIn("No such file or directory", log.getvalue())


class HostileNamesTest(unittest.TestCase):
    """Student ids, member names and program output reach Markdown and CSV as text, never markup."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="test-names-")
        tmp = Path(cls._tmp.name)
        cls.course = FakeCourse(tmp)
        subs = tmp / "subs"
        cls.ids = ["=1+2", "@SUM(A1)", "-2+3", "+cmd", "ev`il\n# Heading <b>x<\\b> | [a](http:e)"]
        for sid in cls.ids:
            d = subs / sid / "01-demo"
            d.mkdir(parents=True)
            (d / "alpha.cu").write_text(src("pass"))
            (d / "beta.cu").write_text(src("pass"))
        with zipfile.ZipFile(subs / "zed.zip", "w") as z:
            z.writestr("01-demo/alpha.cu", src("pass"))
            z.writestr("x/a``b`|<img src=x onerror=alert(1)>[c](http://e)\n```.md", "x")
        with zipfile.ZipFile(subs / "zz.zip", "w") as z:
            z.writestr("../<script>alert(1)</script>|=HYPERLINK(\"http://e\")", "x")
        cls.out = tmp / "out"
        cls.code, _, cls.err = cls.course.grade("--submissions", str(subs), "--out", str(cls.out),
                                                "-q")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_gradebook_cells_are_not_formulas(self):
        self.assertEqual(self.code, 0, self.err)
        rows = list(csv.reader(io.StringIO((self.out / "gradebook.csv").read_text())))
        students = [r[0] for r in rows[1:]]
        for sid in ("=1+2", "@SUM(A1)", "-2+3", "+cmd"):
            self.assertIn("'" + sid, students)
        for row in rows:
            for cell in row:
                self.assertFalse(cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell)
        problems = next(r for r in rows if r[0] == "zz")[-1]
        self.assertIn("climbs out", problems)

    def test_markdown_shows_names_as_text(self):
        texts = [(d / "report.md").read_text() for d in (self.out / "students").iterdir()]
        texts.append((self.out / "summary.md").read_text())
        for text in texts:
            # outside code spans (list items of file names, checked below) nothing is markup
            prose = "\n".join(ln for ln in text.splitlines() if not ln.startswith("- `"))
            for markup in ("<img", "<script", "<b>", "](http", "\n# Heading"):
                self.assertNotIn(markup, prose.replace("\\<", "").replace("\\](", ""))
        evil = next(t for t in texts if t.startswith("# Grade report: ev"))
        self.assertEqual([ln for ln in evil.splitlines() if ln.startswith("# ")],
                         ["# Grade report: ev\\`il \\# Heading \\<b\\>x\\<\\\\b\\> \\| "
                          "\\[a\\](http:e)"])
        zed = next(t for t in texts if t.startswith("# Grade report: zed"))
        self.assertIn("- ````x/a``b`|<img src=x onerror=alert(1)>[c](http:/e) ```.md````", zed)
        summary = texts[-1]
        self.assertIn("\\<script\\>alert(1)\\</script\\>\\|=HYPERLINK", summary)

    def test_escape_helpers(self):
        from cudalab_grade import escape
        self.assertEqual(escape.csv_cell("=A1"), "'=A1")
        self.assertEqual(escape.csv_cell("\tx"), "'\tx")
        self.assertEqual(escape.csv_cell("10.0"), "10.0")
        self.assertEqual(escape.md_code("a`b"), "``a`b``")
        self.assertEqual(escape.md_code("`x"), "`` `x ``")
        self.assertEqual(escape.md_block("a\n```\nb"), ["````", "a", "```", "b", "````"])
        self.assertEqual(escape.md_text("a|b\nc"), "a\\|b c")
        self.assertEqual(escape.printable("a\x1b[31mb"), "a?[31mb")
        # a name shows as it reads: no bidirectional override (U+202E: "\u202eecila" shows "alice")
        self.assertEqual(escape.md_text("\u202eecila"), "?ecila")
        self.assertEqual(escape.csv_cell("\u202eecila\u2066"), "?ecila?")
        self.assertEqual(escape.csv_cell("\u200fname"), "\u200fname")   # a mark, not an override
        # one line on the terminal: a newline in an id prints no forged line of its own
        self.assertEqual(escape.one_line("x\n  alice: 10.0 points\t"), "x?  alice: 10.0 points?")
        # a bare CR ends a row in a spreadsheet: its cell (and row) is quoted
        self.assertEqual(escape.csv_text([["a", "b"], ["x\r=1+2", "1"]]), 'a,b\n"x\r=1+2","1"\n')
        # a name that is not UTF-8 (surrogate escapes) shows its bytes, and can be written
        self.assertEqual(escape.md_text("b\udcffob"), "b\\\\xffob")
        self.assertEqual(escape.csv_cell("=\udcfe\ud800"), "'=\\xfe?")
        self.assertEqual(escape.one_line("a\udcff"), "a\\xff")
        escape.md_block("x\udcff")[1].encode()


class HiddenWordsTest(unittest.TestCase):
    def record(self, student, hidden_tests):
        return {"score": 10.0, "tests": [], "cudalab": {
            "student": student, "seed": None, "hidden_tests": True, "hidden_suites": ["1.1"],
            "sanitize": [], "perf": False, "warnings": [], "rejected": None,
            "exercises": [{"id": "1.1", "slug": "alpha", "status": "passed", "max_points": 10,
                           "correctness_points": 10.0, "perf_points": 0.0, "reason": "",
                           "hidden_suite": True, "hidden_tests": hidden_tests}]}}

    def test_a_suite_that_ran_no_test_needs_a_look(self):
        from cudalab_grade import classgrade as cg, classreport
        s = classreport.summary([self.record("a", 0), self.record("b", None)])
        self.assertIn("no hidden tests ran (1 of 1 exercise(s) had a hidden suite)", s)
        self.assertIn("1.1 alpha: its hidden suite ran no test", s)
        s = classreport.summary([self.record("a", 4), self.record("b", None)])
        self.assertIn("hidden tests ran for 1 of 1 exercise(s)", s)
        self.assertIn("| 4 tests, ran for 1 of 2 |", s)
        from cudalab_grade.grading import Result
        ex = load_all_demo()[0]
        self.assertEqual(cg.hidden_note(Result(ex, 10, hidden_suite=True, hidden_tests=0)),
                         "hidden tests: ran 0 (no hidden test matches the exercise's filter)")
        self.assertEqual(cg.hidden_note(Result(ex, 10, hidden_suite=True, hidden_tests=5)),
                         "hidden tests: ran 5")


def load_all_demo():
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "chapters" / "01-demo").mkdir(parents=True)
        (Path(tmp) / "chapters" / "01-demo" / "exercises.toml").write_text(MANIFEST)
        return [e for c in load_all(Path(tmp)) for e in c.exercises]



class ArchiveTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-archive-")
        self.tmp = Path(self._tmp.name)
        self.dest = self.tmp / "a" / "b" / "dest"

    def tearDown(self):
        self._tmp.cleanup()

    def entry(self, path):
        return next(e for e in submissions.discover(path.parent) if e.path == path)

    def rejected(self, path, limits=submissions.Limits()):
        with self.assertRaises(submissions.Rejected) as cm:
            submissions.unpack(self.entry(path), self.dest, limits)
        self.assertEqual([p for p in self.tmp.rglob("*") if p.name in ("x", "escape")], [])
        return str(cm.exception)

    def zip(self, name, members):
        p = self.tmp / name
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
            for m in members:
                if isinstance(m, zipfile.ZipInfo):
                    z.writestr(m, "target")
                else:
                    z.writestr(m[0], m[1])
        return p

    def tar(self, name, members):
        p = self.tmp / name
        with tarfile.open(p, "w:gz") as t:
            for info, data in members:
                t.addfile(info, io.BytesIO(data) if data is not None else None)
        return p

    def test_good_zip_and_tar(self):
        p = self.zip("s1.zip", [("01-demo/alpha.cu", "a"), ("01-demo/", "")])
        submissions.unpack(self.entry(p), self.dest)
        self.assertEqual((self.dest / "01-demo" / "alpha.cu").read_text(), "a")
        info = tarfile.TarInfo("w/01-demo/beta.cu")
        info.size = 1
        p = self.tar("s2.tgz", [(info, b"b")])
        submissions.unpack(self.entry(p), self.tmp / "d2")
        self.assertEqual((self.tmp / "d2" / "w" / "01-demo" / "beta.cu").read_text(), "b")
        self.assertEqual(self.entry(p).student, "s2")

    def test_encrypted_zip_member(self):
        p = self.zip("enc.zip", [("01-demo/alpha.cu", "a")])
        data = bytearray(p.read_bytes())
        for sig, flags in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # local and central headers
            at = data.index(sig)
            data[at + flags] |= 0x1
        p.write_bytes(bytes(data))
        self.assertIn("is encrypted", self.rejected(p))

    def test_zip_traversal_absolute_link(self):
        self.assertIn("climbs out", self.rejected(self.zip("t.zip", [("../x", "1")])))
        self.assertIn("climbs out", self.rejected(self.zip("t2.zip", [("a/../../x", "1")])))
        self.assertIn("absolute", self.rejected(self.zip("t3.zip", [("/tmp/x", "1")])))
        link = zipfile.ZipInfo("escape")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        self.assertIn("symbolic link", self.rejected(self.zip("t4.zip", [link])))

    def test_zip_sizes_and_bomb(self):
        small = submissions.Limits(max_member=100, max_total=150)
        self.assertIn("larger than 100", self.rejected(self.zip("big.zip", [("a", "x" * 101)]), small))
        self.assertIn("more than 150", self.rejected(
            self.zip("many.zip", [("a", "x" * 90), ("b", "x" * 90)]), small))
        bomb = self.zip("bomb.zip", [("a", "\0" * (3 << 20))])
        self.assertIn("archive bomb", self.rejected(bomb))
        few = submissions.Limits(max_members=3)
        self.assertIn("more than 3 members", self.rejected(
            self.zip("n.zip", [(f"f{i}", "x") for i in range(5)]), few))

    def test_tar_links_devices_and_lies(self):
        sym = tarfile.TarInfo("escape")
        sym.type, sym.linkname = tarfile.SYMTYPE, "/etc/passwd"
        self.assertIn("is a link", self.rejected(self.tar("l.tar.gz", [(sym, None)])))
        hard = tarfile.TarInfo("escape")
        hard.type, hard.linkname = tarfile.LNKTYPE, "other"
        self.assertIn("is a link", self.rejected(self.tar("h.tgz", [(hard, None)])))
        dev = tarfile.TarInfo("x")
        dev.type = tarfile.CHRTYPE
        self.assertIn("device", self.rejected(self.tar("d.tgz", [(dev, None)])))
        up = tarfile.TarInfo("../x")
        up.size = 1
        self.assertIn("climbs out", self.rejected(self.tar("u.tgz", [(up, b"1")])))
        big = tarfile.TarInfo("x")
        big.size = 200
        self.assertIn("larger than 100", self.rejected(
            self.tar("b.tgz", [(big, b"1" * 200)]), submissions.Limits(max_member=100)))
        (self.tmp / "junk.tgz").write_bytes(b"not a tar at all")
        self.assertIn("not a tar archive (empty or truncated)", self.rejected(self.tmp / "junk.tgz"))

    def test_duplicate_member(self):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = self.zip("dup.zip", [("a", "1"), ("a", "2")])
        self.assertIn("same path twice", self.rejected(p))


    def test_discover_kinds_and_ids(self):
        d = self.tmp / "subs"
        d.mkdir()
        (d / "ann").mkdir()
        (d / "ann.zip").write_bytes(b"")
        (d / "bob.tar.gz").write_bytes(b"")
        (d / ".hidden").mkdir()
        (d / "link").symlink_to(d / "ann")
        (d / "x.txt").write_text("")
        got = {(e.path.name, e.student, e.kind) for e in submissions.discover(d)}
        self.assertIn(("ann", "ann", "dir"), got)
        self.assertIn(("bob.tar.gz", "bob", "tar"), got)
        self.assertIn(("link", "link", "bad"), got)
        self.assertIn(("x.txt", "x.txt", "bad"), got)
        dup = next(e for e in submissions.discover(d) if e.path.name == "ann.zip")
        self.assertEqual(dup.kind, "bad")
        self.assertIn("same student id", dup.why)

    def test_ids_that_differ_only_by_case(self):
        """Bob and bob are graded apart, with a warning: on a case-insensitive file system
        their students/ folders would be one."""
        d = self.tmp / "subs"
        d.mkdir()
        for name in ("Bob", "bob", "ann"):
            (d / name).mkdir()
        entries = submissions.discover(d)
        self.assertEqual({e.kind for e in entries}, {"dir"})
        warnings = submissions.case_collisions(entries)
        self.assertEqual(len(warnings), 1)
        self.assertIn("Bob, bob differ only by case", warnings[0])
        self.assertEqual(submissions.case_collisions(entries[:1]), [])

    def test_long_ids_fit_a_folder_name(self):
        """A duplicate's id joins two entry names (up to 500 characters): its folder name is
        bounded (start of the id, then a hash of all of it), so its report can be written."""
        d = self.tmp / "subs"
        d.mkdir()
        long = "x" * 250
        (d / long).mkdir()
        (d / (long + ".zip")).write_bytes(b"")
        entries = submissions.discover(d)
        dup = next(e for e in entries if e.kind == "bad")
        self.assertIn("same student id", dup.why)
        names = {e.safe_id for e in entries}
        self.assertEqual(len(names), 2)
        for name in names:
            self.assertLessEqual(len(name), submissions.MAX_SAFE_NAME)
            (self.tmp / "out" / name).mkdir(parents=True)
        self.assertEqual(submissions.safe_name("ann"), "ann")
        self.assertEqual(submissions.safe_name("y" * 200), "y" * 200)
        self.assertNotEqual(submissions.safe_name("y" * 300), submissions.safe_name("y" * 301))


def _tar_header(name: bytes, type_: bytes, size_field: bytes) -> bytes:
    """One 512-byte tar header with a raw size field (12 bytes) and a right checksum."""
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = size_field.ljust(12, b"\0")[:12]
    h[136:148] = b"00000000000\0"
    h[156:157] = type_
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def _octal(n: int) -> bytes:
    return b"%011o\0" % n


def _pax(key: str, value: str) -> bytes:
    """One pax record, "<length> key=value\n", its length counting itself."""
    body = f" {key}={value}\n".encode()
    n = len(body) + 1
    while len(str(n).encode()) + len(body) != n:
        n += 1
    return str(n).encode() + body


def _gzip_stream(parts, level: int = 6) -> bytes:
    """A gzip of the concatenated parts (each a bytes, or (bytes, times) to repeat it), made in chunks."""
    import zlib
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    out = []
    for part in parts:
        data, times = part if isinstance(part, tuple) else (part, 1)
        for _ in range(times):
            out.append(c.compress(data))
    out.append(c.flush())
    return b"".join(out)


class HostileArchiveTest(unittest.TestCase):
    """Archives built to make the grader itself eat memory: refused from their headers, fast, small."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-hostile-")
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def refused(self, name: str, data: bytes, limits=submissions.Limits()) -> str:
        import tracemalloc
        p = self.tmp / name
        p.write_bytes(data)
        del data
        entry = next(e for e in submissions.discover(self.tmp) if e.path == p)
        tracemalloc.start()
        start = time.monotonic()
        try:
            with self.assertRaises(submissions.Rejected) as cm:
                submissions.unpack(entry, self.tmp / "dest" / name, limits)
            seconds = time.monotonic() - start
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertLess(seconds, 3.0, f"{name}: refused after {seconds:.1f} s")
        self.assertLess(peak, 8 << 20, f"{name}: {peak >> 20} MiB used to refuse it")
        self.assertEqual([q for q in (self.tmp / "dest").rglob("*") if q.is_file()], [])
        p.unlink()
        return str(cm.exception)

    def test_pax_header_of_1_gb(self):
        tar = _tar_header(b"././@PaxHeader", b"x", _octal(1 << 30)) + _pax("path", "a" * 20)
        tar = tar.ljust(16 << 10, b"a")
        self.assertIn("pax header at byte 0 declares 1073741824 bytes", self.refused("pax.tar", tar))
        # the same behind gzip, with 64 MiB of pax data actually there to read
        gz = _gzip_stream([_tar_header(b"././@PaxHeader", b"x", _octal(1 << 30)),
                           (_pax("a", "bcdefghijklmn") * 1024, 3000)])
        self.assertLess(len(gz), 1 << 20)
        self.assertIn("declares 1073741824 bytes", self.refused("pax.tar.gz", gz))

    def test_gnu_long_name_of_100_mb(self):
        gz = _gzip_stream([_tar_header(b"././@LongLink", b"L", _octal(100 << 20)),
                           (b"a" * (1 << 20), 100)])
        self.assertIn("GNU long name at byte 0 declares 104857600 bytes",
                      self.refused("long.tgz", gz))
        base256 = b"\x80" + (100 << 20).to_bytes(11, "big")
        tar = _tar_header(b"././@LongLink", b"K", base256) + b"a" * 4096
        self.assertIn("declares 104857600 bytes", self.refused("long.tar", tar))

    def test_malformed_size_fields(self):
        for field in (b"12345678zzz\0", b"\xff" * 12):
            with self.subTest(field=field):
                tar = _tar_header(b"a.cu", b"0", field) + b"\0" * 1024
                why = self.refused("bad.tar", tar)
                self.assertRegex(why, "not a tar archive|malformed|negative")
        ok = _tar_header(b"a.cu", b"0", _octal(1)) + b"x".ljust(512, b"\0")
        bad_second = ok + _tar_header(b"b.cu", b"0", b"9" * 11 + b"\0") + b"\0" * 1024
        self.assertIn("malformed tar header at byte 1024", self.refused("bad2.tar", bad_second))

    def test_gzip_bomb(self):
        # 256 MiB of tar stream (a member of 4 MiB of zeros, 64 times) in 260 KB of gzip
        member = _tar_header(b"z.bin", b"0", _octal(4 << 20))
        gz = _gzip_stream([(member + b"\0" * (4 << 20), 64)], level=9)
        self.assertLess(len(gz), 1 << 20)
        self.assertIn("unpacks to more than", self.refused("bomb.tar.gz", gz))
        # pax headers of 60 KiB, each under the limit, 2000 times (with a folder after each):
        # the headers' budget stops it
        record = _pax("comment", "c" * ((60 << 10) - 20))
        unit = (_tar_header(b"././@PaxHeader", b"g", _octal(len(record)))
                + record.ljust((len(record) + 511) // 512 * 512, b"\0")
                + _tar_header(b"d/", b"5", _octal(0)))
        gz = _gzip_stream([(unit, 2000)], level=9)
        self.assertIn("add up to more than", self.refused("headers.tgz", gz))
        # and the stream limit itself, with a header budget too large to stop it first
        loose = submissions.Limits(max_headers=1 << 40)
        self.assertIn("bytes of tar stream", self.refused("stream.tgz", gz, loose))

    def test_zip_with_100k_entries(self):
        import struct
        import zlib
        local, central = [], []
        offset = 0
        for i in range(100_000):
            name = b"f%06d" % i
            crc = zlib.crc32(b"")
            lh = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, crc, 0, 0, len(name), 0) + name
            central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, crc, 0, 0,
                                       len(name), 0, 0, 0, 0, 0, offset) + name)
            local.append(lh)
            offset += len(lh)
        cd = b"".join(central)
        end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, len(cd), offset, 0)
        data = b"".join(local) + cd + end
        # the entry count of 0xFFFF without zip64 is refused; so is the honest count in zip64
        self.assertIn("zip64", self.refused("many.zip", data))
        z64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 100_000, 100_000,
                          len(cd), offset)
        loc = struct.pack("<4sLQL", b"PK\x06\x07", 0, offset + len(cd), 1)
        data = b"".join(local) + cd + z64 + loc + end
        self.assertIn("its directory says 100000", self.refused("many64.zip", data))

    def test_zip_with_absurd_names_and_extras(self):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("a" * 3000, "x")
        self.assertIn("a name of 3000 bytes", self.refused("name.zip", buf.getvalue()))
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            info = zipfile.ZipInfo("a.cu")
            info.extra = b"\x99\x99" + (60000).to_bytes(2, "little") + b"\0" * 60000
            z.writestr(info, "x")
        self.assertIn("extra field or comment", self.refused("extra.zip", buf.getvalue()))

    def test_other_compressions_and_types(self):
        import bz2
        inner = io.BytesIO()
        with tarfile.open(fileobj=inner, mode="w") as t:
            info = tarfile.TarInfo("a.cu")
            t.addfile(info, io.BytesIO(b""))
        self.assertIn("compressed with bzip2", self.refused("b.tar", bz2.compress(inner.getvalue())))
        fifo = _tar_header(b"p", b"6", _octal(0)) + b"\0" * 1024
        self.assertIn("special file", self.refused("fifo.tar", fifo))
        sparse = _tar_header(b"s", b"S", _octal(0)) + b"\0" * 1024
        self.assertIn("special file", self.refused("sparse.tar", sparse))
        chain = b"".join(_tar_header(b"././@LongLink", b"L", _octal(5)) + b"abcd\0".ljust(512, b"\0")
                         for _ in range(20)) + b"\0" * 1024
        self.assertIn("extended headers in a row", self.refused("chain.tar", chain))
        pax_sparse = _pax("GNU.sparse.size", "100")
        tar = (_tar_header(b"././@PaxHeader", b"x", _octal(len(pax_sparse)))
               + pax_sparse.ljust(512, b"\0") + _tar_header(b"a", b"0", _octal(0)) + b"\0" * 1024)
        self.assertIn("sparse", self.refused("paxsparse.tar", tar))

    def test_ordinary_pax_gnu_and_multimember_archives_still_unpack(self):
        long = "wrap/" + "d" * 120 + "/01-demo/alpha.cu"
        for fmt in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
            with self.subTest(format=fmt):
                p = self.tmp / f"ok{fmt}.tar.gz"
                with tarfile.open(p, "w:gz", format=fmt,
                                  pax_headers={"comment": "git archive's commit id"}) as t:
                    data = b"int x;\n"
                    info = tarfile.TarInfo(long)
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
                entry = next(e for e in submissions.discover(self.tmp) if e.path == p)
                submissions.unpack(entry, self.tmp / f"d{fmt}")
                self.assertEqual((self.tmp / f"d{fmt}" / long).read_bytes(), b"int x;\n")
                p.unlink()
        # pax size record overrides the header's size (as tarfile reads it)
        rec = _pax("size", "300")
        tar = (_tar_header(b"././@PaxHeader", b"x", _octal(len(rec))) + rec.ljust(512, b"\0")
               + _tar_header(b"a.cu", b"0", _octal(0)) + b"y" * 300 + b"\0" * 212 + b"\0" * 1024)
        p = self.tmp / "paxsize.tar"
        p.write_bytes(_gzip_stream([tar[:700]]) + _gzip_stream([tar[700:]]))  # two gzip members
        p.rename(self.tmp / "paxsize.tgz")
        entry = next(e for e in submissions.discover(self.tmp) if e.path.name == "paxsize.tgz")
        submissions.unpack(entry, self.tmp / "dp")
        self.assertEqual((self.tmp / "dp" / "a.cu").read_bytes(), b"y" * 300)


class LayoutTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-layout-")
        self.tmp = Path(self._tmp.name)
        (self.tmp / "chapters" / "01-demo").mkdir(parents=True)
        (self.tmp / "chapters" / "01-demo" / "exercises.toml").write_text(MANIFEST)
        self.exercises = [e for c in load_all(self.tmp) for e in c.exercises]

    def tearDown(self):
        self._tmp.cleanup()

    def mapped(self, files, links=()):
        d = self.tmp / f"s{len(list(self.tmp.iterdir()))}"
        for rel in files:
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text("x")
        for rel, target in links:
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).symlink_to(target)
        d.mkdir(exist_ok=True)
        return submissions.map_files(d, self.exercises)

    def test_places(self):
        for layout in (["01-demo/alpha.cu", "01-demo/beta.cu"],
                       ["starter/01-demo/alpha.cu", "starter/01-demo/beta.cu"],
                       ["wrap/01-demo/alpha.cu", "wrap/01-demo/beta.cu"],
                       ["wrap/starter/01-demo/alpha.cu", "wrap/starter/01-demo/beta.cu"],
                       ["alpha.cu", "beta.cu"]):
            with self.subTest(layout=layout):
                s = self.mapped(layout)
                self.assertEqual(sorted(s.files), ["1.1", "1.2"])
                self.assertEqual((s.missing, s.ignored), ([], []))

    def test_missing_ignored_and_links(self):
        s = self.mapped(["01-demo/alpha.cu", "01-demo/notes.txt", "build/x.o"],
                        links=[("01-demo/beta.cu", "/etc/hostname")])
        self.assertEqual(list(s.files), ["1.1"])
        self.assertIn("1.2", s.problems)
        self.assertIn("symbolic link", s.problems["1.2"])
        self.assertIn("01-demo/notes.txt", s.ignored)
        self.assertIn("build/x.o", s.ignored)

    def test_folder_or_fifo_at_the_files_place_is_refused_not_missing(self):
        """A folder or a FIFO where the exercise's file goes was handed in: the report says
        what stands there, not 'not submitted ... no such file in the submission'."""
        d = self.tmp / "odd"
        (d / "01-demo" / "alpha.cu").mkdir(parents=True)
        (d / "01-demo" / "alpha.cu" / "inner.cu").write_text("x")
        os.mkfifo(d / "01-demo" / "beta.cu")
        s = submissions.map_files(d, self.exercises)
        self.assertEqual((s.files, s.missing), ({}, []))
        self.assertEqual(s.problems["1.1"], "01-demo/alpha.cu is a folder, not a file (refused)")
        self.assertEqual(s.problems["1.2"],
                         "01-demo/beta.cu is a FIFO, socket or device, not a file (refused)")

    def test_file_in_a_place_not_looked_at_is_named(self):
        """The layout two folders deep, or two copies side by side: the exercise is not
        submitted, and the report names where its file is and why it was not taken."""
        s = self.mapped(["outer/inner/01-demo/alpha.cu", "outer/inner/01-demo/beta.cu"])
        self.assertEqual(sorted(s.missing), ["1.1", "1.2"])
        self.assertEqual(s.misplaced["1.1"], ["outer/inner/01-demo/alpha.cu"])
        note = submissions.misplaced_note(self.exercises[0], s.misplaced["1.1"])
        self.assertIn("at outer/inner/01-demo/alpha.cu, not where the grader looks", note)
        self.assertIn("inside one wrapping folder", note)
        self.assertIn("outer/inner/01-demo/alpha.cu (the name of 1.1's file, in a place the "
                      "grader does not look)", s.ignored)
        s = self.mapped(["copy1/01-demo/alpha.cu", "copy2/01-demo/alpha.cu", "01-demo/beta.cu"])
        self.assertEqual(s.missing, ["1.1"])
        self.assertEqual(list(s.files), ["1.2"])
        note = submissions.misplaced_note(self.exercises[0], s.misplaced["1.1"])
        self.assertIn("copy1/01-demo/alpha.cu, copy2/01-demo/alpha.cu", note)
        self.assertIn("holds 2 copies", note)
        self.assertNotIn("1.2", s.misplaced)

    def test_oversize_source_refused(self):
        d = self.tmp / "big"
        (d / "01-demo").mkdir(parents=True)
        (d / "01-demo" / "alpha.cu").write_text("x" * 2000)
        s = submissions.map_files(d, self.exercises, submissions.Limits(max_source=1000))
        self.assertIn("larger than 1000", s.problems["1.1"])


class LimitsTest(unittest.TestCase):
    def test_map_parallel_keeps_order_and_kills_on_error(self):
        import time
        out = list(proc.map_parallel(lambda x: (time.sleep(0.05 * (3 - x)), x)[1], range(4), 3))
        self.assertEqual(out, [0, 1, 2, 3])

        def one(x):
            if x == 0:
                time.sleep(0.3)
                raise RuntimeError("boom")
            return proc.run([PY, "-c", "import time; time.sleep(30)"], 60, Path(".")).returncode
        start = time.monotonic()
        with self.assertRaises(RuntimeError):
            list(proc.map_parallel(one, range(6), 3))
        self.assertLess(time.monotonic() - start, 10)  # the sleepers were killed, the rest dropped

    def test_hang_is_killed(self):
        start = time.monotonic()
        p = proc.run([PY, "-c", "import time; time.sleep(30)"], 0.5, Path("."))
        self.assertTrue(p.timed_out)
        self.assertLess(time.monotonic() - start, 5)

    def test_100_mb_of_output_is_truncated(self):
        code = "import sys\nline = 'y' * 1023 + '\\n'\nfor _ in range(100 * 1024): sys.stdout.write(line)\nprint('LAST')"
        p = proc.run([PY, "-c", code], 60, Path("."), max_output=1 << 20)
        self.assertEqual(p.returncode, 0)
        self.assertLess(len(p.output), (1 << 20) + 200)
        self.assertGreater(p.dropped, 99 << 20)
        self.assertIn("LAST", p.output)       # the end is kept (a crash's last words)
        self.assertIn("bytes of output dropped", p.output)

    def test_memory_hog_is_killed(self):
        code = "import time\nx = bytearray(800 << 20)\ntime.sleep(10)"
        p = proc.run([PY, "-c", code], 60, Path("."), max_rss=200 << 20)
        self.assertIsNotNone(p.memory_exceeded)
        self.assertGreater(p.memory_exceeded, 200 << 20)
        self.assertIn("MiB of host memory", p.failure())

    def test_memory_of_children_counts(self):
        code = ("import subprocess, sys\n"
                "subprocess.run([sys.executable, '-c', 'import time; x = bytearray(500 << 20); time.sleep(10)'])")
        p = proc.run([PY, "-c", code], 60, Path("."), max_rss=200 << 20)
        self.assertIsNotNone(p.memory_exceeded)

    def test_file_size_limit_stops_a_writer(self):
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "big"
            p = proc.run(["/bin/sh", "-c", f"head -c 3000000 /dev/zero > {f}"], 30, Path(tmp),
                         max_file=1 << 20)
            self.assertNotEqual(p.returncode, 0)
            self.assertEqual(f.stat().st_size, 1 << 20)
            p = proc.run(["/bin/sh", "-c", f"head -c 3000000 /dev/zero > {f}"], 30, Path(tmp))
            self.assertEqual((p.returncode, f.stat().st_size), (0, 3000000))  # MAX_FILE, 1 GiB

    def test_file_limits_are_set_before_the_program_runs(self):
        # with prlimit in front, not on the pid once it runs: what it starts at once has them
        if proc._prlimit_tool() is None:
            self.skipTest("no prlimit (util-linux) here")
        code = ("import resource as r; print(r.getrlimit(r.RLIMIT_FSIZE), r.getrlimit(r.RLIMIT_CORE))")
        with mock.patch.object(proc, "_limit_files", lambda *a: None):
            p = proc.run([PY, "-c", code], 30, Path("."), max_file=5 << 20)
            free = proc.run([PY, "-c", code], 30, Path("."), limit_files=False)
        self.assertEqual(p.output.strip(), f"({5 << 20}, {5 << 20}) (0, 0)")
        self.assertNotEqual(free.output.strip(), p.output.strip())
        p = proc.run(["/nonexistent/prog"], 30, Path("."))
        self.assertEqual((p.returncode, p.output.split(":")[0]), (127, "cannot start /nonexistent/prog"))

    def test_small_program_within_limits(self):
        p = proc.run([PY, "-c", "print('ok')"], 10, Path("."), max_output=100, max_rss=1 << 30)
        self.assertEqual((p.returncode, p.output.strip(), p.dropped), (0, "ok", 0))

    def test_forbidden_symbol_with_real_nm(self):
        import shutil
        from cudalab_grade import objcheck
        if not (shutil.which("nm") and shutil.which("g++")):
            self.skipTest("needs nm and g++")
        with tempfile.TemporaryDirectory() as tmp:
            s = Path(tmp) / "a.cpp"
            s.write_text("#define NS(a, b) a##b\nnamespace cub { int Sum(int x) { return x; } }\n"
                         "int f(int x) { return NS(cu, b)::Sum(x); }\n")
            o = Path(tmp) / "a.o"
            subprocess.run(["g++", "-c", str(s), "-o", str(o)], check=True)
            names = objcheck.defined_functions(o)  # what source.check_object reads
            self.assertTrue(any("cub::Sum(int)" in n for n in names), names)
            self.assertFalse(any("thrust::" in n for n in names), names)


if __name__ == "__main__":
    unittest.main()
