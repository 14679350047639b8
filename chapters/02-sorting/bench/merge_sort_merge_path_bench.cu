// Benchmark of cudalab::sort::merge_sort_merge_path at 2^20, 2^24 and 2^28
// int32 keys and key-value pairs, beside cub_merge_sort_keys / _pairs (the
// issue's target: at least 1.0x at 2^24 and 2^28), cub_radix_sort_keys and
// the host's std::sort in the same run.
#include "sort_bench.cuh"

namespace {
const bool registered = [] {
  cudalab::bench::sort::register_sort("merge_sort_merge_path", [](const int* in, std::size_t n, int* out,
                                                                  cudaStream_t s) {
    cudalab::sort::merge_sort_merge_path(in, n, out, s);
  });
  cudalab::bench::sort::register_pairs(
      "merge_sort_merge_path",
      [](const int* ki, const int* vi, std::size_t n, int* ko, int* vo, cudaStream_t s) {
        cudalab::sort::merge_sort_merge_path(ki, vi, n, ko, vo, s);
      });
  return true;
}();
}  // namespace
