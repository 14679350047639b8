// Benchmark of cudalab::sort::bitonic_sort_shared on a batch of 2^24 keys in
// segments of 256, 1024 and 2048, beside cub_segmented_sort in the same run.
#include "sort_bench.cuh"

namespace {
const bool registered = cudalab::bench::sort::register_segments(
    "bitonic_sort_shared", &cudalab::sort::bitonic_sort_shared,
    cudalab::sort::max_segment_bitonic);
}  // namespace
