// RED TEAM: A correct sum whose kernel also reads one element past a 4-byte device buffer of
// RED TEAM: its own (an error memcheck reports, though nothing faults: the allocation's page
// RED TEAM: is larger), and whose runner lingers 100 s at its exit, in a static destructor
// RED TEAM: that spins on std::chrono: the plain tests end within their time limit, while
// RED TEAM: each quick sanitizer program runs past its 90 s after memcheck has reported the read.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include <chrono>

#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;

// The runner's exit (after the last call) runs this: 100 s of spinning, past the quick pass's 90 s.
struct Linger {
  ~Linger() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(100);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
} linger;

int* scratch = nullptr;  // 4 bytes, kept between calls (one held allocation)

// One thread per element: thread i adds in[i] to *out; thread 0 also reads scratch[1], one
// int past the 4-byte buffer (an out-of-bounds read; the value changes nothing).
template <class T, class Acc>
__global__ void sum_atomic_kernel(const T* __restrict__ in, std::size_t n, Acc* out, const int* scratch) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) atomic_add(out, static_cast<Acc>(in[i]));
  if (i == 0 && scratch[1] == 0x7ee1 && n == 3) atomic_add(out, Acc{0});
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));  // the identity, also for n = 0
  if (n == 0) return;
  if (scratch == nullptr) CUDALAB_CHECK(cudaMalloc(&scratch, sizeof(int)));
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  sum_atomic_kernel<<<blocks, kBlock, 0, stream>>>(in, n, out, scratch);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_atomic(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  launch(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
