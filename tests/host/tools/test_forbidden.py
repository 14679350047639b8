"""Tests of the forbidden-API check (tools/cudalab_grade/source.py, tokencheck.py, objcheck.py).

The token checks run the real preprocessor (nvcc -E, no GPU needed) over small
attack files, one per way a student could hide a forbidden API, and over every
solution and starter of the course, which must pass their own exercise's
checks. The object checks are tested on canned cuobjdump and nm output (real
output of the course's objects, trimmed) and, where g++ and nm exist, on a
small host object. Tests that need nvcc are skipped without it.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tools"))
from cudalab_grade import manifest, objcheck, source, tokencheck  # noqa: E402

EXERCISES = {e.id: e for c in manifest.load_all(REPO) for e in c.exercises}
HAVE_NVCC = tokencheck.find_nvcc() is not None
WORKERS = max(2, os.cpu_count() or 2)

HEAD_11 = """#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
"""
# The end of a 1.1 (sum_atomic) file: a launcher of the kernel `k` and the two API functions.
TAIL_11 = """
namespace cudalab::reduce {
template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  k<<<1, 1, 0, stream>>>(in, n, out);
}
void sum_atomic(const int* in, std::size_t n, long long* out, cudaStream_t s) { launch(in, n, out, s); }
void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t s) { launch(in, n, out, s); }
}  // namespace cudalab::reduce
"""
KERNEL_11 = """
template <class T, class Acc>
__global__ void k(const T* in, std::size_t n, Acc* out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) cudalab::atomic_add(out, static_cast<Acc>(in[i]));
}
"""
CUB_11 = """
namespace cudalab::reduce {
template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  std::size_t bytes = 0;
  C::DeviceReduce::Sum(nullptr, bytes, in, out, n, stream);
  k<<<1, 1, 0, stream>>>();
}
void sum_atomic(const int* in, std::size_t n, long long* out, cudaStream_t s) { launch(in, n, out, s); }
}  // namespace cudalab::reduce
"""
# A 1.2 (sum_shared_tree) or 1.3 file: the kernel's body goes in BODY, declarations in DECL.
WARP_KERNEL = """#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
DECL
namespace cudalab::reduce {
template <class T, class Acc>
__global__ void k(const T* in, std::size_t n, Acc* out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  Acc v = i < n ? static_cast<Acc>(in[i]) : Acc{0};
BODY
  if ((threadIdx.x & 31u) == 0 && i < n) atomic_add(out, v);
}
template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  k<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(in, n, out);
}
void FN(const int* in, std::size_t n, long long* out, cudaStream_t s) { launch(in, n, out, s); }
void FN(const float* in, std::size_t n, float* out, cudaStream_t s) { launch(in, n, out, s); }
}  // namespace cudalab::reduce
"""


def warp(exid: str, body: str, decl: str = "") -> str:
    fn = {"1.2": "sum_shared_tree", "1.3": "sum_warp_shuffle"}[exid]
    return WARP_KERNEL.replace("DECL", decl).replace("BODY", body).replace("FN", fn)


SORT_21 = """#include <algorithm>
#include <vector>
#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"
PRE
namespace cudalab::sort {
__global__ void k() {}
void odd_even_transposition_sort(const int* in, std::size_t n, int* out, std::size_t segment,
                                 cudaStream_t stream) {
  std::vector<int> v(n);
  CUDALAB_CHECK(cudaMemcpy(v.data(), in, n * sizeof(int), cudaMemcpyDeviceToHost));
BODY
  CUDALAB_CHECK(cudaMemcpy(out, v.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  k<<<1, 1, 0, stream>>>();
}
}  // namespace cudalab::sort
"""


# A 2.4 (merge_runs_per_thread) kernel whose thread merges its pair of runs with MERGE.
MERGE_24 = """#include <cuda/std/__algorithm/merge.h>
#include <cuda/std/utility>
#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"
namespace cudalab::sort {
__global__ void k(const int* in, std::size_t n, int* out, std::size_t run) {
  const std::size_t p0 = 2 * run * threadIdx.x, a = p0 + run < n ? p0 + run : n, b = a + run < n ? a + run : n;
  const int *ka = in, *kb = in; int* ko = out + p0;
  if (p0 < n) MERGE(ka + p0, ka + a, kb + a, kb + b, ko);
}
void merge_runs_per_thread(const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t s) {
  k<<<1, 1024, 0, s>>>(in, n, out, run);
}
}  // namespace cudalab::sort
"""


def sort21(body: str, pre: str = "") -> str:
    return SORT_21.replace("PRE", pre).replace("BODY", body)


# name: (exercise, source, rule of the first finding, a piece of its message)
ATTACKS = {
    "macro renaming cub": (
        "1.1", "#include <cub/device/device_reduce.cuh>\n" + HEAD_11 + "#define C cub\n"
        "__global__ void k() {}\n" + CUB_11,
        "name", "uses forbidden API 'cub::' (line 12: `cub::DeviceReduce::Sum` via the macro C defined at line 5)"),
    "digraph define renaming cub": (
        "1.1", "#include <cub/device/device_reduce.cuh>\n" + HEAD_11 + "%:define C cub\n"
        "__global__ void k() {}\n" + CUB_11, "name", "via the macro C defined at line 5"),
    "token pasting __shfl_down_sync": (
        "1.2", warp("1.2", "  for (int d = 16; d > 0; d /= 2) v += SHFL(v, d);",
                    "#define SHFL(v, d) __sh##fl_down_sync(0xffffffffu, v, d)"),
        "name", "uses forbidden API '__shfl' (line 10: `__shfl_down_sync` via the macro SHFL defined at "
                "line 4, by token pasting)"),
    "inline PTX shuffle": (
        "1.2", warp("1.2", '  float r;\n  asm volatile("shfl.sync.down.b32 %0, %1, 16, 0x1f, -1;" '
                           ': "=f"(r) : "f"(float(v)));\n  v += Acc(r);'),
        "asm", "uses inline assembly (`asm`, line 11)"),
    "inline PTX behind a macro": (
        "1.2", warp("1.2", '  float r;\n  PTX("shfl.sync.down.b32 %0, %1, 16, 0x1f, -1;" : "=f"(r) : '
                           '"f"(float(v)));\n  v += Acc(r);', "#define PTX __asm__ __volatile__"),
        "asm", "via the macro PTX defined at line 4"),
    "__attribute__((shared))": (
        "1.3", warp("1.3", "  __attribute__((shared)) Acc partial[256];\n  partial[threadIdx.x] = v;"),
        "name", "uses forbidden API '__shared__' (line 10: `__attribute__((shared))` is `__shared__`)"),
    "__attribute__((__shared__)) from a macro": (
        "1.3", warp("1.3", "  SHARED Acc partial[256];\n  partial[threadIdx.x] = v;",
                    "#define SHARED __attribute__((noinline, __shared__))"),
        "name", "via the macro SHARED defined at line 4"),
    "namespace alias for cooperative_groups": (
        "1.2", warp("1.2", "  v = cg::reduce(cg::tiled_partition<32>(cg::this_thread_block()), v, "
                           "cg::plus<Acc>());",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                    "namespace cg = cooperative_groups;"),
        "name", "`cg::reduce` is `cooperative_groups::reduce` through the namespace alias cg of line 6"),
    "alias of a pasted namespace name": (
        "1.2", warp("1.2", "  v = g::reduce(g::tiled_partition<32>(g::this_thread_block()), v, g::plus<Acc>());",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                    "#define CG(a, b) a##b\nnamespace g = CG(cooperative_, groups);"),
        "name", "uses forbidden API 'cooperative_groups::reduce' (line 13"),
    "cg::reduce by argument-dependent lookup": (
        "1.2", warp("1.2", "  auto tile = cg::tiled_partition<32>(cg::this_thread_block());\n"
                           "  v = reduce(tile, v, cg::plus<Acc>());",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                    "namespace cg = cooperative_groups;"),
        "name", "`reduce(...)` calls `cooperative_groups::reduce` by argument-dependent lookup"),
    "using-directive of cub": (
        "1.1", "#include <cub/device/device_reduce.cuh>\n" + HEAD_11 + "using namespace cub;\n#define C\n"
        "__global__ void k() {}\n" + CUB_11.replace("C::", ""),
        "name", "uses forbidden API 'cub::' (line 5: `using namespace cub`)"),
    "[[gnu::shared]]": (
        "1.3", warp("1.3", "  [[gnu::shared]] Acc partial[256];\n  partial[threadIdx.x] = v;"),
        "name", "uses forbidden API '__shared__' (line 10: `[[gnu::shared]]` is `__shared__`)"),
    "[[using gnu: aligned(16), shared]] from a macro": (
        "1.3", warp("1.3", "  SHARED Acc partial[256];\n  partial[threadIdx.x] = v;",
                    "#define SHARED [[using gnu: aligned(16), shared]]"),
        "name", "`[[using gnu: shared]]` is `__shared__` via the macro SHARED defined at line 4"),
    "warp scan by __reduce_add_sync in 1.5": (
        "1.5", """#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"
namespace cudalab::scan {
__global__ void k(const int* in, std::size_t n, int* out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const unsigned lane = threadIdx.x & 31u, v = i < n ? static_cast<unsigned>(in[i]) : 0u;
  unsigned mine = v;
  for (unsigned k = 0; k < 32; ++k)
    if (lane <= k) { const unsigned r = __reduce_add_sync(k == 31u ? ~0u : (2u << k) - 1u, v); if (lane == k) mine = r; }
  if (i < n) out[i] = static_cast<int>(mine);
}
void inclusive_scan_hillis_steele(const int* in, std::size_t n, int* out, std::size_t tile, cudaStream_t s) {
  k<<<static_cast<unsigned>((n + tile - 1) / tile), static_cast<unsigned>(tile), 0, s>>>(in, n, out);
}
}  // namespace cudalab::scan
""", "name", "uses forbidden API '__reduce_' (line 9); 1.5 forbids it"),
    "an integer sum by 32 __syncthreads_count in 1.2": (
        "1.2", warp("1.2", "  long long s = 0;\n  for (int b = 0; b < 32; ++b)\n"
                           "    s += static_cast<long long>(__syncthreads_count((unsigned(int(v)) >> b) & 1u)) << b;\n"
                           "  v = Acc(s);"),
        "name", "uses forbidden API '__syncthreads_count' (line 12)"),
    "a warp scan by ballots in 1.6": (
        "1.6", """#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"
namespace cudalab::scan {
__global__ void k(const int* in, std::size_t n, int* out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const unsigned lane = threadIdx.x & 31u, v = i < n ? static_cast<unsigned>(in[i]) : 0u;
  unsigned sum = 0;
  for (unsigned b = 0; b < 32; ++b) sum += unsigned(__popc(__ballot_sync(~0u, (v >> b) & 1u) & ((2u << lane) - 1u))) << b;
  if (i < n) out[i] = static_cast<int>(sum - v);
}
void exclusive_scan_blelloch(const int* in, std::size_t n, int* out, std::size_t tile, cudaStream_t s) {
  k<<<static_cast<unsigned>((n + tile - 1) / tile), static_cast<unsigned>(tile), 0, s>>>(in, n, out);
}
}  // namespace cudalab::scan
""", "name", "uses forbidden API '__ballot_sync' (line 8); 1.6 forbids it"),
    "__nvvm builtin warp reduction": (
        "1.2", warp("1.2", "  v = Acc(__nvvm_redux_sync_add(int(v), 0xffffffffu));",
                    "extern __device__ int __nvvm_redux_sync_add(int, unsigned);"),
        "name", "uses forbidden API '__nvvm_redux' (line 4)"),
    "__nvvm builtin shuffle": (
        "1.2", warp("1.2", "  v += Acc(__nvvm_shfl_down_sync(0xffffffffu, unsigned(v), 16, 0x1f));",
                    "extern __device__ unsigned __nvvm_shfl_down_sync(unsigned, unsigned, unsigned, unsigned);"),
        "name", "uses forbidden API '__nvvm_shfl' (line 4)"),
    "a warp sum by cooperative_groups::inclusive_scan in 1.3": (
        "1.3", warp("1.3", "  v = cooperative_groups::inclusive_scan(cooperative_groups::tiled_partition<32>("
                           "cooperative_groups::this_thread_block()), v);",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/scan.h>"),
        "name", "uses forbidden API 'cooperative_groups::inclusive_scan' (line 11)"),
    "shared memory by __cvta_shared_to_generic in 1.3": (
        "1.3", warp("1.3", "  Acc* partial = static_cast<Acc*>(__cvta_shared_to_generic(0x400));\n"
                           "  partial[threadIdx.x] = v;"),
        "name", "uses forbidden API '__cvta_shared_to_generic' (line 10)"),
    "shuffle only in the device pass": (
        "1.2", warp("1.2", "#ifdef __CUDA_ARCH__\n  v += __shfl_down_sync(0xffffffffu, v, 16);\n#endif"),
        "name", "uses forbidden API '__shfl' (line 11)"),
    "cub only in a Release build": (
        "1.1", "#include <cub/device/device_reduce.cuh>\n" + HEAD_11 + "#ifdef NDEBUG\n#define C cub\n#else\n"
        "#define C nothing\n#endif\n__global__ void k() {}\n" + CUB_11, "name", "uses forbidden API 'cub::'"),
    "std::sort through using namespace std": (
        "2.1", sort21("  sort(v.begin(), v.end());", "using namespace std;"),
        "name", "`sort` is `std::sort` through using namespace std of line 5"),
    "std::sort by argument-dependent lookup": (
        "2.1", sort21("  sort(v.begin(), v.end());"),
        "name", "`sort(...)` calls `std::sort` by argument-dependent lookup"),
    "std::stable_sort on the host": (
        "2.1", sort21("  std::ranges::stable_sort(v);"), "host", "computes on the host: `std::stable_sort`"),
    "#include of the solution": (
        "1.1", '// My sum_atomic.\n#include "../../solutions/01-reduce-scan-histogram/sum_atomic.cu"\n',
        "include", "includes a file outside the course's headers, the CUDA toolkit and the C++ standard "
                   "library (line 2: `"),
    "#include of the solution by absolute path": (
        "1.1", f'#include "{REPO}/solutions/01-reduce-scan-histogram/sum_atomic.cu"\n', "include",
        "(line 1: `"),
    "#include of the CPU reference": (
        "1.1", HEAD_11 + '#include "reduce_reference.hpp"\n' + KERNEL_11 + TAIL_11, "include",
        "reduce_reference.hpp`"),
    "host computation with std::accumulate": (
        "1.1", "#include <numeric>\n#include <vector>\n" + HEAD_11 + """
namespace cudalab::reduce {
void sum_atomic(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  std::vector<int> h(n);
  CUDALAB_CHECK(cudaMemcpy(h.data(), in, n * sizeof(int), cudaMemcpyDeviceToHost));
  const long long s = std::accumulate(h.begin(), h.end(), 0LL);
  CUDALAB_CHECK(cudaMemcpy(out, &s, sizeof s, cudaMemcpyHostToDevice));
}
}  // namespace cudalab::reduce
""", "host", "computes on the host: `std::accumulate` (line 11)"),
    "host computation in a loop, no kernel": (
        "1.1", "#include <vector>\n" + HEAD_11 + """
namespace cudalab::reduce {
void sum_atomic(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  std::vector<int> h(n);
  CUDALAB_CHECK(cudaMemcpy(h.data(), in, n * sizeof(int), cudaMemcpyDeviceToHost));
  long long s = 0;
  for (int x : h) s += x;
  CUDALAB_CHECK(cudaMemcpy(out, &s, sizeof s, cudaMemcpyHostToDevice));
}
}  // namespace cudalab::reduce
""", "no-kernel", "defines no kernel (no __global__ function)"),
    "a kernel that is never launched": (
        "1.1", HEAD_11 + KERNEL_11 + TAIL_11.replace("k<<<1, 1, 0, stream>>>(in, n, out);", "(void)stream;"),
        "no-kernel", "launches no kernel"),
    "#line hiding the file": (
        "1.1", "#include <cub/device/device_reduce.cuh>\n" + HEAD_11
        + '#line 1 "/usr/local/cuda/include/cuda_runtime.h"\n#define C cub\n__global__ void k() {}\n' + CUB_11,
        "line-directive", "uses a #line directive (line 5)"),
    "a macro that rewrites a course header": (
        "1.1", "#define check_sum_arguments(...) static_cast<void>(0)\n" + HEAD_11 + KERNEL_11 + TAIL_11,
        "macro-before-include", "defines the macro check_sum_arguments (line 1) before an #include"),
    "line markers forged in a raw string": (
        "1.1", "#include <cub/device/device_reduce.cuh>\n" + HEAD_11
        + 'const char* fake = R"x(\n# 1 "/usr/include/stdio.h" 1 3 4\nint x;\n)x";\n'
        + "#define C cub\n__global__ void k() {}\n" + CUB_11,
        "name", "uses forbidden API 'cub::' (line 16: `cub::DeviceReduce::Sum` via the macro C defined at line 9)"),
    "line markers forged by a macro": (
        "1.1", "#include <cub/device/device_reduce.cuh>\n" + HEAD_11
        + '#define M # 1 "/usr/include/stdio.h" 1 3 4\nM\n#define C cub\n__global__ void k() {}\n' + CUB_11,
        "name", "uses forbidden API 'cub::' (line 14: `cub::DeviceReduce::Sum` via the macro C defined at line 7)"),
    "a helper written inside a reopened namespace cooperative_groups in 1.3": (
        "1.3", warp("1.3", "  v = cooperative_groups::cudalab_warp_total(cooperative_groups::tiled_partition<32>("
                           "cooperative_groups::this_thread_block()), v);",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                    "namespace cooperative_groups {\ntemplate <class G, class A>\n__device__ A "
                    "cudalab_warp_total(const G& g, A v) { return details::coalesced_reduce(g, v, plus<A>()); }\n"
                    "}  // namespace cooperative_groups"),
        "name", "reopens the namespace `cooperative_groups` (line 6), where 1.3 forbids "
                "'cooperative_groups::reduce'"),
    "cg::reduce by qualified lookup through a using-directive of another namespace in 1.3": (
        "1.3", warp("1.3", "  v = lib::reduce(cg::tiled_partition<32>(cg::this_thread_block()), v, cg::plus<Acc>());",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                    "namespace cudalab_lib {\nusing namespace cooperative_groups;\n}\n"
                    "namespace cg = cooperative_groups;\nnamespace lib = cudalab_lib;"),
        "name", "(line 16: `lib::reduce` is `cooperative_groups::reduce` through using namespace "
                "cooperative_groups of line 7, by qualified lookup)"),
    # a declaration of the same name elsewhere (a decoy's parameter) is no own reduce the call reaches
    "cg::reduce by ADL beside a decoy parameter named reduce in 1.3": (
        "1.3", warp("1.3", "  v = reduce(cg::tiled_partition<32>(cg::this_thread_block()), v, cg::plus<Acc>());",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                    "namespace cg = cooperative_groups;\n__device__ int decoy(int reduce) { return reduce; }"),
        "name", "(line 13: `reduce(...)` calls `cooperative_groups::reduce` by argument-dependent lookup)"),
    "cg::reduce through a using-directive beside a decoy parameter named reduce in 1.3": (
        "1.3", warp("1.3", "  v = reduce(tiled_partition<32>(this_thread_block()), v, plus<Acc>());",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                    "using namespace cooperative_groups;\n__device__ int decoy(int reduce) { return reduce; }"),
        "name", "`reduce` is `cooperative_groups::reduce` through using namespace cooperative_groups of line 6"),
    "cg::details::coalesced_reduce in 1.3": (
        "1.3", warp("1.3", "  v = cooperative_groups::details::coalesced_reduce(cooperative_groups::tiled_partition<32>("
                           "cooperative_groups::this_thread_block()), v, cooperative_groups::plus<Acc>());",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>"),
        "name", "an internal of the library (`details`), where 'cooperative_groups::reduce'"),
    "cg::reduce through its versioned namespace __v1 in 1.3": (
        "1.3", warp("1.3", "  v = cooperative_groups::__v1::reduce(cooperative_groups::tiled_partition<32>("
                           "cooperative_groups::this_thread_block()), v, cooperative_groups::plus<Acc>());",
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>"),
        "name", "uses forbidden API 'cooperative_groups::reduce' (line 11)"),
    "cuda::std::reduce as _CUDA_VSTD::reduce (cuda::std::__4)": (
        "1.1", "#include <cuda/std/numeric>\n" + HEAD_11 + KERNEL_11.replace(
            "if (i < n)", "if (i == 0) *out = _CUDA_VSTD::reduce(in, in + n, Acc{0});\n  if (false)") + TAIL_11,
        "name", "uses forbidden API 'cuda::std::reduce' (line 9)"),
    "a warp shuffle by cuda::device::warp_shuffle_down": (
        "1.2", warp("1.2", "  v += cuda::device::warp_shuffle_down(v, 16).data;", "#include <cuda/warp>"),
        "name", "uses forbidden API 'cuda::device::warp_shuffle' (line 10)"),
    "a ballot by 32 __any_sync": (
        "1.2", warp("1.2", "  unsigned b = 0;\n  for (unsigned l = 0; l < 32; ++l) "
                           "b |= unsigned(__any_sync(~0u, (threadIdx.x & 31u) == l && v > 0)) << l;\n  (void)b;"),
        "name", "uses forbidden API '__any_sync' (line 11)"),
    # its VOTE.ANY Rn, PT, PT is the compiler's own vote where a YIELD follows, which the object
    # check skips (test_the_compilers_spin_loop_vote_is_not_the_students): refused by name
    "a vote by __activemask in divergent code in 1.2": (
        "1.2", warp("1.2", "  unsigned b = 0;\n  if (v > 0) b = __activemask();\n  (void)b;"),
        "name", "uses forbidden API '__activemask' (line 11)"),
    "std::list::sort on the host": (
        "2.1", sort21("  std::list<int> l(v.begin(), v.end());\n  l.sort();\n  std::copy(l.begin(), l.end(), v.begin());",
                      "#include <list>"),
        "name", "uses forbidden API 'std::list' (line 12)"),
    "[[gnu::shared]] spelled with digraphs": (
        "1.3", warp("1.3", "  <:<:gnu::shared:>:> static Acc sh[256];\n  sh[threadIdx.x] = v;"),
        "name", "uses forbidden API '__shared__' (line 10: `[[gnu::shared]]` is `__shared__`)"),
    "#line spelled across a line splice, to a <name>": (
        "1.3", warp("1.3", "  v = warp_sum(v);", "template <class Acc> __device__ Acc warp_sum(Acc v);")
        + '#li\\\nne 1 "<x>"\n#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n'
        "template <class Acc> __device__ Acc warp_sum(Acc v) { return cooperative_groups::reduce("
        "cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block()), v, "
        "cooperative_groups::plus<Acc>()); }\n",
        "line-directive", "uses a #line directive (line 20)"),
    "#line spelled across a comment": (
        "1.1", HEAD_11 + '# /*\n*/ line 1 "<x>"\n#define C cub\n#include <cub/device/device_reduce.cuh>\n'
        "__global__ void k() {}\n" + CUB_11,
        "line-directive", "uses a #line directive (line 4)"),
    "a raw string whose delimiter is a double quote": (
        "1.3", warp("1.3", '  const char* q = R""(")""; v = cooperative_groups::reduce(cooperative_groups::'
                           'tiled_partition<32>(cooperative_groups::this_thread_block()), v, '
                           'cooperative_groups::plus<Acc>()); (void)q;',
                    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>"),
        "name", "uses forbidden API 'cooperative_groups::reduce' (line 11)"),
    "std::__insertion_sort, an internal of std::sort": (
        "2.1", sort21("  std::__insertion_sort(v.begin(), v.end(), __gnu_cxx::__ops::__iter_less_iter());"),
        "name", "`std::__insertion_sort`, an internal of the library (`__insertion_sort`)"),
    # libcu++'s algorithms run in device code: one thread's cuda::std::merge is 2.4's merge
    "cuda::std::merge in a kernel of 2.4": (
        "2.4", MERGE_24.replace("MERGE", "cuda::std::merge"),
        "name", "uses forbidden API 'std::merge' (line 9: `cuda::std::merge`, libcu++'s std::merge"),
    "libcu++'s internal cuda::std::__merge in a kernel of 2.4": (
        "2.4", MERGE_24.replace("MERGE", "_CUDA_VSTD::__merge<Less&>").replace("kb + b, ko)", "kb + b, ko, less)")
        .replace("__global__", "struct Less { __device__ bool operator()(int x, int y) const { return x < y; } };\n"
                 "__global__").replace("  const int *ka", "  Less less;\n  const int *ka"),
        "name", "`cuda::std::__merge`, an internal of the library (`__merge`), where 'std::merge'"),
    "libcu++'s __merge called inside a reopened namespace cuda::std in 2.4": (
        "2.4", MERGE_24.replace("MERGE", "cuda::std::cudalab_merge").replace(
            "namespace cudalab::sort {", "namespace cuda::std {\ntemplate <class I, class O>\n__device__ O "
            "cudalab_merge(I a, I b, I c, I d, O o) { __less l; return __merge<__less&>(a, b, c, d, o, l); }\n"
            "}  // namespace cuda::std\nnamespace cudalab::sort {", 1),
        "name", "reopens the namespace `cuda` (line 5), where 2.4 forbids 'std::merge'"),
    "cuda::std::make_heap in a kernel of 5.4 (a forbid_host name)": (
        "5.4", "#include <cuda/std/__algorithm/make_heap.h>\n#include <cuda/std/__algorithm/sort_heap.h>\n"
        "#include <cuda/std/utility>\n#include \"cudalab/heap.cuh\"\n"
        "__global__ void k(float* d, int n) { cuda::std::make_heap(d, d + n); cuda::std::sort_heap(d, d + n); }\n"
        "void f(float* d, int n, cudaStream_t s) { k<<<1, 1, 0, s>>>(d, n); }\n",
        "host", "uses the library algorithm `std::make_heap` (line 5: `cuda::std::make_heap`, libcu++'s "
                "std::make_heap (in device code too)), which would do 5.4's work for you"),
}

# A 7.1 (bounding_box) file whose warp reduction is cooperative groups' reduce, its names taken by
# USING (a using-directive or using-declarations): chapter 7 forbids std::reduce on the host, and
# an unqualified reduce(...) is cooperative_groups::reduce here, not std::reduce by ADL.
CG_71 = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "cudalab/args.hpp"
#include "cudalab/kdtree.cuh"
USING
namespace cudalab::kdtree {
__global__ void k(const float3* p, std::size_t n, Box* box, std::uint64_t* bad) {
  const float x = threadIdx.x < n ? p[threadIdx.x].x : 0.0f;
  const float lo = reduce(tiled_partition<32>(this_thread_block()), x, less<float>());
  if (threadIdx.x == 0) { box->lo.x = lo; *bad = n; }
}
void bounding_box(const float3* points, std::size_t n, Box* box, std::uint64_t* first_bad, cudaStream_t stream) {
  k<<<1, 32, 0, stream>>>(points, n, box, first_bad);
}
}  // namespace cudalab::kdtree
"""


def with_region_replaced(text: str, start: str, end: str, call: str) -> str:
    """`text` with the region from the first `start` to the first `end` after it (both included)
    replaced by `call`."""
    a = text.index(start)
    b = text.index(end, a) + len(end)
    return text[:a] + call + text[b:]


def given_heap(exid: str, file: str, todo: str, end: str, call: str, include: str = '"cudalab/warp_heap.cuh"') -> str:
    """Chapter 5's starter `file` whose TODO (from `todo` to `end`) is `call` into the given heap
    of cudalab/warp_heap.cuh, the course's reference solution of 5.1 to 5.3 (given to 5.4), or
    into the given nodes of cudalab/heap_nodes.cuh, which hold 5.1's and 5.2's (given to 5.3):
    the call `device::...` inside `namespace cudalab::heap` names no qualified namespace."""
    text = (REPO / "starter" / "05-warp-heap" / file).read_text()
    text = text.replace('#include "cudalab/warp.cuh"\n', f'#include "cudalab/warp.cuh"\n#include {include}\n', 1)
    return with_region_replaced(text, todo, end, call)


def given_warp_aggregation(file: str, todo: str, call: str) -> str:
    """Chapter 4's starter `file` whose TODO (from `todo` to the kernel's end) is `call` into the
    given warp_aggregated_append of cudalab/warp_aggregated.cuh, the course's reference solution
    of 4.4 (given to 4.7): an unqualified call inside `namespace cudalab::filter`."""
    text = (REPO / "starter" / "04-filtering-atomics" / file).read_text()
    text = text.replace('#include "cudalab/filter.cuh"\n',
                        '#include "cudalab/filter.cuh"\n#include "cudalab/warp_aggregated.cuh"\n', 1)
    a = text.index(todo)
    b = text.index("\n}\n", a) + 1
    return text[:a] + call + text[b:]


def given_merge_path() -> str:
    """2.6's starter without its own merge_path, including cudalab/merge_path.cuh instead, whose
    given merge_path (2.7's) is the course's reference search of 2.6 in the instructor's tree."""
    text = (REPO / "starter" / "02-sorting" / "merge_runs_merge_path.cu").read_text()
    text = text.replace('#include "cudalab/error.cuh"\n', '#include "cudalab/error.cuh"\n#include "cudalab/merge_path.cuh"\n', 1)
    a = text.index("__device__ __forceinline__ unsigned merge_path(")
    b = text.index("\n}\n", a) + 3
    return text[:a] + text[b:]


def given_scan_code(header: str, file: str, todo: str, end: str, call: str) -> str:
    """Chapter 1's starter `file` including `header` of chapters/common: cudalab/block_scan.cuh,
    whose given code (for 1.8 and 4.6) is 1.7's reference warp scan and tile scan, or
    cudalab/decoupled_lookback.cuh, whose given code (for 1.9 and 4.6) is 1.8's reference tile
    claim and look-back; with its TODO (from `todo` to `end`) replaced by `call` into it."""
    return with_region_replaced(chapter1_including(file, header), todo, end, call)


def chapter1_including(file: str, header: str) -> str:
    """Chapter 1's starter `file` with one more include, of `header`, before cudalab/error.cuh: the
    include alone is what forbid_include refuses, whatever the file then calls."""
    text = (REPO / "starter" / "01-reduce-scan-histogram" / file).read_text()
    return text.replace('#include "cudalab/error.cuh"\n', f'#include "{header}"\n#include "cudalab/error.cuh"\n', 1)


ATTACKS.update({
    # 1.4's 16-byte loads are given to 1.7 and 1.8 (block_load_store.cuh); a warp scan's lane 31 is
    # a warp sum (1.3's and 1.4's shuffles)
    "1.4's vector loads from the given block_load_store.cuh": (
        "1.4", chapter1_including("sum_vectorized.cu", "cudalab/block_load_store.cuh"),
        "include", "which 1.4 may not include: its given load_tile (given to 1.7 and 1.8)"),
    "1.3's warp sum from the given block_scan.cuh": (
        "1.3", chapter1_including("sum_warp_shuffle.cu", "cudalab/block_scan.cuh"),
        "include", "which 1.3 may not include: its given warp_inclusive_scan"),
    # 1.7's warp scan and tile scan are given to 1.8 and 4.6, 1.8's tile claim and look-back to 1.9
    # and 4.6, in chapters/common (forbid_include paths that leave the chapter's folder:
    # ../common/include/...)
    "1.8's look_back from the given decoupled_lookback.cuh": (
        "1.8", given_scan_code("cudalab/decoupled_lookback.cuh", "exclusive_scan_decoupled_lookback.cu",
                               "  unsigned prefix = 0;\n  // TODO(1.8)", "  return prefix;\n",
                               "  return lookback::look_back(status, tile);\n"),
        "include", "includes `cudalab/decoupled_lookback.cuh` (line 14), which 1.8 may not include: its "
                   "given claim_tile and look_back (given to 1.9 and 4.6)"),
    "1.7's warp scan from the given block_scan.cuh": (
        "1.7", given_scan_code("cudalab/block_scan.cuh", "exclusive_scan_reduce_then_scan.cu",
                               "  // TODO(1.7): five", "  return x;\n",
                               "  return device::warp_inclusive_scan(x);\n"),
        "include", "includes `cudalab/block_scan.cuh` (line 11), which 1.7 may not include: its given "
                   "warp_inclusive_scan and block_exclusive_scan (given to 1.8 and 4.6)"),
    "1.7's tile scan from the given block_scan.cuh": (
        "1.7", given_scan_code("cudalab/block_scan.cuh", "exclusive_scan_reduce_then_scan.cu",
                               "  // TODO(1.7): each thread's vector sums", "components before it in the vector.\n",
                               "  device::block_exclusive_scan<kThreads>(v, lane, warp, s_totals, s_prefix,\n"
                               "      [&](unsigned) { return prefixes != nullptr ? prefixes[blockIdx.x] : 0u; });\n"),
        "include", "which 1.7 may not include: its given warp_inclusive_scan and block_exclusive_scan"),
    "5.1's replace_smallest from the given heap of warp_heap.cuh": (
        "5.1", given_heap("5.1", "replace_smallest.cu", "  // TODO(5.1)", "  return x;\n",
                          "  return device::replace_smallest(mine, x);\n"),
        # warp_heap.cuh includes heap_nodes.cuh, which 5.1 may not include either: both are found,
        # the one entered through warp_heap.cuh (no line of its own) first
        "include", "includes `cudalab/heap_nodes.cuh` (through another header), which 5.1 may not include: "
                   "its given replace_smallest (given to 5.3 and 5.4) is the course's reference solution of 5.1"),
    "5.1's replace_smallest from the given nodes of heap_nodes.cuh": (
        "5.1", given_heap("5.1", "replace_smallest.cu", "  // TODO(5.1)", "  return x;\n",
                          "  return device::replace_smallest(mine, x);\n", '"cudalab/heap_nodes.cuh"'),
        "include", "includes `cudalab/heap_nodes.cuh` (line 7), which 5.1 may not include: its given "
                   "replace_smallest"),
    "5.2's min_child from the given nodes of heap_nodes.cuh": (
        "5.2", given_heap("5.2", "min_child.cu", "  // TODO(5.2)", "  return -1;\n",
                          "  return device::min_child(top_keys, top_values, parent, node_count);\n",
                          '"cudalab/heap_nodes.cuh"'),
        "include", "includes `cudalab/heap_nodes.cuh` (line 9), which 5.2 may not include: its given "
                   "min_child"),
    "5.2's min_child from the given heap, included with <>": (
        "5.2", given_heap("5.2", "min_child.cu", "  // TODO(5.2)", "  return -1;\n",
                          "  return device::min_child(top_keys, top_values, parent, node_count);\n",
                          "<cudalab/warp_heap.cuh>"),
        "include", "which 5.2 may not include"),
    "5.3's WarpHeap from the given heap": (
        "5.3", given_heap("5.3", "warp_heap.cu", "  WarpHeap heap{", "  WarpHeap heap{",
                          "  device::WarpHeap heap{").replace(
            "const Entry top = heap.top();",
            "const Entry top = heap.empty() ? Entry{kEmptyKey, kEmptyValue} : Entry{heap.top_keys[0], heap.top_values[0]};"),
        "include", "which 5.3 may not include"),
    # 4.7's given warp aggregation (cudalab/warp_aggregated.cuh) is 4.4's reference solution, and
    # 4.5's aggregation done with the intrinsics cooperative groups replace
    "4.4's aggregation from the given warp_aggregated_append of warp_aggregated.cuh": (
        "4.4", given_warp_aggregation("copy_if_warp_aggregated.cu", "  // TODO(4.4)",
                                      "  warp_aggregated_append(x, selected, out, capacity, count);\n"),
        "include", "includes `cudalab/warp_aggregated.cuh` (line 9), which 4.4 may not include: its given "
                   "warp_aggregated_append (given to 4.7) is the course's reference solution of 4.4"),
    "4.5's aggregation from the given warp_aggregated_append of warp_aggregated.cuh": (
        "4.5", given_warp_aggregation("copy_if_cooperative_groups.cu", "  // TODO(4.5)",
                                      "  (void)mine;\n  warp_aggregated_append(x, selected, out, capacity, count);\n"),
        "include", "which 4.5 may not include: its given warp_aggregated_append (given to 4.7) is 4.4's"),
    # 2.7's given merge-path search (cudalab/merge_path.cuh) is 2.6's reference search: the file's own
    # merge_path left out, its calls inside namespace cudalab::sort reach the given one
    "2.6's merge_path from the given search of merge_path.cuh": (
        "2.6", given_merge_path(),
        "include", "includes `cudalab/merge_path.cuh` (line 9), which 2.6 may not include: its given "
                   "merge_path (given to 2.7) is the course's reference merge-path search"),
})

# Valid files that mention what is forbidden, or look like an attack and are not.
CONTROLS = {
    "comments and strings": (
        "1.2", warp("1.2", '  // __shfl_down_sync(cub::x) would be forbidden here\n'
                           '  const char* s = "__shfl_down_sync cub:: asm";\n  (void)s;')),
    "a macro after the #include lines": ("1.1", HEAD_11 + "#define BLOCK 256\n" + KERNEL_11 + TAIL_11),
    "NDEBUG before the #include lines": ("1.1", "#define NDEBUG 1\n" + HEAD_11 + KERNEL_11 + TAIL_11),
    "the student's own sort, called unqualified": (
        "2.1", sort21("  sort(v.data(), n);", "static void sort(int* a, std::size_t n) { (void)a; (void)n; }")),
    "C++11 attributes that are not shared memory, and a lambda in a subscript": (
        "1.2", warp("1.2", "  [[maybe_unused]] int unused = 0;\n  int arr[2] = {0, 0};\n"
                           "  v += Acc(arr[[] { return 0; }()]);")),
    "standard headers": (
        "1.1", "#include <algorithm>\n#include <cstdio>\n#include <cstring>\n#include <stdexcept>\n"
        + HEAD_11 + KERNEL_11 + TAIL_11),
    "cooperative groups' reduce through a using-directive (not std::reduce by ADL)": (
        "7.1", CG_71.replace("USING", "using namespace cooperative_groups;")),
    "cooperative groups' reduce through using-declarations (not std::reduce by ADL)": (
        "7.1", CG_71.replace("USING", "namespace cg = cooperative_groups;\nusing cg::reduce;\nusing cg::less;\n"
                                      "using cg::tiled_partition;\nusing cg::this_thread_block;")),
    "CCCL's NVTX switch before #include <cub/cub.cuh>": (
        "4.3", "#define CCCL_DISABLE_NVTX\n#include <cub/cub.cuh>\n#include \"cudalab/filter.cuh\"\n"
        "namespace cudalab::filter { __global__ void k() {}\n void f(cudaStream_t s) { k<<<1, 1, 0, s>>>(); } }\n"),
}


def write_course_file(tmp: Path, ex, text: str) -> Path:
    """The file as <tmp>/course/starter/<chapter>/<file>, beside a copy of the solutions."""
    course = tmp / "course"
    if not (course / "solutions").exists():
        shutil.copytree(REPO / "solutions", course / "solutions")
    path = course / "starter" / ex.chapter_dir / ex.file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@unittest.skipUnless(HAVE_NVCC, "needs nvcc (the preprocessor passes come from nvcc --dryrun)")
class TokenCheckTest(unittest.TestCase):
    """Each attack is caught with the right rule and message; each control passes."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls._tmp.name)

        def one(item):
            name, (exid, text) = item
            sub = tmp / re.sub(r"\W+", "_", name)
            path = write_course_file(sub, EXERCISES[exid], text)
            return name, source.check_report(EXERCISES[exid], path, root=REPO)
        items = [(n, (a[0], a[1])) for n, a in ATTACKS.items()] + list(CONTROLS.items())
        with ThreadPoolExecutor(WORKERS) as pool:
            cls.reports = dict(pool.map(one, items))

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_attacks_are_caught(self):
        for name, (exid, _, rule, message) in ATTACKS.items():
            with self.subTest(attack=name):
                rep = self.reports[name]
                self.assertFalse(rep.notes, rep.notes)
                self.assertIsNotNone(rep.first, f"{name} passed the check of {exid}")
                self.assertEqual(rep.first.rule, rep.first.rule if rule is None else rule,
                                 rep.first.message)
                self.assertIn(message, rep.first.message)
                self.assertTrue(rep.first.details)

    def test_controls_pass(self):
        for name in CONTROLS:
            with self.subTest(control=name):
                rep = self.reports[name]
                self.assertEqual([f.message for f in rep.findings], [])
                self.assertFalse(rep.notes, rep.notes)

    def test_why_is_in_the_reason(self):
        msg = self.reports["token pasting __shfl_down_sync"].first.message
        self.assertIn("; 1.2 forbids it: write the tree yourself, in shared memory", msg)

    def test_host_computation_also_has_no_kernel(self):
        rules = [f.rule for f in self.reports["host computation with std::accumulate"].findings]
        self.assertEqual(rules[:2], ["host", "no-kernel"])


@unittest.skipUnless(HAVE_NVCC, "needs nvcc")
class CourseFilesTest(unittest.TestCase):
    """Every solution and every untouched starter passes its own exercise's checks."""

    def check_all(self, impl: str) -> None:
        exercises = list(EXERCISES.values())
        start = time.monotonic()

        def one(ex):
            return ex, source.check_report(ex, REPO / ex.source(impl), root=REPO)
        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(one, exercises))
        print(f"\n  {len(exercises)} {impl} files checked in {time.monotonic() - start:.1f} s "
              f"({WORKERS} at a time)", file=sys.stderr)
        for ex, rep in results:
            with self.subTest(exercise=ex.id, impl=impl):
                self.assertEqual([f.message for f in rep.findings], [])
                self.assertFalse(rep.notes, rep.notes)

    def test_solutions_pass(self):
        self.check_all("solution")

    def test_starters_pass(self):
        self.check_all("starter")


class ContractTest(unittest.TestCase):
    """The manifests' contract keys: types, known instruction kinds, asm where needed."""

    @staticmethod
    def data_of():
        return {p.parent.name: tomllib.loads(p.read_text())
                for p in sorted((REPO / "chapters").glob("*/exercises.toml"))}

    def setUp(self):
        self.data = self.data_of()

    def test_keys_and_types(self):
        kinds = {"forbid": list, "forbid_why": str, "forbid_reasons": dict, "forbid_sass": list,
                 "forbid_host": list, "forbid_include": dict,
                 "allow_asm": bool, "require_kernel": bool, "warp_mask": str, "warp_mask_why": str,
                 "require_sass": list, "require_why": str}
        for chapter, data in self.data.items():
            tables = [("contract", data.get("contract", {}))] + [(e["id"], e) for e in data["exercise"]]
            for where, table in tables:
                for key, kind in kinds.items():
                    if key in table:
                        with self.subTest(chapter=chapter, table=where, key=key):
                            self.assertIsInstance(table[key], kind)
                            if kind is list:
                                self.assertTrue(all(isinstance(x, str) and x for x in table[key]))
                for entry in table.get("forbid_sass", []):
                    self.assertTrue(entry in objcheck.SASS_KINDS or entry.split(".")[0] in objcheck.SASS_KINDS,
                                    f"{where}: {entry}")
                for entry in table.get("require_sass", []):  # each with its words for the student
                    self.assertIn(entry, objcheck.SASS_KINDS, f"{where}: {entry}")
                    self.assertNotIn(entry, table.get("forbid_sass", []), where)
                if "require_sass" in table:
                    self.assertTrue(table.get("require_why"), f"{where}: require_sass without require_why")
            self.assertTrue(data.get("contract", {}).get("require_kernel"), chapter)

    def test_every_exercise_says_why(self):
        for ex in EXERCISES.values():
            with self.subTest(exercise=ex.id):
                self.assertTrue(source.contract(ex, REPO).forbid_why)

    def test_forbidden_headers_exist_and_say_why(self):
        """forbid_include names real course headers; 5.1 to 5.3 may not include the given heap,
        5.1 and 5.2 not the given nodes (5.3 composes its heap from them), 4.4 and 4.5 not 4.4's
        given aggregation (4.7 composes with it), 1.7 the given tile scan, 1.8 the given look-back,
        1.3 and 1.4 neither (a warp sum), 1.4 not the given vector tile loads."""
        for ex in EXERCISES.values():
            for header, why in source.contract(ex, REPO).forbid_include:
                with self.subTest(exercise=ex.id, header=header):
                    self.assertTrue((REPO / header).is_file())
                    self.assertTrue(why)
        for exid in ("5.1", "5.2", "5.3"):
            self.assertIn("chapters/05-warp-heap/include/cudalab/warp_heap.cuh",
                          dict(source.contract(EXERCISES[exid], REPO).forbid_include))
        for exid in ("5.1", "5.2"):
            self.assertIn("chapters/05-warp-heap/include/cudalab/heap_nodes.cuh",
                          dict(source.contract(EXERCISES[exid], REPO).forbid_include))
        self.assertNotIn("chapters/05-warp-heap/include/cudalab/heap_nodes.cuh",
                         dict(source.contract(EXERCISES["5.3"], REPO).forbid_include))
        self.assertEqual(source.contract(EXERCISES["5.4"], REPO).forbid_include, ())
        for exid in ("4.4", "4.5"):
            self.assertIn("chapters/04-filtering-atomics/include/cudalab/warp_aggregated.cuh",
                          dict(source.contract(EXERCISES[exid], REPO).forbid_include))
        self.assertEqual(source.contract(EXERCISES["4.7"], REPO).forbid_include, ())
        self.assertIn("chapters/02-sorting/include/cudalab/merge_path.cuh",
                      dict(source.contract(EXERCISES["2.6"], REPO).forbid_include))
        self.assertEqual(source.contract(EXERCISES["2.7"], REPO).forbid_include, ())
        # a header of chapters/common, named from the chapter's folder as ../common/include/...
        self.assertEqual(list(dict(source.contract(EXERCISES["1.7"], REPO).forbid_include)),
                         ["chapters/common/include/cudalab/block_scan.cuh"])
        self.assertEqual(list(dict(source.contract(EXERCISES["1.8"], REPO).forbid_include)),
                         ["chapters/common/include/cudalab/decoupled_lookback.cuh"])
        for exid in ("1.3", "1.4"):
            self.assertIn("chapters/common/include/cudalab/block_scan.cuh",
                          dict(source.contract(EXERCISES[exid], REPO).forbid_include))
            self.assertIn("chapters/common/include/cudalab/decoupled_lookback.cuh",
                          dict(source.contract(EXERCISES[exid], REPO).forbid_include))
        for exid in ("1.9", "4.6"):
            self.assertEqual(source.contract(EXERCISES[exid], REPO).forbid_include, ())
        self.assertIn("chapters/01-reduce-scan-histogram/include/cudalab/block_load_store.cuh",
                      dict(source.contract(EXERCISES["1.4"], REPO).forbid_include))

    def test_asm_allowed_exactly_where_a_solution_uses_it(self):
        for ex in EXERCISES.values():
            text = source.strip_code((REPO / ex.source("solution")).read_text())
            uses_asm = re.search(r"\b(asm|__asm__|__asm)\b", text) is not None
            with self.subTest(exercise=ex.id):
                self.assertEqual(source.contract(ex, REPO).allow_asm, uses_asm)

    def test_the_guides_name_the_exercises_that_allow_asm(self):
        # grading.md, instructors.md and contributing.md list them in a parenthesis after
        # `allow_asm`: the same ids as the manifests (they said 5.4 too, whose solution has no asm:
        # notes/false-positives-ch4-ch7.md)
        allowed = {ex.id for ex in EXERCISES.values() if source.contract(ex, REPO).allow_asm}
        self.assertTrue(allowed)
        for guide in ("grading.md", "instructors.md", "contributing.md"):
            text = (REPO / "docs" / "guides" / guide).read_text()
            lists = []
            for m in re.finditer(r"`allow_asm`", text):   # the first parenthesis with ids after it
                groups = re.findall(r"\(([^()]*)\)", text[m.end():m.end() + 200])
                ids = next((set(found) for g in groups if (found := re.findall(r"\b\d+\.\d+\b", g))), None)
                if ids:
                    lists.append(ids)
            with self.subTest(guide=guide):
                self.assertTrue(lists, f"{guide} names no exercise after `allow_asm`")
                for ids in lists:
                    self.assertEqual(ids, allowed)

    def test_chapter_defaults_and_exercise_keys(self):
        c = source.contract(EXERCISES["1.2"], REPO)
        self.assertTrue(c.require_kernel)
        self.assertIn("std::accumulate", c.forbid_host)
        self.assertEqual(c.forbid_sass, ("SHFL", "REDUX", "VOTE", "BAR.RED"))
        self.assertIn("__shfl", c.forbid)
        self.assertFalse(c.allow_asm)
        self.assertTrue(source.contract(EXERCISES["5.1"], REPO).allow_asm)
        self.assertIn("LDS", source.contract(EXERCISES["1.3"], REPO).forbid_sass)
        self.assertEqual(source.contract(EXERCISES["1.1"], REPO).forbid_sass, ())

    def test_reasons_per_name(self):
        # 1.8: the libraries are forbidden for one reason, the block index for another; the
        # SASS kind SR_CTAID takes blockIdx's
        c = source.contract(EXERCISES["1.8"], REPO)
        self.assertIn("blockIdx", c.forbid)
        self.assertIn("SR_CTAID", c.forbid_sass)
        self.assertIn("deadlock", c.why("blockIdx"))
        self.assertEqual(c.why("SR_CTAID"), c.why("blockIdx"))
        self.assertEqual(c.why("cub::"), c.forbid_why)
        self.assertNotIn("deadlock", c.forbid_why)
        plain = source.Contract(forbid=("__shfl",), forbid_why="w",
                                forbid_reasons=(("__shfl", "r"),))
        self.assertEqual(plain.why("cuda::ptx::shfl_sync"), "r")   # an equivalent takes its name's
        self.assertEqual(plain.why("x"), "w")

    def test_reasons_name_what_is_forbidden(self):
        for chapter, data in ContractTest.data_of().items():
            for e in data["exercise"]:
                reasons = e.get("forbid_reasons", {})
                with self.subTest(exercise=e["id"]):
                    self.assertIsInstance(reasons, dict)
                    for name, why in reasons.items():
                        self.assertIn(name, e.get("forbid", []))
                        self.assertTrue(isinstance(why, str) and why)

    def test_a_manifest_without_contract(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "chapters" / "01-demo").mkdir(parents=True)
            (root / "chapters" / "01-demo" / "exercises.toml").write_text(textwrap.dedent("""
                [chapter]
                number = 1
                dir = "01-demo"
                [[exercise]]
                id = "1.1"
                slug = "alpha"
                title = "A"
                file = "alpha.cu"
                test_filter = "*"
                points = 1
                forbid = ["cub::"]
                """))
            ex = manifest.load_all(root)[0].exercises[0]
            c = source.contract(ex, root)
            self.assertEqual((c.forbid, c.forbid_sass, c.forbid_host, c.allow_asm, c.require_kernel),
                             (("cub::",), (), (), False, False))


# cuobjdump -sass of a 1.2 file that reduced with cooperative groups' tile.shfl_down (sm_90,
# CUDA 13.0), trimmed: the encodings are cuobjdump's, the instructions the compiler's.
SASS_SAMPLE = """
Fatbin ptx code:
================
arch = sm_90
code version = [9,0]
host = linux
compile_size = 64bit
compressed
identifier = cg_tile_shfl__1.2.cu

Fatbin elf code:
================
arch = sm_90
code version = [1,8]
host = linux
compile_size = 64bit
identifier = cg_tile_shfl__1.2.cu

	code for sm_90
	.target	sm_90

		Function : _ZN7cudalab6reduce53_GLOBAL__N__555eef74_20_cg_tile_shfl__1_2_cu_bd9222a322sum_shared_tree_kernelIffEEvPKT_mPT0_
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                                   /* 0x00000a00ff017b82 */
                                                                                            /* 0x000fe20000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;                                       /* 0x0000000000007919 */
                                                                                            /* 0x000e2e0000002100 */
        /*0050*/               @P0 LDG.E R2, desc[UR4][R2.64] ;                             /* 0x0000000402020981 */
                                                                                            /* 0x000ea2000c1e1900 */
        /*0120*/                   SHFL.DOWN PT, R3, R2, 0x10, 0x1f ;                       /* 0x0a001f0002037f89 */
                                                                                            /* 0x004e2200000e0000 */
        /*0130*/                   FADD R3, R2, R3 ;                                        /* 0x0000000302037221 */
                                                                                            /* 0x001fca0000000000 */
        /*0200*/              @!P0 REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R4.64], R3 ;  /* 0x000000030400098e */
                                                                                            /* 0x000fe2000c10f384 */
        /*0210*/                   EXIT ;                                                   /* 0x000000000000794d */
                                                                                            /* 0x000fea0003800000 */
        /*0220*/                   BRA 0x220;                                               /* 0xfffffffc00fc7947 */
                                                                                            /* 0x000fc0000383ffff */
		..........


		Function : _Z8tree_sumPiS_
	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                                   /* 0x00000a00ff017b82 */
                                                                                            /* 0x000fe20000000800 */
        /*0040*/                   STS [R0], R5 ;                                           /* 0x0000000500007388 */
                                                                                            /* 0x000fe80000000800 */
        /*0050*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;                            /* 0x0000000000007b1d */
                                                                                            /* 0x000fec0000010000 */
        /*0060*/                   LDS.64 R2, [R0+0x8] ;                                    /* 0x0000080000027984 */
                                                                                            /* 0x000e240000000a00 */
        /*0070*/                   EXIT ;                                                   /* 0x000000000000794d */
                                                                                            /* 0x000fea0003800000 */
		..........



Fatbin ptx code:
================
arch = sm_90
code version = [9,0]
host = linux
compile_size = 64bit
compressed
identifier = cg_tile_shfl__1.2.cu
"""

# What `cuobjdump -sass` prints for an object whose file defines no kernel.
SASS_NO_KERNEL = """
Fatbin elf code:
================
arch = sm_90
code version = [1,8]
host = linux
compile_size = 64bit
identifier = starter/01-reduce-scan-histogram/sum_atomic.cu

	code for sm_90
	.target	sm_90

"""

# The imports (nm -u, demangled) of the course's 47 solution and starter objects, CUDA 13.0, GCC 12.
SOLUTION_IMPORTS = """strlen|memcpy|memmove|memset|cudaGetLastError|cudaGetErrorString|cudaGetErrorName|atexit|exit
__stack_chk_fail|__gxx_personality_v0|__cxa_throw|__cxa_guard_release|__cxa_guard_acquire|__cxa_guard_abort
__cxa_free_exception|__cxa_allocate_exception|__cudaUnregisterFatBinary|__cudaRegisterFunction
__cudaRegisterFatBinaryEnd|__cudaRegisterFatBinary|__cudaPushCallConfiguration|__cudaPopCallConfiguration
__cudaLaunchKernel|__cudaGetKernel|__cudaRegisterVar|operator delete(void*, unsigned long)|operator new(unsigned long)
vtable for __cxxabiv1::__si_class_type_info|typeinfo for std::invalid_argument|typeinfo for std::runtime_error
typeinfo for std::length_error|typeinfo for std::logic_error|std::__throw_length_error(char const*)
std::__throw_logic_error(char const*)
std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_create(unsigned long&, unsigned long)
std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_dispose()
std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::insert(unsigned long, char const*)
std::invalid_argument::~invalid_argument()|std::invalid_argument::invalid_argument(char const*)
std::invalid_argument::invalid_argument(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)
std::runtime_error::~runtime_error()|std::runtime_error::what() const|std::length_error::~length_error()
std::logic_error::logic_error(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)
_Unwind_Resume|_GLOBAL_OFFSET_TABLE_|cudaMemsetAsync|cudaGetDevice|cudaMemPoolSetAttribute|cudaMemPoolGetAttribute
cudaMallocAsync|cudaFreeAsync|cudaDeviceGetDefaultMemPool|cudaDeviceGetAttribute|cudaStreamSynchronize
cudaMemcpyAsync|cudaFuncSetAttribute|cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags|cudaMemset
cudaMalloc|cudaFree|cudaEventDestroy|cudaEventCreate|std::ios_base_library_init()|cudaEventSynchronize
cudaEventRecord|cudaEventElapsedTime""".replace("\n", "|").split("|")


# objdump -r of an nvcc object (CUDA 13.0, trimmed): its registration refers to each function once.
NVCC_RELOCATIONS = ["__cudaRegisterFatBinary", "__cudaRegisterFunction", "__cudaRegisterFatBinaryEnd",
                    "__cudaUnregisterFatBinary", "atexit", ".bss", ".nvFatBinSegment", "__cudaLaunchKernel"]

# objdump -d and -r of an object whose host code makes a system call and registers a fatbin of
# its own (the attacks asm-host-syscall and fapi-register-fatbin, trimmed).
OBJDUMP_DISASSEMBLY = """
x.o:     file format elf64-x86-64


Disassembly of section .text:

0000000000000000 <_Z21cudalab_redteam_writePKcm>:
   0:\tpush   %rbp
   1:\tmov    %rsp,%rbp
  15:\tmov    $0x1,%eax
  1a:\tmov    $0x2,%edi
  1d:\tsyscall
  1f:\tpop    %rbp
  20:\tret    # syscall in a comment
"""
OBJDUMP_RELOCATIONS = """
x.o:     file format elf64-x86-64

RELOCATION RECORDS FOR [.text]:
OFFSET           TYPE              VALUE
000000000000046c R_X86_64_PLT32    __cudaRegisterFatBinary-0x0000000000000004
0000000000000499 R_X86_64_PLT32    __cudaRegisterFunction-0x0000000000000004
00000000000004a9 R_X86_64_PLT32    __cudaRegisterFatBinaryEnd-0x0000000000000004
00000000000004b4 R_X86_64_PC32     .bss+0x0000000000000014


RELOCATION RECORDS FOR [.text.startup]:
OFFSET           TYPE              VALUE
000000000000000c R_X86_64_PLT32    __cudaRegisterFatBinary-0x0000000000000004
000000000000004d R_X86_64_PLT32    __cudaRegisterFatBinaryEnd-0x0000000000000004
"""


class ObjectCheckTest(unittest.TestCase):
    def test_sass_parser(self):
        fns = objcheck.parse_sass(SASS_SAMPLE)
        self.assertEqual([f.name for f in fns],
                         ["_ZN7cudalab6reduce53_GLOBAL__N__555eef74_20_cg_tile_shfl__1_2_cu_bd9222a322sum_shared_tree_kernelIffEEvPKT_mPT0_",
                          "_Z8tree_sumPiS_"])
        self.assertEqual(fns[0].arch, "sm_90")
        self.assertEqual(fns[0].instructions,
                         [("0000", "LDC"), ("0010", "S2R"), ("0050", "LDG.E"), ("0120", "SHFL.DOWN"),
                          ("0130", "FADD"), ("0200", "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU"), ("0210", "EXIT"),
                          ("0220", "BRA")])
        self.assertEqual([op for _, op in fns[1].instructions],
                         ["LDC", "STS", "BAR.SYNC.DEFER_BLOCKING", "LDS.64", "EXIT"])
        self.assertEqual(objcheck.parse_sass(SASS_NO_KERNEL), [])
        self.assertEqual(objcheck.parse_sass(""), [])

    def test_forbidden_instructions(self):
        fns = objcheck.parse_sass(SASS_SAMPLE)
        entry, fn, addr, op = objcheck.forbidden_sass(fns, ["SHFL", "REDUX"])
        self.assertEqual((entry, fn.name, addr, op), ("SHFL", fns[0].name, "0120", "SHFL.DOWN"))
        entry, fn, addr, op = objcheck.forbidden_sass(fns, list(objcheck.SHARED_MEMORY_SASS))
        self.assertEqual((entry, fn.name, addr, op), ("STS", "_Z8tree_sumPiS_", "0040", "STS"))
        self.assertIsNone(objcheck.forbidden_sass(fns, ["MATCH", "VOTE", "LDSM"]))
        self.assertIsNone(objcheck.forbidden_sass(fns, []))

    def test_a_generic_atomics_own_shared_memory_branch_is_not_the_students(self):
        # cuobjdump -sass (CUDA 13.0, sm_90) of cuda::atomic_ref<long long>(*out).fetch_add(v) on a
        # global pointer, trimmed: the compiler tests the generic address (QSPC.E.S) and adds a
        # shared-memory path of its own (LDS, ATOMS.CAST.SPIN) that a global pointer never takes.
        # 1.3 forbids shared memory: that path is no finding; shared memory before it still is.
        text = """
	code for sm_90
		Function : _Z1kPKiPxi
        /*0270*/                   ATOM.E.ADD.64.STRONG.GPU P0, RZ, desc[UR4][R2.64], R8 ;
        /*0280*/               @P0 EXIT ;
        /*0290*/                   QSPC.E.S P0, RZ, [R2] ;
        /*02a0*/              @!P0 BRA 0x360 ;
        /*02d0*/                   LDS.64 R4, [UR4] ;
        /*0310*/                   ATOMS.CAST.SPIN.64 R6, [R3], R4, R6 ;
        /*0340*/              @!P0 BRA 0x2d0 ;
        /*0350*/                   EXIT ;
        /*0360*/                   LD.E.64 R4, desc[UR4][R2.64] ;
        /*0380*/                   ST.E.64 desc[UR4][R2.64], R4 ;
        /*0390*/                   EXIT ;
"""
        shared = list(objcheck.SHARED_MEMORY_SASS)
        self.assertIsNone(objcheck.forbidden_sass(objcheck.parse_sass(text), shared))
        before = text.replace("        /*0270*/", "        /*0260*/                   STS [R0], R8 ;\n        /*0270*/")
        hit = objcheck.forbidden_sass(objcheck.parse_sass(before), shared)
        self.assertEqual((hit[0], hit[2]), ("STS", "0260"))
        after = text.replace("        /*0390*/", "        /*0388*/                   LDS R4, [R0] ;\n        /*0390*/")
        hit = objcheck.forbidden_sass(objcheck.parse_sass(after), shared)
        self.assertEqual((hit[0], hit[2]), ("LDS", "0388"))

    def test_the_compilers_spin_loop_vote_is_not_the_students(self):
        # cuobjdump -sass (CUDA 13.0, sm_75) of 1.2 with a grid-stride loop of __ldcg loads
        # (notes' s12_gs___ldcg.cu), trimmed: ptxas adds a forward-progress check to a loop of
        # strong loads, a vote of the always-true predicate (the active mask) directly before a
        # YIELD. It is no vote of the source; a ballot (a real predicate), or an active-mask vote
        # with no YIELD after it, still is.
        text = """
	code for sm_75
		Function : _Z22sum_shared_tree_kernelIffEvPKT_mPT0_
        /*01b0*/               @P1 BRA 0x220 ;                                              /* 0x0000006000001947 */
                                                                                            /* 0x000fea0003800000 */
        /*01c0*/                   VOTE.ANY R4, PT, PT ;                                    /* 0x0000000000047806 */
                                                                                            /* 0x000fe200038e0100 */
        /*01d0*/                   YIELD ;                                                  /* 0x0000000000007946 */
                                                                                            /* 0x000fe20003800000 */
        /*01e0*/                   VOTEU.ANY UR4, UPT, PT ;                                 /* 0x0000000000047886 */
                                                                                            /* 0x000fe400038e0100 */
        /*01f0*/                   LOP3.LUT P0, RZ, R4, UR4, RZ, 0xc, !PT ;                 /* 0x0000000404ff7212 */
                                                                                            /* 0x000fd8000f80c0ff */
        /*0200*/              @!P0 BRA.U 0xd0 ;                                             /* 0xfffffec100008947 */
                                                                                            /* 0x000fea0003800000 */
        /*0210*/                   BRA 0x1c0 ;                                              /* 0xffffffa000007947 */
                                                                                            /* 0x000fea0003800000 */
        /*0220*/                   BSYNC B0 ;                                               /* 0x0000000000007941 */
"""
        fns = objcheck.parse_sass(text)
        self.assertEqual(fns[0].implicit, {"01c0"})
        forbid = ["SHFL", "REDUX", "VOTE", "BAR.RED"]
        self.assertIsNone(objcheck.forbidden_sass(fns, forbid))
        ballot = objcheck.parse_sass(text.replace("VOTE.ANY R4, PT, PT ;", "VOTE.ANY R4, PT, P1 ;"))
        self.assertEqual(objcheck.forbidden_sass(ballot, forbid)[2:], ("01c0", "VOTE.ANY"))
        no_yield = objcheck.parse_sass(text.replace("YIELD ;", "NOP ;"))
        self.assertEqual(objcheck.forbidden_sass(no_yield, forbid)[2:], ("01c0", "VOTE.ANY"))
        # an active-mask vote of its own two instructions before the compiler's (k.cu's
        # active_loop: `if (__ldcg(in + i) > 0) acc += __activemask();` on sm_75)
        before = text.replace("        /*01b0*/", "        /*01a0*/               @P0 VOTE.ANY R0, PT, PT ;\n"
                              "        /*01b0*/")
        self.assertEqual(objcheck.forbidden_sass(objcheck.parse_sass(before), forbid)[2:], ("01a0", "VOTE.ANY"))
        # the vote of one function and the YIELD of the next are not a pair
        split = objcheck.parse_sass(text.replace("        /*01d0*/", "\t\tFunction : _Z1kv\n        /*01d0*/"))
        self.assertEqual(objcheck.forbidden_sass(split, forbid)[2:], ("01c0", "VOTE.ANY"))

    def test_block_index_reads(self):
        # cuobjdump -sass (CUDA 13.0, sm_90) of `tile = blockIdx.x` and of
        # cg::this_grid().block_rank(), trimmed: the block index is a special register read
        # however the source spelled it; SR_CgaCtaId (the block's rank in its cluster, which the
        # 1.8 solution's shared-memory addressing reads) is not it.
        text = """
	code for sm_90
		Function : _Z9lookback1Pj
        /*0010*/                   S2R R7, SR_TID.X ;                   /* 0x0000000000077919 */
        /*0020*/                   S2R R3, SR_CgaCtaId ;                /* 0x0000000000037919 */
        /*0040*/                   S2R R5, SR_CTAID.X ;                 /* 0x0000000000057919 */
		Function : _Z9lookback2Pj
        /*0010*/                   S2UR UR5, SR_CTAID.Y ;               /* 0x00000000000579c3 */
        /*0020*/               @P0 S2R R9, SR_TID.X ;                   /* 0x0000000000097919 */
"""
        fns = objcheck.parse_sass(text)
        self.assertEqual(fns[0].registers, [("0010", "SR_TID.X"), ("0020", "SR_CgaCtaId"),
                                            ("0040", "SR_CTAID.X")])
        self.assertEqual(fns[1].registers, [("0010", "SR_CTAID.Y"), ("0020", "SR_TID.X")])
        entry, fn, addr, what = objcheck.forbidden_sass(fns, ["SHFL", "SR_CTAID"])
        self.assertEqual((entry, fn.name, addr, what), ("SR_CTAID", "_Z9lookback1Pj", "0040", "SR_CTAID.X"))
        only_rank = objcheck.parse_sass(text.replace("SR_CTAID.X", "SR_CgaCtaId").replace("SR_CTAID.Y", "SR_TID.Y"))
        self.assertIsNone(objcheck.forbidden_sass(only_rank, ["SR_CTAID"]))
        self.assertFalse(objcheck.sass_matches("SR_CTAID", "SR_CTAID_HI"))
        self.assertTrue(objcheck.sass_matches("SR_CTAID", "SR_CTAID.Z"))
        # an opcode entry never matches a register, nor a register entry an opcode
        self.assertIsNone(objcheck.forbidden_sass(objcheck.parse_sass(SASS_SAMPLE), ["SR_CTAID"]))

    def test_instruction_kinds(self):
        self.assertTrue(objcheck.sass_matches("LDS", "LDS.U8"))
        self.assertTrue(objcheck.sass_matches("LDS", "LDS"))
        self.assertFalse(objcheck.sass_matches("LDS", "LDSM.16.M88.4"))
        self.assertFalse(objcheck.sass_matches("SHFL", "SHF.R.U32.HI"))
        self.assertTrue(objcheck.sass_matches("SHFL.IDX", "SHFL.IDX"))
        self.assertFalse(objcheck.sass_matches("SHFL.IDX", "SHFL.DOWN"))
        self.assertTrue(objcheck.sass_matches("BAR.RED", "BAR.RED.POPC.DEFER_BLOCKING"))
        self.assertFalse(objcheck.sass_matches("BAR.RED", "BAR.SYNC.DEFER_BLOCKING"))
        self.assertFalse(objcheck.sass_matches("VOTE", "VOTEU.ANY"))

    def test_the_solutions_imports_are_allowed(self):
        self.assertIsNone(objcheck.bad_import(SOLUTION_IMPORTS))

    def test_string_streams_are_allowed(self):
        # std::ostringstream for an exception's message refers to its VTT (tools/grade refused 7.6's
        # length_error built with one: "VTT for std::__cxx11::basic_ostringstream<...>")
        for cls in ("basic_ostringstream", "basic_stringstream", "basic_istringstream"):
            name = f"VTT for std::__cxx11::{cls}<char, std::char_traits<char>, std::allocator<char> >"
            self.assertIsNone(objcheck.bad_import([name]), name)
        self.assertIsNone(objcheck.bad_import(["__popcountdi2"]))

    def test_ordinary_host_allocation_is_allowed(self):
        # new (std::nothrow) char[n] imports the std::nothrow object itself (tools/make-class's
        # `hog` student, called forbidden on the H100 instead of stopped for its memory)
        self.assertIsNone(objcheck.bad_import(["std::nothrow", "operator new[](unsigned long, "
                                               "std::nothrow_t const&)", "operator delete[](void*)"]))

    def test_process_file_and_network_imports_are_not(self):
        cases = {"system": "starts", "popen": "starts", "execve": "starts", "fork": "starts",
                 "kill": "starts", "ptrace": "starts", "dlopen": "loads code", "getenv": "environment",
                 "setenv": "environment", "fopen": "files", "open64": "files", "unlink": "files",
                 "std::basic_ofstream<char, std::char_traits<char> >::basic_ofstream()": "files",
                 "socket": "network", "pthread_create": "starts threads",
                 # a mutex or std::call_once starts no thread (notes/false-positives-ch4-ch7.md, 7)
                 "pthread_mutex_lock": "thread synchronization", "pthread_once": "thread synchronization",
                 "std::__once_call": "thread synchronization", "__once_proxy": "thread synchronization",
                 "cudaDeviceSetLimit": "device stack size", "cudaSetDeviceFlags": "for the whole process",
                 "cudaLaunchHostFunc": "CUDA call", "cudaGetDriverEntryPoint": "CUDA call",
                 "cudaGetExportTable": "CUDA call", "cudaImportExternalMemory": "external memory",
                 "cudaExternalMemoryGetMappedBuffer": "external memory",
                 "cudaSignalExternalSemaphoresAsync": "external memory",
                 "cudaDeviceRegisterAsyncNotification": "CUDA call",
                 "cuMemcpyDtoH_v2": "not on the grader's list", "qsort": "not on the grader's list",
                 # host memory that kernels write and the host reads: no copy for the guard to count
                 "cudaMallocManaged": "host memory", "__cudaRegisterManagedVar": "host memory",
                 "cudaHostAlloc": "host memory", "cudaMallocHost": "host memory",
                 "cudaHostRegister": "host memory", "cudaMemPoolCreate": "host memory",
                 "cudaMemGetDefaultMemPool": "host memory", "cudaMemGetMemPool": "host memory",
                 "cudaMemSetMemPool": "host memory", "cudaMemPoolImportFromShareableHandle": "host memory",
                 "cudaMemPoolImportPointer": "host memory", "cuMemPoolCreate": "not on the grader's list",
                 # copies that the runner's wrappers do not count
                 "cudaMemcpy_ptds": "past the grader's count", "cudaMemcpyAsync_ptsz": "past the grader's count",
                 "cudaMemcpy2DFromArray": "past the grader's count", "cudaMemcpyFromArrayAsync": "past the grader's count",
                 "cudaMemcpyBatchAsync": "past the grader's count", "cudaMemcpy3DPeerAsync": "past the grader's count",
                 "cudaMemcpyPeer": "past the grader's count",
                 "cudaGraphAddMemcpyNode1D": "CUDA graph", "cudaGraphLaunch": "CUDA graph",
                 "cudaStreamBeginCapture": "CUDA graph", "cudaGraphAddHostNode": "CUDA graph",
                 "cudaLibraryLoadData": "loads device code", "cudaLibraryGetKernel": "loads device code",
                 "__real_cudaMemcpy": "link-time name", "__wrap_cudaMemcpy": "link-time name"}
        for name, why in cases.items():
            with self.subTest(name=name):
                got = objcheck.bad_import(SOLUTION_IMPORTS + [name])
                self.assertEqual(got[0], name)
                self.assertIn(why, got[1])
        self.assertIsNone(objcheck.bad_import(["printf", "puts", "sqrtf", "std::cout",
                                               "std::chrono::_V2::steady_clock::now()"]))
        # the copies the runner counts, and device memory
        self.assertIsNone(objcheck.bad_import([
            "cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D", "cudaMemcpy2DAsync", "cudaMemcpy3D",
            "cudaMemcpy3DAsync", "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbolAsync", "cudaMemcpyToSymbol",
            "cudaMemcpyToSymbolAsync", "cudaMallocAsync", "cudaMallocPitch", "cudaDeviceGetDefaultMemPool",
            # a pool's allocation: only a pool refused above can be on the host (1.8's scratch from
            # the device's default pool, or cudaMallocAsync(&p, bytes, pool, stream), which calls it)
            "cudaMallocFromPoolAsync",
            "cudaStreamIsCapturing", "cudaDeviceSynchronize", "__cudaRegisterVar"]))

    def test_host_algorithms_in_symbols(self):
        syms = ["void std::__introsort_loop<int*, long, __gnu_cxx::__ops::_Iter_less_iter>(int*, int*, long, "
                "__gnu_cxx::__ops::_Iter_less_iter)", "cudalab::sort::odd_even_transposition_sort()"]
        self.assertEqual(objcheck.forbidden_host_symbol(syms, ["std::merge", "std::sort"])[0], "std::sort")
        self.assertIsNone(objcheck.forbidden_host_symbol(syms, ["std::merge", "qsort"]))

    def test_versioned_namespaces_in_symbols(self):
        """cuda::std::__4::reduce is cuda::std::reduce; std::__cxx11::list is std::list."""
        self.assertEqual(objcheck.public_symbol("long long cuda::std::__4::reduce<int const*, long long>(int const*)"),
                         "long long cuda::std::reduce<int const*, long long>(int const*)")
        self.assertEqual(objcheck.public_symbol("cub::CUB_300000_SM_900_NS::DeviceReduce::Sum()"),
                         "cub::DeviceReduce::Sum()")
        syms = ["std::__cxx11::list<int, std::allocator<int> >::sort()"]
        self.assertEqual(objcheck.forbidden_host_symbol(syms, ["std::merge", "std::list"])[0], "std::list")

    def test_check_object_with_canned_tools(self):
        """check_object on a fake object: cuobjdump's and nm's outputs canned."""
        ex = EXERCISES["1.2"]
        with mock.patch.object(objcheck, "sass_of", return_value=(SASS_SAMPLE, "")), \
                mock.patch.object(objcheck, "defined_functions", return_value=["f()"]), \
                mock.patch.object(objcheck, "imports", return_value=SOLUTION_IMPORTS), \
                mock.patch.object(objcheck, "relocation_symbols", return_value=NVCC_RELOCATIONS), \
                mock.patch.object(objcheck, "host_syscalls", return_value=[]):
            rep = source.check_object(ex, Path("x.o"), root=REPO)
        self.assertEqual([f.rule for f in rep.findings], ["sass"])
        self.assertIn("its device code uses a warp shuffle (`SHFL.DOWN` in cudalab::reduce::", rep.first.message)
        self.assertIn("which 1.2 forbids", rep.first.message)
        self.assertIn("/*0120*/ SHFL.DOWN", rep.first.details[0])
        with mock.patch.object(objcheck, "sass_of", return_value=(SASS_NO_KERNEL, "")), \
                mock.patch.object(objcheck, "defined_functions", return_value=[]), \
                mock.patch.object(objcheck, "imports", return_value=SOLUTION_IMPORTS + ["system"]), \
                mock.patch.object(objcheck, "relocation_symbols", return_value=NVCC_RELOCATIONS), \
                mock.patch.object(objcheck, "host_syscalls", return_value=[]):
            rep = source.check_object(EXERCISES["1.1"], Path("x.o"), root=REPO)
        self.assertEqual([f.rule for f in rep.findings], ["no-device-code", "import"])
        self.assertIn("calls `system`", rep.findings[1].message)
        # the host machine code: a system call made by inline assembly, a second registration
        with mock.patch.object(objcheck, "sass_of", return_value=(SASS_SAMPLE, "")), \
                mock.patch.object(objcheck, "defined_functions", return_value=[]), \
                mock.patch.object(objcheck, "imports", return_value=SOLUTION_IMPORTS), \
                mock.patch.object(objcheck, "relocation_symbols", return_value=objcheck.parse_relocations(
                    OBJDUMP_RELOCATIONS)), \
                mock.patch.object(objcheck, "host_syscalls", return_value=objcheck.parse_syscalls(
                    OBJDUMP_DISASSEMBLY)):
            rep = source.check_object(EXERCISES["5.1"], Path("x.o"), root=REPO)
        self.assertEqual([f.rule for f in rep.findings], ["syscall", "registration"])
        self.assertIn("its host code makes a system call itself (`syscall` in cudalab_redteam_write(", rep.first.message)
        self.assertIn("registers device code itself (`__cudaRegisterFatBinary`, referred to 2 times",
                      rep.findings[1].message)

    def test_without_cuobjdump_the_device_code_is_skipped_with_a_note(self):
        with mock.patch.object(objcheck, "cuobjdump", return_value=None), \
                mock.patch.object(objcheck, "defined_functions", return_value=[]), \
                mock.patch.object(objcheck, "imports", return_value=[]), \
                mock.patch.object(objcheck, "relocation_symbols", return_value=[]), \
                mock.patch.object(objcheck, "host_syscalls", return_value=[]):
            rep = source.check_object(EXERCISES["1.2"], Path("x.o"), root=REPO)
        self.assertEqual(rep.findings, [])
        self.assertEqual(rep.notes, ["cuobjdump not found: the device code was not checked"])

    def test_without_objdump_the_host_code_is_skipped_with_a_note(self):
        with mock.patch.object(objcheck, "sass_of", return_value=(SASS_SAMPLE, "")), \
                mock.patch.object(objcheck, "defined_functions", return_value=[]), \
                mock.patch.object(objcheck, "imports", return_value=[]), \
                mock.patch.object(objcheck, "objdump", return_value=None):
            rep = source.check_object(EXERCISES["1.1"], Path("x.o"), root=REPO)
        self.assertEqual(rep.findings, [])
        self.assertEqual(rep.notes, ["objdump not found: the host machine code was not checked"])

    def test_host_machine_code(self):
        """objdump's output read: system calls by instruction, registrations counted."""
        self.assertEqual(objcheck.parse_syscalls(OBJDUMP_DISASSEMBLY),
                         [("_Z21cudalab_redteam_writePKcm", "1d", "syscall")])
        self.assertEqual(objcheck.parse_syscalls("0000000000000000 <f>:\n   0:\tint    $0x80\n"
                                                 "   2:\tsysenter\n   4:\tint3\n   5:\tcall   a <g>\n"),
                         [("f", "0", "int $0x80"), ("f", "2", "sysenter")])
        relocs = objcheck.parse_relocations(OBJDUMP_RELOCATIONS)
        self.assertEqual(relocs.count("__cudaRegisterFatBinary"), 2)
        self.assertIn("__cudaRegisterFatBinaryEnd", relocs)
        self.assertEqual(objcheck.extra_registration(relocs), ("__cudaRegisterFatBinary", 2))
        self.assertIsNone(objcheck.extra_registration(NVCC_RELOCATIONS))
        self.assertIsNone(objcheck.extra_registration([]))

    @unittest.skipUnless(HAVE_NVCC and shutil.which("objdump") and shutil.which("nm"), "needs nvcc and binutils")
    def test_real_cuda_objects(self):
        """What nvcc makes of a managed variable, a registration by hand and a plain kernel."""
        with tempfile.TemporaryDirectory() as tmp:
            def build(name: str, text: str) -> Path:
                src, obj = Path(tmp) / f"{name}.cu", Path(tmp) / f"{name}.o"
                src.write_text(text)
                subprocess.run([tokencheck.find_nvcc(), "-c", str(src), "-o", str(obj)], check=True,
                               capture_output=True)
                return obj
            plain = build("plain", "__global__ void k(int* p) { *p = 1; }\n"
                                   "void f(int* p) { k<<<1, 1>>>(p); }\n")
            self.assertIsNone(objcheck.bad_import(objcheck.imports(plain)))
            self.assertIsNone(objcheck.extra_registration(objcheck.relocation_symbols(plain)))
            self.assertEqual(objcheck.host_syscalls(plain), [])
            managed = build("managed", "__managed__ int g[1024];\n__global__ void k() { g[0] = 1; }\n"
                                       "int f() { k<<<1, 1>>>(); cudaDeviceSynchronize(); return g[0]; }\n")
            self.assertEqual(objcheck.bad_import(objcheck.imports(managed))[0], "__cudaRegisterManagedVar")
            by_hand = build("by_hand", 'extern "C" void** __cudaRegisterFatBinary(void*);\n'
                                       "__global__ void k() {}\n"
                                       "static const int wrapper[6] = {0x466243b1, 1};\n"
                                       "void f() { __cudaRegisterFatBinary((void*)wrapper); k<<<1, 1>>>(); }\n")
            self.assertEqual(objcheck.extra_registration(objcheck.relocation_symbols(by_hand)),
                             ("__cudaRegisterFatBinary", 2))
            syscall = build("syscall", "__global__ void k() {}\n"
                                       'long f() { long r; asm volatile("syscall" : "=a"(r) : "a"(39L) '
                                       ': "rcx", "r11", "memory"); k<<<1, 1>>>(); return r; }\n')
            self.assertEqual([c[2] for c in objcheck.host_syscalls(syscall)], ["syscall"])
            self.assertIsNone(objcheck.interposing_definition(objcheck.global_definitions(plain)))
            send = build("send", "#include <sys/types.h>\n__global__ void k() {}\n"
                                 'extern "C" ssize_t send(int, const void*, size_t n, int) '
                                 "{ k<<<1, 1>>>(); return (ssize_t)n; }\n")
            self.assertEqual(objcheck.interposing_definition(objcheck.global_definitions(send))[0], "send")
            with mock.patch.object(objcheck, "sass_of", return_value=(None, "no cuobjdump")):
                rep = source.check_object(EXERCISES["1.1"], send, root=REPO)
            self.assertEqual([f.rule for f in rep.findings], ["definition"])
            self.assertIn("defines `send`, which has C linkage", rep.findings[0].message)

    def test_interposing_definitions(self):
        """A C-linkage name, the harness's namespaces or a strong std:: definition."""
        nm = ["0000000000000000 T _ZN7cudalab6reduce10sum_atomicEPKimPxP11CUstream_st",
              "0000000000000000 W _ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_"
              "iteratorIPiS1_EEDpOT_",
              "0000000000000000 V DW.ref.__gxx_personality_v0"]
        self.assertIsNone(objcheck.interposing_definition(objcheck.parse_definitions(nm)))
        # An honest global variable outside any namespace has no mangled name either.
        self.assertIsNone(objcheck.interposing_definition(objcheck.parse_definitions(
            nm + ["0000000000000010 B host_counter", "0000000000000018 D g_blocks"])))
        for extra, name, why in [
                ("0000000000000010 T send", "send", "C linkage"),
                ("0000000000000010 T main", "main", "C linkage"),
                ("0000000000000010 D stdout", "stdout", "C library"),
                ("0000000000000010 B __environ", "__environ", "C library"),
                ("0000000000000010 W _ZN7cudalab6remote4wire12send_messageEiNS1_4KindEPKvmRKSt6vectorIiSaIiEE",
                 "cudalab::remote::wire::send_message", "harness"),
                ("0000000000000010 T _ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int", "strong")]:
            with self.subTest(definition=extra):
                hit = objcheck.interposing_definition(objcheck.parse_definitions(nm + [extra]))
                self.assertIsNotNone(hit)
                self.assertTrue(hit[0].startswith(name), hit)
                self.assertIn(why, hit[1])

    def test_cuobjdump_outcomes(self):
        done = subprocess.CompletedProcess
        with mock.patch.object(objcheck, "cuobjdump", return_value="/x/cuobjdump"):
            with mock.patch.object(subprocess, "run", return_value=done([], 0, SASS_SAMPLE, "")):
                self.assertEqual(objcheck.sass_of(Path("x.o")), (SASS_SAMPLE, ""))
            info = "cuobjdump info    : File 'x.o' does not contain device code\n"
            with mock.patch.object(subprocess, "run", return_value=done([], 255, "", info)):
                self.assertEqual(objcheck.sass_of(Path("x.o")), ("", ""))     # a host-only object
            fatal = "cuobjdump fatal   : Could not find executable file 'nvdisasm'\n"
            with mock.patch.object(subprocess, "run", return_value=done([], 1, "", fatal)):
                text, note = objcheck.sass_of(Path("x.o"))
                self.assertIsNone(text)
                self.assertIn("nvdisasm", note)

    def test_cuobjdump_runs_once_per_object_as_it_is_on_disk(self):
        """The technique check after the tests reads the SASS the object check had before them:
        one cuobjdump run per object until the file changes; a failed run is not kept."""
        done = subprocess.CompletedProcess
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(objcheck, "cuobjdump", return_value="/x/cuobjdump"):
            obj = Path(tmp) / "x.o"
            obj.write_bytes(b"one")
            with mock.patch.object(subprocess, "run", return_value=done([], 1, "", "fatal")) as run:
                objcheck.sass_of(obj)
                objcheck.sass_of(obj)
            self.assertEqual(run.call_count, 2)
            with mock.patch.object(subprocess, "run", return_value=done([], 0, SASS_SAMPLE, "")) as run:
                self.assertEqual(objcheck.sass_of(obj), (SASS_SAMPLE, ""))
                self.assertEqual(objcheck.sass_of(obj), (SASS_SAMPLE, ""))
                self.assertEqual(run.call_count, 1)
                obj.write_bytes(b"a rebuilt object")
                objcheck.sass_of(obj)
                self.assertEqual(run.call_count, 2)

    @unittest.skipUnless(shutil.which("g++") and shutil.which("nm"), "needs g++ and nm")
    def test_real_host_object(self):
        with tempfile.TemporaryDirectory() as tmp:
            s = Path(tmp) / "a.cpp"
            s.write_text("#include <algorithm>\n#include <cstdlib>\n#include <vector>\n"
                         "void f(std::vector<int>& v) { std::sort(v.begin(), v.end()); std::system(\"true\"); }\n")
            o = Path(tmp) / "a.o"
            subprocess.run(["g++", "-O2", "-c", str(s), "-o", str(o)], check=True)
            self.assertIn("system", objcheck.imports(o))
            self.assertEqual(objcheck.bad_import(objcheck.imports(o))[0], "system")
            hit = objcheck.forbidden_host_symbol(objcheck.defined_functions(o), ["std::sort"])
            self.assertEqual(hit[0], "std::sort")
            self.assertIn("std::__introsort_loop<", hit[1])


class ParseOutputTest(unittest.TestCase):
    """The reading of preprocessed output, on canned text (no preprocessor needed)."""

    def test_markers_includes_renames_and_raw_strings(self):
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            (cwd / "s.cu").write_text("")
            text = "\n".join([
                '# 0 "s.cu"', '# 0 "<built-in>"', '# 0 "<command-line>"',
                '# 1 "/usr/include/stdc-predef.h" 1 3 4', '# 0 "<command-line>" 2',
                '# 1 "cuda_runtime.h" 1', "int header_code;", '# 0 "<command-line>" 2',
                '# 1 "s.cu"', "#define C cub", "int a;",
                '# 1 "inc/x.h" 1', "int x_code = cub_x;", '# 4 "s.cu" 2',
                'const char* r = R"d(', '# 1 "/usr/include/stdio.h" 1', ')d"; int b;',
                " # 1 \"/usr/include/stdio.h\" 1", "C::Sum();",
                '# 40 "other.cu"', "int c;", ""])
            ps = tokencheck.parse_output(text, (cwd / "s.cu").resolve(), cwd, "host")
            self.assertEqual(ps.broken, "")
            toks = [(t.text, t.line) for t in ps.tokens]
            self.assertIn(("a", 2), toks)
            self.assertNotIn("header_code", [t for t, _ in toks])
            self.assertNotIn("x_code", [t for t, _ in toks])
            self.assertIn(("b", 6), toks)              # after the raw string, same line
            self.assertIn(("Sum", 8), toks)            # the forged marker was code
            self.assertIn(("c", 40), toks)             # still the student's file, renamed
            self.assertEqual([(i.spelled, i.line) for i in ps.includes], [("inc/x.h", 3)])
            self.assertEqual(ps.renames, [(9, "other.cu")])
            self.assertEqual([(d.name, d.line, d.body) for d in ps.defines], [("C", 1, "cub")])

    def test_a_line_directive_to_a_pseudo_name_hides_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            (cwd / "s.cu").write_text("")
            text = "\n".join([
                '# 0 "s.cu"', '# 0 "<built-in>"', "#define __GNUC__ 12", '# 0 "<command-line>"',
                '# 1 "/usr/include/stdc-predef.h" 1 3 4', '# 0 "<command-line>" 2', '# 1 "s.cu"', "int a;", '# 1 "<x>"', "#define C cub",
                "C::Sum();", ""])
            ps = tokencheck.parse_output(text, (cwd / "s.cu").resolve(), cwd, "host")
            self.assertIn(("Sum", 2), [(t.text, t.line) for t in ps.tokens])
            self.assertEqual(ps.renames, [(2, "<x>")])
            self.assertEqual([d.name for d in ps.defines], ["C"])

    def test_line_directives_across_splices_and_comments(self):
        for text, line in [('int a;\n#li\\\nne 1 "<x>"\n', 2), ('#\\\nline 1\n', 1),
                           ('a;\nb;\n# /* one\n two */ line 9\n', 3), ("/* */ %:line 9\n", 1),
                           ('#\\\n 1 "<x>"\n', 1)]:
            with self.subTest(text=text):
                self.assertEqual(tokencheck.raw_line_directive(text), line)
        for text in ['const char* s = R"x(\n#line 2\n)x";\n', "// c \\\n#line 4\n",
                     'int a; /* */ #line\n', 'const char* s = "#line 1";\n']:
            with self.subTest(text=text):
                self.assertIsNone(tokencheck.raw_line_directive(text))

    def test_digraphs_and_raw_string_delimiters(self):
        toks: list = []
        tokencheck.lex_line('<:<:gnu::shared:>:> int s<%2%>; std::vector<::std::string> v;', 1, None, toks)
        self.assertEqual([t.text for t in toks][:7], ["[", "[", "gnu", "::", "shared", "]", "]"])
        self.assertIn("{", [t.text for t in toks])
        self.assertEqual([t.text for t in toks][-8:-4], ["<", "::", "std", "::"])
        toks = []
        tokencheck.lex_line('auto q = R""(")""; cub::x();', 1, None, toks)
        self.assertEqual([t.text for t in toks if t.kind == "id"], ["auto", "q", "cub", "x"])

    def test_uses_resolve_aliases_and_attributes(self):
        toks: list = []
        for n, line in enumerate(["namespace cg = cooperative_groups;", "cg::reduce(t, v);",
                                  "__attribute__((aligned(16), __shared__)) int s[4];",
                                  "::cub::DeviceScan::ExclusiveSum(x);", "o.reduce(1); p->sort();"], 1):
            tokencheck.lex_line(line, n, None, toks)
        uses = tokencheck.uses(toks)
        got = {(tuple(u.chain), u.line) for u in uses}
        self.assertIn((("cooperative_groups",), 1), got)
        self.assertIn((("cooperative_groups", "reduce"), 2), got)
        self.assertIn((("__shared__",), 3), got)
        self.assertIn((("__aligned__",), 3), got)
        self.assertIn((("cub", "DeviceScan", "ExclusiveSum"), 4), got)
        self.assertNotIn((("reduce",), 5), got)    # members are no uses of a free function
        self.assertNotIn((("sort",), 5), got)

    def test_matching(self):
        def use(chain, **kw):
            return tokencheck.Use(chain, "::".join(chain), 1, **kw)
        self.assertTrue(tokencheck.matches("cub::", use(["cub", "DeviceReduce"])))
        self.assertTrue(tokencheck.matches("cub::", use(["cub"], namespace=True)))
        self.assertFalse(tokencheck.matches("cub::", use(["cub"])))
        self.assertFalse(tokencheck.matches("cub::", use(["mycub", "x"])))
        self.assertTrue(tokencheck.matches("cub::Device", use(["cub", "DeviceSelect", "If"])))
        self.assertFalse(tokencheck.matches("cub::Device", use(["cub", "BlockScan"])))
        self.assertTrue(tokencheck.matches("__shfl", use(["__shfl_xor_sync"])))
        self.assertTrue(tokencheck.matches("std::sort", use(["std", "ranges", "sort"]), exact=True))
        self.assertTrue(tokencheck.matches("std::merge", use(["cuda", "std", "__4", "merge"]), exact=True))
        self.assertTrue(tokencheck.matches("std::merge", use(["", "cuda", "std", "merge"])))
        self.assertFalse(tokencheck.matches("std::merge", use(["cuda", "merge"]), exact=True))
        self.assertFalse(tokencheck.matches("std::min_element", use(["cuda", "std", "min"]), exact=True))
        self.assertFalse(tokencheck.matches("std::set", use(["std", "setw"]), exact=True))
        self.assertFalse(tokencheck.matches("cooperative_groups::reduce", use(["cooperative_groups"],
                                                                              namespace=True)))


class CommandTest(unittest.TestCase):
    def test_nvcc_words_of_a_cmake_command(self):
        cmd = ("/usr/bin/ccache /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler "
               "-I/c/chapters/common/include -isystem /opt/gtest -O3 -DNDEBUG -std=c++17 "
               "\"--generate-code=arch=compute_90,code=[compute_90,sm_90]\" -Xcompiler=-Wall,-Wextra -lineinfo "
               "-MD -MT chapters/x.cu.o -MF chapters/x.cu.o.d -x cu -c /c/starter/01/x.cu -o chapters/x.cu.o")
        import shlex
        self.assertEqual(tokencheck.nvcc_argv(shlex.split(cmd), Path("/c/starter/01/x.cu")),
                         ["/usr/local/cuda/bin/nvcc", "-forward-unknown-to-host-compiler",
                          "-I/c/chapters/common/include", "-isystem", "/opt/gtest", "-O3", "-DNDEBUG",
                          "-std=c++17", "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
                          "-Xcompiler=-Wall,-Wextra", "-lineinfo", "-x", "cu"])
        self.assertIsNone(tokencheck.nvcc_argv(["fakecc", "x.cu", "-o", "x.o"], Path("x.cu")))

    def test_chapter_include_dirs(self):
        dirs = tokencheck.chapter_include_dirs(REPO, "07-kdtree-large-nodes")
        rel = [str(d.relative_to(REPO / "chapters")) for d in dirs]
        self.assertEqual(rel, ["common/include", "07-kdtree-large-nodes/include",
                               "07-kdtree-large-nodes/reference", "03-device-stack/include",
                               "03-device-stack/reference"])

    @unittest.skipUnless(HAVE_NVCC, "needs nvcc")
    def test_the_build_command_decides(self):
        """With compile_commands.json the check preprocesses with the build's own -D flags."""
        with tempfile.TemporaryDirectory() as tmp:
            ex = EXERCISES["1.1"]
            path = write_course_file(Path(tmp), ex, "#include <cub/device/device_reduce.cuh>\n" + HEAD_11
                                     + "#ifdef CUDALAB_SECRET\n#define C cub\n#endif\n__global__ void k() {}\n"
                                     + CUB_11)
            build = Path(tmp) / "build"
            build.mkdir()
            nvcc = tokencheck.find_nvcc()
            incs = " ".join(f"-I{d}" for d in tokencheck.chapter_include_dirs(REPO, ex.chapter_dir))
            (build / "compile_commands.json").write_text(
                f'[{{"directory": "{build}", "file": "{path}", '
                f'"command": "{nvcc} {incs} -DCUDALAB_SECRET=1 -O3 -std=c++17 -x cu -c {path} -o x.o"}}]')
            self.assertEqual(source.check_report(ex, path, root=REPO, build_dir=build).first.rule, "name")
            (build / "compile_commands.json").write_text("[]")   # the course's flags: no CUDALAB_SECRET,
            path.write_text(path.read_text() + "\n")            # so C stays C (another file: no cache)
            self.assertIsNone(source.check_report(ex, path, root=REPO, build_dir=build).first)

    def test_the_object_of_the_build(self):
        ex = EXERCISES["1.2"]
        with tempfile.TemporaryDirectory() as tmp:
            build = Path(tmp)
            d = (build / "chapters" / ex.chapter_dir / "CMakeFiles" / "cudalab_sum_shared_tree_starter.dir"
                 / "__" / "__" / "starter" / ex.chapter_dir)
            d.mkdir(parents=True)
            (d / f"{ex.file}.o").write_bytes(b"")
            self.assertEqual(source.find_object(ex, build, "starter"), d / f"{ex.file}.o")
            self.assertIsNone(source.find_object(ex, build, "solution"))


class FallbackTest(unittest.TestCase):
    def test_without_nvcc_the_text_search_remains(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_course_file(Path(tmp), EXERCISES["1.1"],
                                     "// cub:: in a comment\nint x = cub::Sum();\n")
            with mock.patch.object(tokencheck, "find_nvcc", return_value=None):
                rep = source.check_report(EXERCISES["1.1"], path, root=REPO)
        self.assertEqual(rep.first.message, "uses forbidden API 'cub::' (line 2)")
        self.assertIn("nvcc not found", rep.notes[0])

    def test_strip_code_and_find_forbidden_still_work(self):
        self.assertEqual(source.find_forbidden("ok\n/*cub::*/ thrust::x", ["cub::", "thrust::"]),
                         ("thrust::", 2))


# cuobjdump -sass (CUDA 13.0, sm_90) of 1.2's reference tree and of 1.1's one atomic per
# element, trimmed to the instructions the technique check reads.
SASS_TREE = """
\tcode for sm_90
\t\tFunction : _ZN7cudalab6reduce51_GLOBAL__N__955780f1_18_sum_shared_tree_cu_bd9222a322sum_shared_tree_kernelIffEEvPKT_mPT0_
        /*01c0*/                   STS [R3], R0 ;                                           /* 0x0000000003007388 */
        /*01d0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;                            /* 0x0000000000007b1d */
        /*01e0*/              @!P1 LDS R4, [R3] ;                                           /* 0x0000000003049984 */
        /*0220*/              @!P1 STS [R3], R4 ;                                           /* 0x0000000403009388 */
        /*0290*/                   EXIT ;                                                   /* 0x000000000000794d */
"""
SASS_ATOMIC = """
\tcode for sm_90
\t\tFunction : _ZN7cudalab6reduce46_GLOBAL__N__b671d2b4_13_sum_atomic_cu_7eec81b617sum_atomic_kernelIffEEvPKT_mPT0_
        /*0090*/               @P0 EXIT ;                                                   /* 0x000000000000094d */
        /*00e0*/                   LDG.E.CONSTANT R5, desc[UR4][R4.64] ;                    /* 0x0000000404057981 */
        /*0100*/                   REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R5 ;  /* 0x00000005020079a6 */
        /*0110*/                   EXIT ;                                                   /* 0x000000000000794d */
"""


class TechniqueTest(unittest.TestCase):
    """require_sass: an exercise's own technique in its compiled kernels, once its tests pass."""

    def test_missing_sass(self):
        tree, atomic = objcheck.parse_sass(SASS_TREE), objcheck.parse_sass(SASS_ATOMIC)
        self.assertIsNone(objcheck.missing_sass(tree, ["STS", "LDS", "BAR.SYNC"]))
        self.assertEqual(objcheck.missing_sass(atomic, ["STS", "LDS", "BAR.SYNC"]), "STS")
        self.assertEqual(objcheck.missing_sass(tree, ["STS", "SHFL"]), "SHFL")
        self.assertEqual(objcheck.missing_sass(tree, ["LDG.E.128"]), "LDG.E.128")
        self.assertIsNone(objcheck.missing_sass(atomic + tree, ["REDG", "LDS"]))  # any function counts
        self.assertIsNone(objcheck.missing_sass(atomic, []))

    def check(self, exid: str, sass: str | None):
        ex = EXERCISES[exid]
        with mock.patch.object(source, "fresh_object", return_value=(Path(__file__), "")), \
                mock.patch.object(objcheck, "sass_of", return_value=(sass, "" if sass else "no cuobjdump")):
            return source.technique_check(ex, REPO / ex.source("solution"), build_dir=REPO, impl="solution",
                                          root=REPO)

    def test_an_earlier_exercises_technique_loses_the_points(self):
        f = self.check("1.2", SASS_ATOMIC)
        self.assertEqual((f.rule, f.name), ("require-sass", "STS"))
        self.assertIn("its tests pass, but its device code has no shared-memory store (`STS`) in any kernel, "
                      "and 1.2 asks for its own technique: a tree in shared memory", f.message)
        self.assertIn("cudalab::reduce::", f.details[0])
        self.assertIn("required instructions: STS, LDS, BAR.SYNC", f.details[0])

    def test_the_technique_passes_and_other_exercises_require_nothing(self):
        self.assertIsNone(self.check("1.2", SASS_TREE))
        self.assertIsNone(self.check("1.1", SASS_ATOMIC))   # 1.1 requires nothing
        self.assertIsNone(self.check("1.2", None))          # no cuobjdump: the object check notes it
        self.assertIsNone(self.check("1.2", "\n"))          # no SASS (PTX only): the object check says so

    def test_a_class_checks_the_object_it_compiled(self):
        """Class grading compiles the student's object to build_dir/grade-obj/<slug>.o
        (classbuild.build_exercise), not CMake's OBJECT library: that object is the one read."""
        ex = EXERCISES["1.2"]
        with tempfile.TemporaryDirectory() as tmp:
            obj = Path(tmp) / "grade-obj" / f"{ex.slug}.o"
            obj.parent.mkdir()
            obj.write_bytes(b"")
            read = []
            def sass_of(path):
                read.append(path)
                return SASS_ATOMIC, ""
            with mock.patch.object(objcheck, "sass_of", side_effect=sass_of):
                f = source.technique_check(ex, REPO / ex.source("starter"), build_dir=Path(tmp), root=REPO)
        self.assertEqual(read, [obj])
        self.assertEqual(f.name, "STS")

    def test_the_grader_checks_it_only_after_the_tests_pass(self):
        text = (REPO / "tools" / "cudalab_grade" / "grading.py").read_text()
        grade = text[text.index("def _grade("):text.index("def _tests_and_sanitizers(")]
        self.assertLess(grade.index("if not passed:\n        return"), grade.index("source.technique_check("))
        self.assertLess(grade.index("source.technique_check("), grade.index("run_perf("))

    @unittest.skipUnless(HAVE_NVCC and objcheck.cuobjdump(), "needs nvcc and cuobjdump")
    def test_real_objects_the_solutions_pass_an_earlier_technique_does_not(self):
        """Each solution's object (sm_90) has its required instructions; the solution of the
        exercise before it, whose technique passes the same tests, misses one."""
        earlier = {"1.2": "1.1", "1.3": "1.1", "1.4": "1.3", "1.11": "1.10", "4.2": "4.1"}
        nvcc = tokencheck.find_nvcc()
        inc = [f"-I{d}" for d in [REPO / "chapters" / "common" / "include",
                                 *sorted((REPO / "chapters").glob("*/include"))]]
        with tempfile.TemporaryDirectory() as tmp:
            def kernels(exid):
                obj = Path(tmp) / f"{exid}.o"
                subprocess.run([nvcc, "-std=c++17", "-O3", "-arch=sm_90", *inc, "-c",
                                str(REPO / EXERCISES[exid].source("solution")), "-o", str(obj)],
                               check=True, capture_output=True)
                return objcheck.parse_sass(objcheck.sass_of(obj)[0])
            for exid, before in earlier.items():
                with self.subTest(exercise=exid):
                    c = source.contract(EXERCISES[exid], REPO)
                    self.assertIsNone(objcheck.missing_sass(kernels(exid), c.require_sass))
                    self.assertIsNotNone(objcheck.missing_sass(kernels(before), c.require_sass))


if __name__ == "__main__":
    unittest.main()
