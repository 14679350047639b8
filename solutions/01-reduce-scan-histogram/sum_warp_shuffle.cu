// Exercise 1.3: warp-shuffle reduction, one atomic per warp.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.3".
// Grade:  tools/grade 1.3      Hints: tools/grade --hint 1.3
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;

// Thread i loads in[i] (0 past the end); each warp sums its 32 values in
// registers and its lane 0 adds the warp's sum to *out.
template <class T, class Acc>
__global__ void sum_warp_shuffle_kernel(const T* __restrict__ in, std::size_t n, Acc* out) {
  // BEGIN SOLUTION
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  Acc v = i < n ? static_cast<Acc>(in[i]) : Acc{0};
  // Every lane takes part in every shuffle (full mask), also those past the
  // end of the array: they contribute 0. After the step with offset d, lane l
  // holds the sum of lanes l .. l + 2d - 1; after d = 1, lane 0 holds all 32.
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  if (lane_id() == 0 && i < n) atomic_add(out, v);
  // STARTER:
  // // TODO(1.3): load v = in[i] (0 when i >= n), then for offset = 16, 8, 4,
  // // 2, 1 add __shfl_down_sync(0xffffffff, v, offset) to v; lane 0 of each
  // // warp (threadIdx.x % 32 == 0) adds v to *out with cudalab::atomic_add.
  // // Every lane must reach every shuffle: do not return early.
  // END SOLUTION
}

// Launches the kernel for n > 0: detail::run_sum (cudalab/reduce.cuh) has
// checked the arguments and set *out to 0, the identity, before.
template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  sum_warp_shuffle_kernel<<<blocks_for(n, kBlock), kBlock, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_warp_shuffle(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::run_sum("sum_warp_shuffle", in, n, out, stream, launch);
}

void sum_warp_shuffle(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::run_sum("sum_warp_shuffle", in, n, out, stream, launch);
}

}  // namespace cudalab::reduce
