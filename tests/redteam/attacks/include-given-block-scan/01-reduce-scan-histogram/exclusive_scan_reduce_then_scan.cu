// RED TEAM: 1.7 without the warp scan and the tile scan: block_exclusive_scan (with its
// RED TEAM: warp_inclusive_scan) is the given one of cudalab/block_scan.cuh (chapters/common,
// RED TEAM: given to 1.8 and 4.6), which in the instructor's tree is 1.7's reference code (the
// RED TEAM: student edition withholds it), called through `using device::block_exclusive_scan`
// RED TEAM: from inside namespace cudalab::scan: no forbidden name. The tile prefix comes from a
// RED TEAM: callback that reads the scanned tile sums. The rest (phase 1, the host side) is 1.7's.
// Exercise 1.7: exclusive scan of any length by reduce-then-scan: reduce
// each tile, scan the tile sums (recursively), scan each tile again from its
// prefix.
// Lesson: chapters/01-reduce-scan-histogram/lesson/scan.md, "1.7".
// Grade:  tools/grade 1.7      Hints: tools/grade --hint 1.7
#include <cstddef>
#include <cstdint>

#include "cudalab/async_buffer.cuh"
#include "cudalab/block_load_store.cuh"
#include "cudalab/block_scan.cuh"
#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"
#include "cudalab/warp.cuh"
// @REDTEAM_LIB@

namespace cudalab::scan {
namespace {

constexpr int kThreads = 256;                 // threads per block
constexpr int kWarps = kThreads / 32;         // 8
constexpr int kVecs = 4;                      // 16-byte vectors per thread
constexpr int kTile = kThreads * kVecs * 4;   // 4096 elements per tile
static_assert(kVecs * kWarps == 32, "the (vector, warp) totals of a tile fill exactly one warp");

// The tile layout (cudalab/block_load_store.cuh): vector k of thread t
// holds elements 4 (k * kThreads + t) to 4 (k * kThreads + t) + 3 of the
// tile, so the order of the elements in the scan is (k, warp, lane,
// component). Out-of-range elements read as 0.
using device::Access;
using device::load_tile;
using device::store_tile;

using device::block_exclusive_scan;

// Phase 1: sums[b] = the sum of tile b (modulo 2^32).
__global__ void __launch_bounds__(kThreads)
    reduce_tiles_kernel(const int* in, std::size_t n, bool vector_ok, unsigned* sums) {
  __shared__ unsigned s_warp_sums[kWarps];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kTile;
  uint4 v[kVecs];
  load_tile<kThreads, Access::kCached>(in, base, n, vector_ok, v);
  unsigned s = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) s += v[k].x + v[k].y + v[k].z + v[k].w;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(kFullMask, s, offset);
  if (lane_id() == 0) s_warp_sums[warp_id()] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) total += s_warp_sums[w];
    sums[blockIdx.x] = total;
  }
}

// Phase 3: exclusive scan of tile b, starting from prefixes[b] (the sum of
// every tile before it; prefixes == nullptr: a single tile, prefix 0).
__global__ void __launch_bounds__(kThreads)
    scan_tiles_kernel(const int* in, std::size_t n, int* out, bool vector_ok,
                      const unsigned* prefixes) {
  __shared__ unsigned s_totals[32];  // sum of each (vector k, warp) group, at k * kWarps + warp
  __shared__ unsigned s_prefix[32];  // exclusive prefix of each group within the whole array
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kTile;
  uint4 v[kVecs];
  load_tile<kThreads, Access::kCached>(in, base, n, vector_ok, v);
  block_exclusive_scan<kThreads>(v, lane, warp, s_totals, s_prefix, [&](unsigned) {
    return prefixes != nullptr ? prefixes[blockIdx.x] : 0u;
  });
  store_tile<kThreads, Access::kCached>(out, base, n, vector_ok, v);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Exclusive scan of in[0, n) into out (n >= 1; out may equal in).
void scan_recursive(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  const bool vector_ok = aligned16(in) && aligned16(out);
  const std::size_t tiles = (n + kTile - 1) / kTile;
  if (tiles == 1) {  // one block scans everything
    scan_tiles_kernel<<<1, kThreads, 0, stream>>>(in, n, out, vector_ok, nullptr);
    CUDALAB_CHECK_LAUNCH();
    return;
  }
  AsyncBuffer<unsigned> sums(tiles, stream);  // freed in stream order at the end of the scope
  reduce_tiles_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(in, n, vector_ok,
                                                                            sums.data());
  CUDALAB_CHECK_LAUNCH();
  // The tile sums' exclusive scan, in place, is each tile's prefix.
  int* sums_as_int = reinterpret_cast<int*>(sums.data());
  scan_recursive(sums_as_int, tiles, sums_as_int, stream);
  scan_tiles_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(in, n, out, vector_ok,
                                                                          sums.data());
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void exclusive_scan_reduce_then_scan(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  detail::check_scan_arguments("exclusive_scan_reduce_then_scan", in, n, out);
  if (n == 0) return;
  scan_recursive(in, n, out, stream);
}

}  // namespace cudalab::scan
