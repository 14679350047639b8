// RED TEAM: Makes the compiler write a 256 MiB object: a host array of 256 MiB whose
// RED TEAM: first byte is 1 goes to .data, zeros included, so the assembler writes all of
// RED TEAM: it (about 7 s), and the link copies it into the runner (256 MiB more). Repeated
// RED TEAM: in every exercise (and with 1 GiB), a class's disk fills and other students'
// RED TEAM: builds fail. (`asm(".fill ...")` does the same in 2 s, but 1.1 refuses inline
// RED TEAM: assembly.) Bounded so that a grader without the file-size limit writes 512 MiB.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"

// Not static and not in an unnamed namespace: kept, unused.
char cudalab_redteam_fill[std::size_t{256} << 20] = {1};

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
