// Benchmark of cudalab::sort::merge_runs_per_block: one merge pass over 2^24
// keys in sorted runs of 32, 256, 1024 and 65536 (the medium regime and
// beyond), beside copy_bandwidth.
#include "sort_bench.cuh"

namespace {
const bool registered = cudalab::bench::sort::register_merge(
    "merge_runs_per_block",
    [](const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t s) {
      cudalab::sort::merge_runs_per_block(in, n, out, run, s);
    },
    {32, 256, 1024, 65536});
}  // namespace
