"""Unit tests of tools/make-tables: the regions, the tables, --check on the course tree."""
from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
import unittest
from pathlib import Path

from toolload import ROOT, load_tool

mt = load_tool("make-tables", "make_tables")

MANIFEST = """\
[chapter]
number = 9
dir = "09-demo"
title = "Demo | chapter"
lesson = "README.md"

[[exercise]]
id = "9.1"
slug = "sum_things"
title = "Sum the things"
header = "include/cudalab/reduce.cuh"
points = 10
hints = ["a", "b"]
[exercise.perf]
benchmark = "sum_things/int32/1024"
baseline = "cub_reduce_sum/int32/1024"
ratio = 0.5
points = 2
note = "a note"
"""


def region(name: str, body: str = "old\n") -> str:
    return f"{mt.begin(name)}\n{body}{mt.END}\n"


class TablesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        ch = self.tmp / "chapters" / "09-demo"
        ch.mkdir(parents=True)
        (ch / "exercises.toml").write_text(MANIFEST)
        (ch / "README.md").write_text("# Lesson\n\nBefore.\n\n" + region("exercises") + "\nAfter.\n")
        (self.tmp / "README.md").write_text("# Course\n\n" + region("chapters") + "\nText.\n")
        (self.tmp / "docs").mkdir()
        (self.tmp / "docs" / "mainpage.md").write_text(region("chapters", ""))

    def call(self, fn, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = fn(*args)
        return rc, out.getvalue(), err.getvalue()

    def test_write_then_check(self):
        self.assertEqual(self.call(mt.check, self.tmp)[0], 1)
        self.assertEqual(self.call(mt.write, self.tmp)[0], 0)
        self.assertEqual(self.call(mt.check, self.tmp)[0], 0)
        lesson = (self.tmp / "chapters" / "09-demo" / "README.md").read_text()
        self.assertTrue(lesson.startswith("# Lesson\n\nBefore.\n\n"))
        self.assertTrue(lesson.endswith(f"{mt.END}\n\nAfter.\n"))
        self.assertIn("| 9.1 | cudalab::reduce::sum_things | Sum the things | 10 points | "
                      "0.5 × `cub_reduce_sum/int32/1024`, 2 points (a note) |", lesson)
        readme = (self.tmp / "README.md").read_text()
        self.assertIn("| 9 | Demo \\| chapter | 9.1 `sum_things` | 10 for the tests, 2 for speed |", readme)
        self.assertIn('\\subpage chapter09 "Demo \\| chapter"', (self.tmp / "docs" / "mainpage.md").read_text())

    def test_a_calibrated_target_says_so(self):
        """A host baseline with a calibration counts with its time on the calibration machine."""
        from dataclasses import replace
        from cudalab_grade.manifest import Calibration, load_chapter
        ex = load_chapter(self.tmp / "chapters" / "09-demo" / "exercises.toml").exercises[0]
        host = replace(ex.perf, baseline="boost_dijkstra/grid/1024", ratio=20.0)
        self.assertEqual(mt.speed_target(replace(ex, perf=host)), "20 × `boost_dijkstra/grid/1024`, 2 points (a note)")
        cal = replace(host, calibration=Calibration(4e8, 3000.0, "NVIDIA H100 80GB HBM3", "Xeon"))
        self.assertEqual(mt.speed_target(replace(ex, perf=cal)),
                         "20 × `boost_dijkstra/grid/1024` as timed on the calibration machine, 2 points (a note)")

    def test_check_shows_the_diff(self):
        self.call(mt.write, self.tmp)
        lesson = self.tmp / "chapters" / "09-demo" / "README.md"
        lesson.write_text(lesson.read_text().replace("10 points", "11 points"))
        rc, out, err = self.call(mt.check, self.tmp)
        self.assertEqual(rc, 1)
        self.assertIn("-| 9.1 |", out)
        self.assertIn("run tools/make-tables", err)

    def test_missing_region(self):
        (self.tmp / "README.md").write_text("# Course, no table\n")
        rc, _, err = self.call(mt.main, ["--root", str(self.tmp), "--check"])
        self.assertEqual(rc, 2)
        self.assertIn("README.md: no region", err)


class CourseTablesTest(unittest.TestCase):
    def test_committed_tables_match_the_manifests(self):
        """As make-starter --check for the starter: run tools/make-tables after editing a manifest."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = mt.check(ROOT)
        self.assertEqual(rc, 0, "tools/make-tables --check: a table differs from the manifests; "
                         "run tools/make-tables\n" + out.getvalue()[:4000])


if __name__ == "__main__":
    unittest.main()
