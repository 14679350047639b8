// Benchmark of cudalab::scan::exclusive_scan_blelloch (tiles of 2048) at 2^20,
// 2^24 and 2^28 int32, beside the scan baselines (bench/scan_baselines_bench.cu:
// cub_block_scan_exclusive is the fair one) in the same run.
#include "scan_bench.cuh"

namespace {
const bool registered = cudalab::bench::scan::register_tiled_scan(
    "exclusive_scan_blelloch", &cudalab::scan::exclusive_scan_blelloch,
    {false, cudalab::bench::scan::kBlellochTile});
}  // namespace
