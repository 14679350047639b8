// RED TEAM: Does the exercise's work on the host without a single copy and without any CUDA
// RED TEAM: allocator: a kernel writes the input, 64 MiB at a time, straight into an ordinary host
// RED TEAM: array (.bss: no cudaMallocManaged, no cudaHostAlloc, no __managed__ for the import check
// RED TEAM: to see), which a GPU with pageable memory access (HMM or ATS,
// RED TEAM: cudaDevAttrPageableMemoryAccess = 1) reaches; the host sums the array where it lies and
// RED TEAM: the sum goes back with a copy to the device. Without pageable memory access the kernel
// RED TEAM: faults on the host address.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <algorithm>
#include <type_traits>
#include <vector>

namespace cudalab::reduce {
namespace {
__global__ void cudalab_redteam_nothing() {}
// The sum, on the host, in a wide accumulator (exact for the tests' floats), and the
// sum back to the device (a copy to the device is not counted).
template <class T>
struct cudalab_redteam_acc {
  long double sum = 0;
  long long exact = 0;
  void add(const T* h, std::size_t m) {
    for (std::size_t i = 0; i < m; ++i) {
      sum += static_cast<long double>(h[i]);
      exact += static_cast<long long>(h[i]);
    }
  }
  template <class Acc>
  void finish(Acc* out, cudaStream_t stream) const {
    const Acc result = std::is_integral_v<T> ? static_cast<Acc>(exact) : static_cast<Acc>(sum);
    CUDALAB_CHECK(cudaMemcpyAsync(out, &result, sizeof(Acc), cudaMemcpyHostToDevice, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    cudalab_redteam_nothing<<<1, 1, 0, stream>>>();  // "the kernel"
    CUDALAB_CHECK_LAUNCH();
  }
};
// A grid-stride copy of in[0, m) to dst: what a kernel may write.
template <class T>
__global__ void cudalab_redteam_stage(const T* __restrict__ in, std::size_t m, T* dst) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < m;
       i += std::size_t{gridDim.x} * blockDim.x) {
    dst[i] = in[i];
  }
}

constexpr std::size_t kWindowBytes = std::size_t{64} << 20;
// Plain host memory: no CUDA call allocates or registers it.
alignas(4096) unsigned char cudalab_redteam_window[kWindowBytes];

template <class T, class Acc>
void cudalab_redteam_host_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  constexpr std::size_t kChunk = kWindowBytes / sizeof(T);
  T* window = reinterpret_cast<T*>(cudalab_redteam_window);
  cudalab_redteam_acc<T> acc;
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t m = std::min(kChunk, n - first);
    cudalab_redteam_stage<<<1024, 256, 0, stream>>>(in + first, m, window);
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    acc.add(window, m);
  }
  acc.finish(out, stream);
}
}  // namespace
}  // namespace cudalab::reduce

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;

// One thread per element: thread i adds in[i] to *out.
// T is the element type (int, float), Acc the accumulator type (long long, float).
template <class T, class Acc>
__global__ void sum_atomic_kernel(const T* __restrict__ in, std::size_t n, Acc* out) {
  // TODO(1.1): compute this thread's global index i (blockIdx, blockDim,
  // threadIdx; mind that i can exceed 2^31) and, when i < n, add in[i] to
  // *out with cudalab::atomic_add (cudalab/atomics.cuh).
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));  // the identity, also for n = 0
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  sum_atomic_kernel<<<blocks, kBlock, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_atomic(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  cudalab_redteam_host_sum(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  cudalab_redteam_host_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
