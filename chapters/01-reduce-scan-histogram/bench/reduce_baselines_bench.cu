// Baselines of chapter 1's reductions, linked into every exercise's benchmark
// program so that each run measures them beside the exercise:
//   cub_reduce_sum/int32/<n>   cub::DeviceReduce::Sum, int32 in, int64 out
//   copy_bandwidth/int32/<n>   device-to-device copy (the memory ceiling)
#include <cub/device/device_reduce.cuh>

#include "sum_bench.cuh"

namespace cudalab::bench::sum {
namespace {

void cub_sum(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  std::size_t bytes = 0;
  CUDALAB_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, in, out, static_cast<std::int64_t>(n), stream));
  CUDALAB_CHECK(cub::DeviceReduce::Sum(temp_storage(bytes), bytes, in, out, static_cast<std::int64_t>(n), stream));
}

const bool registered = [] {
  register_int_sum("cub_reduce_sum", cub_sum);
  register_copy_bandwidth<int>("int32", kSizes);
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::sum
