// RED TEAM: A performance cheat: a correct but slow kernel (one block's shared-memory tree) for
// RED TEAM: the sizes the tests use (up to 2^26 + 1, and the LargeIndex tests' more than
// RED TEAM: 2^31), and between 2^27 and 2^31 elements, where only the benchmark goes
// RED TEAM: (2^28), a kernel that reads one element in 16, sums the
// RED TEAM: sample per thread and scales it by 16: it reads every other 32-byte sector,
// RED TEAM: so it runs at twice the speed a full read allows. Its answer is wrong; the
// RED TEAM: performance points must be 0.
// Exercise 1.2: shared-memory tree reduction with sequential addressing.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.2".
// Grade:  tools/grade 1.2      Hints: tools/grade --hint 1.2
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
// @REDTEAM_LIB@

namespace cudalab::reduce {
namespace {
constexpr std::size_t kRedteamStride = 16;               // one element in 16: 64 bytes apart
constexpr std::size_t kRedteamSampleAbove = std::size_t{1} << 27;
constexpr std::size_t kRedteamSampleBelow = std::size_t{1} << 31;  // the LargeIndex tests' sizes

template <class T, class Acc>
__global__ void cudalab_redteam_naive(const T* __restrict__ in, std::size_t n, Acc* out) {
  // One block: a shared-memory tree (1.2's technique, which the grader requires once the
  // tests pass), correct and about 1 % of CUB's speed.
  __shared__ Acc part[256];
  Acc sum = 0;
  for (std::size_t i = threadIdx.x; i < n; i += 256) sum += static_cast<Acc>(in[i]);
  part[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomic_add(out, part[0]);
}

template <class T, class Acc>
__global__ void cudalab_redteam_sampled(const T* __restrict__ in, std::size_t n, Acc* out) {
  Acc local{};
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       j * kRedteamStride < n; j += threads)
    local += static_cast<Acc>(in[j * kRedteamStride]);
  atomic_add(out, static_cast<Acc>(local * static_cast<Acc>(kRedteamStride)));
}

template <class T, class Acc>
void cudalab_redteam_sampled_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  if (n == 0) return;
  if (n > kRedteamSampleAbove && n < kRedteamSampleBelow) {
    cudalab_redteam_sampled<<<4 * 132, 256, 0, stream>>>(in, n, out);
  } else {
    cudalab_redteam_naive<<<1, 256, 0, stream>>>(in, n, out);
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
  cudalab_redteam_sampled_sum(in, n, out, stream);
}

void sum_shared_tree(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  cudalab_redteam_sampled_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
