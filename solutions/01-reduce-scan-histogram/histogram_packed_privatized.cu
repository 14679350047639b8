// Exercise 1.12: a privatized histogram for up to 65,536 bins: 32-bit
// shared-memory counters while they fit in 48 KiB (up to 12,288 bins, as in
// 1.11), above that 16-bit counters packed two to a 32-bit word (65,536 bins
// in 128 KiB), whose wraps spill 65,536 to the global histogram, with runs of
// equal bins added by one atomic. On a GPU whose opt-in shared memory per
// block holds fewer packed bins (99 KiB: 50,688 bins; a T4's 64 KiB: 32,768),
// the launcher counts the bins in windows that fit, one pass over the samples
// per window.
// Lesson: chapters/01-reduce-scan-histogram/lesson/histogram.md, "1.12".
// Grade:  tools/grade 1.12      Hints: tools/grade --hint 1.12
#include <algorithm>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/histogram.cuh"

namespace cudalab::histogram {
namespace {

// Up to this many bins, 32-bit counters fit in the 48 KiB every block may use.
constexpr int kWideMaxBins = 12288;

// Adds k (1 <= k <= 0xFFFF) to the 16-bit counter of bin b in the packed
// sub-histogram `words`: bin b is the low half (b even) or the high half
// (b odd) of words[b / 2]. When the add wraps the counter past 0xFFFF, the
// 65,536 counts it lost go straight to histogram[b]; a wrap of a low half
// also carries 1 into the high half (bin b + 1), which the same thread undoes
// in histogram[b + 1].
__device__ __forceinline__ void add_packed(unsigned int* words, int b, unsigned k,
                                           unsigned int* histogram, int num_bins) {
  // BEGIN SOLUTION
  const unsigned shift = (b & 1) * 16;
  const unsigned old = atomicAdd(words + b / 2, k << shift);
  if (((old >> shift) & 0xFFFFu) + k > 0xFFFFu) {  // rare: once per 65,536 counts of a bin
    atomicAdd(histogram + b, 0x10000u);
    if (shift == 0 && b + 1 < num_bins) {
      // The carry is not a count of bin b + 1: subtract it (add 2^32 - 1);
      // if it wrapped that counter too (old high half 0xFFFF), add the
      // 65,536 the high half lost: -1 + 65,536 = 0xFFFF.
      atomicAdd(histogram + b + 1, (old >> 16) == 0xFFFFu ? 0xFFFFu : 0xFFFFFFFFu);
    }
  }
  // STARTER:
  // // TODO(1.12): add k << 16 * (b & 1) to words[b / 2] with one shared-memory
  // // atomicAdd; from the old value it returns, detect that the 16-bit counter
  // // of b wrapped (old counter + k > 0xFFFF) and then add the lost 65,536 to
  // // histogram[b]; a wrapped low half also carried 1 into bin b + 1 (if it
  // // exists), which histogram[b + 1] must take back (unsigned arithmetic
  // // wraps, so adding 0xFFFFFFFF subtracts 1).
  // END SOLUTION
}

// The bins [first, first + count) of `all`, renumbered from 0; every other
// sample maps to -1 (not counted). A launch with it counts one window of the
// histogram into histogram + first.
struct BinWindow {
  EvenBins all;
  int first;
  int count;
  __device__ __forceinline__ int operator()(int sample) const {
    const int b = all(sample);
    return static_cast<unsigned>(b - first) < static_cast<unsigned>(count) ? b - first : -1;
  }
  __host__ __device__ int bins() const { return count; }
};

// kPacked = false: counters[b] is bin b's 32-bit counter (num_bins words).
// kPacked = true:  bin b is half b % 2 of counters[b / 2] ((num_bins + 1) / 2
// words). The launcher sizes the dynamic shared memory. detail::for_each_sample
// (samples, n, f) calls f(sample) for each sample this thread owns in the
// grid-wide walk. Bins: EvenBins, or a BinWindow of it where the whole
// histogram does not fit the device's shared memory.
template <bool kPacked, class Bins = EvenBins>
__global__ void __launch_bounds__(kPacked ? 1024 : 512)
    histogram_packed_privatized_kernel(const int* __restrict__ samples, std::size_t n,
                                       unsigned int* histogram, Bins bins) {
  extern __shared__ unsigned int counters[];
  const int num_bins = bins.bins();
  const int words = kPacked ? (num_bins + 1) / 2 : num_bins;
  // BEGIN SOLUTION
  for (int w = threadIdx.x; w < words; w += blockDim.x) counters[w] = 0;
  __syncthreads();

  if constexpr (kPacked) {
    // Count a run of equal bins in registers and add it with one atomic: on
    // skewed input most samples extend a run. run_bin = -1: not counted.
    int run_bin = -1;
    unsigned run = 0;
    detail::for_each_sample(samples, n, [&](int s) {
      const int b = bins(s);
      if (b == run_bin && run < 0xFFFFu) {
        ++run;
        return;
      }
      if (run_bin >= 0) add_packed(counters, run_bin, run, histogram, num_bins);
      run_bin = b;
      run = 1;
    });
    if (run_bin >= 0) add_packed(counters, run_bin, run, histogram, num_bins);
  } else {
    // As 1.11: an increment by a constant 1 whose result is unused, which the
    // hardware combines across the lanes of a warp that hit the same counter.
    detail::for_each_sample(samples, n, [&](int s) {
      const int b = bins(s);
      if (b >= 0) atomicAdd(counters + b, 1u);
    });
  }
  __syncthreads();

  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    const unsigned count = kPacked ? (counters[b / 2] >> (b & 1) * 16) & 0xFFFFu : counters[b];
    if (count != 0) atomicAdd(histogram + b, count);
  }
  // STARTER:
  // // TODO(1.12): zero the words counters and wait; count every sample of
  // // detail::for_each_sample: into counters[b] with atomicAdd when !kPacked
  // // (as in 1.11), with add_packed when kPacked (adding a run of equal bins
  // // at once keeps skewed input fast); wait; then add each bin's non-zero
  // // count (a 32-bit word, or a 16-bit half of counters[b / 2]) to
  // // histogram with one atomicAdd.
  // END SOLUTION
}

template <bool kPacked, class Bins>
void launch(const int* samples, std::size_t n, unsigned int* histogram, Bins bins, cudaStream_t stream) {
  constexpr int block = kPacked ? 1024 : 512;
  const int words = kPacked ? (bins.bins() + 1) / 2 : bins.bins();
  const std::size_t shared_bytes = static_cast<std::size_t>(words) * sizeof(unsigned);
  const auto kernel = histogram_packed_privatized_kernel<kPacked, Bins>;
  set_dynamic_shared(kernel, shared_bytes);  // above 48 KiB: opt in, within the device's limit
  const unsigned blocks = detail::one_wave_blocks(kernel, block, shared_bytes, n);
  kernel<<<blocks, block, shared_bytes, stream>>>(samples, n, histogram, bins);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void histogram_packed_privatized(const int* samples, std::size_t n, unsigned int* histogram,
                                 int num_bins, int lower, int upper, cudaStream_t stream) {
  if (!detail::start_histogram("histogram_packed_privatized", samples, n, histogram, num_bins, lower, upper,
                               packed_privatized_max_bins, stream)) return;
  const EvenBins bins(num_bins, lower, upper);
  // Packed bins per block on this device: 2 per 32-bit word of its opt-in
  // shared memory per block (65,536 and more from the A100 on: one launch).
  const auto fit = static_cast<int>(std::min<std::size_t>(device_limits().shared_per_block_optin / sizeof(unsigned) * 2,
                                                          static_cast<std::size_t>(packed_privatized_max_bins)));
  if (num_bins <= kWideMaxBins) {
    launch<false>(samples, n, histogram, bins, stream);
  } else if (num_bins <= fit) {
    launch<true>(samples, n, histogram, bins, stream);
  } else {
    // Windows of `fit` bins (an even number: a window never splits a word's
    // two halves, so a wrap's carry stays inside it), one pass each.
    for (int first = 0; first < num_bins; first += fit) {
      const BinWindow window{bins, first, std::min(fit, num_bins - first)};
      launch<true>(samples, n, histogram + first, window, stream);
    }
  }
}

}  // namespace cudalab::histogram
