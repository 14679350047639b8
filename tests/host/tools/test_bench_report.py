"""Unit tests of tools/bench-report on a synthetic Google Benchmark JSON file."""
from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

from toolload import ROOT, load_tool




br = load_tool("bench-report", "bench_report")

N_SMALL, N_BIG = 1 << 20, 1 << 24


def aggregates(name: str, time_us: float, bytes_moved: int, cv: float = 0.01) -> list[dict]:
    """The entries --benchmark_repetitions=5 --benchmark_report_aggregates_only writes."""
    out = []
    for agg, factor in (("mean", 1.02), ("median", 1.0), ("stddev", 0.01), ("cv", None)):
        t = cv if factor is None else time_us * factor
        out.append({
            "name": f"{name}/manual_time_{agg}", "run_name": f"{name}/manual_time",
            "run_type": "aggregate", "repetitions": 5, "threads": 1, "aggregate_name": agg,
            "aggregate_unit": "percentage" if agg == "cv" else "time", "iterations": 5,
            "real_time": t, "cpu_time": t, "time_unit": "us",
            "bytes_per_second": bytes_moved / (time_us * 1e-6) * (factor or 1.0),
            "items_per_second": 1e6,
        })
    return out


def synthetic_file(directory: Path, name: str = "sum_fast.json", ms: bool = False) -> Path:
    """A run of exercise 9.1 'sum_fast' beside 'cub_sum' and copy_bandwidth.

    At N_BIG: sum_fast 100 µs (bytes 4N -> 671.09 GB/s), cub 80 µs, copy 8N bytes in 200 µs
    (671.09 GB/s), so ratio = 0.8 and fraction = 1.0; at N_SMALL sum_fast 10 µs,
    cub 5 µs (ratio 0.5), copy 8N in 20 µs (fraction = 4N/10 / (8N/20) = 1.0).
    """
    benchmarks = []
    benchmarks += aggregates(f"sum_fast/int32/{N_SMALL}", 10.0, 4 * N_SMALL)
    benchmarks += aggregates(f"sum_fast/int32/{N_BIG}", 100.0, 4 * N_BIG)
    benchmarks += aggregates(f"cub_sum/int32/{N_SMALL}", 5.0, 4 * N_SMALL)
    benchmarks += aggregates(f"cub_sum/int32/{N_BIG}", 80.0, 4 * N_BIG)
    benchmarks += aggregates(f"copy_bandwidth/int32/{N_SMALL}", 20.0, 8 * N_SMALL)
    benchmarks += aggregates(f"copy_bandwidth/int32/{N_BIG}", 200.0, 8 * N_BIG)
    data = {
        "context": {"date": "2025-11-23T10:30:00+01:00", "executable": "bin/sum_fast_bench_solution",
                    "device": "NVIDIA Test GPU", "sm_count": "132", "cuda_runtime": "13000",
                    "cuda_driver": "13010", "commit": "abc1234"},
        "benchmarks": benchmarks,
    }
    path = directory / name
    path.write_text(json.dumps(data))
    return path


def synthetic_tree(directory: Path, target_ratio: float = 0.75) -> Path:
    chapter = directory / "chapters" / "09-test"
    chapter.mkdir(parents=True)
    (chapter / "exercises.toml").write_text(textwrap.dedent(f"""\
        [chapter]
        number = 9
        dir = "09-test"
        title = "Test chapter"

        [[exercise]]
        id = "9.1"
        slug = "sum_fast"
        title = "A fast sum"
        file = "sum_fast.cu"
        test_filter = "*SumFast*"
        points = 10
        [exercise.perf]
        benchmark = "sum_fast/int32/{N_BIG}"
        baseline = "cub_sum/int32/{N_BIG}"
        ratio = {target_ratio}
        points = 2
        """))
    return directory


class BenchReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def report(self, target_ratio: float = 0.75, files=None):
        root = synthetic_tree(self.dir / f"tree{target_ratio}", target_ratio)
        files = files or [synthetic_file(self.dir)]
        return br.build_report([br.load_results(f) for f in files], br.load_manifests(root), "T")

    def test_split_name(self):
        self.assertEqual(br.split_name("sum_vectorized/int32/268435456/manual_time"),
                         ("sum_vectorized", "int32", 268435456))
        self.assertEqual(br.split_name("copy_bandwidth/int32/1024/repeats:5/manual_time"),
                         ("copy_bandwidth", "int32", 1024))
        self.assertEqual(br.split_name("odd"), ("odd", None, None))

    def test_split_name_with_variant_parts(self):
        # Extra parameters sit between the function and n; n is the "n" counter when known.
        self.assertEqual(br.split_name("hist/uniform/256/268435456/manual_time"),
                         ("hist", "uniform/256", 268435456))
        self.assertEqual(br.split_name("scan/int32/268435456/1024", 268435456),
                         ("scan", "int32/1024", 268435456))
        self.assertEqual(br.split_name("scan/int32/1024/1024", 1024), ("scan", "int32/1024", 1024))
        self.assertEqual(br.split_name("f/int32/big"), ("f", "int32/big", None))

    def test_variant_rows_use_the_copy_at_the_same_n(self):
        path = self.dir / "variants.json"
        entry = lambda name, us, n: {"name": name + "/manual_time", "run_name": name + "/manual_time",
                                     "run_type": "iteration", "real_time": us, "time_unit": "us",
                                     "bytes_per_second": 4 * n / (us * 1e-6), "n": float(n)}
        path.write_text(json.dumps({"context": {}, "benchmarks": [
            entry(f"hist/uniform/256/{N_BIG}", 200.0, N_BIG),
            entry(f"copy_bandwidth/int32/{N_BIG}", 100.0, N_BIG)]}))
        res = br.load_results(path)["results"]
        self.assertIn(("hist", "uniform/256", N_BIG), res)
        copy = br.copy_for(res, ("hist", "uniform/256", N_BIG))
        self.assertAlmostEqual(copy["time_us"], 100.0)
        self.assertIsNone(br.copy_for(res, ("hist", "uniform/256", 7)))

    def test_median_aggregate_is_used(self):
        res = br.load_results(synthetic_file(self.dir))["results"]
        m = res[("sum_fast", "int32", N_BIG)]
        self.assertEqual(m["source"], "median")
        self.assertAlmostEqual(m["time_us"], 100.0)
        self.assertAlmostEqual(m["gbps"], 4 * N_BIG / 100e-6 / 1e9)
        self.assertAlmostEqual(m["cv"], 0.01)

    def test_iteration_entry_without_repetitions_and_units(self):
        path = self.dir / "plain.json"
        path.write_text(json.dumps({"context": {}, "benchmarks": [
            {"name": "f/int32/8/manual_time", "run_name": "f/int32/8/manual_time",
             "run_type": "iteration", "real_time": 2.0, "time_unit": "ms",
             "bytes_per_second": 3e9, "items_per_second": 4.0},
            {"name": "g/int32/8/manual_time", "run_type": "iteration", "error_occurred": True,
             "error_message": "no CUDA device"},
        ]}))
        loaded = br.load_results(path)
        m = loaded["results"][("f", "int32", 8)]
        self.assertEqual(m["source"], "iteration")
        self.assertAlmostEqual(m["time_us"], 2000.0)
        self.assertAlmostEqual(m["gbps"], 3.0)
        self.assertEqual(loaded["errors"], [{"name": "g/int32/8/manual_time", "message": "no CUDA device"}])

    def test_rows_ratios_fractions(self):
        rep = self.report()
        self.assertEqual(len(rep["chapters"]), 1)
        rows = rep["chapters"][0]["rows"]
        ex = [r for r in rows if r["kind"] == "exercise"]
        base = [r for r in rows if r["kind"] == "baseline"]
        self.assertEqual([(r["id"], r["slug"], r["n"]) for r in ex],
                         [("9.1", "sum_fast", N_SMALL), ("9.1", "sum_fast", N_BIG)])
        small, big = ex
        self.assertAlmostEqual(small["time_us"], 10.0)
        self.assertAlmostEqual(small["ratio_to_baseline"], 0.5)
        self.assertAlmostEqual(big["ratio_to_baseline"], 0.8)
        self.assertAlmostEqual(small["fraction_of_copy"], 1.0)
        self.assertAlmostEqual(big["fraction_of_copy"], 1.0)
        self.assertAlmostEqual(big["copy_gbps"], 8 * N_BIG / 200e-6 / 1e9)
        # The baseline's own rows: CUB's GB/s and fraction of copy.
        self.assertEqual([(r["function"], r["n"]) for r in base], [("cub_sum", N_SMALL), ("cub_sum", N_BIG)])
        self.assertAlmostEqual(base[1]["gbps"], 4 * N_BIG / 80e-6 / 1e9)
        self.assertAlmostEqual(base[1]["fraction_of_copy"], 200.0 / 80.0 / 2)
        self.assertEqual(len(rep["chapters"][0]["copy_bandwidth"]), 2)
        self.assertEqual(rep["other"], [])

    def test_the_target_moves_to_the_runs_gpu(self):
        # target 0.9 on the calibration GPU; the reference runs at 0.8 there and 0.6 on a
        # "Fake H200": there the target is 0.9 x 0.6 / 0.8 = 0.675, which the run's 0.8 meets
        root = synthetic_tree(self.dir / "tree", 0.9)
        toml = root / "chapters" / "09-test" / "exercises.toml"
        toml.write_text(toml.read_text() + textwrap.dedent("""\
            [exercise.perf.reference]
            "NVIDIA H100 80GB HBM3" = 0.8
            "Fake H200" = 0.6
            """))
        path = synthetic_file(self.dir)
        for device, target, met in (("Fake H200", 0.675, True), ("NVIDIA H100 80GB HBM3", 0.9, False),
                                    ("Fake T4", 0.9, False)):
            data = json.loads(path.read_text())
            data["context"]["device"] = device
            path.write_text(json.dumps(data))
            rep = br.build_report([br.load_results(path)], br.load_manifests(root), "T")
            (row,) = [r for r in rep["chapters"][0]["rows"] if r.get("target_ratio") is not None]
            self.assertEqual((row["target_ratio"], row["target_met"]), (target, met), device)

    def test_rows_of_another_type_use_the_sibling_baseline_of_that_type(self):
        # Target baseline cub_sum (int32); the exercise's pairs rows (int32_int32) are timed
        # beside cub_sum_pairs, and must be compared with it, not with cub_sum's keys.
        path = synthetic_file(self.dir)
        data = json.loads(path.read_text())
        data["benchmarks"] += aggregates(f"sum_fast/int32_int32/{N_BIG}", 150.0, 8 * N_BIG)
        data["benchmarks"] += aggregates(f"cub_sum_pairs/int32_int32/{N_BIG}", 300.0, 8 * N_BIG)
        path.write_text(json.dumps(data))
        rows = [r for r in self.report(files=[path])["chapters"][0]["rows"] if r["kind"] == "exercise"]
        pairs = [r for r in rows if r["type"] == "int32_int32"]
        self.assertEqual(len(pairs), 1)
        self.assertEqual(pairs[0]["baseline"], "cub_sum_pairs")
        self.assertAlmostEqual(pairs[0]["ratio_to_baseline"], 2.0)
        keys = [r for r in rows if r["type"] == "int32" and r["n"] == N_BIG]
        self.assertEqual(keys[0]["baseline"], "cub_sum")
        self.assertAlmostEqual(keys[0]["ratio_to_baseline"], 0.8)

    def test_target_only_at_manifest_size(self):
        rows = [r for r in self.report(0.75)["chapters"][0]["rows"] if r["kind"] == "exercise"]
        self.assertIsNone(rows[0]["target_ratio"])
        self.assertEqual(rows[1]["target_ratio"], 0.75)
        self.assertTrue(rows[1]["target_met"])
        rep = self.report(0.9)
        rows = [r for r in rep["chapters"][0]["rows"] if r["kind"] == "exercise"]
        self.assertFalse(rows[1]["target_met"])
        self.assertEqual(rep["targets"], {"checked": 1, "met": 0, "missed": ["9.1 sum_fast"]})

    def test_context(self):
        c = self.report()["context"]
        self.assertEqual(c["device"], "NVIDIA Test GPU")
        self.assertEqual(c["sm_count"], "132")
        self.assertEqual(c["cuda_runtime_version"], "13.0")
        self.assertEqual(c["cuda_driver_version"], "13.1")
        self.assertEqual(c["commit"], "abc1234")
        self.assertEqual(c["date_utc"], "2025-11-23 09:30 UTC")

    def test_markdown(self):
        text = br.markdown(self.report(0.75))
        self.assertIn("# T", text)
        self.assertIn("NVIDIA Test GPU (132 SMs)", text)
        self.assertIn("CUDA runtime 13.0, driver 13.1", text)
        self.assertIn("Commit: abc1234", text)
        self.assertIn(br.NOTE, text)
        self.assertIn("Ratios compare runs in the same process; fraction of copy bandwidth = achieved "
                      "GB/s ÷ device-to-device copy GB/s (read + write) measured in the same run.", text)
        self.assertIn("## Chapter 9: Test chapter", text)
        self.assertIn("| exercise | n | time (µs) | GB/s | fraction of copy | ratio to baseline | target |",
                      text)
        big = [line for line in text.splitlines() if line.startswith("| 9.1 sum_fast | 16,777,216")]
        self.assertEqual(len(big), 1, text)
        cells = [c.strip() for c in big[0].strip("|").split("|")]
        self.assertEqual(cells[2], "100.0")
        self.assertEqual(cells[3], "671.09")
        self.assertEqual(cells[4], "1.00")
        self.assertEqual(cells[5], "0.80 × cub_sum")
        self.assertEqual(cells[6], "≥ 0.75 ✓")
        self.assertIn("| cub_sum (baseline, run of 9.1) | 16,777,216 |", text)
        self.assertIn("✗", br.markdown(self.report(0.9)))

    def test_cli_writes_markdown_and_json(self):
        root = synthetic_tree(self.dir / "cli")
        src = synthetic_file(self.dir)
        md, js = self.dir / "out" / "r.md", self.dir / "out" / "r.json"
        with contextlib.redirect_stderr(io.StringIO()):
            rc = br.main([str(src), "--markdown", str(md), "--json", str(js), "--title", "X",
                          "--root", str(root)])
        self.assertEqual(rc, 0)
        self.assertTrue(md.read_text().startswith("# X\n"))
        data = json.loads(js.read_text())
        self.assertEqual(data["chapters"][0]["dir"], "09-test")
        self.assertEqual(data["targets"]["met"], 1)

    def test_bad_file(self):
        bad = self.dir / "bad.json"
        bad.write_text("{not json")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(br.main([str(bad)]), 2)
        self.assertIn("bad.json", err.getvalue())

    def test_plot_skipped_without_matplotlib(self):
        with mock.patch.dict(sys.modules, {"matplotlib": None, "matplotlib.pyplot": None}):
            note = br.write_plot(self.report(), self.dir / "p.png")
        self.assertIn("matplotlib is not installed", note)
        self.assertFalse((self.dir / "p.png").exists())

    def counters_file(self) -> Path:
        """A run of 9.1 with user counters, written as Google Benchmark writes them: the
        counters after the standard keys, so the counter "iterations" repeats that key.

        sum_fast/int32/N_BIG: 5 repetitions, aggregates only (the median holds the medians of
        the counters); cub_sum/int32/N_BIG: Repetitions(1), one plain iteration entry;
        cub_sum/int32/N_SMALL: two plain entries (the median of each counter)."""
        def entry(name: str, run_type: str, agg: str | None, time_us: float, counters: dict) -> str:
            fields = [("name", f"{name}/manual_time" + (f"_{agg}" if agg else "")),
                      ("run_name", f"{name}/manual_time"), ("run_type", run_type),
                      ("repetitions", 5 if agg else 1), ("threads", 1)]
            if agg:
                fields += [("aggregate_name", agg), ("aggregate_unit", "percentage" if agg == "cv" else "time")]
            fields += [("iterations", 7), ("real_time", time_us), ("cpu_time", time_us), ("time_unit", "us"),
                       ("bytes_per_second", 4 * N_BIG / (time_us * 1e-6)), ("items_per_second", 2.5e9)]
            fields += list(counters.items())
            return "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in fields) + "}"
        mine = {"iterations": 12.0, "buckets": 3.0, "level_00_ms": 1.234, "level_01_ms": 0.5,
                "level_02_ms": 0.01234, "n": float(N_BIG)}
        entries = [entry(f"sum_fast/int32/{N_BIG}", "aggregate", "mean", 101.0, dict(mine, iterations=13.0)),
                   entry(f"sum_fast/int32/{N_BIG}", "aggregate", "median", 100.0, mine),
                   entry(f"sum_fast/int32/{N_BIG}", "aggregate", "cv", 0.01, dict(mine, iterations=0.1)),
                   entry(f"cub_sum/int32/{N_BIG}", "iteration", None, 80.0,
                         {"n": float(N_BIG), "reached": 1000.0, "threads": 64.0}),
                   entry(f"cub_sum/int32/{N_SMALL}", "iteration", None, 5.0,
                         {"n": float(N_SMALL), "reached": 10.0}),
                   entry(f"cub_sum/int32/{N_SMALL}", "iteration", None, 6.0,
                         {"n": float(N_SMALL), "reached": 20.0}),
                   entry(f"copy_bandwidth/int32/{N_BIG}", "iteration", None, 200.0, {"n": float(N_BIG)})]
        path = self.dir / "counters.json"
        path.write_text('{"context": {"device": "NVIDIA Test GPU"}, "benchmarks": [' + ",\n".join(entries) + "]}")
        return path

    def test_counters_in_json_rows(self):
        rep = self.report(files=[self.counters_file()])
        rows = {(r["function"], r["n"]): r for r in rep["chapters"][0]["rows"]}
        # The median aggregate's counters; "iterations" is the counter (12), not Google Benchmark's 7.
        self.assertEqual(rows[("sum_fast", N_BIG)]["counters"],
                         {"iterations": 12.0, "buckets": 3.0, "level_00_ms": 1.234, "level_01_ms": 0.5,
                          "level_02_ms": 0.01234})
        # A plain entry (Repetitions(1)): its counters; "threads" repeated is a counter too.
        self.assertEqual(rows[("cub_sum", N_BIG)]["counters"], {"reached": 1000.0, "threads": 64.0})
        # Two plain entries: the median of each counter, as for the time.
        self.assertEqual(rows[("cub_sum", N_SMALL)]["counters"], {"reached": 15.0})
        self.assertAlmostEqual(rows[("cub_sum", N_SMALL)]["time_us"], 5.5)
        self.assertEqual(rep["chapters"][0]["copy_bandwidth"][0]["counters"], {})
        json.dumps(rep)  # still plain JSON

    def test_counters_table_in_markdown(self):
        text = br.markdown(self.report(files=[self.counters_file()]))
        lines = text.splitlines()
        self.assertEqual(lines.count("### Counters"), 1)
        start = lines.index("### Counters")
        self.assertGreater(start, lines.index("## Chapter 9: Test chapter"))
        main = "| exercise | n | time (µs) | GB/s | fraction of copy | ratio to baseline | target |"
        self.assertLess(lines.index(main), start)
        header = ("| benchmark | n | time (µs) | G items/s | buckets | iterations | reached | threads "
                  "| per level (ms) |")
        self.assertIn(header, lines)
        table = lines[lines.index(header) + 2:]
        table = table[:next((i for i, line in enumerate(table) if not line.startswith("|")), len(table))]
        cells = [[c.strip() for c in line.strip("|").split("|")] for line in table]
        self.assertEqual(cells, [
            ["9.1 sum_fast", "16,777,216", "100.0", "2.50", "3", "12", "—", "—", "1.23 · 0.50 · 0.012"],
            ["cub_sum (baseline, run of 9.1)", "1,048,576", "5.5", "2.50", "—", "—", "15", "—", "—"],
            ["cub_sum (baseline, run of 9.1)", "16,777,216", "80.0", "2.50", "—", "—", "1,000", "64", "—"],
        ])
        self.assertIn("per level (ms) = level_00_ms, level_01_ms, … in level order.", text)

    def test_no_counters_no_counters_section(self):
        rep = self.report()
        self.assertTrue(all(r["counters"] == {} for r in rep["chapters"][0]["rows"]))
        text = br.markdown(rep)
        self.assertNotIn("Counters", text)
        self.assertNotIn("per level", text)

    def test_unknown_benchmarks_go_to_other(self):
        path = self.dir / "other.json"
        path.write_text(json.dumps({"context": {}, "benchmarks": [
            {"name": "mystery/int32/8/manual_time", "run_type": "iteration", "real_time": 1.0,
             "time_unit": "us", "bytes_per_second": 1e9}]}))
        rep = self.report(files=[path])
        self.assertEqual(rep["chapters"], [])
        self.assertEqual([r["function"] for r in rep["other"]], ["mystery"])
        self.assertIn("## Other benchmarks", br.markdown(rep))


if __name__ == "__main__":
    unittest.main()
