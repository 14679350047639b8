// Benchmark of cudalab::stack::expand_until_empty on two trees (340674 and
// 3551806 nodes), beside cub_expand_scan and the other baselines
// (bench/stack_baselines_bench.cu) in the same run.
#include "stack_bench.cuh"

namespace {
const bool registered =
    cudalab::bench::stack::register_expand("expand_until_empty", &cudalab::stack::expand_until_empty);
}  // namespace
