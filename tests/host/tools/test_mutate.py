"""Tests of tools/mutate: the operators on small .cu snippets, regions, ids, the class, the score."""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock
from pathlib import Path

from toolload import ROOT, load_tool

mutate_tool = load_tool("mutate", "cudalab_mutate")
sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade import mutate as mu  # noqa: E402
from cudalab_grade import mutation_ops as ops  # noqa: E402
from cudalab_grade import submissions  # noqa: E402
from cudalab_grade.manifest import Exercise, load_all, select  # noqa: E402

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if Path("/usr/local/cuda/bin/nvcc").exists() else None)
EX = Exercise(id="9.1", slug="demo", title="Demo", file="demo.cu", chapter_dir="09-demo",
              chapter_number=9, test_filter="*Demo*", points=10)


def region(body: str, before: str = "", after: str = "") -> str:
    """A file with one student region holding body."""
    return (before + "__global__ void k(const int* in, std::size_t n, int* out) {\n"
            "  // BEGIN SOLUTION\n" + body + "  // STARTER:\n  // // TODO\n  // END SOLUTION\n}\n"
            + after)


def changes(text: str, operator: str) -> list[tuple[list[str], list[str]]]:
    """(removed lines, added lines) of each mutant of one operator."""
    out = []
    for m in mu.mutants_of_text(text, EX, "solutions/09-demo/demo.cu", [operator]):
        lines = m.diff.splitlines()[2:]
        out.append(([ln[1:] for ln in lines if ln.startswith("-")],
                    [ln[1:] for ln in lines if ln.startswith("+")]))
    return out


class OperatorTest(unittest.TestCase):
    def one(self, body: str, operator: str) -> list[tuple[str, str]]:
        """(old line, new line) of each single-line mutant."""
        got = changes(region(body), operator)
        for old, new in got:
            self.assertEqual((len(old), len(new)), (1, 1), (old, new))
        return [(o[0].strip(), n[0].strip()) for o, n in got]

    def test_del_sync(self):
        text = region("  x = 1;\n  __syncthreads();\n  if (t) __syncwarp(m);\n  __threadfence();\n")
        got = changes(text, "del_sync")
        self.assertEqual(len(got), 3)
        self.assertEqual(got[0], (["  __syncthreads();"], [""]))   # the line stays, empty
        self.assertEqual(got[1], (["  if (t) __syncwarp(m);"], ["  if (t) (void)0;"]))
        self.assertEqual(got[2], (["  __threadfence();"], [""]))
        for m in mu.mutants_of_text(text, EX, "x.cu", ["del_sync"]):
            self.assertEqual(m.text.count("\n"), text.count("\n"))  # line numbers kept

    def test_plain_rmw(self):
        got = self.one("  atomicAdd(out, 1);\n  const int s = atomicAdd(out + 1, v);\n"
                       "  cudalab::atomic_add(out, in[i]);\n"
                       "  const auto t = c.fetch_add(1, cuda::memory_order_relaxed);\n", "plain_rmw")
        self.assertEqual(got[0], ("atomicAdd(out, 1);", "*(out) += 1;"))
        self.assertEqual(got[1][1], "const int s = ([&] { auto* p_ = (out + 1); const auto old_ = "
                                    "*p_; const auto v_ = v; *p_ = old_ + v_; return old_; }());")
        self.assertEqual(got[2], ("cudalab::atomic_add(out, in[i]);", "*(out) += in[i];"))
        self.assertIn("c.load(cuda::memory_order_relaxed)", got[3][1])
        self.assertIn("c.store(old_ + v_, cuda::memory_order_relaxed)", got[3][1])
        self.assertEqual(len(got), 4)

    def test_plain_rmw_min_and_cas(self):
        got = self.one("  atomicMin(d + v, nd);\n  const int o = atomicCAS(p, a, b);\n", "plain_rmw")
        self.assertIn("*p_ = (v_ < old_ ? v_ : old_)", got[0][1])
        self.assertIn("*p_ = (old_ == v_ ? (b) : old_)", got[1][1])

    def test_masks(self):
        body = "  v += __shfl_down_sync(0xffffffff, v, o);\n  b = __ballot_sync(mask, p);\n"
        self.assertEqual(self.one(body, "mask_narrow"), [
            ("v += __shfl_down_sync(0xffffffff, v, o);", "v += __shfl_down_sync(0x7fffffffu, v, o);"),
            ("b = __ballot_sync(mask, p);", "b = __ballot_sync((mask) & 0x7fffffffu, p);")])
        self.assertEqual([n for _, n in self.one(body, "mask_active")], [
            "v += __shfl_down_sync(__activemask(), v, o);", "b = __ballot_sync(__activemask(), p);"])

    def test_shfl_dir(self):
        got = self.one("  a = __shfl_down_sync(m, a, 1);\n  b = __shfl_up_sync(m, b, 1);\n"
                       "  c = __shfl_xor_sync(m, c, 1);\n", "shfl_dir")
        self.assertEqual([n for _, n in got], ["a = __shfl_up_sync(m, a, 1);",
                                               "b = __shfl_down_sync(m, b, 1);"])

    def test_cmp_flip(self):
        got = self.one("  if (i < n) out[i] = static_cast<int>(in[i]);\n"
                       "  for (int k = 0; k >= -3; --k) {}\n"
                       "  k<<<1, 32>>>(std::numeric_limits<int>::max());\n", "cmp_flip")
        self.assertEqual([n for _, n in got], ["if (i <= n) out[i] = static_cast<int>(in[i]);",
                                               "for (int k = 0; k > -3; --k) {}"])

    def test_bounds(self):
        body = "  if (i < n) out[i] = 1;\n  if (lane == 0) out[0] = 2;\n  if (d > (a << 1)) x = 3;\n"
        self.assertEqual([n for _, n in self.one(body, "bound_plus")], [
            "if (i < n + 1) out[i] = 1;", "if (lane == 1) out[0] = 2;", "if (d > ((a << 1)) + 1) x = 3;"])
        self.assertEqual([n for _, n in self.one(body, "bound_minus")], [
            "if (i < n - 1) out[i] = 1;", "if (d > ((a << 1)) - 1) x = 3;"])   # no 0 - 1

    def test_drop_guard(self):
        got = self.one("  if (i < n) out[i] = in[i];\n  if (ok && j + 1 < m) x = 1;\n"
                       "  int v = i < n ? in[i] : 0;\n  while (i < n) ++i;\n", "drop_guard")
        self.assertEqual([n for _, n in got], ["if (true) out[i] = in[i];", "if (ok && true) x = 1;",
                                               "int v = true ? in[i] : 0;"])

    def test_init_value(self):
        got = self.one("  int s = 0;\n  float m = FLT_MAX;\n  unsigned u = 0u;\n  float f = 0.0f;\n"
                       "  long long a = std::numeric_limits<long long>::max();\n  int b = Acc{};\n"
                       "  for (unsigned d = 1; d < 32; d *= 2) {}\n  int c = x;\n"
                       "  unsigned l = lane_id();\n  int e = Pair();\n  int g = int();\n", "init_value")
        self.assertEqual([n for _, n in got], ["int s = 1;", "float m = 0;", "unsigned u = 1u;",
                                               "float f = 1.0f;", "long long a = 0;", "int b = Acc{1};",
                                               "int e = Pair{1};", "int g = int{1};"])

    def test_swap_operands(self):
        got = self.one("  int d = hi - lo;\n  int e = a * b - c;\n  x = combine(y, x, op);\n"
                       "  int f = -g;\n", "swap_operands")
        self.assertEqual([n for _, n in got], ["int d = lo - hi;", "x = combine(x, y, op);"])

    def test_static_tile(self):
        got = self.one("  if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);\n"
                       "  slot = atomicAdd(count, 1u);\n", "static_tile")
        self.assertEqual(got, [("if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);",
                                "if (threadIdx.x == 0) s_tile = blockIdx.x;")])

    def test_size_t_int(self):
        got = self.one("  const std::size_t i = blockIdx.x * static_cast<size_t>(blockDim.x);\n",
                       "size_t_int")
        self.assertEqual([n for _, n in got], [
            "const int i = blockIdx.x * static_cast<size_t>(blockDim.x);",
            "const std::size_t i = blockIdx.x * static_cast<int>(blockDim.x);"])

    def test_default_stream(self):
        got = self.one("  k<<<grid, 256, shared * sizeof(int), stream>>>(in, n, out);\n"
                       "  k<<<dim3(g, 1), b, 0, streams[f(i, j)]>>>(in, n, out);\n"
                       "  k<<<grid, 256, 0>>>(in, n, out);\n"           # already on the default stream
                       "  std::vector<std::vector<int>> v; if (a << 1 >> b) x = 0;\n", "default_stream")
        self.assertEqual(got, [
            ("k<<<grid, 256, shared * sizeof(int), stream>>>(in, n, out);",
             "k<<<grid, 256, shared * sizeof(int)>>>(in, n, out);"),
            ("k<<<dim3(g, 1), b, 0, streams[f(i, j)]>>>(in, n, out);", "k<<<dim3(g, 1), b, 0>>>(in, n, out);")])
        # a launch outside the student regions is left alone
        self.assertEqual(changes(region("  x = 0;\n", after="void f() { k<<<1, 1, 0, s>>>(); }\n"),
                                 "default_stream"), [])

    def test_every_operator_has_a_test_and_a_doc(self):
        for name, f in ops.OPERATORS.items():
            self.assertRegex(name, r"^[a-z_]+$")
            self.assertTrue((f.__doc__ or "").strip(), name)
            self.assertTrue(hasattr(self, f"test_{name}") or name in
                            ("mask_narrow", "mask_active", "bound_plus", "bound_minus"), name)


class RegionTest(unittest.TestCase):
    TEXT = ("// if (i < n) __syncthreads(); atomicAdd(p, 1);\n"
            "__device__ int outside(int i, int n) { __syncthreads(); return i < n ? 0 : 1; }\n"
            + region('  const char* s = "i < n; __syncthreads();";  // i < n __syncwarp();\n'
                     "  /* if (i < n) atomicAdd(p, 1); */\n  if (i < n) x = 0;\n")
            + "int after(int a, int b) { return a - b < 0; }\n")

    def test_only_region_code_is_touched(self):
        found = mu.mutants_of_text(self.TEXT, EX, "x.cu")
        self.assertTrue(found)
        lines = self.TEXT.splitlines()
        code_line = next(n for n, ln in enumerate(lines, 1) if ln.strip() == "if (i < n) x = 0;")
        for m in found:
            self.assertEqual(m.line, code_line, m.id)
            new = m.text.splitlines()
            self.assertEqual(len(new), len(lines))
            for n, (a, b) in enumerate(zip(lines, new), 1):
                if n != code_line:
                    self.assertEqual(a, b, m.id)   # comments, strings, other code unchanged

    def test_regions_stop_at_starter(self):
        self.assertEqual(mu.regions(region("  a;\n  b;\n")), [(3, 4)])
        self.assertEqual(mu.regions("// BEGIN SOLUTION\nx;\n// END SOLUTION\n"), [(2, 2)])

    def test_tokens_keep_lines(self):
        toks = ops.tokenize('/* a\nb */ x\n"s\\"t" // c\n#define M \\\n 1\ny')
        self.assertEqual([(t.text, t.line) for t in toks], [("x", 2), ("y", 6)])

    def test_ids_are_stable_and_unique(self):
        a = mu.mutants_of_text(self.TEXT, EX, "x.cu")
        b = mu.mutants_of_text(self.TEXT, EX, "x.cu")
        self.assertEqual([m.id for m in a], [m.id for m in b])
        self.assertEqual(len({m.id for m in a}), len(a))
        two = region("  if (i < n && j < n) x = 0;\n")
        ids = [m.id for m in mu.mutants_of_text(two, EX, "x.cu", ["cmp_flip"])]
        self.assertEqual(ids, ["9.1-cmp_flip-L3-1", "9.1-cmp_flip-L3-2"])
        for m in a:
            self.assertEqual(submissions.safe_name(m.id), m.id)

    def test_choose_is_seeded(self):
        found = mu.mutants_of_text(self.TEXT, EX, "x.cu")
        one = [m.id for m in mu.choose(found, 2, 7)]
        self.assertEqual(one, [m.id for m in mu.choose(found, 2, 7)])
        self.assertEqual(len(one), 2)


class RealSolutionsTest(unittest.TestCase):
    def test_every_exercise_has_mutants_and_they_change_only_regions(self):
        for ex in select(load_all(ROOT), []):
            text = (ROOT / ex.source("solution")).read_text()
            spans = mu.regions(text)
            found = mu.mutants(ROOT, ex)
            self.assertTrue(found, ex.id)
            for m in found[:40]:
                self.assertTrue(any(a <= m.line <= b for a, b in spans), m.id)
                self.assertEqual(m.text.count("\n"), text.count("\n"), m.id)


THREE = ("int f(int x) {\n"
         "  // BEGIN SOLUTION\n  x += 1;\n  // STARTER:\n  // // TODO(9.1): add one\n"
         "  // END SOLUTION\n"
         "  // BEGIN SOLUTION\n  x *= 2;\n  // END SOLUTION\n"
         "  // BEGIN SOLUTION\n  return x;\n  // STARTER:\n  // // TODO(9.1): return it\n"
         "  //\n  // return 0;\n  // END SOLUTION\n}\n")


class PartialStarterTest(unittest.TestCase):
    def test_fill_keeps_one_placeholder(self):
        self.assertEqual(mu.count_blocks(THREE), 3)
        self.assertEqual(mu.fill(THREE, set()), "int f(int x) {\n  x += 1;\n  x *= 2;\n  return x;\n}\n")
        self.assertEqual(mu.fill(THREE, {1}), "int f(int x) {\n  // TODO(9.1): add one\n  x *= 2;\n"
                                              "  return x;\n}\n")
        # a block without a STARTER part becomes make-starter's TODO line
        self.assertEqual(mu.fill(THREE, {2}, "(9.1): Demo"),
                         "int f(int x) {\n  x += 1;\n  // TODO(9.1): Demo\n  return x;\n}\n")
        self.assertEqual(mu.fill(THREE, {3}), "int f(int x) {\n  x += 1;\n  x *= 2;\n"
                                              "  // TODO(9.1): return it\n\n  return 0;\n}\n")

    def test_every_region_filled_from_the_solution_is_make_starter_s_starter(self):
        # fill() with every block kept is exactly what tools/make-starter wrote to starter/,
        # so a partial starter's placeholder is the student's placeholder, byte for byte
        for ex in select(load_all(ROOT), []):
            text = (ROOT / ex.source("solution")).read_text()
            k = mu.count_blocks(text)
            self.assertEqual(mu.fill(text, set(range(1, k + 1)), f"({ex.id}): {ex.title}"),
                             (ROOT / ex.source("starter")).read_text(), ex.id)

    def test_partial_starters_of_the_real_exercises(self):
        ex = select(load_all(ROOT), ["1.8"])[0]
        found = mu.partial_starters(ROOT, ex)
        solution = (ROOT / ex.source("solution")).read_text()
        starter = (ROOT / ex.source("starter")).read_text()
        self.assertEqual([p.id for p in found], [f"1.8-partial-R{i}" for i in range(1, 4)])
        for p in found:
            self.assertEqual((p.regions, p.rel), (3, "01-reduce-scan-histogram/" + ex.file))
            self.assertNotIn("BEGIN SOLUTION", p.text)
            self.assertNotEqual(p.text, starter)
            self.assertTrue(p.todo.startswith("// TODO(1.8)"), p.todo)
            self.assertIn("BEGIN SOLUTION", solution.splitlines()[p.line - 1])
        self.assertIn("const unsigned tile = 0;  // placeholder", found[1].text)   # the known case
        self.assertNotIn("s_tile = atomicAdd(tile_counter", found[1].text)
        self.assertIn("s_tile = atomicAdd(tile_counter", found[0].text)
        one = select(load_all(ROOT), ["1.1"])[0]
        self.assertEqual(mu.partial_starters(ROOT, one), [])         # its only one is the starter
        self.assertEqual(mu.partial_starters(ROOT, one, single=True)[0].text,
                         (ROOT / one.source("starter")).read_text())


class ManifestEquivalentsTest(unittest.TestCase):
    def test_every_listed_equivalent_mutant_exists_and_says_why(self):
        # a listing goes stale when the solution's lines move: its id must name a mutant of
        # the current solution, and its reason must be there for a reviewer to check
        exercises = {e.id: e for e in select(load_all(ROOT), [])}
        for ex_id, listed in mu.equivalents(ROOT).items():
            self.assertIn(ex_id, exercises)
            made = {m.id: m for m in mu.mutants(ROOT, exercises[ex_id])}
            lines = (ROOT / exercises[ex_id].source("solution")).read_text().splitlines()
            quoted = mu.equivalent_lines(ROOT).get(ex_id, {})
            handwritten = {m.id for m in mu.handwritten_mutants(ROOT, exercises[ex_id])}
            for mid, why in listed.items():
                if mid.startswith(f"{ex_id}-{mu.HANDWRITTEN}-"):
                    # a hand-written one (mutants.toml `equivalent`): named, not numbered by line
                    self.assertIn(mid, handwritten, mid)
                    self.assertTrue(why.strip(), f"{mid}: no reason given")
                    continue
                self.assertIn(mid, made, f"{ex_id}: equivalent_mutants lists {mid}, which "
                                         f"tools/mutate --list {ex_id} no longer makes")
                self.assertTrue(why.strip(), f"{mid}: no reason given")
                # the id is a line number: the quote says it still names the judged mutant
                self.assertIn(mid, quoted, f"{mid}: quote the solution's line it mutates (line = ...)")
                self.assertEqual(lines[made[mid].line - 1].strip(), quoted[mid],
                                 f"{mid}: the solution's line {made[mid].line} is no longer the "
                                 f"line the listing quotes: the lines moved; find the mutant "
                                 f"that changes the quoted line (tools/mutate --list) and judge it again")

    def test_equivalent_lines_read_the_quote(self):
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            (root / "chapters" / "09-x").mkdir(parents=True)
            (root / "chapters" / "09-x" / "exercises.toml").write_text(
                '[[exercise]]\nid = "9.1"\nequivalent_mutants = [\n'
                '  { id = "9.1-cmp_flip-L3-1", line = "  if (a < b) {  ", why = "never equal" },\n'
                '  { id = "9.1-cmp_flip-L4-1", why = "no quote" },\n]\n')
            self.assertEqual(mu.equivalent_lines(root), {"9.1": {"9.1-cmp_flip-L3-1": "if (a < b) {"}})


class ClassTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-mutate-")
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def run_tool(self, *argv: str) -> tuple[int, str]:
        with contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(io.StringIO()) as err:
            code = mutate_tool.main(list(argv))
        return code, out.getvalue() + err.getvalue()

    def test_list(self):
        code, out = self.run_tool("--list", "1.1", "1.2")
        self.assertEqual(code, 0, out)
        self.assertIn("01-reduce-scan-histogram:", out)
        self.assertRegex(out, r"1\.1\s+sum_atomic\s+\d+\s+.*plain_rmw 1")
        code, out = self.run_tool("--list", "--operators", "nope")
        self.assertEqual(code, 2)
        self.assertIn("del_sync", out)

    def test_write_is_a_class_the_loader_accepts(self):
        dest = self.tmp / "class"
        code, out = self.run_tool("--write", str(dest), "1.1", "1.3", "--max-per-exercise", "3")
        self.assertEqual(code, 0, out)
        data = json.loads((self.tmp / "class.mutants.json").read_text())
        self.assertEqual(len(data["mutants"]), 6)
        exercises = select(load_all(ROOT), ["1.1", "1.3"])
        entries = submissions.discover(dest)
        self.assertEqual(sorted(e.student for e in entries), sorted(data["mutants"]))
        for e in entries:
            self.assertEqual(e.kind, "dir")
            sub = submissions.map_files(e.path, exercises, student=e.student)
            ex = data["mutants"][e.student]["exercise"]
            self.assertEqual(list(sub.files), [ex])
            self.assertEqual(sub.ignored, [])
            self.assertEqual(sub.problems, {})
            solution = (ROOT / next(x for x in exercises if x.id == ex).source("solution")).read_text()
            self.assertNotEqual(sub.files[ex].read_text(), solution)
        code, out = self.run_tool("--show", next(iter(data["mutants"])))
        self.assertEqual(code, 0, out)
        self.assertIn("+++ b/solutions/01-reduce-scan-histogram/", out)

    def test_write_names_the_commit_sent(self):
        # on a GPU machine the copy's git HEAD may be older than the tree sent: $CUDALAB_COMMIT
        # (set by tools/gpu-check) names the mutants' commit
        with mock.patch.dict(os.environ, {"CUDALAB_COMMIT": "feedc0de"}):
            code, out = self.run_tool("--write", str(self.tmp / "class"), "1.1", "--max-per-exercise", "1")
        self.assertEqual(code, 0, out)
        self.assertEqual(json.loads((self.tmp / "class.mutants.json").read_text())["commit"], "feedc0de")

    def test_score(self):
        data = {"commit": "abc", "mutants": {}}
        statuses = {"failed": 3, "sanitizer": 1, "passed": 2, "compile_error": 1, "timeout": 1,
                    "forbidden": 1}   # forbidden: the source check's warp-mask rule
        n = 0
        for status, count in statuses.items():
            for _ in range(count):
                n += 1
                mid = f"1.1-cmp_flip-L{n}-1"
                data["mutants"][mid] = {"exercise": "1.1", "slug": "sum_atomic",
                                        "operator": "cmp_flip" if n % 2 else "del_sync",
                                        "line": n, "what": "w", "diff": f"-a{n}\n+b{n}\n"}
                d = self.tmp / "out" / "students" / mid
                d.mkdir(parents=True)
                (d / "results.json").write_text(json.dumps(
                    {"cudalab": {"exercises": [{"id": "1.1", "status": status, "reason": "r"}]}}))
        data["mutants"]["1.1-del_sync-L99-1"] = {"exercise": "1.1", "slug": "sum_atomic",
                                                 "operator": "del_sync", "line": 99, "diff": ""}
        equivalent = {"1.1": {"1.1-cmp_flip-L5-1": "same results"}}   # one of the survivors
        r = mu.score(self.tmp / "out", data, equivalent)
        e = r["exercises"]["1.1"]
        self.assertEqual(e["generated"], 10)
        self.assertEqual(len(e["equivalent"]), 1)
        self.assertEqual((e["killed_by_tests"], e["killed_by_sanitizer"], e["killed_by_check"]), (4, 1, 1))
        self.assertEqual([s["id"] for s in e["survived"]], ["1.1-cmp_flip-L6-1"])
        self.assertEqual(e["did_not_compile"], ["1.1-cmp_flip-L7-1"])
        self.assertEqual([s["id"] for s in e["not_graded"]], ["1.1-del_sync-L99-1"])
        self.assertEqual(e["counted"], 7)          # 10 - equivalent - not compiled - not graded
        self.assertEqual(e["score"], round(6 / 7, 4))
        md = mu.markdown(r)
        self.assertIn("| 1.1 sum_atomic |", md)
        self.assertIn("| killed by the source check |", md)
        self.assertIn("survived: 1.1-cmp_flip-L6-1", md)
        self.assertIn("+b6", md)
        # through the command line
        mj = self.tmp / "m.json"
        mj.write_text(json.dumps(data))
        code, out = self.run_tool("--score", str(self.tmp / "out"), "--mutants", str(mj))
        self.assertEqual(code, 0, out)
        self.assertTrue((self.tmp / "out" / "mutation.md").is_file())
        self.assertIn("1.1", json.loads((self.tmp / "out" / "mutation.json").read_text())["exercises"])

    def test_partial_starters_class_and_report(self):
        dest = self.tmp / "partial"
        code, out = self.run_tool("--partial-starters", str(dest), "1.1", "1.8", "7.5")
        self.assertEqual(code, 0, out)
        data = json.loads((self.tmp / "partial.partial.json").read_text())
        self.assertEqual(sorted(data["partials"]), ["1.8-partial-R1", "1.8-partial-R2",
                                                    "1.8-partial-R3",
                                                    "7.5-partial-R1", "7.5-partial-R2"])
        exercises = select(load_all(ROOT), ["1.8", "7.5"])
        entries = submissions.discover(dest)
        self.assertEqual(sorted(e.student for e in entries), sorted(data["partials"]))
        for e in entries:
            sub = submissions.map_files(e.path, exercises, student=e.student)
            self.assertEqual(list(sub.files), [data["partials"][e.student]["exercise"]])
            self.assertEqual((sub.ignored, sub.problems), ([], {}))
        graded = self.tmp / "graded"
        verdicts = {"1.8-partial-R1": "sanitizer", "1.8-partial-R2": "crashed",
                    "1.8-partial-R3": "compile_error",
                    "7.5-partial-R1": "failed", "7.5-partial-R2": "failed"}
        for pid, status in verdicts.items():
            d = graded / "students" / pid
            d.mkdir(parents=True)
            ex = data["partials"][pid]["exercise"]
            (d / "results.json").write_text(json.dumps(
                {"cudalab": {"exercises": [{"id": ex, "status": status, "reason": "r"}]}}))
        listing = str(self.tmp / "partial.partial.json")
        code, out = self.run_tool("--score", str(graded), "--partials", listing)
        self.assertEqual(code, 0, out)
        r = json.loads((graded / "partial.json").read_text())
        self.assertEqual(r["counts"], {"fails": 4, "does not compile": 1, "PASSES": 0,
                                       "not graded": 0})
        self.assertIn("| 1.8 exclusive_scan_decoupled_lookback | 3 of 3 |",
                      (graded / "partial.md").read_text())
        # one that passes its tests, one not graded: exit 1, each named
        (graded / "students" / "7.5-partial-R2" / "results.json").write_text(json.dumps(
            {"cudalab": {"exercises": [{"id": "7.5", "status": "passed"}]}}))
        shutil.rmtree(graded / "students" / "7.5-partial-R1")
        code, out = self.run_tool("--score", str(graded), "--partials", listing)
        self.assertEqual(code, 1, out)
        self.assertIn("7.5-partial-R2: passes its tests with region 2 of 2", out)
        self.assertIn("7.5-partial-R1: not graded", out)

    def test_equivalents_read_why_or_reason(self):
        root = self.tmp / "root"
        (root / "chapters" / "09-demo").mkdir(parents=True)
        (root / "chapters" / "09-demo" / "exercises.toml").write_text(
            '[[exercise]]\nid = "9.1"\nequivalent_mutants = [\n'
            '  { id = "9.1-cmp_flip-L3-1", why = "never equal" },\n'
            '  { id = "9.1-bound-L4-1", reason = "a covered barrier" },\n]\n')
        self.assertEqual(mu.equivalents(root), {"9.1": {"9.1-cmp_flip-L3-1": "never equal",
                                                        "9.1-bound-L4-1": "a covered barrier"}})

    def test_compile_command_drops_werror(self):
        ex = select(load_all(ROOT), ["1.1"])[0]
        cmd = mu.compile_command(ROOT, ex, None)
        self.assertIn("@SRC@", cmd)
        self.assertIn("@OUT@", cmd)
        self.assertFalse([a for a in cmd if "Werror" in a])

    def test_compile_command_of_another_checkout(self):
        # a worktree may use the main tree's build folder: the entry of the same file there,
        # with that tree's folder replaced by this one's
        ex = select(load_all(ROOT), ["7.2"])[0]
        other = "/elsewhere/course"
        build = self.tmp / "build"
        build.mkdir()
        (build / "compile_commands.json").write_text(json.dumps([{
            "directory": f"{other}/build/ci", "file": f"{other}/{ex.source('solution')}",
            "command": f"/usr/local/cuda/bin/nvcc -I{other}/chapters/07-kdtree-large-nodes/include "
                       f"-isystem={other}/chapters/common/include -I/elsewhere/coursework/x -O3 "
                       f"--Werror=all-warnings -lineinfo -x cu -c {other}/{ex.source('solution')} "
                       "-o chapters/x.o"}]))
        cmd = mu.compile_command(ROOT, ex, build)
        here = str(ROOT.resolve())
        self.assertEqual(cmd, ["/usr/local/cuda/bin/nvcc",
                               f"-I{here}/chapters/07-kdtree-large-nodes/include",
                               f"-isystem={here}/chapters/common/include",
                               "-I/elsewhere/coursework/x", "-O3", "-lineinfo", "-x", "cu", "-c",
                               "@SRC@", "-o", "@OUT@"])

    def test_compile_command_without_a_build_has_every_chapter_s_headers(self):
        ex = select(load_all(ROOT), ["7.2"])[0]
        cmd = mu.compile_command(ROOT, ex, self.tmp / "no-build")
        includes = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-I"]
        self.assertEqual(includes[0], str(ROOT / "chapters" / "07-kdtree-large-nodes" / "include"))
        self.assertIn(str(ROOT / "chapters" / "03-device-stack" / "include"), includes)  # stack.cuh
        self.assertIn(str(ROOT / "chapters" / "common" / "include"), includes)

    @unittest.skipUnless(NVCC, "no nvcc")
    def test_compile_check_on_two_mutants(self):
        ex = select(load_all(ROOT), ["1.1"])[0]
        found = [m for m in mu.mutants(ROOT, ex, ["plain_rmw"])][:1]
        bad = mu.Mutant(**dict(vars(found[0]), id="1.1-broken", text=found[0].text.replace(
            "namespace cudalab::reduce {", "namespace cudalab::reduce {\nthis is not C++;", 1)))
        kept, dropped = mu.compile_check(found + [bad], ROOT, {"1.1": ex}, None, 2,
                                         say=lambda msg: None)
        self.assertEqual([m.id for m in kept], [found[0].id])
        self.assertEqual(len(dropped), 1)
        self.assertIn("1.1-broken", dropped[0])


if __name__ == "__main__":
    unittest.main()


HW_TOML = '''
[[mutant]]
exercise = "9.1"
name = "plus-two"
why = "adds two"
old = "x += 1;"
new = "x += 2;"

[[mutant]]
exercise = "9.1"
name = "keep-x"
why = "returns the input"
equivalent = "documents a nuance"
old = """  x *= 2;
"""
new = """  x *= 1;
  x *= 2;
"""
'''


class HandwrittenTest(unittest.TestCase):
    """The hand-written mutants of chapters/<ch>/mutants.toml (operator hw)."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-mutate-hw-")
        self.root = Path(self._tmp.name)
        (self.root / "chapters" / "09-demo").mkdir(parents=True)
        (self.root / "solutions" / "09-demo").mkdir(parents=True)
        # x += 1 also occurs outside the regions: only the region's occurrence counts
        (self.root / "solutions" / "09-demo" / "demo.cu").write_text(
            "int g(int x) { x += 1; return x; }\n" + THREE)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, text: str) -> None:
        (self.root / "chapters" / "09-demo" / "mutants.toml").write_text(text)

    def test_entries_apply_inside_the_regions(self):
        self.write(HW_TOML)
        found = mu.mutants(self.root, EX, ["hw"])
        self.assertEqual([m.id for m in found], ["9.1-hw-plus-two", "9.1-hw-keep-x"])
        plus = found[0]
        self.assertEqual((plus.operator, plus.line, plus.what), ("hw", 4, "adds two"))
        self.assertIn("int g(int x) { x += 1; return x; }", plus.text)   # outside: untouched
        self.assertIn("  x += 2;\n", plus.text)
        self.assertIn("-  x += 1;\n+  x += 2;\n", plus.diff)
        self.assertEqual(found[1].text.count("\n"), plus.text.count("\n") + 1)
        self.assertEqual(mu.equivalents(self.root), {"9.1": {"9.1-hw-keep-x": "documents a nuance"}})
        # not without being asked for, nor with other operators only
        self.assertFalse(any(m.operator == "hw" for m in mu.mutants(self.root, EX)))
        self.assertFalse(any(m.operator == "hw" for m in mu.mutants(self.root, EX, ["cmp_flip"])))
        self.assertTrue(all(m.operator in ("hw", "bound_plus")
                            for m in mu.mutants(self.root, EX, ["bound_plus", "hw"])))

    def test_bad_entries_say_where(self):
        from cudalab_grade.manifest import UsageError
        cases = {
            'old = "return 0;"': "occurs 0 times",           # only in the STARTER part
            'old = "x"': "occurs 3 times",
        }
        for old, message in cases.items():
            self.write(f'[[mutant]]\nexercise = "9.1"\nname = "n"\nwhy = "w"\n{old}\nnew = "y"\n')
            with self.assertRaisesRegex(UsageError, message):
                mu.mutants(self.root, EX, ["hw"])
        for text, message in [
            ('[[mutant]]\nexercise = "9.1"\nname = "n"\nold = "x += 1;"\nnew = "y"\n', "missing why"),
            ('[[mutant]]\nexercise = "9.1"\nname = "N_1"\nwhy = "w"\nold = "a"\nnew = "b"\n', "name"),
            ('[[mutant]]\nexercise = "9.1"\nname = "n"\nwhy = "w"\nold = "a"\nnew = "a"\n', "differs"),
            ('[[mutant]]\nexercise = "9.1"\nname = "n"\nwhy = "w"\nold = "a"\nnew = "b"\nwhere = 1\n',
             "unknown key where"),
            ('[[mutant]]\nexercise = "9.1"\nname = "n"\nwhy = "w"\nold = "a"\nnew = "b"\n' * 2,
             "used twice"),
        ]:
            self.write(text)
            with self.assertRaisesRegex(UsageError, message):
                mu.handwritten_entries(self.root)

    def test_every_corpus_entry_applies_to_its_exercise(self):
        # a solution edit that moves an entry's text out of the regions, or makes it occur twice,
        # fails here; every exercise has at least one hand-written mistake
        exercises = {e.id: e for e in select(load_all(ROOT), [])}
        entries = mu.handwritten_entries(ROOT)
        self.assertEqual(sorted(set(entries) - set(exercises)), [], "entries of unknown exercises")
        self.assertEqual(sorted(set(exercises) - set(entries), key=mu._id_key), [],
                         "exercises without a hand-written mutant")
        for ex_id, ex in exercises.items():
            text = (ROOT / ex.source("solution")).read_text()
            spans = mu.regions(text)
            for m in mu.handwritten_mutants(ROOT, ex, text, entries):
                self.assertNotEqual(m.text, text, m.id)
                self.assertTrue(any(a <= m.line <= b for a, b in spans), m.id)
                self.assertEqual(submissions.safe_name(m.id), m.id)
                # the regions' markers are intact: the mutant is still a file make-starter reads
                self.assertEqual(mu.count_blocks(m.text), mu.count_blocks(text), m.id)

    def test_write_show_list_and_score_through_the_tool(self):
        with tempfile.TemporaryDirectory(prefix="test-mutate-hw-class-") as d:
            tmp = Path(d)
            run = ClassTest.run_tool
            code, out = run(self, "--write", str(tmp / "class"), "1.8", "--handwritten")
            self.assertEqual(code, 0, out)
            data = json.loads((tmp / "class.mutants.json").read_text())
            ids = sorted(data["mutants"])
            self.assertTrue(ids and all(i.startswith("1.8-hw-") for i in ids), ids)
            self.assertIn("1.8-hw-aggregate-ends-lookback", ids)
            self.assertEqual({m["operator"] for m in data["mutants"].values()}, {"hw"})
            entries = submissions.discover(tmp / "class")
            self.assertEqual(sorted(e.student for e in entries), ids)
            # beside the token operators: both kinds in one class
            code, out = run(self, "--write", str(tmp / "both"), "1.8", "--operators", "hw,del_sync")
            self.assertEqual(code, 0, out)
            both = json.loads((tmp / "both.mutants.json").read_text())["mutants"]
            self.assertEqual({m["operator"] for m in both.values()}, {"hw", "del_sync"})
            code, out = run(self, "--show", "1.8-hw-aggregate-ends-lookback")
            self.assertEqual(code, 0, out)
            self.assertIn("status_of(w) != kInvalid", out)
            code, out = run(self, "--list", "1.8", "--handwritten")
            self.assertEqual(code, 0, out)
            self.assertRegex(out, r"1\.8\s+exclusive_scan_decoupled_lookback\s+\d+\s+hw \d+")
            code, out = run(self, "--list", "--operators", "help")
            self.assertIn("hw", out)
            # graded: one killed, the rest survive; the report names them
            out_dir = tmp / "out"
            for n, mid in enumerate(ids):
                f = out_dir / "students" / mid / "results.json"
                f.parent.mkdir(parents=True)
                f.write_text(json.dumps({"cudalab": {"exercises": [
                    {"id": "1.8", "status": "failed" if n == 0 else "passed", "reason": ""}]}}))
            code, out = run(self, "--score", str(out_dir), "--mutants", str(tmp / "class.mutants.json"))
            self.assertEqual(code, 0, out)
            md = (out_dir / "mutation.md").read_text()
            self.assertIn(f"hw 1/{len(ids)}", md)
            self.assertIn(f"survived: {ids[1]} (", md)
