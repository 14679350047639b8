// Benchmark of cudalab::sort::bitonic_sort_global at 2^20, 2^24 and 2^28 int32,
// beside cub_merge_sort_keys (the yardstick: within 2x at 2^24) in the same run.
#include "sort_bench.cuh"

namespace {
const bool registered =
    cudalab::bench::sort::register_sort("bitonic_sort_global", &cudalab::sort::bitonic_sort_global);
}  // namespace
