/// @file sort.cuh
/// @brief Chapter 2, exercises 2.1 to 2.7: sorting int32 keys on the GPU,
///        from sorting networks in one block to a stable merge sort of any n.
///
/// Three families of functions:
/// - **Segment sorts** (2.1, 2.2) sort each segment of `segment` consecutive
///   keys on its own, one block per segment (a batched, segmented sort; the
///   last segment may be shorter).
/// - **Whole-array sorts** (2.3, 2.7) sort all n keys.
/// - **Merges of runs** (2.4, 2.5, 2.6): the input consists of sorted runs of
///   `run` keys (run r is `in[r · run, min(n, (r + 1) · run))`, the last one
///   may be shorter); runs 2p and 2p + 1 are merged into the sorted run p of
///   `2 · run` keys of the output. This is one pass of a bottom-up merge sort.
///   The merges are **stable**: of two equal keys, the one from the first run
///   goes first, and within a run the order is kept. The pairs overloads move
///   an int32 value with every key, so the order of equal keys can be seen.
///
/// Common contract of every function:
/// - **Element types.** int32 keys (and int32 values), ascending order
///   (`operator<` on int; INT_MIN first, INT_MAX last).
/// - **Sizes.** 0 ≤ n ≤ max_elements (bitonic_sort_global: max_elements_bitonic);
///   n = 0 is a no-op that launches nothing and writes nothing.
/// - **Aliasing.** Where a function's description says "may equal `in`", the
///   output may be the input (sorted in place); otherwise `out == in` throws.
///   Any other overlap of input and output is not allowed (and not detected).
/// - **Asynchronous.** Every function enqueues its work on `stream` and
///   returns; scratch memory (2.3, 2.6, 2.7) is allocated and freed in stream
///   order (cudalab::AsyncBuffer). Synchronize before reading the output.
///
/// @param in     device pointer to n int32 keys
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to n int32 keys, overwritten with the result
/// @param stream the stream to run on (default: the legacy default stream)
/// @throws std::invalid_argument when a pointer is null and n > 0, when n is
///         above the supported maximum (the message names it), when a segment
///         or run length is not allowed, or when `out == in` where that is not
///         supported; nothing is launched and nothing is written then. The
///         segment and run checks come first, so a bad one throws even for n = 0.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cudalab/args.hpp"

/// @brief Sorting (chapter 2, exercises 2.1 to 2.7).
namespace cudalab::sort {

/// @brief The largest n every function but bitonic_sort_global accepts:
///        2^31 − 1 keys (every position inside a run or a pair of runs fits
///        in an int; global offsets are 64-bit).
inline constexpr std::size_t max_elements = (std::size_t{1} << 31) - 1;

/// @brief The largest n of bitonic_sort_global: 2^30 keys, since it pads the
///        array to the next power of two (at most 2^30 keys, 4 GiB of scratch).
inline constexpr std::size_t max_elements_bitonic = std::size_t{1} << 30;

/// @brief The largest segment of exercise 2.1: 1024 keys (512 threads, two
///        keys each).
inline constexpr std::size_t max_segment_odd_even = 1024;

/// @brief The largest segment of exercise 2.2: 2048 keys (1024 threads, one
///        comparator each per step).
inline constexpr std::size_t max_segment_bitonic = 2048;

/// @brief Exercise 2.1: odd-even transposition sort of each segment of
///        `segment` keys, one block per segment, in shared memory.
///
/// Segment s is `in[s · segment, min(n, (s + 1) · segment))`; the block
/// loads it into shared memory (padding a short last segment with INT_MAX),
/// runs `segment` phases that alternately compare-exchange the pairs
/// (0,1), (2,3), ... and (1,2), (3,4), ..., with a barrier after each phase,
/// and stores the sorted segment. `segment` phases always suffice (Knuth,
/// TAOCP vol. 3, §5.3.4, exercise 37; the lesson sketches the proof by the
/// 0-1 principle).
/// Work O(n · segment); steps O(segment). Not stable in general (a sorting
/// network), which no test can see with keys alone.
/// @param in      device pointer to n int32 keys
/// @param n       element count, 0 ≤ n ≤ max_elements
/// @param out     device pointer to n int32 keys (may equal `in`)
/// @param segment a power of two in [1, max_segment_odd_even]
/// @param stream  the stream to run on
/// @throws std::invalid_argument as in the common contract, and when
///         `segment` is not a power of two in [1, 1024].
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Source: N. Habermann, "Parallel neighbor-sort", Carnegie Mellon
/// University, 1972; D. E. Knuth, *The Art of Computer Programming*, vol. 3,
/// 2nd ed., 1998, §5.3.4.
void odd_even_transposition_sort(const int* in, std::size_t n, int* out, std::size_t segment,
                                 cudaStream_t stream = nullptr);

/// @brief Exercise 2.2: bitonic sort of each segment of `segment` keys, one
///        block of segment / 2 threads per segment, in shared memory.
///
/// For k = 2, 4, ..., segment and j = k / 2, k / 4, ..., 1, key i is
/// compare-exchanged with its partner `i ^ j` (each pair once, by the thread
/// of its lower index), ascending where `(i & k) == 0` and descending
/// elsewhere, with a barrier after each step. A short last segment is padded
/// with INT_MAX in shared memory.
/// Work O(n log² segment); steps O(log² segment): (log2 s)(log2 s + 1) / 2 steps.
/// @param in      device pointer to n int32 keys
/// @param n       element count, 0 ≤ n ≤ max_elements
/// @param out     device pointer to n int32 keys (may equal `in`)
/// @param segment a power of two in [1, max_segment_bitonic]
/// @param stream  the stream to run on
/// @throws std::invalid_argument as in the common contract, and when
///         `segment` is not a power of two in [1, 2048].
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Source: K. E. Batcher, "Sorting networks and their applications", AFIPS
/// Spring Joint Computer Conference, 1968.
void bitonic_sort_shared(const int* in, std::size_t n, int* out, std::size_t segment,
                         cudaStream_t stream = nullptr);

/// @brief Exercise 2.3: bitonic sort of all n keys in global memory.
///
/// The array is padded with INT_MAX to a power of two P ≥ max(n, 8192) (in a
/// scratch buffer unless n = P). Tiles of 8192 keys are sorted in shared
/// memory (alternating directions, as the network prescribes); then, for each
/// stage k = 16384, ..., P, the steps with stride j ≥ 8192 run in global
/// memory (up to six strides per kernel, 64 keys per thread in registers)
/// and the steps j = 4096, ..., 1 of the stage run in shared memory, one
/// kernel per tile. Every step runs on keys held in registers: a thread
/// owns 32 keys b + m s (m < 32) that are closed under the strides s to
/// 16 s, so the 13 strides of a tile take three register phases (s = 256,
/// 8, 1) with one pass through shared memory between them.
/// Work O(n log² n); steps O(log² n); global passes
/// 1 + sum over stages of (1 + ceil((log2 k − 13) / 6)): 28 at 2^24.
/// @param in     device pointer to n int32 keys
/// @param n      element count, 0 ≤ n ≤ max_elements_bitonic
/// @param out    device pointer to n int32 keys (may equal `in`)
/// @param stream the stream to run on
/// @throws std::invalid_argument as in the common contract (n above 2^30 too).
/// @throws cudalab::CudaError when a CUDA call, an allocation or a launch fails.
/// Source: Batcher, 1968; the global/shared split as in NVIDIA's CUDA sample
/// `sortingNetworks` (V. Podlozhnyuk, 2007).
void bitonic_sort_global(const int* in, std::size_t n, int* out, cudaStream_t stream = nullptr);

/// @brief Exercise 2.4: merges each pair of adjacent sorted runs of `run`
///        keys, one thread per pair, by the serial two-finger merge.
///
/// Meant for many small merges (run up to a few dozen keys): every thread
/// works alone, so there is no synchronization between merges. For
/// run ≤ 64 a block of min(128, 4096 / (2 · run)) threads stages its pairs
/// in shared memory with coalesced loads (one padding slot per pair: an odd
/// stride, so a warp's merges walk on 32 different banks), each thread
/// merges its pair from shared memory into a second shared array, and the
/// block stores the result coalesced. Longer runs are merged straight from
/// global memory (a warp's loads scattered over 32 pairs: uncoalesced).
/// Stable: on equal keys the first run's key goes first.
/// Work O(n); steps O(run) (2 · run per thread).
/// @param in     device pointer to n int32 keys, sorted within each run
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to n int32 keys, `out != in`: sorted within
///               each run of 2 · run keys
/// @param run    the length of the input runs, run ≥ 1 (run ≥ n copies)
/// @param stream the stream to run on
/// @throws std::invalid_argument as in the common contract, when run = 0 and
///         when out == in.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Source: Knuth, TAOCP vol. 3, §5.2.4 (Algorithm M, merging); N. Satish,
/// M. Harris and M. Garland, "Designing efficient sorting algorithms for
/// manycore GPUs", IPDPS 2009.
void merge_runs_per_thread(const int* in, std::size_t n, int* out, std::size_t run,
                           cudaStream_t stream = nullptr);
/// @brief Exercise 2.4, key-value pairs: as the keys-only overload, and the
///        value of each key moves with it (`values_out[i]` is the value that
///        came with `keys_out[i]`), so the stability of the merge shows.
/// @param keys_in    device pointer to n int32 keys, sorted within each run
/// @param values_in  device pointer to n int32 values
/// @param n          element count, 0 ≤ n ≤ max_elements
/// @param keys_out   device pointer to n int32 keys (not `keys_in`)
/// @param values_out device pointer to n int32 values (not `values_in`)
/// @param run        the length of the input runs, run ≥ 1
/// @param stream     the stream to run on
/// @throws std::invalid_argument as in the keys-only overload, also for
///         null or aliased values.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
void merge_runs_per_thread(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, std::size_t run, cudaStream_t stream = nullptr);

/// @brief Exercise 2.5: merges each pair of adjacent sorted runs, one block
///        per pair, every key placed directly by its rank.
///
/// Key `a[i]` of the first run goes to position i + (the number of keys of
/// the second run that are < a[i]); key `b[j]` of the second run goes to
/// j + (the number of keys of the first run that are ≤ b[j]). Both counts are
/// binary searches (lower and upper bound), which makes the merge stable and
/// the positions distinct. The pair is searched in shared memory when it
/// fits (2 · run ≤ 4096 keys), in global memory otherwise.
/// Meant for a moderate number of medium merges (run from about 64 to a few
/// thousand keys).
/// Work O(n log run); steps O(run / blockDim · log run).
/// @param in     device pointer to n int32 keys, sorted within each run
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to n int32 keys, `out != in`
/// @param run    the length of the input runs, run ≥ 1
/// @param stream the stream to run on
/// @throws std::invalid_argument as in the common contract, when run = 0 and
///         when out == in.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Source: Satish, Harris and Garland, IPDPS 2009 (merging by rank, §4).
void merge_runs_per_block(const int* in, std::size_t n, int* out, std::size_t run,
                          cudaStream_t stream = nullptr);
/// @brief Exercise 2.5, key-value pairs (stability visible through the values).
/// @copydetails merge_runs_per_thread(const int*, const int*, std::size_t, int*, int*, std::size_t, cudaStream_t)
void merge_runs_per_block(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                          int* values_out, std::size_t run, cudaStream_t stream = nullptr);

/// @brief Exercise 2.6: merges each pair of adjacent sorted runs of any
///        length with merge-path partitioning, so that one merge spreads over
///        many blocks (all SMs).
///
/// Each pair's output is cut into tiles of 128 × 15 = 1920 keys. A first
/// kernel finds, for the first output position d of every tile, where the
/// merge path crosses the cross diagonal d: the number a of first-run keys
/// among the first d outputs (a binary search of O(log run) steps). A second
/// kernel gives every tile one block: it loads the tile's slices of both
/// runs into shared memory (coalesced), each thread finds its own split for
/// 15 outputs in shared memory and merges them serially, and the block
/// stores the tile (coalesced). Stable (first run first on ties).
/// Work O(n + (n / 1920) · log run + (n / 15) · log 1920) (the merge, the
/// tile splits, the thread splits); steps O(log run + log 1920 + 15).
/// @param in     device pointer to n int32 keys, sorted within each run
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to n int32 keys, `out != in`
/// @param run    the length of the input runs, run ≥ 1
/// @param stream the stream to run on
/// @throws std::invalid_argument as in the common contract, when run = 0 and
///         when out == in.
/// @throws cudalab::CudaError when a CUDA call, an allocation or a launch fails.
/// Source: O. Green, R. McColl and D. A. Bader, "GPU merge path: a GPU
/// merging algorithm", ICS 2012; S. Odeh, O. Green, Z. Mwassi, O. Shmueli and
/// Y. Birk, "Merge Path - parallel merging made simple", IPDPS Workshops 2012;
/// S. Baxter, moderngpu 2.0, `merge.hxx` and `kernel_merge.hxx`.
void merge_runs_merge_path(const int* in, std::size_t n, int* out, std::size_t run,
                           cudaStream_t stream = nullptr);
/// @brief Exercise 2.6, key-value pairs (stability visible through the values).
/// @copydetails merge_runs_per_thread(const int*, const int*, std::size_t, int*, int*, std::size_t, cudaStream_t)
void merge_runs_merge_path(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, std::size_t run, cudaStream_t stream = nullptr);

/// @brief Exercise 2.7: stable merge sort of all n keys: block-local sorts of
///        tiles of 1024 × 17 = 17408 keys, then merge-path passes that double
///        the sorted runs until one is left.
///
/// The tile sort loads 17408 keys (17 coalesced loads per thread in flight)
/// through shared memory, sorts each thread's 17 keys in registers
/// (odd-even transposition, stable), then merges runs of 17, 34, ..., 8704
/// keys in shared memory, every thread finding its 17 outputs by a
/// merge-path search and merging them with the next key of each run held in
/// a register. Each following pass merges runs of 17408, 34816, ... keys
/// like exercise 2.6 (a search for the split of every tile of
/// 256 × 17 = 4352 outputs, then one block per tile):
/// ceil(log2(n / 17408)) passes, ping-ponging between `out` and a scratch
/// buffer so the last one lands in `out`. While a pass has fewer than 8192
/// tiles (n below about 35.7 million), each split is found by 8 lanes in a
/// 9-ary search, above that by one thread in a binary search. Stable: equal
/// keys keep their input order. The block sort uses 68 KiB of shared memory
/// per block, 136 KiB for pairs (opted in with cudaFuncSetAttribute); on a
/// GPU whose opt-in shared memory per block is smaller
/// (cudalab::device_limits(): 99 KiB on the RTX 3090, 4090, 5090 and L4,
/// 64 KiB on the T4) it sorts tiles of 512 × 17 = 8704 or 256 × 17 = 4352
/// keys instead, with one or two more merge passes. The
/// scratch (n keys, n values for pairs) comes from the device's
/// stream-ordered memory pool, whose release threshold the call raises above
/// it: the memory stays reserved for the next call instead of being mapped
/// again (about 1 ms at 2^28 keys, 70 µs at 2^24).
/// Work O(n log n); steps O(log² n); global traffic about
/// 8n (1 + ceil(log2(n / 17408))) bytes for keys.
/// @param in     device pointer to n int32 keys
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to n int32 keys (may equal `in`)
/// @param stream the stream to run on
/// @throws std::invalid_argument as in the common contract.
/// @throws cudalab::CudaError when a CUDA call, an allocation or a launch fails.
/// Source: Green, McColl and Bader, ICS 2012; Odeh et al., IPDPS Workshops
/// 2012; S. Baxter, moderngpu 2.0 `kernel_mergesort.hxx`; D. Merrill, CUB
/// `cub::DeviceMergeSort` (NVIDIA CCCL), the baseline it races; the k-ary
/// search: Schlegel, Gemulla and Lehner, DaMoN 2009.
void merge_sort_merge_path(const int* in, std::size_t n, int* out, cudaStream_t stream = nullptr);
/// @brief Exercise 2.7, key-value pairs: a stable sort by key in which every
///        value moves with its key.
/// @param keys_in    device pointer to n int32 keys
/// @param values_in  device pointer to n int32 values
/// @param n          element count, 0 ≤ n ≤ max_elements
/// @param keys_out   device pointer to n int32 keys (may equal `keys_in`)
/// @param values_out device pointer to n int32 values (may equal `values_in`)
/// @param stream     the stream to run on
/// @throws std::invalid_argument as in the common contract, also for null values.
/// @throws cudalab::CudaError when a CUDA call, an allocation or a launch fails.
void merge_sort_merge_path(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, cudaStream_t stream = nullptr);

namespace detail {
/// @brief The checks every function performs on its keys (and values)
///        before touching the GPU.
/// @throws std::invalid_argument as in the file's common contract.
inline void check_sort_arguments(const char* function, const void* in, std::size_t n, const void* out,
                                 std::size_t max_n = max_elements) {
  require_pointer(function, "in", in, n);
  require_pointer(function, "out", out, n);
  require_count_at_most(function, n, max_n);
}

/// @brief Throws when `segment` is not a power of two in [1, max_segment].
inline void check_segment(const char* function, std::size_t segment, std::size_t max_segment) {
  require_power_of_two_in(function, "segment", segment, 1, max_segment);
}

/// @brief Throws when `run` is 0.
inline void check_run(const char* function, std::size_t run) {
  if (run == 0) throw std::invalid_argument(std::string(function) + ": run = 0 (runs need at least one key)");
}

/// @brief Throws when `out == in` and n > 0 (the merges cannot work in place).
inline void check_not_in_place(const char* function, const char* what, const void* in, const void* out,
                               std::size_t n) {
  if (n > 0 && in == out) {
    throw std::invalid_argument(std::string(function) + ": " + what +
                                " output equals its input; this merge cannot work in place");
  }
}

/// @brief The checks of the keys-only merge_runs_* functions, in this
///        order: `run` (check_run), `in`, `out` and n (check_sort_arguments),
///        then `out != in` (check_not_in_place).
/// @param function the public function being called, for the messages
/// @param in       device pointer to n keys
/// @param n        key count
/// @param out      device pointer to n keys
/// @param run      the length of the sorted runs
/// @throws std::invalid_argument as in the file's common contract.
inline void check_merge_runs(const char* function, const void* in, std::size_t n, const void* out,
                             std::size_t run) {
  check_run(function, run);
  check_sort_arguments(function, in, n, out);
  check_not_in_place(function, "the", in, out, n);
}

/// @brief The checks of the key-value merge_runs_* functions, in this
///        order: `run`, the keys, the values, then that neither output is
///        its input.
/// @param function   the public function being called, for the messages
/// @param keys_in    device pointer to n keys
/// @param values_in  device pointer to n values
/// @param n          pair count
/// @param keys_out   device pointer to n keys
/// @param values_out device pointer to n values
/// @param run        the length of the sorted runs
/// @throws std::invalid_argument as in the file's common contract.
inline void check_merge_runs(const char* function, const void* keys_in, const void* values_in, std::size_t n,
                             const void* keys_out, const void* values_out, std::size_t run) {
  check_run(function, run);
  check_sort_arguments(function, keys_in, n, keys_out);
  check_sort_arguments(function, values_in, n, values_out);
  check_not_in_place(function, "the key", keys_in, keys_out, n);
  check_not_in_place(function, "the value", values_in, values_out, n);
}

/// @brief The launch of a merge_runs_* exercise (2.4 to 2.6), as its file
///        defines it: `launch(keys_in, values_in, n, keys_out, values_out,
///        run, stream)` merges the runs with the exercise's kernels, for
///        n > 0 and 1 ≤ run ≤ n, the values null for the keys-only overload.
using MergeRunsLaunch = void (*)(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                                 int* values_out, std::size_t run, cudaStream_t stream);

/// @brief The body of the keys-only merge_runs_* overloads (2.4 to 2.6):
///        checks the arguments (check_merge_runs) and, for n > 0, calls
///        `launch(in, nullptr, n, out, nullptr, min(run, n), stream)` (a run
///        of n keys or more is the whole array: the merge is a copy).
/// @param function the public function being called, for the messages
/// @param in       device pointer to n keys, sorted within each run
/// @param n        key count
/// @param out      device pointer to n keys
/// @param run      the length of the sorted runs
/// @param stream   the stream to run on; asynchronous
/// @param launch   the exercise's launch; called only with n > 0
/// @throws std::invalid_argument as check_merge_runs (before any CUDA call),
///         and whatever `launch` throws.
/// O(1) on the host besides `launch`.
inline void run_merge_runs(const char* function, const int* in, std::size_t n, int* out, std::size_t run,
                           cudaStream_t stream, MergeRunsLaunch launch) {
  check_merge_runs(function, in, n, out, run);
  if (n > 0) launch(in, nullptr, n, out, nullptr, std::min(run, n), stream);
}

/// @brief The body of the key-value merge_runs_* overloads (2.4 to 2.6):
///        checks the arguments (check_merge_runs) and, for n > 0, calls
///        `launch(keys_in, values_in, n, keys_out, values_out, min(run, n),
///        stream)`.
/// @param function   the public function being called, for the messages
/// @param keys_in    device pointer to n keys, sorted within each run
/// @param values_in  device pointer to n values
/// @param n          pair count
/// @param keys_out   device pointer to n keys
/// @param values_out device pointer to n values
/// @param run        the length of the sorted runs
/// @param stream     the stream to run on; asynchronous
/// @param launch     the exercise's launch; called only with n > 0
/// @throws std::invalid_argument as check_merge_runs (before any CUDA call),
///         and whatever `launch` throws.
/// O(1) on the host besides `launch`.
inline void run_merge_runs(const char* function, const int* keys_in, const int* values_in, std::size_t n,
                           int* keys_out, int* values_out, std::size_t run, cudaStream_t stream,
                           MergeRunsLaunch launch) {
  check_merge_runs(function, keys_in, values_in, n, keys_out, values_out, run);
  if (n > 0) launch(keys_in, values_in, n, keys_out, values_out, std::min(run, n), stream);
}

/// @brief The smallest power of two ≥ max(n, floor) (floor a power of two).
inline std::size_t pad_to_power_of_two(std::size_t n, std::size_t floor) {
  std::size_t p = floor;
  while (p < n) p *= 2;
  return p;
}
}  // namespace detail

}  // namespace cudalab::sort
