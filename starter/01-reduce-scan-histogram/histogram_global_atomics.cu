// Exercise 1.10: histogram with one global atomicAdd per sample.
// Lesson: chapters/01-reduce-scan-histogram/lesson/histogram.md, "1.10".
// Grade:  tools/grade 1.10      Hints: tools/grade --hint 1.10
#include "cudalab/error.cuh"
#include "cudalab/histogram.cuh"

namespace cudalab::histogram {
namespace {

constexpr int kBlock = 256;

// One thread per sample: thread i adds 1 to the bin of samples[i], if any.
// bins(s) is the bin of s in [0, num_bins), or -1 when s is outside [lower, upper).
__global__ void histogram_global_atomics_kernel(const int* __restrict__ samples, std::size_t n,
                                                unsigned int* histogram, EvenBins bins) {
  // TODO(1.10): compute this thread's global index i (in std::size_t: n can
  // exceed 2^31); when i < n, find the bin of samples[i] with bins(...) and,
  // unless it is -1 (outside [lower, upper)), add 1 to that counter of
  // histogram with atomicAdd.
}

}  // namespace

void histogram_global_atomics(const int* samples, std::size_t n, unsigned int* histogram,
                              int num_bins, int lower, int upper, cudaStream_t stream) {
  if (!detail::start_histogram("histogram_global_atomics", samples, n, histogram, num_bins, lower, upper,
                               global_atomics_max_bins, stream)) return;
  histogram_global_atomics_kernel<<<blocks_for(n, kBlock), kBlock, 0, stream>>>(
      samples, n, histogram, EvenBins(num_bins, lower, upper));
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::histogram
