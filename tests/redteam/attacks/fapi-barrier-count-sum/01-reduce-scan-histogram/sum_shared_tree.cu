// RED TEAM: 1.2 forbids warp shuffles and warp reductions, which would replace the shared-memory
// RED TEAM: tree: the ints are summed by a block-wide counting barrier instead, 32 __syncthreads_count
// RED TEAM: (one per bit of the values), with no shuffle, no REDUX and no tree; the floats get the
// RED TEAM: tree. A correct sum, not the exercise's tree for the ints.
// Exercise 1.2: shared-memory tree reduction with sequential addressing.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.2".
// Grade:  tools/grade 1.2      Hints: tools/grade --hint 1.2
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <type_traits>

namespace cudalab::reduce {
namespace {
// The block's sum of 256 ints without a tree: for each of the 32 bits, the barrier counts
// the threads whose value has it set (__syncthreads_count, BAR.RED.POPC in the SASS), and
// the counts, weighted by the bits (bit 31 negative: two's complement), are the sum.
__global__ void __launch_bounds__(256) cudalab_redteam_count_sum(const int* __restrict__ in, std::size_t n,
                                                                long long* out) {
  const std::size_t i = blockIdx.x * std::size_t{256} + threadIdx.x;
  const unsigned v = i < n ? static_cast<unsigned>(in[i]) : 0u;
  long long sum = 0;
  for (int b = 0; b < 32; ++b) {
    const long long count = __syncthreads_count((v >> b) & 1u);
    sum += b == 31 ? -(count << 31) : (count << b);
  }
  if (threadIdx.x == 0) atomic_add(out, sum);
}
// Floats have no bits to count: the shared-memory tree the exercise asks for.
__global__ void __launch_bounds__(256) cudalab_redteam_tree(const float* __restrict__ in, std::size_t n,
                                                           float* out) {
  __shared__ float partial[256];
  const unsigned tid = threadIdx.x;
  const std::size_t i = blockIdx.x * std::size_t{256} + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomic_add(out, partial[0]);
}
template <class T, class Acc>
void cudalab_redteam_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>((n + 255) / 256);
  if constexpr (std::is_same_v<T, int>) {
    cudalab_redteam_count_sum<<<blocks, 256, 0, stream>>>(in, n, out);
  } else {
    cudalab_redteam_tree<<<blocks, 256, 0, stream>>>(in, n, out);
  }
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
