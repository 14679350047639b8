// Chapter 2's API as the checker forwards it to the runner: one list per
// exercise, X(return type, namespace, function, (parameters), (arguments)).
// See cudalab/test/remote.hpp.
#pragma once

#include "cudalab/sort.cuh"

#define CUDALAB_REMOTE_SEGMENTED_SORT(X, fn)                                                      \
  X(void, cudalab::sort, fn, (const int* in, std::size_t n, int* out, std::size_t segment,        \
                              cudaStream_t stream),                                               \
    (in, n, out, segment, stream))
#define CUDALAB_REMOTE_MERGE_RUNS(X, fn)                                                          \
  X(void, cudalab::sort, fn, (const int* in, std::size_t n, int* out, std::size_t run,            \
                              cudaStream_t stream),                                               \
    (in, n, out, run, stream))                                                                    \
  X(void, cudalab::sort, fn, (const int* keys_in, const int* values_in, std::size_t n,            \
                              int* keys_out, int* values_out, std::size_t run, cudaStream_t stream), \
    (keys_in, values_in, n, keys_out, values_out, run, stream))

#define CUDALAB_REMOTE_odd_even_transposition_sort(X) \
  CUDALAB_REMOTE_SEGMENTED_SORT(X, odd_even_transposition_sort)
#define CUDALAB_REMOTE_bitonic_sort_shared(X) CUDALAB_REMOTE_SEGMENTED_SORT(X, bitonic_sort_shared)
#define CUDALAB_REMOTE_bitonic_sort_global(X)                                                     \
  X(void, cudalab::sort, bitonic_sort_global,                                                     \
    (const int* in, std::size_t n, int* out, cudaStream_t stream), (in, n, out, stream))
#define CUDALAB_REMOTE_merge_runs_per_thread(X) CUDALAB_REMOTE_MERGE_RUNS(X, merge_runs_per_thread)
#define CUDALAB_REMOTE_merge_runs_per_block(X) CUDALAB_REMOTE_MERGE_RUNS(X, merge_runs_per_block)
#define CUDALAB_REMOTE_merge_runs_merge_path(X) CUDALAB_REMOTE_MERGE_RUNS(X, merge_runs_merge_path)
#define CUDALAB_REMOTE_merge_sort_merge_path(X)                                                   \
  X(void, cudalab::sort, merge_sort_merge_path,                                                   \
    (const int* in, std::size_t n, int* out, cudaStream_t stream), (in, n, out, stream))          \
  X(void, cudalab::sort, merge_sort_merge_path,                                                   \
    (const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,     \
     cudaStream_t stream),                                                                        \
    (keys_in, values_in, n, keys_out, values_out, stream))
