"""tools/grade --profile without a GPU: ncu's CSV read from fixtures written in
its documented --page raw layout (fixtures/ncu_raw_1.2_*.csv: a header of the identity columns
and the metric names, a row of units, a row per kernel launch; the benchmark's own kernels in the
checker's process, the exercise's in the runner's), the summary and the words, and the command
line with a fake ncu."""
from __future__ import annotations

import json
import subprocess
import unittest
from pathlib import Path
from unittest import mock

import test_grade as tg
from test_grade import GradeTestCase, _write_exe

from cudalab_grade import profile

HERE = Path(__file__).resolve().parent
FIX = HERE / "fixtures"
LESSON = tg.REPO / "chapters" / "01-reduce-scan-histogram" / "README.md"
N = 268435456


def side(name: str) -> profile.Summary:
    kernels = profile.parse_csv((FIX / f"ncu_raw_1.2_{name}.csv").read_text())
    return profile.summarize("yours" if name == "starter" else "reference solution",
                             profile.exercise_kernels(kernels), N, calls=2, copy_gbps=2600.0)


class ParseTest(unittest.TestCase):
    def test_raw_page_with_units_row(self):
        kernels = profile.parse_csv("==PROF== Connected to process 4101\n"
                                    + (FIX / "ncu_raw_1.2_starter.csv").read_text()
                                    + "==PROF== Disconnected\n")
        self.assertEqual([k.id for k in kernels], [0, 1, 2, 3, 4])
        k = kernels[1]
        self.assertEqual(k.process, "sum_shared_tree_runner_starter")
        self.assertTrue(k.name.startswith("void cudalab::reduce::"))
        self.assertEqual(k.get("gpu__time_duration.sum"), 1912000.0)   # "1,912,000" in ns
        self.assertEqual(k.get("dram__bytes_read.sum"), 1073745920.0)
        self.assertEqual(k.get("launch__registers_per_thread"), 16.0)
        self.assertIsNone(kernels[4].get("launch__block_size"))        # "n/a"

    def test_details_layout_and_units(self):
        text = "\n".join([
            '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
            '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"',
            '"0","7","x_runner_starter","h","k(int*)","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0",'
            '"Command line profiler metrics","gpu__time_duration.sum","usecond","1,500.5"',
            '"0","7","x_runner_starter","h","k(int*)","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0",'
            '"Command line profiler metrics","dram__bytes_read.sum","Mbyte","2.5"',
            '"0","7","x_runner_starter","h","k(int*)","1","7","(256, 1, 1)","(8, 1, 1)","0","9.0",'
            '"Command line profiler metrics","launch__block_size","","n/a"'])
        [k] = profile.parse_csv(text)
        self.assertEqual(k.get("gpu__time_duration.sum"), 1500500.0)
        self.assertEqual(k.get("dram__bytes_read.sum"), 2.5e6)
        self.assertNotIn("launch__block_size", k.metrics)

    def test_exercise_kernels_are_the_runners(self):
        kernels = profile.parse_csv((FIX / "ncu_raw_1.2_starter.csv").read_text())
        mine = profile.exercise_kernels(kernels)
        self.assertEqual(len(mine), 2)
        self.assertTrue(all("sum_shared_tree_kernel" in k.name for k in mine))
        # process names cut short (the kernel's comm): the checker is the first pid
        for k in kernels:
            k.process = "sum_shared_tree"
        self.assertEqual([k.id for k in profile.exercise_kernels(kernels)], [1, 3])
        # one process only: the benchmark's own kernels by name
        for k in kernels:
            k.pid = "1"
        self.assertEqual([k.id for k in profile.exercise_kernels(kernels)], [1, 3])


class SummaryTest(unittest.TestCase):
    def test_per_call_figures(self):
        s = side("starter")
        self.assertEqual(s.kernels, 2)
        self.assertAlmostEqual(s.time_ns, 1912000.0)
        self.assertAlmostEqual(s.dram_pct_peak, 17.6)
        self.assertAlmostEqual(s.dram_gbps, (1073745920 + 8192) / 1912000, places=3)
        self.assertAlmostEqual(s.copy_share, s.dram_gbps / 2600.0)
        self.assertAlmostEqual(s.achieved_occupancy, 87.9)
        self.assertEqual(s.limiter, "block size (warps per SM)")  # 8 blocks: the smallest limit
        self.assertEqual(s.shared_bytes, 2048.0)
        self.assertAlmostEqual(s.bank_conflicts, 41943040 + 20971520)
        self.assertAlmostEqual(s.conflict_share, (41943040 + 20971520) / 104857600)
        self.assertAlmostEqual(s.inst_per_element, 218103808 / N)
        self.assertEqual([r for r, _ in s.stalls], ["mio_throttle", "short_scoreboard", "barrier"])
        self.assertAlmostEqual(sum(v for _, v in s.stalls), (3.4 + 2.2 + 1.9) / (3.4 + 2.2 + 1.9 + 1.1 + 0.3))

    def test_words_side_by_side(self):
        text = profile.side_by_side(side("starter"), side("solution"))
        self.assertRegex(text, r"kernels\s+2 launch\(es\) in 2 call\(s\):\s+2 launch")
        self.assertRegex(text, r"\n\s+sum_shared_tree_kernel\s+sum_shared_tree_kernel\n")
        self.assertIn("yours", text.splitlines()[0])
        self.assertIn("reference solution", text.splitlines()[0])
        self.assertRegex(text, r"DRAM throughput\s+18 % of peak, 22 % of a copy")
        self.assertRegex(text, r"86 % of peak, 103 % of a")
        self.assertIn("88 % achieved, 100 % possible", text)
        mine, ref = dict(profile.lines_of(side("starter"))), dict(profile.lines_of(side("solution")))
        self.assertEqual(mine["top stalls"], "shared-memory instruction queue full (MIO throttle) 38 %, "
                                             "waiting for shared memory or special math (short scoreboard) "
                                             "25 %, waiting at __syncthreads (barrier) 21 %")
        self.assertEqual(mine["bank conflicts"], "62,914,560 a call (60 % of shared-memory wavefronts)")
        self.assertTrue(ref["top stalls"].startswith("waiting for global memory (long scoreboard) 87 %"))
        self.assertEqual(mine["launch"], "256 threads a block, 16 registers a thread, 2048 B shared a block")

    def test_the_largest_gap_points_at_the_lesson(self):
        mine, ref = side("starter"), side("solution")
        kinds = [k for _, k, _ in profile.gaps(mine, ref)]
        self.assertEqual(kinds[0], "bank_conflicts")
        self.assertEqual(set(kinds), {"bank_conflicts", "memory", "occupancy", "instructions"})
        words = profile.advice(mine, ref, "1.2", 1, LESSON, "chapters/01-reduce-scan-histogram/README.md")
        self.assertEqual(words, "The largest gap is shared-memory bank conflicts: 60 % of your shared-memory "
                                "wavefronts are bank conflicts, 0 % of the reference's. Read "
                                'chapters/01-reduce-scan-histogram/README.md, "Exercise 1.2: a tree in '
                                'shared memory".')

    def test_memory_gap_when_the_kernel_waits_on_memory(self):
        mine, ref = side("starter"), side("solution")
        mine.conflict_share, mine.inst_per_element = 0.0, ref.inst_per_element
        mine.stalls = [("long_scoreboard", 0.7), ("barrier", 0.2)]
        mine.achieved_occupancy = ref.achieved_occupancy
        words = profile.advice(mine, ref, "1.2", 1, LESSON, "L.md")
        self.assertIn("The largest gap is DRAM throughput: your kernels reach 18 % of the DRAM's peak, "
                      "the reference 86 %", words)
        self.assertIn('"Exercise 1.4: fill the memory pipe"', words)

    def test_on_par_and_alone(self):
        ref = side("solution")
        self.assertIn("match the reference", profile.advice(side("solution"), ref, "1.2", 1, LESSON, "L.md"))
        alone = profile.advice(side("starter"), None, "1.2", 1, LESSON, "L.md")
        self.assertIn("The largest gap is shared-memory bank conflicts", alone)
        empty = profile.summarize("yours", [], N)
        self.assertIn("No kernel of your code was profiled", profile.advice(empty, ref, "1.2", 1, LESSON, "L.md"))

    def test_lesson_table_names_real_sections(self):
        """Every anchor of profile_lessons.toml is a heading of its chapter's lesson."""
        table = profile.lesson_table()
        dirs = {int(p.name[:2]): p for p in (tg.REPO / "chapters").glob("0*") if p.is_dir()}
        for key, kinds in table.items():
            chapter = int(key.split(".")[0])
            for kind, anchor in kinds.items():
                self.assertIn(kind, profile.GAPS)
                self.assertIsNotNone(profile.section_title(dirs[chapter] / "README.md", anchor),
                                     f"{key}: no heading {{#{anchor}}}")
        # an exercise's entry wins over its chapter's
        lesson = dirs[7] / "README.md"
        self.assertIn('"Exercise 7.1: the root bounding box"',
                      profile.pointer("memory", "x", "7.1", 7, lesson, "L.md"))
        self.assertIn('"Exercise 7.3: classification and counting"',
                      profile.pointer("memory", "x", "7.2", 7, lesson, "L.md"))
        # the fallback, the exercise's own section, for 6.6 whose section covers 6.5 and 6.6
        self.assertIn("6.5 and 6.6", profile.section_title(dirs[6] / "README.md", "ch06-ex66", "6.6"))


class ProblemsTest(unittest.TestCase):
    def test_no_ncu(self):
        with mock.patch("shutil.which", return_value=None), \
                mock.patch.object(Path, "glob", return_value=iter([])):
            with self.assertRaises(profile.ProfileError) as e:
                profile.find_ncu()
        self.assertIn("needs Nsight Compute's command line, ncu", str(e.exception))
        self.assertEqual(e.exception.code, 4)

    def test_counters_not_permitted(self):
        out = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters"
        self.assertIn("NVreg_RestrictProfilingToAdminUsers=0", profile.permission_problem(out))
        self.assertIsNone(profile.permission_problem("==PROF== Disconnected"))


class RetryTest(unittest.TestCase):
    def test_unknown_metric_retries_with_the_sections_alone(self):
        calls = []

        def fake_run(cmd, **kw):
            calls.append(cmd)
            if "--import" in cmd:
                return subprocess.CompletedProcess(cmd, 0, (FIX / "ncu_raw_1.2_starter.csv").read_text(), "")
            if "--metrics" in cmd:
                return subprocess.CompletedProcess(cmd, 1, "==ERROR== Failed to find metric x__y.sum\n", "")
            Path(cmd[cmd.index("--export") + 1] + ".ncu-rep").write_text("report")
            return subprocess.CompletedProcess(cmd, 0, "", "")
        s = profile.profile_side(profile.Side("yours", Path("b"), Path("r")), "ncu", "^x$", "x/int32/8",
                                 N, {}, 60.0, run=fake_run)
        self.assertEqual(s.kernels, 2)
        self.assertEqual(["--metrics" in c for c in calls], [True, False, False])


FAKE_NCU = """
import os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_NCU_LOG"], "a") as f:
    f.write(repr(args) + "\\n")
if "--import" in args:
    report = args[args.index("--import") + 1]
    print(open(report).read())
    sys.exit(0)
if os.environ.get("FAKE_NCU_DENY"):
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0.")
    sys.exit(1)
export = args[args.index("--export") + 1] + ".ncu-rep"
bench = next(a for a in args if a.endswith(("_bench_starter", "_bench_solution")))
kind = "solution" if bench.endswith("solution") else "starter"
assert "--target-processes" in args and args[args.index("--target-processes") + 1] == "all"
assert "CUDALAB_RUNNER_PREFIX" not in os.environ, "the runner must run outside the sandbox"
assert os.environ["CUDALAB_RUNNER"].endswith("_runner_" + kind)
open(export, "w").write(open(os.environ["FAKE_NCU_FIXTURES"] + "/ncu_raw_1.2_" + kind + ".csv").read())
out = next(a for a in args if a.startswith("--benchmark_out="))[len("--benchmark_out="):]
import json
json.dump({"context": {"copy_bandwidth_gbps": "2600"}, "benchmarks": [
    {"name": "alpha/int32/1024/manual_time", "run_name": "alpha/int32/1024/manual_time",
     "run_type": "iteration", "iterations": 1, "real_time": 5.0, "time_unit": "us"}]}, open(out, "w"))
"""


class CliTest(GradeTestCase):
    def setUp(self):
        super().setUp()
        _write_exe(self.tree.tools / "ncu", FAKE_NCU)
        self.ncu_log = Path(self._tmp.name) / "ncu.log"
        self.tree.env.update(FAKE_NCU_LOG=str(self.ncu_log), FAKE_NCU_FIXTURES=str(FIX),
                             CUDALAB_RUNNER_PREFIX='["box"]')
        for impl in ("starter", "solution"):
            _write_exe(self.tree.bin / f"alpha_bench_{impl}", "import sys\nsys.exit(0)\n")

    def test_side_by_side_with_the_reference(self):
        code, out, err = self.tree.grade("--profile", "1.1", "--no-build", "-q")
        self.assertEqual(code, 0, err)
        self.assertIn("1.1 alpha: Nsight Compute profile of alpha/int32/1024", out)
        self.assertIn("reference solution", out)
        self.assertIn("The largest gap is shared-memory bank conflicts", out)
        calls = [eval(line) for line in self.ncu_log.read_text().splitlines()]
        profiled = [c for c in calls if "--export" in c]
        self.assertEqual(len(profiled), 2)  # yours, then the reference's
        self.assertTrue(any(a.startswith("--benchmark_filter=^alpha/int32/1024") for a in profiled[0]))
        self.assertIn("--benchmark_repetitions=1", profiled[0])
        self.assertIn("--page", [c for c in calls if "--import" in c][0])

    def test_without_ncu_or_counters(self):
        (self.tree.tools / "ncu").unlink()
        with mock.patch.object(profile, "find_ncu", side_effect=profile.ProfileError("no ncu here")):
            code, _, err = self.tree.grade("--profile", "1.1", "--no-build", "-q")
        self.assertEqual((code, err.strip()), (4, "no ncu here"))
        _write_exe(self.tree.tools / "ncu", FAKE_NCU)
        self.tree.env["FAKE_NCU_DENY"] = "1"
        code, _, err = self.tree.grade("--profile", "1.1", "--no-build", "-q")
        self.assertEqual(code, 4)
        self.assertIn("ERR_NVGPUCTRPERM", err)

    def test_usage(self):
        code, _, err = self.tree.grade("--profile", "1.2", "--no-build", "-q")
        self.assertEqual(code, 2)
        self.assertIn("has no benchmark case", err)
        code, _, err = self.tree.grade("--profile", "1.1", "1.2", "-q")
        self.assertEqual(code, 2)


if __name__ == "__main__":
    unittest.main()
