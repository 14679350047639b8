// Benchmark of cudalab::sort::merge_runs_merge_path: one merge pass over 2^24
// keys in sorted runs of 32, 256, 1024, 65536 and 2^23 (one huge merge),
// beside copy_bandwidth.
#include "sort_bench.cuh"

namespace {
const bool registered = cudalab::bench::sort::register_merge(
    "merge_runs_merge_path",
    [](const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t s) {
      cudalab::sort::merge_runs_merge_path(in, n, out, run, s);
    },
    {32, 256, 1024, 65536, std::size_t{1} << 23});
}  // namespace
