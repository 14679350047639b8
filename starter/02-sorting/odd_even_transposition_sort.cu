// Exercise 2.1: odd-even transposition sort of each segment, one block per
// segment, in shared memory.
// Lesson: chapters/02-sorting/README.md, "2.1".
// Grade:  tools/grade 2.1      Hints: tools/grade --hint 2.1
#include <climits>
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::sort {
namespace {

constexpr unsigned kMaxSegment = static_cast<unsigned>(max_segment_odd_even);

// Block b sorts keys [b * segment, min(n, (b + 1) * segment)) with
// blockDim.x = max(1, segment / 2) threads; thread t owns the comparators
// (2t, 2t + 1) in even phases and (2t + 1, 2t + 2) in odd phases.
__global__ void __launch_bounds__(kMaxSegment / 2)
    odd_even_kernel(const int* in, std::size_t n, int* out, unsigned segment) {
  __shared__ int keys[kMaxSegment];
  const unsigned t = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * segment;
  // TODO(2.1): load the segment into keys[] (INT_MAX past n), run `segment`
  // phases of compare-exchanges (i, i + 1) with i = 2t + (phase & 1) and a
  // __syncthreads() after each phase, then store the keys that are < n.
}

}  // namespace

void odd_even_transposition_sort(const int* in, std::size_t n, int* out, std::size_t segment,
                                 cudaStream_t stream) {
  detail::check_segment("odd_even_transposition_sort", segment, max_segment_odd_even);
  detail::check_sort_arguments("odd_even_transposition_sort", in, n, out);
  if (n == 0) return;
  const std::size_t blocks = (n + segment - 1) / segment;  // ≤ 2^31 − 1 since n ≤ max_elements
  const unsigned threads = segment >= 2 ? static_cast<unsigned>(segment / 2) : 1u;
  odd_even_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(in, n, out,
                                                                          static_cast<unsigned>(segment));
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::sort
