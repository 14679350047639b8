"""Tests of tools/grade, without a GPU and without CUDA.

Each test builds a small course tree in a temporary directory: a manifest,
student sources, and fake programs in build/default/bin (Python scripts that
write gtest or Google Benchmark JSON, crash, or hang). Fake `ninja`, `cmake`
and `compute-sanitizer` scripts on PATH stand in for the real tools.
"""
from __future__ import annotations

import contextlib
from dataclasses import replace
import csv
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import stat
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[3]
TOOLS = REPO / "tools"
sys.path.insert(0, str(TOOLS))


def _load_grade():
    loader = importlib.machinery.SourceFileLoader("cudalab_grade_cli", str(TOOLS / "grade"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


grade_cli = _load_grade()
from cudalab_grade import bench, build, cliclass, clioptions, clisetup, grading, gtest, objcheck, report, source  # noqa: E402
from cudalab_grade.manifest import UsageError, load_all, select  # noqa: E402

MANIFEST = """
[chapter]
number = 1
dir = "01-demo"
title = "Demo"
lesson = "README.md"

[[exercise]]
id = "1.1"
slug = "alpha"
title = "First exercise"
file = "alpha.cu"
header = "include/x.cuh"
function = "x::alpha"
test_filter = "*Alpha*"
points = 10
forbid = ["cub::"]
hints = ["gentle", "clearer", "explicit"]
[exercise.perf]
benchmark = "alpha/int32/1024"
baseline = "cub_base/int32/1024"
ratio = 0.5
points = 4

[[exercise]]
id = "1.2"
slug = "beta"
title = "Second exercise"
file = "beta.cu"
header = "include/x.cuh"
function = "x::beta"
test_filter = "*Beta*"
points = 6
forbid = []
hints = ["only one"]
"""

PY = sys.executable


def gtest_json(tests):
    """tests: list of (suite, name, result, [failure texts])."""
    suites = {}
    for suite, name, result, failures in tests:
        entry = {"name": name, "status": "RUN", "result": result, "classname": suite}
        if failures:
            entry["failures"] = [{"failure": f, "type": ""} for f in failures]
        suites.setdefault(suite, []).append(entry)
    return {"tests": len(tests), "testsuites": [
        {"name": s, "tests": len(t), "testsuite": t} for s, t in suites.items()]}


def bench_json(entries):
    return {"context": {}, "benchmarks": entries}


def _write_exe(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{PY}\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


# Medians of alpha and its baseline cub_base, equal: a ratio of 1.
EQUAL_MEDIANS = [
    {"name": "alpha/int32/1024/manual_time_median", "run_name": "alpha/int32/1024/manual_time",
     "run_type": "aggregate", "aggregate_name": "median", "real_time": 1.0, "time_unit": "ms"},
    {"name": "cub_base/int32/1024/manual_time_median", "run_name": "cub_base/int32/1024/manual_time",
     "run_type": "aggregate", "aggregate_name": "median", "real_time": 1.0, "time_unit": "ms"},
]


def fake_bench(path: Path, entries, exit_code=0, action="", log=None):
    """A benchmark program (a checker): writes Google Benchmark JSON of `entries` to
    --benchmark_out, after printing on its output a forged result (everything
    faster than its baseline), as a student's runner could: the grader must read
    only the file. Logs its argv and runner variables to `log`, then runs `action`."""
    forged = bench_json([{**e, "real_time": 1e-6} if not e["name"].startswith("cub") else e for e in entries])
    _write_exe(path, f"""
        import json, os, sys
        if {str(log) if log else ""!r}:
            with open({str(log) if log else ""!r}, "w") as f:
                json.dump({{"argv": sys.argv, "runner": os.environ.get("CUDALAB_RUNNER"),
                           "runner_log": os.environ.get("CUDALAB_RUNNER_LOG"),
                           "prefix": os.environ.get("CUDALAB_RUNNER_PREFIX")}}, f)
        print("some preamble")
        print(json.dumps({forged!r}))
        {action}
        for a in sys.argv[1:]:
            if a.startswith("--benchmark_out="):
                with open(a.split("=", 1)[1], "w") as f:
                    json.dump({bench_json(entries)!r}, f)
        sys.exit({exit_code})
    """)


def fake_test(path: Path, report_data=None, stdout="", exit_code=0, action="", listed=None):
    """A test program: prints stdout, writes report_data to --gtest_output, then `action`.
    Its --gtest_list_tests lists the tests of `listed` (gtest_json), default report_data's."""
    _write_exe(path, f"""
        import json, os, signal, sys, time
        data = {listed if listed is not None else report_data!r}
        if "--gtest_list_tests" in sys.argv:  # the grader asks the checker for its list
            for suite in (data or {{}}).get("testsuites", []):
                print(suite["name"] + ".")
                for t in suite.get("testsuite", []):
                    print("  " + t["name"])
            sys.exit(0)
        sys.stdout.write({stdout!r}); sys.stdout.flush()
        runner_rc = 0
        if os.environ.get("CUDALAB_RUNNER_PREFIX"):  # start the runner as remote_checker.cu does
            import subprocess
            with open(os.environ.get("CUDALAB_RUNNER_LOG", os.devnull), "ab") as rlog:
                runner_rc = subprocess.call(json.loads(os.environ["CUDALAB_RUNNER_PREFIX"]) +
                                            [os.environ["CUDALAB_RUNNER"], "--cudalab-runner-fd", "3"],
                                            stdout=rlog, stderr=rlog)
        with open(os.environ.get("FAKE_LOG", os.devnull), "a") as log:
            log.write(json.dumps({{"argv": sys.argv, "seed": os.environ.get("CUDALAB_SEED"),
                                  "max_n": os.environ.get("CUDALAB_MAX_N"),
                                  "runner": os.environ.get("CUDALAB_RUNNER"),
                                  "runner_log": os.environ.get("CUDALAB_RUNNER_LOG"),
                                  "prefix": os.environ.get("CUDALAB_RUNNER_PREFIX"),
                                  "profile": os.environ.get("CUDALAB_DEVICE_PROFILE"),
                                  "shard": [os.environ.get("GTEST_SHARD_INDEX"),
                                            os.environ.get("GTEST_TOTAL_SHARDS")]}}) + "\\n")
        {action}
        data = {report_data!r}
        import fnmatch
        flt = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--gtest_filter=")), "*")
        pos, _, neg = flt.partition("-")
        def runs(name):  # as GoogleTest's filter, then its shards
            return (any(fnmatch.fnmatchcase(name, p) for p in pos.split(":") if p)
                    and not any(fnmatch.fnmatchcase(name, p) for p in neg.split(":") if p))
        if data is not None:
            total, index, k = int(os.environ.get("GTEST_TOTAL_SHARDS", "1")), int(os.environ.get("GTEST_SHARD_INDEX", "0")), 0
            for suite in data.get("testsuites", []):
                kept = []
                for t in suite.get("testsuite", []):
                    if suite["name"] == "NonTestSuiteFailure":  # outside every test: in every run
                        kept.append(t)
                    elif runs(suite["name"] + "." + t["name"]):
                        if k % total == index:
                            kept.append(t)
                        k += 1
                suite["testsuite"] = kept
        for a in sys.argv[1:]:
            if a.startswith("--gtest_output=json:") and data is not None:
                with open(a.split(":", 1)[1], "w") as f:
                    json.dump(data, f)
        sys.exit({exit_code} or (86 if runner_rc == 86 else 0))
    """)


class Tree:
    """A temporary course tree with fake programs and fake build tools."""

    def __init__(self, tmp: Path):
        self.root = tmp / "course"
        (self.root / "chapters" / "01-demo").mkdir(parents=True)
        (self.root / "chapters" / "01-demo" / "exercises.toml").write_text(MANIFEST)
        for top in ("starter", "solutions"):
            for name in ("alpha", "beta"):
                p = self.root / top / "01-demo" / f"{name}.cu"
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(f"// {name}: uses cub:: only in this comment\nvoid {name}() {{}}\n")
        self.build = self.root / "build" / "default"
        self.bin = self.build / "bin"
        self.bin.mkdir(parents=True)
        (self.build / "CMakeCache.txt").write_text("")
        (self.build / "build.ninja").write_text("")
        for name in ("alpha", "beta"):  # the runners: the checker (fake) never starts them
            for impl in ("starter", "solution"):
                _write_exe(self.bin / f"{name}_runner_{impl}", "import sys\nsys.exit(2)\n")
        self.tools = tmp / "fakebin"
        self.tools.mkdir()
        self.log = tmp / "calls.log"
        # ninja: no work for every target except those in STALE; knows every target
        _write_exe(self.tools / "ninja", f"""
            import os, sys
            with open({str(self.log)!r}, "a") as log:
                log.write("ninja " + " ".join(sys.argv[1:]) + "\\n")
            if "-t" in sys.argv:
                for t in os.environ.get("FAKE_TARGETS", "").split():
                    print(t + ": phony")
                sys.exit(0)
            target = sys.argv[-1]
            if target in os.environ.get("STALE", "").split():
                print("[1/1] Linking bin/" + target)
            else:
                print("ninja: no work to do.")
        """)
        self.build_output = tmp / "build-output.txt"
        # cmake: prints build-output.txt (when it exists) as the build's output, exits
        # FAKE_CMAKE_RC; its --version says FAKE_CMAKE_VERSION; --preset default configures
        # build/default (FAKE_CONFIGURE_OUTPUT: prints it and exits 1 instead)
        _write_exe(self.tools / "cmake", f"""
            import os, sys
            with open({str(self.log)!r}, "a") as log:
                log.write("cmake " + " ".join(sys.argv[1:]) + "\\n")
            if sys.argv[1:] == ["--version"]:
                print("cmake version " + os.environ.get("FAKE_CMAKE_VERSION", "3.28.3"))
                sys.exit(0)
            if sys.argv[1:] == ["--preset", "default"]:
                build = os.path.join("build", "default")
                os.makedirs(build, exist_ok=True)
                open(os.path.join(build, "CMakeCache.txt"), "w").close()
                if os.environ.get("FAKE_CONFIGURE_OUTPUT"):
                    print(os.environ["FAKE_CONFIGURE_OUTPUT"])
                    sys.exit(1)
                open(os.path.join(build, "build.ninja"), "w").close()
                sys.exit(0)
            if os.path.exists({str(self.build_output)!r}):
                print(open({str(self.build_output)!r}).read())
            sys.exit(int(os.environ.get("FAKE_CMAKE_RC", "0")))
        """)
        _write_exe(self.tools / "nvcc", "print('nvcc: fake')\n")
        # The machine's own nvidia-smi (a GPU machine has one, and its GPU may be busy with
        # other tests) stays out of sight too: a failing one says "unknown", and the grader
        # neither waits for the GPU nor sees it shared. Tests that want one write their own.
        _write_exe(self.tools / "nvidia-smi", "import sys; sys.exit(9)\n")
        # The machine's own compute-sanitizer (a GPU machine has one) stays out of
        # sight: tests that want one put a fake in self.tools.
        system_path = os.pathsep.join(
            d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not (Path(d) / "compute-sanitizer").exists())
        self.env = {"PATH": f"{self.tools}{os.pathsep}{system_path}",
                    "CUDACXX": "",  # the fake nvcc on PATH is the one
                    "FAKE_LOG": str(tmp / "runs.log"), "STALE": "",
                    "CUDALAB_SANDBOX": "none",  # fakes; the sandbox has its own tests
                    # one program at a time: the fakes write their whole report whatever
                    # GTEST_SHARD_INDEX says (ShardTest runs shards with fakes that honour it)
                    "CUDALAB_EXERCISE_JOBS": "1",
                    "FAKE_TARGETS": "alpha_test_starter beta_test_starter alpha_bench_starter "
                                    "alpha_test_solution beta_test_solution alpha_bench_solution "
                                    "alpha_runner_starter beta_runner_starter "
                                    "alpha_runner_solution beta_runner_solution"}
        # what build.probe_gpu says: a GPU, unless a test says otherwise
        self.gpu = (True, "1 CUDA device(s) (fake)")

    def passing(self, slug, n=3, suite=None):
        suite = suite or slug.capitalize()
        fake_test(self.bin / f"{slug}_test_starter",
                  gtest_json([(suite, f"T{i}", "COMPLETED", []) for i in range(n)]))

    def runs(self):
        p = Path(self.env["FAKE_LOG"])
        return [json.loads(line) for line in p.read_text().splitlines()] if p.exists() else []

    def calls(self):
        return self.log.read_text().splitlines() if self.log.exists() else []

    def grade(self, *argv):
        """(exit code, stdout, stderr) of tools/grade on this tree."""
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.dict(os.environ, self.env), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err), \
                mock.patch.object(build, "probe_gpu", return_value=self.gpu) as self.probe:
            code = grade_cli.main(list(argv), root=self.root)
        return code, out.getvalue(), err.getvalue()

    def grade_json(self, *argv):
        code, out, err = self.grade(*argv, "--json", "-", "-q")
        return code, json.loads(out), err


class GradeTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-grade-")
        self.tree = Tree(Path(self._tmp.name))

    def tearDown(self):
        self._tmp.cleanup()

    def exercise(self, data, ex_id):
        return next(e for e in data["cudalab"]["exercises"] if e["id"] == ex_id)


class ScoringTest(GradeTestCase):
    def test_all_pass_gives_full_points(self):
        self.tree.passing("alpha")
        self.tree.passing("beta")
        code, data, _ = self.tree.grade_json("--no-build")
        self.assertEqual(code, 0)
        self.assertEqual(data["score"], 16)
        self.assertEqual([t["status"] for t in data["tests"]], ["passed", "passed"])
        self.assertEqual(data["tests"][0]["name"], "1.1 alpha: First exercise")
        self.assertEqual(data["tests"][0]["max_score"], 10)
        self.assertEqual(data["stdout_visibility"], "visible")
        self.assertEqual(self.exercise(data, "1.1")["status"], "passed")
        self.assertNotIn("leaderboard", data)  # no --perf: no Gradescope leaderboard

    def test_one_failure_costs_all_correctness_points(self):
        msg = "[1.1 alpha] n = 33, seed = 7\n  rerun: CUDALAB_SEED=7 x --gtest_filter='A.T1'\n" \
              + "\n".join(f"line {i}" for i in range(40))
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "T0", "COMPLETED", []), ("Alpha", "T1", "COMPLETED", [msg]),
                              ("Alpha", "T2", "COMPLETED", [])]), exit_code=1)
        self.tree.passing("beta")
        code, data, _ = self.tree.grade_json("--no-build")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((code, alpha["status"], alpha["correctness_points"]), (0, "failed", 0))
        self.assertIn("1 of 3 tests failed", alpha["reason"])
        out = data["tests"][0]["output"]
        self.assertIn("FAILED Alpha.T1", out)
        self.assertIn("rerun: CUDALAB_SEED=7", out)
        self.assertIn("more lines", out)  # trimmed to ~15 lines
        self.assertNotIn("line 39", out)
        self.assertEqual(data["score"], 6)

    def test_a_failure_after_the_tests_costs_the_points(self):
        # the end-of-program check (gtest_main.cu: device memory the exercise still holds) fails
        # in an Environment's TearDown: gtest reports it in the suite NonTestSuiteFailure, whatever
        # the filter, and the grader names it and counts it as one failed test
        held = ("the exercise's code still holds 12 device allocations (12.0 MiB) after the tests, "
                "more than the 4 a cache kept between calls needs: free in every path what each "
                "call allocates (cudaFree/cudaFreeAsync), including the paths that throw")
        tests = [("Alpha", f"T{i}", "COMPLETED", []) for i in range(3)]
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json(tests + [("NonTestSuiteFailure", "", "COMPLETED", [f"gtest_main.cu:99\n{held}"])]),
                  exit_code=1, listed=gtest_json(tests))
        for extra in ((), ("--fail-fast",)):
            _, data, _ = self.tree.grade_json("--no-build", "1.1", *extra)
            alpha = self.exercise(data, "1.1")
            self.assertEqual((alpha["status"], alpha["correctness_points"]), ("failed", 0))
            self.assertEqual(alpha["reason"], "1 of 4 tests failed (all must pass for the points)")
            self.assertIn(f"FAILED (after the tests)\ngtest_main.cu:99\n{held}", data["tests"][0]["output"])

    def test_only_three_failures_are_shown(self):
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", f"T{i}", "COMPLETED", [f"boom {i}"]) for i in range(5)]),
                  exit_code=1)
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        out = data["tests"][0]["output"]
        self.assertIn("boom 2", out)
        self.assertNotIn("boom 3", out)
        self.assertIn("2 more failing tests", out)

    def test_terminal_scoreboard_and_progress(self):
        self.tree.passing("alpha")
        fake_test(self.tree.bin / "beta_test_starter",
                  gtest_json([("Beta", "T0", "COMPLETED", ["wrong"])]), exit_code=1)
        code, out, _ = self.tree.grade("--no-build", "-q")
        self.assertEqual(code, 0)
        self.assertIn("progress: 1/2 exercises complete, 10.0/16.0 points", out)
        self.assertIn("1 of 1 tests failed", out)
        self.assertIn("tools/grade --hint 1.2", out)
        self.assertTrue(all(len(line) <= 100 for line in out.splitlines()
                            if not line.startswith("  ")))
        header = out.splitlines()[0].split()
        self.assertEqual(header, ["id", "exercise", "tests", "perf", "points", "reason"])

    def test_seed_and_filter_are_passed(self):
        self.tree.passing("alpha")
        self.tree.grade("--no-build", "--seed", "42", "1.1", "-q")
        (run,) = self.tree.runs()
        self.assertEqual(run["seed"], "42")
        self.assertIn("--gtest_filter=*Alpha*", run["argv"])
        self.assertTrue(run["argv"][0].endswith("build/default/bin/alpha_test_starter"))

    def test_fail_fast_stops_each_program_at_its_first_failure(self):
        # a class of mutants needs the verdict only: --gtest_fail_fast, and a program that
        # stopped early still fails (its tests that did not run count as failed)
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "T0", "COMPLETED", ["wrong"])]), exit_code=1,
                  listed=gtest_json([("Alpha", f"T{i}", "COMPLETED", []) for i in range(3)]))
        self.tree.passing("beta")
        code, data, _ = self.tree.grade_json("--no-build", "--fail-fast")
        runs = self.tree.runs()
        self.assertTrue(all("--gtest_fail_fast" in r["argv"] for r in runs), runs)
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("failed", 0))
        self.assertEqual(self.exercise(data, "1.2")["status"], "passed")
        self.tree.grade_json("--no-build", "1.2")
        self.assertNotIn("--gtest_fail_fast", self.tree.runs()[-1]["argv"])  # not by default

    def test_solutions_flag_runs_solution_programs(self):
        fake_test(self.tree.bin / "alpha_test_solution", gtest_json([("Alpha", "T", "COMPLETED", [])]))
        code, data, _ = self.tree.grade_json("--no-build", "--solutions", "1.1")
        self.assertEqual(self.exercise(data, "1.1")["status"], "passed")


class FailureModeTest(GradeTestCase):
    def test_crash_names_signal_and_running_test(self):
        fake_test(self.tree.bin / "alpha_test_starter", None,
                  stdout="[ RUN      ] Alpha.Big\n",
                  action="os.kill(os.getpid(), signal.SIGSEGV)")
        self.tree.passing("beta")
        code, data, _ = self.tree.grade_json("--no-build")
        alpha = self.exercise(data, "1.1")
        self.assertEqual(alpha["status"], "crashed")
        self.assertIn("SIGSEGV", alpha["reason"])
        self.assertIn("Alpha.Big", alpha["reason"])
        self.assertEqual(self.exercise(data, "1.2")["status"], "passed")  # grading went on

    def test_exit_without_report(self):
        fake_test(self.tree.bin / "alpha_test_starter", None, exit_code=3)
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        self.assertIn("exit code 3 without a test report", self.exercise(data, "1.1")["reason"])

    def test_hang_is_killed_with_its_children(self):
        fake_test(self.tree.bin / "alpha_test_starter", None,
                  stdout="[ RUN      ] Alpha.Slow\n",
                  action="import subprocess; subprocess.Popen(['sleep', '60']); time.sleep(60)")
        self.tree.passing("beta")
        _, data, _ = self.tree.grade_json("--no-build", "--timeout", "1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual(alpha["status"], "timeout")
        self.assertIn("timed out after 1 s in Alpha.Slow", alpha["reason"])
        self.assertLess(alpha["seconds"], 20)
        self.assertEqual(self.exercise(data, "1.2")["status"], "passed")

    def test_no_gpu_is_not_graded_and_exits_3(self):
        skip = "cudalab: no CUDA device; GPU tests are skipped\n[  SKIPPED ] Alpha.T1\n"
        for slug, suite in (("alpha", "Alpha"), ("beta", "Beta")):
            fake_test(self.tree.bin / f"{slug}_test_starter",
                      gtest_json([(suite, "Host", "COMPLETED", []), (suite, "T1", "SKIPPED", [])]),
                      stdout=skip)
        code, data, _ = self.tree.grade_json("--no-build")
        self.assertEqual(code, 3)
        self.assertEqual(self.exercise(data, "1.1")["status"], "no_gpu")
        self.assertIn("no CUDA device", data["tests"][0]["output"])
        self.assertIn("grading needs a CUDA GPU", data["output"])
        code, out, _ = self.tree.grade("--no-build", "-q")
        self.assertIn("not graded: no CUDA device", out)

    def test_other_skips_do_not_mean_no_gpu(self):
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "T0", "COMPLETED", []), ("Alpha", "Big", "SKIPPED", [])]),
                  stdout="Skipped: n above CUDALAB_MAX_N\n")
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        self.assertEqual(self.exercise(data, "1.1")["status"], "passed")

    def test_forbidden_api_is_the_verdict_over_passing_tests(self):
        # A student's own tree: the check runs beside the test program (the edit-compile
        # loop does not wait for it), and its finding replaces the tests' outcome
        (self.tree.root / "starter" / "01-demo" / "alpha.cu").write_text(
            '// cub:: is fine here\nconst char* s = "cub::";\n\nint x = cub::Sum();\n')
        self.tree.passing("alpha")
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("forbidden", 0))
        self.assertEqual(alpha["reason"], "uses forbidden API 'cub::' (line 4)")
        self.assertLessEqual(len(self.tree.runs()), 1)  # the tests only: no sanitizer pass

    def test_forbidden_api_is_not_run_in_a_class(self):
        # Checkers from elsewhere (class grading): a submission with a finding is not run at all
        from cudalab_grade import grading
        (self.tree.root / "starter" / "01-demo" / "alpha.cu").write_text("int x = cub::Sum();\n")
        self.tree.passing("alpha")
        ex = next(e for c in load_all(self.tree.root) for e in c.exercises if e.id == "1.1")
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build, checker_bin=self.tree.bin)
        self.assertFalse(grading.checks_beside_tests(opts))
        with mock.patch.dict(os.environ, self.tree.env):
            res = grading.grade(ex, opts)
        self.assertEqual((res.status, res.reason), ("forbidden", "uses forbidden API 'cub::' (line 1)"))
        self.assertEqual(self.tree.runs(), [])

    def test_missing_program_with_no_build(self):
        self.tree.passing("beta")
        _, data, _ = self.tree.grade_json("--no-build")
        alpha = self.exercise(data, "1.1")
        self.assertEqual(alpha["status"], "compile_error")
        self.assertIn("does not exist", alpha["reason"])

    def test_stale_program_is_not_graded(self):
        self.tree.passing("alpha")
        self.tree.passing("beta")
        self.tree.env["STALE"] = "alpha_test_starter"
        _, data, _ = self.tree.grade_json("--no-build")
        self.assertIn("out of date", self.exercise(data, "1.1")["reason"])
        self.assertEqual(self.exercise(data, "1.2")["status"], "passed")
        self.assertEqual(len(self.tree.runs()), 1)

    def test_grader_error_does_not_stop_grading(self):
        self.tree.passing("alpha")
        self.tree.passing("beta")
        with mock.patch("cudalab_grade.grading.run_tests", side_effect=[RuntimeError("oops"), True]):
            _, data, _ = self.tree.grade_json("--no-build")
        self.assertEqual(self.exercise(data, "1.1")["reason"], "grader error: RuntimeError: oops")
        self.assertEqual(self.exercise(data, "1.1")["status"], "grader_error")


class CheckerRunnerTest(GradeTestCase):
    """The checker (bin/<slug>_test_<impl>) decides; the runner (the student's code) only
    answers it: its output is shown, never read for a verdict."""

    def test_tests_missing_from_the_report_fail(self):
        listed = gtest_json([("Alpha", f"T{i}", "COMPLETED", []) for i in range(4)])
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", f"T{i}", "COMPLETED", []) for i in range(3)]), listed=listed)
        self.tree.passing("beta")
        _, data, _ = self.tree.grade_json("--no-build")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("failed", 0))
        self.assertIn("FAILED (tests that did not run)\n1 of the 4 tests did not run",
                      data["tests"][0]["output"])
        self.assertEqual(self.exercise(data, "1.2")["status"], "passed")
        # the list is asked of the checker itself, with the exercise's filter
        self.assertEqual([r["argv"][1] for r in self.tree.runs()], ["--gtest_filter=*Alpha*",
                                                                   "--gtest_filter=*Beta*"])

    def test_no_gpu_skip_is_not_a_missing_test(self):
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "Host", "COMPLETED", []), ("Alpha", "T1", "SKIPPED", [])]),
                  stdout="cudalab: no CUDA device; GPU tests are skipped\n",
                  listed=gtest_json([("Alpha", n, "COMPLETED", []) for n in ("Host", "T1", "T2")]))
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        self.assertEqual(self.exercise(data, "1.1")["status"], "no_gpu")

    def test_runner_exception_saying_no_device_is_a_failure_where_the_checker_found_one(self):
        # The runner's exception message reaches the checker's failure as it is (remote_checker.cu
        # rethrows its what()); one that says "no CUDA device" in every failing call made the
        # exercise "not graded: no CUDA device" (red-team verdict-no-device-message), though
        # the test program had said it found a GPU
        said = "the exercise's code: no CUDA device"
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "T0", "COMPLETED", [said]), ("Alpha", "T1", "COMPLETED", [said])]),
                  stdout="cudalab: device 0 of 1: NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)\n"
                         f"[ RUN      ] Alpha.T0\nfailure: {said}\n[  FAILED  ] Alpha.T0 (1 ms)\n"
                         f"[ RUN      ] Alpha.T1\nfailure: {said}\n[  FAILED  ] Alpha.T1 (1 ms)\n",
                  exit_code=1)
        code, data, _ = self.tree.grade_json("--no-build", "1.1")
        self.assertEqual(code, 0)
        alpha = self.exercise(data, "1.1")
        self.assertEqual(alpha["status"], "failed", alpha["reason"])
        self.assertIn("2 of 2 tests failed", alpha["reason"])

    def test_runner_log_is_shown_and_never_decides(self):
        said = "".join(f"debug {i}\n" for i in range(30)) + (
            "cudalab: no CUDA device; GPU tests are skipped\n[  SKIPPED ] Alpha.T1\n"
            "[  PASSED  ] 3 tests.\n")
        write = 'open(os.environ["CUDALAB_RUNNER_LOG"], "a").write({!r})'
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "T0", "COMPLETED", []), ("Alpha", "T1", "COMPLETED", ["bad"])]),
                  exit_code=1, action=write.format(said))
        # a test the checker skipped for its size: a no-device line would make it "no GPU"
        fake_test(self.tree.bin / "beta_test_starter",
                  gtest_json([("Beta", "T0", "COMPLETED", []), ("Beta", "Big", "SKIPPED", [])]),
                  stdout="Skipped: n above CUDALAB_MAX_N\n",
                  action=write.format("cudalab: no CUDA device; GPU tests are skipped\n"
                                      "[  FAILED  ] Beta.T0 (1 ms)\n[  FAILED  ] 1 test\n"))
        code, data, _ = self.tree.grade_json("--no-build")
        self.assertEqual(code, 0)  # graded: the runner cannot say "no GPU"
        alpha, beta = self.exercise(data, "1.1"), self.exercise(data, "1.2")
        self.assertEqual((alpha["status"], beta["status"]), ("failed", "passed"))
        self.assertIn("1 of 2 tests failed", alpha["reason"])
        out = data["tests"][0]["output"]
        self.assertIn("FAILED Alpha.T1\nbad", out)
        self.assertIn("your code printed (last lines):\n" + "".join(
            f"debug {i}\n" for i in range(18, 30)) + "cudalab: no CUDA device", out)
        self.assertNotIn("debug 17\n", out)  # its tail only
        self.assertIn("your code printed (last lines):\ncudalab: no CUDA device",
                      data["tests"][1]["output"])
        self.assertEqual(data["score"], 6)

    def test_a_skipped_test_says_why(self):
        self.tree.passing("alpha")
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "T", "COMPLETED", []), ("Alpha", "Big", "SKIPPED", [])]),
                  stdout="[ RUN      ] Alpha.T\n[       OK ] Alpha.T (0 ms)\n[ RUN      ] Alpha.Big\n"
                         "big_test.cu:12: Skipped\nneeds 8.0 GiB of device memory; 5.1 GiB are free\n"
                         "[  SKIPPED ] Alpha.Big (0 ms)\n")
        code, data, _ = self.tree.grade_json("--no-build", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual(alpha["status"], "passed")
        self.assertIn("(1 skipped)", alpha["reason"])
        self.assertIn("skipped: Alpha.Big: needs 8.0 GiB of device memory; 5.1 GiB are free",
                      data["tests"][0]["output"])

    def test_checker_gets_the_runner_and_a_log(self):
        self.tree.passing("alpha")
        fake_test(self.tree.bin / "alpha_test_solution", gtest_json([("Alpha", "T", "COMPLETED", [])]))
        self.tree.grade_json("--no-build", "1.1")
        self.tree.grade_json("--no-build", "--solutions", "1.1")
        starter, solution = self.tree.runs()
        self.assertEqual(starter["runner"], str((self.tree.bin / "alpha_runner_starter").resolve()))
        self.assertEqual(solution["runner"], str((self.tree.bin / "alpha_runner_solution").resolve()))
        for run in (starter, solution):
            self.assertTrue(Path(run["runner_log"]).is_absolute())
            self.assertFalse(Path(run["runner_log"]).exists())  # a temporary file, removed
            self.assertIsNone(run["prefix"])  # no sandbox asked: no variable

    def test_runner_prefix_reaches_the_checker_as_json(self):
        from cudalab_grade import grading
        self.tree.passing("alpha")
        ex = next(e for c in load_all(self.tree.root) for e in c.exercises if e.id == "1.1")
        # a prefix any machine has, with a word that needs JSON's quoting
        prefix = ["env", 'CUDALAB_PREFIX_WORD=a "quoted" \\ word']
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build, runner_prefix=prefix)
        with mock.patch.dict(os.environ, self.tree.env):
            res = grading.grade(ex, opts)
        self.assertEqual(res.status, "passed")
        (run,) = self.tree.runs()
        self.assertEqual(json.loads(run["prefix"]), prefix)


class NoBuildCheckTest(unittest.TestCase):
    def test_no_cmake_file_has_an_always_run_glob(self):
        # file(GLOB ... CONFIGURE_DEPENDS) adds a glob check that every build runs; then
        # `ninja -n` always has work and tools/grade --no-build calls every program out of
        # date (on the H100 it refused all 47 exercises). Plain globs, re-run cmake instead.
        found = [str(p.relative_to(REPO)) for p in list(REPO.glob("**/CMakeLists.txt")) +
                 list(REPO.glob("cmake/*.cmake"))
                 if "build" not in p.relative_to(REPO).parts[:1]
                 and re.search(r"file\s*\(\s*GLOB[^)]*CONFIGURE_DEPENDS", p.read_text())]
        self.assertEqual(found, [])


class DeviceProfileTest(unittest.TestCase):
    """CUDALAB_DEVICE_PROFILE (cudalab/device.cuh) reaches the runner; --device-profile sets it."""

    def test_profiles_match_device_cuh(self):
        from cudalab_grade import grading
        text = (REPO / "chapters" / "common" / "include" / "cudalab" / "device.cuh").read_text()
        names = re.findall(r'^\s*\{"([a-z0-9]+)", "NVIDIA', text, re.M)
        self.assertEqual(sorted(names), sorted(grading.DEVICE_PROFILES))

    def test_runner_env_carries_the_profile(self):
        from cudalab_grade import grading
        ex = next(e for c in load_all(REPO) for e in c.exercises if e.id == "2.7")
        opts = grading.Options(root=REPO, build_dir=REPO / "build" / "x")
        with mock.patch.dict(os.environ, {"CUDALAB_DEVICE_PROFILE": "t4"}):
            self.assertEqual(opts.runner_env(ex, Path("/tmp/log"))["CUDALAB_DEVICE_PROFILE"], "t4")
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("CUDALAB_DEVICE_PROFILE", None)
            self.assertNotIn("CUDALAB_DEVICE_PROFILE", opts.runner_env(ex, Path("/tmp/log")))
            opts.extra_env = {"CUDALAB_DEVICE_PROFILE": "rtx3090"}
            self.assertEqual(opts.runner_env(ex, Path("/tmp/log"))["CUDALAB_DEVICE_PROFILE"], "rtx3090")

    def test_device_profile_option(self):
        self.assertEqual(clioptions.parse_args(["--device-profile", "t4", "2.7"]).device_profile, "t4")
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            clioptions.parse_args(["--device-profile", "v100", "2.7"])


class BuildTest(GradeTestCase):
    def test_builds_only_needed_targets_and_reports_compile_errors(self):
        self.tree.build_output.write_text(
            "[1/3] Building CUDA object x.o\nFAILED: x.o\n"
            f"{self.tree.root}/starter/01-demo/alpha.cu(12): error: identifier \"foo\" is undefined\n"
            f"{self.tree.root}/starter/01-demo/beta.cu:3:1: warning: unused\n"
            "ninja: build stopped\n")
        self.tree.passing("beta")
        self.tree.passing("alpha")  # a stale program from an earlier build
        self.tree.env["STALE"] = "alpha_test_starter"
        code, data, _ = self.tree.grade_json()
        builds = [c for c in self.tree.calls() if c.startswith("cmake --build")]
        self.assertEqual(len(builds), 1)
        self.assertIn("--target alpha_test_starter alpha_runner_starter beta_test_starter "
                      "beta_runner_starter -- -k 0", builds[0])
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["reason"]), ("compile_error", "did not compile"))
        self.assertIn("alpha.cu(12): error: identifier", data["tests"][0]["output"])
        self.assertEqual(self.exercise(data, "1.2")["status"], "passed")
        self.assertTrue((self.tree.build / "grade-build.log").exists())

    def test_perf_adds_bench_target_and_jobs(self):
        self.tree.passing("alpha")
        self.tree.grade("--perf", "-j", "3", "1.1", "-q")
        (b,) = [c for c in self.tree.calls() if c.startswith("cmake --build")]
        self.assertIn("-j 3 --target alpha_test_starter alpha_runner_starter alpha_bench_starter", b)

    def test_configures_default_dir_when_missing(self):
        (self.tree.build / "CMakeCache.txt").unlink()
        self.tree.grade("1.1", "-q")
        self.assertIn("cmake --preset default", self.tree.calls())

    def test_build_dir_must_be_configured(self):
        code, _, err = self.tree.grade("--build-dir", str(self.tree.root / "nope"), "1.1")
        self.assertEqual(code, 2)
        self.assertIn("not a configured build directory", err)

    def test_compile_errors_gcc_and_link(self):
        log = ("/r/starter/01-demo/alpha.cu:7:3: error: expected ';'\n"
               "/r/starter/01-demo/alphabet.cu:1:1: error: other file\n"
               "FAILED: bin/beta_test_starter\nld: undefined reference to `x::beta' (error)\n"
               "[2/2] Linking\n")
        self.assertEqual(build.compile_errors(log, "starter/01-demo/alpha.cu", "alpha_test_starter"),
                         ["/r/starter/01-demo/alpha.cu:7:3: error: expected ';'"])
        self.assertEqual(len(build.compile_errors(log, "starter/01-demo/beta.cu", "beta_test_starter")), 1)
        many = "".join(f"/r/starter/01-demo/alpha.cu({i}): error: e\n" for i in range(30))
        self.assertEqual(len(build.compile_errors(many, "starter/01-demo/alpha.cu", "t")), 11)


class PartsTest(GradeTestCase):
    """A student's tree runs an exercise's large-input tests (grading.ALONE: LargeIndex) in a
    program of their own beside its other tests (CUDALAB_EXERCISE_JOBS, else the CPUs): the
    verdict is the one program's."""

    def setUp(self):
        super().setUp()
        self.tree.env["CUDALAB_EXERCISE_JOBS"] = "3"

    def cases(self, failing=(), n=5):
        return gtest_json([("Alpha", f"T{i}", "COMPLETED", ["expected 3, got 4"] if f"T{i}" in failing else [])
                           for i in range(n)]
                          + [("AlphaLargeIndex", "Int32Above2To31", "COMPLETED",
                              ["your sum is 0"] if "Large" in failing else [])])

    def filters_run(self):
        return sorted(r["argv"][1] for r in self.tree.runs() if not r["prefix"])

    def test_the_large_tests_beside_the_others(self):
        fake_test(self.tree.bin / "alpha_test_starter", self.cases())
        _, data, _ = self.tree.grade_json("--no-build", "--fast", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["reason"]), ("passed", "all 6 tests passed"))
        self.assertEqual(self.filters_run(), ["--gtest_filter=*Alpha*-AlphaLargeIndex.Int32Above2To31",
                                              "--gtest_filter=AlphaLargeIndex.Int32Above2To31"])

    def test_one_program_without_large_tests(self):
        self.tree.passing("alpha", n=5)
        _, data, _ = self.tree.grade_json("--no-build", "--fast", "1.1")
        self.assertEqual(self.exercise(data, "1.1")["reason"], "all 5 tests passed")
        self.assertEqual(self.filters_run(), ["--gtest_filter=*Alpha*"])

    def test_a_failure_in_either_part_costs_the_points(self):
        for failing, name, text in ((["T3"], "Alpha.T3", "expected 3, got 4"),
                                    (["Large"], "AlphaLargeIndex.Int32Above2To31", "your sum is 0")):
            fake_test(self.tree.bin / "alpha_test_starter", self.cases(failing), exit_code=1)
            _, data, _ = self.tree.grade_json("--no-build", "--fast", "1.1")
            alpha = self.exercise(data, "1.1")
            self.assertEqual((alpha["status"], alpha["correctness_points"]), ("failed", 0))
            self.assertEqual(alpha["reason"], "1 of 6 tests failed (all must pass for the points)")
            self.assertIn(f"FAILED {name}\n{text}", data["tests"][0]["output"])

    def test_a_crashed_part_is_a_crash(self):
        fake_test(self.tree.bin / "alpha_test_starter", self.cases(),
                  action='if "--gtest_filter=AlphaLargeIndex.Int32Above2To31" in sys.argv: '
                         'os.kill(os.getpid(), signal.SIGSEGV)')
        _, data, _ = self.tree.grade_json("--no-build", "--fast", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("crashed", 0))
        self.assertIn("SIGSEGV", alpha["reason"])

    def test_tests_missing_from_the_parts_fail(self):
        listed = self.cases(n=6)
        fake_test(self.tree.bin / "alpha_test_starter", self.cases(), listed=listed)
        _, data, _ = self.tree.grade_json("--no-build", "--fast", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("failed", 0))
        self.assertIn("FAILED (tests that did not run)\n1 of the 7 tests did not run", data["tests"][0]["output"])

    def test_one_program_where_jobs_is_one(self):
        self.tree.env["CUDALAB_EXERCISE_JOBS"] = "1"
        fake_test(self.tree.bin / "alpha_test_starter", self.cases())
        _, data, _ = self.tree.grade_json("--no-build", "--fast", "1.1")
        self.assertEqual(self.exercise(data, "1.1")["reason"], "all 6 tests passed")
        self.assertEqual(self.filters_run(), ["--gtest_filter=*Alpha*"])

    def test_parts_of_a_filter(self):
        opts = grading.Options(root=Path("."), build_dir=Path("."), exercise_jobs=2)
        names = ["S.a", "SLargeIndex.b", "S.c"]
        self.assertEqual(grading.test_parts(opts, "*S*", names), ["SLargeIndex.b", "*S*-SLargeIndex.b"])
        self.assertEqual(grading.test_parts(opts, "*S*-*c", names), ["SLargeIndex.b", "*S*-*c:SLargeIndex.b"])
        self.assertEqual(grading.test_parts(opts, "*S*", ["SLargeIndex.b"]), ["*S*"])  # all alone
        self.assertEqual(grading.test_parts(opts, "*S*", None), ["*S*"])  # the list unknown
        self.assertEqual(grading.test_parts(opts, "*S*", ["S.a", "SLargeIndex.b-1"]), ["*S*"])  # a '-' in a name
        self.assertEqual(grading.test_parts(replace(opts, exercise_jobs=1), "*S*", names), ["*S*"])


class PerfAndSanitizerTest(GradeTestCase):
    def bench(self, entries, exit_code=0):
        fake_bench(self.tree.bin / "alpha_bench_starter", entries, exit_code,
                   log=self.tree.env["FAKE_LOG"] + ".bench")

    def bench_log(self):
        return json.loads(Path(self.tree.env["FAKE_LOG"] + ".bench").read_text())

    def test_ratio_and_points(self):
        self.tree.passing("alpha")
        self.bench([
            {"name": "alpha/int32/1024/manual_time", "run_name": "alpha/int32/1024/manual_time",
             "run_type": "iteration", "repetition_index": 0, "real_time": 1900.0, "time_unit": "us"},
            {"name": "alpha/int32/1024/manual_time", "run_name": "alpha/int32/1024/manual_time",
             "run_type": "iteration", "repetition_index": 1, "real_time": 2.0, "time_unit": "ms"},
            {"name": "alpha/int32/1024/manual_time", "run_name": "alpha/int32/1024/manual_time",
             "run_type": "iteration", "repetition_index": 2, "real_time": 2100.0, "time_unit": "us"},
            {"name": "alpha/int32/1024/manual_time_median", "run_name": "alpha/int32/1024/manual_time",
             "run_type": "aggregate", "aggregate_name": "median", "real_time": 2.0, "time_unit": "ms"},
            {"name": "cub_base/int32/1024/manual_time_median", "run_name": "cub_base/int32/1024/manual_time",
             "run_type": "aggregate", "aggregate_name": "median", "real_time": 800.0, "time_unit": "us"},
        ])
        _, data, _ = self.tree.grade_json("--no-build", "--perf", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertAlmostEqual(alpha["ratio"], 0.4)
        self.assertAlmostEqual(alpha["perf_points"], 3.2)  # 4 * 0.4 / 0.5
        self.assertEqual(alpha["max_points"], 14)
        self.assertIn("ratio 0.40 of cub_base (target 0.5), 95 % interval 0.38-0.42, 3 repetitions",
                      alpha["reason"])
        self.assertEqual(alpha["ratio_interval"], [0.381, 0.421])
        self.assertEqual((alpha["repetitions"], alpha["perf_verdict"]), (3, "ok"))
        # Gradescope's leaderboard: the ratio over the target it was scored against (0.4 / 0.5)
        self.assertEqual([(e["name"], e["order"]) for e in data["leaderboard"]],
                         [("1.1 alpha (speed / target)", "desc")])
        self.assertAlmostEqual(data["leaderboard"][0]["value"], 0.8)
        argv = self.bench_log()["argv"]
        self.assertIn("--benchmark_filter=" + bench.filter_for("alpha/int32/1024", "cub_base/int32/1024"), argv)
        self.assertIn("--benchmark_repetitions=5", argv)
        self.assertIn("--benchmark_min_time=0.1", argv)
        self.assertIn("--benchmark_report_aggregates_only=false", argv)
        # what the program printed (the forged, faster result) was never read
        self.assertNotIn("--benchmark_format=json", argv)

    def test_benchmark_result_only_from_its_out_file(self):
        # A benchmark that prints a result but writes none to its --benchmark_out file
        # (a student's runner prints to the same output) gives no points.
        self.tree.passing("alpha")
        self.bench(EQUAL_MEDIANS)
        body = (self.tree.bin / "alpha_bench_starter").read_text().replace('a.startswith("--benchmark_out=")',
                                                                          "False")
        (self.tree.bin / "alpha_bench_starter").write_text(body)
        _, data, _ = self.tree.grade_json("--no-build", "--perf", "--fast", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["correctness_points"], alpha["perf_points"]), (10, 0))
        self.assertIn("the benchmark wrote no JSON result", alpha["reason"])

    def test_benchmark_is_a_checker_of_the_sandboxed_runner(self):
        # The benchmark program holds no student code: it runs outside the sandbox and
        # starts the exercise's runner, which gets the sandbox prefix.
        self.tree.passing("alpha")
        self.bench(EQUAL_MEDIANS)
        box = self.tree.tools / "fake-box"
        boxed = Path(self._tmp.name) / "boxed.log"
        _write_exe(box, f"""
            import os, sys
            rest = sys.argv[sys.argv.index("--") + 1:]
            with open({str(boxed)!r}, "a") as f:
                f.write(os.path.basename(rest[0]) + "\\n")
            os.execv(rest[0], rest)
        """)

        def fake_sandbox(opts, readable, kind=None):
            opts.runner_prefix = [str(box), "--"]
            return "fake"
        with mock.patch.object(clisetup, "use_sandbox", fake_sandbox):
            _, data, _ = self.tree.grade_json("--no-build", "--perf", "--fast", "1.1")
        self.assertEqual(self.exercise(data, "1.1")["ratio"], 1.0)
        self.assertNotIn("alpha_bench_starter", boxed.read_text().split() if boxed.exists() else [])
        seen = self.bench_log()
        self.assertEqual(Path(seen["runner"]).name, "alpha_runner_starter")
        self.assertEqual(json.loads(seen["prefix"]), [str(box), "--"])
        self.assertTrue(Path(seen["runner_log"]).is_absolute())

    def test_filter_takes_the_suffixes_google_benchmark_appends(self):
        # Chapter 6's Boost baselines of big graphs run Iterations(1)->Repetitions(1): their
        # runs are named ".../iterations:1/repeats:1/manual_time", and a filter that allowed
        # only "/manual_time" skipped them, so 6.2 to 6.5 lost their speed points on the H100.
        pattern = re.compile(bench.filter_for("delta/grid/16", "boost_dijkstra/rmat22/4194304"))
        for name in ("delta/grid/16", "delta/grid/16/manual_time", "delta/grid/16/min_time:0.500/real_time",
                     "boost_dijkstra/rmat22/4194304/iterations:1/repeats:1/manual_time",
                     "boost_dijkstra/rmat22/4194304/threads:8"):
            self.assertTrue(pattern.search(name), name)
        for name in ("delta/grid/160", "delta/grid/16/dmean", "delta/grid/16/manual_time/x",
                     "xdelta/grid/16", "boost_dijkstra/rmat22/4194304/iterations:1/extra"):
            self.assertFalse(pattern.search(name), name)

    def test_parallel_tests_then_benchmarks_alone(self):
        # Two test programs that each wait for the other to start: they pass only
        # when run at the same time. The benchmark records whether a test still runs.
        flags = Path(self._tmp.name) / "flags"
        flags.mkdir()
        for slug in ("alpha", "beta"):
            other = "beta" if slug == "alpha" else "alpha"
            fake_test(self.tree.bin / f"{slug}_test_starter",
                      gtest_json([(slug.capitalize(), "T0", "COMPLETED", [])]), action=f"""
        open({str(flags)!r} + "/{slug}.running", "w").close()
        deadline = time.time() + 20
        while not os.path.exists({str(flags)!r} + "/{other}.running") and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
        os.remove({str(flags)!r} + "/{slug}.running")
        if time.time() >= deadline:
            sys.exit(5)""")
        seen = Path(self._tmp.name) / "seen-by-bench"
        fake_bench(self.tree.bin / "alpha_bench_starter", EQUAL_MEDIANS, action=f"""
        with open({str(seen)!r}, "w") as f:
            json.dump(sorted(os.listdir({str(flags)!r})), f)""")
        code, data, _ = self.tree.grade_json("--no-build", "--perf", "--parallel", "2")
        self.assertEqual(code, 0)
        self.assertEqual([e["status"] for e in data["cudalab"]["exercises"]], ["passed", "passed"])
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["max_points"], alpha["perf_points"]), (14, 4))
        self.assertEqual(data["score"], 20)
        self.assertEqual(json.loads(seen.read_text()), [])  # no test ran beside the benchmark
        # Without -q each ratio is printed as soon as it is measured.
        _, out, err = self.tree.grade("--no-build", "--perf", "--parallel", "2")
        self.assertRegex(out + err, r"benchmarked 1\.1 alpha in [0-9.]+ s: ratio 1(\.0+)?x? of cub_base \(target")
        self.assertRegex(out + err, r"benchmarked 1\.1 alpha .* \([0-9.]+ [mun]?s per call, baseline [0-9.]+ [mun]?s\)")

    def test_parallel_must_be_positive_and_not_for_a_class(self):
        code, _, err = self.tree.grade("--parallel", "0")
        self.assertEqual(code, 2)
        self.assertIn("--parallel", err)

    def test_missing_benchmark_gives_no_perf_points(self):
        self.tree.passing("alpha")
        self.bench([{"name": "cub_base/int32/1024", "real_time": 1.0, "time_unit": "ns"}])
        _, data, _ = self.tree.grade_json("--no-build", "--perf", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["correctness_points"], alpha["perf_points"]), (10, 0))
        self.assertIn("no result for benchmark alpha/int32/1024", alpha["reason"])

    def test_perf_is_not_run_when_tests_fail(self):
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "T", "COMPLETED", ["bad"])]), exit_code=1)
        self.bench([])
        self.tree.grade_json("--no-build", "--perf", "1.1")
        self.assertFalse(Path(self.tree.env["FAKE_LOG"] + ".bench").exists())

    def sanitizer(self, exit_code, text):
        _write_exe(self.tree.tools / "compute-sanitizer", f"""
            import subprocess, sys
            # the runner's prefix: compute-sanitizer --tool T --error-exitcode 86 --print-limit 20 RUNNER...
            assert sys.argv[1:7] == ["--tool", sys.argv[2], "--error-exitcode", "86", "--print-limit", "20"]
            print("========= COMPUTE-SANITIZER")
            subprocess.call(sys.argv[7:])
            print({text!r})
            sys.exit({exit_code})
        """)

    def test_sanitizer_finding_costs_the_points(self):
        self.tree.passing("alpha")
        self.sanitizer(86, "========= Invalid __global__ read of size 4 bytes\n"
                           "=========     at alpha_kernel+0x40\n========= ERROR SUMMARY: 1 error")
        _, data, _ = self.tree.grade_json("--no-build", "--sanitize", "memcheck", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("sanitizer", 0))
        self.assertEqual(alpha["reason"],
                         "compute-sanitizer memcheck: Invalid __global__ read of size 4 bytes")
        self.assertEqual(self.tree.runs()[-1]["max_n"], "4194304")

    def test_clean_sanitizer_keeps_points(self):
        self.tree.passing("alpha")
        self.sanitizer(0, "========= ERROR SUMMARY: 0 errors")
        _, data, _ = self.tree.grade_json("--no-build", "--sanitize", "memcheck,racecheck", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual(alpha["status"], "passed")
        self.assertIn("racecheck clean", alpha["reason"])

    def test_trace_gives_the_tests_times_under_the_sanitizer(self):
        # CUDALAB_GRADE_TRACE=1: each sanitizer program writes a gtest report, whose times
        # the trace prints under its phase; untraced, the program gets no --gtest_output.
        self.tree.passing("alpha")
        self.sanitizer(0, "========= ERROR SUMMARY: 0 errors")
        for traced in (False, True):
            with mock.patch.dict(self.tree.env, {"CUDALAB_GRADE_TRACE": "1" if traced else ""}):
                _, data, err = self.tree.grade_json("--no-build", "--sanitize", "memcheck", "1.1")
            self.assertEqual(self.exercise(data, "1.1")["status"], "passed")
            runs = [r for r in self.tree.runs() if r["prefix"]]
            self.assertEqual(any("--gtest_output" in " ".join(r["argv"]) for r in runs[-1:]), traced)
            lines = [ln for ln in err.splitlines() if ln.startswith("grade trace: ")]
            if not traced:
                self.assertEqual(lines, [])
                continue
            at = next(i for i, ln in enumerate(lines) if "compute-sanitizer memcheck" in ln)
            self.assertIn("gtest: 3 tests", lines[at + 1])

    def test_quick_pass_adds_synccheck_where_the_file_synchronizes(self):
        src = self.tree.root / "starter" / "01-demo" / "alpha.cu"
        tools_run = {}
        for text, sync in (("__global__ void k() { __syncthreads(); }\n", True),
                           ("__global__ void k(int* a) { atomicAdd(a, 1); }  // no __syncthreads()\n", False)):
            src.write_text(text)
            self.tree.passing("alpha")
            self.sanitizer(0, "========= ERROR SUMMARY: 0 errors")
            if Path(self.tree.env["FAKE_LOG"]).exists():
                Path(self.tree.env["FAKE_LOG"]).unlink()
            _, data, _ = self.tree.grade_json("--no-build", "1.1")  # the default grading
            alpha = self.exercise(data, "1.1")
            self.assertEqual(alpha["status"], "passed", alpha["reason"])
            tools_run[sync] = sorted({json.loads(r["prefix"])[2] for r in self.tree.runs() if r["prefix"]})
            self.assertEqual(("synccheck clean" in alpha["reason"]), sync, alpha["reason"])
            # the reason names the tools in their order, whichever program ended first
            self.assertRegex(alpha["reason"], r"memcheck clean[^;]*; racecheck clean[^;]*" + ("; synccheck" if sync else "$"))
        self.assertEqual(tools_run[True], ["memcheck", "racecheck", "synccheck"])
        self.assertEqual(tools_run[False], ["memcheck", "racecheck"])

    def test_quick_plan_shards_racecheck_and_keeps_the_order_alone(self):
        self.assertEqual(grading.quick_plan(("memcheck", "racecheck"), 1),
                         [("memcheck", 0, 1), ("racecheck", 0, 1)])
        self.assertEqual(grading.quick_plan(("memcheck", "racecheck", "synccheck"), 3),
                         [("racecheck", 0, 3), ("racecheck", 1, 3), ("racecheck", 2, 3),
                          ("memcheck", 0, 1), ("synccheck", 0, 1)])
        with mock.patch.dict(os.environ, {"CUDALAB_EXERCISE_JOBS": "1"}):
            self.assertEqual(grading.exercise_jobs_for(1, cpus=64), 1)
        with mock.patch.dict(os.environ, {}, clear=False) as env:
            env.pop("CUDALAB_EXERCISE_JOBS", None)
            self.assertEqual(grading.exercise_jobs_for(1, cpus=16), grading.EXERCISE_JOBS_MAX)
            self.assertEqual(grading.exercise_jobs_for(4, cpus=16), 4)
            self.assertEqual(grading.exercise_jobs_for(8, cpus=16), 2)
            self.assertEqual(grading.exercise_jobs_for(1, cpus=2), 2)
            self.assertEqual(grading.exercise_jobs_for(4, cpus=2), 1)

    def test_quick_pass_at_once_finds_a_race_in_any_shard_and_names_the_first_tool(self):
        # racecheck runs in GoogleTest shards at once: a hazard in one shard's tests costs the
        # points; with a memcheck finding as well the verdict is memcheck's, as one tool after
        # the other gives it, whichever program ends first
        self.tree.passing("alpha")
        for bad_tools, expected in ((["racecheck"], "racecheck"), (["racecheck", "memcheck"], "memcheck")):
            _write_exe(self.tree.tools / "compute-sanitizer", f"""
                import os, subprocess, sys, time
                tool = sys.argv[2]
                subprocess.call(sys.argv[7:])
                bad = tool in {bad_tools!r} and os.environ.get("GTEST_SHARD_INDEX", "1") == "1"
                if tool == "memcheck":
                    time.sleep(0.3)  # ends last
                print("========= Race reported between Write access at k+0x10 and Read access"
                      if tool == "racecheck" and bad else
                      "========= Invalid __global__ read of size 4 bytes" if bad else
                      "========= ERROR SUMMARY: 0 errors")
                sys.exit(86 if bad else 0)
            """)
            Path(self.tree.env["FAKE_LOG"]).unlink(missing_ok=True)
            self.tree.env["CUDALAB_EXERCISE_JOBS"] = "3"
            _, data, _ = self.tree.grade_json("--no-build", "1.1")
            alpha = self.exercise(data, "1.1")
            self.assertEqual((alpha["status"], alpha["correctness_points"]), ("sanitizer", 0), alpha["reason"])
            self.assertTrue(alpha["reason"].startswith(f"compute-sanitizer {expected}: "), alpha["reason"])
            shards = sorted(tuple(r["shard"]) for r in self.tree.runs()
                            if r["prefix"] and json.loads(r["prefix"])[2] == "racecheck")
            self.assertEqual(shards, [("0", "3"), ("1", "3"), ("2", "3")])

    def test_quick_pass_out_of_time_still_counts_an_error_already_reported(self):
        # A quick program that runs out of time is not counted, but an error the sanitizer had
        # reported by then is: a runner that lingers at its exit (a static destructor that
        # spins: red-team sanitizer-timeout-hides-finding), or calls slowed on purpose, must
        # not hide it. The error is found anywhere in the runner's log, even behind output the
        # runner printed without a newline and followed by more than the tail the report shows.
        self.tree.passing("alpha")
        for says, expected in (("========= Invalid __global__ read of size 4 bytes", "sanitizer"),
                               ("========= ERROR SUMMARY: 0 errors", "passed")):
            _write_exe(self.tree.tools / "compute-sanitizer", f"""
                import subprocess, sys, time
                tool = sys.argv[2]
                print("========= COMPUTE-SANITIZER", flush=True)
                subprocess.call(sys.argv[7:])
                if tool == "memcheck":
                    sys.stdout.write("the runner's text without a newline")
                    print({says!r}, flush=True)
                    for i in range(5000):  # 200 KiB after it: past the 64 KiB tail
                        print("x" * 39)
                    sys.stdout.flush()
                    time.sleep(60)  # lingers: the pass stops it
                print("========= ERROR SUMMARY: 0 errors")
            """)
            with mock.patch.object(grading, "QUICK_LIMIT", 2.0):
                _, data, _ = self.tree.grade_json("--no-build", "1.1")
            alpha = self.exercise(data, "1.1")
            self.assertEqual(alpha["status"], expected, alpha["reason"])
            if expected == "sanitizer":
                self.assertEqual(alpha["correctness_points"], 0)
                self.assertEqual(alpha["reason"], "compute-sanitizer memcheck: Invalid __global__ read of size 4 "
                                                  "bytes (reported before the run was stopped after 2 s)")
            else:
                self.assertIn("memcheck: not finished in 2 s (not counted)", alpha["reason"])

    def test_sanitizer_finding_reads_past_banner_summaries_and_warnings(self):
        self.assertIsNone(grading.sanitizer_finding(
            "========= COMPUTE-SANITIZER\n=========     at k+0x10\n"
            "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
            "========= Warning: (Warp Level Programming) Potential RAW hazard\n"
            "========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA API "
            "call to cudaMemsetAsync.\n"
            "========= ERROR SUMMARY: 0 errors\nplain text\n"))
        self.assertEqual(grading.sanitizer_finding("abc========= Race reported between Write access\n"),
                         "Race reported between Write access")

    def quick_sanitizer_table(self, body: str):
        """Gives exercise 1.1 (alpha) an [exercise.quick_sanitizer] table with `body`."""
        path = self.tree.root / "chapters" / "01-demo" / "exercises.toml"
        path.write_text(path.read_text().replace('[exercise.perf]\nbenchmark = "alpha',
                                                 '[exercise.quick_sanitizer]\n' + body +
                                                 '[exercise.perf]\nbenchmark = "alpha', 1))

    def test_quick_pass_keeps_the_exercises_bounds(self):
        # [exercise.quick_sanitizer]: its max_n caps the sizes and its skip patterns leave
        # costly cases to the plain run; the reason says so; --sanitize (the full pass) keeps
        # every test and the large cap
        self.quick_sanitizer_table('max_n = 1100\nskip = ["*Cases.Patterns", "*_all_equal"]\n')
        self.tree.passing("alpha")
        self.sanitizer(0, "========= ERROR SUMMARY: 0 errors")
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual(alpha["status"], "passed", alpha["reason"])
        self.assertIn("racecheck clean (n <= 1100, 2 costly case(s) left to the tests)", alpha["reason"])
        quick = [r for r in self.tree.runs() if r["prefix"]]
        self.assertEqual({r["max_n"] for r in quick}, {"1100"})
        self.assertEqual({r["argv"][1] for r in quick}, {"--gtest_filter=*Alpha*-*Cases.Patterns:*_all_equal"})
        plain = [r for r in self.tree.runs() if not r["prefix"]]
        self.assertEqual(plain[0]["argv"][1], "--gtest_filter=*Alpha*")  # the tests: every case
        Path(self.tree.env["FAKE_LOG"]).unlink()
        self.tree.grade_json("--no-build", "--sanitize", "racecheck", "1.1")
        full = [r for r in self.tree.runs() if r["prefix"]]
        self.assertEqual([(r["max_n"], r["argv"][1]) for r in full], [("4194304", "--gtest_filter=*Alpha*")])

    def test_racecheck_skip_leaves_cases_out_of_racecheck_alone(self):
        # [exercise.quick_sanitizer] racecheck_skip: racecheck's programs leave those cases out
        # too, memcheck's keep them; each tool's reason counts the cases it left out
        self.quick_sanitizer_table('skip = ["*Cases.Patterns"]\n'
                                   'racecheck_skip = ["*Tiles/n4351", "*Tiles/n8703"]\n')
        self.tree.passing("alpha")
        self.sanitizer(0, "========= ERROR SUMMARY: 0 errors")
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual(alpha["status"], "passed", alpha["reason"])
        self.assertIn("memcheck clean (n <= 70000, 1 costly case(s) left to the tests)", alpha["reason"])
        self.assertIn("racecheck clean (n <= 70000, 3 costly case(s) left to the tests)", alpha["reason"])
        filters = {json.loads(r["prefix"])[2]: r["argv"][1] for r in self.tree.runs() if r["prefix"]}
        self.assertEqual(filters, {"memcheck": "--gtest_filter=*Alpha*-*Cases.Patterns",
                                   "racecheck": "--gtest_filter=*Alpha*-*Cases.Patterns:*Tiles/n4351:*Tiles/n8703"})

    def small_gpu(self, profile="t4"):
        """Gives exercise 1.1 (alpha) the manifest key small_gpu = profile."""
        path = self.tree.root / "chapters" / "01-demo" / "exercises.toml"
        path.write_text(path.read_text().replace('points = 10\nforbid = ["cub::"]\n',
                                                 f'points = 10\nsmall_gpu = "{profile}"\nforbid = ["cub::"]\n', 1))

    def test_small_gpu_pass_runs_the_tests_as_on_a_smaller_gpu(self):
        # small_gpu: after the tests, the default grading runs them again under that device
        # profile at the quick pass's sizes, outside the sanitizer; --fast skips it, and a
        # grading that already runs under a profile does not run it twice
        self.small_gpu()
        self.tree.passing("alpha")
        self.sanitizer(0, "========= ERROR SUMMARY: 0 errors")
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("passed", 10), alpha["reason"])
        self.assertIn("passes under the t4 device profile (CUDALAB_DEVICE_PROFILE=t4, n <= 70000)",
                      alpha["reason"])
        profiled = [r for r in self.tree.runs() if r["profile"]]
        self.assertEqual([(r["profile"], r["max_n"], r["prefix"], r["argv"][1]) for r in profiled],
                         [("t4", "70000", None, "--gtest_filter=*Alpha*")])
        runs = [r for r in self.tree.runs() if r["argv"][1:2] != ["--gtest_list_tests"]]
        self.assertIsNone(runs[0]["profile"])      # the tests themselves: the real device
        Path(self.tree.env["FAKE_LOG"]).unlink()
        self.tree.grade_json("--no-build", "--fast", "1.1")
        self.assertEqual([r for r in self.tree.runs() if r["profile"]], [])
        Path(self.tree.env["FAKE_LOG"]).unlink()
        self.tree.grade_json("--no-build", "--device-profile", "rtx3090", "1.1")
        self.assertEqual({r["profile"] for r in self.tree.runs()}, {"rtx3090"})
        # an exercise without the key: no such run
        Path(self.tree.env["FAKE_LOG"]).unlink()
        self.tree.passing("beta")
        self.tree.grade_json("--no-build", "1.2")
        self.assertEqual([r for r in self.tree.runs() if r["profile"]], [])

    def test_small_gpu_failure_costs_the_points(self):
        # a launch beyond the T4's shared memory per block: the runner refuses it under the
        # profile, the test fails there, the student reads why and how to rerun it
        self.small_gpu()
        said = ("alpha_test.cu:40: Failure\ncudalab::DeviceLimitError: the launch of merge_kernel asks "
                "for 139264 bytes of shared memory per block; at most 65536 are allowed under "
                "CUDALAB_DEVICE_PROFILE=t4")
        failing = gtest_json([("Alpha", "T0", "COMPLETED", []), ("Alpha", "T1", "COMPLETED", [said]),
                              ("Alpha", "T2", "COMPLETED", [])])
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", f"T{i}", "COMPLETED", []) for i in range(3)]),
                  action=("if os.environ.get('CUDALAB_DEVICE_PROFILE') == 't4':\n"
                          "            out = [a.split(':', 1)[1] for a in sys.argv if a.startswith('--gtest_output=json:')]\n"
                          f"            json.dump({failing!r}, open(out[0], 'w')); sys.exit(1)"))
        self.sanitizer(0, "========= ERROR SUMMARY: 0 errors")
        _, data, _ = self.tree.grade_json("--no-build", "1.1")
        alpha = self.exercise(data, "1.1")
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("failed", 0), alpha["reason"])
        self.assertEqual(alpha["reason"], "1 of 3 tests failed under the t4 device profile "
                                          "(CUDALAB_DEVICE_PROFILE=t4, n <= 70000)")
        output = data["tests"][0]["output"]
        self.assertIn("size launches from cudalab::device_limits()", output)
        self.assertIn("FAILED Alpha.T1 (t4)", output)
        self.assertIn("at most 65536 are allowed under CUDALAB_DEVICE_PROFILE=t4", output)
        self.assertIn("rerun: CUDALAB_DEVICE_PROFILE=t4 CUDALAB_MAX_N=70000 ", output)
        # the quick sanitizer pass did not run after it
        self.assertEqual([r for r in self.tree.runs() if r["prefix"]], [])

    def test_quick_tools_read_the_code_not_its_comments(self):
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "x.cu"
            for text, sync in (("x = __shfl_down_sync(0xffffffffu, x, 1);", True),
                               ("__syncwarp();", True),
                               ("auto b = cg::this_thread_block(); b.sync();", True),
                               ("// call __syncthreads() here\n/* __syncwarp() */ int a;", False),
                               ('const char* s = "__syncthreads()";', False),
                               ("atomicAdd(&c, 1);", False)):
                f.write_text(text)
                self.assertEqual("synccheck" in grading.quick_tools(f), sync, text)
            self.assertEqual(grading.quick_tools(Path(d) / "missing.cu"), grading.QUICK_TOOLS)

    def test_missing_sanitizer_is_said_not_failed(self):
        self.tree.passing("alpha")
        self.tree.env["PATH"] = f"{self.tree.tools}{os.pathsep}{Path(PY).parent}"
        with mock.patch("shutil.which", side_effect=lambda n: None if n == "compute-sanitizer" else "x"):
            _, data, _ = self.tree.grade_json("--no-build", "--sanitize", "memcheck", "1.1")
        self.assertEqual(self.exercise(data, "1.1")["status"], "passed")
        self.assertIn("compute-sanitizer is not on PATH", data["tests"][0]["output"])


class NoGpuTest(GradeTestCase):
    """Without a GPU tools/grade says so first, within seconds, and builds nothing."""

    def setUp(self):
        super().setUp()
        self.tree.gpu = (False, "no NVIDIA driver: libcuda.so.1 cannot be loaded")

    def test_says_so_before_any_build_and_exits_3(self):
        (self.tree.build / "CMakeCache.txt").unlink()  # a fresh clone: nothing configured
        start = time.monotonic()
        code, out, err = self.tree.grade()
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(code, 3)
        self.assertEqual(out, "")  # no scoreboard of zeros
        self.assertTrue(err.startswith("tools/grade: no NVIDIA GPU here (no NVIDIA driver"), err)
        self.assertIn("tools/grade --compile-only", err)
        self.assertEqual(self.tree.calls(), [])  # neither cmake nor ninja ran
        self.assertFalse((self.tree.build / "grade-build.log").exists())
        self.assertEqual(self.tree.runs(), [])
        self.tree.probe.assert_called_once()

    def test_quiet_still_says_it_and_outputs_say_not_graded(self):
        code, out, err = self.tree.grade("--json", "-", "-q")
        self.assertEqual(code, 3)
        self.assertIn("no NVIDIA GPU here", err)
        data = json.loads(out)
        self.assertEqual([e["status"] for e in data["cudalab"]["exercises"]], ["no_gpu", "no_gpu"])
        self.assertIn("grading needs a CUDA GPU", data["output"])
        self.assertEqual(self.tree.calls(), [])

    def test_no_build_too(self):
        self.tree.passing("alpha")
        code, _, _ = self.tree.grade("--no-build", "1.1")
        self.assertEqual((code, self.tree.runs()), (3, []))

    def test_cannot_tell_goes_on(self):
        self.tree.gpu = (None, "the CUDA driver did not answer within 60 s")
        self.tree.passing("alpha")
        code, data, err = self.tree.grade_json("--no-build", "1.1")
        self.assertEqual((code, self.exercise(data, "1.1")["status"]), (0, "passed"))

    def test_lists_hints_and_class_grading_do_not_probe(self):
        for argv in (["--list"], ["--hint", "1.1"]):
            code, _, _ = self.tree.grade(*argv)
            self.assertEqual(code, 0)
            self.tree.probe.assert_not_called()
        subs = self.tree.root.parent / "subs"
        subs.mkdir()
        with mock.patch.object(cliclass, "run_class", return_value=3) as run_class:
            code, _, _ = self.tree.grade("--submissions", str(subs))
        self.assertEqual(code, 3)  # class grading's own no-GPU answer
        run_class.assert_called_once()
        self.tree.probe.assert_not_called()


class CompileOnlyTest(GradeTestCase):
    """--compile-only: build and check the files, run nothing; works without a GPU."""

    def setUp(self):
        super().setUp()
        self.tree.gpu = (False, "no NVIDIA driver: libcuda.so.1 cannot be loaded")
        self.tree.env["STALE"] = "alpha_test_starter alpha_runner_starter beta_test_starter"

    def built(self, *targets):
        """Ninja reports no work left for these targets (as after a good build)."""
        stale = self.tree.env["STALE"].split()
        self.tree.env["STALE"] = " ".join(t for t in stale if t not in targets)
        for t in targets:
            if "_runner_" not in t:
                fake_test(self.tree.bin / t, gtest_json([("X", "T", "COMPLETED", [])]))

    def test_all_compile(self):
        self.tree.build_output.write_text("[1/2] Building CUDA object x.o\n[2/2] Linking bin/x\n")
        self.built("alpha_test_starter", "alpha_runner_starter", "beta_test_starter")
        code, out, err = self.tree.grade("--compile-only")
        self.assertEqual(code, 0, out + err)
        self.assertNotIn("no NVIDIA GPU", err)
        self.tree.probe.assert_not_called()
        lines = out.splitlines()
        self.assertEqual(lines[0].split(), ["id", "exercise", "build", "forbidden-API", "check"])
        self.assertEqual(lines[2].split(), ["1.1", "alpha", "compiles", "none", "found"])
        self.assertEqual(lines[3].split(), ["1.2", "beta", "compiles", "none", "found"])
        self.assertIn("compile-only: 2 of 2 exercise(s) compile, 0 fail the forbidden-API check", out)
        (b,) = [c for c in self.tree.calls() if c.startswith("cmake --build")]
        self.assertIn("--target alpha_test_starter alpha_runner_starter beta_test_starter "
                      "beta_runner_starter", b)
        self.assertEqual(self.tree.runs(), [])  # no program ran
        self.assertIn("building: 2 of 2", err)

    def alpha_fails_to_build(self, error: str) -> None:
        """The build fails on alpha.cu with nvcc's `error` (after the file's path); beta builds."""
        self.tree.build_output.write_text(
            "[1/2] Building CUDA object x.o\nFAILED: x.o\n"
            f"{self.tree.root}/starter/01-demo/alpha.cu{error}\n"
            "ninja: build stopped: subcommand failed.\n")
        self.tree.env["FAKE_CMAKE_RC"] = "1"
        self.built("beta_test_starter")

    def test_compile_error_and_forbidden_api(self):
        self.alpha_fails_to_build('(12): error: identifier "foo" is undefined')
        code, out, _ = self.tree.grade("--compile-only", "-q")
        self.assertEqual(code, 1)
        self.assertRegex(out, r"1\.1 +alpha +did not compile +none found")
        self.assertIn("--- 1.1 alpha: did not compile\n  starter/01-demo/alpha.cu(12): error: "
                      "identifier \"foo\" is undefined", out)
        self.assertRegex(out, r"1\.2 +beta +compiles")
        self.assertIn("compile-only: 1 of 2", out)
        self.assertNotIn("setup problem", out)

        (self.tree.root / "starter" / "01-demo" / "alpha.cu").write_text("int x = cub::Sum();\n")
        self.tree.build_output.write_text("[1/1] Linking bin/x\n")
        self.tree.env["FAKE_CMAKE_RC"] = "0"
        self.built("alpha_test_starter", "alpha_runner_starter")
        code, out, _ = self.tree.grade("--compile-only", "-q", "1.1")
        self.assertEqual(code, 1)
        self.assertRegex(out, r"1\.1 +alpha +compiles +uses forbidden API 'cub::' \(line 1\)")
        self.assertIn("1 fail the forbidden-API check", out)

    def test_exercise_file_that_is_a_fifo_or_a_folder(self):
        """starter/<file> a FIFO or a folder: the grader says so, never reads the FIFO (the
        check read it, nvcc too: both waited forever) and never builds its programs."""
        import threading
        alpha = self.tree.root / "starter" / "01-demo" / "alpha.cu"
        self.built("alpha_test_starter", "alpha_runner_starter", "beta_test_starter")
        for kind in ("a FIFO, socket or device", "a folder"):
            alpha.rmdir() if alpha.is_dir() else alpha.unlink()
            (os.mkfifo if kind.startswith("a FIFO") else os.mkdir)(alpha)
            opened, done = [], threading.Event()

            def unblock():   # a reader of the FIFO gets its end of file (and is seen)
                while not done.wait(0.1):
                    try:
                        os.close(os.open(alpha, os.O_WRONLY | os.O_NONBLOCK))
                        opened.append(True)
                    except OSError:
                        pass
            t = threading.Thread(target=unblock, daemon=True)
            t.start()
            try:
                code, out, _ = self.tree.grade("--compile-only", "-q")
            finally:
                done.set()
                t.join()
            with self.subTest(kind=kind):
                self.assertEqual(code, 1)
                self.assertEqual(opened, [])
                self.assertRegex(out, r"1\.1 +alpha +not built +not checked: "
                                      r"starter/01-demo/alpha\.cu is not a")
                self.assertIn(f"not built: starter/01-demo/alpha.cu is {kind}, not a file", out)
                self.assertRegex(out, r"1\.2 +beta +compiles +none found")
                (b,) = [c for c in self.tree.calls() if c.startswith("cmake --build")][-1:]
                self.assertNotIn("alpha_", b)   # its programs were not built
                self.assertIn("beta_test_starter", b)
                self.tree.gpu = (True, "1 CUDA device(s) (fake)")
                code, data, _ = self.tree.grade_json("1.1")
                self.tree.gpu = (False, "no NVIDIA driver: libcuda.so.1 cannot be loaded")
                e = self.exercise(data, "1.1")
                self.assertEqual((e["status"], e["reason"]), (
                    "compile_error", f"not built: starter/01-demo/alpha.cu is {kind}, not a file"))
                self.assertEqual(opened, [])

    def test_file_saved_as_utf16_is_named_so(self):
        """A file saved as UTF-16 (an editor on Windows): nvcc says 'invalid preprocessing
        directive #i', which does not say why; the details now do."""
        alpha = self.tree.root / "starter" / "01-demo" / "alpha.cu"
        alpha.write_bytes(b"\xff\xfe" + "#include <x>\nvoid alpha() {}\n".encode("utf-16-le"))
        self.alpha_fails_to_build(":1:4: error: invalid preprocessing directive #i")
        code, out, _ = self.tree.grade("--compile-only", "-q")
        self.assertEqual(code, 1)
        self.assertIn("alpha.cu is saved as UTF-16 text (it starts with a UTF-16 byte-order mark): "
                      "the compiler reads UTF-8; save it as UTF-8", out)
        self.assertEqual(out.count("saved as UTF-16"), 1, out)   # beta, plain text, has none

    def test_usage(self):
        for extra in (["--no-build"], ["--json", "-"], ["--csv", "x.csv"]):
            code, _, err = self.tree.grade("--compile-only", *extra)
            self.assertEqual(code, 2, extra)
        self.assertEqual(self.tree.calls(), [])


class SetupProblemTest(GradeTestCase):
    """A machine without nvcc, CMake or GoogleTest is a setup problem (exit 4), never the
    student's "did not compile"."""

    def setUp(self):
        super().setUp()
        (self.tree.build / "CMakeCache.txt").unlink()
        (self.tree.build / "build.ninja").unlink()

    def assertSetupProblem(self, code, out, err, *said):
        self.assertEqual(code, 4, out + err)
        self.assertIn("tools/grade: setup problem: ", err)
        for s in said:
            self.assertIn(s, err)
        self.assertNotIn("did not compile", out + err)
        self.assertEqual(self.tree.runs(), [])

    def without_nvcc(self):
        (self.tree.tools / "nvcc").unlink()
        path = [d for d in self.tree.env["PATH"].split(os.pathsep)
                if not (Path(d) / "nvcc").exists()]
        self.tree.env.update(PATH=os.pathsep.join(path), CUDA_HOME="", CUDA_PATH="")

    def test_no_nvcc(self):
        self.without_nvcc()
        with mock.patch.object(build, "CUDA_HOMES", ()):
            code, out, err = self.tree.grade("1.1")
        self.assertSetupProblem(code, out, err, "no nvcc found", "export PATH=/usr/local/cuda/bin:$PATH")
        self.assertNotIn("cmake --preset default", self.tree.calls())
        self.assertEqual(out, "")

    def test_nvcc_in_the_cuda_folder_is_used(self):
        self.without_nvcc()
        cuda = self.tree.root.parent / "cuda"
        _write_exe(cuda / "bin" / "nvcc", "print('fake')\n")
        self.tree.passing("alpha")
        with mock.patch.object(build, "CUDA_HOMES", (str(cuda),)):
            code, data, err = self.tree.grade_json("1.1")
        self.assertEqual(code, 0)
        self.assertIn("cmake --preset default", self.tree.calls())
        self.assertEqual(self.exercise(data, "1.1")["status"], "passed")
        with mock.patch.object(build, "CUDA_HOMES", (str(cuda),)):
            code, _, err = self.tree.grade("1.1", "--json", os.devnull)
        self.assertEqual(code, 0)
        self.assertIn(f"nvcc is not on PATH: using {cuda}/bin/nvcc for this run; to stop this "
                      "note, export PATH=/usr/local/cuda/bin:$PATH", err)
        self.assertEqual(self.tree.calls().count("cmake --preset default"), 1)

    def test_configure_without_gtest_then_again(self):
        self.tree.env["FAKE_CONFIGURE_OUTPUT"] = (
            "CMake Error at /usr/share/cmake-3.25/Modules/FindPackageHandleStandardArgs.cmake:230 "
            "(message):\n  Could NOT find GTest (missing: GTEST_LIBRARY GTEST_INCLUDE_DIR\n"
            "  GTEST_MAIN_LIBRARY)\n-- Configuring incomplete, errors occurred!")
        code, out, err = self.tree.grade("1.1")
        self.assertSetupProblem(code, out, err, "GoogleTest is not installed",
                                "fix: apt-get install libgtest-dev")
        self.assertFalse([c for c in self.tree.calls() if c.startswith("cmake --build")])
        # the failed configure left a cache: the next run configures again
        del self.tree.env["FAKE_CONFIGURE_OUTPUT"]
        self.tree.passing("alpha")
        code, _, _ = self.tree.grade("1.1", "-q")
        self.assertEqual(code, 0)
        self.assertEqual(self.tree.calls().count("cmake --preset default"), 2)

    def test_cmake_too_old_or_missing(self):
        self.tree.env["FAKE_CMAKE_VERSION"] = "3.22.1"
        code, out, err = self.tree.grade("1.1")
        self.assertSetupProblem(code, out, err, "CMake 3.22 is too old")
        (self.tree.tools / "cmake").unlink()
        self.tree.env["PATH"] = os.pathsep.join(
            d for d in self.tree.env["PATH"].split(os.pathsep) if not (Path(d) / "cmake").exists())
        code, out, err = self.tree.grade("1.1")
        self.assertSetupProblem(code, out, err, "CMake is not installed", "apt-get install cmake")

    def test_cmake_rerun_failing_during_the_build(self):
        (self.tree.build / "CMakeCache.txt").write_text("")
        (self.tree.build / "build.ninja").write_text("")
        self.tree.build_output.write_text(
            "[0/2] Re-running CMake...\nCMake Error at CMakeLists.txt:48 (find_package):\n"
            "  By not providing \"Findbenchmark.cmake\" in CMAKE_MODULE_PATH this project\n"
            "  has asked CMake to find a package configuration file provided by\n"
            "  \"benchmark\", but CMake did not find one.\nninja: error: rebuilding "
            "'build.ninja': subcommand failed\n")
        self.tree.env.update(FAKE_CMAKE_RC="1", STALE="alpha_test_starter")
        code, out, err = self.tree.grade("1.1")
        self.assertSetupProblem(code, out, err, "Google Benchmark is not installed",
                                "apt-get install libbenchmark-dev")

    def test_diagnose_messages(self):
        log = Path("build/default/grade-build.log")
        cases = {
            "CMake Error at CMakeLists.txt:8 (project):\n  No CMAKE_CUDA_COMPILER could be found.":
                "no working CUDA compiler",
            "CMake Error at CMakeLists.txt:8 (project):\n  The CUDA compiler\n\n"
            "    \"/usr/local/cuda/bin/nvcc\"\n\n  is not able to compile a simple test program.":
                "nvcc cannot compile",
            "CMake Error at CMakeLists.txt:38 (find_package):\n  Could NOT find CUDAToolkit":
                "no CUDA toolkit",
            "CMake Error at x.cmake:3 (foo):\n  something new\n  and more": "CMake Error at x.cmake:3",
        }
        for text, said in cases.items():
            e = build.diagnose(text, "CMake configure", log)
            self.assertIn(said, str(e), text)
            self.assertIn(str(log), e.fix)


class BuildProgressTest(GradeTestCase):
    def test_counter_from_ninja_steps(self):
        self.tree.passing("alpha")
        self.tree.env["STALE"] = "alpha_test_starter"
        self.tree.build_output.write_text(
            "".join(f"[{k}/40] Building CUDA object o{k}.o\n" for k in range(1, 41)))
        code, _, err = self.tree.grade("1.1", "--json", os.devnull)
        self.assertIn("building: 1 of 40\n", err)
        self.assertIn("building: 40 of 40\n", err)
        self.assertNotIn("building: 2 of 40", err)  # a line every few seconds at most
        log = (self.tree.build / "grade-build.log").read_text()
        self.assertIn("[17/40] Building CUDA object o17.o", log)  # all of it in the log
        _, _, err = self.tree.grade("1.1", "-q", "--json", os.devnull)
        self.assertNotIn("building", err)

    def test_in_place_on_a_terminal(self):
        class Tty(io.StringIO):
            def isatty(self):
                return True
        s = Tty()
        p = clisetup.BuildProgress(s)
        with mock.patch.object(clisetup.time, "monotonic", side_effect=[0.0, 0.1, 1.0, 1.1]):
            for k in (1, 2, 3, 4):
                p(k, 4)
        p.end()
        self.assertEqual(s.getvalue(), "\rbuilding: 1 of 4\x1b[K\rbuilding: 3 of 4\x1b[K"
                                       "\rbuilding: 4 of 4\x1b[K\n")


FAKE_LIBCUDA = r"""
#include <stdlib.h>
int cuInit(unsigned flags) { const char* v = getenv("FAKE_CUINIT"); return v ? atoi(v) : 0; }
int cuDeviceGetCount(int* n) { const char* v = getenv("FAKE_COUNT"); *n = v ? atoi(v) : 0; return 0; }
int cuGetErrorName(int rc, const char** s) {
  *s = rc == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_SOMETHING"; return 0; }
"""


class ProbeGpuTest(unittest.TestCase):
    """build.probe_gpu asks the driver library (cuInit, cuDeviceGetCount) in a child process."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-probe-")
        self.tmp = Path(self._tmp.name)
        self.addCleanup(self._tmp.cleanup)

    def test_no_driver(self):
        with mock.patch.dict(os.environ, {"PATH": str(self.tmp)}):
            present, why = build.probe_gpu(str(self.tmp / "libcuda-none.so.1"))
        self.assertIs(present, False)
        self.assertIn("no NVIDIA driver", why)

    def test_nvidia_smi_without_the_library_cannot_tell(self):
        _write_exe(self.tmp / "nvidia-smi", "print('GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-x)')\n")
        with mock.patch.dict(os.environ, {"PATH": str(self.tmp)}):
            present, why = build.probe_gpu(str(self.tmp / "libcuda-none.so.1"))
        self.assertIsNone(present)
        self.assertIn("GPU 0: NVIDIA H100", why)

    def test_fake_driver(self):
        import shutil
        import subprocess
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            self.skipTest("no C compiler for the fake driver library")
        (self.tmp / "fake.c").write_text(FAKE_LIBCUDA)
        lib = self.tmp / "libcuda-fake.so"
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(self.tmp / "fake.c")], check=True)
        for env, expect, said in (({"FAKE_COUNT": "2"}, True, "2 CUDA device(s)"),
                                  ({"FAKE_COUNT": "0"}, False, "finds no CUDA device"),
                                  ({"FAKE_CUINIT": "100"}, False, "CUDA_ERROR_NO_DEVICE"),
                                  ({"FAKE_CUINIT": "100", "CUDA_VISIBLE_DEVICES": ""}, False,
                                   "CUDA_VISIBLE_DEVICES=''"),
                                  ({"FAKE_CUINIT": "999"}, False, "does not start")):
            with mock.patch.dict(os.environ, env):
                if "CUDA_VISIBLE_DEVICES" not in env:
                    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
                present, why = build.probe_gpu(str(lib))
            self.assertIs(present, expect, env)
            self.assertIn(said, why)

    def test_the_probe_skips_site(self):
        # the child needs ctypes alone: no site, whose .pth files cost each grade run tens of ms
        import subprocess
        real = subprocess.run
        with mock.patch.object(build.subprocess, "run", side_effect=real) as run:
            build.probe_gpu(str(self.tmp / "libcuda-none.so.1"))
        argv = run.call_args_list[0].args[0]
        self.assertEqual(argv[:3], [sys.executable, "-S", "-c"])


class CTestSkipTest(unittest.TestCase):
    """The exercises' CTest property (cmake/CudalabExercise.cmake): a program that found no
    GPU and skipped its GPU tests counts as skipped; a failure, or a run on a GPU, never does."""

    OUTPUTS = {
        "skipped": ("cudalab: no CUDA device; GPU tests are skipped\n[ RUN      ] S.Host\n"
                    "[       OK ] S.Host (0 ms)\n[  PASSED  ] 1 test.\n"
                    "[  SKIPPED ] 2 tests, listed below:\n[  SKIPPED ] Sizes/S.Int32Random/n1025\n"
                    "[  SKIPPED ] S.Big\n", 0),
        "host_failed": ("cudalab: no CUDA device; GPU tests are skipped\n[  PASSED  ] 1 test.\n"
                        "[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] S.Big\n"
                        "[  FAILED  ] 1 test, listed below:\n[  FAILED  ] S.Host\n\n 1 FAILED TEST\n", 1),
        "failed_exit_0": ("cudalab: no CUDA device; GPU tests are skipped\n[  PASSED  ] 1 test.\n"
                          "[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] S.Big\n"
                          "[  FAILED  ] 1 test, listed below:\n[  FAILED  ] S.Host\n", 0),
        "on_a_gpu": ("cudalab: device 0 of 1: NVIDIA H100 (sm_90, 132 SMs)\n[  PASSED  ] 1 test.\n"
                     "[  SKIPPED ] 1 test, listed below:\n[  SKIPPED ] S.Big\n", 0),
        "gpu_required": ("cudalab: no CUDA device; GPU tests FAIL (CUDALAB_REQUIRE_GPU=1)\n"
                         "[  FAILED  ] 1 test, listed below:\n[  FAILED  ] S.Big\n", 1),
        "host_only": ("cudalab: no CUDA device; GPU tests are skipped\n[  PASSED  ] 3 tests.\n", 0),
    }
    EXPECT = {"skipped": "Skipped", "host_failed": "Failed", "failed_exit_0": "Passed",
              "on_a_gpu": "Passed", "gpu_required": "Failed", "host_only": "Passed"}

    def test_skip_expression(self):
        import shutil
        import subprocess
        if not (shutil.which("cmake") and shutil.which("ctest")):
            self.skipTest("no cmake/ctest")
        text = (REPO / "cmake" / "CudalabExercise.cmake").read_text()
        m = re.search(r'set_tests_properties\("\$\{chapter\}/\$\{slug\}" PROPERTIES[^)]*'
                      r'SKIP_REGULAR_EXPRESSION ("(?:[^"\\]|\\.)*")', text)
        self.assertIsNotNone(m, "the exercise tests have a SKIP_REGULAR_EXPRESSION")
        with tempfile.TemporaryDirectory(prefix="test-ctest-") as tmp:
            src = Path(tmp) / "src"
            src.mkdir()
            lines = ["cmake_minimum_required(VERSION 3.16)", "project(skip NONE)", "enable_testing()"]
            for name, (output, rc) in self.OUTPUTS.items():
                (src / f"{name}.py").write_text(
                    f"import sys\nsys.stdout.write({output!r})\nsys.exit({rc})\n")
                lines += [f'add_test(NAME {name} COMMAND "{PY}" "{src / name}.py")',
                          f"set_tests_properties({name} PROPERTIES SKIP_REGULAR_EXPRESSION {m[1]})"]
            (src / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
            b = Path(tmp) / "b"
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.run(["cmake", "-S", str(src), "-B", str(b), *generator], check=True,
                           capture_output=True, text=True)
            p = subprocess.run(["ctest", "--test-dir", str(b)], capture_output=True, text=True)
            got = dict(re.findall(r"Test +#\d+: (\w+) \.+\s*\**(Skipped|Failed|Passed)", p.stdout))
            self.assertEqual(got, self.EXPECT, p.stdout)


class CliTest(GradeTestCase):
    def test_selectors(self):
        chapters = load_all(self.tree.root)
        ids = lambda sel: [e.id for e in select(chapters, sel)]  # noqa: E731
        self.assertEqual(ids([]), ["1.1", "1.2"])
        self.assertEqual(ids(["1"]), ["1.1", "1.2"])
        self.assertEqual(ids(["01-demo"]), ["1.1", "1.2"])
        self.assertEqual(ids(["beta", "1.1"]), ["1.1", "1.2"])
        with self.assertRaises(UsageError):
            select(chapters, ["9.9"])

    def test_unknown_selector_exits_2_and_lists_valid_ones(self):
        code, _, err = self.tree.grade("nope")
        self.assertEqual(code, 2)
        self.assertIn("1.1 or alpha", err)

    def test_hints(self):
        code, out, _ = self.tree.grade("--hint", "1.1")
        self.assertEqual(code, 0)
        self.assertIn("hint 1/3: gentle", out)
        self.assertNotIn("clearer", out)
        self.assertIn("more: tools/grade --hint 1.1 --level 2", out)
        _, out, _ = self.tree.grade("--hint", "alpha", "--level", "all")
        self.assertIn("hint 3/3: explicit", out)
        self.assertNotIn("more:", out)
        self.assertEqual(self.tree.grade("--hint", "1.9")[0], 2)
        self.assertEqual(self.tree.calls(), [])  # no build for hints

    def test_list(self):
        code, out, _ = self.tree.grade("--list")
        self.assertEqual(code, 0)
        self.assertIn("1.1", out)
        self.assertIn("beta", out)
        self.assertIn("Second exercise", out)

    def test_csv_and_markdown_files(self):
        self.tree.passing("alpha")
        self.tree.passing("beta")
        csv_path = self.tree.root / "out.csv"
        md_path = self.tree.root / "out.md"
        self.tree.grade("--no-build", "-q", "--csv", str(csv_path), "--markdown", str(md_path))
        rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
        self.assertEqual(list(rows[0]), ["id", "slug", "status", "points", "max_points",
                                         "perf_ratio", "reason"])
        self.assertEqual((rows[0]["id"], rows[0]["points"], rows[0]["max_points"]), ("1.1", "10.0", "10"))
        md = md_path.read_text()
        self.assertIn("| id | exercise | tests | perf | points | reason |", md)
        self.assertIn("progress: 2/2 exercises complete", md)

    def test_real_tree_lists_and_hints(self):
        import subprocess
        p = subprocess.run([PY, str(TOOLS / "grade"), "--list"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1.1", p.stdout)
        p = subprocess.run([PY, str(TOOLS / "grade"), "--hint", "1.4", "--level", "all"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("hint 3/3", p.stdout)


class SourceCheckOverlapTest(GradeTestCase):
    """source.check_report: the object check (nm, cuobjdump, objdump) runs while the token
    check does; its findings and notes still come after the token check's, and only when
    the token check has no finding."""

    def setUp(self):
        super().setUp()
        self.ex = next(e for e in load_all(self.tree.root)[0].exercises if e.id == "1.1")
        self.src = self.tree.root / self.ex.source("starter")
        self.obj = self.tree.root / "alpha.cu.o"
        self.obj.write_bytes(b"")

    def check(self, tokens: source.Report, delay: float = 0.5):
        def slow_tokens(*a, **kw):
            time.sleep(delay)
            return tokens

        def slow_object(*a, **kw):
            time.sleep(delay)
            return source.Report([source.Finding("symbol", "cub::", None, "object finding")], ["object note"])
        with mock.patch.object(source, "check_tokens", side_effect=slow_tokens), \
                mock.patch.object(source, "check_object", side_effect=slow_object) as obj:
            start = time.monotonic()
            rep = source.check_report(self.ex, self.src, object_path=self.obj, root=self.tree.root)
            return rep, time.monotonic() - start, obj

    def test_object_check_beside_the_token_check(self):
        rep, secs, obj = self.check(source.Report([], ["token note"]))
        self.assertLess(secs, 0.85)  # 0.5 s each, at the same time (one after the other: 1 s)
        self.assertEqual([f.message for f in rep.findings], ["object finding"])
        self.assertEqual(rep.notes, ["token note", "object note"])
        self.assertEqual(obj.call_count, 1)

    def test_a_token_finding_alone_is_reported(self):
        token = source.Finding("name", "cub::", 2, "token finding")
        rep, _, _ = self.check(source.Report([token], ["token note"]), delay=0.05)
        self.assertEqual([f.message for f in rep.findings], ["token finding"])
        self.assertEqual(rep.notes, ["token note"])

    def test_an_object_older_than_the_file_is_not_checked(self):
        build_obj = self.tree.build / "chapters" / "01-demo" / "CMakeFiles" / "cudalab_alpha_starter.dir" / "alpha.cu.o"
        build_obj.parent.mkdir(parents=True)
        build_obj.write_bytes(b"")
        os.utime(build_obj, (time.time() - 100, time.time() - 100))
        with mock.patch.object(source, "check_tokens", return_value=source.Report([], ["token note"])), \
                mock.patch.object(source, "check_object") as obj:
            rep = source.check_report(self.ex, self.src, build_dir=self.tree.build, root=self.tree.root)
        obj.assert_not_called()
        self.assertEqual(rep.notes[0], "token note")
        self.assertIn("is older than", rep.notes[1])


class ObjectFirstTest(GradeTestCase):
    """A student's tree: the object checks (the imports among them) come before any test runs,
    and the token checks run beside the test program; the verdict is check()'s."""

    def setUp(self):
        super().setUp()
        self.tree.passing("alpha")
        obj = self.tree.build / "chapters" / "01-demo" / "CMakeFiles" / "cudalab_alpha_starter.dir" / "alpha.cu.o"
        obj.parent.mkdir(parents=True)
        obj.write_bytes(b"")

    def grade(self, tokens, objects):
        with mock.patch.object(source, "check_tokens", return_value=source.Report(tokens)), \
                mock.patch.object(source, "check_object", return_value=source.Report(objects)):
            _, data, _ = self.tree.grade_json("--no-build", "--fast", "1.1")
        return self.exercise(data, "1.1")

    def test_an_object_finding_runs_nothing(self):
        alpha = self.grade([], [source.Finding("import", "close", None, "imports close")])
        self.assertEqual((alpha["status"], alpha["reason"]), ("forbidden", "imports close"))
        self.assertEqual(self.tree.runs(), [])

    def test_a_token_finding_comes_first_as_check_orders_them(self):
        alpha = self.grade([source.Finding("name", "cub::", 4, "uses cub:: (line 4)")],
                           [source.Finding("symbol", "cub::", None, "uses cub:: (symbol)")])
        self.assertEqual((alpha["status"], alpha["reason"]), ("forbidden", "uses cub:: (line 4)"))
        self.assertEqual(self.tree.runs(), [])

    def test_a_token_finding_alone_replaces_the_passing_tests(self):
        alpha = self.grade([source.Finding("name", "cub::", 4, "uses cub:: (line 4)")], [])
        self.assertEqual((alpha["status"], alpha["correctness_points"], alpha["reason"]),
                         ("forbidden", 0, "uses cub:: (line 4)"))
        self.assertEqual(len(self.tree.runs()), 1)  # the tests ran beside the check

    def test_clean_checks_keep_the_tests_verdict(self):
        alpha = self.grade([], [])
        self.assertEqual((alpha["status"], alpha["reason"]), ("passed", "all 3 tests passed"))


class TechniqueCheckTest(GradeTestCase):
    """require_sass (source.technique_check): read once the tests pass, before --perf; its
    finding takes the correctness points, and a file that fails its tests is told what they say."""

    def setUp(self):
        super().setUp()
        manifest_path = self.tree.root / "chapters" / "01-demo" / "exercises.toml"
        manifest_path.write_text(MANIFEST.replace(
            'forbid = ["cub::"]\n',
            'forbid = ["cub::"]\nrequire_sass = ["STS"]\nrequire_why = "a tree in shared memory"\n', 1))
        obj = self.tree.build / "chapters" / "01-demo" / "CMakeFiles" / "cudalab_alpha_starter.dir" / "alpha.cu.o"
        obj.parent.mkdir(parents=True)
        obj.write_bytes(b"")

    # cuobjdump -sass of a kernel that adds each element with a global atomic (no STS), trimmed
    ATOMICS = ("\tcode for sm_90\n\t\tFunction : _Z6alphaPKiPx\n"
               "        /*0100*/                   REDG.E.ADD.64.STRONG.GPU desc[UR4][R2.64], R4 ;  /* 0x0 */\n"
               "        /*0110*/                   EXIT ;                                           /* 0x0 */\n")

    def grade(self, sass):
        # the object's SASS (ATOMICS: no STS), or any, with missing_sass mocked
        with mock.patch.object(source, "check_tokens", return_value=source.Report([])), \
                mock.patch.object(source, "check_object", return_value=source.Report([])), \
                mock.patch.object(objcheck, "sass_of", return_value=(sass, "")):
            _, data, _ = self.tree.grade_json("--no-build", "--fast", "1.1")
        return self.exercise(data, "1.1")

    def test_passing_tests_without_the_technique_score_nothing(self):
        self.tree.passing("alpha")
        alpha = self.grade(self.ATOMICS)
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("forbidden", 0))
        self.assertIn("its tests pass, but its device code has no shared-memory store (`STS`) in any kernel, "
                      "and 1.1 asks for its own technique: a tree in shared memory", alpha["reason"])

    def test_the_technique_keeps_the_points(self):
        self.tree.passing("alpha")
        with mock.patch.object(objcheck, "missing_sass", return_value=None):
            alpha = self.grade(self.ATOMICS)
        self.assertEqual((alpha["status"], alpha["correctness_points"]), ("passed", 10))

    def test_failing_tests_say_what_the_tests_say(self):
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "T0", "COMPLETED", ["wrong sum"])]), exit_code=1)
        alpha = self.grade(self.ATOMICS)
        self.assertEqual(alpha["status"], "failed")
        self.assertNotIn("technique", alpha["reason"])


class TraceTest(GradeTestCase):
    """CUDALAB_GRADE_TRACE=1 (trace.py): one line on stderr per phase, with its time and the
    programs it started; nothing else changes, and without it nothing is printed."""

    def grade(self, *argv, traced: bool):
        env = dict(self.tree.env, CUDALAB_GRADE_TRACE="1" if traced else "")
        with mock.patch.dict(self.tree.env, env):
            return self.tree.grade(*argv)

    def test_phases_on_stderr_and_nothing_else_changes(self):
        self.tree.passing("alpha")
        self.tree.passing("beta", n=2)
        timed = re.compile(r"\b\d+\.\d+\b")
        plain = self.grade("--no-build", "--json", "-", traced=False)
        traced = self.grade("--no-build", "--json", "-", traced=True)
        self.assertEqual(plain[0], traced[0])
        # the results, the seconds each exercise took left out
        def strip(out):
            data = json.loads(out)
            data["cudalab"]["exercises"] = [dict(e, seconds=0) for e in data["cudalab"]["exercises"]]
            return data
        self.assertEqual(strip(plain[1]), strip(traced[1]))
        self.assertNotIn("grade trace:", plain[2])
        lines = [ln for ln in traced[2].splitlines() if ln.startswith("grade trace: ")]
        others = [ln for ln in traced[2].splitlines() if not ln.startswith("grade trace: ")]
        self.assertEqual([timed.sub("N", ln) for ln in others],
                         [timed.sub("N", ln) for ln in plain[2].splitlines()])
        text = "\n".join(lines)
        for phase in ("manifests", "GPU probe", "build check (--no-build", "sandbox setup",
                      "grading 1.1", "grading 1.2", "test list", "test program alpha_test_starter",
                      "gtest: 3 tests", "gtest: 2 tests", "progress record", "report", "total"):
            self.assertIn(phase, text)
        self.assertRegex(text, r"build check \(--no-build: are the programs fresh\?\): \d+\.\d{3} s "
                               r"\(4 programs: ninja x4\)")
        self.assertRegex(text, r"grading 1\.1: \d+\.\d{3} s \(\d+ programs: .*alpha_test_starter x2")
        # the phases inside an exercise are indented under it
        self.assertRegex(text, r"grade trace:   test program alpha_test_starter")
        # the counting of programs is undone at the end
        import subprocess
        self.assertEqual(subprocess.Popen.__init__.__qualname__, "Popen.__init__")

    def test_off_by_default_and_with_0(self):
        from cudalab_grade import trace
        for value in ("", "0"):
            err = io.StringIO()
            with mock.patch.dict(os.environ, {trace.ENV: value}), contextlib.redirect_stderr(err):
                with trace.run(time.monotonic()), trace.phase("x"):
                    trace.gtest_times(Path("/nonexistent"))
            self.assertEqual(err.getvalue(), "")

    def test_gtest_times_and_program_names(self):
        from cudalab_grade import trace
        report_path = Path(self._tmp.name) / "r.json"
        report_path.write_text(json.dumps({"time": "2.500s", "testsuites": [
            {"name": "S", "testsuite": [{"name": "A", "time": "0.010s"}, {"name": "Big", "time": "1.700s"},
                                        {"name": "B", "time": "0s"}]}]}))
        err = io.StringIO()
        with mock.patch.dict(os.environ, {trace.ENV: "1"}), contextlib.redirect_stderr(err):
            trace.gtest_times(report_path, most=2)
        self.assertEqual(err.getvalue(), "grade trace:   gtest: 3 tests; the run 2.500 s (its GPU set-up "
                                         "included), the tests 1.710 s; slowest: S.Big 1.700 s, S.A 0.010 s\n")
        self.assertEqual(trace._programs(["nm", "nm", "cuobjdump"]), " (3 programs: nm x2, cuobjdump)")
        self.assertEqual(trace._programs([]), "")
        self.assertEqual(trace._name([PY, "-c", "pass"]), Path(PY).name + " -c")
        self.assertEqual(trace._name("/usr/bin/nm -u x.o"), "nm -u x.o")
        # proc.run's limits in front: the program's name, not prlimit's
        self.assertEqual(trace._name(["/usr/bin/prlimit", "--core=0", "--fsize=1", "--", "/b/t_test", "-x"]),
                         "t_test")


class HelperTest(unittest.TestCase):
    def test_strip_code_keeps_lines(self):
        text = 'a // x\n/* y\n z */ b "s\\"q" \'c\' 1\'000\nR"(raw\n)" L\'w\'\n'
        stripped = source.strip_code(text)
        self.assertEqual(stripped.count("\n"), text.count("\n"))
        for gone in ("x", "y", "z", "s", "q", "raw", "w"):
            self.assertNotIn(gone, stripped.replace("'", ""))
        self.assertIn("1'000", stripped)
        self.assertEqual(source.find_forbidden("ok\n/*cub::*/ thrust::x", ["cub::", "thrust::"]),
                         ("thrust::", 2))

    def test_bench_plain_entries_use_median(self):
        entries = [{"name": "a/manual_time", "real_time": t, "time_unit": "ns"} for t in (5, 1, 3)]
        self.assertEqual(bench.real_time_ns(entries, "a"), (3.0, ""))
        self.assertEqual(bench.perf_points(2, 0.97, 0.95), 2.0)
        self.assertEqual(bench.perf_points(5, 0.5, 0.95), 2.6)
        self.assertIsNone(bench.real_time_ns([{"name": "a", "error_occurred": True,
                                               "error_message": "x"}], "a")[0])

    def test_bench_wrong_output_in_one_repetition_fails_the_benchmark(self):
        # bench.cuh marks a repetition whose output was wrong with the wrong_output counter and
        # its message as the label (not SkipWithError: Google Benchmark <= 1.8 crashes on
        # statistics over repetitions of which only some were skipped). One marked repetition
        # among good ones fails the benchmark, with the label's message, and no time is taken.
        entries = [{"name": "a/manual_time", "run_name": "a/manual_time", "run_type": "iteration",
                    "real_time": t, "time_unit": "ns"} for t in (5, 1, 3)]
        entries[1] = dict(entries[1], wrong_output=1,
                          label="a call's output is wrong (a call checked at random): sum 7, expected 8")
        entries.append({"name": "a/manual_time_median", "run_name": "a/manual_time",
                        "run_type": "aggregate", "aggregate_name": "median", "real_time": 3,
                        "time_unit": "ns", "wrong_output": 0.33})
        t, why = bench.real_time_ns(entries, "a")
        self.assertIsNone(t)
        self.assertIn("output is wrong (a call checked at random): sum 7, expected 8", why)
        self.assertEqual(bench.repetition_times_ns(entries, "a"), [5.0, 3.0])
        parsed = bench.results_from({"benchmarks": entries})
        self.assertEqual(parsed["results"], {})
        self.assertEqual(len(parsed["errors"]), 1)
        # a label without the counter is a plain label (sssp's graph names), not a failure
        ok = [dict(e, label="road graph") for e in entries[:1]]
        self.assertEqual(bench.real_time_ns(ok, "a"), (5.0, ""))
        self.assertIsNone(bench.failure_of({"name": "a", "wrong_output": 0}))
        self.assertEqual(bench.failure_of({"name": "a", "wrong_output": 1}), "an output is wrong")

    def test_skip_reasons(self):
        out = ("[ RUN      ] A.B\n[       OK ] A.B (0 ms)\n[ RUN      ] A.C\nf.cu:3: Skipped\nno room\n"
               "[  SKIPPED ] A.C (0 ms)\n[ RUN      ] A.D\n[  SKIPPED ] A.D (0 ms)\n"
               "[ RUN      ] A.E\nprinted\n[  FAILED  ] A.E (1 ms)\n[  SKIPPED ] A.E\n")
        self.assertEqual(gtest.skip_reasons(out), ["A.C: no room", "A.D"])
        self.assertEqual(gtest.skip_reasons(out, most=1), ["A.C: no room"])
        self.assertEqual(gtest.skip_reasons("[ RUN      ] A.F\n" + "x" * 500 + "\n[  SKIPPED ] A.F\n",
                                            width=20), ["A.F: " + "x" * 17 + "..."])

    def test_a_failure_outside_every_test_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "report.json"
            path.write_text(json.dumps(gtest_json([("A", "B", "COMPLETED", []),
                                                   ("NonTestSuiteFailure", "", "COMPLETED", ["held"])])))
            rep = gtest.parse_report(path)
        self.assertEqual((rep.total, rep.passed, rep.failed), (2, 1, [(gtest.AFTER_THE_TESTS, "held")]))
        self.assertEqual(gtest.AFTER_THE_TESTS, "(after the tests)")

    def test_running_test(self):
        out = "[ RUN      ] A.B\n[       OK ] A.B (0 ms)\n[ RUN      ] A.C\n"
        self.assertEqual(gtest.running_test(out), "A.C")
        self.assertIsNone(gtest.running_test(out + "[  FAILED  ] A.C (1 ms)\n"))

    def test_table_width(self):
        from cudalab_grade.grading import Result
        from cudalab_grade.manifest import Exercise
        ex = Exercise("1.1", "a_very_long_exercise_slug_name", "t", "f", "d", 1, "*", 10)
        r = Result(ex, 10.0, reason="word " * 60)
        lines = report.table([r]).splitlines()
        self.assertTrue(all(len(line) <= 100 for line in lines))
        self.assertGreater(len(lines), 3)

    def test_gradescope_leaderboard_only_with_perf(self):
        from cudalab_grade.grading import CRASHED, PASSED, Result
        from cudalab_grade.manifest import Exercise
        exs = [Exercise(f"1.{i}", f"s{i}", "t", "f", "d", 1, "*", 10) for i in (1, 2, 3)]
        results = [Result(exs[0], 15.0, PASSED, 10.0, 4.0, ratio=0.8),
                   Result(exs[1], 15.0, CRASHED, ratio=2.0),   # a ratio, but its tests did not pass
                   Result(exs[2], 10.0, PASSED, 10.0)]          # passed, not timed
        data = json.loads(report.gradescope(results, {"perf": True}))
        # no target in these results (written before targets moved): the ratio itself
        self.assertEqual(data["leaderboard"], [{"name": "1.1 s1 (speed / target)", "value": 0.8, "order": "desc"}])
        self.assertNotIn("leaderboard", json.loads(report.gradescope(results, {"perf": False})))


if __name__ == "__main__":
    unittest.main()
