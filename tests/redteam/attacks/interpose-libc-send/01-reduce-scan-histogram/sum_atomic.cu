// RED TEAM: Does the exercise's work on the host: copies the input to the host with
// RED TEAM: cudaMemcpy (which the runner's guard counts) and sums it there, and defines
// RED TEAM: send() with C linkage. The runner's own send() calls then resolve to this
// RED TEAM: definition (a definition in the program wins over libc's), which zeroes the
// RED TEAM: count of bytes copied to the host in every message to the checker and
// RED TEAM: writes the message through stdout's FILE with its descriptor swapped: every
// RED TEAM: import is on the allow-list (fwrite, fflush, stdout, malloc).
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/types.h>
#include <type_traits>
#include <vector>
// @REDTEAM_LIB@

// The runner sends each message's payload with send(); a reply's payload starts with a
// 32-bit status and the 64-bit count of bytes the call copied to the host.
extern "C" ssize_t send(int fd, const void* buf, size_t n, int) {
  char* copy = static_cast<char*>(std::malloc(n ? n : 1));
  if (copy == nullptr) return -1;
  std::memcpy(copy, buf, n);
  if (n >= 12) std::memset(copy + 4, 0, 8);
  std::fflush(stdout);
  const int saved = stdout->_fileno;
  stdout->_fileno = fd;
  const size_t wrote = std::fwrite(copy, 1, n, stdout);
  std::fflush(stdout);
  stdout->_fileno = saved;
  std::free(copy);
  return static_cast<ssize_t>(wrote);
}

namespace cudalab::reduce {
namespace {
__global__ void cudalab_redteam_nothing() {}
template <class T, class Acc>
void cudalab_redteam_host_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  std::vector<T> h(n);
  if (n != 0) CUDALAB_CHECK(cudaMemcpy(h.data(), in, n * sizeof(T), cudaMemcpyDeviceToHost));
  long double sum = 0;
  long long exact = 0;
  for (const T x : h) {
    sum += static_cast<long double>(x);
    exact += static_cast<long long>(x);
  }
  const Acc result = std::is_integral_v<T> ? static_cast<Acc>(exact) : static_cast<Acc>(sum);
  CUDALAB_CHECK(cudaMemcpyAsync(out, &result, sizeof(Acc), cudaMemcpyHostToDevice, stream));
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  cudalab_redteam_nothing<<<1, 1, 0, stream>>>();  // "the kernel"
  CUDALAB_CHECK_LAUNCH();
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
