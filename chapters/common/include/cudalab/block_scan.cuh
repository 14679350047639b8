/// @file block_scan.cuh
/// @brief Exercise 1.7's scans as device code: the warp's inclusive scan and
///        the block's exclusive scan of a tile of 16-byte vectors, from a
///        prefix that a callback of the caller supplies.
///
/// This is given code: the course's reference solution of exercise 1.7's
/// warp_inclusive_scan and of its tile scan (scan_tiles_kernel), with the
/// tile's prefix asked of a callback instead of read from the scanned tile
/// sums. Exercise 1.8 scans its tiles with block_exclusive_scan, its callback
/// publishing the tile's aggregate and looking back for the prefix (as CUB's
/// single-pass scan hands its look-back to `BlockScan`), and exercise 4.6
/// scans its vectors' counts with warp_inclusive_scan. Exercise 1.7 asks for
/// this code in its own file, so the grader refuses its including this header.
///
/// Everything here is device code that the including translation unit
/// inlines (no relocatable device code, no link step): a call costs what
/// the same code written in the kernel's own file would.
///
/// Source: Merrill and Grimshaw, "Parallel Scan for Stream Architectures",
/// Technical Report CS2009-14, University of Virginia, 2009 (the tile scan of
/// reduce-then-scan); CUB's `BlockScan::ExclusiveSum` with a block prefix
/// callback, which the first warp calls with the block's aggregate; the lesson
/// of exercise 1.7 (chapters/01-reduce-scan-histogram/lesson/scan.md).
#pragma once

#include <cuda_runtime.h>

#include "cudalab/warp.cuh"

namespace cudalab::scan::device {

/// @brief Inclusive scan of `x` over the 32 lanes of a warp (Hillis-Steele
///        with shuffles): lane l gets x of lanes 0 to l, added modulo 2^32.
/// @pre Called by all 32 lanes of a warp together (full mask).
/// Five `__shfl_up_sync` steps, no shared memory, no barrier.
__device__ __forceinline__ unsigned warp_inclusive_scan(unsigned x) {
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned d = 1; d < 32; d *= 2) {
    const unsigned y = __shfl_up_sync(kFullMask, x, d);
    if (lane >= d) x += y;
  }
  return x;
}

/// @brief The exclusive scan (sums modulo 2^32) of a block's tile of
///        4 kThreads kVecs unsigned values, in place, each element's
///        prefix starting from the tile's prefix that `prefix_op` returns.
///
/// The layout is that of chapter 1's block_load_store.cuh: vector k of
/// thread t holds elements 4 (k kThreads + t) to 4 (k kThreads + t) + 3 of
/// the tile, so the scan's order is (vector k, warp, lane, component). Each
/// thread's vector sums are scanned across its warp, and lane 31 writes each
/// (vector k, warp) group's total to s_totals[k kWarps + warp]; after a
/// barrier, warp 0 scans the 32 totals, calls `prefix_op` with the tile's
/// aggregate and writes each group's exclusive prefix, from the tile's
/// prefix, to s_prefix; after a second barrier every thread turns its
/// vectors into the exclusive prefixes of its elements.
///
/// @tparam kThreads  threads of the block (blockDim.x), a multiple of 32 with
///                   (kThreads / 32) kVecs == 32: one group total per lane of warp 0
/// @tparam kVecs     16-byte vectors per thread
/// @tparam PrefixOp  callable as `unsigned prefix_op(unsigned aggregate)`
/// @param v          this thread's kVecs vectors: on entry its values, on
///                   return the exclusive prefixes of its elements (the tile's
///                   prefix plus the sum of every element before it in the tile)
/// @param lane       this thread's lane_id()
/// @param warp       this thread's warp_id() (the kernel reads both once, at its start)
/// @param s_totals   32 words of the block's shared memory: the groups' totals
/// @param s_prefix   32 words of the block's shared memory: the groups' prefixes
/// @param prefix_op  the tile's prefix: called once by each of the 32 lanes of
///                   warp 0, together (it may use warp collectives with the full
///                   mask), with the tile's aggregate (the sum of its values);
///                   must return the same prefix in every lane (1.7's tile sums'
///                   scan, 1.8's look-back)
/// @pre Called by every thread of a block of kThreads threads (it holds two
///      __syncthreads()); s_totals and s_prefix are not in use elsewhere meanwhile.
/// Steps: kVecs + 1 warp scans (5 shuffles each) and one shuffle, 32 shared
/// words written and read twice, two barriers, and prefix_op.
template <int kThreads, int kVecs, class PrefixOp>
__device__ __forceinline__ void block_exclusive_scan(uint4 (&v)[kVecs], unsigned lane, unsigned warp,
                                                     unsigned (&s_totals)[32], unsigned (&s_prefix)[32],
                                                     PrefixOp prefix_op) {
  constexpr int kWarps = kThreads / 32;
  static_assert(kThreads % 32 == 0 && kVecs * kWarps == 32,
                "the (vector, warp) totals of a tile fill exactly one warp");
  unsigned excl[kVecs];  // the sum of the warp's lower lanes' vector k
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const unsigned s = v[k].x + v[k].y + v[k].z + v[k].w;
    const unsigned inc = warp_inclusive_scan(s);
    excl[k] = inc - s;
    if (lane == 31) s_totals[k * kWarps + warp] = inc;
  }
  __syncthreads();
  if (warp == 0) {
    const unsigned total = s_totals[lane];
    const unsigned inc = warp_inclusive_scan(total);
    const unsigned tile_prefix = prefix_op(__shfl_sync(kFullMask, inc, 31));
    s_prefix[lane] = tile_prefix + inc - total;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const unsigned p0 = s_prefix[k * kWarps + warp] + excl[k];
    const unsigned p1 = p0 + v[k].x;
    const unsigned p2 = p1 + v[k].y;
    const unsigned p3 = p2 + v[k].z;
    v[k] = make_uint4(p0, p1, p2, p3);
  }
}

}  // namespace cudalab::scan::device
