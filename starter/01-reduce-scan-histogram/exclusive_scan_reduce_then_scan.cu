// Exercise 1.7: exclusive scan of any length by reduce-then-scan: reduce
// each tile, scan the tile sums (recursively), scan each tile again from its
// prefix.
// Lesson: chapters/01-reduce-scan-histogram/lesson/scan.md, "1.7".
// Grade:  tools/grade 1.7      Hints: tools/grade --hint 1.7
#include <cstddef>
#include <cstdint>

#include "cudalab/async_buffer.cuh"
#include "cudalab/block_load_store.cuh"
#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"
#include "cudalab/warp.cuh"

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

// Inclusive scan of x over the 32 lanes of a warp (Hillis-Steele with shuffles).
__device__ __forceinline__ unsigned warp_inclusive_scan(unsigned x) {
  // TODO(1.7): five __shfl_up_sync steps (d = 1, 2, 4, 8, 16); lane l adds
  // the value from lane l - d when l >= d.
  return x;
}

// Phase 1: sums[b] = the sum of tile b (modulo 2^32).
__global__ void __launch_bounds__(kThreads)
    reduce_tiles_kernel(const int* in, std::size_t n, bool vector_ok, unsigned* sums) {
  __shared__ unsigned s_warp_sums[kWarps];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kTile;
  uint4 v[kVecs];
  load_tile<kThreads, Access::kCached>(in, base, n, vector_ok, v);
  // TODO(1.7): sum the thread's 16 values, reduce across the block (warp
  // shuffles, s_warp_sums, __syncthreads()) and write the tile's sum to
  // sums[blockIdx.x]. Add in unsigned.
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
  unsigned excl[kVecs];  // the sum of the warp's lower lanes' vector k
  // TODO(1.7): each thread's vector sums (its 4 values each), scanned
  // across the warp with warp_inclusive_scan: excl[k] = the sum of the
  // lower lanes' vector k; lane 31 writes the (vector k, warp) group's total
  // to s_totals[k * kWarps + warp]. Add in unsigned.
  // TODO(1.7): after a barrier, warp 0 scans the 32 group totals (in
  // s_totals order) and writes each group's exclusive prefix within the
  // whole array, from the tile's prefix prefixes[blockIdx.x] (0 when
  // prefixes == nullptr), to s_prefix; then a barrier.
  // TODO(1.7): turn v into the exclusive prefixes of the thread's
  // elements: its group's prefix in s_prefix, plus excl[k], plus the
  // components before it in the vector.
  store_tile<kThreads, Access::kCached>(out, base, n, vector_ok, v);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Exclusive scan of in[0, n) into out (n >= 1; out may equal in).
void scan_recursive(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  const bool vector_ok = aligned16(in) && aligned16(out);
  const std::size_t tiles = (n + kTile - 1) / kTile;
  // TODO(1.7): one tile: scan_tiles_kernel with prefixes = nullptr. Else
  // allocate the tile sums (AsyncBuffer<unsigned> sums(tiles, stream)),
  // reduce_tiles_kernel, scan the sums in place by calling scan_recursive,
  // then scan_tiles_kernel with prefixes = the scanned sums.
  scan_tiles_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(in, n, out, vector_ok,
                                                                           nullptr);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void exclusive_scan_reduce_then_scan(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  detail::check_scan_arguments("exclusive_scan_reduce_then_scan", in, n, out);
  if (n == 0) return;
  scan_recursive(in, n, out, stream);
}

}  // namespace cudalab::scan
