"""Tests of the smallest failing case (tools/cudalab_grade/shrink.py), without a GPU.

The course tree and its fake tools are test_grade's; the test program here is a
fake size battery: `Sizes/Alpha.Random/n<size>` for each size (and a plain
`Alpha.Host`), honouring --gtest_filter and --gtest_list_tests (with gtest's
`# GetParam() = n` comments), writing a gtest JSON report and printing gtest's
[ RUN ]/[  FAILED  ] lines. Each test's seed is its own (`SEEDS`, default the
size) unless CUDALAB_SEED is set, and a test fails when `FAILS` (a Python
expression of n and seed) is true.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from test_grade import Tree, _write_exe  # also puts tools/ on sys.path

from cudalab_grade import grading, shrink  # noqa: E402
from cudalab_grade.manifest import load_all  # noqa: E402

SIZES = [0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4097]
SEED = 1234  # the seed of the n1025 test (every other test's seed is its size)


def fake_battery(path: Path, fails: str, sizes=SIZES, seeds=None, body="Random",
                 on_rerun: str = "", per_test: str = "", host_fails: bool = False) -> None:
    """The fake checker. `on_rerun` runs at the start of a run with CUDALAB_SEED set (the
    search's rerun); `per_test` runs before each test (n, seed and rerun are known);
    `host_fails`: Alpha.Host, a test not parameterized by size, fails."""
    seeds = {1025: SEED} if seeds is None else seeds
    _write_exe(path, f"""
        import fnmatch, json, os, signal, sys, time
        names = ["Sizes/Alpha.{body}/n%d" % n for n in {sizes!r}] + ["Alpha.Host"]
        flt = "*"
        for a in sys.argv[1:]:
            if a.startswith("--gtest_filter="):
                flt = a.split("=", 1)[1]
        pos = flt.split("-")[0].split(":")
        chosen = [t for t in names if any(fnmatch.fnmatchcase(t, p) for p in pos)]
        if "--gtest_list_tests" in sys.argv:
            suite = None
            for t in chosen:
                s, rest = t.split(".", 1)
                if s != suite:
                    print(s + ".")
                    suite = s
                print("  " + rest + ("  # GetParam() = " + rest.split("/n")[1] if "/n" in rest else ""))
            sys.exit(0)
        env_seed = os.environ.get("CUDALAB_SEED")
        rerun = env_seed is not None
        with open(os.environ["FAKE_LOG"], "a") as log:
            log.write(json.dumps({{"argv": sys.argv, "seed": env_seed,
                                  "runner": os.environ.get("CUDALAB_RUNNER"),
                                  "prefix": os.environ.get("CUDALAB_RUNNER_PREFIX"),
                                  "extra": os.environ.get("EXTRA_VAR")}}) + "\\n")
        if rerun:
            {on_rerun or "pass"}
        suites = {{}}
        bad = 0
        for t in chosen:
            n = int(t.rsplit("/n", 1)[1]) if "/n" in t else None
            seed = int(env_seed) if rerun else {seeds!r}.get(n, n if n is not None else 7)
            {per_test or "pass"}
            print("[ RUN      ] " + t, flush=True)
            entry = {{"name": t.split(".", 1)[1], "status": "RUN", "result": "COMPLETED"}}
            if (n is not None and ({fails})) or (n is None and {host_fails!r}):
                bad += 1
                entry["failures"] = [{{"failure": "[1.1 alpha] n = %s, seed = %d\\n  rerun: "
                    "CUDALAB_SEED=%d prog --gtest_filter='%s'\\n  wrong sum" % (n, seed, seed, t),
                    "type": ""}}]
                print("[  FAILED  ] %s, where GetParam() = %s (0 ms)" % (t, n), flush=True)
            else:
                print("[       OK ] " + t + " (0 ms)", flush=True)
            suites.setdefault(t.split(".", 1)[0], []).append(entry)
        for a in sys.argv[1:]:
            if a.startswith("--gtest_output=json:"):
                with open(a.split(":", 1)[1], "w") as f:
                    json.dump({{"testsuites": [{{"name": s, "testsuite": v}}
                                              for s, v in suites.items()]}}, f)
        sys.exit(1 if bad else 0)
    """)


class ShrinkTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-shrink-")
        self.tree = Tree(Path(self._tmp.name))
        self.tree.passing("beta")
        self.exe = self.tree.bin / "alpha_test_starter"
        self.ex = next(e for c in load_all(self.tree.root) for e in c.exercises if e.id == "1.1")

    def tearDown(self):
        self._tmp.cleanup()

    def grade(self, **kw):
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build, **kw)
        with mock.patch.dict(os.environ, self.tree.env):
            return grading.grade(self.ex, opts)

    def reruns(self):
        """The runs of the checker with CUDALAB_SEED set (the search's)."""
        return [r for r in self.tree.runs() if r["seed"] is not None]

    def assert_graded_the_same(self, res, failed=1, total=14):
        """The verdict, points and reason are those of the graded run alone."""
        self.assertEqual(res.status, "failed")
        self.assertEqual(res.points, 0.0)
        self.assertEqual(res.tests, f"{total - failed}/{total}")
        self.assertEqual(res.reason, f"{failed} of {total} tests failed (all must pass for the points)")


class SmallestFailingCaseTest(ShrinkTestCase):
    def test_failure_at_1025_that_fails_at_33_but_not_32(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 33")
        res = self.grade()
        self.assert_graded_the_same(res)
        self.assertIn("FAILED Sizes/Alpha.Random/n1025", res.details[0])
        line = res.details[-1]
        self.assertEqual(line, (
            "smallest failing case: Sizes/Alpha.Random fails already at n = 33 "
            f"(one warp plus one) with seed {SEED}\n"
            f"rerun: CUDALAB_SEED={SEED} build/default/bin/alpha_test_starter "
            "--gtest_filter='Sizes/Alpha.Random/n33'"))
        # one rerun, of the battery's sizes below 1025 only, with the failure's seed
        (rerun,) = self.reruns()
        self.assertEqual(rerun["seed"], str(SEED))
        flt = next(a for a in rerun["argv"] if a.startswith("--gtest_filter="))
        self.assertEqual(flt.split("=", 1)[1].split(":"),
                         [f"Sizes/Alpha.Random/n{n}" for n in SIZES if n < 1025])
        self.assertTrue(any(a.startswith("--gtest_output=json:") for a in rerun["argv"]))

    def test_rerun_goes_the_way_of_the_graded_run(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 33")
        prefix = ["env", "SANDBOXED=1"]
        res = self.grade(runner_prefix=prefix, extra_env={"EXTRA_VAR": "x"})
        self.assertIn("n = 33", res.details[-1])
        graded = [r for r in self.tree.runs() if r["seed"] is None]
        for run in graded[:1] + self.reruns():
            self.assertEqual(run["runner"], str((self.tree.bin / "alpha_runner_starter").resolve()))
            self.assertEqual(json.loads(run["prefix"]), prefix)
            self.assertEqual(run["extra"], "x")

    def test_no_smaller_failing_size_adds_nothing(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 1025")
        res = self.grade()
        self.assert_graded_the_same(res)
        self.assertEqual(len(res.details), 1)  # the failure alone
        self.assertEqual(len(self.reruns()), 1)  # it looked

    def test_smallest_size_of_the_battery_adds_nothing(self):
        fake_battery(self.exe, "n == 0")
        res = self.grade()
        self.assert_graded_the_same(res)
        self.assertEqual(len(res.details), 1)
        self.assertEqual(self.reruns(), [])  # nothing below n = 0 to run

    def test_not_parameterized_by_size_adds_nothing(self):
        fake_battery(self.exe, "False", host_fails=True)
        res = self.grade()
        self.assert_graded_the_same(res)
        self.assertEqual(len(res.details), 1)
        self.assertEqual(self.reruns(), [])

    def test_budget_is_respected(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 33", on_rerun="time.sleep(60)")
        start = time.monotonic()
        res = self.grade(shrink_budget=2.0)
        self.assertLess(time.monotonic() - start, 15)
        self.assert_graded_the_same(res)
        self.assertEqual(len(res.details), 1)
        self.assertEqual(len(self.reruns()), 1)

    def test_slow_rerun_keeps_what_it_finished(self):
        # n = 33 fails, then the run hangs at 255 until the budget kills it
        fake_battery(self.exe, f"seed == {SEED} and n >= 33",
                     per_test="if rerun and n == 255: time.sleep(60)")
        res = self.grade(shrink_budget=3.0)
        self.assert_graded_the_same(res)
        self.assertIn("fails already at n = 33", res.details[-1])

    def test_crashing_rerun_does_not_break_grading(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 33",
                     on_rerun="os.kill(os.getpid(), signal.SIGSEGV)")
        res = self.grade()
        self.assert_graded_the_same(res)
        self.assertEqual(len(res.details), 1)
        self.assertEqual(len(self.reruns()), 1)

    def test_crash_after_a_failure_keeps_the_failure(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 33",
                     per_test="if rerun and n == 255: os.kill(os.getpid(), signal.SIGSEGV)")
        res = self.grade()
        self.assert_graded_the_same(res)
        self.assertIn("fails already at n = 33 (one warp plus one)", res.details[-1])

    def test_search_errors_are_swallowed(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 33")
        with mock.patch.object(shrink, "_rerun", side_effect=RuntimeError("boom")):
            res = self.grade()
        self.assert_graded_the_same(res)
        self.assertEqual(len(res.details), 1)

    def test_reruns_are_bounded(self):
        # five failing bodies, each at its n1025 only, all shown: three searched
        failed = [(f"Sizes/Alpha.{b}/n1025", f"n = 1025, seed = {SEED}") for b in "ABCDE"]
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build)
        calls = []

        def rerun(ex, opts, exe, body, sizes, seed, limit):
            calls.append(body)
            return [33]
        with mock.patch.dict(os.environ, self.tree.env), \
                mock.patch.object(shrink, "_list", return_value=[
                    f"Sizes/Alpha.{b}/n{n}" for b in "ABCDE" for n in SIZES]), \
                mock.patch.object(shrink, "_rerun", side_effect=rerun):
            out = shrink.lines(self.ex, opts, failed, shown=5)
        self.assertEqual(calls, ["Sizes/Alpha.A", "Sizes/Alpha.B", "Sizes/Alpha.C"])
        self.assertEqual(len(out), 3)

    def test_sizes_per_rerun_are_bounded(self):
        many = list(range(100)) + [1025]
        failed = [("Sizes/Alpha.Random/n1025", f"n = 1025, seed = {SEED}")]
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build)
        with mock.patch.object(shrink, "_list", return_value=[
                f"Sizes/Alpha.Random/n{n}" for n in reversed(many)]), \
                mock.patch.object(shrink, "_rerun", return_value=[]) as rerun:
            self.assertEqual(shrink.lines(self.ex, opts, failed), [])
        self.assertEqual(rerun.call_args.args[4], list(range(shrink.MAX_SIZES)))  # smallest first

    def test_smaller_failure_of_the_graded_run_needs_no_rerun(self):
        # the shown failure is at 1025, the report also has 33 (not among the first shown)
        failed = [("Sizes/Alpha.Random/n1025", "n = 1025, seed = 5"),
                  ("Sizes/Alpha.Random/n33", "n = 33, seed = 9")]
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build, seed=9)
        with mock.patch.object(shrink, "_rerun") as rerun:
            out = shrink.lines(self.ex, opts, failed, shown=1)
        rerun.assert_not_called()  # --seed: every size already ran with seed 9
        self.assertEqual(out, [
            "smallest failing case: Sizes/Alpha.Random fails already at n = 33 (one warp plus one)"
            " with seed 9\nrerun: CUDALAB_SEED=9 build/default/bin/alpha_test_starter "
            "--gtest_filter='Sizes/Alpha.Random/n33'"])

    def test_with_seed_flag_no_rerun(self):
        fake_battery(self.exe, "seed == 5 and n >= 1025")
        res = self.grade(seed=5)
        self.assert_graded_the_same(res, failed=2)  # n1025 and n4097
        self.assertEqual(len(res.details), 2)
        self.assertEqual(len(self.tree.runs()), 1)  # the graded run only

    def test_off_for_class_grading_and_on_request(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 33")
        res = self.grade(checker_bin=self.tree.bin)  # class grading: off by default
        self.assertEqual(len(res.details), 1)
        res = self.grade(shrink=False)
        self.assertEqual(len(res.details), 1)
        self.assertEqual(self.reruns(), [])
        res = self.grade(checker_bin=self.tree.bin, shrink=True)
        self.assertIn("n = 33", res.details[-1])

    def test_hidden_failures_are_not_searched(self):
        failed = [("(hidden) Sizes/Alpha.Random/n1025", f"n = 1025, seed = {SEED}"),
                  ("(tests that did not run)", "1 of the 14 tests did not run")]
        opts = grading.Options(root=self.tree.root, build_dir=self.tree.build)
        with mock.patch.object(shrink, "_rerun") as rerun, mock.patch.object(shrink, "_list") as ls:
            self.assertEqual(shrink.lines(self.ex, opts, failed), [])
        rerun.assert_not_called()
        ls.assert_not_called()

    def test_tools_grade_prints_it(self):
        fake_battery(self.exe, f"seed == {SEED} and n >= 33")
        code, out, _ = self.tree.grade("--no-build", "-q", "1.1", "1.2")
        self.assertEqual(code, 0)
        self.assertIn("0.0/10", out)
        self.assertIn("smallest failing case: Sizes/Alpha.Random fails already at n = 33 "
                      "(one warp plus one)", out)
        self.assertIn(f"rerun: CUDALAB_SEED={SEED} build/default/bin/alpha_test_starter "
                      "--gtest_filter='Sizes/Alpha.Random/n33'", out)


class ReadingTest(unittest.TestCase):
    def test_readings(self):
        cases = {0: "an empty input", 1: "a single element", 5: "less than one warp",
                 31: "one less than a warp", 32: "exactly one warp", 33: "one warp plus one",
                 96: "3 warps", 256: "256 = 2^8, a block or tile size",
                 257: "one more than 256 = 2^8, a block or tile size",
                 1023: "one less than 1024 = 2^10, the largest block",
                 4097: "one more than 4096 = 2^12, a block or tile size",
                 65537: "one more than 2^16 = 65536", (1 << 20) + 7: "2^20 + 7",
                 1000003: "a prime, on no warp, block or tile boundary", 100: ""}
        for n, want in cases.items():
            self.assertEqual(shrink.reading(n), want, n)

    def test_split(self):
        self.assertEqual(shrink.split("Sizes/ReduceSumVectorized.Int32Random/n1025"),
                         ("Sizes/ReduceSumVectorized.Int32Random", 1025))
        for name in ("Alpha.T1", "Nodes/HeapMinChild.Order/nodes12", "Sizes/X.Y/n1*",
                     "(hidden) Sizes/X.Y/n3"):
            self.assertIsNone(shrink.split(name))

    def test_listing_reads_gtest_comments(self):
        with tempfile.TemporaryDirectory() as d:
            tree = Tree(Path(d))
            fake_battery(tree.bin / "alpha_test_starter", "False")
            opts = grading.Options(root=tree.root, build_dir=tree.build)
            with mock.patch.dict(os.environ, tree.env):
                names = shrink._list(tree.bin / "alpha_test_starter", "*Alpha*", opts, 10)
        self.assertEqual(names, [f"Sizes/Alpha.Random/n{n}" for n in SIZES] + ["Alpha.Host"])


if __name__ == "__main__":
    unittest.main()
