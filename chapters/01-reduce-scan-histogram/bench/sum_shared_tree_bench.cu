// Benchmark of cudalab::reduce::sum_shared_tree at 2^20, 2^24 and 2^28 int32, beside
// the chapter's baselines (bench/reduce_baselines_bench.cu) in the same run.
#include "sum_bench.cuh"

namespace {
const bool registered = cudalab::bench::sum::register_int_sum(
    "sum_shared_tree", static_cast<cudalab::bench::sum::IntSum>(&cudalab::reduce::sum_shared_tree));
}  // namespace
