// Benchmark of exercise 4.2, cudalab::filter::copy_if_shared_atomic, on int32 at the
// selectivities 0, 1, 50, 99 and 100 % and n = 2^20, 2^24, 2^28, beside the
// filter baselines (bench/filter_baselines_bench.cu: cub_select_if is the
// target) in the same run.
#include "filter_bench.cuh"

namespace {
const bool registered = cudalab::bench::filter::register_filter(
    "copy_if_shared_atomic", &cudalab::filter::copy_if_shared_atomic<int, cudalab::filter::LessThan<int>>);
}  // namespace
