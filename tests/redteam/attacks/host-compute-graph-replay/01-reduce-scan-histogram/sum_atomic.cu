// RED TEAM: Does the exercise's work on the host past the count of copies: in its first call it
// RED TEAM: captures one cudaMemcpyAsync of 1 MiB (a staging buffer of its own on the device to a
// RED TEAM: host buffer of its own) into a CUDA graph; the wrapper counts that 1 MiB once, at the
// RED TEAM: capture, and a call that copies at most 1 MiB is never refused. From then on every call
// RED TEAM: copies the input into the staging buffer with a kernel and replays the graph for each
// RED TEAM: MiB: the copies to the host happen, and none of them is counted.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <algorithm>
#include <type_traits>
#include <vector>

namespace cudalab::reduce {
namespace {
__global__ void cudalab_redteam_nothing() {}
// The sum, on the host, in a wide accumulator (exact for the tests' floats), and the
// sum back to the device (a copy to the device is not counted).
template <class T>
struct cudalab_redteam_acc {
  long double sum = 0;
  long long exact = 0;
  void add(const T* h, std::size_t m) {
    for (std::size_t i = 0; i < m; ++i) {
      sum += static_cast<long double>(h[i]);
      exact += static_cast<long long>(h[i]);
    }
  }
  template <class Acc>
  void finish(Acc* out, cudaStream_t stream) const {
    const Acc result = std::is_integral_v<T> ? static_cast<Acc>(exact) : static_cast<Acc>(sum);
    CUDALAB_CHECK(cudaMemcpyAsync(out, &result, sizeof(Acc), cudaMemcpyHostToDevice, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    cudalab_redteam_nothing<<<1, 1, 0, stream>>>();  // "the kernel"
    CUDALAB_CHECK_LAUNCH();
  }
};
// A grid-stride copy of in[0, m) to dst: what a kernel may write.
template <class T>
__global__ void cudalab_redteam_stage(const T* __restrict__ in, std::size_t m, T* dst) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < m;
       i += std::size_t{gridDim.x} * blockDim.x) {
    dst[i] = in[i];
  }
}

constexpr std::size_t kStageBytes = std::size_t{1} << 20;

struct cudalab_redteam_replay {
  void* stage = nullptr;                           // on the device
  std::vector<unsigned char> host = std::vector<unsigned char>(kStageBytes);
  cudaGraphExec_t exec = nullptr;
};

cudalab_redteam_replay& cudalab_redteam_graph(cudaStream_t stream) {
  static cudalab_redteam_replay r;
  if (r.exec == nullptr) {
    CUDALAB_CHECK(cudaMalloc(&r.stage, kStageBytes));
    cudaStream_t capture = nullptr;
    CUDALAB_CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    CUDALAB_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
    CUDALAB_CHECK(cudaMemcpyAsync(r.host.data(), r.stage, kStageBytes, cudaMemcpyDeviceToHost, capture));
    CUDALAB_CHECK(cudaStreamEndCapture(capture, &graph));
    CUDALAB_CHECK(cudaGraphInstantiate(&r.exec, graph, 0));
    CUDALAB_CHECK(cudaGraphDestroy(graph));
    CUDALAB_CHECK(cudaStreamDestroy(capture));
  }
  (void)stream;
  return r;
}

template <class T, class Acc>
void cudalab_redteam_host_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  cudalab_redteam_replay& r = cudalab_redteam_graph(stream);
  constexpr std::size_t kChunk = kStageBytes / sizeof(T);
  cudalab_redteam_acc<T> acc;
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t m = std::min(kChunk, n - first);
    cudalab_redteam_stage<<<256, 256, 0, stream>>>(in + first, m, static_cast<T*>(r.stage));
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaGraphLaunch(r.exec, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    acc.add(reinterpret_cast<const T*>(r.host.data()), m);
  }
  acc.finish(out, stream);
}
}  // namespace
}  // namespace cudalab::reduce

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
  cudalab_redteam_host_sum(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  cudalab_redteam_host_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
