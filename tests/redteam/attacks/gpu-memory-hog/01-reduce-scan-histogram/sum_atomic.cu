// RED TEAM: Takes the GPU's memory from the submission graded beside it: at its first call,
// RED TEAM: sum_atomic allocates all of the GPU's free memory but 256 MiB (cudaMemGetInfo,
// RED TEAM: cudaMalloc: 1.1's largest test input is 256 MiB, a new CUDA context a few hundred),
// RED TEAM: touches it (cudaMemset), holds it 20 s (the host spins on the clock), frees it and
// RED TEAM: goes on with the untouched starter's kernel, whose sum is wrong. It uses only what
// RED TEAM: the grader's check of the object's imports lets an exercise call.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include <chrono>
#include <cstdio>

#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"

namespace cudalab::reduce {
namespace {

bool cudalab_redteam_hogged = false;

// Once per runner: the GPU's free memory but 256 MiB, allocated, touched and held 20 s.
void cudalab_redteam_hog() {
  if (cudalab_redteam_hogged) return;
  cudalab_redteam_hogged = true;
  std::size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  const std::size_t leave = std::size_t{256} << 20;
  std::size_t bytes = free_bytes > leave ? free_bytes - leave : 0;
  void* p = nullptr;
  while (bytes >= (std::size_t{64} << 20) && cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // a little less, until it fits
    p = nullptr;
    bytes -= bytes / 16;
  }
  if (p == nullptr) return;
  cudaMemset(p, 1, bytes);  // resident, not just reserved
  cudaDeviceSynchronize();
  std::fprintf(stderr, "gpu-memory-hog: holding %zu MiB of the GPU's %zu MiB for 20 s\n", bytes >> 20,
               total >> 20);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < end) {
  }
  cudaFree(p);
}

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
  cudalab_redteam_hog();
  if (!detail::start_sum(out, n, stream)) return;  // *out = 0, the identity, also for n = 0
  sum_atomic_kernel<<<blocks_for(n, kBlock), kBlock, 0, stream>>>(in, n, out);
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
