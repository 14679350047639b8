"""Host tests of tools/make-release: the student edition of this course and its leak check.

The edition of the real repository is made once (into a temporary folder, as
a git repository); the tests read it, run its grader's --list, search it for
the solutions' text on their own, plant a leak in a copy, and configure its
CMake (only where cmake, Ninja and nvcc are installed). Small trees of their
own cover the links and the refusals. No GPU needed.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from toolload import ROOT

TOOL = ROOT / "tools" / "make-release"
BEGIN = re.compile(r"^\s*// BEGIN SOLUTION\s*$")
STARTER = re.compile(r"^\s*// STARTER:\s*$")
END = re.compile(r"^\s*// END SOLUTION\s*$")


def make_release(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def regions(path: Path) -> list[tuple[int, list[str]]]:
    """(BEGIN line, solution lines) of every region of a solution file (the STARTER part aside)."""
    out, current, state = [], [], None
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if BEGIN.match(line):
            state, current, first = "solution", [], n
        elif STARTER.match(line):
            state = "starter"
        elif END.match(line):
            out.append((first, current))
            state = None
        elif state == "solution":
            current.append(line)
    return out


def normalized(lines) -> str:
    """The non-blank lines, stripped, one per line: a region's text however it is indented."""
    return "\n".join(s for s in (l.strip() for l in lines) if s)


def solution_files() -> list[Path]:
    return sorted(p for p in (ROOT / "solutions").rglob("*.cu") if p.is_file())


def edition_files(dest: Path):
    for top, dirs, names in os.walk(dest):
        dirs[:] = [d for d in dirs if d != ".git"]
        for n in names:
            p = Path(top) / n
            if p.is_file() and not p.is_symlink():
                yield p


def find_nvcc() -> str | None:
    return shutil.which("nvcc") or next(
        (str(p) for p in [Path("/usr/local/cuda/bin/nvcc")] if p.is_file()), None)


class EditionOfThisCourse(unittest.TestCase):
    """tools/make-release DEST --git over this repository."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="cudalab-edition-")
        cls.dest = Path(cls.tmp.name) / "edition"
        cls.made = make_release(str(cls.dest), "--git")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_made_and_checked(self):
        self.assertEqual(self.made.returncode, 0, self.made.stderr + self.made.stdout)
        self.assertIn("make-release --check: no solution text", self.made.stdout)

    def test_holds_the_course_without_the_solutions(self):
        d = self.dest
        for present in ("starter/01-reduce-scan-histogram/sum_atomic.cu", "chapters/01-reduce-scan-histogram/README.md",
                        "tests/01-reduce-scan-histogram/sum_atomic_test.cu", "tests/host/tools/test_grade.py",
                        "tools/grade", "tools/gpu-check", "tools/fetch-data", "tools/bench-report",
                        "tools/cudalab_grade/grading.py", "docs/guides/getting-started.md",
                        "CMakeLists.txt", "CMakePresets.json", "cmake/CudalabExercise.cmake",
                        "README.md", ".gitignore", ".ci/run"):
            self.assertTrue((d / present).is_file(), present)
        for absent in ("solutions", "tests/redteam", "tools/make-starter", "tools/make-class", "tools/redteam",
                       "tools/make-release", "tools/cudalab_grade/redteam.py", "tools/cudalab_grade/release.py",
                       "tests/host/tools/test_make_release.py", "starter/.make-starter.json"):
            self.assertFalse((d / absent).exists(), absent)
        self.assertTrue(os.access(d / "tools" / "grade", os.X_OK))
        self.assertEqual([p for p in edition_files(d) if "_hidden_test." in p.name], [])

    def test_check_passes(self):
        p = make_release("--check", str(self.dest))
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_no_file_holds_a_solution_region(self):
        """Searched here without the tool's rules: every region's text, its lines stripped."""
        texts = {}
        for p in edition_files(self.dest):
            try:
                texts[p] = "\n" + normalized(p.read_text().splitlines()) + "\n"
            except UnicodeDecodeError:
                continue
        self.assertGreater(len(texts), 100)
        searched = 0
        for sol in solution_files():
            for line, body in regions(sol):
                code = [l for l in body if l.strip() and not l.strip().startswith("//")]
                if len(code) < 2:
                    continue  # one line ("return v;") is not the region's text to search for
                needle = "\n" + normalized(code) + "\n"
                searched += 1
                for p, text in texts.items():
                    self.assertNotIn(needle, text, f"{p} holds {sol.relative_to(ROOT)}:{line}")
        self.assertGreater(searched, 50)

    def test_grade_lists_the_exercises(self):
        p = subprocess.run([sys.executable, str(self.dest / "tools" / "grade"), "--list"],
                           capture_output=True, text=True, timeout=60, cwd=self.dest)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("sum_atomic", p.stdout)
        self.assertIn("7.6", p.stdout)

    def test_presets_build_the_starter_only(self):
        data = json.loads((self.dest / "CMakePresets.json").read_text())
        for preset in data["configurePresets"]:
            self.assertEqual(preset["cacheVariables"]["CUDALAB_IMPLEMENTATIONS"], "starter", preset["name"])
        for preset in data["testPresets"]:
            pattern = preset["filter"]["exclude"]["name"]
            self.assertRegex("host/make-starter-check", pattern)
            self.assertNotRegex("host/tools", pattern)

    def test_lessons_lose_their_folded_solutions(self):
        for p in (self.dest / "chapters").rglob("*.md"):
            self.assertNotIn("\\dontinclude solutions/", p.read_text(), p)
        self.assertIn("## Exercise 1.2", (self.dest / "chapters/01-reduce-scan-histogram/README.md").read_text())
        self.assertIn("Student edition", (self.dest / "README.md").read_text())

    def test_given_copies_of_solutions_are_withheld(self):
        # 2.7 takes 2.6's merge-path search from cudalab/merge_path.cuh: the header is withheld
        rel = "chapters/02-sorting/include/cudalab/merge_path.cuh"
        text = (self.dest / rel).read_text()
        self.assertNotEqual(text, (ROOT / rel).read_text())
        self.assertIn("// Student edition: the full course gives exercise 2.6's solution here", text)
        self.assertIn("withheld: " + rel, self.made.stdout)
        rel = "starter/02-sorting/merge_sort_merge_path.cu"  # which no longer carries a copy
        self.assertEqual((self.dest / rel).read_text(), (ROOT / rel).read_text())
        # 7.6 calls 7.1 to 7.5 through their API (the manifest's uses): nothing of theirs to withhold
        rel = "starter/07-kdtree-large-nodes/build_large_nodes.cu"
        self.assertEqual((self.dest / rel).read_text(), (ROOT / rel).read_text())
        self.assertNotIn("withheld: " + rel, self.made.stdout)

    def test_a_given_copy_in_a_chapter_header_is_withheld(self):
        """Chapter 5's warp_heap.cuh gives 5.3's heap to 5.4, chapters/common's decoupled_lookback.cuh
        1.8's look-back to 4.6 and block_scan.cuh 1.7's tile scan to 1.8: the edition has 5.3's,
        1.8's and 1.7's starter text there; likewise the given copies of 5.1 and 5.2 (heap_nodes.cuh)
        and 4.4 (warp_aggregated.cuh)."""
        rel = "chapters/05-warp-heap/include/cudalab/warp_heap.cuh"
        text = (self.dest / rel).read_text()
        self.assertIn("// Student edition: the full course gives exercise 5.3's solution here", text)
        self.assertIn("TODO(5.3)", text)
        self.assertIn("withheld: " + rel, self.made.stdout)
        # chapters/common's decoupled_lookback.cuh gives 1.8's tile claim and look-back to 1.9 and
        # 4.6: both are 1.8's starter text there
        rel = "chapters/common/include/cudalab/decoupled_lookback.cuh"
        text = (self.dest / rel).read_text()
        self.assertEqual(text.count("// Student edition: the full course gives exercise 1.8's solution here"), 2)
        self.assertNotIn("__ballot_sync(kFullMask", text)
        self.assertIn("withheld: " + rel, self.made.stdout)
        # heap_nodes.cuh gives 5.1's replace_smallest and 5.2's min_child to 5.3 (and to warp_heap.cuh)
        rel = "chapters/05-warp-heap/include/cudalab/heap_nodes.cuh"
        text = (self.dest / rel).read_text()
        for exid in ("5.1", "5.2"):
            self.assertIn(f"// Student edition: the full course gives exercise {exid}'s solution here", text)
            self.assertIn(f"TODO({exid})", text)
        self.assertIn("struct HeapNodes", text)  # the given memory of the heap is not a solution
        self.assertIn("withheld: " + rel, self.made.stdout)
        # warp_aggregated.cuh gives 4.4's warp aggregation to 4.7
        rel = "chapters/04-filtering-atomics/include/cudalab/warp_aggregated.cuh"
        text = (self.dest / rel).read_text()
        self.assertIn("// Student edition: the full course gives exercise 4.4's solution here", text)
        self.assertNotIn("atomicAdd(count", text)
        # chapters/common's block_scan.cuh gives 1.7's warp scan (to 1.8 and 4.6) and the first and
        # last of the three blocks of its tile scan (to 1.8; the middle one, which asks a callback
        # for the tile's prefix, is the header's own): all three are 1.7's starter text there
        rel = "chapters/common/include/cudalab/block_scan.cuh"
        text = (self.dest / rel).read_text()
        self.assertEqual(text.count("// Student edition: the full course gives exercise 1.7's solution here"), 3)
        self.assertNotIn("__shfl_up_sync(kFullMask", text)
        self.assertNotIn("excl[k] = inc - s;", text)
        self.assertNotIn("v[k] = make_uint4(p0, p1, p2, p3);", text)
        self.assertIn("TODO(1.7): turn v into the exclusive prefixes", text)
        self.assertIn("withheld: " + rel, self.made.stdout)

    def test_one_commit(self):
        if not shutil.which("git"):
            self.skipTest("git is not installed")
        git = ["git", "-C", str(self.dest)]
        self.assertEqual(subprocess.run(git + ["rev-list", "--count", "HEAD"], capture_output=True,
                                        text=True).stdout.strip(), "1")
        self.assertEqual(subprocess.run(git + ["status", "--porcelain"], capture_output=True,
                                        text=True).stdout, "")

    def test_a_planted_leak_is_named(self):
        with tempfile.TemporaryDirectory(prefix="cudalab-leak-") as tmp:
            copy = Path(tmp) / "edition"
            shutil.copytree(self.dest, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            sol = ROOT / "solutions/01-reduce-scan-histogram/sum_shared_tree.cu"
            first, body = regions(sol)[0]
            guide = copy / "docs/guides/grading.md"
            before = guide.read_text().splitlines()
            guide.write_text("\n".join(before + ["", "```cpp"] + [l.strip() for l in body] + ["```", ""]))
            at = len(before) + 3 + next(i for i, l in enumerate(body)
                                        if l.strip() and not l.strip().startswith("//"))
            p = make_release("--check", str(copy))
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn(f"docs/guides/grading.md:{at}: the text of exercise 1.2's solution "
                          f"(solutions/01-reduce-scan-histogram/sum_shared_tree.cu:{first})", p.stderr)
            # a solutions/ folder in the edition is a leak too
            (copy / "solutions").mkdir()
            (copy / "solutions" / "x.cu").write_text("int x;\n")
            p = make_release("--check", str(copy))
            self.assertIn("solutions/: left out of the edition", p.stderr)

    def test_cmake_configures_the_starter_only(self):
        nvcc = find_nvcc()
        if nvcc is None:
            self.skipTest("nvcc not found (neither on PATH nor /usr/local/cuda/bin): the edition's CMake "
                          "configure needs the CUDA compiler")
        for tool in ("cmake", "ninja"):
            if shutil.which(tool) is None:
                self.skipTest(f"{tool} is not installed")
        env = dict(os.environ, PATH=os.environ.get("PATH", "") + os.pathsep + str(Path(nvcc).parent))
        with tempfile.TemporaryDirectory(prefix="cudalab-edition-build-") as build:
            p = subprocess.run(["cmake", "--preset", "default", "-B", build], cwd=self.dest, env=env,
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0 and re.search(r"Could NOT find (GTest|benchmark)|package configuration "
                                               r"file provided by \"(GTest|benchmark)\"", p.stdout + p.stderr):
                self.skipTest("GoogleTest or Google Benchmark is not installed")
            self.assertEqual(p.returncode, 0, (p.stdout + p.stderr)[-3000:])
            cache = (Path(build) / "CMakeCache.txt").read_text()
            self.assertIn("CUDALAB_IMPLEMENTATIONS:STRING=starter", cache)
            ninja = (Path(build) / "build.ninja").read_text()
            self.assertNotIn("/solutions/", ninja)
            self.assertIn("sum_atomic_test_starter", ninja)


class SmallCourse(unittest.TestCase):
    """A course of one exercise on disk (not a git checkout): links, refusals, --force."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cudalab-release-")
        base = Path(self.tmp.name)
        self.root, self.outside = base / "course", base / "outside"
        r = self.root
        for rel, text in {
            "solutions/01-x/f.cu": "int f(int v) {\n  // BEGIN SOLUTION\n  const int twice = v + v;\n"
                                   "  return twice * 21 + v * 0;\n  // STARTER:\n  // return 0;\n"
                                   "  // END SOLUTION\n}\n",
            "starter/01-x/f.cu": "int f(int v) {\n  return 0;\n}\n",
            "docs/page.md": "# Page\n",
            "tools/grade": "#!/usr/bin/env python3\n",
            "notes/for-me.md": "not a part of the edition\n",
        }.items():
            (r / rel).parent.mkdir(parents=True, exist_ok=True)
            (r / rel).write_text(text)
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text("outside\n")
        os.symlink(self.outside / "secret.txt", r / "docs" / "out.txt")
        os.symlink("page.md", r / "docs" / "in.md")
        os.symlink("../../solutions/01-x/f.cu", r / "starter" / "01-x" / "g.cu")
        os.symlink(self.outside, r / "docs" / "linked")
        self.dest = base / "edition"

    def tearDown(self):
        self.tmp.cleanup()

    def make(self, *args: str) -> subprocess.CompletedProcess:
        return make_release(str(self.dest), "--root", str(self.root), *args)

    def test_links_are_never_followed_out(self):
        p = self.make()
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        self.assertTrue((self.dest / "starter/01-x/f.cu").is_file())
        self.assertEqual(os.readlink(self.dest / "docs" / "in.md"), "page.md")
        for absent in ("docs/out.txt", "docs/linked", "starter/01-x/g.cu", "solutions", "notes"):
            self.assertFalse(os.path.lexists(self.dest / absent), absent)
        self.assertIn("docs/out.txt (a symbolic link out of the course", p.stdout)
        self.assertIn("starter/01-x/g.cu (a symbolic link to solutions/01-x/f.cu, which the edition "
                      "leaves out)", p.stdout)
        # and --check finds a link out that was put there afterwards
        os.symlink(self.outside / "secret.txt", self.dest / "docs" / "late.txt")
        p = make_release("--check", str(self.dest), "--root", str(self.root))
        self.assertEqual(p.returncode, 1)
        self.assertIn("docs/late.txt: a symbolic link out of the edition", p.stderr)

    def test_a_pasted_region_is_found_however_indented(self):
        self.assertEqual(self.make().returncode, 0)
        (self.dest / "docs" / "page.md").write_text("# Page\n\n    const int twice = v + v;\n"
                                                    "        return twice * 21 + v * 0;\n")
        p = make_release("--check", str(self.dest), "--root", str(self.root))
        self.assertEqual(p.returncode, 1)
        self.assertIn("docs/page.md:3: the text of a solution (solutions/01-x/f.cu:2), lines 3-4", p.stderr)

    def test_refuses_a_folder_that_is_not_empty(self):
        self.dest.mkdir()
        (self.dest / "keep.txt").write_text("mine\n")
        p = self.make()
        self.assertEqual(p.returncode, 2)
        self.assertIn("--force", p.stderr)
        self.assertEqual(sorted(x.name for x in self.dest.iterdir()), ["keep.txt"])

    def test_force_replaces_the_edition_and_keeps_its_git(self):
        if not shutil.which("git"):
            self.skipTest("git is not installed")
        self.assertEqual(self.make("--git").returncode, 0)
        (self.dest / "stale.txt").write_text("old\n")
        p = self.make("--force", "--git")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse((self.dest / "stale.txt").exists())
        count = subprocess.run(["git", "-C", str(self.dest), "rev-list", "--count", "HEAD"],
                               capture_output=True, text=True).stdout.strip()
        self.assertEqual(count, "2")

    def test_refuses_a_folder_inside_the_course(self):
        for inside in (self.root, self.root / "starter" / "edition", self.root.parent):
            p = make_release(str(inside), "--root", str(self.root))
            self.assertEqual(p.returncode, 2, inside)
        self.assertFalse((self.root / "starter" / "edition").exists())


if __name__ == "__main__":
    unittest.main()
