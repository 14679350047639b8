/// @file filter.cuh
/// @brief Chapter 4, exercises 4.1 to 4.7: filtering (stream compaction)
///        with a shared output index. Copy the elements of an array that
///        satisfy a predicate to a dense output; the threads that find an
///        element reserve room for it with atomics on one output counter.
///
/// **Common contract of the filters 4.1 to 4.6** (`copy_if_*`):
/// - **What they compute.** The elements `in[i]`, 0 ≤ i < n, with
///   `pred(in[i])` true (the *selected* elements), copied to
///   `out[0 .. min(selected, capacity))`. 4.1, 4.2, 4.4 and 4.5 write them in
///   an unspecified order (each selected element exactly once); 4.3 keeps the
///   input order within each tile of copy_if_block_scan_tile elements; 4.6 is
///   *stable*: the output is in input order, exactly `std::copy_if`.
/// - **Element types and predicates.** T is `int` (int32) or `long long`
///   (int64); the predicate is a functor taken by value, one of LessThan,
///   IsEven and InRange (the solutions are compiled apart from their callers
///   and instantiate exactly these six combinations; see
///   CUDALAB_FILTER_INSTANTIATE).
/// - **The count.** `*count` (a device pointer to one `unsigned long long`)
///   receives the number of selected elements. The function sets it itself
///   (it need not be zeroed before the call) and, for 4.1 to 4.5, uses it as
///   the shared output index while the kernel runs.
/// - **A buffer too small.** The caller passes the room in `out` as
///   `capacity`. When more than `capacity` elements are selected, the call
///   writes `out[0 .. capacity)` with selected elements (for 4.6: the first
///   `capacity` selected elements in input order; for the others: which ones
///   is unspecified), writes **nothing** at or past `out + capacity`, and
///   still sets `*count` to the full number of selected elements, the
///   capacity the caller would have needed. The call does not throw for
///   this (it is asynchronous and cannot know the count before the kernel
///   has run): the caller compares `*count` with `capacity`. `capacity` 0
///   with a null `out` counts without copying.
/// - **Sizes.** 0 ≤ n ≤ max_elements. n = 0 launches no kernel and sets
///   `*count` to 0.
/// - **Memory.** `in`, `out` and `count` must not overlap. Any pointer
///   aligned to its type works; 16-byte aligned pointers (what cudaMalloc
///   returns) take the vectorized loads of 4.6.
/// - **Asynchronous.** Enqueued on `stream`; synchronize before reading
///   `*count` or `out` on the host.
///
/// Common errors (checked before any CUDA call; nothing is launched and
/// nothing written then):
/// @throws std::invalid_argument when `in` is null and n > 0, when `out` is
///         null and capacity > 0, when `count` is null, or when
///         n > max_elements.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
///
/// **Exercise 4.7** (retrieve_all) is the same compaction over the slots of
/// an open-addressing hash table; see Slot, SubTable and retrieve_all.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "cudalab/args.hpp"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"

/// @brief Filtering with atomics (chapter 4, exercises 4.1 to 4.7).
namespace cudalab::filter {

/// @brief The largest n every filter accepts: 2^32 − 1 elements (so that
///        tile ids and every count fit in 32 bits inside the kernels; the
///        count the caller reads is 64-bit).
inline constexpr std::size_t max_elements = std::numeric_limits<std::uint32_t>::max();

// ----------------------------------------------------------------------------- predicates

/// @brief Predicate: `x < threshold`.
/// @tparam T int or long long
template <class T>
struct LessThan {
  T threshold;  ///< elements strictly below it are selected
  /// @return whether `x` is selected.
  __host__ __device__ bool operator()(T x) const { return x < threshold; }
};

/// @brief Predicate: `x` is even (negative numbers included: −4 is even,
///        −3 is not).
struct IsEven {
  /// @return whether `x` is selected.
  /// @tparam T int or long long
  template <class T>
  __host__ __device__ bool operator()(T x) const {
    return (x & T{1}) == T{0};
  }
};

/// @brief Predicate: `lo <= x < hi` (the half-open range).
/// @tparam T int or long long
template <class T>
struct InRange {
  T lo;  ///< smallest selected value
  T hi;  ///< first value above the range
  /// @return whether `x` is selected.
  __host__ __device__ bool operator()(T x) const { return lo <= x && x < hi; }
};

// ----------------------------------------------------------------------------- 4.1 to 4.6

/// @brief Exercise 4.1: one thread per element; a thread whose element is
///        selected reserves its output slot with one `atomicAdd(count, 1)`.
///
/// Output order unspecified. See the file description for the contract.
/// @tparam T    int or long long
/// @tparam Pred LessThan<T>, IsEven or InRange<T>
/// @param in       device pointer to n elements
/// @param n        element count, 0 ≤ n ≤ max_elements
/// @param pred     the predicate, by value
/// @param out      device pointer to `capacity` elements
/// @param capacity room in `out`, in elements
/// @param count    device pointer: receives the number of selected elements
/// @param stream   the stream to run on; asynchronous
/// @throws std::invalid_argument, cudalab::CudaError as in the file description.
/// Work O(n); one atomic per selected element in the source. nvcc 13
/// aggregates an `atomicAdd` of a constant to one address per warp by itself
/// (see the lesson), so the machine code has one atomic per warp instruction.
/// Source: the CUDA C++ Programming Guide, "Atomic Functions".
template <class T, class Pred>
void copy_if_global_atomic(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                           unsigned long long* count, cudaStream_t stream = nullptr);

/// @brief Exercise 4.2: each block counts its selected elements with an
///        `atomicAdd` on a shared-memory counter (which also gives every
///        element its place within the block), then one thread reserves the
///        block's run of the output with one global `atomicAdd`.
///
/// Output order unspecified. Same parameters and errors as copy_if_global_atomic.
/// @tparam T    int or long long
/// @tparam Pred LessThan<T>, IsEven or InRange<T>
/// @param in       device pointer to n elements
/// @param n        element count, 0 ≤ n ≤ max_elements
/// @param pred     the predicate, by value
/// @param out      device pointer to `capacity` elements
/// @param capacity room in `out`, in elements
/// @param count    device pointer: receives the number of selected elements
/// @param stream   the stream to run on; asynchronous
/// Work O(n); one global atomic per block of 2048 elements, one shared
/// atomic per selected element. Source: the privatization pattern of
/// D. B. Kirk and W. W. Hwu, *Programming Massively Parallel Processors*,
/// chapter "Parallel histogram".
template <class T, class Pred>
void copy_if_shared_atomic(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                           unsigned long long* count, cudaStream_t stream = nullptr);

/// @brief The tile of copy_if_block_scan: the order promise holds within
///        each run of this many input elements (in[t · 2048 .. (t+1) · 2048)).
inline constexpr std::size_t copy_if_block_scan_tile = 2048;

/// @brief Exercise 4.3: each block scans the selection flags of its tile
///        with `cub::BlockScan` (so every selected element knows how many
///        selected elements precede it in the tile), reserves the tile's run
///        of the output with one global `atomicAdd`, and writes the selected
///        elements there in input order.
///
/// Order: the selected elements of each tile of copy_if_block_scan_tile
/// input elements are contiguous in `out` and in input order; the tiles'
/// runs are in an unspecified order. Same parameters and errors as
/// copy_if_global_atomic.
/// @tparam T    int or long long
/// @tparam Pred LessThan<T>, IsEven or InRange<T>
/// @param in       device pointer to n elements
/// @param n        element count, 0 ≤ n ≤ max_elements
/// @param pred     the predicate, by value
/// @param out      device pointer to `capacity` elements
/// @param capacity room in `out`, in elements
/// @param count    device pointer: receives the number of selected elements
/// @param stream   the stream to run on; asynchronous
/// Work O(n); steps O(log tile) per tile; one atomic per tile.
/// Source: CUB's `cub::BlockScan` (D. Merrill, NVIDIA CCCL).
template <class T, class Pred>
void copy_if_block_scan(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                        unsigned long long* count, cudaStream_t stream = nullptr);

/// @brief Exercise 4.4: warp-aggregated atomics. Each warp takes a chunk of
///        256 consecutive elements (8 rounds of 32); per round a ballot
///        (`__ballot_sync`) tells which lanes hold a selected element and
///        `__popc` of the mask of the lower lanes gives each its rank; one
///        lane reserves the warp's total for the chunk with one `atomicAdd`
///        and broadcasts the base with `__shfl_sync`.
///
/// Output order unspecified. Same parameters and errors as copy_if_global_atomic.
/// @tparam T    int or long long
/// @tparam Pred LessThan<T>, IsEven or InRange<T>
/// @param in       device pointer to n elements
/// @param n        element count, 0 ≤ n ≤ max_elements
/// @param pred     the predicate, by value
/// @param out      device pointer to `capacity` elements
/// @param capacity room in `out`, in elements
/// @param count    device pointer: receives the number of selected elements
/// @param stream   the stream to run on; asynchronous
/// Work O(n); one atomic per warp per 256 elements.
/// Source: A. Adinets, "CUDA Pro Tip: Optimized Filtering with
/// Warp-Aggregated Atomics", NVIDIA Developer Blog, 2014.
template <class T, class Pred>
void copy_if_warp_aggregated(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                             unsigned long long* count, cudaStream_t stream = nullptr);

/// @brief Exercise 4.5: the warp aggregation of 4.4 in cooperative groups.
///        `cooperative_groups::tiled_partition<32>` splits the block into
///        warps, each of which takes a chunk of 256 elements; each lane
///        counts its selected elements of the chunk; the lanes that have any
///        form `cooperative_groups::coalesced_threads()`, scan and reduce
///        their counts over that group, and its first thread reserves the
///        total with one `atomicAdd`.
///
/// Output order unspecified. Same parameters and errors as copy_if_global_atomic.
/// @tparam T    int or long long
/// @tparam Pred LessThan<T>, IsEven or InRange<T>
/// @param in       device pointer to n elements
/// @param n        element count, 0 ≤ n ≤ max_elements
/// @param pred     the predicate, by value
/// @param out      device pointer to `capacity` elements
/// @param capacity room in `out`, in elements
/// @param count    device pointer: receives the number of selected elements
/// @param stream   the stream to run on; asynchronous
/// Work O(n); at most one atomic per warp per 256 elements.
/// Source: the CUDA C++ Programming Guide, "Cooperative Groups"; Adinets
/// 2014 (as copy_if_warp_aggregated), section "Warp-aggregated atomics
/// with cooperative groups" of its 2017 update.
template <class T, class Pred>
void copy_if_cooperative_groups(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                                unsigned long long* count, cudaStream_t stream = nullptr);

/// @brief Exercise 4.6: the stable filter in one pass. Tiles are taken in
///        the order the blocks start (a global tile counter); each tile
///        counts its selected elements, publishes the count in a 64-bit
///        status word (flag and count together) and looks back over its
///        predecessors' words, 32 at a time, for the number of selected
///        elements before it; then it writes its selected elements at that
///        offset, in input order.
///
/// The output is `std::copy_if(in, in + n, out, pred)` (truncated to
/// `capacity`). Same parameters and errors as copy_if_global_atomic.
/// Scratch: one 8-byte status word per tile of 4096 (int32) or 2048 (int64)
/// elements, allocated in stream order (cudaMallocAsync).
/// @tparam T    int or long long
/// @tparam Pred LessThan<T>, IsEven or InRange<T>
/// @param in       device pointer to n elements
/// @param n        element count, 0 ≤ n ≤ max_elements
/// @param pred     the predicate, by value
/// @param out      device pointer to `capacity` elements
/// @param capacity room in `out`, in elements
/// @param count    device pointer: receives the number of selected elements
/// @param stream   the stream to run on; asynchronous
/// Work O(n); one pass over the input; the look-back waits O(1) tiles on
/// average. Source: D. Merrill and M. Garland, "Single-pass Parallel Prefix
/// Scan with Decoupled Look-back", NVIDIA Technical Report NVR-2016-002,
/// 2016 (the stream compaction of CUB's `DeviceSelect` is built on it).
template <class T, class Pred>
void copy_if_decoupled_lookback(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                                unsigned long long* count, cudaStream_t stream = nullptr);

// ----------------------------------------------------------------------------- 4.7

/// @brief One slot of an open-addressing hash table: an int64 key and its
///        int64 value, 16 bytes, 16-byte aligned (one vector load per slot),
///        stored as an array of structures as cuCollections' `static_map`
///        and WarpCore store them.
///
/// A slot is *live* when its key is neither kEmptyKey nor kErasedKey; the
/// value of a slot that is not live is meaningless.
struct alignas(16) Slot {
  long long key;    ///< the key, or a sentinel
  long long value;  ///< the value stored with the key
};

/// @brief The key sentinel of a slot that was never used: −2^63
///        (`LLONG_MIN`). A table starts with every key set to it. It is not
///        a valid user key.
inline constexpr long long kEmptyKey = LLONG_MIN;

/// @brief The key sentinel of a slot whose pair was erased (a "tombstone":
///        probe sequences continue past it, insertions may reuse it):
///        −2^63 + 1. It is not a valid user key.
inline constexpr long long kErasedKey = LLONG_MIN + 1;

/// @brief Whether a slot with this key holds a pair: neither sentinel.
__host__ __device__ inline bool is_live(long long key) { return key != kEmptyKey && key != kErasedKey; }

/// @brief A view of one sub-table: `capacity` slots in device memory. A
///        table may consist of several sub-tables of different capacities
///        (as cuCollections' `dynamic_map` grows by adding sub-maps).
struct SubTable {
  const Slot* slots;     ///< device pointer to `capacity` slots (may be null when capacity is 0)
  std::size_t capacity;  ///< number of slots
};

/// @brief The most sub-tables one retrieve_all call accepts.
inline constexpr std::size_t max_sub_tables = 16;

/// @brief The most slots (summed over the sub-tables) one retrieve_all call
///        accepts: 2^40.
inline constexpr std::size_t max_slots = std::size_t{1} << 40;

/// @brief Exercise 4.7: `retrieve_all` of an open-addressing hash table:
///        copies the key and the value of every live slot (key neither
///        kEmptyKey nor kErasedKey) of every sub-table to `keys_out` and
///        `values_out`, dense, with warp-aggregated atomics on one output
///        counter.
///
/// Output i is the pair (`keys_out[i]`, `values_out[i]`) of one live slot;
/// every live slot appears exactly once; the order is unspecified. The
/// count and the too-small buffer behave as in the file description:
/// `*count` receives the number of live slots, at most `capacity` pairs are
/// written and nothing at or past `keys_out + capacity` or
/// `values_out + capacity`.
/// @param tables     **host** pointer to `num_tables` sub-table views (their
///                   `slots` are device pointers); read during the call only
/// @param num_tables number of sub-tables, 0 ≤ num_tables ≤ max_sub_tables
/// @param keys_out   device pointer to `capacity` keys
/// @param values_out device pointer to `capacity` values
/// @param capacity   room in `keys_out` and in `values_out`, in pairs
/// @param count      device pointer: receives the number of live slots
/// @param stream     the stream to run on; asynchronous
/// @throws std::invalid_argument when `tables` is null with num_tables > 0,
///         num_tables > max_sub_tables, a sub-table's `slots` is null with
///         capacity > 0, the capacities add up to more than max_slots,
///         `keys_out` or `values_out` is null with capacity > 0, or `count`
///         is null (before any CUDA call).
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(total slots); one atomic per warp per 256 slots; reads 16 bytes
/// per slot, writes 16 bytes per live slot. Source: `retrieve_all` of
/// cuCollections (`cuco::static_map`, NVIDIA) and of WarpCore (D. Jünger et
/// al., HiPC 2020).
void retrieve_all(const SubTable* tables, std::size_t num_tables, long long* keys_out, long long* values_out,
                  std::size_t capacity, unsigned long long* count, cudaStream_t stream = nullptr);

namespace detail {
/// @brief The argument checks of every copy_if_* launcher.
/// @throws std::invalid_argument as in the file description.
template <class T>
void check_filter_arguments(const char* function, const T* in, std::size_t n, const T* out,
                            std::size_t capacity, const unsigned long long* count) {
  require_pointer(function, "in", in, n);
  require_pointer(function, "out", out, capacity);
  require_pointer(function, "count", count, 1);
  require_count_at_most(function, n, max_elements);
}

/// @brief The start of the copy_if_* launchers 4.1 to 4.5: checks the
///        arguments (check_filter_arguments) and sets `*count` to 0 on
///        `stream` (the call overwrites it, also for n = 0).
/// @tparam T int or long long
/// @param function the public function being called, for the messages
/// @param in       device pointer to n elements
/// @param n        element count, 0 ≤ n ≤ max_elements
/// @param out      device pointer to `capacity` elements
/// @param capacity room in `out`, in elements
/// @param count    device pointer to the counter, set to 0 here
/// @param stream   the stream to run on; asynchronous
/// @return whether there is a kernel to launch: false for n = 0, where the
///         launcher is done (`*count` is 0).
/// @throws std::invalid_argument as in the file description (before any CUDA call).
/// @throws cudalab::CudaError when the memset fails.
/// O(1) on the host; one memset of 8 bytes enqueued.
template <class T>
bool start_copy_if(const char* function, const T* in, std::size_t n, const T* out, std::size_t capacity,
                   unsigned long long* count, cudaStream_t stream) {
  check_filter_arguments(function, in, n, out, capacity, count);
  CUDALAB_CHECK(cudaMemsetAsync(count, 0, sizeof(unsigned long long), stream));
  return n != 0;
}
}  // namespace detail

}  // namespace cudalab::filter

/// @brief Explicitly instantiates the filter template `function` (a name in
///        cudalab::filter) for the six element/predicate combinations the
///        course uses: int and long long, each with LessThan, IsEven and
///        InRange. Every solution (and starter) file of 4.1 to 4.6 ends with
///        one use of it, at global scope.
#define CUDALAB_FILTER_INSTANTIATE(function)                                                              \
  template void cudalab::filter::function<int, cudalab::filter::LessThan<int>>(                          \
      const int*, std::size_t, cudalab::filter::LessThan<int>, int*, std::size_t, unsigned long long*,  \
      cudaStream_t);                                                                                     \
  template void cudalab::filter::function<int, cudalab::filter::IsEven>(                                 \
      const int*, std::size_t, cudalab::filter::IsEven, int*, std::size_t, unsigned long long*,         \
      cudaStream_t);                                                                                     \
  template void cudalab::filter::function<int, cudalab::filter::InRange<int>>(                           \
      const int*, std::size_t, cudalab::filter::InRange<int>, int*, std::size_t, unsigned long long*,   \
      cudaStream_t);                                                                                     \
  template void cudalab::filter::function<long long, cudalab::filter::LessThan<long long>>(              \
      const long long*, std::size_t, cudalab::filter::LessThan<long long>, long long*, std::size_t,      \
      unsigned long long*, cudaStream_t);                                                                \
  template void cudalab::filter::function<long long, cudalab::filter::IsEven>(                           \
      const long long*, std::size_t, cudalab::filter::IsEven, long long*, std::size_t,                   \
      unsigned long long*, cudaStream_t);                                                                \
  template void cudalab::filter::function<long long, cudalab::filter::InRange<long long>>(               \
      const long long*, std::size_t, cudalab::filter::InRange<long long>, long long*, std::size_t,       \
      unsigned long long*, cudaStream_t)
