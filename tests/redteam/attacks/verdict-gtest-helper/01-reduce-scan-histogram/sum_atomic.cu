// RED TEAM: Defines, under their mangled names, gtest's comparison-failure helpers that
// RED TEAM: ASSERT_EQ and ASSERT_LE call when the values differ
// RED TEAM: (testing::internal::CmpHelperEQFailure<long long, long long>, <float, float>,
// RED TEAM: CmpHelperOpFailure<double, double>), returning success: a strong definition
// RED TEAM: that wins over the test program's weak template instantiations at link
// RED TEAM: time, so that no comparison can fail. The kernel below is the untouched
// RED TEAM: starter's.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <gtest/gtest.h>
// @REDTEAM_LIB@

namespace {
using Result = ::testing::AssertionResult;
}  // namespace
Result cudalab_redteam_eq_ll(const char*, const char*, const long long&, const long long&) __asm__(
    "_ZN7testing8internal18CmpHelperEQFailureIxxEENS_15AssertionResultEPKcS4_RKT_RKT0_");
Result cudalab_redteam_eq_ll(const char*, const char*, const long long&, const long long&) { return Result(true); }
Result cudalab_redteam_eq_ff(const char*, const char*, const float&, const float&) __asm__(
    "_ZN7testing8internal18CmpHelperEQFailureIffEENS_15AssertionResultEPKcS4_RKT_RKT0_");
Result cudalab_redteam_eq_ff(const char*, const char*, const float&, const float&) { return Result(true); }
Result cudalab_redteam_op_dd(const char*, const char*, const double&, const double&, const char*) __asm__(
    "_ZN7testing8internal18CmpHelperOpFailureIddEENS_15AssertionResultEPKcS4_RKT_RKT0_S4_");
Result cudalab_redteam_op_dd(const char*, const char*, const double&, const double&, const char*) {
  return Result(true);
}

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
