// Benchmark of cudalab::scan::inclusive_scan_hillis_steele (tiles of 1024) at
// 2^20, 2^24 and 2^28 int32, beside the scan baselines
// (bench/scan_baselines_bench.cu: cub_block_scan_inclusive is the fair one) in the same run.
#include "scan_bench.cuh"

namespace {
const bool registered = cudalab::bench::scan::register_tiled_scan(
    "inclusive_scan_hillis_steele", &cudalab::scan::inclusive_scan_hillis_steele,
    {true, cudalab::bench::scan::kHillisSteeleTile});
}  // namespace
