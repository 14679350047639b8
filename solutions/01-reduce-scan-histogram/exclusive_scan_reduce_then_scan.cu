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
  // BEGIN SOLUTION
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned d = 1; d < 32; d *= 2) {
    const unsigned y = __shfl_up_sync(kFullMask, x, d);
    if (lane >= d) x += y;
  }
  return x;
  // STARTER:
  // // TODO(1.7): five __shfl_up_sync steps (d = 1, 2, 4, 8, 16); lane l adds
  // // the value from lane l - d when l >= d.
  // return x;
  // END SOLUTION
}

// Phase 1: sums[b] = the sum of tile b (modulo 2^32).
__global__ void __launch_bounds__(kThreads)
    reduce_tiles_kernel(const int* in, std::size_t n, bool vector_ok, unsigned* sums) {
  __shared__ unsigned s_warp_sums[kWarps];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kTile;
  uint4 v[kVecs];
  load_tile<kThreads, Access::kCached>(in, base, n, vector_ok, v);
  // BEGIN SOLUTION
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
  // STARTER:
  // // TODO(1.7): sum the thread's 16 values, reduce across the block (warp
  // // shuffles, s_warp_sums, __syncthreads()) and write the tile's sum to
  // // sums[blockIdx.x]. Add in unsigned.
  // END SOLUTION
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
  // BEGIN SOLUTION
  // The tile scan is three blocks: the first and the third stand word for
  // word in the given block_exclusive_scan (cudalab/block_scan.cuh), whose
  // middle part asks a callback for the tile's prefix, so the student edition
  // finds them there whole and withholds them.
  // Each thread's vector sums, scanned across the warp.
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const unsigned s = v[k].x + v[k].y + v[k].z + v[k].w;
    const unsigned inc = warp_inclusive_scan(s);
    excl[k] = inc - s;
    if (lane == 31) s_totals[k * kWarps + warp] = inc;
  }
  // STARTER:
  // // TODO(1.7): each thread's vector sums (its 4 values each), scanned
  // // across the warp with warp_inclusive_scan: excl[k] = the sum of the
  // // lower lanes' vector k; lane 31 writes the (vector k, warp) group's total
  // // to s_totals[k * kWarps + warp]. Add in unsigned.
  // END SOLUTION
  // BEGIN SOLUTION
  __syncthreads();
  // Warp 0 scans the 32 group totals, in scan order, from the tile's prefix.
  if (warp == 0) {
    const unsigned total = s_totals[lane];
    const unsigned inc = warp_inclusive_scan(total);
    const unsigned tile_prefix = prefixes != nullptr ? prefixes[blockIdx.x] : 0u;
    s_prefix[lane] = tile_prefix + inc - total;
  }
  __syncthreads();
  // STARTER:
  // // TODO(1.7): after a barrier, warp 0 scans the 32 group totals (in
  // // s_totals order) and writes each group's exclusive prefix within the
  // // whole array, from the tile's prefix prefixes[blockIdx.x] (0 when
  // // prefixes == nullptr), to s_prefix; then a barrier.
  // END SOLUTION
  // BEGIN SOLUTION
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const unsigned p0 = s_prefix[k * kWarps + warp] + excl[k];
    const unsigned p1 = p0 + v[k].x;
    const unsigned p2 = p1 + v[k].y;
    const unsigned p3 = p2 + v[k].z;
    v[k] = make_uint4(p0, p1, p2, p3);
  }
  // STARTER:
  // // TODO(1.7): turn v into the exclusive prefixes of the thread's
  // // elements: its group's prefix in s_prefix, plus excl[k], plus the
  // // components before it in the vector.
  // END SOLUTION
  store_tile<kThreads, Access::kCached>(out, base, n, vector_ok, v);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Exclusive scan of in[0, n) into out (n >= 1; out may equal in).
void scan_recursive(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  const bool vector_ok = aligned16(in) && aligned16(out);
  const std::size_t tiles = (n + kTile - 1) / kTile;
  // BEGIN SOLUTION
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
  // STARTER:
  // // TODO(1.7): one tile: scan_tiles_kernel with prefixes = nullptr. Else
  // // allocate the tile sums (AsyncBuffer<unsigned> sums(tiles, stream)),
  // // reduce_tiles_kernel, scan the sums in place by calling scan_recursive,
  // // then scan_tiles_kernel with prefixes = the scanned sums.
  // scan_tiles_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(in, n, out, vector_ok,
  //                                                                          nullptr);
  // CUDALAB_CHECK_LAUNCH();
  // END SOLUTION
}

}  // namespace

void exclusive_scan_reduce_then_scan(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  detail::check_scan_arguments("exclusive_scan_reduce_then_scan", in, n, out);
  if (n == 0) return;
  scan_recursive(in, n, out, stream);
}

}  // namespace cudalab::scan
