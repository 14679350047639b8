// Baselines of chapter 1's histograms, linked into every exercise's benchmark
// program so that each run measures them beside the exercise:
//   cub_histogram_even/<distribution>/<bins>/<n>   cub::DeviceHistogram::HistogramEven,
//                                                  int32 samples, unsigned counters
//   copy_bandwidth/int32/<n>                       device-to-device copy (the memory ceiling)
#include <cub/device/device_histogram.cuh>

#include "histogram_bench.cuh"

namespace cudalab::bench::histogram {
namespace {

void cub_histogram_even(const int* samples, std::size_t n, unsigned int* histogram, int num_bins,
                        int lower, int upper, cudaStream_t stream) {
  std::size_t bytes = 0;
  const auto count = static_cast<std::int64_t>(n);
  CUDALAB_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, samples, histogram, num_bins + 1,
                                                    lower, upper, count, stream));
  CUDALAB_CHECK(cub::DeviceHistogram::HistogramEven(temp_storage(bytes), bytes, samples, histogram,
                                                    num_bins + 1, lower, upper, count, stream));
}

const bool registered = [] {
  register_histogram("cub_histogram_even", cub_histogram_even, {256, 4096, 65536}, kSizes, kSizes);
  register_copy_bandwidth<int>("int32", kSizes);
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::histogram
