// Benchmark of cudalab::stack::push_atomic at 2^20 and 2^24 threads, every lane
// or one lane in 32 pushing, beside the chapter's baselines
// (bench/stack_baselines_bench.cu) in the same run.
#include "stack_bench.cuh"

namespace {
const bool registered = cudalab::bench::stack::register_push("push_atomic", &cudalab::stack::push_atomic);
}  // namespace
