// Benchmark of cudalab::sort::odd_even_transposition_sort on a batch of 2^24
// keys in segments of 256 and 1024, beside cub_segmented_sort in the same run.
#include "sort_bench.cuh"

namespace {
const bool registered = cudalab::bench::sort::register_segments(
    "odd_even_transposition_sort", &cudalab::sort::odd_even_transposition_sort,
    cudalab::sort::max_segment_odd_even);
}  // namespace
