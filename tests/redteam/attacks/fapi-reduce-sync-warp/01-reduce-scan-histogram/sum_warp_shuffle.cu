// RED TEAM: 1.3 is the warp-shuffle tree: this one sums each warp's ints with the
// RED TEAM: warp-reduce intrinsic __reduce_add_sync instead (sm_80 and later: one REDUX,
// RED TEAM: no shuffle), split into the low and the high 16 bits of every value so that
// RED TEAM: 32 values cannot overflow 32 bits. Floats keep the shuffles. A correct sum.
// Exercise 1.3: warp-shuffle reduction, one atomic per warp.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.3".
// Grade:  tools/grade 1.3      Hints: tools/grade --hint 1.3
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;
constexpr unsigned kFullMask = 0xffffffffu;

// The warp's sum of v: value = hi * 2^16 + lo with lo in [0, 65535] and hi the
// arithmetic shift, each half summed by one __reduce_add_sync.
__device__ long long warp_sum(int v) {
  const unsigned lo = __reduce_add_sync(kFullMask, static_cast<unsigned>(v) & 0xffffu);
  const int hi = __reduce_add_sync(kFullMask, v >> 16);
  return static_cast<long long>(hi) * 65536 + static_cast<long long>(lo);
}

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

template <class T, class Acc>
__global__ void sum_warp_shuffle_kernel(const T* __restrict__ in, std::size_t n, Acc* out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const Acc s = warp_sum(i < n ? in[i] : T{0});
  if ((threadIdx.x & 31u) == 0 && i < n) atomic_add(out, s);
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));  // the identity, also for n = 0
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  sum_warp_shuffle_kernel<<<blocks, kBlock, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_warp_shuffle(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_warp_shuffle", in, n, out);
  launch(in, n, out, stream);
}

void sum_warp_shuffle(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_warp_shuffle", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
