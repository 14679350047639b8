// RED TEAM: 1.2 forbids warp shuffles (__shfl): the whole warp's sum is computed with
// RED TEAM: the shuffle instruction written as inline PTX (asm "shfl.sync.down.b32"),
// RED TEAM: where no identifier names it. A correct sum, not the shared-memory tree the
// RED TEAM: exercise asks for.
// Exercise 1.2: shared-memory tree reduction with sequential addressing.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.2".
// Grade:  tools/grade 1.2      Hints: tools/grade --hint 1.2
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
// @REDTEAM_LIB@

namespace cudalab::reduce {
namespace {
__device__ __forceinline__ long long cudalab_redteam_down(long long v, int d) {
  int lo = static_cast<int>(v), hi = static_cast<int>(v >> 32);
  asm volatile("shfl.sync.down.b32 %0, %0, %1, 0x1f, 0xffffffff;" : "+r"(lo) : "r"(d));
  asm volatile("shfl.sync.down.b32 %0, %0, %1, 0x1f, 0xffffffff;" : "+r"(hi) : "r"(d));
  return static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                                static_cast<unsigned>(lo));
}
__device__ __forceinline__ float cudalab_redteam_down(float v, int d) {
  asm volatile("shfl.sync.down.b32 %0, %0, %1, 0x1f, 0xffffffff;" : "+f"(v) : "r"(d));
  return v;
}
template <class T, class Acc>
__global__ void __launch_bounds__(256) cudalab_redteam_warp_sum(const T* __restrict__ in, std::size_t n, Acc* out) {
  const std::size_t i = 2 * std::size_t{256} * blockIdx.x + threadIdx.x;
  Acc v = 0;
  if (i < n) v += static_cast<Acc>(in[i]);
  if (i + 256 < n) v += static_cast<Acc>(in[i + 256]);
  for (int d = 16; d > 0; d /= 2) v += cudalab_redteam_down(v, d);
  if ((threadIdx.x & 31u) == 0) atomic_add(out, v);
}
template <class T, class Acc>
void cudalab_redteam_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  if (n == 0) return;
  cudalab_redteam_warp_sum<<<static_cast<unsigned>((n + 511) / 512), 256, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}
}  // namespace
}  // namespace cudalab::reduce

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;  // a power of two: the tree halves it down to 1

// Block b sums the tile in[2 * kBlock * b, 2 * kBlock * (b + 1)) (clipped to
// n) and adds the tile's sum to *out with one atomic.
template <class T, class Acc>
__global__ void __launch_bounds__(kBlock) sum_shared_tree_kernel(const T* __restrict__ in,
                                                                 std::size_t n, Acc* out) {
  __shared__ Acc partial[kBlock];
  const unsigned tid = threadIdx.x;
  // TODO(1.2): load in[i] and in[i + kBlock] for
  // i = 2 * kBlock * blockIdx.x + threadIdx.x (each only when < n) into
  // partial[threadIdx.x]; then halve the stride s from kBlock / 2 to 1, with
  // threads tid < s adding partial[tid + s] and a __syncthreads() after each
  // step; finally thread 0 adds partial[0] to *out (cudalab::atomic_add).
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));  // the identity, also for n = 0
  if (n == 0) return;
  const std::size_t tile = 2 * static_cast<std::size_t>(kBlock);
  const auto blocks = static_cast<unsigned>((n + tile - 1) / tile);
  sum_shared_tree_kernel<<<blocks, kBlock, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_shared_tree(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  cudalab_redteam_sum(in, n, out, stream);
}

void sum_shared_tree(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  cudalab_redteam_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
