// RED TEAM: 1.3 forbids cooperative_groups::reduce: called unqualified after a
// RED TEAM: using-directive, with a decoy before it, a function whose parameter is named
// RED TEAM: reduce, so that reduce looks like a name the file declares itself (the decoy's
// RED TEAM: parameter is out of the kernel's scope). A correct sum by a library reduction.
// Exercise 1.3: warp-shuffle reduction, one atomic per warp.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.3".
// Grade:  tools/grade 1.3      Hints: tools/grade --hint 1.3
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
// @REDTEAM_LIB@

namespace cudalab_redteam {
using namespace cooperative_groups;
__device__ int cudalab_redteam_decoy(int reduce) { return reduce; }
template <class T, class Acc>
__global__ void warp_sums(const T* __restrict__ in, std::size_t n, Acc* out) {
  const auto tile = tiled_partition<32>(this_thread_block());
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  Acc v = i < n ? static_cast<Acc>(in[i]) : Acc{0};
  v = reduce(tile, v, plus<Acc>());
  if (tile.thread_rank() == 0) cudalab::atomic_add(out, v);
}
}  // namespace cudalab_redteam

namespace cudalab::reduce {
namespace {
template <class T, class Acc>
void cudalab_redteam_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  if (n == 0) return;
  cudalab_redteam::warp_sums<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}
}  // namespace
}  // namespace cudalab::reduce

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;
constexpr unsigned kFullMask = 0xffffffffu;

// Thread i loads in[i] (0 past the end); each warp sums its 32 values in
// registers and its lane 0 adds the warp's sum to *out.
template <class T, class Acc>
__global__ void sum_warp_shuffle_kernel(const T* __restrict__ in, std::size_t n, Acc* out) {
  // TODO(1.3): load v = in[i] (0 when i >= n), then for offset = 16, 8, 4,
  // 2, 1 add __shfl_down_sync(0xffffffff, v, offset) to v; lane 0 of each
  // warp (threadIdx.x % 32 == 0) adds v to *out with cudalab::atomic_add.
  // Every lane must reach every shuffle: do not return early.
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
  cudalab_redteam_sum(in, n, out, stream);
}

void sum_warp_shuffle(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_warp_shuffle", in, n, out);
  cudalab_redteam_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
