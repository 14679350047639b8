"""Honest speed grades, without a GPU: the ratio's interval, the re-run when
it straddles the target, the implausibility rules, the GPU's clocks and other processes, all
on fake benchmark JSON and a fake nvidia-smi."""
from __future__ import annotations

import json
import os
import unittest
from pathlib import Path
from unittest import mock

import test_grade as tg
from test_grade import GradeTestCase, _write_exe, fake_bench

from cudalab_grade import bench, gpuwatch, grading, leaderboard


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

    def test_calibrated_interval_holds_the_baseline_constant(self):
        mine = [200.0, 210.0, 190.0, 205.0, 195.0]
        ratio, low, high = bench.calibrated_interval(4000.0, mine)
        self.assertAlmostEqual(ratio, 20.0)  # the calibration's time over the exercise's median
        self.assertTrue(4000.0 / 210.0 - 1e-9 <= low < ratio < high <= 4000.0 / 190.0 + 1e-9)
        # only the exercise's repetitions vary: the same as a baseline of one repetition
        self.assertEqual(bench.calibrated_interval(4000.0, mine), bench.ratio_interval([4000.0], mine))
        # a calm exercise has a narrow interval, however the baseline measured in the run moved
        self.assertEqual(bench.calibrated_interval(4000.0, [200.0] * 5), (20.0, 20.0, 20.0))
        self.assertEqual(bench.calibrated_interval(4000.0, [200.0]), (20.0, 20.0, 20.0))
        with self.assertRaises(ValueError):
            bench.calibrated_interval(4000.0, [])
        with self.assertRaises(ValueError):
            bench.calibrated_interval(0.0, mine)

    def test_calibrated_interval_scales_the_exercise_to_the_calibration_gpu(self):
        # half the copy bandwidth of the calibration GPU: twice the time there counts as the same
        self.assertEqual(bench.calibrated_interval(4000.0, [400.0] * 3, gpu_scale=0.5), (20.0, 20.0, 20.0))
        # more bandwidth (an H200 against an H100's calibration): its time counts for more
        ratio, low, high = bench.calibrated_interval(4000.0, [150.0, 160.0, 140.0], gpu_scale=1.5)
        self.assertAlmostEqual(ratio, 4000.0 / (150.0 * 1.5))
        self.assertTrue(low < ratio < high)

    def test_host_cpu_from_cpuinfo(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            info = Path(tmp) / "cpuinfo"
            info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                            "model name\t: Intel(R) Xeon(R)   Platinum 8480+\nprocessor\t: 1\n")
            self.assertEqual(bench.host_cpu(str(info)), "Intel(R) Xeon(R) Platinum 8480+")
            # no such file: what the platform module says (some text), never an error
            self.assertIsInstance(bench.host_cpu(str(Path(tmp) / "none")), (str, type(None)))

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

    def setUp(self):
        super().setUp()
        # a fake nvidia-smi that keeps showing another process: waited for briefly, not 20 s
        for patch in (mock.patch.object(grading, "IDLE_WAIT_S", 0.3),
                      mock.patch.object(grading, "_waited_out", set())):
            patch.start()
            self.addCleanup(patch.stop)

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


# The demo manifest's 1.1 against a host baseline, calibrated: 4000 us per call on the
# calibration machine, whose GPU copies at 3000 GB/s; a target of 20.
CALIBRATION = """
[exercise.perf.calibration]
baseline_ns = 4.0e6
copy_gbps = 3000.0
device = "Fake H100"
host = "Fake Xeon"
"""


def write_manifest(case: GradeTestCase, text: str) -> None:
    """The demo chapter's manifest of case's course tree."""
    (case.tree.root / "chapters" / "01-demo" / "exercises.toml").write_text(text)


def grade_perf(case: GradeTestCase, entries: list[dict], context: dict, action: str = "") -> tuple[dict, dict]:
    """tools/grade --perf --fast 1.1 on case's tree, whose benchmark program writes `entries`
    under `context` (then runs `action`): (the JSON, exercise 1.1's entry)."""
    fake_bench(case.tree.bin / "alpha_bench_starter", entries, action=action)
    p = case.tree.bin / "alpha_bench_starter"
    p.write_text(p.read_text().replace("'context': {}", f"'context': {context!r}"))
    case.tree.passing("alpha")
    _, data, _ = case.tree.grade_json("--no-build", "--perf", "--fast", "1.1")
    return data, case.exercise(data, "1.1")


class CalibratedRunPerfTest(GradeTestCase):
    """run_perf against a calibrated host baseline: the score comes from the calibration's time,
    the exercise's time scaled to the calibration GPU; the baseline measured here is information."""

    def setUp(self):
        super().setUp()
        self.manifest(CALIBRATION)

    def manifest(self, calibration: str) -> None:
        text = tg.MANIFEST.replace('baseline = "cub_base/int32/1024"\nratio = 0.5\npoints = 4\n',
                                   'baseline = "cpu_base/int32/1024"\nratio = 20.0\npoints = 4\n' + calibration)
        self.assertIn("cpu_base", text)
        write_manifest(self, text)

    def grade(self, mine_us, base_us, copy_gbps="3000.0", count=None):
        action = f"open({str(count)!r}, 'a').write('run\\n')" if count is not None else ""
        context = {"device": "Fake GPU"}
        if copy_gbps is not None:
            context["copy_bandwidth_gbps"] = copy_gbps
        return grade_perf(self, reps("alpha/int32/1024", mine_us) + reps("cpu_base/int32/1024", base_us),
                          context, action)

    def test_same_host_and_gpu_as_the_calibration(self):
        data, alpha = self.grade([200.0] * 5, [4000.0] * 5)
        self.assertEqual((alpha["ratio"], alpha["ratio_raw"], alpha["perf_points"]), (20.0, 20.0, 4))
        self.assertEqual(alpha["calibration"], {"device": "Fake H100", "host": "Fake Xeon",
                                                "host_speed": 1.0, "gpu_scale": 1.0})
        # where it was measured, as a calibration records it
        self.assertEqual((alpha["time_ns"], alpha["baseline_ns"], alpha["copy_gbps"], alpha["device"]),
                         (2e5, 4e6, 3000.0, "Fake GPU"))
        self.assertIsInstance(alpha["host"], str)
        self.assertIn("; ratio 20.00 of cpu_base at the calibration host's speed (target 20, measured "
                      "here 20.00), 95 % interval 20.00-20.00, 5 repetitions", alpha["reason"])
        self.assertEqual(leaderboard._ratio(alpha), 20.0)

    def test_a_faster_host_gives_the_same_score(self):
        # this host runs the baseline in half the calibration host's time: measured, the ratio halves
        data, alpha = self.grade([200.0] * 5, [2000.0] * 5)
        self.assertEqual((alpha["ratio"], alpha["ratio_raw"], alpha["perf_points"]), (20.0, 10.0, 4))
        self.assertEqual(alpha["ratio_interval"], [20.0, 20.0])
        self.assertEqual(alpha["calibration"]["host_speed"], 2.0)
        # the leaderboards rank the scored ratio (Gradescope's over its target: 20 / 20)
        self.assertEqual(leaderboard._ratio(alpha), 20.0)
        self.assertEqual(data["leaderboard"], [{"name": "1.1 alpha (speed / target)", "value": 1.0, "order": "desc"}])
        self.assertIn("ratio 20.00 of cpu_base at the calibration host's speed (target 20, measured here "
                      "10.00)", alpha["reason"])
        # the details say it in words (a test's output in results.json: reason, then details)
        output = data["tests"][0]["output"]
        self.assertIn("speed: ratio 20.00 of cpu_base at the calibration host's speed (measured here 10.00; "
                      "this host runs cpu_base 2.00x as fast as the calibration host, Fake Xeon; times scaled "
                      "by the copy bandwidth, 3000 GB/s here against 3000 GB/s on the calibration GPU, "
                      "Fake H100)", output)
        # and a slower host: the same score again
        _, slow = self.grade([200.0] * 5, [8000.0] * 5)
        self.assertEqual((slow["ratio"], slow["ratio_raw"], slow["calibration"]["host_speed"]), (20.0, 40.0, 0.5))

    def test_a_gpu_with_less_copy_bandwidth_is_scaled(self):
        # half the calibration GPU's copy bandwidth, and half as fast: the same score
        _, alpha = self.grade([400.0] * 5, [4000.0] * 5, copy_gbps="1500.0")
        self.assertEqual((alpha["ratio"], alpha["ratio_raw"], alpha["perf_points"]), (20.0, 10.0, 4))
        self.assertEqual(alpha["calibration"]["gpu_scale"], 0.5)
        self.assertEqual(alpha["copy_gbps"], 1500.0)
        # more bandwidth: its time counts for more (1.5 x 200 us on the calibration GPU)
        _, fast = self.grade([200.0] * 5, [4000.0] * 5, copy_gbps="4500.0")
        self.assertEqual((fast["ratio"], fast["ratio_raw"], fast["perf_points"]), (13.3, 20.0, 2.7))

    def test_no_copy_bandwidth_scores_the_measured_ratio(self):
        _, alpha = self.grade([400.0] * 5, [4000.0] * 5, copy_gbps=None)
        self.assertEqual((alpha["ratio"], alpha["ratio_raw"], alpha["perf_points"]), (10.0, 10.0, 2.0))
        self.assertIsNone(alpha["calibration"])
        self.assertIsNone(alpha["copy_gbps"])
        self.assertIn("; ratio 10.00 of cpu_base as measured here (target 20, not normalised to the "
                      "calibration host: the benchmark reported no copy bandwidth to scale its time by), "
                      "95 % interval", alpha["reason"])

    def test_without_a_calibration_nothing_changes(self):
        self.manifest("")
        _, alpha = self.grade([400.0] * 5, [4000.0] * 5)
        self.assertEqual((alpha["ratio"], alpha["ratio_raw"], alpha["perf_points"]), (10.0, 10.0, 2.0))
        self.assertIsNone(alpha["calibration"])
        self.assertEqual(alpha["copy_gbps"], 3000.0)  # recorded all the same: a calibration needs it
        self.assertIn("; ratio 10.00 of cpu_base (target 20), 95 % interval", alpha["reason"])

    def test_the_interval_and_its_rerun_use_the_scored_ratio(self):
        count = Path(self._tmp.name) / "count"
        # the measured baseline is noisy around the target (its interval straddles 20), the
        # exercise is calm: scored against the calibration, nothing straddles, one run
        _, alpha = self.grade([200.0] * 5, [3000.0, 5000.0, 4000.0, 3500.0, 4500.0], count=count)
        self.assertEqual(count.read_text().count("run"), 1)
        self.assertEqual((alpha["ratio"], alpha["ratio_interval"]), (20.0, [20.0, 20.0]))
        # a noisy exercise around the scored target runs twice
        count.unlink()
        _, noisy = self.grade([250.0, 166.7, 200.0, 220.0, 180.0], [4000.0] * 5, count=count)
        self.assertEqual(count.read_text().count("run"), 2)
        self.assertEqual(noisy["repetitions"], 10)

    def test_a_bad_calibration_stops_the_grader_with_its_key(self):
        self.manifest(CALIBRATION.replace("copy_gbps = 3000.0", 'copy_gbps = "fast"'))
        code, _, err = self.tree.grade("--no-build", "--perf", "--fast", "1.1")
        self.assertEqual(code, 2)
        self.assertIn("exercise 1.1: perf.calibration.copy_gbps must be a number > 0 (got 'fast')", err)
        self.assertNotIn("Traceback", err)

    def test_implausible_judges_the_scored_ratio(self):
        # target 20: more than 400 x is not believed. Measured here 200 x (believed), at the
        # calibration host's speed 800 x: refused
        _, alpha = self.grade([5.0] * 5, [1000.0] * 5)
        self.assertEqual((alpha["perf_verdict"], alpha["perf_points"], alpha["ratio"]), ("implausible", 0, 800.0))
        self.assertIn("perf: no speed points, implausible: 800.00 x the baseline's speed, more than the 400 x",
                      alpha["reason"])
        self.assertIsNone(leaderboard._ratio(alpha))
        # measured here 800 x (a slow host), at the calibration host's speed 200 x: believed
        self.manifest(CALIBRATION.replace("4.0e6", "1.0e6"))
        _, slow_host = self.grade([5.0] * 5, [4000.0] * 5)
        self.assertEqual((slow_host["perf_verdict"], slow_host["perf_points"], slow_host["ratio"]),
                         ("ok", 4, 200.0))
        self.assertEqual(slow_host["ratio_raw"], 800.0)


# The demo manifest's 1.1 with its reference solution's ratio on two GPUs: 0.6 on the calibration
# GPU, where the target 0.5 was set, and 0.3 on a "Fake H200", where its baseline runs twice as fast.
REFERENCE = """
[exercise.perf.reference]
"NVIDIA H100 80GB HBM3" = 0.6
"Fake H200" = 0.3
"""


class TargetOnAnotherGpuTest(GradeTestCase):
    """run_perf where the manifest records the reference solution's ratio per GPU: the target
    moves with it (docs/guides/grading.md, "A target on another GPU")."""

    def setUp(self):
        super().setUp()
        self.manifest(MOVED_DEMO)
        # no reference solution built beside the checkers: the table alone moves a target
        # (TargetMeasuredHereTest measures the reference where its runner is built)
        (self.tree.bin / "alpha_runner_solution").unlink(missing_ok=True)

    def manifest(self, text: str) -> None:
        write_manifest(self, text)

    def grade(self, device, mine_us, base_us, copy_gbps="3000.0", baseline="cub_base"):
        context = {"copy_bandwidth_gbps": copy_gbps}
        if device is not None:
            context["device"] = device
        return grade_perf(self, reps("alpha/int32/1024", mine_us) + reps(f"{baseline}/int32/1024", base_us),
                          context)

    def test_a_listed_gpu_scales_the_target(self):
        # 0.25 of the baseline on the Fake H200: the target there is 0.5 x 0.3 / 0.6 = 0.25, met
        data, alpha = self.grade("Fake H200", [4000.0] * 5, [1000.0] * 5)
        self.assertEqual((alpha["ratio"], alpha["perf_points"]), (0.25, 4))
        self.assertEqual((alpha["target"], alpha["target_calibration"], alpha["target_scale"],
                          alpha["target_device"]), (0.25, 0.5, 0.5, "NVIDIA H100 80GB HBM3"))
        self.assertIn("; ratio 0.25 of cub_base (target 0.25 on Fake H200 = 0.5 on the H100 x 0.50, "
                      "the reference's ratio here over there), 95 % interval", alpha["reason"])
        output = data["tests"][0]["output"]
        self.assertIn("target: 0.25, the 0.5 set on NVIDIA H100 80GB HBM3 times 0.5, the reference "
                      "solution's ratio on Fake H200, 0.3, over its 0.6 there", output)
        self.assertIn("speed measured on Fake H200; targets set on NVIDIA H100 80GB HBM3, moved to this "
                      "GPU by the reference solution's ratio here over there for 1 of 1 exercise(s)",
                      data["output"])
        # half of it earns half the points, as against any target
        _, slow = self.grade("Fake H200", [8000.0] * 5, [1000.0] * 5)
        self.assertEqual((slow["ratio"], slow["perf_points"]), (0.125, 2.0))

    def test_names_match_by_whitespace_and_case_only(self):
        _, alpha = self.grade("fake  h200", [4000.0] * 5, [1000.0] * 5)
        self.assertEqual((alpha["target"], alpha["target_scale"]), (0.25, 0.5))
        _, other = self.grade("Fake H200 NVL", [4000.0] * 5, [1000.0] * 5)
        self.assertEqual((other["target"], other["target_scale"]), (0.5, None))

    def test_the_calibration_gpu_keeps_the_target(self):
        data, alpha = self.grade("NVIDIA H100 80GB HBM3", [4000.0] * 5, [1000.0] * 5)
        self.assertEqual((alpha["ratio"], alpha["perf_points"]), (0.25, 2.0))
        self.assertEqual((alpha["target"], alpha["target_calibration"], alpha["target_scale"]), (0.5, 0.5, 1.0))
        self.assertIn("; ratio 0.25 of cub_base (target 0.5), 95 % interval", alpha["reason"])
        self.assertIn("target: 0.5, set on this GPU, NVIDIA H100 80GB HBM3", data["tests"][0]["output"])
        self.assertIn("speed measured on NVIDIA H100 80GB HBM3, the GPU the targets were set on", data["output"])

    def test_an_unlisted_gpu_keeps_the_target_and_says_why(self):
        for device in ("NVIDIA H100 PCIe", None):  # never the H100 SXM's ratio by a near name
            with self.subTest(device=device):
                data, alpha = self.grade(device, [4000.0] * 5, [1000.0] * 5)
                self.assertEqual((alpha["ratio"], alpha["perf_points"]), (0.25, 2.0))
                self.assertEqual((alpha["target"], alpha["target_scale"]), (0.5, None))
                self.assertIn(f"(target 0.5, the H100's: no reference ratio for {device or 'this GPU'}), ",
                              alpha["reason"])
                self.assertIn("target: 0.5, as set on the calibration GPU, NVIDIA H100 80GB HBM3: this "
                              "exercise has no reference solution's ratio for ", data["tests"][0]["output"])

    def test_without_a_table_nothing_changes(self):
        self.manifest(tg.MANIFEST)
        _, alpha = self.grade("Fake H200", [4000.0] * 5, [1000.0] * 5)
        self.assertEqual((alpha["target"], alpha["target_scale"], alpha["perf_points"]), (0.5, None, 2.0))
        self.assertIn("; ratio 0.25 of cub_base (target 0.5), 95 % interval", alpha["reason"])

    def test_a_host_baseline_on_a_listed_gpu_is_not_scaled_by_the_copy_bandwidth(self):
        # calibrated at 4000 us on a GPU that copies at 3000 GB/s; the reference's ratio 25 there,
        # 50 on the Fake H200 (a latency-bound kernel gains more than the copy bandwidth says)
        self.manifest(MOVED_DEMO.replace('baseline = "cub_base/int32/1024"\nratio = 0.5\n',
                                         'baseline = "cpu_base/int32/1024"\nratio = 20.0\n')
                      .replace(REFERENCE, CALIBRATION + REFERENCE.replace("0.6", "25.0").replace("0.3", "50.0")))
        # 100 us on a GPU with twice the copy bandwidth: 40 x the calibration's 4000 us, as measured
        data, alpha = self.grade("Fake H200", [100.0] * 5, [2000.0] * 5, copy_gbps="6000.0", baseline="cpu_base")
        self.assertEqual((alpha["ratio"], alpha["ratio_raw"], alpha["perf_points"]), (40.0, 20.0, 4))
        self.assertEqual((alpha["target"], alpha["target_scale"]), (40.0, 2.0))
        self.assertEqual(alpha["calibration"], {"device": "Fake H100", "host": "Fake Xeon",
                                                "host_speed": 2.0, "gpu_scale": None})
        self.assertIn("ratio 40.00 of cpu_base at the calibration host's speed (target 40 on Fake H200 = "
                      "20 on the H100 x 2.00, the reference's ratio here over there, measured here 20.00)",
                      alpha["reason"])
        self.assertIn("your GPU time as measured", data["tests"][0]["output"])
        # the same exercise on an unlisted GPU: scaled by the copy bandwidths, as without a table
        _, other = self.grade("Fake B200", [100.0] * 5, [2000.0] * 5, copy_gbps="6000.0", baseline="cpu_base")
        self.assertEqual((other["ratio"], other["target"], other["target_scale"]), (20.0, 20.0, None))
        self.assertEqual(other["calibration"]["gpu_scale"], 2.0)

    def test_implausible_moves_with_the_target(self):
        # target 0.25 on the Fake H200: more than 20 x that, 5, is not believed; 6 is refused, which
        # would stand against the calibration GPU's target of 0.5
        _, alpha = self.grade("Fake H200", [1000.0] * 5, [6000.0] * 5)
        self.assertEqual((alpha["perf_verdict"], alpha["perf_points"]), ("implausible", 0))
        self.assertIn("more than the 5 x believed", alpha["reason"])


class TargetMeasuredHereTest(GradeTestCase):
    """run_perf on a GPU the reference table leaves out, where the reference solution's runner is
    built: the reference's ratio is measured in the same run and the target moves with it
    (docs/guides/grading.md, "A target on another GPU")."""

    def setUp(self):
        super().setUp()
        write_manifest(self, MOVED_DEMO)

    def grade(self, device, mine_us, ref_us, base_us=1000.0, reference_built=True, env=None):
        # one benchmark program: the student's times, or the reference's when the checker's
        # runner is the reference solution's (CUDALAB_RUNNER ends in _runner_solution)
        def doc(times):
            return {"context": {"device": device, "copy_bandwidth_gbps": "3000.0"},
                    "benchmarks": reps("alpha/int32/1024", times) + reps("cub_base/int32/1024", [base_us] * 5)}
        calls = self.tree.root / "bench-calls.txt"
        _write_exe(self.tree.bin / "alpha_bench_starter", f"""
            import json, os, sys
            ref = os.environ.get("CUDALAB_RUNNER", "").endswith("alpha_runner_solution")
            sandboxed = bool(os.environ.get("CUDALAB_RUNNER_PREFIX"))
            with open({str(calls)!r}, "a") as f:
                f.write(("reference" if ref else "student") + ("-sandboxed" if sandboxed else "") + "\\n")
            for a in sys.argv[1:]:
                if a.startswith("--benchmark_out="):
                    with open(a.split("=", 1)[1], "w") as f:
                        json.dump({doc(ref_us)!r} if ref else {doc(mine_us)!r}, f)
        """)
        runner = self.tree.bin / "alpha_runner_solution"
        if reference_built:
            _write_exe(runner, "import sys\nsys.exit(0)\n")
        elif runner.exists():
            runner.unlink()
        if calls.exists():
            calls.unlink()
        self.tree.passing("alpha")
        with mock.patch.dict(os.environ, env or {}):
            _, data, _ = self.tree.grade_json("--no-build", "--perf", "--fast", "1.1")
        return data, self.exercise(data, "1.1"), calls.read_text().split()

    def test_an_unlisted_gpu_measures_the_reference(self):
        # the reference runs at 0.3 of the baseline here (0.6 on the H100): the target 0.5 moves to
        # 0.25, and the student's 0.25 meets it
        data, alpha, calls = self.grade("Fake T4", [4000.0] * 5, [3333.3] * 5)
        self.assertEqual(calls, ["student", "reference"])
        self.assertEqual((alpha["ratio"], alpha["target"], alpha["target_scale"], alpha["target_reference"],
                          alpha["perf_points"]), (0.25, 0.25, 0.5, 0.3, 4))
        self.assertIn("(target 0.25 on Fake T4 = 0.5 on the H100 x 0.50, the reference's ratio measured "
                      "here over there)", alpha["reason"])
        self.assertIn("the reference solution's ratio measured by this grader on Fake T4, 0.30, over its "
                      "0.6 there", data["tests"][0]["output"])
        self.assertIn("(1 measured in this run)", data["output"])

    def test_grade_builds_the_reference_runner_where_it_may_be_measured(self):
        from cudalab_grade import build, clisetup, grading
        from cudalab_grade.manifest import load_all
        exercises = [e for c in load_all(self.tree.root) for e in c.exercises]
        src = self.tree.root / "solutions" / "01-demo" / "alpha.cu"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text("// the reference\n")
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build, perf=True)
        cases = ((["Fake T4"], True), (["Fake H200"], False), (["Fake H200", "Fake T4"], True), (None, True))
        for names, wanted in cases:
            with self.subTest(names=names), mock.patch.object(build, "gpu_names", return_value=names):
                self.assertEqual("alpha_runner_solution" in clisetup.wanted_targets(exercises, opts), wanted)
        with mock.patch.object(build, "gpu_names", return_value=["Fake H200"]), \
                mock.patch.dict(os.environ, {"CUDALAB_MEASURE_REFERENCE": "1"}):
            self.assertIn("alpha_runner_solution", clisetup.wanted_targets(exercises, opts))
        # never without --perf, never without the reference's source (--solutions grades the
        # reference itself: reference_needed says no)
        with mock.patch.object(build, "gpu_names", return_value=["Fake T4"]):
            plain = grading.Options(root=self.tree.root, build_dir=self.tree.build)
            self.assertNotIn("alpha_runner_solution", clisetup.wanted_targets(exercises, plain))
            ref = grading.Options(root=self.tree.root, build_dir=self.tree.build, perf=True,
                                  implementation="solution")
            self.assertFalse(clisetup.reference_needed(exercises[0], ref, ["Fake T4"]))
        src.unlink()
        with mock.patch.object(build, "gpu_names", return_value=["Fake T4"]):
            self.assertNotIn("alpha_runner_solution", clisetup.wanted_targets(exercises, opts))

    def test_one_grader_measures_each_reference_once(self):
        # a class is graded by threads of one process: the second submission on the same GPU
        # reuses the first one's measurement
        from cudalab_grade import grading
        from cudalab_grade.manifest import load_all
        self.grade("Fake T4", [4000.0] * 5, [3333.3] * 5)  # writes the programs
        calls = self.tree.root / "bench-calls.txt"
        calls.unlink()
        ex = next(e for c in load_all(self.tree.root) for e in c.exercises if e.id == "1.1")
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build, perf=True)
        with mock.patch.dict(os.environ, self.tree.env), \
                mock.patch.dict(grading._REFERENCE_MEASURED, clear=True):
            for _ in range(2):
                res = grading.Result(ex, 14.0, "passed")
                grading.run_perf(ex, opts, res)
                self.assertEqual((res.target, res.target_reference), (0.25, 0.3))
        self.assertEqual(calls.read_text().split(), ["student", "reference", "student"])

    def test_the_reference_runs_outside_the_students_sandbox(self):
        # class grading's sandbox shows the student's build alone; the reference solution's runner,
        # the course's own code, runs without it
        from cudalab_grade import grading
        from cudalab_grade.manifest import load_all
        self.grade("Fake T4", [4000.0] * 5, [3333.3] * 5)  # writes the programs
        (self.tree.root / "bench-calls.txt").unlink()
        ex = next(e for c in load_all(self.tree.root) for e in c.exercises if e.id == "1.1")
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build, perf=True,
                               runner_prefix=["env"], implementation="starter")
        res = grading.Result(ex, 14.0, "passed")
        with mock.patch.dict(os.environ, self.tree.env), \
                mock.patch.dict(grading._REFERENCE_MEASURED, clear=True):
            grading.run_perf(ex, opts, res)
        self.assertEqual((self.tree.root / "bench-calls.txt").read_text().split(),
                         ["student-sandboxed", "reference"])
        self.assertEqual((res.target, res.target_reference), (0.25, 0.3))

    def test_a_listed_gpu_uses_the_table_unless_asked(self):
        _, alpha, calls = self.grade("Fake H200", [4000.0] * 5, [2000.0] * 5)
        self.assertEqual(calls, ["student"])
        self.assertEqual((alpha["target"], alpha["target_reference"]), (0.25, None))
        # CUDALAB_MEASURE_REFERENCE=1: measured on every GPU (here 0.5: the target becomes 0.417)
        _, forced, calls = self.grade("Fake H200", [4000.0] * 5, [2000.0] * 5,
                                      env={"CUDALAB_MEASURE_REFERENCE": "1"})
        self.assertEqual(calls, ["student", "reference"])
        self.assertEqual((forced["target"], forced["target_reference"]), (0.417, 0.5))

    def test_without_the_reference_runner_the_target_stays_and_says_why(self):
        _, alpha, calls = self.grade("Fake T4", [4000.0] * 5, [3333.3] * 5, reference_built=False)
        self.assertEqual(calls, ["student"])
        self.assertEqual((alpha["target"], alpha["target_scale"], alpha["perf_points"]), (0.5, None, 2.0))
        self.assertIn("(target 0.5, the H100's: no reference ratio for Fake T4)", alpha["reason"])

    def test_a_failed_reference_run_keeps_the_target_and_says_why(self):
        data, alpha, calls = self.grade("Fake T4", [4000.0] * 5, [0.0] * 5)
        self.assertEqual(calls, ["student", "reference"])
        self.assertEqual((alpha["target"], alpha["target_scale"]), (0.5, None))
        self.assertIn("target: the reference solution's speed could not be measured here: zero time",
                      data["tests"][0]["output"])


MOVED_DEMO = tg.MANIFEST.replace('ratio = 0.5\npoints = 4\n', 'ratio = 0.5\npoints = 4\n' + REFERENCE)


if __name__ == "__main__":
    unittest.main()
