"""Tests of the warp-mask rule of the source check (tools/cudalab_grade/warpmask.py, source.py).

A constant mask other than 0xffffffff of a warp collective is a finding in every
exercise, `__activemask()` as the mask one in the exercises whose manifest says
`warp_mask = "full"`. The mistakes are undefined behaviour that today's GPUs run
anyway, so the mutants of tools/mutate that make them (mask_narrow, mask_active)
survive the tests and the sanitizer (docs/results/mutation.md); this rule is what
kills them. Every solution and starter passes the rule (also in
test_forbidden.CourseFilesTest, which runs the whole check). The end-to-end tests
run the real preprocessor (nvcc -E, no GPU) and are skipped without nvcc.
"""
from __future__ import annotations

import os
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tools"))
from cudalab_grade import manifest, mutate, source, tokencheck, warpmask  # noqa: E402

EXERCISES = {e.id: e for c in manifest.load_all(REPO) for e in c.exercises}
HAVE_NVCC = tokencheck.find_nvcc() is not None
WORKERS = max(2, min(4, os.cpu_count() or 2))
MASK_OPERATORS = ["mask_narrow", "mask_active"]

# The mask mutants that survived the tests and the quick sanitizer pass on an H100
# (docs/results/mutation.md and the chapter 2/4 and 5/6 runs), as (exercise, operator,
# a piece of the solution's line that the mutant changes, which masked call of that line).
# Found by their line's text, not their id, whose line number moves when a solution does.
# Two survivors of those runs are no longer mutants: 4.7's ballot is 4.4's, which 4.7 takes
# from cudalab/warp_aggregated.cuh (4.4's own ballot is below), and 5.1's broadcast of the
# top is the given shfl_entry, outside the solution's region.
SURVIVORS = [
    ("3.2", "mask_active", "base = __shfl_sync(mask, base, static_cast<int>(leader));", 1),
    ("3.4", "mask_narrow", "base = __shfl_sync(kFullMask, base, 31);", 1),
    ("4.4", "mask_narrow", "base = __shfl_sync(kFullMask, base, 0);", 1),
    ("4.4", "mask_active", "mask[r] = __ballot_sync(kFullMask, selected[r]);", 1),
    ("5.1", "mask_narrow", "const unsigned at_or_before = __ballot_sync(kFullMask, !(x < mine));", 1),
    ("5.1", "mask_narrow", "const Entry right{__shfl_down_sync(kFullMask, mine.key, 1)", 1),
    ("5.2", "mask_active", "const Entry other{__shfl_xor_sync(kFullMask, best.key, offset)", 2),
    ("5.4", "mask_active", "const dist64_t ndl = __shfl_sync(kFullMask, nd, l);", 1),
    ("6.1", "mask_narrow", "mine = lane < kBlock / 32 ? warp_min[lane] : kNone;", None),
    ("7.3", "mask_narrow", "const Seg up{__shfl_up_sync(kFullMask, x.flag, offset)", 1),
    ("7.3", "mask_active", "const Seg up{__shfl_up_sync(kFullMask, x.flag, offset)", 1),
]


def toks(code: str) -> list:
    return warpmask.raw_tokens(code)


def value(expr: str) -> int | None:
    v = warpmask.constant([t.text for t in toks(expr)])
    return None if v is None else v.v & warpmask.FULL


def found(code: str, activemask: bool = True) -> list[tuple[str, str, int]]:
    return [(u.intrinsic, u.kind, u.value) for u in warpmask.find(toks(code), activemask)]


def survivor(exid: str, operator: str, piece: str, which: int | None) -> mutate.Mutant:
    """The mutant of SURVIVORS' entry: its operator at the line holding `piece` (6.1's is
    the line after it), the `which`-th masked call of that line (None: the first)."""
    ex = EXERCISES[exid]
    lines = (REPO / ex.source("solution")).read_text().split("\n")
    line = next(n for n, text in enumerate(lines, 1) if piece in text)
    if exid == "6.1":
        line += 1
    ms = [m for m in mutate.mutants(REPO, ex, [operator]) if m.line == line]
    assert ms, f"{exid} {operator}: no mutant at line {line} ({piece})"
    return next(m for m in ms if m.occurrence == (which or 1))


class ConstantTest(unittest.TestCase):
    """The mask's value: literals, macros' values, casts and integer operators, as C++ does."""

    def test_full_masks(self):
        for expr in ("0xffffffff", "0xFFFFFFFFu", "0XFFFFFFFFU", "~0u", "~0", "-1", "-1u",
                     "4294967295", "4294967295u", "0xffffffffull", "~0ull", "0xffff'ffff",
                     "static_cast<unsigned>(-1)", "(unsigned)-1", "unsigned(-1)", "std::uint32_t(~0)",
                     "0xffffffffffffffffull", "(0xffff << 16) | 0xffff", "0xffffffffu >> 0", "~0u >> 0",
                     "0b11111111111111111111111111111111", "037777777777", "-1 >> 1"):
            with self.subTest(expr=expr):
                self.assertEqual(value(expr), warpmask.FULL)

    def test_partial_masks(self):
        for expr, want in (("0x7fffffffu", 0x7FFFFFFF), ("0xffff", 0xFFFF), ("1", 1), ("0", 0),
                           ("static_cast<unsigned>(0xffff)", 0xFFFF), ("~0u >> 1", 0x7FFFFFFF),
                           ("(1u << 16) - 1", 0xFFFF), ("(unsigned short)0xffffffff", 0xFFFF),
                           ("0xfffffffe", 0xFFFFFFFE), ("true", 1), ("0x0000ffff", 0xFFFF),
                           ("(unsigned)(-1) >> 1", 0x7FFFFFFF), ("std::uint32_t{0xffff}", 0xFFFF)):
            with self.subTest(expr=expr):
                self.assertEqual(value(expr), want)

    def test_not_constants(self):
        for expr in ("mask", "kFullMask", "cudalab::kFullMask", "__activemask()", "1.0", "x ? 1 : 2",
                     "1u << 32", "1 / 0", "__ballot_sync(0xffffffff, p)", "f(1)", "(1u << n) - 1", ""):
            with self.subTest(expr=expr):
                self.assertIsNone(value(expr))

    def test_lanes_in_words(self):
        self.assertEqual(warpmask.missing(0x7FFFFFFF), "lane 31")
        self.assertEqual(warpmask.missing(0xFFFF), "lanes 16-31")
        self.assertEqual(warpmask.lanes(0x0F0F), "lanes 0-3 and 8-11")
        self.assertEqual(warpmask.lanes(0), "no lane")


class FindTest(unittest.TestCase):
    """Which calls the rule finds, on the file's own tokens."""

    def test_every_collective_is_read(self):
        for name in sorted(warpmask.COLLECTIVES):
            with self.subTest(intrinsic=name):
                self.assertEqual(found(f"void f() {{ x = {name}(0xffffu, v); }}"), [(name, "constant", 0xFFFF)])
                self.assertEqual(found(f"void f() {{ x = {name}(0xffffffffu, v); }}"), [])

    def test_what_is_not_a_finding(self):
        code = """
constexpr unsigned kFull = 0xffffffffu;
__device__ void f(unsigned mask, int v) {
  __syncwarp();                                  // the full mask
  v += __shfl_down_sync(kFullMask, v, 16);
  v += __shfl_down_sync(cudalab::kFullMask, v, 8);
  v += __shfl_down_sync(kFull, v, 4);
  v += __shfl_down_sync(mask, v, 2);             // computed: the student's to get right
  const unsigned m = __activemask();             // held once: opportunistic aggregation
  v += __shfl_sync(m, v, __ffs(m) - 1);
  v += __shfl_sync((1u << (blockDim.x % 32)) - 1, v, 0);
  g.shfl(v, 0);
  x.__shfl_sync(0xffff, v, 0);                   // a member of that name is not the intrinsic
  printf("__shfl_sync(0xffff, v, 0)");           // a string
  // __shfl_sync(0x7fffffffu, v, 0) in a comment
  /* __ballot_sync(1, p) */
}"""
        self.assertEqual(found(code), [])

    def test_partial_constants(self):
        code = """
constexpr unsigned kHalf = 0x0000ffffu;
#define MY_MASK 0xffff
#define LOW_LANES (MY_MASK >> 8)
__device__ void f(int v) {
  v += __shfl_down_sync(0xffff, v, 1);
  v += __shfl_xor_sync(kHalf, v, 2);
  v += __shfl_up_sync(MY_MASK, v, 4);
  v += __any_sync(LOW_LANES, v);
  v += __ballot_sync(1, v);
  __syncwarp(static_cast<unsigned>(0x7fffffff));
}"""
        self.assertEqual(found(code), [("__shfl_down_sync", "constant", 0xFFFF),
                                       ("__shfl_xor_sync", "constant", 0xFFFF),
                                       ("__shfl_up_sync", "constant", 0xFFFF),
                                       ("__any_sync", "constant", 0xFF),
                                       ("__ballot_sync", "constant", 1),
                                       ("__syncwarp", "constant", 0x7FFFFFFF)])
        self.assertEqual(warpmask.find(toks(code), True)[1].name, "kHalf")

    def test_a_mask_computed_from_named_constants_is_not_judged(self):
        # lesson 1.3, "Partial warps": the lanes of a last, partial warp computed from the block
        # size; the same value through one named constant is judged (test_partial_constants)
        code = """
constexpr unsigned kBlock = 200;
__device__ void f(int v) {
  if (threadIdx.x >= kBlock / 32 * 32) v += __shfl_down_sync((1u << (kBlock % 32)) - 1, v, 1);
}"""
        self.assertEqual(found(code), [])

    def test_a_constant_whose_name_is_declared_again_is_not_read(self):
        code = """
constexpr unsigned kMask = 0xffffu;
__device__ void f(unsigned kMask, int v) { v += __shfl_down_sync(kMask, v, 1); }"""
        self.assertEqual(found(code), [])
        code = "const unsigned kMask = 0xffffu;\nvoid g() { const unsigned kMask = 0xffffffffu; __syncwarp(kMask); }"
        self.assertEqual(found(code), [])

    def test_activemask_only_where_the_manifest_says_full(self):
        code = """
__device__ void f(int v, bool p) {
  v += __shfl_xor_sync(__activemask(), v, 16);
  const unsigned b = __ballot_sync((__activemask()), p);
  v += __shfl_sync(static_cast<unsigned>(__activemask()), v, 0);
}"""
        self.assertEqual([k for _, k, _ in found(code)], ["activemask"] * 3)
        self.assertEqual(found(code, activemask=False), [])

    def test_a_hostile_file_is_read_without_a_crash_in_linear_time(self):
        import time
        for code in ("__syncwarp(" * 50000, "a * a [ " * 50000, "const int a = b " * 30000,
                     "__shfl_sync(" + "(" * 5000 + "1" + ")" * 5000 + ", v, 0);",
                     "__shfl_sync(" + "(" * 400 + "0xffff" + ")" * 400 + ", v, 0);"):
            start = time.monotonic()
            self.assertEqual(found(code), [])
            self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(found("__shfl_sync(" + "(" * 60 + "0xffff" + ")" * 60 + ", v, 0);"),
                         [("__shfl_sync", "constant", 0xFFFF)])

    def test_manifest_keys(self):
        for ex in EXERCISES.values():
            c = source.contract(ex, REPO)
            with self.subTest(exercise=ex.id):
                self.assertIn(c.warp_mask, ("full", "converged"))
                self.assertTrue(c.warp_mask_why)
        # coalesced_threads() is 4.5's point: the group of the lanes that happen to be converged
        self.assertEqual(source.contract(EXERCISES["4.5"], REPO).warp_mask, "converged")
        self.assertEqual([e.id for e in EXERCISES.values()
                          if source.contract(e, REPO).warp_mask != "full"], ["4.5"])

    def test_course_files_have_no_finding(self):
        """Every solution and starter, by the file's own tokens (the fallback's reading)."""
        for ex in EXERCISES.values():
            c = source.contract(ex, REPO)
            for impl in ("solution", "starter"):
                with self.subTest(exercise=ex.id, impl=impl):
                    text = (REPO / ex.source(impl)).read_text()
                    self.assertEqual(warpmask.find(warpmask.raw_tokens(text), c.warp_mask == "full"), [])


class MutantTest(unittest.TestCase):
    """Every mask mutant of tools/mutate, read from the file's own tokens: a narrowed constant
    mask is found everywhere, __activemask() wherever the manifest says "full". Only a mask the
    code computes (3.2's `(mask) & 0x7fffffffu`) is left to the tests."""

    def test_every_mask_mutant(self):
        counted = {"flagged": 0, "computed": 0}
        for ex in EXERCISES.values():
            c = source.contract(ex, REPO)
            for m in mutate.mutants(REPO, ex, MASK_OPERATORS):
                uses = warpmask.find(warpmask.raw_tokens(m.text), c.warp_mask == "full")
                computed = m.operator == "mask_narrow" and "& 0x7fffffffu" in m.what
                with self.subTest(mutant=m.id, what=m.what):
                    if computed:
                        self.assertEqual(uses, [])
                        counted["computed"] += 1
                    else:
                        self.assertEqual([u.line for u in uses], [m.line])
                        self.assertEqual(uses[0].kind,
                                         "constant" if m.operator == "mask_narrow" else "activemask")
                        counted["flagged"] += 1
        # each collective of a solution region once (75 of them): the given copies of 1.7, 1.8,
        # 4.4, 5.1 and 5.2 that later exercises compose with are headers, which are not mutated;
        # the floor catches a mutant generator that finds next to nothing
        self.assertGreaterEqual(counted["flagged"], 70)
        self.assertLessEqual(counted["computed"], 2)


def write_course_file(tmp: Path, ex, text: str) -> Path:
    path = tmp / "course" / "starter" / ex.chapter_dir / ex.file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def solution_with(exid: str, old: str, new: str, after_includes: str = "") -> str:
    text = (REPO / EXERCISES[exid].source("solution")).read_text()
    assert old in text, (exid, old)
    text = text.replace(old, new, 1)
    if after_includes:
        last = max(i for i, line in enumerate(text.split("\n")) if line.startswith("#include"))
        lines = text.split("\n")
        lines.insert(last + 1, after_includes)
        text = "\n".join(lines)
    return text


# name: (exercise, file, a piece of the first finding's message or None for no finding)
CASES = {
    "a literal partial mask": (
        "1.3", solution_with("1.3", "__shfl_down_sync(kFullMask, v, offset)", "__shfl_down_sync(0xffff, v, offset)"),
        "warp mask: `__shfl_down_sync(0xffff, ...)` (line 24) is a constant mask (0x0000ffff) that leaves "
        "out lanes 16-31"),
    "a macro's partial mask": (
        "1.3", solution_with("1.3", "__shfl_down_sync(kFullMask, v, offset)", "__shfl_down_sync(MY_MASK, v, offset)",
                             "#define MY_MASK 0xffff"),
        "(line 25, via the macro MY_MASK defined at line 8) is a constant mask (= 0x0000ffff)"),
    "a ballot of lane 0 only": (
        "4.4", solution_with("4.4", "__ballot_sync(kFullMask, selected[r])", "__ballot_sync(1, selected[r])"),
        "`__ballot_sync(1, ...)` (line 42) is a constant mask (0x00000001) that leaves out lanes 1-31"),
    "__activemask() in 4.4": (
        "4.4", solution_with("4.4", "__ballot_sync(kFullMask, selected[r])",
                             "__ballot_sync(__activemask(), selected[r])"),
        "`__ballot_sync(__activemask(), ...)` (line 42): __activemask() names the lanes that happen to be "
        "converged"),
    "literal masks in a comment and a string": (
        "1.3", solution_with("1.3", "__shfl_down_sync(kFullMask, v, offset);",
                             '__shfl_down_sync(kFullMask, v, offset);  // not __shfl_down_sync(0xffff, v, o)\n'
                             '  if (v == 12345) printf("__ballot_sync(1, p)\\n");'), None),
    "full masks spelled otherwise": (
        "1.3", solution_with("1.3", "__shfl_down_sync(kFullMask, v, offset)",
                             "__shfl_down_sync(FULL, v, __shfl_sync(~0u, offset, 0) + (-1 & 0))",
                             "#define FULL 0xFFFFFFFFu"), None),
    # coalesced_threads() reads __activemask() inside CUDA's headers, never in the student's code
    "coalesced_threads in 3.2, where the mask must be the ballot": (
        "3.2", solution_with("3.2", "base = __shfl_sync(mask, base, static_cast<int>(leader));",
                             "base = cooperative_groups::coalesced_threads().shfl(base, 0);",
                             "#include <cooperative_groups.h>"), None),
    "4.5's coalesced_threads solution": (
        "4.5", (REPO / EXERCISES["4.5"].source("solution")).read_text(), None),
}


@unittest.skipUnless(HAVE_NVCC, "needs nvcc (the preprocessor passes come from nvcc --dryrun)")
class EndToEndTest(unittest.TestCase):
    """The whole check (source.check_report) over small changes of solutions and over the
    mutants that survived on the H100."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls._tmp.name)
        jobs = [(f"case {name}", exid, text) for name, (exid, text, _) in CASES.items()]
        cls.survivors = [survivor(*s) for s in SURVIVORS]
        jobs += [(f"mutant {m.id}", m.exercise, m.text) for m in cls.survivors]

        def one(job):
            key, exid, text = job
            path = write_course_file(tmp / str(abs(hash(key))), EXERCISES[exid], text)
            return key, source.check_report(EXERCISES[exid], path, root=REPO)
        with ThreadPoolExecutor(WORKERS) as pool:
            cls.reports = dict(pool.map(one, jobs))

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_cases(self):
        for name, (exid, _, want) in CASES.items():
            rep = self.reports[f"case {name}"]
            with self.subTest(case=name):
                self.assertFalse(rep.notes, rep.notes)
                if want is None:
                    self.assertEqual([f.message for f in rep.findings], [])
                else:
                    self.assertIsNotNone(rep.first)
                    self.assertEqual(rep.first.rule, "warp-mask")
                    self.assertIn(want, rep.first.message)

    def test_the_message_teaches(self):
        msg = self.reports["case __activemask() in 4.4"].first
        self.assertIn("; in 4.4 every lane reaches the 8 ballots", msg.message)
        for text in (msg.message, self.reports["case a literal partial mask"].first.message):
            self.assertIn("write cudalab::kFullMask", text)
            self.assertIn('lesson 1.3, "Partial warps"', text)
            self.assertIn("a mask computed from the block size", text)
        details = self.reports["case a literal partial mask"].first.details
        self.assertTrue(details[0].startswith("starter/01-reduce-scan-histogram/sum_warp_shuffle.cu:24: "),
                        details[0])
        self.assertIn("each calling thread must have its own bit set in the mask", details[1])

    def test_the_survivors_are_found(self):
        for m in self.survivors:
            rep = self.reports[f"mutant {m.id}"]
            with self.subTest(mutant=m.id, what=m.what):
                self.assertIsNotNone(rep.first, m.diff)
                self.assertEqual((rep.first.rule, rep.first.line), ("warp-mask", m.line))

    def test_the_grade_is_forbidden(self):
        """tools/grade gives the exercise the status forbidden and no points, and runs nothing."""
        from cudalab_grade import grading
        ex = EXERCISES["4.4"]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "course"
            root.mkdir()
            (root / "chapters").symlink_to(REPO / "chapters")
            write_course_file(Path(tmp), ex, CASES["a ballot of lane 0 only"][1])
            res = grading.grade(ex, grading.Options(root=root, build_dir=Path(tmp) / "build"))
        self.assertEqual(res.status, grading.FORBIDDEN)
        self.assertTrue(res.reason.startswith("warp mask: `__ballot_sync(1, ...)` (line 42)"), res.reason)
        self.assertEqual(res.correctness_points + res.perf_points, 0)
        self.assertTrue(res.details[0].startswith("starter/04-filtering-atomics/copy_if_warp_aggregated.cu:42: "))


class FallbackTest(unittest.TestCase):
    def test_without_nvcc_the_files_tokens_are_read(self):
        ex = EXERCISES["1.3"]
        text = solution_with("1.3", "__shfl_down_sync(kFullMask, v, offset)", "__shfl_down_sync(MY_MASK, v, offset)",
                             "#define MY_MASK 0x7fffffffu")
        with tempfile.TemporaryDirectory() as tmp:
            path = write_course_file(Path(tmp), ex, text)
            with mock.patch.object(tokencheck, "find_nvcc", return_value=None):
                rep = source.check_report(ex, path, root=REPO)
        self.assertIn("nvcc not found", rep.notes[0])
        self.assertEqual(rep.first.rule, "warp-mask")
        self.assertIn("(line 25, via the macro MY_MASK defined at line 8) is a constant mask (= 0x7fffffff) "
                      "that leaves out lane 31", rep.first.message)


if __name__ == "__main__":
    unittest.main()
