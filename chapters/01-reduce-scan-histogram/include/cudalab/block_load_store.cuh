/// @file block_load_store.cuh
/// @brief A block's load and store of one tile of int32 in 16-byte vectors,
///        striped across the block, for the tile scans of exercises 1.7 and
///        1.8.
///
/// The layout: vector k of thread t holds elements 4 (k kThreads + t) to
/// 4 (k kThreads + t) + 3 of the tile, so every warp-wide access is 512
/// contiguous bytes, and the order of the elements within the tile is
/// (k, warp, lane, component). A tile is 4 kThreads kVecs elements. Whole
/// tiles of 16-byte aligned arrays move in vectors; the last tile, and every
/// tile of a misaligned array, element by element.
///
/// This is given code: the scan between the load and the store is exercise
/// 1.7's (given to 1.8 as block_exclusive_scan, in block_scan.cuh). Source: the striped arrangement of CUB's `BlockLoad` and
/// `BlockStore` (`cub::LoadDirectStriped`), in 16-byte vectors.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

/// @brief Device code the chapter's exercises are given: the tile loads and
///        stores (block_load_store.cuh), and 1.7's warp scan and tile scan
///        (chapters/common's block_scan.cuh).
namespace cudalab::scan::device {

/// @brief How the whole-tile path reaches global memory.
enum class Access {
  kCached,     ///< plain 16-byte loads and stores
  kStreaming,  ///< evict-first cache hints (`__ldcs`, `__stcs`): each byte is touched once, so
               ///< it should not push other data (1.8's status words) out of L2
};

/// @brief Loads tile [base, base + 4 kThreads kVecs) of `in` into `v`, in the
///        striped layout of the file comment; elements at or past n read as 0.
/// @tparam kThreads  threads of the block (blockDim.x)
/// @tparam kAccess   the whole tile's cache hint
/// @tparam kVecs     16-byte vectors per thread
/// @param in         the input, n int32 in global memory
/// @param base       the tile's first element
/// @param n          the input's length
/// @param vector_ok  `in` is 16-byte aligned
/// @param v          this thread's kVecs vectors, each element as unsigned
/// @pre Called by every thread of a block of kThreads threads.
/// A whole tile: kVecs 16-byte loads per thread; otherwise 4 kVecs guarded
/// 4-byte loads.
template <int kThreads, Access kAccess, int kVecs>
__device__ __forceinline__ void load_tile(const int* in, std::size_t base, std::size_t n, bool vector_ok,
                                          uint4 (&v)[kVecs]) {
  constexpr int kTile = kThreads * kVecs * 4;
  if (vector_ok && base + kTile <= n) {
    const uint4* src = reinterpret_cast<const uint4*>(in + base);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if constexpr (kAccess == Access::kStreaming) v[k] = __ldcs(src + k * kThreads + threadIdx.x);
      else v[k] = src[k * kThreads + threadIdx.x];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const std::size_t i = base + 4 * (static_cast<std::size_t>(k) * kThreads + threadIdx.x);
      v[k].x = i + 0 < n ? static_cast<unsigned>(in[i + 0]) : 0u;
      v[k].y = i + 1 < n ? static_cast<unsigned>(in[i + 1]) : 0u;
      v[k].z = i + 2 < n ? static_cast<unsigned>(in[i + 2]) : 0u;
      v[k].w = i + 3 < n ? static_cast<unsigned>(in[i + 3]) : 0u;
    }
  }
}

/// @brief Stores `v` to tile [base, base + 4 kThreads kVecs) of `out`, in the
///        layout of load_tile; nothing at or past n.
/// @tparam kThreads  threads of the block (blockDim.x)
/// @tparam kAccess   the whole tile's cache hint
/// @tparam kVecs     16-byte vectors per thread
/// @param out        the output, n int32 in global memory
/// @param base       the tile's first element
/// @param n          the output's length
/// @param vector_ok  `out` is 16-byte aligned
/// @param v          this thread's kVecs vectors, each element as unsigned
/// @pre Called by every thread of a block of kThreads threads.
/// A whole tile: kVecs 16-byte stores per thread; otherwise 4 kVecs guarded
/// 4-byte stores.
template <int kThreads, Access kAccess, int kVecs>
__device__ __forceinline__ void store_tile(int* out, std::size_t base, std::size_t n, bool vector_ok,
                                           const uint4 (&v)[kVecs]) {
  constexpr int kTile = kThreads * kVecs * 4;
  if (vector_ok && base + kTile <= n) {
    uint4* dst = reinterpret_cast<uint4*>(out + base);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      if constexpr (kAccess == Access::kStreaming) __stcs(dst + k * kThreads + threadIdx.x, v[k]);
      else dst[k * kThreads + threadIdx.x] = v[k];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const std::size_t i = base + 4 * (static_cast<std::size_t>(k) * kThreads + threadIdx.x);
      if (i + 0 < n) out[i + 0] = static_cast<int>(v[k].x);
      if (i + 1 < n) out[i + 1] = static_cast<int>(v[k].y);
      if (i + 2 < n) out[i + 2] = static_cast<int>(v[k].z);
      if (i + 3 < n) out[i + 3] = static_cast<int>(v[k].w);
    }
  }
}

}  // namespace cudalab::scan::device
