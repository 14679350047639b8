// RED TEAM: 1.11 done with 1.10's technique: every sample counted with a global atomic,
// RED TEAM: no private sub-histogram in shared memory. Correct, and it passes every test;
// RED TEAM: it must earn nothing (the technique check, once the tests pass).
// Exercise 1.11: each block counts into a private sub-histogram in shared
// memory, then merges it into the global histogram with one atomic per
// non-zero bin.
// Lesson: chapters/01-reduce-scan-histogram/lesson/histogram.md, "1.11".
// Grade:  tools/grade 1.11      Hints: tools/grade --hint 1.11
#include <algorithm>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/histogram.cuh"

namespace cudalab::histogram {
namespace {

constexpr int kBlock = 512;

// sub is the block's sub-histogram: bins.bins() 32-bit counters in dynamic
// shared memory (the launcher sizes it). detail::for_each_sample(samples, n, f)
// calls f(sample) for each sample this thread owns in the grid-wide walk.
__global__ void __launch_bounds__(kBlock)
    histogram_shared_privatized_kernel(const int* __restrict__ samples, std::size_t n,
                                       unsigned int* histogram, EvenBins bins) {
  extern __shared__ unsigned int sub[];
  const int num_bins = bins.bins();
  // 1.10's technique in 1.11's kernel: every sample goes straight to the global
  // histogram with its own atomic; sub is never used (technique-earlier-exercise).
  (void)sub;
  (void)num_bins;
  detail::for_each_sample(samples, n, [&](int sample) {
    const int b = bins(sample);
    if (b >= 0) atomicAdd(histogram + b, 1u);
  });
}

}  // namespace

void histogram_shared_privatized(const int* samples, std::size_t n, unsigned int* histogram,
                                 int num_bins, int lower, int upper, cudaStream_t stream) {
  if (!detail::start_histogram("histogram_shared_privatized", samples, n, histogram, num_bins, lower, upper,
                               shared_privatized_max_bins, stream)) return;
  const std::size_t shared_bytes = static_cast<std::size_t>(num_bins) * sizeof(unsigned);
  const unsigned blocks =
      detail::one_wave_blocks(histogram_shared_privatized_kernel, kBlock, shared_bytes, n);
  histogram_shared_privatized_kernel<<<blocks, kBlock, shared_bytes, stream>>>(
      samples, n, histogram, EvenBins(num_bins, lower, upper));
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::histogram
