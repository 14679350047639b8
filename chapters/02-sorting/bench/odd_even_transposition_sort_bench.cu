// Benchmark of cudalab::sort::odd_even_transposition_sort on a batch of 2^24
// keys in segments of 256 and 1024, beside cub_segmented_sort in the same run.
#include "sort_bench.cuh"

namespace {
const bool registered = cudalab::bench::sort::register_segments(
    "odd_even_transposition_sort",
    [](const int* in, std::size_t n, int* out, std::size_t segment, cudaStream_t s) {
      cudalab::sort::odd_even_transposition_sort(in, n, out, segment, s);
    },
    cudalab::sort::max_segment_odd_even);
}  // namespace
