// Benchmark of exercise 4.6, cudalab::filter::copy_if_decoupled_lookback, on int32 at the
// selectivities 0, 1, 50, 99 and 100 % and n = 2^20, 2^24, 2^28, beside the
// filter baselines (bench/filter_baselines_bench.cu: cub_select_if is the
// target) in the same run.
#include "filter_bench.cuh"

namespace {
const bool registered = cudalab::bench::filter::register_filter(
    "copy_if_decoupled_lookback", &cudalab::filter::copy_if_decoupled_lookback<int, cudalab::filter::LessThan<int>>);
}  // namespace
