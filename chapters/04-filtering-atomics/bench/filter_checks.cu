// The Thrust check of the filter benchmarks (filter_bench.cuh), compiled once
// per program with the group's baselines instead of in every exercise's
// benchmark object.
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/transform_reduce.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "filter_bench.cuh"

namespace cudalab::bench::filter {
namespace {
// A hash of one value, 0 where the predicate rejects it: summed, a fingerprint
// of the multiset of the selected values.
struct SelectedHash {
  cudalab::filter::LessThan<int> pred;
  __host__ __device__ unsigned long long operator()(int v) const {
    if (!pred(v)) return 0;
    return mix64(static_cast<std::uint32_t>(v) * 0x9E3779B97F4A7C15ull + 1);
  }
};
}  // namespace

std::string check_filter(const int* in, std::size_t n, cudalab::filter::LessThan<int> pred, const int* out,
                         const unsigned long long* count) {
  unsigned long long got = 0;
  CUDALAB_CHECK(cudaMemcpy(&got, count, sizeof got, cudaMemcpyDeviceToHost));
  const auto want = static_cast<unsigned long long>(thrust::count_if(thrust::device, in, in + n, pred));
  if (got != want) return "count " + std::to_string(got) + ", expected " + std::to_string(want);
  const cudalab::filter::LessThan<int> all{kHigh + 1};
  const auto sum = [](const int* a, std::size_t m, cudalab::filter::LessThan<int> p) {
    return thrust::transform_reduce(thrust::device, a, a + m, SelectedHash{p}, 0ull,
                                    thrust::plus<unsigned long long>());
  };
  if (sum(out, static_cast<std::size_t>(got), all) != sum(in, n, pred)) return "not the selected elements";
  return "";
}

}  // namespace cudalab::bench::filter
