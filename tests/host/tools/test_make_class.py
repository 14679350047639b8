"""Tests of tools/make-class: --hidden-tests (an example hidden suite for every exercise of the
course) and --check (a graded class against its EXPECTED.csv, on fake graded outputs)."""
from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import fakegrades
from toolload import ROOT, load_tool

make_class = load_tool("make-class", "cudalab_make_class")
sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade.manifest import load_all  # noqa: E402

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if Path("/usr/local/cuda/bin/nvcc").exists() else None)
GTEST = Path("/usr/include/gtest/gtest.h").exists()


class HiddenSuitesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="test-make-class-")
        cls.tmp = Path(cls._tmp.name)
        cls.hidden = cls.tmp / "hidden"
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = make_class.main([str(cls.tmp / "class"), "-n", "1", "--kinds", "correct",
                                    "--hidden-tests", str(cls.hidden)])
        cls.code, cls.out = code, out.getvalue()
        cls.exercises = [e for c in load_all(ROOT) for e in c.exercises]

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_one_suite_per_exercise_of_every_chapter(self):
        self.assertEqual(self.code, 0)
        self.assertIn(f"wrote {len(self.exercises)} example hidden suites", self.out)
        chapters = {e.chapter_dir for e in self.exercises}
        self.assertEqual({p.name for p in self.hidden.iterdir()}, chapters)
        for e in self.exercises:
            with self.subTest(exercise=e.id):
                self.assertTrue((self.hidden / e.chapter_dir / f"{e.slug}_hidden_test.cu").is_file())

    def test_suites_renamed_within_the_filter(self):
        """Every suite of the public file is there under a new name that the filter still matches."""
        for e in self.exercises:
            with self.subTest(exercise=e.id):
                prefix = e.test_filter.strip("*")
                public = (ROOT / "tests" / e.chapter_dir / f"{e.slug}_test.cu").read_text()
                hidden = (self.hidden / e.chapter_dir / f"{e.slug}_hidden_test.cu").read_text()
                code = "\n".join(ln for ln in hidden.splitlines() if not ln.startswith("//"))
                self.assertNotRegex(code, rf"\b{prefix}(?!Hidden)")
                self.assertIn(f"{prefix}Hidden", code)
                macros = r"\b(TEST|TEST_F|TEST_P|TYPED_TEST|INSTANTIATE_TEST_SUITE_P|CUDALAB_\w+)\("
                self.assertEqual(len(re.findall(macros, public)), len(re.findall(macros, code)))
                for m in re.finditer(rf"\b{prefix}Hidden\w*", code):   # gtest's filter
                    self.assertTrue(re.fullmatch(e.test_filter.replace("*", ".*"), m.group(0)))
                self.assertIn(f"// Hidden tests of exercise {e.id} {e.slug}", hidden)

    @unittest.skipUnless(NVCC and GTEST, "needs nvcc and GoogleTest's headers")
    def test_one_compiles(self):
        e = next(x for x in self.exercises if x.slug == "sum_atomic")
        inc = ["chapters/common/include", f"chapters/{e.chapter_dir}/include",
               f"chapters/{e.chapter_dir}/reference", "tests/common/include",
               f"tests/{e.chapter_dir}"]
        cmd = [NVCC, "-std=c++17", "-c", *[f"-I{ROOT / i}" for i in inc],
               str(self.hidden / e.chapter_dir / "sum_atomic_hidden_test.cu"),
               "-o", str(self.tmp / "h.o")]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])


class CheckTest(unittest.TestCase):
    """--check DEST OUT: every kind as the grader reports it matches; any other outcome does not."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="test-make-class-check-")
        cls.tmp = Path(cls._tmp.name)
        cls.dest = cls.tmp / "class"
        with contextlib.redirect_stdout(io.StringIO()):
            assert make_class.main([str(cls.dest), "-n", "30"]) == 0   # each kind once, 15 more correct
        cls.expected = cls.tmp / "class.EXPECTED.csv"
        with cls.expected.open(newline="") as f:
            cls.kinds = {r["student"]: r["kind"] for r in csv.DictReader(f)}
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def student(self, kind: str) -> str:
        return next(s for s, k in self.kinds.items() if k == kind)

    def check(self, instead=None, skip=(), extra=(), dest=None):
        """Grade the class fakely into a new OUT, run --check; (exit code, JSON, stdout, OUT)."""
        type(self).n += 1
        out = self.tmp / f"out{self.n}"
        fakegrades.graded_class(self.expected, out, instead, skip)
        if extra:
            fakegrades.write_out(out, list(extra))
        with contextlib.redirect_stdout(io.StringIO()) as so, \
                contextlib.redirect_stderr(io.StringIO()):
            rc = make_class.main(["--check", str(dest or self.dest), str(out)])
        data = json.loads((out / "class-check.json").read_text()) if rc != 2 else None
        return rc, data, so.getvalue(), out

    def row(self, data, student):
        return next(r for r in data["rows"] if r["student"] == student)

    def test_table_covers_every_kind_and_the_expected_text_comes_from_it(self):
        self.assertEqual(make_class.ORDER, list(make_class.KINDS))
        self.assertEqual(set(fakegrades.GRADED_AS), set(make_class.KINDS))
        for kind, (text, named, others) in make_class.KINDS.items():
            self.assertEqual(make_class.EXPECTED[kind], text)
            self.assertLessEqual(set(named), set(make_class.FILES), kind)
        with self.expected.open(newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], ["student", "kind", "expected"])
        self.assertTrue(all(len(r) == 3 for r in rows))         # a comma in a text is quoted
        self.assertEqual(set(self.kinds.values()), set(make_class.ORDER))

    def test_every_kind_as_the_grader_reports_it_matches(self):
        rc, data, out, folder = self.check()
        self.assertEqual(rc, 0, out)
        self.assertTrue(data["passed"])
        self.assertEqual((data["matching"], data["students"]), (30, 30))
        self.assertEqual({k: v["matching"] for k, v in data["kinds"].items()},
                         {k: v["students"] for k, v in data["kinds"].items()})
        self.assertIn("30 of 30 students graded as expected", out)
        md = (folder / "class-check.md").read_text()
        self.assertIn("| student | kind | expected | got | ok |", md)
        crash = self.student("crash")
        self.assertIn("1.1 failed (runner killed by SIGSEGV) 0/10", self.row(data, crash)["got"])
        self.assertIn(f"| {crash} | crash |", md)
        self.assertEqual(self.row(data, self.student("evil"))["got"].split(";")[0],
                         "submission rejected (archive member '../../escape.cu' climbs out)")

    def test_other_outcomes_the_grader_may_give_that_still_match(self):
        crash, race, oob = self.student("crash"), self.student("race"), self.student("oob")
        rc, data, out, _ = self.check({
            crash: {"1.1": ("crashed", "crashed: SIGSEGV in ReduceSumAtomic.Sizes")},
            race: {"1.2": ("failed", "3 of 72 tests failed")},
            oob: {"1.4": ("sanitizer", "compute-sanitizer memcheck: Invalid __global__ write")}})
        self.assertEqual(rc, 0, out)

    def test_oob_with_full_marks_is_reported(self):
        """What the class of 100 on the H100 did, unnoticed: 1.4's write past *out got full marks."""
        oob = self.student("oob")
        rc, data, out, folder = self.check({oob: {}})
        self.assertEqual(rc, 1)
        self.assertFalse(data["passed"])
        self.assertEqual(data["matching"], 29)
        r = self.row(data, oob)
        self.assertFalse(r["ok"])
        self.assertEqual(r["problems"], ["1.4 passed with 10 points, expected failed or sanitizer, "
                                         "0 points"])
        self.assertIn(f"MISMATCH {oob} (oob): 1.4 passed with 10 points", out)
        md = (folder / "class-check.md").read_text()
        self.assertIn(f"| {oob} | oob | 1.4 failed or sanitizer | 1.1 passed 10/10; 1.2 passed 10/10; "
                      "1.3 passed 10/10; 1.4 passed 10/10 | **no**: 1.4 passed with 10 points", md)
        self.assertEqual(data["kinds"]["oob"], {"matching": 0, "students": 1})
        self.assertEqual(data["kinds"]["correct"], {"matching": 16, "students": 16})

    def test_each_kind_mismatch_is_caught(self):
        segv_exit = fakegrades.RUNNER_SEGV.replace("it was killed by SIGSEGV (exit code 139)",
                                                   "it exited with code 1")
        cases = {   # kind -> (what the grader said instead, the problem reported)
            "correct": ({"1.2": ("failed", "1 of 72 tests failed")}, "1.2 failed with 0 points"),
            "starter": ({"1.3": ("crashed", "crashed: SIGABRT")}, "1.3 crashed with 0 points"),
            "wrong": ({"1.1": ("failed", "x"), "1.2": ("failed", "y")}, "1.2 failed with 0 points"),
            "compile": ({"1.2": ("failed", "x")}, "1.2 failed with 0 points, expected compile_error"),
            "forbidden": ({"1.1": ("passed", "all 72 tests passed")}, "1.1 passed with 10 points"),
            "sneaky": ({"1.1": ("failed", "x")}, "1.1 failed with 0 points, expected forbidden"),
            "hang": ({"1.3": ("failed", "x")}, "1.3 failed with 0 points, expected timeout"),
            "crash": ({"1.1": ("failed", segv_exit)}, "1.1 failed with 0 points, expected crashed"),
            "race": ({"1.2": ("passed", "all passed")}, "1.2 passed with 10 points"),
            "technique": ({"1.2": ("passed", "all passed")}, "1.2 passed with 10 points, expected forbidden"),
            "noisy": ({"1.1": ("passed", "all passed", 5)}, "1.1 passed with 5 points"),
            "hog": ({"1.1": ("failed", "x")}, "1.1 failed with 0 points, expected memory"),
            "partial": ({"1.4": ("failed", "x")}, "1.4 failed with 0 points, expected not_submitted"),
            "evil": ({}, "the submission was not rejected"),
        }
        instead = {self.student(k): v for k, (v, _) in cases.items()}
        rc, data, out, _ = self.check(instead)
        self.assertEqual(rc, 1)
        for kind, (_, problem) in cases.items():
            with self.subTest(kind=kind):
                r = self.row(data, self.student(kind))
                self.assertFalse(r["ok"])
                self.assertTrue(any(p.startswith(problem) for p in r["problems"]), r["problems"])
        self.assertEqual(data["matching"], 30 - len(cases))

    def test_missing_unsigned_extra_and_unknown_students(self):
        gone, forged = self.student("hog"), self.student("wrong")
        intruder = fakegrades.record("s999-intruder", {})
        rc, data, out, folder = self.check(skip=(gone,), extra=[intruder])
        self.assertEqual(rc, 1)
        self.assertEqual(self.row(data, gone)["problems"],
                         ["no signed results.json of this student in OUT"])
        extra = self.row(data, "s999-intruder")
        self.assertEqual((extra["kind"], extra["ok"]), ("?", False))
        # a record changed after the grader signed it is not read: that student has no results
        res = folder / "students" / forged / "results.json"
        res.write_text(res.read_text().replace('"failed"', '"passed"'))
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(make_class.main(["--check", str(self.dest), str(folder)]), 1)
        data = json.loads((folder / "class-check.json").read_text())
        self.assertFalse(self.row(data, forged)["ok"])
        self.assertIn(forged, err.getvalue())          # the reader's warning
        # an unknown kind in EXPECTED.csv
        odd = self.tmp / "odd.EXPECTED.csv"
        odd.write_text("student,kind,expected\ns001-correct,mystery,?\n")
        out = self.tmp / "out-odd"
        fakegrades.write_out(out, [fakegrades.record("s001-correct", {})])
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(make_class.main(["--check", str(self.tmp / "odd"), str(out)]), 1)
        data = json.loads((out / "class-check.json").read_text())
        self.assertEqual(data["rows"][0]["problems"], ["unknown kind 'mystery'"])

    def test_an_exercise_left_out_of_the_grading_is_a_mismatch(self):
        s = self.student("correct")
        rec = fakegrades.record(s, {})
        rec["cudalab"]["exercises"] = rec["cudalab"]["exercises"][:3]
        rec["tests"] = rec["tests"][:3]
        rec["score"] = 30.0
        rc, data, _, _ = self.check({s: rec})
        self.assertEqual(rc, 1)
        self.assertEqual(self.row(data, s)["problems"], ["1.4 not in the student's results"])

    def test_old_unquoted_expected_csv_report_option_and_usage(self):
        old = self.tmp / "old.EXPECTED.csv"    # make-class before --check wrote the comma unquoted
        noisy = self.student("noisy")
        old.write_text(f"student,kind,expected\n{noisy},noisy,all passed, output truncated\n")
        out = self.tmp / "out-old"
        fakegrades.write_out(out, [fakegrades.record(noisy, {})])
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            rc = make_class.main(["--check", str(old), str(out), "--report", str(self.tmp / "r" / "c")])
        self.assertEqual(rc, 0)
        self.assertEqual(err.getvalue(), "")                 # the text is the table's: no warning
        self.assertTrue((self.tmp / "r" / "c.md").is_file())
        data = json.loads((self.tmp / "r" / "c.json").read_text())
        self.assertEqual(data["rows"][0]["expected"], "all passed, output truncated")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(make_class.main(["--check", str(self.tmp / "none"), str(out)]), 2)
            self.assertEqual(make_class.main(["--check", str(old), str(self.tmp / "no-out")]), 2)
            for argv in (["--check", str(old)], ["x", "--check", str(old), str(out)],
                         [str(self.tmp / "c2"), "--report", "r"], []):
                with self.subTest(argv=argv), self.assertRaises(SystemExit) as cm:
                    make_class.main(argv)
                self.assertEqual(cm.exception.code, 2)

    def test_script_runs_the_check(self):
        out = self.tmp / "out-script"
        fakegrades.graded_class(self.expected, out)
        p = subprocess.run([sys.executable, str(ROOT / "tools" / "make-class"), "--check",
                            str(self.dest), str(out)], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("30 of 30 students graded as expected", p.stdout)


if __name__ == "__main__":
    unittest.main()
