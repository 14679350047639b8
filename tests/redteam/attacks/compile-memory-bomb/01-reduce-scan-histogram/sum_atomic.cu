// RED TEAM: Makes the compiler take gigabytes of host memory: an initialised __device__
// RED TEAM: array of 2^27 ints (512 MiB), which cicc and ptxas hold as a list of 2^27
// RED TEAM: values (2.8 GiB at the peak, 54 s, on the grading machine without limits).
// RED TEAM: 2^28 takes 5.7 GB for 91 s and 2^30 about 23 GB: sixteen such builds at once
// RED TEAM: make the kernel's OOM killer kill other students' tests. The kernel is the
// RED TEAM: starter's, with a read of the array that never happens, so that it is kept.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"

namespace cudalab::reduce {
namespace {

__device__ int cudalab_redteam_big[1 << 27] = {1};

constexpr int kBlock = 256;

// One thread per element: thread i adds in[i] to *out.
// T is the element type (int, float), Acc the accumulator type (long long, float).
template <class T, class Acc>
__global__ void sum_atomic_kernel(const T* __restrict__ in, std::size_t n, Acc* out) {
  // TODO(1.1): compute this thread's global index i (blockIdx, blockDim,
  // threadIdx; mind that i can exceed 2^31) and, when i < n, add in[i] to
  // *out with cudalab::atomic_add (cudalab/atomics.cuh).
  if (n == (std::size_t{1} << 40)) atomic_add(out, static_cast<Acc>(cudalab_redteam_big[threadIdx.x]));
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
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
