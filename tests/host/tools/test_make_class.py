"""Tests of tools/make-class --hidden-tests: an example hidden suite for every exercise of the course."""
from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

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


if __name__ == "__main__":
    unittest.main()
