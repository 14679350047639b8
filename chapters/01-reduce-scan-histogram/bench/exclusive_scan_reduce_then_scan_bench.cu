// Benchmark of cudalab::scan::exclusive_scan_reduce_then_scan at 2^20, 2^24 and
// 2^28 int32, beside the scan baselines (bench/scan_baselines_bench.cu) in the same run.
#include "scan_bench.cuh"

namespace {
const bool registered = cudalab::bench::scan::register_scan(
    "exclusive_scan_reduce_then_scan", cudalab::scan::exclusive_scan_reduce_then_scan, {false, 0});
}  // namespace
