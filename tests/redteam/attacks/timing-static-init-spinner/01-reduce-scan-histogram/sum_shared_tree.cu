// RED TEAM: Slows the baseline down instead of speeding itself up: a static initializer, run when
// RED TEAM: the runner starts (at the benchmark program's first allocation, possibly before the
// RED TEAM: baseline's benchmark), leaves spinning kernels on every SM for about 10 s without
// RED TEAM: waiting for them, so that CUB's time, measured meanwhile in the checker, comes out
// RED TEAM: longer and the ratio of this slow (one block's shared-memory tree) sum higher.
// Exercise 1.2: shared-memory tree reduction with sequential addressing.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.2".
// Grade:  tools/grade 1.2      Hints: tools/grade --hint 1.2
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"

namespace cudalab::reduce {
namespace {
// Spins for about `cycles` SM clock cycles.
__global__ void cudalab_redteam_spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// A static initializer runs when the runner starts, before its first call: it fills every
// SM with spinning blocks for about 10 s (at 2 GHz) on a stream of its own, and does not
// wait for them. The runner starts at the benchmark program's first allocation; when the
// baseline's benchmark comes first, the baseline is timed while these blocks time-share
// the GPU with it, and every call of this file is timed after they are gone.
struct cudalab_redteam_hog {
  cudalab_redteam_hog() {
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess || sms <= 0) {
      cudaGetLastError();
      return;
    }
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    cudalab_redteam_spin<<<static_cast<unsigned>(sms) * 16u, 128, 0, s>>>(20'000'000'000LL);
    cudaGetLastError();
  }
};
const cudalab_redteam_hog kCudalabRedteamHog;

// A correct but slow sum: one block's shared-memory tree (1.2's technique, which the grader
// requires once the tests pass; about 1 % of CUB's speed), which a baseline slowed down
// several times over would lift into performance points.
template <class T, class Acc>
__global__ void cudalab_redteam_atomic(const T* __restrict__ in, std::size_t n, Acc* out) {
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
void cudalab_redteam_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  if (n == 0) return;
  cudalab_redteam_atomic<<<1, 256, 0, stream>>>(in, n, out);
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
