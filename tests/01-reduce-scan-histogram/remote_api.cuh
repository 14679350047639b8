// Chapter 1's API as the checker forwards it to the runner: one list per
// exercise, X(return type, namespace, function, (parameters), (arguments)).
// See cudalab/test/remote.hpp.
#pragma once

#include "cudalab/histogram.cuh"
#include "cudalab/reduce.cuh"
#include "cudalab/scan.cuh"

#define CUDALAB_REMOTE_SUM(X, fn)                                                                 \
  X(void, cudalab::reduce, fn, (const int* in, std::size_t n, long long* out, cudaStream_t s),    \
    (in, n, out, s))                                                                              \
  X(void, cudalab::reduce, fn, (const float* in, std::size_t n, float* out, cudaStream_t s), (in, n, out, s))

#define CUDALAB_REMOTE_sum_atomic(X) CUDALAB_REMOTE_SUM(X, sum_atomic)
#define CUDALAB_REMOTE_sum_shared_tree(X) CUDALAB_REMOTE_SUM(X, sum_shared_tree)
#define CUDALAB_REMOTE_sum_warp_shuffle(X) CUDALAB_REMOTE_SUM(X, sum_warp_shuffle)
#define CUDALAB_REMOTE_sum_vectorized(X) CUDALAB_REMOTE_SUM(X, sum_vectorized)

#define CUDALAB_REMOTE_TILED_SCAN(X, fn)                                                          \
  X(void, cudalab::scan, fn, (const int* in, std::size_t n, int* out, std::size_t tile, cudaStream_t s), \
    (in, n, out, tile, s))
#define CUDALAB_REMOTE_SCAN(X, fn) \
  X(void, cudalab::scan, fn, (const int* in, std::size_t n, int* out, cudaStream_t s), (in, n, out, s))

#define CUDALAB_REMOTE_inclusive_scan_hillis_steele(X) CUDALAB_REMOTE_TILED_SCAN(X, inclusive_scan_hillis_steele)
#define CUDALAB_REMOTE_exclusive_scan_blelloch(X) CUDALAB_REMOTE_TILED_SCAN(X, exclusive_scan_blelloch)
#define CUDALAB_REMOTE_exclusive_scan_reduce_then_scan(X) CUDALAB_REMOTE_SCAN(X, exclusive_scan_reduce_then_scan)
#define CUDALAB_REMOTE_exclusive_scan_decoupled_lookback(X)                                      \
  CUDALAB_REMOTE_SCAN(X, exclusive_scan_decoupled_lookback)                                       \
  X(void, cudalab::scan, exclusive_scan_decoupled_lookback_with_scratch,                          \
    (const int* in, std::size_t n, int* out, unsigned long long* scratch, cudaStream_t s),        \
    (in, n, out, scratch, s))

#define CUDALAB_REMOTE_SEGMENTED(X, fn, Op)                                                         \
  X(void, cudalab::scan, fn,                                                                        \
    (const int* in, const std::uint8_t* flags, std::size_t n, int* out, cudalab::scan::Op op, cudaStream_t s), \
    (in, flags, n, out, op, s))
#define CUDALAB_REMOTE_segmented_scan(X)                                   \
  CUDALAB_REMOTE_SEGMENTED(X, segmented_inclusive_scan, Plus)              \
  CUDALAB_REMOTE_SEGMENTED(X, segmented_inclusive_scan, Minimum)           \
  CUDALAB_REMOTE_SEGMENTED(X, segmented_inclusive_scan, Maximum)           \
  CUDALAB_REMOTE_SEGMENTED(X, segmented_exclusive_scan, Plus)              \
  CUDALAB_REMOTE_SEGMENTED(X, segmented_exclusive_scan, Minimum)           \
  CUDALAB_REMOTE_SEGMENTED(X, segmented_exclusive_scan, Maximum)

#define CUDALAB_REMOTE_HISTOGRAM(X, fn)                                                             \
  X(void, cudalab::histogram, fn,                                                                   \
    (const int* samples, std::size_t n, unsigned int* histogram, int num_bins, int lower, int upper, \
     cudaStream_t s),                                                                               \
    (samples, n, histogram, num_bins, lower, upper, s))
#define CUDALAB_REMOTE_histogram_global_atomics(X) CUDALAB_REMOTE_HISTOGRAM(X, histogram_global_atomics)
#define CUDALAB_REMOTE_histogram_shared_privatized(X) CUDALAB_REMOTE_HISTOGRAM(X, histogram_shared_privatized)
#define CUDALAB_REMOTE_histogram_packed_privatized(X) CUDALAB_REMOTE_HISTOGRAM(X, histogram_packed_privatized)
