// Benchmark of cudalab::histogram::histogram_shared_privatized with 256 and
// 4096 bins at 2^24 and 2^28 samples, beside the chapter's histogram
// baselines (bench/histogram_baselines_bench.cu) in the same run.
#include "histogram_bench.cuh"

namespace {
const bool registered = cudalab::bench::histogram::register_histogram(
    "histogram_shared_privatized", &cudalab::histogram::histogram_shared_privatized, {256, 4096},
    {1 << 24, 1 << 28}, {1 << 24, 1 << 28});
}  // namespace
