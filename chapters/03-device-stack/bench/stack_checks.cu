// The Thrust fingerprints of the stack benchmarks' checks (stack_bench.cuh),
// compiled once per program with the group's baselines instead of in every
// exercise's benchmark object.
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <cstddef>

#include "stack_bench.cuh"

namespace cudalab::bench::stack {
namespace {
struct IntHash {
  __host__ __device__ unsigned long long operator()(int v) const { return detail::int_hash(v); }
};

// The hash of items[i] where thread i pushes (every stride-th), else 0.
struct PushedHash {
  const int* items;
  std::size_t stride;
  __host__ __device__ unsigned long long operator()(std::size_t i) const {
    return i % stride == 0 ? detail::int_hash(items[i]) : 0ull;
  }
};
}  // namespace

unsigned long long fingerprint(const int* a, std::size_t n) {
  return thrust::transform_reduce(thrust::device, a, a + n, IntHash{}, 0ull, thrust::plus<unsigned long long>());
}

unsigned long long pushed_fingerprint(const int* items, std::size_t n, std::size_t stride) {
  const thrust::counting_iterator<std::size_t> first(0);
  return thrust::transform_reduce(thrust::device, first, first + n, PushedHash{items, stride}, 0ull,
                                  thrust::plus<unsigned long long>());
}

}  // namespace cudalab::bench::stack
