// Benchmark of cudalab::scan::segmented_inclusive_scan and
// segmented_exclusive_scan (Plus) at 2^24 and 2^28 int32, with 2^10 and 2^20
// equal segments and with random lengths (mean n / 2^10), beside
// cub::DeviceScan::InclusiveSumByKey / ExclusiveSumByKey
// (bench/scan_baselines_bench.cu) in the same run. Names:
// segmented_scan/int32/<n>/<inclusive|exclusive>/<pattern>; each element
// costs 4 bytes read, 1 flag byte read and 4 bytes written.
#include "scan_bench.cuh"

namespace {
using cudalab::bench::scan::Segments;
const bool registered = [] {
  cudalab::bench::scan::register_segmented(
      "segmented_scan", "inclusive", 9, true,
      [](const int* in, const std::uint8_t* flags, std::size_t n, int* out, const Segments&, cudaStream_t s) {
        cudalab::scan::segmented_inclusive_scan(in, flags, n, out, cudalab::scan::Plus{}, s);
      });
  cudalab::bench::scan::register_segmented(
      "segmented_scan", "exclusive", 9, false,
      [](const int* in, const std::uint8_t* flags, std::size_t n, int* out, const Segments&, cudaStream_t s) {
        cudalab::scan::segmented_exclusive_scan(in, flags, n, out, cudalab::scan::Plus{}, s);
      });
  return true;
}();
}  // namespace
