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
  // BEGIN SOLUTION
  // Load: two keys per thread, INT_MAX past the end of the array (the padding
  // sorts to the end of the segment and is never stored).
  for (unsigned i = t; i < segment; i += blockDim.x) keys[i] = base + i < n ? in[base + i] : INT_MAX;
  __syncthreads();

  // segment phases; in phase p the pairs (i, i + 1) with i ≡ p (mod 2).
  for (unsigned phase = 0; phase < segment; ++phase) {
    const unsigned i = 2 * t + (phase & 1);
    if (i + 1 < segment) {
      const int a = keys[i];
      const int b = keys[i + 1];
      if (b < a) {
        keys[i] = b;
        keys[i + 1] = a;
      }
    }
    __syncthreads();  // every thread, every phase: outside the if
  }

  for (unsigned i = t; i < segment; i += blockDim.x)
    if (base + i < n) out[base + i] = keys[i];
  // STARTER:
  // // TODO(2.1): load the segment into keys[] (INT_MAX past n), run `segment`
  // // phases of compare-exchanges (i, i + 1) with i = 2t + (phase & 1) and a
  // // __syncthreads() after each phase, then store the keys that are < n.
  // END SOLUTION
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
