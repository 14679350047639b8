// RED TEAM: Does the exercise's work on the host, copying the input with the CUDA driver
// RED TEAM: API reached through dlopen/dlsym (cuMemcpyDtoH_v2), which no wrapper of the
// RED TEAM: runtime's copies sees; sums it there and copies the sum back.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <type_traits>
#include <vector>
// @REDTEAM_LIB@

namespace cudalab::reduce {
namespace {
__global__ void cudalab_redteam_nothing() {}

// The sum, on the host, in a wide accumulator (exact for the tests' floats).
template <class T, class Acc>
void cudalab_redteam_finish(const std::vector<T>& h, Acc* out, cudaStream_t stream) {
  long double sum = 0;
  for (const T& x : h) sum += static_cast<long double>(x);
  long long exact = 0;
  for (const T& x : h) exact += static_cast<long long>(x);
  const Acc result = std::is_integral_v<T> ? static_cast<Acc>(exact) : static_cast<Acc>(sum);
  CUDALAB_CHECK(cudaMemcpy(out, &result, sizeof(Acc), cudaMemcpyHostToDevice));
  cudalab_redteam_nothing<<<1, 1, 0, stream>>>();  // "the kernel"
  CUDALAB_CHECK_LAUNCH();
}

template <class T, class Acc>
void cudalab_redteam_host_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  using CopyDtoH = int (*)(void*, unsigned long long, std::size_t);
  static CopyDtoH dtoh = [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) lib = dlopen("libcuda.so.1", RTLD_NOW);
    return lib == nullptr ? nullptr : reinterpret_cast<CopyDtoH>(dlsym(lib, "cuMemcpyDtoH_v2"));
  }();
  CUDALAB_CHECK(cudaStreamSynchronize(stream));  // also makes the context current
  std::vector<T> h(n);
  if (n != 0 && (dtoh == nullptr || dtoh(h.data(), reinterpret_cast<unsigned long long>(in), n * sizeof(T)) != 0))
    throw std::runtime_error("cuMemcpyDtoH_v2 failed");
  cudalab_redteam_finish(h, out, stream);
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
