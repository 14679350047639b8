"""Honest speed grades, without a GPU: the ratio's interval, the re-run when
it straddles the target, the implausibility rules, the GPU's clocks and other processes, all
on fake benchmark JSON and a fake nvidia-smi."""
from __future__ import annotations

import json
import os
import unittest
from pathlib import Path

import test_grade as tg
from test_grade import GradeTestCase, _write_exe, fake_bench

from cudalab_grade import bench, gpuwatch, leaderboard


def reps(name: str, times_us: list[float], bytes_per_second: float | None = None) -> list[dict]:
    """Google Benchmark entries of `name` with --benchmark_report_aggregates_only=false: one
    iteration entry per repetition, then the median aggregate."""
    run = name + "/manual_time"
    out = []
    for i, t in enumerate(times_us):
        e = {"name": run, "run_name": run, "run_type": "iteration", "repetitions": len(times_us),
             "repetition_index": i, "real_time": t, "time_unit": "us", "iterations": 10}
        if bytes_per_second is not None:
            e["bytes_per_second"] = bytes_per_second
        out.append(e)
    med = sorted(times_us)[len(times_us) // 2]
    out.append({"name": run + "_median", "run_name": run, "run_type": "aggregate",
                "aggregate_name": "median", "real_time": med, "time_unit": "us"})
    return out


class IntervalTest(unittest.TestCase):
    def test_ratio_of_medians_and_an_interval_around_it(self):
        base = [100.0, 101.0, 99.0, 100.5, 99.5]
        mine = [200.0, 210.0, 190.0, 205.0, 195.0]
        ratio, low, high = bench.ratio_interval([t * 1e3 for t in base], [t * 1e3 for t in mine])
        self.assertAlmostEqual(ratio, 0.5)
        self.assertLess(low, ratio)
        self.assertGreater(high, ratio)
        self.assertGreaterEqual(low, 99.0 / 210.0 - 1e-9)   # never outside the extreme ratios
        self.assertLessEqual(high, 101.0 / 190.0 + 1e-9)
        # seeded: the same data gives the same interval
        self.assertEqual(bench.ratio_interval(base, mine), bench.ratio_interval(base, mine))

    def test_one_repetition_has_no_spread(self):
        self.assertEqual(bench.ratio_interval([8.0], [4.0]), (2.0, 2.0, 2.0))

    def test_noisier_data_gives_a_wider_interval(self):
        base = [100.0] * 5
        calm = bench.ratio_interval(base, [100.0, 101.0, 99.0, 100.0, 100.5])
        noisy = bench.ratio_interval(base, [100.0, 130.0, 70.0, 120.0, 80.0])
        self.assertGreater(noisy[2] - noisy[1], calm[2] - calm[1])

    def test_straddles(self):
        self.assertTrue(bench.straddles(0.4, 0.6, 0.5))
        self.assertFalse(bench.straddles(0.5, 0.6, 0.5))  # the target is reached at worst
        self.assertFalse(bench.straddles(0.3, 0.4, 0.5))

    def test_repetition_times_and_bytes_from_the_json(self):
        entries = reps("alpha/int32/1024", [10.0, 12.0, 11.0], bytes_per_second=4e11)
        self.assertEqual(bench.repetition_times_ns(entries, "alpha/int32/1024"), [1e4, 1.2e4, 1.1e4])
        self.assertEqual(bench.bytes_per_second(entries, "alpha/int32/1024"), 4e11)
        # aggregates only: the median stands for the one repetition known
        only = [e for e in entries if e["run_type"] == "aggregate"]
        self.assertEqual(bench.repetition_times_ns(only, "alpha/int32/1024"), [1.1e4])
        self.assertEqual(bench.repetition_times_ns(entries, "beta/int32/1024"), [])

    def test_copy_bandwidth_from_the_context_else_the_copy_benchmark(self):
        self.assertEqual(bench.copy_bandwidth_gbps({"context": {"copy_bandwidth_gbps": "2900.5"},
                                                    "benchmarks": []}), 2900.5)
        data = {"context": {}, "benchmarks": reps("copy_bandwidth/int32/1024", [1.0], 2.5e12)}
        self.assertEqual(bench.copy_bandwidth_gbps(data), 2500.0)
        self.assertIsNone(bench.copy_bandwidth_gbps({"context": {}, "benchmarks": []}))


class ImplausibleTest(unittest.TestCase):
    def test_faster_than_the_copy_bandwidth(self):
        why = bench.implausible(0.9, 0.45, bytes_per_s=4.0e12, copy_gbps=3000.0)
        self.assertIn("implausible: 4000 GB/s", why)
        self.assertIn("1.1 x the device's copy bandwidth (3000 GB/s", why)
        # at the copy bandwidth, or a little above it (noise), is believed
        self.assertIsNone(bench.implausible(0.9, 0.45, bytes_per_s=3.2e12, copy_gbps=3000.0))
        # an exercise whose byte count is no lower bound can turn the rule off
        self.assertIsNone(bench.implausible(0.9, 0.45, 4.0e12, 3000.0, check_bandwidth=False))
        # what the L2 can hold at the end of a call need not reach DRAM within it: 1 GB in 0.25 ms
        # is 4000 GB/s, but with 50 MB of L2 only 950 MB had to: 3800 GB/s, still too fast ...
        self.assertIn("3800 GB/s for the bytes every call must at least read and write (less what the "
                      "L2 cache holds)", bench.implausible(0.9, 0.45, 4.0e12, 3000.0, l2=5e7, call_seconds=2.5e-4))
        # ... while 90 MB in 25 us (3584 GB/s counted), of which 50 MB may stay in the L2, is believed
        self.assertIsNone(bench.implausible(0.9, 0.45, 3.584e12, 3000.0, l2=5e7, call_seconds=2.5e-5))
        # without a measured copy bandwidth the rule cannot judge
        self.assertIsNone(bench.implausible(0.9, 0.45, bytes_per_s=4.0e12, copy_gbps=None))

    def test_too_far_beyond_the_baseline(self):
        why = bench.implausible(25.0, 1.0, None, None)
        self.assertIn("25.00 x the baseline's speed, more than the 20 x", why)
        self.assertIsNone(bench.implausible(19.0, 1.0, None, None))
        self.assertIsNone(bench.implausible(25.0, 1.0, None, None, max_ratio=30.0))
        self.assertIn("max_plausible_ratio", bench.implausible(25.0, 1.0, None, None, max_ratio=10.0))


class GpuWatchTest(unittest.TestCase):
    def test_parse_clocks_and_apps(self):
        self.assertEqual(gpuwatch.parse_clocks("1980, 2619, 1980\n"),
                         {"sm": 1980.0, "mem": 2619.0, "max_sm": 1980.0})
        self.assertEqual(gpuwatch.parse_clocks("clocks.current.sm [MHz], x, y\n1755 MHz, 2619 MHz, [N/A]\n"),
                         {"sm": 1755.0, "mem": 2619.0, "max_sm": None})
        self.assertIsNone(gpuwatch.parse_clocks(None))
        self.assertEqual(gpuwatch.parse_apps("123, python3\n456, /usr/bin/x y\n"),
                         [(123, "python3"), (456, "/usr/bin/x y")])
        self.assertEqual(gpuwatch.parse_apps(""), [])
        self.assertIsNone(gpuwatch.parse_apps(None))

    def test_ours_is_the_benchmark_and_its_children(self):
        self.assertTrue(gpuwatch.is_ours(os.getpid()))
        self.assertFalse(gpuwatch.is_ours(1))
        self.assertTrue(gpuwatch.is_ours(os.getpid(), os.getppid()))  # a child of our parent
        m = gpuwatch.Monitor({}, smi=lambda args: None)
        self.assertTrue(m.ours(os.getpid()))  # the grader itself
        self.assertFalse(m.ours(os.getppid()))  # before the benchmark started: nothing else
        m.started(os.getppid())
        self.assertTrue(m.ours(os.getppid()))
        self.assertFalse(m.ours(1))

    def test_monitor_with_a_fake_smi(self):
        answers = {"clocks": ["1980, 2619, 1980", "1755, 2619, 1980"], "apps": ["77, other\n", ""]}

        def smi(args):
            key = "clocks" if args[0].startswith("--query-gpu") else "apps"
            return answers[key].pop(0) if len(answers[key]) > 1 else answers[key][0]
        with gpuwatch.Monitor({"CUDA_VISIBLE_DEVICES": "2"}, interval=60, smi=smi,
                              ours=lambda pid: pid != 77) as m:
            self.assertEqual(m.dev, ["-i", "2"])
        s = m.summary()
        self.assertEqual(s["sm_mhz"], [1755.0, 1980.0])
        self.assertEqual(s["mem_mhz"], [2619.0, 2619.0])
        self.assertEqual(s["other_processes"], ["77 other"])
        self.assertIn("GPU shared with 1 other process(es): 77 other", gpuwatch.describe(s))
        self.assertEqual(gpuwatch.short(s), "SM 1755-1980 MHz, memory 2619 MHz, GPU shared with another process")

    def test_no_smi_is_unknown(self):
        with gpuwatch.Monitor({}, smi=lambda args: None) as m:
            pass
        s = m.summary()
        self.assertEqual((s["sm_mhz"], s["other_processes"]), ("unknown", "unknown"))
        self.assertEqual(gpuwatch.short(s), "clocks unknown")
        self.assertIn("other GPU processes unknown", gpuwatch.describe(s))


class RunPerfTest(GradeTestCase):
    """run_perf on fake benchmark programs: what a grade run says and scores."""

    def bench(self, entries, context=None, count=None):
        action = ""
        if count is not None:
            action = f"open({str(count)!r}, 'a').write('run\\n')"
        fake_bench(self.tree.bin / "alpha_bench_starter", entries, action=action)
        if context is not None:  # fake_bench writes an empty context: give it one
            p = self.tree.bin / "alpha_bench_starter"
            p.write_text(p.read_text().replace("'context': {}", f"'context': {context!r}"))

    def grade(self):
        self.tree.passing("alpha")
        _, data, _ = self.tree.grade_json("--no-build", "--perf", "--fast", "1.1")
        return data, self.exercise(data, "1.1")

    def test_interval_in_every_output(self):
        # an nvidia-smi that fails, ahead of any real one on PATH (the GPU machine has one)
        _write_exe(self.tree.tools / "nvidia-smi", "import sys; sys.exit(9)")
        self.bench(reps("alpha/int32/1024", [1600, 1610, 1590, 1605, 1595])
                   + reps("cub_base/int32/1024", [1000, 1001, 999, 1000, 1000]))
        data, alpha = self.grade()
        self.assertEqual(alpha["ratio"], 0.625)
        low, high = alpha["ratio_interval"]
        self.assertTrue(0.6 < low < 0.625 < high < 0.65)
        self.assertEqual(alpha["repetitions"], 5)
        self.assertEqual((alpha["time_ns"], alpha["baseline_ns"]), (1.6e6, 1e6))  # the medians (1600 us, 1000 us)
        self.assertEqual(alpha["gpu"]["sm_mhz"], "unknown")  # nvidia-smi failed: clocks unknown
        self.assertIn("5 repetitions, clocks unknown", alpha["reason"])
        _, out, _ = self.tree.grade("--no-build", "--perf", "--fast", "1.1", "--markdown", "-", "-q")
        row = next(line for line in out.splitlines() if line.startswith("| 1.1 "))
        self.assertRegex(row, r"\| 0\.62 \\?\(0\.62-0\.63\\?\) \|")
        _, out, _ = self.tree.grade("--no-build", "--perf", "--fast", "1.1", "-q")
        self.assertRegex(out, r"1\.1\s+alpha\s+3/3\s+0\.62 \(0\.62-0\.63\)\s+14\.0/14")

    def test_straddling_interval_runs_once_more(self):
        count = Path(self._tmp.name) / "count"
        # target 0.5: ratios from 0.4 to 0.6, the interval straddles it
        self.bench(reps("alpha/int32/1024", [2500, 1667, 2000, 2200, 1800])
                   + reps("cub_base/int32/1024", [1000] * 5), count=count)
        _, alpha = self.grade()
        self.assertEqual(count.read_text().count("run"), 2)
        self.assertEqual(alpha["repetitions"], 10)  # both runs' repetitions pooled
        self.assertIn("measured twice", alpha["reason"])

    def test_clear_interval_runs_once(self):
        count = Path(self._tmp.name) / "count"
        self.bench(reps("alpha/int32/1024", [1000, 1001, 999, 1000, 1002])
                   + reps("cub_base/int32/1024", [1000] * 5), count=count)
        _, alpha = self.grade()
        self.assertEqual(count.read_text().count("run"), 1)
        self.assertEqual(alpha["perf_points"], 4)

    def test_faster_than_a_copy_is_refused(self):
        # 1024 int32 in 0.1 us: 41 GB/s... against a copy of 10 GB/s measured in the same run
        self.bench(reps("alpha/int32/1024", [0.1] * 5, bytes_per_second=4.1e10)
                   + reps("cub_base/int32/1024", [0.15] * 5), context={"copy_bandwidth_gbps": "10"})
        data, alpha = self.grade()
        self.assertEqual((alpha["correctness_points"], alpha["perf_points"]), (10, 0))
        self.assertEqual(alpha["perf_verdict"], "implausible")
        self.assertIn("perf: no speed points, implausible: 41 GB/s", alpha["reason"])
        self.assertIn("copy bandwidth (10 GB/s, measured in the same run)", alpha["reason"])
        self.assertEqual(data["score"], 10)
        # never ranked on a leaderboard
        self.assertIsNone(leaderboard._ratio(alpha))
        _, out, _ = self.tree.grade("--no-build", "--perf", "--fast", "1.1", "-q")
        self.assertRegex(out, r"1\.1\s+alpha\s+3/3\s+implausible")

    def test_far_beyond_the_baseline_is_refused(self):
        # target 0.5: more than 10 x the baseline is not believed
        self.bench(reps("alpha/int32/1024", [1.0] * 5) + reps("cub_base/int32/1024", [11.0] * 5))
        _, alpha = self.grade()
        self.assertEqual((alpha["perf_points"], alpha["perf_verdict"]), (0, "implausible"))
        self.assertIn("more than the 10 x believed", alpha["reason"])

    def test_clocks_and_other_processes_from_nvidia_smi(self):
        # the benchmark (a child of the grader) is on the GPU too: never "another process"
        _write_exe(self.tree.tools / "nvidia-smi", """
            import os, sys
            if any(a.startswith("--query-gpu") for a in sys.argv):
                print("1410, 2619, 1980")
            else:
                print("4242, someone_elses_job")
                print(f"{os.getppid()}, the_grader_itself")
                if os.path.exists(os.environ["FAKE_BENCH_PID"]):
                    print(open(os.environ["FAKE_BENCH_PID"]).read().strip() + ", alpha_bench_starter")
        """)
        self.tree.env["FAKE_BENCH_PID"] = str(Path(self._tmp.name) / "bench.pid")
        fake_bench(self.tree.bin / "alpha_bench_starter",
                   reps("alpha/int32/1024", [2000] * 5) + reps("cub_base/int32/1024", [1000] * 5),
                   action="open(os.environ['FAKE_BENCH_PID'], 'w').write(str(os.getpid())); "
                          "import time; time.sleep(1.5)")
        _, alpha = self.grade()
        self.assertEqual(alpha["gpu"]["sm_mhz"], [1410.0, 1410.0])
        self.assertEqual(alpha["gpu"]["max_sm_mhz"], 1980.0)
        self.assertEqual(alpha["gpu"]["other_processes"], ["4242 someone_elses_job"])
        self.assertIn("SM 1410 MHz, memory 2619 MHz, GPU shared with another process", alpha["reason"])


if __name__ == "__main__":
    unittest.main()
