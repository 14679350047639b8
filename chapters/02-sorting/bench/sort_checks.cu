// The Thrust checks of the sort benchmarks (sort_bench.cuh), compiled once
// per program with the group's baselines instead of in every exercise's
// benchmark object.
#include <thrust/count.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "sort_bench.cuh"

namespace cudalab::bench::sort {
namespace {
// A hash of (element, its segment): the sum over an array is a fingerprint of
// the multiset of each segment's elements.
struct SegmentHash {
  const int* a;
  std::size_t segment;
  __host__ __device__ unsigned long long operator()(std::size_t i) const {
    return mix64(static_cast<std::uint32_t>(a[i]) ^ (static_cast<std::uint64_t>(i / segment) << 32));
  }
};

// True at i when a[i] > a[i + 1] inside one segment.
struct DescentInSegment {
  const int* a;
  std::size_t segment;
  __host__ __device__ bool operator()(std::size_t i) const { return (i + 1) % segment != 0 && a[i] > a[i + 1]; }
};
}  // namespace

std::string check_sorted_segments(const int* in, const int* out, std::size_t n, std::size_t segment) {
  if (n == 0) return "";
  const thrust::counting_iterator<std::size_t> first(0);
  const auto descents = thrust::count_if(thrust::device, first, first + (n - 1), DescentInSegment{out, segment});
  if (descents != 0) return std::to_string(descents) + " neighbours out of order";
  const auto hash = [&](const int* a) {
    return thrust::transform_reduce(thrust::device, first, first + n, SegmentHash{a, segment}, 0ull,
                                    thrust::plus<unsigned long long>());
  };
  if (hash(in) != hash(out)) return "sorted, but not the input's keys";
  return "";
}

bool device_equal(const int* a, const int* b, std::size_t n) { return thrust::equal(thrust::device, a, a + n, b); }

}  // namespace cudalab::bench::sort
