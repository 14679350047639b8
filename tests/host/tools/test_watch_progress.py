"""Tests of tools/grade --progress and --watch, and of the state file every grade run
writes (.grade/state.json), on test_grade.py's fake course tree: no GPU, no CUDA."""
from __future__ import annotations

import io
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from test_grade import GradeTestCase, Tree, fake_bench, fake_test, gtest_json

from cudalab_grade import progress, watch  # test_grade put tools/ on sys.path
from cudalab_grade.grading import FAILED, PASSED, Result
from cudalab_grade.manifest import load_all


class StateCase(GradeTestCase):
    def state_file(self) -> Path:
        return self.tree.root / ".grade" / "state.json"

    def state(self) -> dict:
        return json.loads(self.state_file().read_text())

    def failing(self, slug: str) -> None:
        fake_test(self.tree.bin / f"{slug}_test_starter",
                  gtest_json([(slug.capitalize(), "T0", "COMPLETED", ["wrong"])]), exit_code=1)


class StateFileTest(StateCase):
    def test_a_grade_run_writes_the_state(self):
        self.tree.passing("alpha")
        self.failing("beta")
        code, _, _ = self.tree.grade("--no-build", "-q", "--fast")
        self.assertEqual(code, 0)
        data = self.state()
        self.assertEqual(data["version"], progress.VERSION)
        starter = data["implementations"]["starter"]
        alpha, beta = starter["1.1"], starter["1.2"]
        self.assertEqual(alpha["slug"], "alpha")
        self.assertEqual((alpha["best"]["status"], alpha["best"]["points"]), (PASSED, 10.0))
        self.assertEqual((beta["last"]["status"], beta["last"]["points"]), (FAILED, 0.0))
        self.assertTrue(alpha["last"]["fast"])
        self.assertFalse(alpha["last"]["perf"])
        self.assertRegex(alpha["last"]["when"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
        self.assertNotIn("solution", data["implementations"])

    def test_best_stays_after_a_later_failure(self):
        self.tree.passing("alpha")
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        self.failing("alpha")
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        alpha = self.state()["implementations"]["starter"]["1.1"]
        self.assertEqual((alpha["best"]["status"], alpha["last"]["status"]), (PASSED, FAILED))
        # the other exercise, never graded, is not in the state
        self.assertNotIn("1.2", self.state()["implementations"]["starter"])

    def test_perf_points_and_ratio(self):
        self.tree.passing("alpha")
        fake_bench(self.tree.bin / "alpha_bench_starter", [
            {"name": "alpha/int32/1024/manual_time_median", "run_name": "alpha/int32/1024/manual_time",
             "run_type": "aggregate", "aggregate_name": "median", "real_time": 2.0, "time_unit": "ms"},
            {"name": "cub_base/int32/1024/manual_time_median", "run_name": "cub_base/int32/1024/manual_time",
             "run_type": "aggregate", "aggregate_name": "median", "real_time": 800.0, "time_unit": "us"},
        ])
        self.tree.grade("--no-build", "-q", "--fast", "--perf", "1.1")
        best = self.state()["implementations"]["starter"]["1.1"]["best"]
        self.assertAlmostEqual(best["ratio"], 0.4)
        self.assertAlmostEqual(best["perf_points"], 3.2)
        self.assertAlmostEqual(best["points"], 13.2)
        self.assertTrue(best["perf"])
        # a later pass without --perf (fewer points) does not replace the best
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        rec = self.state()["implementations"]["starter"]["1.1"]
        self.assertAlmostEqual(rec["best"]["points"], 13.2)
        self.assertEqual(rec["last"]["points"], 10.0)

    def test_solutions_have_their_own_state(self):
        fake_test(self.tree.bin / "alpha_test_solution",
                  gtest_json([("Alpha", "T0", "COMPLETED", [])]))
        self.tree.grade("--no-build", "-q", "--fast", "--solutions", "1.1")
        self.assertEqual(list(self.state()["implementations"]), ["solution"])

    def test_no_gpu_and_unbuilt_record_nothing(self):
        self.tree.gpu = (False, "no NVIDIA driver")
        self.tree.passing("alpha")
        self.assertEqual(self.tree.grade("--no-build", "-q", "1.1")[0], 3)
        self.assertFalse(self.state_file().exists())
        self.tree.gpu = (True, "fake")
        (self.tree.bin / "alpha_test_starter").unlink()  # not built: not the student's doing
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        self.assertFalse(self.state_file().exists())

    def test_corrupt_state_is_set_aside_and_started_afresh(self):
        self.state_file().parent.mkdir(parents=True)
        self.state_file().write_text("{not json")
        self.tree.passing("alpha")
        code, _, _ = self.tree.grade("--no-build", "-q", "--fast", "1.1")
        self.assertEqual(code, 0)
        self.assertEqual(self.state()["implementations"]["starter"]["1.1"]["best"]["status"], PASSED)
        self.assertEqual((self.state_file().parent / "state.json.bad").read_text(), "{not json")

    def test_an_unwritable_state_does_not_stop_grading(self):
        self.state_file().parent.write_text("")  # a file where the folder .grade should be
        self.tree.passing("alpha")
        code, out, err = self.tree.grade("--no-build", "--fast", "1.1")
        self.assertEqual(code, 0)
        self.assertIn("all 3 tests passed", out)
        self.assertIn("could not record your progress", err)


class ProgressTest(StateCase):
    def test_nothing_graded_yet(self):
        code, out, err = self.tree.grade("--progress")
        self.assertEqual((code, err), (0, ""))
        self.assertIn("nothing graded yet", out)
        self.assertIn("tools/grade --watch", out)
        self.tree.probe.assert_not_called()  # no GPU needed
        self.assertEqual(self.tree.calls(), [])  # nothing built

    def test_bars_and_totals(self):
        self.tree.passing("alpha")
        self.failing("beta")
        self.tree.grade("--no-build", "-q", "--fast")
        code, out, _ = self.tree.grade("--progress")
        self.assertEqual(code, 0)
        chapter = next(line for line in out.splitlines() if line.lstrip().startswith("1 01-demo"))
        # 10 of the 20 points possible (1.1: 10 + 4 speed, 1.2: 6), 1 of 2 passed, 0 of 4 speed
        self.assertIn("[##########..........]  50%", chapter)
        self.assertRegex(chapter, r"1/2\s+10/20\s+0/4$")
        total = next(line for line in out.splitlines() if line.startswith("total"))
        self.assertRegex(total, r"1/2\s+10/20\s+0/4$")
        self.assertIn("next: 1.2 beta: Second exercise (starter/01-demo/beta.cu)", out)
        self.assertIn("tools/grade --watch 1.2", out)
        self.assertIn("tools/grade --hint 1.2", out)
        self.assertNotIn("last graded", out)  # no exercise rows without WHAT

    def test_exercise_rows(self):
        self.tree.passing("alpha")
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        self.failing("alpha")
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        _, out, _ = self.tree.grade("--progress", "1")
        rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("1.")}
        self.assertRegex(rows["1.1"], r"alpha\s+passed\s+10/14\s+0/4\s+failed\s+\d{4}-")
        self.assertIn("not graded", rows["1.2"])

    def test_all_passed(self):
        self.tree.passing("alpha")
        self.tree.passing("beta")
        self.tree.grade("--no-build", "-q", "--fast")
        _, out, _ = self.tree.grade("--progress")
        self.assertIn("[################....]  80%", out)  # 16 of 20: no speed points yet
        self.assertIn("every exercise has passed", out)

    def test_corrupt_or_foreign_state_reads_as_nothing_graded(self):
        self.state_file().parent.mkdir(parents=True)
        for text, why in (("{not json", "not valid JSON"), ("[1, 2]", "not a cudalab state file"),
                          ('{"version": 99, "implementations": {}}', "version 99"),
                          ("", "not valid JSON")):
            self.state_file().write_text(text)
            code, out, err = self.tree.grade("--progress")
            self.assertEqual((code, err), (0, ""), text)
            self.assertIn(".grade/state.json could not be read: " + why, out)
            self.assertIn("nothing graded yet", out)

    def test_odd_values_inside_do_not_crash(self):
        self.state_file().parent.mkdir(parents=True)
        self.state_file().write_text(json.dumps({"version": 1, "implementations": {"starter": {
            "1.1": {"best": {"status": "passed", "points": "many", "ratio": "x"}, "last": 3},
            "1.2": "nonsense", "9.9": {"best": {}}}}}))
        code, out, _ = self.tree.grade("--progress", "all")
        self.assertEqual(code, 0)
        self.assertIn("total", out)

    def test_solutions_progress(self):
        fake_test(self.tree.bin / "alpha_test_solution", gtest_json([("Alpha", "T0", "COMPLETED", [])]))
        self.tree.grade("--no-build", "-q", "--fast", "--solutions", "1.1")
        _, out, _ = self.tree.grade("--progress")
        self.assertIn("nothing graded yet for your code in starter/", out)
        _, out, _ = self.tree.grade("--progress", "--solutions")
        self.assertIn("progress of your code in solutions/", out)
        self.assertIn("tools/grade --watch 1.2 --solutions", out)

    def test_hints_stay_after_a_pass(self):
        self.tree.passing("alpha")
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        code, out, _ = self.tree.grade("--hint", "1.1", "--level", "all")
        self.assertEqual(code, 0)
        self.assertIn("hint 1/3: gentle", out)
        self.assertIn("hint 3/3: explicit", out)


class WatchTest(StateCase):
    """--watch with polls of 0 s and a bounded number of them (CUDALAB_WATCH_*); the
    test edits files between polls through watch._sleep."""

    def watch(self, *argv, cycles=8, edits=None):
        """tools/grade --watch ...; edits: poll number -> a function run before that poll."""
        self.tree.env.update(CUDALAB_WATCH_POLL="0", CUDALAB_WATCH_CYCLES=str(cycles))
        self.polls = 0

        def sleep(_seconds):
            self.polls += 1
            if edits and self.polls in edits:
                edits[self.polls]()
        with mock.patch.object(watch, "_sleep", side_effect=sleep):
            return self.tree.grade("--no-build", "--fast", "--watch", *argv)

    def edit(self, slug: str, text: str = "// edited\n", top="starter") -> None:
        p = self.tree.root / top / "01-demo" / f"{slug}.cu"
        p.write_text(p.read_text() + text)

    def graded(self, slug: str) -> int:
        return sum(1 for r in self.tree.runs() if r["argv"][0].endswith(f"{slug}_test_starter")
                   and not any(a.startswith("--gtest_list_tests") for a in r["argv"]))

    def test_regrades_on_change_and_moves_on_after_a_pass(self):
        self.failing("alpha")
        self.failing("beta")

        def fix_alpha():
            self.tree.passing("alpha")
            self.edit("alpha")
        code, out, err = self.watch("1.1", cycles=8, edits={2: fix_alpha})
        self.assertEqual(code, 0, err)
        self.assertEqual(self.graded("alpha"), 2)  # at the start, then once after the edit
        self.assertEqual(self.graded("beta"), 0)  # the next one waits for its own save
        self.assertIn("start: grading 1.1 alpha (starter/01-demo/alpha.cu)", out)
        self.assertIn("changed: grading 1.1 alpha (starter/01-demo/alpha.cu)", out)
        first, second = out.split("changed: grading", 1)
        self.assertIn("1 of 1 tests failed", first)
        self.assertIn("all 3 tests passed", second)
        self.assertIn("1.1 alpha passed.", second)
        self.assertIn("next: 1.2 beta: Second exercise, in starter/01-demo/beta.cu", second)
        self.assertIn("tools/grade --hint 1.2", second)
        self.assertIn("watching starter/01-demo/beta.cu", second)
        self.assertEqual(self.polls, 8)
        self.assertEqual(self.state()["implementations"]["starter"]["1.1"]["best"]["status"], PASSED)

    def test_no_change_no_regrade(self):
        self.failing("alpha")
        code, out, _ = self.watch("1.1", cycles=5)
        self.assertEqual((code, self.graded("alpha"), self.polls), (0, 1, 5))
        self.assertIn("watching starter/01-demo/alpha.cu (1.1 alpha): save it", out)

    def test_a_save_in_several_writes_is_graded_once(self):
        self.failing("alpha")
        code, _, _ = self.watch("1.1", cycles=6,
                                edits={1: lambda: self.edit("alpha", "a"),
                                       2: lambda: self.edit("alpha", "b")})
        # changed at polls 1 and 2, still at 3: graded then, once
        self.assertEqual((code, self.graded("alpha")), (0, 2))

    def test_whole_course_then_done(self):
        self.failing("alpha")
        self.failing("beta")

        def fix(slug):
            def go():
                self.tree.passing(slug)
                self.edit(slug)
            return go
        code, out, _ = self.watch(cycles=20, edits={1: fix("alpha"), 4: fix("beta")})
        self.assertEqual(code, 0)
        self.assertIn("start: grading 1.1 alpha", out)  # no ID: the first not passed
        self.assertIn("1.2 beta passed.", out)
        self.assertIn("every exercise has passed: the course is done", out)
        self.assertLess(self.polls, 20)  # it ended there, without waiting for the bound

    def test_starts_at_the_first_exercise_not_passed(self):
        self.tree.passing("alpha")
        self.failing("beta")
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        code, out, _ = self.watch(cycles=1)
        self.assertIn("start: grading 1.2 beta", out)
        self.assertEqual(self.graded("alpha"), 1)  # only the grade run above
        # a chapter: its first not passed; nothing left: says so
        _, out, _ = self.watch("1", cycles=1)
        self.assertIn("start: grading 1.2 beta", out)
        self.tree.passing("beta")
        self.tree.grade("--no-build", "-q", "--fast", "1.2")
        code, out, _ = self.watch(cycles=1)
        self.assertEqual(code, 0)
        self.assertIn("every exercise has passed: nothing left to watch", out)

    def test_named_exercise_even_if_passed(self):
        self.tree.passing("alpha")
        self.failing("beta")
        self.tree.grade("--no-build", "-q", "--fast", "1.1")
        code, out, _ = self.watch("1.1", cycles=2)  # also: tools/grade 1.1 --watch
        self.assertIn("start: grading 1.1 alpha", out)
        self.assertIn("next: 1.2 beta", out)
        _, out2, _ = self.watch(cycles=1, edits={})
        self.assertIn("start: grading 1.2 beta", out2)

    def test_selector_before_the_flag(self):
        self.failing("beta")
        self.tree.env.update(CUDALAB_WATCH_POLL="0", CUDALAB_WATCH_CYCLES="1")
        with mock.patch.object(watch, "_sleep"):
            code, out, _ = self.tree.grade("--no-build", "--fast", "1.2", "--watch")
        self.assertEqual(code, 0)
        self.assertIn("start: grading 1.2 beta", out)

    def test_ctrl_c_ends_cleanly(self):
        self.failing("alpha")

        def interrupt():
            raise KeyboardInterrupt
        code, out, _ = self.watch("1.1", cycles=10, edits={3: interrupt})
        self.assertEqual(code, 0)
        self.assertTrue(out.rstrip().endswith("stopped watching."), out)

    def test_no_gpu_checked_once_at_start(self):
        self.tree.gpu = (False, "no NVIDIA driver: libcuda.so.1 cannot be loaded")
        code, out, err = self.watch("1.1", cycles=10)
        self.assertEqual((code, out, self.polls), (3, "", 0))
        self.assertIn("no NVIDIA GPU here", err)
        self.assertEqual(self.tree.runs(), [])
        self.tree.probe.assert_called_once()

    def test_tests_that_find_no_gpu_stop_the_watch(self):
        skip = "cudalab: no CUDA device; GPU tests are skipped\n[  SKIPPED ] Alpha.T1\n"
        fake_test(self.tree.bin / "alpha_test_starter",
                  gtest_json([("Alpha", "Host", "COMPLETED", []), ("Alpha", "T1", "SKIPPED", [])]),
                  stdout=skip)
        code, out, _ = self.watch("1.1", cycles=10)
        self.assertEqual((code, self.polls), (3, 0))
        self.assertIn("not graded: no CUDA device", out)
        self.assertIn("stopped watching", out)
        self.assertFalse(self.state_file().exists())

    def test_solutions(self):
        fake_test(self.tree.bin / "alpha_test_solution", gtest_json([("Alpha", "T0", "COMPLETED", [])]))
        code, out, _ = self.watch("1.1", "--solutions", cycles=1)
        self.assertEqual(code, 0)
        self.assertIn("start: grading 1.1 alpha (solutions/01-demo/alpha.cu)", out)
        self.assertIn("next: 1.2 beta: Second exercise, in solutions/01-demo/beta.cu", out)
        self.assertEqual(list(self.state()["implementations"]), ["solution"])

    def test_usage_errors(self):
        for argv in (["--watch", "1.1", "--json", "-"], ["--watch", "--compile-only"],
                     ["--watch", "1.1", "1.2"], ["1.1", "1.2", "--watch"],
                     ["--watch", "--progress"], ["--watch", "9.9"]):
            code, _, err = self.tree.grade(*argv)
            self.assertEqual(code, 2, argv)
            self.assertTrue(err.startswith("tools/grade: "), err)
        self.tree.probe.assert_not_called()


class WatcherTest(unittest.TestCase):
    """watch.Watcher alone: the screen is cleared on a terminal, appended to otherwise."""

    class Tty(io.StringIO):
        def isatty(self):
            return True

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-watch-")
        self.tree = Tree(Path(self._tmp.name))
        self.chapters = load_all(self.tree.root)
        self.alpha = self.chapters[0].exercises[0]

    def tearDown(self):
        self._tmp.cleanup()

    def run_watcher(self, out, statuses):
        left = list(statuses)

        def grade_one(ex):
            return Result(ex, 10.0, status=left.pop(0), reason="r")
        p = self.tree.root / self.alpha.source("starter")

        def sleep(_):
            p.write_text(p.read_text() + "x")  # a change at every poll: graded every second one
        with mock.patch.object(watch, "_sleep", side_effect=sleep):
            w = watch.Watcher(self.chapters, self.tree.root, "starter", grade_one, out,
                              poll=0, max_cycles=2)
            # the changing file never holds still: only the start is graded
            return w.run(self.alpha), left

    def test_cleared_on_a_terminal(self):
        out = self.Tty()
        code, left = self.run_watcher(out, [FAILED])
        self.assertEqual((code, left), (0, []))
        self.assertTrue(out.getvalue().startswith(watch.CLEAR))

    def test_appended_otherwise(self):
        out = io.StringIO()
        self.run_watcher(out, [FAILED])
        self.assertNotIn("\x1b[", out.getvalue())

    def test_settings(self):
        self.assertEqual(watch.settings({}), (watch.POLL, None))
        self.assertEqual(watch.settings({"CUDALAB_WATCH_POLL": "0.01", "CUDALAB_WATCH_CYCLES": "3"}),
                         (0.01, 3))
        self.assertEqual(watch.settings({"CUDALAB_WATCH_POLL": "x", "CUDALAB_WATCH_CYCLES": "y"}),
                         (watch.POLL, None))


if __name__ == "__main__":
    unittest.main()
