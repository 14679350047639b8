"""Tests of tools/mutate --tce (Trivial Compiler Equivalence): a mutant whose compiled code is
the solution's is equivalent. A demo exercise of a few lines, compiled with nvcc (CI has it;
the tests that compile skip without it); the score of TCE-equivalent mutants needs no nvcc."""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from toolload import ROOT, load_tool

mutate_tool = load_tool("mutate", "cudalab_mutate_tce")
sys.path.insert(0, str(ROOT / "tools"))
from cudalab_grade import mutate as mu  # noqa: E402
from cudalab_grade import mutate_tce as tce  # noqa: E402
from cudalab_grade.manifest import Exercise, load_all, select  # noqa: E402

NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if Path("/usr/local/cuda/bin/nvcc").exists() else None)
EX = Exercise(id="9.1", slug="demo", title="Demo", file="demo.cu", chapter_dir="09-demo",
              chapter_number=9, test_filter="*Demo*", points=10)

# Line 8's `v = 0` is a dead store (init_value 0 -> 1 compiles to the same code); line 10's
# guard is not (cmp_flip < -> <= writes out[n]). The host function prints __FILE__ and
# __LINE__, as CUDALAB_CHECK does: compiled from another folder, the copy must still be the
# solution's file.
DEMO = """\
// A demo exercise for the TCE tests: one region, a dead store and a real bound.
#include <cstddef>
#include <cstdio>

__global__ void demo_kernel(const int* in, std::size_t n, int* out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  // BEGIN SOLUTION
  int v = 0;
  v = in[i < n ? i : 0];
  if (i < n) out[i] = v;
  // STARTER:
  // // TODO
  // END SOLUTION
}

int demo(const int* in, std::size_t n, int* out) {
  demo_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(in, n, out);
  std::printf("launched at %s:%d\\n", __FILE__, __LINE__);
  return 0;
}
"""
SHARED = """\
__global__ void shared_kernel(int* out) {
  __shared__ int s[64];
  s[threadIdx.x & 31] = static_cast<int>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) & 31];
}
"""
COMMAND = ["-O3", "-arch=sm_90", "-lineinfo", "-x", "cu", "-c", "@SRC@", "-o", "@OUT@"]


@unittest.skipUnless(NVCC, "no nvcc")
class TceCompileTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="test-mutate-tce-")
        self.root = Path(self._tmp.name)
        self.solution = self.root / "solutions" / "09-demo" / "demo.cu"
        self.solution.parent.mkdir(parents=True)
        self.solution.write_text(DEMO)

    def tearDown(self):
        self._tmp.cleanup()

    def code(self, text: str, solution: Path | None = None) -> tce.Code:
        code, log = tce.compile_code(text, "demo.cu", solution or self.solution, [NVCC] + COMMAND,
                                     self.root)
        self.assertIsNotNone(code, log)
        return code

    def test_a_dead_store_is_equivalent_a_bound_is_not(self):
        found = {m.id: m for m in mu.mutants_of_text(DEMO, EX, "solutions/09-demo/demo.cu")}
        dead, bound = found["9.1-init_value-L8-1"], found["9.1-cmp_flip-L10-1"]
        broken = mu.Mutant(**dict(vars(dead), id="9.1-broken",
                                  text=DEMO.replace("int v = 0;", "int v = ;")))
        said: list[str] = []
        with mock.patch.dict(os.environ, {"CUDACXX": NVCC}):
            kept, dropped, same = mu.tce_check([dead, bound, broken], self.root, {"9.1": EX},
                                               None, 2, say=said.append)
        self.assertEqual([m.id for m in kept], [bound.id])
        self.assertEqual(len(dropped), 1)
        self.assertIn("9.1-broken: does not compile", dropped[0])
        self.assertEqual(list(same), [dead.id])
        self.assertEqual(same[dead.id]["why"], tce.REASON)
        self.assertEqual(same[dead.id]["line"], 8)
        self.assertIn("ptx_same", same[dead.id])
        self.assertIn(f"equivalent {dead.id}: the same machine code as the solution (TCE)", said)

    def test_the_same_file_compiled_in_two_folders_is_the_same_code(self):
        # the module id nvcc derives from the folder and the temporary folder's name in
        # __FILE__ must not make two compiles of the same text differ
        a, b = self.code(DEMO), self.code(DEMO)
        self.assertEqual(a.same_as(b), (True, ""))
        self.assertEqual(sorted(a.device), ["sm_90"])
        self.assertTrue(a.ptx_same_as(b))

    def test_file_is_the_solution_s_path(self):
        # __FILE__ is what the #line directive names: another path (same length), other code
        other = self.solution.with_name("dome.cu")
        same, diff = self.code(DEMO).same_as(self.code(DEMO, other))
        self.assertFalse(same)
        self.assertIn("the host code", diff)

    def test_host_code_is_compared(self):
        same, diff = self.code(DEMO).same_as(self.code(DEMO.replace("return 0;", "return 1;")))
        self.assertFalse(same)
        self.assertIn("the host code", diff)

    def test_a_shared_array_s_size_is_compared(self):
        # the SASS is the same (only s[0..31] is used), the kernel's shared memory is not
        same, diff = self.code(SHARED).same_as(self.code(SHARED.replace("[64]", "[65]")))
        self.assertFalse(same)
        self.assertIn("the device code of sm_90: .nv.shared.", diff)

    def test_line_info_is_left_out_of_the_comparison(self):
        self.assertNotIn("-lineinfo", tce.tce_command([NVCC] + COMMAND))
        self.assertEqual(tce.line_directive(self.solution), f'#line 1 "{self.solution}"\n')

    @unittest.skipUnless((ROOT / "solutions").is_dir(), "no solutions/ (the student edition)")
    def test_write_leaves_tce_equivalent_mutants_out_of_the_class(self):
        # tools/mutate --write --tce on a real exercise (7.2's two bound_plus mutants: with
        # nvcc 13.0, L27's a < 4 compiles to the solution's code, L29's does not): every
        # mutant is written, dropped or listed as equivalent, once
        dest = self.root / "class"
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = mutate_tool.main(["--write", str(dest), "7.2", "--operators", "bound_plus",
                                     "--tce"])
        self.assertEqual(code, 0, out.getvalue())
        data = json.loads((self.root / "class.mutants.json").read_text())
        self.assertTrue(data["tce"] and data["compile_checked"])
        written, same = set(data["mutants"]), set(data["tce_equivalent"])
        dropped = {d.split(":", 1)[0] for d in data["dropped"]}
        ex = select(load_all(ROOT), ["7.2"])[0]
        every = {m.id for m in mu.mutants(ROOT, ex, ["bound_plus"])}
        self.assertTrue(every)
        self.assertTrue(written, "a real change (L29) is written")
        self.assertEqual(written | same | dropped, every)
        self.assertEqual(len(written) + len(same) + len(dropped), len(every))
        self.assertEqual({p.name for p in dest.iterdir()}, written)
        for mid in same:
            self.assertEqual(data["tce_equivalent"][mid]["why"], tce.REASON)


class TceScoreTest(unittest.TestCase):
    def test_tce_equivalent_mutants_count_as_generated_and_equivalent(self):
        with tempfile.TemporaryDirectory(prefix="test-mutate-tce-") as tmp:
            out = Path(tmp)
            record = {"exercise": "1.1", "slug": "sum_atomic", "operator": "cmp_flip",
                      "what": "< -> <=", "diff": "-a\n+b\n"}
            data = {"commit": "abc", "mutants": {}, "tce_equivalent": {
                "1.1-cmp_flip-L3-1": dict(record, line=3, why=tce.REASON, ptx_same=True),
                "1.1-cmp_flip-L4-1": dict(record, line=4, why=tce.REASON, ptx_same=True)}}
            for n, status in ((5, "failed"), (6, "passed")):
                mid = f"1.1-cmp_flip-L{n}-1"
                data["mutants"][mid] = dict(record, line=n)
                d = out / "students" / mid
                d.mkdir(parents=True)
                (d / "results.json").write_text(json.dumps(
                    {"cudalab": {"exercises": [{"id": "1.1", "status": status}]}}))
            listed = {"1.1": {"1.1-cmp_flip-L4-1": "never equal"}}   # also in the manifest
            r = mu.score(out, data, listed)
        e = r["exercises"]["1.1"]
        self.assertEqual((e["generated"], len(e["equivalent"]), e["equivalent_tce"]), (4, 2, 2))
        self.assertEqual(e["operators"]["cmp_flip"], {"generated": 4, "killed": 1})
        self.assertEqual((e["counted"], e["killed"], e["score"]), (2, 1, 0.5))
        self.assertEqual(e["equivalent_but_killed"], [])
        why = {s["id"]: s["why"] for s in e["equivalent"]}
        self.assertEqual(why, {"1.1-cmp_flip-L3-1": tce.REASON, "1.1-cmp_flip-L4-1": "never equal"})
        md = mu.markdown(r)
        self.assertIn("| 4 | 2 (2 TCE) | 1 | 0 | 0 | 1 | 50.0 % |", md)
        self.assertIn("- equivalent (same machine code: TCE): 1.1-cmp_flip-L3-1 (< -> <=)", md)
        self.assertIn("- equivalent (same machine code: TCE): 1.1-cmp_flip-L4-1: never equal", md)

    def test_a_listing_without_tce_scores_as_before(self):
        data = {"mutants": {}}
        self.assertEqual(mu.score(Path("/nonexistent"), data, {})["exercises"], {})


class ElfTest(unittest.TestCase):
    def test_not_an_elf_file(self):
        with self.assertRaises(tce.ElfError):
            tce.sections(b"not an object")
        self.assertEqual(tce.cubin_arch(b"not a cubin"), "")

    def test_cubin_arch_from_the_header(self):
        def cubin(abi: int, flags: int) -> bytes:
            head = bytearray(64)
            head[:4], head[8] = b"\x7fELF", abi
            head[0x30:0x34] = flags.to_bytes(4, "little")
            return bytes(head)
        self.assertEqual(tce.cubin_arch(cubin(8, 0x6007802)), "sm_120")   # nvcc 13, sm_120
        self.assertEqual(tce.cubin_arch(cubin(8, 0x6005a04)), "sm_90")
        self.assertEqual(tce.cubin_arch(cubin(7, 0x500546)), "sm_70")     # the older ABI


if __name__ == "__main__":
    unittest.main()
