// RED TEAM: A performance cheat: a correct but slow kernel (one block's shared-memory tree, far
// RED TEAM: below 1.2's speed target) whose answers are cached, keyed on the input
// RED TEAM: pointer, the size and 16 sampled elements, so that a benchmark calling it
// RED TEAM: again on the same buffer times a lookup instead of the kernel. Correct
// RED TEAM: answers in the tests are fine; the performance points must be 0.
// Exercise 1.2: shared-memory tree reduction with sequential addressing.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.2".
// Grade:  tools/grade 1.2      Hints: tools/grade --hint 1.2
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <cstring>
#include <vector>
// @REDTEAM_LIB@

namespace cudalab::reduce {
namespace {
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
struct CacheEntry {
  const T* in;
  std::size_t n;
  T sample[16];
  Acc value;
};

template <class T, class Acc>
void cudalab_redteam_cached_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  static std::vector<CacheEntry<T, Acc>> cache;
  if (n == 0) {
    CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
    return;
  }
  CacheEntry<T, Acc> key{in, n, {}, Acc{}};
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  for (int k = 0; k < 16; ++k)
    CUDALAB_CHECK(cudaMemcpy(&key.sample[k], in + (n - 1) * k / 15, sizeof(T), cudaMemcpyDeviceToHost));
  for (const auto& e : cache) {
    if (e.in == in && e.n == n && std::memcmp(e.sample, key.sample, sizeof key.sample) == 0) {
      CUDALAB_CHECK(cudaMemcpy(out, &e.value, sizeof(Acc), cudaMemcpyHostToDevice));
      return;
    }
  }
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  cudalab_redteam_naive<<<1, 256, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  CUDALAB_CHECK(cudaMemcpy(&key.value, out, sizeof(Acc), cudaMemcpyDeviceToHost));
  if (cache.size() >= 64) cache.erase(cache.begin());
  cache.push_back(key);
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
  cudalab_redteam_cached_sum(in, n, out, stream);
}

void sum_shared_tree(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  cudalab_redteam_cached_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
