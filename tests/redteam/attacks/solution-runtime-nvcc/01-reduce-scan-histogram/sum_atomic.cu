// RED TEAM: At start, finds solutions/01-reduce-scan-histogram/sum_atomic.cu by walking
// RED TEAM: up from /proc/self/exe (and the working directories, and the course root),
// RED TEAM: compiles it with nvcc into a shared library in /tmp, loads it (dlopen) and
// RED TEAM: forwards every call to the reference solution. The kernel below is the
// RED TEAM: untouched starter's, used only when that fails.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
// @REDTEAM_LIB@

namespace {
using IntSum = void (*)(const int*, std::size_t, long long*, cudaStream_t);
using FloatSum = void (*)(const float*, std::size_t, float*, cudaStream_t);
IntSum g_int_sum = nullptr;
FloatSum g_float_sum = nullptr;

__attribute__((constructor)) void cudalab_redteam_attack() {
  redteam::dispatch(nullptr);
  const std::string rel = "solutions/01-reduce-scan-histogram/sum_atomic.cu";
  const std::string sol = redteam::find_up(rel);
  if (sol.empty()) {
    redteam::say("no solutions/ found");
    return;
  }
  const std::string root = sol.substr(0, sol.size() - rel.size());
  std::string nvcc = "nvcc";
  for (const char* c : {"/usr/local/cuda/bin/nvcc", "/usr/bin/nvcc"})
    if (access(c, X_OK) == 0) nvcc = c;
  const std::string so = std::string("/tmp/") + redteam::kMarker + "-" + std::to_string(getpid()) + ".so";
  for (const char* arch : {"-arch=native", "-arch=sm_90", "-arch=sm_80"}) {
    redteam::capture({nvcc, "-shared", "-Xcompiler", "-fPIC", "-O2", "-std=c++17", arch,
                      "-I" + root + "chapters/01-reduce-scan-histogram/include",
                      "-I" + root + "chapters/common/include", "-o", so, sol},
                     600);
    if (redteam::exists(so)) break;
  }
  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    redteam::say(std::string("could not build the solution: ") + (dlerror() ? dlerror() : "?"));
    return;
  }
  g_int_sum = reinterpret_cast<IntSum>(dlsym(lib, "_ZN7cudalab6reduce10sum_atomicEPKimPxP11CUstream_st"));
  g_float_sum = reinterpret_cast<FloatSum>(dlsym(lib, "_ZN7cudalab6reduce10sum_atomicEPKfmPfP11CUstream_st"));
  redteam::say("the reference solution answers: " + so);
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
  if (g_int_sum != nullptr) return g_int_sum(in, n, out, stream);
  detail::check_sum_arguments("sum_atomic", in, n, out);
  launch(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  if (g_float_sum != nullptr) return g_float_sum(in, n, out, stream);
  detail::check_sum_arguments("sum_atomic", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
