// Exercise 7.1: the root bounding box: min and max of float3 points by a
// two-pass reduction, and the first point with a NaN or infinite coordinate.
// Lesson: chapters/07-kdtree-large-nodes/README.md, "7.1".
// Grade:  tools/grade 7.1      Hints: tools/grade --hint 7.1
#include <cstddef>
#include <cstdint>

#include "cudalab/args.hpp"
#include "cudalab/async_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/kdtree.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::kdtree {
namespace {

constexpr int kBlock = 256;
constexpr unsigned kMaxBlocks = 1024;  // partials reduced by one block of kMaxBlocks threads

// The reduction's element: a box and the smallest bad index seen.
struct Partial {
  float3 lo, hi;
  std::uint64_t bad;
};

__device__ __forceinline__ Partial identity(std::uint64_t n) {
  const float inf = __int_as_float(0x7f800000);
  return {{inf, inf, inf}, {-inf, -inf, -inf}, n};
}

// The operator: componentwise min of lo, max of hi, min of bad. Exact, so
// associative and commutative: any reduction order gives the same bits.
__device__ __forceinline__ Partial combine(const Partial& a, const Partial& b) {
  // TODO(7.1): the componentwise minimum of the lo corners, maximum of
  // the hi corners, and the smaller of the two bad indices.
  return a;
}

__device__ __forceinline__ Partial shfl_down(const Partial& v, int offset) {
  Partial r;
  r.lo.x = __shfl_down_sync(kFullMask, v.lo.x, offset);
  r.lo.y = __shfl_down_sync(kFullMask, v.lo.y, offset);
  r.lo.z = __shfl_down_sync(kFullMask, v.lo.z, offset);
  r.hi.x = __shfl_down_sync(kFullMask, v.hi.x, offset);
  r.hi.y = __shfl_down_sync(kFullMask, v.hi.y, offset);
  r.hi.z = __shfl_down_sync(kFullMask, v.hi.z, offset);
  r.bad = __shfl_down_sync(kFullMask, v.bad, offset);
  return r;
}

// Block-wide reduction of one Partial per thread; the result is valid in
// thread 0. blockDim.x is a multiple of 32, at most 1024.
__device__ Partial block_reduce(Partial v, std::uint64_t n) {
  const unsigned lane = lane_id(), warp = warp_id();
  // TODO(7.1): reduce within each warp with shfl_down and combine, put each
  // warp's total in a __shared__ Partial warp_totals[32], __syncthreads(),
  // and let warp 0 reduce the totals (identity(n) for the lanes past the
  // last warp).
  return v;
}

// Pass 1: every block reduces a grid-stride share of the points into partials[blockIdx.x].
__global__ void partial_boxes_kernel(const float3* __restrict__ points, std::uint64_t n, Partial* partials) {
  Partial acc = identity(n);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const float3 p = points[i];
    // TODO(7.1): fold the point into acc when its three coordinates are
    // finite (isfinite); otherwise remember its index in acc.bad when it
    // is the smallest bad index so far.
  }
  acc = block_reduce(acc, n);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Pass 2: one block reduces the partials and writes the results.
__global__ void final_box_kernel(const Partial* __restrict__ partials, unsigned count, std::uint64_t n, Box* box,
                                 std::uint64_t* first_bad) {
  Partial acc = identity(n);
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) acc = combine(acc, partials[i]);
  acc = block_reduce(acc, n);
  if (threadIdx.x == 0) {
    *box = Box{acc.lo, acc.hi};
    *first_bad = acc.bad;
  }
}

}  // namespace

void bounding_box(const float3* points, std::size_t n, Box* box, std::uint64_t* first_bad, cudaStream_t stream) {
  require_count_at_most("bounding_box", n, max_points);
  require_pointer("bounding_box", "points", points, n);
  require_pointer("bounding_box", "box", box, 1);
  require_pointer("bounding_box", "first_bad", first_bad, 1);
  const std::size_t wanted = (n + 4 * kBlock - 1) / (4 * kBlock);  // about 4 points per thread at least
  const unsigned blocks = static_cast<unsigned>(wanted == 0 ? 1 : (wanted < kMaxBlocks ? wanted : kMaxBlocks));
  AsyncBuffer<Partial> partials(blocks, stream);
  partial_boxes_kernel<<<blocks, kBlock, 0, stream>>>(points, n, partials.data());
  CUDALAB_CHECK_LAUNCH();
  final_box_kernel<<<1, kMaxBlocks, 0, stream>>>(partials.data(), blocks, n, box, first_bad);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::kdtree
