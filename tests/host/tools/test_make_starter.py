"""Unit tests of tools/make-starter: marker blocks, errors, write() and check()."""
from __future__ import annotations

import contextlib
import io
import tempfile
import textwrap
import unittest
from pathlib import Path

from toolload import ROOT, load_tool




ms = load_tool("make-starter", "make_starter")

EXERCISE = ("9.1", "Sum things")


def gen(text: str, exercise=EXERCISE) -> str:
    return ms.generate(textwrap.dedent(text), "solutions/09-x/f.cu", exercise)


class GenerateTest(unittest.TestCase):
    def test_outside_blocks_copied(self):
        text = "#include <x>\nint f() { return 1; }\n"
        self.assertEqual(gen(text), text)

    def test_block_without_starter_becomes_todo(self):
        out = gen("""\
            void f() {
              // BEGIN SOLUTION
              do_it();
              // END SOLUTION
            }
            """)
        self.assertEqual(out, "void f() {\n  // TODO(9.1): Sum things\n}\n")

    def test_block_without_manifest_entry(self):
        out = ms.generate("  // BEGIN SOLUTION\n  x();\n  // END SOLUTION\n", "f.cu", None)
        self.assertEqual(out, "  // TODO: write this part\n")

    def test_block_with_starter(self):
        out = gen("""\
            int f() {
              // BEGIN SOLUTION
              return 42;
              // STARTER:
              // // TODO(9.1): return the answer
              // return 0;
              //
              // END SOLUTION
            }
            """)
        self.assertEqual(out, "int f() {\n  // TODO(9.1): return the answer\n  return 0;\n\n}\n")

    def test_double_comment_and_bare_comment(self):
        out = gen("// BEGIN SOLUTION\nx\n// STARTER:\n// // x\n//\n// END SOLUTION\n")
        self.assertEqual(out, "// x\n\n")

    def test_two_blocks(self):
        out = gen("a\n// BEGIN SOLUTION\nb\n// END SOLUTION\nc\n// BEGIN SOLUTION\nd\n// STARTER:\n// e\n"
                  "// END SOLUTION\nf\n")
        self.assertEqual(out, "a\n// TODO(9.1): Sum things\nc\ne\nf\n")

    def assert_error(self, text: str, line: int, words: str):
        with self.assertRaises(ms.MarkerError) as cm:
            gen(text)
        msg = str(cm.exception)
        self.assertTrue(msg.startswith(f"solutions/09-x/f.cu:{line}: "), msg)
        self.assertIn(words, msg)

    def test_nested_begin(self):
        self.assert_error("x\n// BEGIN SOLUTION\na\n// BEGIN SOLUTION\n// END SOLUTION\n", 4,
                          "inside the block opened at line 2")

    def test_end_without_begin(self):
        self.assert_error("a\nb\n// END SOLUTION\n", 3, "outside a BEGIN SOLUTION block")

    def test_starter_without_begin(self):
        self.assert_error("// STARTER:\n", 1, "outside a BEGIN SOLUTION block")

    def test_missing_end(self):
        self.assert_error("a\n\n// BEGIN SOLUTION\nb\n", 3, "without END SOLUTION")

    def test_bad_starter_line(self):
        self.assert_error("// BEGIN SOLUTION\n// STARTER:\n// ok\nreturn 0;\n// END SOLUTION\n", 4,
                          "must start with '// '")

    def test_second_starter(self):
        self.assert_error("// BEGIN SOLUTION\n// STARTER:\n// a\n// STARTER:\n// END SOLUTION\n", 4,
                          "second STARTER")


class TreeTest(unittest.TestCase):
    SOLUTION = "int f() {\n  // BEGIN SOLUTION\n  return 42;\n  // END SOLUTION\n}\n"
    STARTER = "int f() {\n  // TODO(9.1): Sum things\n}\n"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        chapter = self.root / "chapters" / "09-x"
        chapter.mkdir(parents=True)
        (chapter / "exercises.toml").write_text(
            '[chapter]\nnumber = 9\ndir = "09-x"\n\n[[exercise]]\nid = "9.1"\nslug = "f"\n'
            'title = "Sum things"\nfile = "f.cu"\ntest_filter = "*F*"\npoints = 1\n')
        (self.root / "solutions" / "09-x").mkdir(parents=True)
        self.solution = self.root / "solutions" / "09-x" / "f.cu"
        self.solution.write_text(self.SOLUTION)
        self.starter = self.root / "starter" / "09-x" / "f.cu"

    def tearDown(self):
        self.tmp.cleanup()

    def call(self, fn, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = fn(self.root, *args)
        return rc, out.getvalue(), err.getvalue()

    def test_write_then_check(self):
        rc, out, _ = self.call(ms.write, False)
        self.assertEqual(rc, 0)
        self.assertEqual(self.starter.read_text(), self.STARTER)
        self.assertTrue((self.root / "starter" / ms.LOCK_NAME).exists())
        rc, out, _ = self.call(ms.check)
        self.assertEqual(rc, 0, out)
        self.assertIn("matches", out)

    def test_student_change_kept_unless_force(self):
        self.call(ms.write, False)
        self.starter.write_text("int f() { return 41; }\n")
        self.solution.write_text(self.SOLUTION.replace("42", "43"))
        rc, _, err = self.call(ms.write, False)
        self.assertEqual(rc, 1)
        self.assertIn("kept starter/09-x/f.cu", err)
        self.assertEqual(self.starter.read_text(), "int f() { return 41; }\n")
        rc, _, _ = self.call(ms.write, True)
        self.assertEqual(rc, 0)
        self.assertEqual(self.starter.read_text(), self.STARTER)

    def test_unchanged_starter_follows_solution(self):
        self.call(ms.write, False)
        self.solution.write_text(self.SOLUTION.replace("// END SOLUTION", "// STARTER:\n  // return 0;\n"
                                                       "  // END SOLUTION"))
        rc, _, _ = self.call(ms.write, False)
        self.assertEqual(rc, 0)
        self.assertEqual(self.starter.read_text(), "int f() {\n  return 0;\n}\n")

    def test_check_reports_drift(self):
        self.call(ms.write, False)
        self.starter.write_text(self.STARTER + "// extra\n")
        rc, _, err = self.call(ms.check)
        self.assertEqual(rc, 1)
        self.assertIn("starter/09-x/f.cu differs", err)
        self.assertIn("+// extra", err)

    def test_check_reports_missing_and_stray(self):
        rc, _, err = self.call(ms.check)
        self.assertEqual(rc, 1)
        self.assertIn("starter/09-x/f.cu is missing", err)
        self.call(ms.write, False)
        (self.root / "starter" / "09-x" / "stray.cu").write_text("int g();\n")
        rc, _, err = self.call(ms.check)
        self.assertEqual(rc, 1)
        self.assertIn("starter/09-x/stray.cu has no counterpart", err)

    def test_check_stale_lock(self):
        self.call(ms.write, False)
        (self.root / "starter" / ms.LOCK_NAME).write_text("{}\n")
        rc, _, err = self.call(ms.check)
        self.assertEqual(rc, 1)
        self.assertIn("no current hash", err)

    def test_marker_error_exit_code(self):
        self.solution.write_text("// BEGIN SOLUTION\n")
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = ms.main(["--root", str(self.root)])
        self.assertEqual(rc, 2)
        self.assertIn("solutions/09-x/f.cu:1:", err.getvalue())


if __name__ == "__main__":
    unittest.main()
