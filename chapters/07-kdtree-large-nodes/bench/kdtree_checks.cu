// The Thrust parts of the kd-tree benchmarks' checks (kdtree_bench.cuh): the
// bounding box of 7.1 and the first difference of two arrays (7.3, 7.4),
// compiled once per program with the group's baselines instead of in every
// exercise's benchmark object.
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/mismatch.h>
#include <thrust/transform_reduce.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kdtree_bench.cuh"

namespace cudalab::bench::kdtree {
namespace {
// The box of point i when it is finite, else the empty box.
struct FiniteBox {
  const float3* points;
  __host__ __device__ Box operator()(std::uint64_t i) const {
    const float3 p = points[i];
    if (detail::finite(p)) return Box{p, p};
    return Box{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  }
};

// i when point i has a NaN or infinite coordinate, else n.
struct BadIndex {
  const float3* points;
  std::uint64_t n;
  __host__ __device__ std::uint64_t operator()(std::uint64_t i) const { return detail::finite(points[i]) ? n : i; }
};

// first_mismatch for any element type.
template <class T>
std::size_t first_mismatch_of(const T* a, const T* b, std::size_t n) {
  return static_cast<std::size_t>(thrust::mismatch(thrust::device, a, a + n, b).first - a);
}
}  // namespace

std::string check_bounding_box(const float3* points, std::size_t n, const Box* box, const std::uint64_t* first_bad) {
  const thrust::counting_iterator<std::uint64_t> first(0);
  const Box want = thrust::transform_reduce(thrust::device, first, first + n, FiniteBox{points},
                                            reference::empty_box(), BoxUnion{});
  Box got{};
  CUDALAB_CHECK(cudaMemcpy(&got, box, sizeof(Box), cudaMemcpyDeviceToHost));
  if (!same_box(got, want)) return "box " + show(got) + ", expected " + show(want);
  if (first_bad == nullptr) return "";
  const std::uint64_t want_bad = thrust::transform_reduce(thrust::device, first, first + n, BadIndex{points, n},
                                                          std::uint64_t{n}, thrust::minimum<std::uint64_t>());
  std::uint64_t got_bad = 0;
  CUDALAB_CHECK(cudaMemcpy(&got_bad, first_bad, sizeof got_bad, cudaMemcpyDeviceToHost));
  if (got_bad != want_bad)
    return "first_bad " + std::to_string(got_bad) + ", expected " + std::to_string(want_bad) + " (n = " +
           std::to_string(n) + ")";
  return "";
}

std::size_t first_mismatch(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  return first_mismatch_of(a, b, n);
}

std::size_t first_mismatch(const std::uint32_t* a, const std::uint32_t* b, std::size_t n) {
  return first_mismatch_of(a, b, n);
}

}  // namespace cudalab::bench::kdtree
