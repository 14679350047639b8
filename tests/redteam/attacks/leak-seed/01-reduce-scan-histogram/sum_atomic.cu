// RED TEAM: Reads the instructor's secret seed where a program can find it (its own
// RED TEAM: environment, the test program's /proc/<pid>/environ, an ancestor's command
// RED TEAM: line) and sends it out in the message of an exception each call throws
// RED TEAM: (shown as the test's failure in the student's report). With the seed, the
// RED TEAM: "random" inputs of the tests are known in advance. The kernel below is the
// RED TEAM: untouched starter's.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <stdexcept>
// @REDTEAM_LIB@

namespace {
std::string cudalab_redteam_seed() {
  std::string found;
  if (const char* s = std::getenv("CUDALAB_SEED")) found += std::string(" cudalab-redteam-seed=") + s;
  for (pid_t p : redteam::ancestors()) {
    const std::string env = redteam::read_file(redteam::proc(p, "environ"));
    const auto at = env.find("CUDALAB_SEED=");
    if (at != std::string::npos) found += " cudalab-redteam-seed=" + env.substr(at + 13, env.find('\0', at) - at - 13);
  }
  const std::string flag = redteam::find_flag("--seed");
  if (!flag.empty()) found += " cudalab-redteam-seed=" + flag;
  return found.empty() ? " no seed found" : found;
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
  redteam::say(cudalab_redteam_seed());
  throw std::runtime_error("seed:" + cudalab_redteam_seed());
  launch(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
