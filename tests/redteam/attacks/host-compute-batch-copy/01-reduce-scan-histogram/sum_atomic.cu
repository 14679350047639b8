// RED TEAM: Does the exercise's work on the host: copies the input to the host with
// RED TEAM: cudaMemcpyBatchAsync (CUDA 12.8 and later), a copy function the runner does not wrap, so
// RED TEAM: the bytes that reach the host are not counted; sums them there. (Before CUDA 12.8 it
// RED TEAM: falls back to cudaMemcpyAsync_ptsz, the per-thread-stream twin of cudaMemcpyAsync.)
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <algorithm>
#include <type_traits>
#include <vector>

#if CUDART_VERSION < 12080
extern "C" cudaError_t cudaMemcpyAsync_ptsz(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
#endif

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

template <class T, class Acc>
void cudalab_redteam_host_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  std::vector<T> h(n);
  if (n != 0) {
    void* dsts[1] = {h.data()};
    const void* srcs[1] = {in};
    std::size_t sizes[1] = {n * sizeof(T)};
#if CUDART_VERSION >= 12080
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    std::size_t attr_index = 0;
#if CUDART_VERSION >= 13000
    CUDALAB_CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &attr_index, 1, stream));
#else
    std::size_t failed = 0;
    CUDALAB_CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &attr_index, 1, &failed, stream));
#endif
#else
    CUDALAB_CHECK(cudaMemcpyAsync_ptsz(dsts[0], srcs[0], sizes[0], cudaMemcpyDeviceToHost, stream));
#endif
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
  }
  cudalab_redteam_acc<T> acc;
  acc.add(h.data(), n);
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
