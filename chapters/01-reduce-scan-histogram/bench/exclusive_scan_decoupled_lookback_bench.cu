// Benchmark of cudalab::scan::exclusive_scan_decoupled_lookback at 2^20, 2^24
// and 2^28 int32, beside the scan baselines (bench/scan_baselines_bench.cu:
// cub_exclusive_sum is the target) in the same run.
#include "scan_bench.cuh"

namespace {
const bool registered = cudalab::bench::scan::register_scan(
    "exclusive_scan_decoupled_lookback", cudalab::scan::exclusive_scan_decoupled_lookback, {false, 0});
}  // namespace
