// Benchmark of cudalab::sort::merge_runs_per_thread: one merge pass over 2^24
// keys in sorted runs of 4, 32 and 256 (the small-merge regime), beside
// copy_bandwidth (a merge pass moves what a copy moves).
#include "sort_bench.cuh"

namespace {
const bool registered = cudalab::bench::sort::register_merge(
    "merge_runs_per_thread",
    [](const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t s) {
      cudalab::sort::merge_runs_per_thread(in, n, out, run, s);
    },
    {4, 32, 256});
}  // namespace
