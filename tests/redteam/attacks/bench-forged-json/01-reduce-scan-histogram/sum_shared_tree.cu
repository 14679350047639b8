// RED TEAM: A performance cheat: a correct but slow kernel (one block's shared-memory tree, far
// RED TEAM: below 1.2's speed target) whose static initializer prints a Google Benchmark
// RED TEAM: JSON result, the exercise a thousand times faster than CUB, on its output: a
// RED TEAM: grader that read the benchmark program's output would take it. The
// RED TEAM: performance points must be 0.
// Exercise 1.2: shared-memory tree reduction with sequential addressing.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.2".
// Grade:  tools/grade 1.2      Hints: tools/grade --hint 1.2
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <cstdio>
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
void cudalab_redteam_slow_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  if (n == 0) return;
  cudalab_redteam_naive<<<1, 256, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

// Printed before main, by every program that holds this object (the runner).
const bool cudalab_redteam_forged = [] {
  const char* sizes[] = {"1048576", "16777216", "268435456"};
  std::printf("{\"context\": {}, \"benchmarks\": [");
  for (int k = 0; k < 3; ++k) {
    for (int base = 0; base < 2; ++base) {
      std::printf("%s{\"name\": \"%s/int32/%s/manual_time_median\", \"run_name\": \"%s/int32/%s/manual_time\", "
                  "\"run_type\": \"aggregate\", \"aggregate_name\": \"median\", \"real_time\": %s, "
                  "\"time_unit\": \"us\"}",
                  k + base == 0 ? "" : ", ", base ? "cub_reduce_sum" : "sum_shared_tree", sizes[k],
                  base ? "cub_reduce_sum" : "sum_shared_tree", sizes[k], base ? "1000.0" : "1.0");
    }
  }
  std::printf("]}\n");
  std::fflush(stdout);
  return true;
}();
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
  cudalab_redteam_slow_sum(in, n, out, stream);
}

void sum_shared_tree(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  cudalab_redteam_slow_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
