// Exercise 2.2: bitonic sort of each segment, one block per segment, in
// shared memory.
// Lesson: chapters/02-sorting/README.md, "2.2".
// Grade:  tools/grade 2.2      Hints: tools/grade --hint 2.2
#include <climits>
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::sort {
namespace {

constexpr unsigned kMaxSegment = static_cast<unsigned>(max_segment_bitonic);

// Block b sorts keys [b * segment, min(n, (b + 1) * segment)) with
// blockDim.x = max(1, segment / 2) threads: one comparator per thread and step.
__global__ void __launch_bounds__(kMaxSegment / 2)
    bitonic_kernel(const int* in, std::size_t n, int* out, unsigned segment) {
  __shared__ int keys[kMaxSegment];
  const unsigned t = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * segment;
  for (unsigned i = t; i < segment; i += blockDim.x) keys[i] = base + i < n ? in[base + i] : INT_MAX;
  __syncthreads();
  // TODO(2.2): for k = 2, 4, ..., segment and j = k / 2, ..., 1: thread t
  // compare-exchanges i = 2t - (t & (j - 1)) with its partner i ^ j,
  // ascending where (i & k) == 0, descending elsewhere; __syncthreads()
  // after every step.
  for (unsigned i = t; i < segment; i += blockDim.x)
    if (base + i < n) out[base + i] = keys[i];
}

}  // namespace

void bitonic_sort_shared(const int* in, std::size_t n, int* out, std::size_t segment, cudaStream_t stream) {
  detail::check_segment("bitonic_sort_shared", segment, max_segment_bitonic);
  detail::check_sort_arguments("bitonic_sort_shared", in, n, out);
  if (n == 0) return;
  const std::size_t blocks = (n + segment - 1) / segment;
  const unsigned threads = segment >= 2 ? static_cast<unsigned>(segment / 2) : 1u;
  bitonic_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(in, n, out,
                                                                        static_cast<unsigned>(segment));
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::sort
