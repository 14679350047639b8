// Benchmark of cudalab::histogram::histogram_global_atomics with 256 and 4096
// bins, beside the chapter's histogram baselines
// (bench/histogram_baselines_bench.cu) in the same run. The skewed
// distributions run at 2^24 only: with every sample in one bin, 2^28 atomics
// on one address take about a second per run.
#include "histogram_bench.cuh"

namespace {
const bool registered = cudalab::bench::histogram::register_histogram(
    "histogram_global_atomics", &cudalab::histogram::histogram_global_atomics, {256, 4096},
    {1 << 24, 1 << 28}, {1 << 24});
}  // namespace
