/// @file scan.cuh
/// @brief Chapter 1, exercises 1.5 to 1.9: prefix sums (scans) of int32
///        arrays, from one block to the whole device, and segmented scans.
///
/// An **inclusive** scan writes `out[i] = in[0] + in[1] + ... + in[i]`; an
/// **exclusive** scan writes `out[i] = in[0] + ... + in[i-1]`, so `out[0] = 0`.
/// Exercises 1.5 and 1.6 scan each *tile* of the input on its own (one block
/// per tile, the building block of everything else); 1.7 and 1.8 scan the
/// whole array; 1.9 restarts the scan at every segment head.
///
/// Common contract of every function:
/// - **Element type.** int32 in, int32 out. Sums are exact modulo 2^32: they
///   wrap around in two's complement exactly as `cub::DeviceScan::ExclusiveSum`
///   on int32 does on the GPU (and as the CPU reference does). The kernels add
///   in `unsigned`, where wrap-around is defined, so there is no signed-overflow
///   undefined behaviour anywhere.
/// - **Sizes.** 0 ≤ n ≤ max_elements; n = 0 is a no-op that launches nothing
///   and writes nothing.
/// - **In place.** `out == in` is allowed (each output element is written only
///   after its tile has been read); any other overlap of `in` and `out` is not.
/// - **Alignment.** Any pointer aligned to its element type; 16-byte aligned
///   pointers (what cudaMalloc returns) take the vectorized path where there is one.
/// - **Asynchronous.** Every function enqueues its work on `stream` and
///   returns; synchronize before reading `out` on the host.
///
/// @param in     device pointer to n int32 elements
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to n int32 elements, overwritten with the scan
/// @param stream the stream to run on (default: the legacy default stream)
/// @throws std::invalid_argument when `in` or `out` is null and n > 0, when
///         n > max_elements, or when a tile size is not allowed; nothing is
///         launched and nothing is written then.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "cudalab/args.hpp"

/// @brief Scans (chapter 1, exercises 1.5 to 1.9).
namespace cudalab::scan {

/// @brief The largest n every scan accepts: 2^32 − 1 elements (tile ids and
///        tile counts then fit in 32 bits; indices are 64-bit throughout).
inline constexpr std::size_t max_elements = std::numeric_limits<std::uint32_t>::max();

/// @brief The largest tile of exercise 1.5: 1024 elements, one per thread of
///        the largest block.
inline constexpr std::size_t max_tile_hillis_steele = 1024;

/// @brief The largest tile of exercise 1.6: 2048 elements, two per thread of
///        the largest block.
inline constexpr std::size_t max_tile_blelloch = 2048;

/// @brief Exercise 1.5: inclusive scan of each tile of `tile` consecutive
///        elements (the last tile may be shorter) by the Hillis–Steele
///        algorithm, one block per tile, one element per thread, double
///        buffered in shared memory.
///
/// Tile t covers `in[t · tile, min(n, (t + 1) · tile))` and its output is the
/// inclusive scan of that tile alone: the scan restarts at every tile. With
/// `tile ≥ n` this is the single-block scan of the whole array.
/// In step d = 0, 1, ..., log2(tile) − 1 every thread i ≥ 2^d adds the value
/// 2^d places to its left, reading one buffer and writing the other.
/// Work O(n log tile) (not work-efficient: about log2(tile) times the n − 1
/// additions of the serial loop); steps O(log tile).
/// @param in     device pointer to n int32 elements
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to n int32 elements (may equal `in`)
/// @param tile   tile size: a power of two in [1, max_tile_hillis_steele]
/// @param stream the stream to run on
/// @throws std::invalid_argument as in the common contract, and when `tile`
///         is not a power of two in [1, 1024].
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Source: W. D. Hillis and G. L. Steele Jr., "Data parallel algorithms",
/// Communications of the ACM 29(12), 1986.
void inclusive_scan_hillis_steele(const int* in, std::size_t n, int* out, std::size_t tile,
                                  cudaStream_t stream = nullptr);

/// @brief Exercise 1.6: exclusive scan of each tile of `tile` consecutive
///        elements by Blelloch's work-efficient algorithm (up-sweep then
///        down-sweep), one block of tile / 2 threads per tile, two elements
///        per thread, in shared memory padded against bank conflicts.
///
/// Tile t's output is the exclusive scan of that tile alone (its first
/// element is 0). The shared array holds element i at index
/// i + (i >> 5) (GPU Gems 3's CONFLICT_FREE_OFFSET for 32 banks), so the
/// power-of-two strides of the tree do not all fall into the same bank.
/// Work O(n) (2 (tile − 1) additions per tile); steps O(log tile) (2 log2(tile)).
/// @param in     device pointer to n int32 elements
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to n int32 elements (may equal `in`)
/// @param tile   tile size: a power of two in [2, max_tile_blelloch]
/// @param stream the stream to run on
/// @throws std::invalid_argument as in the common contract, and when `tile`
///         is not a power of two in [2, 2048].
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Source: G. E. Blelloch, "Prefix sums and their applications", CMU-CS-90-190,
/// 1990; M. Harris, S. Sengupta and J. D. Owens, "Parallel Prefix Sum (Scan)
/// with CUDA", GPU Gems 3, chapter 39, 2007.
void exclusive_scan_blelloch(const int* in, std::size_t n, int* out, std::size_t tile,
                             cudaStream_t stream = nullptr);

/// @brief Exercise 1.7: exclusive scan of the whole array by
///        reduce-then-scan: (1) each block reduces a tile of 4096 elements to
///        its sum, (2) the tile sums are scanned (by the same function,
///        recursively, until one tile is left), (3) each block scans its tile
///        again, starting from the scanned sum of the tiles before it.
///
/// Reads the input twice and writes it once (3n words of traffic against the
/// 2n of a single-pass scan). Scratch memory for the tile sums (n / 4096
/// words per level, at most three levels) is allocated and freed in stream
/// order with cudaMallocAsync / cudaFreeAsync (cudalab::AsyncBuffer), so
/// the call stays asynchronous.
/// Work O(n); steps O(log n) (three kernels per level, O(log 4096) inside each).
/// See the common contract in the file description for parameters and errors.
/// Source: D. Merrill and A. Grimshaw, "Parallel Scan for Stream
/// Architectures", University of Virginia CS2009-14, 2009 (reduce-then-scan);
/// Harris, Sengupta and Owens, GPU Gems 3, chapter 39, 2007 (scan-then-propagate).
void exclusive_scan_reduce_then_scan(const int* in, std::size_t n, int* out,
                                     cudaStream_t stream = nullptr);

/// @brief Exercise 1.8: single-pass exclusive scan with decoupled look-back:
///        each block takes the next tile id from an atomic counter, scans its
///        tile of 4096 elements, publishes the tile's aggregate, finds its
///        exclusive prefix by looking back over its predecessors' status words
///        (a warp examines 32 of them at a time) and publishes its inclusive
///        prefix.
///
/// Each tile's status word packs the status (invalid, aggregate available,
/// inclusive prefix available) and the 32-bit value into one 64-bit word, so
/// a reader always sees a flag and the value written with it. Reads the input
/// once and writes the output once (2n words). Scratch memory: one 64-bit
/// status word per tile plus the tile counter, allocated in stream order
/// (cudalab::AsyncBuffer) and cleared with cudaMemsetAsync.
/// Work O(n); steps O(log 4096) per tile plus the look-back, which in practice
/// stops after a few predecessors.
/// See the common contract in the file description for parameters and errors.
/// Source: D. Merrill and M. Garland, "Single-pass Parallel Prefix Scan with
/// Decoupled Look-back", NVIDIA Technical Report NVR-2016-002, 2016; CUB's
/// `cub::DeviceScan` (NVIDIA CCCL) is the baseline it races.
void exclusive_scan_decoupled_lookback(const int* in, std::size_t n, int* out,
                                       cudaStream_t stream = nullptr);

/// @brief The tile of exclusive_scan_decoupled_lookback: 4096 elements, one block each.
inline constexpr std::size_t decoupled_lookback_tile = 4096;

/// @brief The scratch exclusive_scan_decoupled_lookback_with_scratch needs for n elements,
///        in 64-bit words: the tile counter, then one status word per tile.
/// @param n element count
/// @return 1 + ⌈n / decoupled_lookback_tile⌉
constexpr std::size_t decoupled_lookback_scratch_words(std::size_t n) {
  return 1 + (n + decoupled_lookback_tile - 1) / decoupled_lookback_tile;
}

/// @brief Exercise 1.8 on the caller's scratch memory:
///        exclusive_scan_decoupled_lookback, whose scratch is left as the kernel
///        left it, so a test can check how the tiles were taken.
///
/// The scan is that of exclusive_scan_decoupled_lookback (which calls this
/// function with an AsyncBuffer). The function clears the scratch in stream
/// order before the kernel starts. Afterwards, the low 32 bits of word 0 hold
/// the tile counter: every block took its tile id from it with one
/// `atomicAdd`, so it equals the number of tiles, ⌈n / 4096⌉. Words 1 to
/// ⌈n / 4096⌉ hold the tiles' status words. Nothing past them is touched.
/// See the common contract in the file description for the other parameters and errors.
/// @param in      device pointer to n int32 elements
/// @param n       element count, 0 ≤ n ≤ max_elements
/// @param out     device pointer to n int32 elements (may equal `in`)
/// @param scratch device pointer to decoupled_lookback_scratch_words(n) 64-bit words
/// @param stream  the stream to run on
/// @throws std::invalid_argument when `in`, `out` or `scratch` is null and n > 0,
///         or when n > max_elements; nothing is launched then.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
void exclusive_scan_decoupled_lookback_with_scratch(const int* in, std::size_t n, int* out,
                                                    unsigned long long* scratch,
                                                    cudaStream_t stream = nullptr);

/// @brief Addition modulo 2^32, identity 0: the operator of a segmented prefix sum.
struct Plus {
  /// The identity: x + 0 = x.
  static constexpr int identity = 0;
  /// @return a + b, wrapping around modulo 2^32 (computed in unsigned).
  __host__ __device__ constexpr int operator()(int a, int b) const {
    return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
  }
};

/// @brief The smaller of two values, identity INT_MAX: a segmented running minimum.
struct Minimum {
  /// The identity: min(x, INT_MAX) = x.
  static constexpr int identity = INT_MAX;
  /// @return min(a, b).
  __host__ __device__ constexpr int operator()(int a, int b) const { return b < a ? b : a; }
};

/// @brief The larger of two values, identity INT_MIN: a segmented running maximum.
struct Maximum {
  /// The identity: max(x, INT_MIN) = x.
  static constexpr int identity = INT_MIN;
  /// @return max(a, b).
  __host__ __device__ constexpr int operator()(int a, int b) const { return a < b ? b : a; }
};

/// @brief Exercise 1.9: segmented inclusive scan: the scan under `op`
///        restarts at every segment head.
///
/// `head_flags[i] != 0` starts a new segment at element i. Element 0 always
/// starts a segment, whether or not `head_flags[0]` is set (a flags array
/// that does not start with a head is accepted and treated so). Then
/// `out[i] = op(in[h], in[h+1], ..., in[i])` where h ≤ i is the last head at
/// or before i. For Plus the sums wrap around modulo 2^32 as in the common
/// contract. Any n: a single pass with decoupled look-back over the pairs
/// (flag, value) under Schwartz's segmented operator
/// (f1, v1) ⊕ (f2, v2) = (f1 | f2, f2 ? v2 : op(v1, v2)), which is associative
/// whenever op is. Scratch as in exclusive_scan_decoupled_lookback.
/// Work O(n); steps O(log 4096) per tile plus the look-back.
/// @param in         device pointer to n int32 elements
/// @param head_flags device pointer to n bytes, nonzero where a segment starts
/// @param n          element count, 0 ≤ n ≤ max_elements
/// @param out        device pointer to n int32 elements (may equal `in`)
/// @param op         the operator: Plus, Minimum or Maximum (one overload each)
/// @param stream     the stream to run on
/// @throws std::invalid_argument when `in`, `head_flags` or `out` is null and
///         n > 0, or when n > max_elements; nothing is launched then.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Source: S. Sengupta, M. Harris, Y. Zhang and J. D. Owens, "Scan primitives
/// for GPU computing", Graphics Hardware 2007; J. T. Schwartz, "Ultracomputers",
/// ACM TOPLAS 2(4), 1980 (the segmented operator); Merrill and Garland 2016
/// for the single pass.
void segmented_inclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Plus op, cudaStream_t stream = nullptr);
/// @copydoc segmented_inclusive_scan(const int*, const std::uint8_t*, std::size_t, int*, Plus, cudaStream_t)
void segmented_inclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Minimum op, cudaStream_t stream = nullptr);
/// @copydoc segmented_inclusive_scan(const int*, const std::uint8_t*, std::size_t, int*, Plus, cudaStream_t)
void segmented_inclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Maximum op, cudaStream_t stream = nullptr);

/// @brief Exercise 1.9: segmented exclusive scan: each segment's first output
///        is the operator's identity, then the scan under `op` of the
///        segment's elements before i.
///
/// Same segments, flags and rules as segmented_inclusive_scan: element 0
/// always starts a segment. `out[i] = Op::identity` when i starts a segment,
/// else `op(in[h], ..., in[i-1])` where h is the last head before i.
/// Work O(n); steps O(log 4096) per tile plus the look-back.
/// @param in         device pointer to n int32 elements
/// @param head_flags device pointer to n bytes, nonzero where a segment starts
/// @param n          element count, 0 ≤ n ≤ max_elements
/// @param out        device pointer to n int32 elements (may equal `in`)
/// @param op         the operator: Plus, Minimum or Maximum (one overload each)
/// @param stream     the stream to run on
/// @throws std::invalid_argument when `in`, `head_flags` or `out` is null and
///         n > 0, or when n > max_elements; nothing is launched then.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Source: Sengupta, Harris, Zhang and Owens, Graphics Hardware 2007.
void segmented_exclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Plus op, cudaStream_t stream = nullptr);
/// @copydoc segmented_exclusive_scan(const int*, const std::uint8_t*, std::size_t, int*, Plus, cudaStream_t)
void segmented_exclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Minimum op, cudaStream_t stream = nullptr);
/// @copydoc segmented_exclusive_scan(const int*, const std::uint8_t*, std::size_t, int*, Plus, cudaStream_t)
void segmented_exclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Maximum op, cudaStream_t stream = nullptr);

namespace detail {
/// @brief The argument checks every scan performs before touching the GPU.
/// @throws std::invalid_argument as described in the file's common contract.
inline void check_scan_arguments(const char* function, const void* in, std::size_t n, const void* out) {
  require_pointer(function, "in", in, n);
  require_pointer(function, "out", out, n);
  require_count_at_most(function, n, max_elements);
}

/// @brief Throws std::invalid_argument unless `tile` is a power of two in [lo, hi].
inline void check_tile(const char* function, std::size_t tile, std::size_t lo, std::size_t hi) {
  require_power_of_two_in(function, "tile", tile, lo, hi);
}

/// @brief The start of the tiled scans 1.5 and 1.6: check_scan_arguments,
///        then check_tile, and whether there is a kernel to launch.
/// @param function the public function being called, for the messages
/// @param in       device pointer to n elements
/// @param n        element count
/// @param out      device pointer to n elements
/// @param tile     elements per tile
/// @param lo       the smallest tile the function accepts (a power of two)
/// @param hi       the largest tile the function accepts (a power of two)
/// @return false for n = 0, where the scan is done (nothing to write).
/// @throws std::invalid_argument as check_scan_arguments and check_tile
///         (before any CUDA call).
/// O(1); no CUDA call.
inline bool start_tiled_scan(const char* function, const void* in, std::size_t n, const void* out,
                             std::size_t tile, std::size_t lo, std::size_t hi) {
  check_scan_arguments(function, in, n, out);
  check_tile(function, tile, lo, hi);
  return n != 0;
}

/// @brief Calls `launch(first, blocks)` once per grid of the tiled scans'
///        one-block-per-tile launches: a grid has at most 2^31 − 1 blocks,
///        so tiny tiles of a huge array take several launches. `first` is
///        the grid's first tile (0, 2^31 − 1, ...), `blocks` its number of
///        tiles, min(2^31 − 1, tiles − first).
/// @tparam Launch callable as `launch(std::size_t first, unsigned blocks)`
/// @param tiles  number of tiles; 0 calls nothing
/// @param launch launches the kernel for one grid (and checks the launch)
/// @throws whatever `launch` throws (cudalab::CudaError for a failed launch).
/// ⌈tiles / (2^31 − 1)⌉ calls.
template <class Launch>
void for_each_grid(std::size_t tiles, Launch&& launch) {
  constexpr std::size_t kMaxGrid = 0x7fffffff;
  for (std::size_t first = 0; first < tiles; first += kMaxGrid)
    launch(first, static_cast<unsigned>(std::min(kMaxGrid, tiles - first)));
}
}  // namespace detail

}  // namespace cudalab::scan
