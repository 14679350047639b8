// Benchmark of cudalab::stack::push_warp_aggregated at 2^20 and 2^24 threads,
// every lane or one lane in 32 pushing, beside the chapter's baselines
// (bench/stack_baselines_bench.cu) in the same run.
#include "stack_bench.cuh"

namespace {
const bool registered =
    cudalab::bench::stack::register_push("push_warp_aggregated", &cudalab::stack::push_warp_aggregated);
}  // namespace
