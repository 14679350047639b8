"""Unit tests of tools/gpu-check and its package cudalab_grade.gpucheck (nothing is built or run
on a GPU)."""
from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock
from pathlib import Path

import fakegrades
from toolload import ROOT, load_tool

sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade.gpucheck import bench as gcbench  # noqa: E402
from cudalab_grade.gpucheck import classsteps as gcclass  # noqa: E402
from cudalab_grade.gpucheck import context as gcctx  # noqa: E402
from cudalab_grade.gpucheck import portability as gcport  # noqa: E402
from cudalab_grade.gpucheck import report as gcreport  # noqa: E402
from cudalab_grade.gpucheck import results as gcresults  # noqa: E402
from cudalab_grade.gpucheck import sanitize as gcsanitize  # noqa: E402
from cudalab_grade.gpucheck import state as gcstate  # noqa: E402
from cudalab_grade.gpucheck import steps as gcsteps  # noqa: E402

# The script (its options and main); its steps, report and helpers are in cudalab_grade.gpucheck.
gc = load_tool("gpu-check", "gpu_check")
make_class = load_tool("make-class", "cudalab_make_class_for_gpu_check")

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="host" tests="4" failures="1" disabled="0" skipped="1" hostname="" time="3">
  <testcase name="host/harness" classname="host/harness" time="0.1" status="run">
    <system-out>[  PASSED  ] 12 tests.</system-out>
  </testcase>
  <testcase name="01-reduce-scan-histogram/sum_atomic" classname="01-reduce-scan-histogram/sum_atomic" time="0.2" status="fail">
    <failure message="Failed"/>
    <system-out>cudalab: no CUDA device; GPU tests FAIL (CUDALAB_REQUIRE_GPU=1)
[  FAILED  ] ReduceSumAtomic.Int32Random/n0</system-out>
  </testcase>
  <testcase name="01-reduce-scan-histogram/sum_vectorized" classname="x" time="0" status="notrun">
    <skipped message="Disabled"/>
  </testcase>
  <testcase name="host/tools" classname="host/tools" time="1" status="run">
    <system-out>[  SKIPPED ] DataTest.Road (0 ms)</system-out>
  </testcase>
</testsuite>
"""


def grade_json(exercises: list[dict]) -> dict:
    return {"score": 0.0, "tests": [], "cudalab": {"implementation": "x", "exercises": exercises}}


def ex(id_, status, c, p, m, reason=""):
    return {"id": id_, "slug": f"s{id_}", "status": status, "correctness_points": c,
            "perf_points": p, "max_points": m, "reason": reason}


def fake_checker(path: Path) -> None:
    """A test program as remote_checker.cu runs one: it starts its runner under
    CUDALAB_RUNNER_PREFIX (output to CUDALAB_RUNNER_LOG) and ends with the runner's
    exit code 86 (compute-sanitizer's errors)."""
    runner = path.name.replace("_test_", "_runner_")
    path.write_text(f"""#!{sys.executable}
import json, os, subprocess, sys
prefix = json.loads(os.environ.get("CUDALAB_RUNNER_PREFIX", "[]"))
with open(os.environ.get("CUDALAB_RUNNER_LOG", os.devnull), "ab") as log:
    rc = subprocess.call(prefix + [{str(path.parent / runner)!r}, "--cudalab-runner-fd", "3"],
                         stdout=log, stderr=log)
print("[  PASSED  ] 2 tests.")
sys.exit(86 if rc == 86 else 0)
""")
    path.chmod(0o755)
    (path.parent / runner).write_text("#!/bin/sh\nexit 0\n")
    (path.parent / runner).chmod(0o755)


class JunitTest(unittest.TestCase):
    def test_counts(self):
        c = gcresults.parse_junit(JUNIT)
        self.assertEqual((c["total"], c["passed"], c["failed"], c["skipped"]), (4, 2, 1, 1))
        self.assertEqual(c["failed_names"], ["01-reduce-scan-histogram/sum_atomic"])
        self.assertEqual(c["skipped_names"], ["01-reduce-scan-histogram/sum_vectorized"])
        self.assertEqual(c["no_device"], ["01-reduce-scan-histogram/sum_atomic"])
        self.assertEqual(c["gtest_skips"], 1)

    def test_ctest_console_fallback(self):
        out = """
80% tests passed, 1 tests failed out of 5

The following tests did not run:
\t  3 - ch/sum_vectorized (Skipped)

The following tests FAILED:
\t  2 - ch/sum_atomic (Failed)
"""
        c = gcresults.parse_ctest_output(out)
        self.assertEqual((c["total"], c["failed"], c["skipped"], c["passed"]), (5, 1, 1, 3))
        self.assertEqual(c["failed_names"], ["ch/sum_atomic"])
        self.assertEqual(c["skipped_names"], ["ch/sum_vectorized"])
        self.assertEqual(gcresults.ctest_summary_line(out), "80% tests passed, 1 tests failed out of 5")
        self.assertIsNone(gcresults.parse_ctest_output("nothing here"))


class GradeEvaluationTest(unittest.TestCase):
    def test_solutions_full_marks_pass(self):
        data = grade_json([ex("1.1", "passed", 10, 2, 12), ex("1.2", "passed", 10, 5, 15)])
        r = gcresults.evaluate_solutions(data, {"1.1": 12, "1.2": 15})
        self.assertTrue(r["passed"], r["problems"])
        self.assertEqual((r["points"], r["max_points"], r["percent"]), (27, 27, 100.0))

    def test_solutions_lost_point_fails(self):
        data = grade_json([ex("1.1", "passed", 10, 1, 12, "ratio 0.4 < 0.5"), ex("1.2", "passed", 10, 5, 15)])
        r = gcresults.evaluate_solutions(data)
        self.assertFalse(r["passed"])
        self.assertEqual(len(r["problems"]), 1)
        self.assertIn("1.1", r["problems"][0])
        self.assertIn("11/12", r["problems"][0])

    def test_solutions_max_must_include_perf_and_every_exercise(self):
        data = grade_json([ex("1.1", "passed", 10, 0, 10)])
        r = gcresults.evaluate_solutions(data, {"1.1": 12, "1.2": 15})
        self.assertFalse(r["passed"])
        self.assertTrue(any("manifest" in p for p in r["problems"]))
        self.assertTrue(any(p.startswith("1.2: not in") for p in r["problems"]))

    def test_starter_zero_with_test_failures_passes(self):
        data = grade_json([ex("1.1", "failed", 0, 0, 10, "wrong sum"), ex("1.2", "tests_failed", 0, 0, 10)])
        r = gcresults.evaluate_starter(data, {"1.1": 12, "1.2": 15})
        self.assertTrue(r["passed"], r["problems"])
        self.assertEqual(r["points"], 0)

    def test_starter_points_or_bad_status_fail(self):
        for status in ("crashed", "timeout", "timed out", "grader_error", "grader error",
                       "compile_error", "build failed", "no_gpu", "passed"):
            with self.subTest(status=status):
                r = gcresults.evaluate_starter(grade_json([ex("1.1", status, 0, 0, 10)]))
                self.assertFalse(r["passed"])
        r = gcresults.evaluate_starter(grade_json([ex("1.1", "failed", 1, 0, 10)]))
        self.assertFalse(r["passed"])
        self.assertIn("got 1 points", r["problems"][0])

    def test_grader_json_shapes(self):
        with self.assertRaises(gcresults.GradeFormatError):
            gcresults.grade_exercises({"score": 1, "tests": []})
        with self.assertRaises(gcresults.GradeFormatError):
            gcresults.grade_exercises({"cudalab": {"exercises": []}})
        by_id = {"cudalab": {"exercises": {"1.1": {"status": "failed", "correctness_points": 0,
                                                     "perf_points": 0, "max_points": 10}}}}
        self.assertEqual(gcresults.grade_exercises(by_id)[0]["id"], "1.1")
        split = {"cudalab": {"exercises": [{"id": "1.1", "status": "passed", "correctness_points": 10,
                                            "perf_points": 2, "correctness_max": 10, "perf_max": 2}]}}
        self.assertEqual(gcresults.grade_exercises(split)[0]["max_points"], 12)


class StateTest(unittest.TestCase):
    def rec(self, step, status, summary=""):
        return {"step": step, "status": status, "seconds": 1.0, "summary": summary, "messages": [], "details": {}}

    def test_merge_replaces_and_orders(self):
        s = gcstate.merge_state(None, self.rec("bench", "failed"))
        s = gcstate.merge_state(s, self.rec("build", "passed"))
        s = gcstate.merge_state(s, self.rec("bench", "passed", "rerun"))
        self.assertEqual(list(s["steps"]), ["build", "bench"])
        self.assertEqual(s["steps"]["bench"]["summary"], "rerun")
        self.assertEqual(s["steps"]["bench"]["status"], "passed")

    def test_merge_does_not_mutate(self):
        s1 = gcstate.merge_state(None, self.rec("test", "failed"))
        gcstate.merge_state(s1, self.rec("test", "passed"))
        self.assertEqual(s1["steps"]["test"]["status"], "failed")

    def test_load_state(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "state.json"
            self.assertEqual(gcstate.load_state(p), gcstate.new_state())
            p.write_text("{broken")
            self.assertEqual(gcstate.load_state(p), gcstate.new_state())
            s = gcstate.merge_state(gcstate.merge_state(None, self.rec("grade", "passed")), self.rec("test", "failed"))
            p.write_text(json.dumps(s))
            self.assertEqual(list(gcstate.load_state(p)["steps"]), ["test", "grade"])

    def test_parse_steps(self):
        self.assertEqual(gcctx.parse_steps("bench,build"), ["build", "bench"])
        self.assertEqual(gcctx.parse_steps("build,test,profiles,grade,loop,redteam,partial,mutation,class,"
                                        "sanitize,bench,portability"), list(gcctx.STEPS))
        self.assertNotIn("loop", gcctx.DEFAULT_STEPS)       # minutes of gradings: only when asked
        self.assertEqual(gcctx.parse_steps("grade,profiles,test"), ["test", "profiles", "grade"])
        self.assertNotIn("mutation", gcctx.DEFAULT_STEPS)   # minutes of compiles: only when asked
        self.assertNotIn("class", gcctx.DEFAULT_STEPS)      # a class graded twice: only when asked
        self.assertIn("partial", gcctx.DEFAULT_STEPS)
        self.assertEqual(gcctx.parse_steps("portability,test"), ["test", "portability"])
        with self.assertRaises(ValueError):
            gcctx.parse_steps("build,deploy")

    def test_portability_commands(self):
        root = Path("/course")
        nvcc = "/usr/local/cuda/bin/nvcc"
        commands = [
            {"directory": "/course/b", "file": "/course/solutions/02-sorting/merge_sort_merge_path.cu",
             "command": f"{nvcc} -forward-unknown-to-host-compiler -I/course/chapters/common/include -O3 "
                        "--generate-code=arch=compute_90,code=[compute_90,sm_90] -Xcompiler=-Wall,-Wextra "
                        "-std=c++17 -x cu -c /course/solutions/02-sorting/merge_sort_merge_path.cu -o a.o"},
            {"directory": "/course/b", "file": "/course/starter/01-reduce-scan-histogram/sum_atomic.cu",
             "arguments": [nvcc, "-arch", "sm_90", "-diag-suppress=177", "-c",
                           "/course/starter/01-reduce-scan-histogram/sum_atomic.cu", "-o", "b.o"]},
            {"directory": "/course/b", "file": "/course/tests/host/harness_test.cu", "command": f"{nvcc} -c x"},
            {"directory": "/course/b", "file": "/elsewhere/solutions/x.cu", "command": f"{nvcc} -c x"},
        ]
        srcs = gcport.portability_sources(commands, root)
        self.assertEqual([s["file"] for s in srcs], ["solutions/02-sorting/merge_sort_merge_path.cu",
                                                     "starter/01-reduce-scan-histogram/sum_atomic.cu"])
        self.assertEqual(srcs[1]["argv"], [nvcc, "-diag-suppress=177", "-c",
                                           "/course/starter/01-reduce-scan-histogram/sum_atomic.cu"])
        argv = gcport.arch_argv(srcs[0]["argv"], "75", Path("/o/x.o"))
        self.assertEqual(argv[:2], [nvcc, "--generate-code=arch=compute_75,code=[compute_75,sm_75]"])
        self.assertEqual(argv[-2:], ["-o", "/o/x.o"])
        self.assertFalse(any("compute_90" in a for a in argv))
        self.assertIn("-Xcompiler=-Wall,-Wextra", argv)

    def test_compiler_probes(self):
        # A stand-in nvcc: --list-gpu-arch, --version, and -E of the probe (as nvcc prints
        # it: THRUST_VERSION's value on a line of its own, after a line marker).
        with tempfile.TemporaryDirectory() as d:
            nvcc = Path(d) / "nvcc"
            nvcc.write_text("#!/bin/sh\n"
                            "case \"$1\" in\n"
                            "--list-gpu-arch) printf 'compute_75\\ncompute_90\\ncompute_120\\n';;\n"
                            "--version) echo 'Cuda compilation tools, release 13.0, V13.0.88';;\n"
                            "-E) cat >/dev/null; printf 'cudalab_versions 12090 \\n# 3 \"x\" 3\\n  200802\\n';;\n"
                            "esac\n")
            nvcc.chmod(0o755)
            self.assertEqual(gcport.nvcc_archs(str(nvcc)), {"75", "90", "120"})
            self.assertEqual(gcport.toolkit_versions(str(nvcc)),
                             {"nvcc": "Cuda compilation tools, release 13.0, V13.0.88",
                              "cudart": "12.9", "cccl": "2.8.2"})
            nvcc.write_text("#!/bin/sh\nexit 1\n")
            self.assertIsNone(gcport.nvcc_archs(str(nvcc)))
            self.assertEqual(gcport.toolkit_versions(str(nvcc)), {})

    def test_count_diagnostics(self):
        out = "\n".join([
            "ptxas error   : Value of threads per SM for entry _Z1kv is out of range. .minnctapersm will be ignored",
            "ptxas fatal   : Ptx assembly aborted due to errors",
            "x.cu(264): warning #177-D: function \"f\" was declared but never referenced",
            "x.cu:3:5: warning: unused variable 'y' [-Wunused-variable]",
            "ptxas warning : Registers are spilled to local memory in function 'k'",
            "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"",
            "x.cu(12): error: identifier \"z\" is undefined"])
        self.assertEqual(gcport.count_diagnostics(out), (3, 3))
        self.assertEqual(gcport.count_diagnostics(""), (0, 0))
        self.assertEqual(gcctx.PORTABILITY_ARCHS, ("75", "80", "86", "89", "90", "100", "120"))

    def test_summary_table(self):
        s = gcstate.merge_state(None, self.rec("build", "passed", "built"))
        s = gcstate.merge_state(s, self.rec("test", "failed", "no CUDA device"))
        text = gcreport.summary_table(s, ["test"])
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith("step"))
        self.assertIn("passed (earlier)", lines[1])
        self.assertIn("no CUDA device", lines[2])
        self.assertIn("not run", lines[3])


class HelpersTest(unittest.TestCase):
    def test_sanitizer_summaries(self):
        out = ("[  PASSED  ] 3 tests.\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
               "========= ERROR SUMMARY: 0 errors\n")
        self.assertEqual(gcresults.sanitizer_summaries(out),
                         ["RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
                          "ERROR SUMMARY: 0 errors"])

    def test_expected_max_points_of_real_tree(self):
        expected = gcresults.expected_max_points(ROOT)
        self.assertTrue(expected)
        self.assertTrue(all(v > 0 for v in expected.values()))

    def test_commit_argument_wins(self):
        self.assertEqual(gcctx.resolve_commit("abc", ROOT), "abc")

    def test_state_from_an_earlier_report_joins_the_new_one(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            rec = lambda step, summary: {"step": step, "status": "passed", "seconds": 1.0,
                                         "summary": summary, "messages": [], "details": {}}
            earlier = {"steps": {"test": rec("test", "7/7"), "bench": rec("bench", "old")}}
            (d / "earlier.json").write_text(json.dumps(earlier))
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                rc = gc.main(["--out", str(d / "out"), "--steps", "bench", "--build-dir", str(d / "b"),
                              "--bench-repetitions", "1", "--state-from", str(d / "earlier.json")])
            self.assertEqual(rc, 1)  # nothing built here: the bench step fails
            rep = json.loads((d / "out" / "report.json").read_text())
            self.assertEqual(rep["steps"]["test"]["summary"], "7/7")   # kept from the earlier report
            self.assertNotEqual(rep["steps"]["bench"]["summary"], "old")  # rerun now replaces it
            self.assertIn("not run", rep["steps"]["bench"]["summary"])

    def test_bad_bench_options_are_usage_errors(self):
        for extra in (["--bench-repetitions", "0"], ["--bench-programs", "("], ["--sanitize-programs", "("], ["--bench-min-time", "0"]):
            with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as cm:
                gc.main(["--out", "/nonexistent/x", *extra])
            self.assertEqual(cm.exception.code, 2)

    def test_parse_chapters(self):
        self.assertEqual(gcctx.parse_chapters("", ROOT), [])
        self.assertEqual(gcctx.parse_chapters("4, 02-sorting,2", ROOT), ["02-sorting", "04-filtering-atomics"])
        with self.assertRaises(ValueError) as cm:
            gcctx.parse_chapters("99", ROOT)
        self.assertIn("1 (01-reduce-scan-histogram)", str(cm.exception))
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as cm:
            gc.main(["--out", "/nonexistent/x", "--chapters", "nope"])
        self.assertEqual(cm.exception.code, 2)

    def test_interrupted_bench_still_reports_the_finished_programs(self):
        # The first program writes its JSON; the run is stopped (SIGTERM) during the second.
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "b" / "bin").mkdir(parents=True)
            entries = []
            for name, us in (("sum_atomic/int32/16777216", 100.0), ("cub_sum/int32/16777216", 50.0)):
                for agg in ("mean", "median", "stddev"):
                    entries.append({"name": f"{name}/manual_time_{agg}", "run_name": f"{name}/manual_time",
                                    "run_type": "aggregate", "aggregate_name": agg, "repetitions": 3,
                                    "real_time": us, "cpu_time": us, "time_unit": "us", "iterations": 9,
                                    "bytes_per_second": 4 * 16777216 / (us * 1e-6)})
            first = d / "b" / "bin" / "sum_atomic_bench_solution"
            first.write_text(f"""#!{sys.executable}
import json, sys
out = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out=")][0]
open(out, "w").write(json.dumps({{"context": {{"commit": "abc"}}, "benchmarks": {entries!r}}}))
""")
            first.chmod(0o755)
            second = d / "b" / "bin" / "sum_shared_tree_bench_solution"
            second.write_text(first.read_text())
            second.chmod(0o755)
            ctx = gcctx.Context(ROOT, d / "b", 2, "abc", None)
            ctx.work = d / "work"
            ctx.logs = ctx.work / "logs"
            real_run = gcctx.Context.run

            def run(ctx_, argv, log, env=None, timeout=None):
                if "sum_shared_tree" in argv[0]:
                    raise gcctx.Interrupted()
                return real_run(ctx_, argv, log, env, timeout)
            rec = {"step": "bench", "messages": [], "details": {}, "summary": "", "status": "failed"}
            with contextlib.redirect_stdout(io.StringIO()), mock.patch.object(gcctx.Context, "run", run), \
                    self.assertRaises(gcctx.Interrupted):
                gcbench.step_bench(ctx, rec, lambda: None, {"gpu_present": True})
            self.assertEqual(rec["details"]["interrupted_after"], "1 of 2 programs")
            self.assertIn("interrupted after 1 of 2 programs", rec["summary"])
            reports = rec["details"]["reports"]
            self.assertEqual([r["name"] for r in reports], ["01-reduce-scan-histogram"])
            self.assertGreater(reports[0]["rows"], 0)
            table = (ctx.work / "results" / reports[0]["markdown"]).read_text()
            self.assertIn("sum_atomic", table)

    def test_sanitize_runs_in_parallel_within_the_chapters(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "b" / "bin").mkdir(parents=True)
            for slug in ("merge_sort_merge_path", "bitonic_sort_shared", "sum_atomic"):
                fake_checker(d / "b" / "bin" / f"{slug}_test_solution")
            (d / "tools").mkdir()
            trace = d / "trace"
            san = d / "tools" / "compute-sanitizer"
            san.write_text(f"""#!{sys.executable}
import os, sys, time
with open({str(trace)!r}, "a") as f:
    f.write(f"start {{time.time()}} {{sys.argv[sys.argv.index('--cudalab-runner-fd') - 1]}} {{sys.argv[sys.argv.index('--tool') + 1]}} {{os.environ['CUDALAB_MAX_N']}}\\n")
time.sleep(0.4)
with open({str(trace)!r}, "a") as f:
    f.write(f"end {{time.time()}}\\n")
print("[  PASSED  ] 3 tests.")
print("========= ERROR SUMMARY: 0 errors")
""")
            san.chmod(0o755)
            ctx = gcctx.Context(ROOT, d / "b", 2, "abc", None)
            ctx.env["PATH"] = f"{d / 'tools'}:{ctx.env.get('PATH', '')}"
            ctx.parallel, ctx.chapters = 4, ["02-sorting"]
            rec = {"step": "sanitize", "messages": [], "details": {}, "summary": "", "status": "failed"}
            with contextlib.redirect_stdout(io.StringIO()):
                gcsanitize.step_sanitize(ctx, rec, lambda: None, {"gpu_present": True})
            self.assertEqual(rec["status"], "passed", rec["messages"])
            self.assertEqual([(r["program"], r["tool"]) for r in rec["details"]["runs"]],
                             [("bitonic_sort_shared_test_solution", "memcheck"),
                              ("bitonic_sort_shared_test_solution", "racecheck"),
                              ("merge_sort_merge_path_test_solution", "memcheck"),
                              ("merge_sort_merge_path_test_solution", "racecheck")])
            self.assertIn("4/4 clean", rec["summary"])
            self.assertIn("chapters 02-sorting", rec["summary"])
            events = sorted((float(line.split()[1]), line.split()[0]) for line in trace.read_text().splitlines())
            running = peak = 0
            for _, kind in events:
                running += 1 if kind == "start" else -1
                peak = max(peak, running)
            self.assertGreater(peak, 1)  # runs overlapped
            self.assertNotIn("sum_atomic", trace.read_text())
            caps = {line.split()[3]: line.split()[4] for line in trace.read_text().splitlines()
                    if line.startswith("start")}
            self.assertEqual(caps, {"memcheck": "4194304", "racecheck": "262144"})

    def test_racecheck_runs_in_shards_and_a_failing_shard_fails_the_program(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            (d / "b" / "bin").mkdir(parents=True)
            fake_checker(d / "b" / "bin" / "build_large_nodes_test_solution")
            (d / "tools").mkdir()
            trace = d / "trace"
            san = d / "tools" / "compute-sanitizer"
            # Shard 2 of 3 of racecheck finds a hazard; everything else is clean.
            san.write_text(f"""#!{sys.executable}
import os, sys
tool, shard = sys.argv[sys.argv.index("--tool") + 1], os.environ.get("GTEST_SHARD_INDEX", "-")
with open({str(trace)!r}, "a") as f:
    f.write(f"{{tool}} {{os.environ.get('GTEST_TOTAL_SHARDS', '-')}} {{shard}}\\n")
print("[  PASSED  ] 2 tests.")
if tool == "racecheck" and shard == "1":
    print("========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)")
    sys.exit(86)
print("========= ERROR SUMMARY: 0 errors")
""")
            san.chmod(0o755)
            ctx = gcctx.Context(ROOT, d / "b", 2, "abc", None)
            ctx.env["PATH"] = f"{d / 'tools'}:{ctx.env.get('PATH', '')}"
            ctx.parallel, ctx.racecheck_shards = 4, 3
            rec = {"step": "sanitize", "messages": [], "details": {}, "summary": "", "status": "passed"}
            with contextlib.redirect_stdout(io.StringIO()):
                gcsanitize.step_sanitize(ctx, rec, lambda: None, {"gpu_present": True})
            self.assertEqual(sorted(trace.read_text().split("\n")[:-1]),
                             ["memcheck - -", "racecheck 3 0", "racecheck 3 1", "racecheck 3 2"])
            runs = rec["details"]["runs"]
            self.assertEqual([(r["tool"], r["passed"], r.get("shards", 1)) for r in runs],
                             [("memcheck", True, 1), ("racecheck", False, 3)])
            self.assertEqual(runs[1]["rc"], 86)
            self.assertEqual(rec["status"], "failed")
            self.assertIn("1/2 clean", rec["summary"])
            self.assertEqual(len(rec["messages"]), 1)
            self.assertIn("racecheck (shard 2 of 3): sanitizer errors", rec["messages"][0])
            self.assertEqual(rec["details"]["racecheck_shards"], 3)

    def test_starter_only_mode_is_automatic_without_solutions(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            self.assertEqual(gcctx.starter_only_reason(d, False), gcctx.NO_SOLUTIONS)
            self.assertEqual(gcctx.starter_only_reason(d, True), gcctx.NO_SOLUTIONS)
            (d / "solutions").mkdir()
            self.assertIsNone(gcctx.starter_only_reason(d, False))
            self.assertEqual(gcctx.starter_only_reason(d, True), "--starter-only")
        self.assertIsNone(gcctx.starter_only_reason(ROOT, False))

    def test_starter_only_grades_the_starter_and_skips_redteam_sanitize_bench(self):
        # A tree without solutions/ (the student edition), as main sees it: the grader
        # is faked (the untouched starter: 0 points, every exercise a test failure).
        calls = []

        def run(ctx_, argv, log, env=None, timeout=None):
            calls.append(argv)
            if "--json" in argv:
                Path(argv[argv.index("--json") + 1]).write_text(json.dumps(grade_json(
                    [ex(i, "failed", 0, 0, m, "wrong answer") for i, m in expected.items()])))
            return 1, "", 0.1
        expected = gcresults.expected_max_points(ROOT)
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            with contextlib.redirect_stdout(io.StringIO()), mock.patch.object(gcctx.Context, "run", run), \
                    mock.patch.object(gc, "starter_only_reason", lambda root, flag: gcctx.NO_SOLUTIONS):
                rc = gc.main(["--out", str(d / "out"), "--steps", "grade,redteam,sanitize,bench",
                              "--build-dir", str(d / "b")])
            rep = json.loads((d / "out" / "report.json").read_text())
            md = (d / "out" / "report.md").read_text()
        self.assertEqual(rc, 0, rep["steps"])
        self.assertEqual(len(calls), 1)  # the starter only
        self.assertNotIn("--solutions", calls[0])
        self.assertNotIn("--perf", calls[0])
        self.assertIn("--fail-fast", calls[0])  # every exercise must fail: its first failure says so
        self.assertEqual((rep["mode"], rep["starter_only"]), ("starter-only", gcctx.NO_SOLUTIONS))
        self.assertTrue(rep["invocation"]["passed"])
        grade = rep["steps"]["grade"]
        self.assertEqual(grade["status"], "passed", grade["messages"])
        self.assertNotIn("solutions", grade["details"])
        self.assertEqual(grade["details"]["starter"]["points"], 0)
        self.assertIn("starter 0/", grade["summary"])
        for step in ("redteam", "sanitize", "bench"):
            r = rep["steps"][step]
            self.assertEqual((r["status"], r["summary"]), ("skipped", "skipped: no solutions in this tree"))
            self.assertIn("starter-only mode", r["messages"][0])
        self.assertIn("- Mode: starter only (no solutions in this tree)", md)
        self.assertIn("| sanitize | skipped |", md)

    def test_starter_only_flag_and_a_starter_that_scores_fails(self):
        def run(ctx_, argv, log, env=None, timeout=None):
            Path(argv[argv.index("--json") + 1]).write_text(json.dumps(grade_json(
                [ex("1.1", "passed", 10, 0, 10)])))
            return 0, "", 0.1
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            with contextlib.redirect_stdout(io.StringIO()), mock.patch.object(gcctx.Context, "run", run):
                rc = gc.main(["--out", str(d / "out"), "--steps", "grade,bench", "--build-dir", str(d / "b"),
                              "--starter-only"])
            rep = json.loads((d / "out" / "report.json").read_text())
        self.assertEqual(rc, 1)
        self.assertEqual(rep["starter_only"], "--starter-only")
        self.assertEqual(rep["steps"]["grade"]["status"], "failed")
        self.assertEqual(rep["steps"]["bench"]["summary"], "skipped: --starter-only")

    def test_full_mode_report_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            with contextlib.redirect_stdout(io.StringIO()):
                gc.main(["--out", str(d / "out"), "--steps", "bench", "--build-dir", str(d / "b")])
            rep = json.loads((d / "out" / "report.json").read_text())
            self.assertEqual((rep["mode"], rep["starter_only"]), ("full", None))
            self.assertNotIn("Mode: starter only", (d / "out" / "report.md").read_text())

    def test_parse_profiles(self):
        self.assertEqual(gcctx.parse_profiles("h100,t4"), ["t4", "h100"])  # the table's order
        self.assertEqual(gcctx.parse_profiles(" T4 , a100 "), ["t4", "a100"])
        self.assertEqual(gcctx.parse_profiles("all"), list(gcctx.DEVICE_PROFILES))
        self.assertEqual(gcctx.parse_profiles(",".join(gcctx.DEFAULT_PROFILES)), ["t4", "h100"])
        for bad in ("v100", "t4,h200", "", "all,t4"):
            with self.assertRaises(ValueError):
                gcctx.parse_profiles(bad)

    def test_device_profiles_match_device_cuh(self):
        text = (ROOT / "chapters" / "common" / "include" / "cudalab" / "device.cuh").read_text()
        import re
        names = re.findall(r'^\s*\{"([a-z0-9]+)", "NVIDIA', text, re.M)
        self.assertEqual(sorted(names), sorted(gcctx.DEVICE_PROFILES))

    def test_evaluate_profile_solutions(self):
        good = gcresults.evaluate_profile_solutions(grade_json([
            dict(ex("2.7", "passed", 10, 0, 15), correctness_max_points=10),
            dict(ex("2.4", "passed", 5, 0, 5), correctness_max_points=5)]))
        self.assertTrue(good["passed"])
        self.assertEqual((good["points"], good["max_points"]), (15, 15))
        bad = gcresults.evaluate_profile_solutions(grade_json([
            dict(ex("2.7", "failed", 0, 0, 15, "DeviceLimitError: the launch of block_sort_kernel"),
                 correctness_max_points=10),
            ex("2.4", "passed", 5, 0, 5)]))
        self.assertFalse(bad["passed"])
        self.assertEqual((bad["points"], bad["max_points"]), (5, 15))
        self.assertIn("DeviceLimitError", bad["problems"][0])

    def test_profiles_table_and_report(self):
        per = {"t4": {"passed": True, "counts": {"passed": 40, "total": 40},
                      "solutions": {"points": 100, "max_points": 100}, "starter": {"points": 0}},
               "h100": {"passed": False, "counts": None, "solutions": {}, "starter": {"points": 0}}}
        lines = gcreport.profiles_table(per)
        self.assertEqual(lines[2], "| t4 | 40/40 | 100/100 | 0 | ok |")
        self.assertEqual(lines[3], "| h100 | — | error | 0 | FAILED |")
        rec = {"step": "profiles", "status": "passed", "seconds": 1.0, "summary": "1/1 profiles clean (t4)",
               "messages": [], "details": {"per_profile": {"t4": per["t4"]}}}
        rep = gcreport.report_json({"steps": {"profiles": rec}}, {"gpus": ["H100"]}, "abc", ["profiles"], "now")
        md = gcreport.report_markdown(rep, Path("/nonexistent"))
        self.assertIn("## profiles: passed", md)
        self.assertIn("| t4 | 40/40 | 100/100 | 0 | ok |", md)

    def test_portability_report_names_the_compiler_and_headers(self):
        rec = {"step": "portability", "status": "passed", "seconds": 60.0,
               "summary": "2 files x 2 architectures: 0 warnings, 0 errors", "messages": [],
               "details": {"archs": {"75": {"files": 2, "compiled": 2, "warnings": 0, "errors": 0},
                                     "90": {"files": 2, "compiled": 2, "warnings": 0, "errors": 0}},
                           "compiler": "/opt/cuda12.9/toolkit/bin/nvcc", "unsupported_archs": ["120"],
                           "toolkit": {"nvcc": "release 13.0", "cudart": "12.9", "cccl": "2.8.2"}}}
        rep = gcreport.report_json({"steps": {"portability": rec}}, {"gpus": []}, "abc", ["portability"], "now")
        md = gcreport.report_markdown(rep, Path("/nonexistent"))
        self.assertIn("(/opt/cuda12.9/toolkit/bin/nvcc, release 13.0, CUDA runtime headers 12.9, CCCL 2.8.2)", md)
        self.assertIn("Not supported by this compiler, left out: sm_120.", md)
        self.assertIn("| sm_90 | 2 | 2 | 0 | 0 |", md)

    def test_nvcc_and_archs_options(self):
        with tempfile.TemporaryDirectory() as d, contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(SystemExit):
                gc.main(["--out", d, "--steps", "portability", "--archs", "sm_9x"])
            with self.assertRaises(SystemExit):
                gc.main(["--out", d, "--steps", "portability", "--nvcc", str(Path(d) / "no-nvcc")])

    def test_profiles_step_without_gpu(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            ctx = gcctx.Context(ROOT, d / "b", 1, "abc", None)
            rec = {"status": "failed", "summary": "", "messages": [], "details": {}}
            gcsteps.step_profiles(ctx, rec, lambda: None, {"gpu_present": False})
            self.assertEqual(rec["status"], "failed")
            self.assertEqual(rec["details"]["profiles"], list(gcctx.DEFAULT_PROFILES))
            self.assertIn(gcctx.NO_DEVICE, rec["summary"])

    @staticmethod
    def configured_ctx(d: Path) -> "gcctx.Context":
        """A Context whose build folder d/b looks configured (the profiles step checks it)."""
        (d / "b").mkdir()
        (d / "b" / "CTestTestfile.cmake").write_text("")
        return gcctx.Context(ROOT, d / "b", 1, "abc", None)

    def run_profiles_step(self, profile_ctest: bool, solution_status: str = "passed"):
        with tempfile.TemporaryDirectory() as d:
            ctx = self.configured_ctx(Path(d))
            ctx.profiles = ["t4"]
            ctx.profile_ctest = profile_ctest
            calls = []

            def fake_run(ctx_, argv, log, env=None, timeout=None):
                calls.append((argv, (env or {}).get("CUDALAB_DEVICE_PROFILE")))
                if argv[0] == "ctest":
                    Path(argv[argv.index("--output-junit") + 1]).write_text(JUNIT)
                    return 0, "", 1.0
                out = Path(argv[argv.index("--json") + 1])
                solutions = "--solutions" in argv
                status = solution_status if solutions else "failed"
                points = 10 if status == "passed" else 0
                out.write_text(json.dumps(grade_json([ex("2.7", status, points, 0, 10),
                                                      ex("2.6", "passed" if solutions else "failed",
                                                         10 if solutions else 0, 0, 10)])))
                return (0 if solutions else 1), "", 1.0
            rec = {"status": "failed", "summary": "", "messages": [], "details": {}}
            with mock.patch.object(gcctx.Context, "run", fake_run):
                gcsteps.step_profiles(ctx, rec, lambda: None, {"gpu_present": True})
            return calls, rec

    def test_profiles_step_sets_the_profile_for_the_grader(self):
        calls, rec = self.run_profiles_step(profile_ctest=False)
        self.assertEqual([c[1] for c in calls], ["t4", "t4"])
        self.assertNotIn("ctest", [c[0][0] for c in calls])  # the grading runs every test program
        self.assertIn("--fast", calls[0][0])
        self.assertIn("--solutions", calls[0][0])
        self.assertNotIn("--solutions", calls[1][0])
        per = rec["details"]["per_profile"]["t4"]
        self.assertEqual(per["solutions"]["points"], 20)
        self.assertEqual(per["starter"]["points"], 0)
        self.assertEqual((per["counts"]["total"], per["counts"]["passed"], per["counts"]["source"]),
                         (2, 2, "grade"))
        self.assertTrue(per["passed"], per["problems"])
        self.assertEqual(rec["status"], "passed")
        self.assertIn("2/2 (graded)", "\n".join(gcreport.profiles_table(rec["details"]["per_profile"])))

    def test_profiles_step_fails_when_a_solution_fails_under_the_profile(self):
        calls, rec = self.run_profiles_step(profile_ctest=False, solution_status="failed")
        per = rec["details"]["per_profile"]["t4"]
        self.assertEqual((per["counts"]["passed"], per["counts"]["failed"]), (1, 1))
        self.assertFalse(per["passed"])
        self.assertEqual(rec["status"], "failed")
        self.assertTrue(any("2.7" in m for m in rec["messages"]), rec["messages"])

    def test_profiles_step_with_ctest_runs_every_test_program_first(self):
        calls, rec = self.run_profiles_step(profile_ctest=True)
        self.assertEqual([c[1] for c in calls], ["t4", "t4", "t4"])
        self.assertEqual(calls[0][0][0], "ctest")
        self.assertIn("-E", calls[0][0])  # the host tests need no profile
        per = rec["details"]["per_profile"]["t4"]
        self.assertNotEqual(per["counts"].get("source"), "grade")
        self.assertFalse(per["passed"])  # the JUNIT fixture has a failed test program
        self.assertTrue(any("tests failed" in m for m in rec["messages"]), rec["messages"])

    def test_profiles_step_runs_one_profile_per_gpu_at_a_time(self):
        with tempfile.TemporaryDirectory() as d:
            ctx = self.configured_ctx(Path(d))
            ctx.gpus = ["0", "1"]  # gpu-check's context.gpu_slots
            ctx.profiles = ["t4", "a100", "rtx3090", "h100"]
            seen, busy, lock = [], {}, threading.Lock()

            def fake_run(ctx_, argv, log, env=None, timeout=None):
                env = env or {}
                gpu, prof = env.get("CUDA_VISIBLE_DEVICES"), env.get("CUDALAB_DEVICE_PROFILE")
                with lock:
                    self.assertNotIn(gpu, [g for g, who in busy.items() if who and who != prof])
                    busy[gpu] = prof
                    seen.append((prof, gpu))
                time.sleep(0.02)
                if argv[0] == "ctest":
                    Path(argv[argv.index("--output-junit") + 1]).write_text(JUNIT.replace(
                        'failures="1"', 'failures="0"'))
                    rc = 0
                else:
                    solutions = "--solutions" in argv
                    Path(argv[argv.index("--json") + 1]).write_text(json.dumps(grade_json(
                        [ex("2.7", "passed" if solutions else "failed", 10 if solutions else 0, 0, 10)])))
                    rc = 0 if solutions else 1
                with lock:
                    if "--solutions" not in argv and argv[0] != "ctest":
                        busy[gpu] = None  # the starter is the profile's last run
                return rc, "", 1.0
            rec = {"status": "failed", "summary": "", "messages": [], "details": {}}
            with mock.patch.object(gcctx.Context, "run", fake_run):
                gcsteps.step_profiles(ctx, rec, lambda: None, {"gpu_present": True, "gpus": ["H100", "H100"]})
            self.assertEqual(rec["details"]["gpus_used"], 2)
            for prof in ctx.profiles:
                self.assertEqual(rec["details"]["per_profile"][prof]["solutions"]["points"], 10)
            by_profile = {}
            for prof, gpu in seen:
                by_profile.setdefault(prof, set()).add(gpu)
            self.assertEqual(sorted(by_profile), sorted(ctx.profiles))
            for prof, gpus in by_profile.items():  # each profile's runs stay on one GPU
                self.assertEqual(len(gpus), 1, prof)
                self.assertTrue(gpus <= {"0", "1"}, gpus)
            self.assertEqual(list(rec["details"]["per_profile"]), ctx.profiles)  # the table's order

    def test_class_gradings_spread_over_every_gpu(self):
        ctx = gcctx.Context(ROOT, ROOT / "build", 1, "abc", None)
        ctx.parallel = 3
        flags = gcclass.graded_flags(ctx, Path("/s"), 30)
        self.assertNotIn("--gpus", flags)  # one GPU: the grader's default
        ctx.gpus = ["0", "1", "2", "3"]
        flags = gcclass.graded_flags(ctx, Path("/s"), 30)
        self.assertEqual(flags[flags.index("--gpus") + 1], "0,1,2,3")
        self.assertEqual(flags[flags.index("--per-gpu") + 1], "3")

    def test_profile_perf_ids_and_auto(self):
        self.assertEqual(gcctx.parse_profile_perf("", ROOT), [])
        self.assertEqual(gcctx.parse_profile_perf("2.7, 2.4", ROOT), ["2.7", "2.4"])
        auto = gcctx.parse_profile_perf("auto", ROOT)
        self.assertIn("2.7", auto)  # its launch reads cudalab/device.cuh
        self.assertIn("2.4", auto)
        self.assertNotIn("1.1", auto)  # a plain grid-stride launch
        with self.assertRaises(ValueError):
            gcctx.parse_profile_perf("2.7,9.9", ROOT)

    def test_profiles_step_grades_speed_under_each_profile(self):
        with tempfile.TemporaryDirectory() as d:
            ctx = self.configured_ctx(Path(d))
            ctx.profiles, ctx.profile_perf = ["t4", "h100"], ["2.7"]
            calls = []

            def fake_run(ctx_, argv, log, env=None, timeout=None):
                prof = (env or {}).get("CUDALAB_DEVICE_PROFILE")
                calls.append((argv, prof))
                out = Path(argv[argv.index("--json") + 1])
                solutions = "--solutions" in argv
                data = grade_json([ex("2.7", "passed" if solutions else "failed", 10 if solutions else 0, 0, 10)])
                if "--perf" in argv:
                    ratio = 0.6 if prof == "t4" else 1.1
                    data["cudalab"]["exercises"] = [{"id": "2.7", "slug": "merge_sort_merge_path",
                                                     "status": "passed", "ratio": ratio,
                                                     "ratio_interval": [ratio - 0.05, ratio + 0.05],
                                                     "perf_points": 0 if prof == "t4" else 2}]
                out.write_text(json.dumps(data))
                return (0 if solutions else 1), "", 1.0
            rec = {"status": "failed", "summary": "", "messages": [], "details": {}}
            with mock.patch.object(gcctx.Context, "run", fake_run):
                gcsteps.step_profiles(ctx, rec, lambda: None, {"gpu_present": True})
            perf_calls = [c for c in calls if "--perf" in c[0]]
            self.assertEqual(sorted(c[1] for c in perf_calls), ["h100", "t4"])
            self.assertEqual(perf_calls[0][0][2], "2.7")  # only the listed exercises
            per = rec["details"]["per_profile"]
            self.assertEqual(per["t4"]["perf"]["2.7"]["ratio"], 0.6)
            self.assertEqual(rec["status"], "passed")  # a missed target under a profile is recorded
            table = "\n".join(gcreport.profiles_perf_table(per))
            self.assertIn("| exercise | t4 | h100 |", table)
            self.assertIn("| 2.7 merge_sort_merge_path | 0.6 (0.55–0.65) | 1.1 (1.05–1.15) * |", table)
        self.assertEqual(gcreport.profiles_perf_table({"t4": {}}), [])

    def test_gpu_slots(self):
        ctx = gcctx.Context(ROOT, ROOT / "build", 1, "abc", None)
        ctx.env = dict(ctx.env, CUDA_VISIBLE_DEVICES="2,3")
        self.assertEqual(gcctx.gpu_slots(ctx, {"gpus": ["a"] * 4}), ["2", "3"])
        ctx.env.pop("CUDA_VISIBLE_DEVICES")
        self.assertEqual(gcctx.gpu_slots(ctx, {"gpus": ["a"] * 3}), ["0", "1", "2"])
        self.assertEqual(gcctx.gpu_slots(ctx, {"gpus": []}), [])

    def test_bad_profile_is_a_usage_error(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as cm:
            gc.main(["--out", "/nonexistent/x", "--steps", "profiles", "--profiles", "v100"])
        self.assertEqual(cm.exception.code, 2)
    def fake_class_tools(self, calls: list, partial_verdicts: dict | None = None,
                         mutation: dict | None = None):
        """A run() that fakes tools/mutate and tools/grade as the partial and mutation steps
        call them: --partial-starters / --write write their listing, --score its report."""
        def run(ctx_, argv, log, env=None, timeout=None):
            calls.append(argv)
            tool = Path(argv[1]).name
            if tool == "mutate" and "--partial-starters" in argv:
                dest = Path(argv[argv.index("--partial-starters") + 1])
                dest.mkdir(parents=True)
                (dest.parent / f"{dest.name}.partial.json").write_text(json.dumps({"partials": {
                    "1.8-partial-R1": {"exercise": "1.8"}, "5.3-partial-R2": {"exercise": "5.3"}}}))
            elif tool == "mutate" and "--write" in argv:
                dest = Path(argv[argv.index("--write") + 1])
                dest.mkdir(parents=True)
                (dest.parent / f"{dest.name}.mutants.json").write_text(json.dumps({"mutants": {
                    "1.2-cmp_flip-L3-1": {"exercise": "1.2"}}}))
            elif tool == "mutate" and "--score" in argv:
                report = argv[argv.index("--report") + 1]
                Path(report).parent.mkdir(parents=True, exist_ok=True)
                if "--partials" in argv:
                    rows = [{"id": i, "verdict": v} for i, v in (partial_verdicts or {}).items()]
                    counts = {k: sum(1 for r in rows if r["verdict"] == k)
                              for k in ("fails", "does not compile", "PASSES", "not graded")}
                    data = {"total": len(rows), "counts": counts, "partials": rows,
                            "passed": counts["fails"] + counts["does not compile"] == len(rows),
                            "problems": [f"{r['id']}: passes" for r in rows if r["verdict"] == "PASSES"]}
                else:
                    data = mutation
                Path(f"{report}.json").write_text(json.dumps(data))
                Path(f"{report}.md").write_text("# Report\n\n| x |\n")
            return 0, "", 0.1
        return run

    def run_class_steps(self, steps: str, run, *extra: str) -> dict:
        env = {"gpus": ["H100"], "gpu_present": True, "nvcc": "13.0"}
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            with contextlib.redirect_stdout(io.StringIO()), mock.patch.object(gcctx.Context, "run", run), \
                    mock.patch.object(gc, "environment", lambda ctx: env):
                rc = gc.main(["--out", str(d / "out"), "--steps", steps, "--build-dir", str(d / "b"),
                              "--jobs", "16", "--parallel", "6", *extra])
            rep = json.loads((d / "out" / "report.json").read_text())
            rep["rc"], rep["md"] = rc, (d / "out" / "report.md").read_text()
        return rep

    def test_loop_step_times_the_students_gradings_both_ways(self):
        # tools/grade faked: 1.1 --fast takes 3 s with the programs at once, 5 s one at a time;
        # its trace lines reach the table; one default grading fails and fails the step
        calls: list = []

        def run(ctx_, argv, log, env=None, timeout=None):
            calls.append((argv, dict(env or {})))
            ex, fast = argv[2], "--fast" in argv
            at_once = (env or {}).get("CUDALAB_EXERCISE_JOBS") != "1"
            status = "failed" if (ex == "7.6" and at_once and not fast) else "passed"
            out_json = Path(argv[argv.index("--json") + 1])
            out_json.parent.mkdir(parents=True, exist_ok=True)
            out_json.write_text(json.dumps({"cudalab": {"exercises": [
                {"id": ex, "status": status, "reason": "all 9 tests passed" if status == "passed" else "1 of 9 failed"}]}}))
            secs = (3.0 if at_once else 5.0) if fast else 30.0
            return 0, "grade trace: test program x: 1.500 s\nboard\n", secs
        rep = self.run_class_steps("loop", run)
        r = rep["steps"]["loop"]
        self.assertEqual(r["status"], "failed")  # 7.6's default grading at once did not pass
        self.assertIn("1.1 --fast: 3.00 s (one program at a time 5.00 s)", r["summary"])
        self.assertIn("7.6 default at once: failed (1 of 9 failed)", r["messages"])
        graded = [a for a, _ in calls]
        self.assertEqual(sum(1 for a in graded if a[2] == "1.1" and "--fast" in a), 1 + 2 * 3)  # warm-up, 3 + 3
        self.assertEqual(sorted({a[2] for a in graded if "--fast" not in a}), ["1.1", "2.7", "7.6"])
        self.assertTrue(all(e.get("CUDALAB_GRADE_TRACE") == "1" for _, e in calls))
        self.assertTrue(all("--solutions" in a and "--build-dir" in a and "--no-build" not in a for a in graded))
        self.assertIn("| 1.1 | --fast | one at a time | 3 | 5.00 | 5.00-5.00 | passed: all 9 tests passed |", rep["md"])
        self.assertIn("test program x: 1.500 s", rep["md"])

    def test_partial_step_grades_the_class_fast_and_needs_every_one_to_fail(self):
        calls: list = []
        rep = self.run_class_steps("partial", self.fake_class_tools(
            calls, {"1.8-partial-R1": "fails", "5.3-partial-R2": "does not compile"}))
        self.assertEqual(rep["rc"], 0, rep["steps"])
        r = rep["steps"]["partial"]
        self.assertEqual(r["status"], "passed")
        self.assertIn("1/2 partial starters fail their tests, 1 do not compile", r["summary"])
        write, prepare, grade, score = calls
        self.assertIn("--partial-starters", write)
        self.assertEqual(write[-1], "all")
        self.assertEqual(prepare[2:4], ["1.8", "5.3"])      # only the exercises in the class
        self.assertIn("--prepare-only", prepare)
        for flag, value in (("--per-gpu", "6"), ("--jobs", "16"), ("--timeout", "120")):
            self.assertEqual(grade[grade.index(flag) + 1], value)
        self.assertIn("--fast", grade)                      # tests only
        self.assertIn("--shared-build", grade)
        self.assertIn("--partials", score)
        self.assertIn("## partial: passed", rep["md"])
        calls.clear()
        rep = self.run_class_steps("partial", self.fake_class_tools(
            calls, {"1.8-partial-R1": "PASSES", "5.3-partial-R2": "fails"}), "--chapters", "1")
        self.assertEqual(rep["rc"], 1)
        self.assertEqual(rep["steps"]["partial"]["status"], "failed")
        self.assertIn("1.8-partial-R1: passes", rep["steps"]["partial"]["messages"])
        self.assertEqual(calls[0][-1], "01-reduce-scan-histogram")

    def test_mutation_step_writes_grades_with_the_quick_pass_and_scores(self):
        calls: list = []
        mutation = {"score": 0.5, "killed": 1, "counted": 2, "exercises": {"1.2": {
            "killed_by_sanitizer": 1, "did_not_compile": [], "not_graded": [],
            "equivalent_but_killed": [],
            "survived": [{"id": "1.2-cmp_flip-L3-1", "what": "< for <="}]}}}
        rep = self.run_class_steps("mutation", self.fake_class_tools(calls, mutation=mutation),
                                   "--max-per-exercise", "2", "--mutation-seed", "5",
                                   "--class-timeout", "60")
        self.assertEqual(rep["rc"], 0, rep["steps"])
        r = rep["steps"]["mutation"]
        self.assertEqual(r["status"], "passed")   # survivors are figures, not failures
        self.assertIn("mutation score 50.0 % (1 of 2 killed, 1 only by the sanitizer; 1 survived)",
                      r["summary"])
        self.assertIn("survived: 1.2-cmp_flip-L3-1 (< for <=)", r["messages"])
        write, prepare, grade, score = calls
        self.assertEqual(write[write.index("--max-per-exercise") + 1], "2")
        self.assertEqual(write[write.index("--seed") + 1], "5")
        self.assertNotIn("--fast", grade)                   # tests and the quick sanitizer pass
        self.assertEqual(grade[grade.index("--timeout") + 1], "60")
        self.assertIn("--mutants", score)
        mutation["exercises"]["1.2"]["not_graded"] = [{"id": "1.2-cmp_flip-L3-1"}]
        calls.clear()
        rep = self.run_class_steps("mutation", self.fake_class_tools(calls, mutation=mutation),
                                   "--max-per-exercise", "0")
        self.assertEqual(rep["steps"]["mutation"]["status"], "failed")
        self.assertNotIn("--max-per-exercise", calls[0])    # 0: every mutant
        # a mutant the source check refused (the warp-mask rule) is killed, and said so
        mutation["exercises"]["1.2"].update(not_graded=[], killed_by_check=1)
        rep = self.run_class_steps("mutation", self.fake_class_tools([], mutation=mutation))
        self.assertIn("killed, 1 only by the sanitizer, 1 by the source check; 1 survived",
                      rep["steps"]["mutation"]["summary"])
        self.assertEqual(rep["steps"]["mutation"]["details"]["killed_by_source_check"], 1)

    def test_class_budget_stops_the_grading_in_time_and_still_scores(self):
        calls: list = []
        timeouts: list = []
        mutation = {"score": 0.0, "killed": 0, "counted": 0, "exercises": {"1.2": {
            "killed_by_sanitizer": 0, "did_not_compile": [], "survived": [],
            "equivalent_but_killed": [], "not_graded": [{"id": "1.2-cmp_flip-L3-1"}]}}}
        fake = self.fake_class_tools(calls, mutation=mutation)

        def run(ctx_, argv, log, env=None, timeout=None):
            if Path(argv[1]).name == "grade" and "--prepare-only" not in argv:
                timeouts.append(timeout)
                calls.append(argv)
                return 124, "", timeout or 0.0  # stopped by the budget
            return fake(ctx_, argv, log, env, timeout)
        rep = self.run_class_steps("mutation", run, "--class-budget", "400")
        r = rep["steps"]["mutation"]
        self.assertEqual(len(timeouts), 1)
        self.assertTrue(300 < timeouts[0] <= 400 - gcclass.SCORE_RESERVE, timeouts)
        self.assertTrue(any("--class-budget" in m for m in r["messages"]), r["messages"])
        self.assertIn("--score", calls[-1])  # what was graded is scored all the same
        self.assertEqual(r["details"]["not_graded"], 1)
        self.assertEqual(r["status"], "failed")  # a mutant not graded fails the step
        calls.clear()
        timeouts.clear()
        self.run_class_steps("mutation", run)  # no budget: the per-call default
        self.assertEqual(timeouts, [None])
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            gc.main(["--out", "/nonexistent/x", "--steps", "mutation", "--class-budget", "0"])

    def test_partial_and_mutation_need_a_gpu_and_the_solutions(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            env = {"gpus": [], "gpu_present": False, "nvcc": "13.0"}
            with contextlib.redirect_stdout(io.StringIO()), \
                    mock.patch.object(gc, "environment", lambda ctx: env):
                rc = gc.main(["--out", str(d / "out"), "--steps", "partial,mutation",
                              "--build-dir", str(d / "b")])
                rep = json.loads((d / "out" / "report.json").read_text())
                self.assertEqual(rc, 1)
                for step in ("partial", "mutation"):
                    self.assertEqual(rep["steps"][step]["summary"], f"not run: {gcctx.NO_DEVICE}")
                rc = gc.main(["--out", str(d / "out2"), "--steps", "partial,mutation",
                              "--build-dir", str(d / "b"), "--starter-only"])
                rep = json.loads((d / "out2" / "report.json").read_text())
                self.assertEqual(rc, 0)
                for step in ("partial", "mutation"):
                    self.assertEqual(rep["steps"][step]["status"], "skipped")

    SANDBOX_CHECK = ("bwrap: works\nunshare: works\nchosen: bwrap\ncgroup v2 limits under "
                     "/sys/fs/cgroup/cudalab: yes\nGPU device nodes: /dev/nvidia0\n")

    def fake_class_grader(self, calls: list, seconds=(110.0, 100.0), instead=None,
                          sandbox_check=SANDBOX_CHECK):
        """A run() for the class step: tools/make-class runs for real (it writes the class, then
        checks the outputs); tools/grade-class is faked: --prepare-only makes OUT/shared, a
        grading writes signed results as the grader reports each kind (fakegrades), or as
        instead[mode] says for some students, and takes seconds[0] sandboxed, [1] without."""
        def run(ctx_, argv, log, env=None, timeout=None):
            calls.append((list(argv), dict(env) if env is not None else None))
            if argv[1:4] == ["-m", "cudalab_grade.sandbox", "--check"]:
                return 0, f"$ {' '.join(argv)}\n{sandbox_check}", 0.2
            tool = Path(argv[1]).name
            if tool == "make-class":
                with contextlib.redirect_stdout(io.StringIO()) as out, \
                        contextlib.redirect_stderr(io.StringIO()):
                    rc = make_class.main(argv[2:])
                return rc, out.getvalue(), 0.5
            self.assertEqual(tool, "grade-class")
            out = Path(argv[argv.index("--out") + 1])
            if "--prepare-only" in argv:
                (out / "shared").mkdir(parents=True)
                return 0, "", 5.0
            mode = "none" if env.get("CUDALAB_SANDBOX") == "none" else "sandbox"
            subs = Path(argv[argv.index("--submissions") + 1])
            fakegrades.graded_class(subs.parent / f"{subs.name}.EXPECTED.csv", out,
                                    (instead or {}).get(mode))
            return 0, "", seconds[0] if mode == "sandbox" else seconds[1]
        return run

    def test_class_step_grades_twice_with_the_same_flags_and_checks_both(self):
        calls: list = []
        with mock.patch.dict(gcctx.os.environ, {"CUDALAB_SANDBOX": "none"}):  # the instructor's
            rep = self.run_class_steps("class", self.fake_class_grader(calls), "--class-size", "28")
        self.assertEqual(rep["rc"], 0, rep["steps"])
        r = rep["steps"]["class"]
        self.assertEqual(r["status"], "passed", r["messages"])
        self.assertEqual(r["summary"], "28 students: sandboxed (bwrap) 110 s, none 100 s, overhead "
                                       "10.0 % (limit 15 %); as expected 28/28 and 28/28")
        d = r["details"]
        self.assertEqual((d["sandbox"], d["overhead_percent"], d["overhead_within_limit"]),
                         ("bwrap", 10.0, True))
        self.assertEqual(d["runs"]["sandbox"]["matching"], 28)
        argvs = [a for a, _ in calls]
        self.assertEqual(len(calls), 7)   # sandboxed first, each grading checked at once
        make, check_sb, prepare, sandboxed, check_a, none, check_b = argvs
        self.assertEqual(make[2:][1:], ["-n", "28"])
        self.assertEqual(check_sb[1:], ["-m", "cudalab_grade.sandbox", "--check"])
        self.assertIn(str(ROOT / "tools"), calls[1][1]["PYTHONPATH"].split(gcctx.os.pathsep))
        self.assertEqual(Path(prepare[1]).name, "grade-class")
        self.assertEqual(prepare[2:6], list(gcclass.CLASS_EXERCISES))
        self.assertIn("--prepare-only", prepare)
        shared = str(Path(prepare[prepare.index("--out") + 1]) / "shared")
        for g in (sandboxed, none):
            for flag, value in (("--per-gpu", "6"), ("--jobs", "16"), ("--timeout", "30"),
                                ("--shared-build", shared), ("--submissions", make[2])):
                self.assertEqual(g[g.index(flag) + 1], value, flag)
            self.assertIn("--fast", g)                  # tests only: the sandbox alone differs
            self.assertNotIn("--prepare-only", g)
        strip = lambda a: [x for i, x in enumerate(a) if "--out" not in a[i - 1:i + 1]]
        self.assertEqual(strip(sandboxed), strip(none))  # identical flags but --out
        env_sb, env_none = calls[3][1], calls[5][1]
        self.assertNotIn("CUDALAB_SANDBOX", env_sb)
        self.assertEqual(env_none["CUDALAB_SANDBOX"], "none")
        self.assertEqual((env_sb["CCACHE_DISABLE"], env_none["CCACHE_DISABLE"]), ("1", "1"))
        for c, g in ((check_a, sandboxed), (check_b, none)):
            self.assertEqual(c[2:5], ["--check", make[2], g[g.index("--out") + 1]])
        self.assertTrue(check_a[-1].endswith("class/check-sandbox"))
        self.assertTrue(check_b[-1].endswith("class/check-none"))
        self.assertIn("| sandboxed (bwrap) | 110.0 | 28/28 |", rep["md"])
        self.assertIn("| CUDALAB_SANDBOX=none | 100.0 | 28/28 |", rep["md"])
        self.assertIn("Overhead of the sandbox: 10.0 % ((sandboxed − none) / none), limit 15 %: ok",
                      rep["md"])

    def test_class_step_in_two_invocations_keeps_the_earlier_grading(self):
        env = {"gpus": ["H100"], "gpu_present": True, "nvcc": "13.0"}
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)

            def main(modes: str, parallel: str = "6") -> tuple[int, dict, list]:
                calls: list = []
                with contextlib.redirect_stdout(io.StringIO()), \
                        mock.patch.object(gcctx.Context, "run", self.fake_class_grader(calls)), \
                        mock.patch.object(gc, "environment", lambda ctx: env):
                    rc = gc.main(["--out", str(d / "out"), "--steps", "class", "--build-dir",
                                  str(d / "b"), "--parallel", parallel, "--class-size", "14",
                                  "--class-modes", modes])
                return rc, json.loads((d / "out" / "report.json").read_text())["steps"]["class"], calls

            rc, r, calls = main("sandbox")
            self.assertEqual((rc, r["status"]), (1, "failed"))  # the other grading is missing
            self.assertEqual(sum(1 for a, e in calls if Path(a[1]).name == "grade-class"
                                 and "--prepare-only" not in a), 1)
            self.assertTrue(any("CUDALAB_SANDBOX=none: not run now" in m for m in r["messages"]))
            rc, r, calls = main("none")
            self.assertEqual((rc, r["status"]), (0, "passed"), r["messages"])
            gradings = [e for a, e in calls if Path(a[1]).name == "grade-class" and "--prepare-only" not in a]
            self.assertEqual([e["CUDALAB_SANDBOX"] for e in gradings], ["none"])  # only this one ran
            self.assertEqual(r["summary"], "14 students: sandboxed (bwrap) 110 s, none 100 s, overhead "
                                           "10.0 % (limit 15 %); as expected 14/14 and 14/14")
            self.assertTrue(r["details"]["runs"]["sandbox"]["earlier"])
            md = (d / "out" / "report.md").read_text()
            self.assertIn("| sandboxed (bwrap) (an earlier invocation, --class-modes) | 110.0 | 14/14 |", md)
            self.assertIn("| CUDALAB_SANDBOX=none | 100.0 | 14/14 |", md)
            rc, r, calls = main("sandbox", parallel="4")  # other flags: nothing of before is kept
            self.assertEqual(rc, 1)
            self.assertIsNone(r["details"]["overhead_percent"])

    def test_class_step_fails_on_a_student_not_as_expected(self):
        calls: list = []
        oob = "s018-oob"
        rep = self.run_class_steps("class", self.fake_class_grader(
            calls, instead={"none": {oob: {}}}), "--class-size", "28")
        self.assertEqual(rep["rc"], 1)
        r = rep["steps"]["class"]
        self.assertEqual(r["status"], "failed")
        self.assertIn("as expected 28/28 and 27/28", r["summary"])
        self.assertEqual(r["details"]["overhead_within_limit"], True)
        self.assertTrue(any(m.startswith(f"CUDALAB_SANDBOX=none: {oob} (oob): expected 1.4 failed or "
                                         "sanitizer; got 1.1 passed 10/10") and
                            m.endswith("1.4 passed with 10 points, expected failed or sanitizer, "
                                       "0 points") for m in r["messages"]), r["messages"])
        self.assertIn("| CUDALAB_SANDBOX=none | 100.0 | 27/28 |", rep["md"])

    def test_class_step_fails_when_the_sandbox_costs_more_than_15_percent(self):
        rep = self.run_class_steps("class", self.fake_class_grader([], seconds=(116.0, 100.0)),
                                   "--class-size", "14", "--class-timeout", "45")
        r = rep["steps"]["class"]
        self.assertEqual((rep["rc"], r["status"]), (1, "failed"))
        self.assertEqual(r["details"]["overhead_percent"], 16.0)
        self.assertEqual(r["details"]["timeout"], 45)
        self.assertIn("the sandbox added 16.0 % to the class's time, more than 15 %", r["messages"])
        self.assertIn("limit 15 %: FAILED", rep["md"])
        self.assertIn("as expected 14/14 and 14/14", r["summary"])

    def test_class_step_without_a_gpu_a_sandbox_or_the_solutions(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            env = {"gpus": [], "gpu_present": False, "nvcc": "13.0"}
            run = mock.Mock(side_effect=AssertionError("nothing runs without a GPU"))
            with contextlib.redirect_stdout(io.StringIO()), mock.patch.object(gcctx.Context, "run", run), \
                    mock.patch.object(gc, "environment", lambda ctx: env):
                rc = gc.main(["--out", str(d / "out"), "--steps", "class", "--build-dir", str(d / "b")])
                rep = json.loads((d / "out" / "report.json").read_text())
                self.assertEqual(rc, 1)
                self.assertEqual(rep["steps"]["class"]["summary"], f"not run: {gcctx.NO_DEVICE}")
                self.assertEqual(rep["steps"]["class"]["status"], "failed")
                rc = gc.main(["--out", str(d / "out2"), "--steps", "class", "--build-dir", str(d / "b"),
                              "--starter-only"])
                rep = json.loads((d / "out2" / "report.json").read_text())
                self.assertEqual((rc, rep["steps"]["class"]["status"]), (0, "skipped"))
        calls: list = []
        no_sandbox = "bwrap: no: x\nunshare: no: y\nchosen: none\n"
        rep = self.run_class_steps("class", self.fake_class_grader(calls, sandbox_check=no_sandbox),
                                   "--class-size", "3")
        r = rep["steps"]["class"]
        self.assertEqual((r["status"], r["summary"]), ("failed", "no sandbox"))
        self.assertEqual(len(calls), 2)                 # the class written, the check: no grading

    def test_class_step_options_and_its_exercises_are_make_class_files(self):
        self.assertEqual(list(gcclass.CLASS_EXERCISES), list(make_class.FILES))
        for argv in (["--class-size", "0"], ["--class-timeout", "0"]):
            with self.subTest(argv=argv), contextlib.redirect_stderr(io.StringIO()), \
                    self.assertRaises(SystemExit) as cm:
                gc.main(["--out", "/nonexistent/x", "--steps", "class", *argv])
            self.assertEqual(cm.exception.code, 2)

    def test_bad_step_is_a_usage_error(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as cm:
            gc.main(["--out", "/nonexistent/x", "--steps", "nope"])
        self.assertEqual(cm.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
