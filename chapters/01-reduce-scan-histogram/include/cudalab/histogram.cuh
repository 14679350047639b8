/// @file histogram.cuh
/// @brief Chapter 1, exercises 1.10 to 1.12: the histogram of int32 samples
///        over equal-width bins, three ways.
///
/// Every function here counts how many of the n samples fall into each of
/// `num_bins` equal-width bins over the half-open range [lower, upper), on the
/// device, and returns at once (asynchronous on `stream`).
///
/// **The bins** are those of `cub::DeviceHistogram::HistogramEven` for int
/// samples with `num_levels = num_bins + 1`, `lower_level = lower` and
/// `upper_level = upper`: a sample s with lower ≤ s < upper goes to bin
/// \f[ \left\lfloor \frac{(s - \mathit{lower}) \cdot \mathit{num\_bins}}{\mathit{upper} - \mathit{lower}} \right\rfloor , \f]
/// computed exactly (the product in 64 bits, never rounded through floating
/// point); samples outside [lower, upper) are not counted. When
/// num_bins does not divide upper − lower, the bins differ in width by one
/// value. cudalab::histogram::EvenBins computes this mapping; every exercise
/// uses it and so does the CPU reference.
///
/// Common contract of every function:
/// @param samples   device pointer to n int32 samples (any alignment of int)
/// @param n         sample count, 0 ≤ n ≤ max_samples (so every count fits in
///                  an `unsigned int`)
/// @param histogram device pointer to num_bins `unsigned int` counters,
///                  **overwritten** with the counts: the function zeroes them
///                  itself (asynchronously, on `stream`) before counting
/// @param num_bins  number of bins, 1 ≤ num_bins ≤ the function's maximum
///                  (global_atomics_max_bins, shared_privatized_max_bins,
///                  packed_privatized_max_bins)
/// @param lower     the smallest sample value counted (inclusive)
/// @param upper     the end of the counted range (exclusive), lower < upper;
///                  any pair of int values, including INT_MIN and INT_MAX
/// @param stream    the stream to run on (default: the legacy default stream)
/// @throws std::invalid_argument when num_bins < 1 or above the function's
///         maximum, when lower ≥ upper, when `histogram` is null, when
///         `samples` is null and n > 0, or when n > max_samples; nothing is
///         launched and nothing is written then.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// @post n = 0 writes num_bins zeros.
/// @note The counts may be written after the call returns: synchronize
///       `stream` before reading them on the host.
/// @note CUB itself rejects (cudaErrorInvalidValue) a range wider than
///       INT_MAX with two or more bins, because it computes upper − lower in
///       int; these functions accept every range and compute the same formula
///       without overflow.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "cudalab/args.hpp"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"

/// @brief Histograms (chapter 1, exercises 1.10 to 1.12).
namespace cudalab::histogram {

/// @brief The largest n the histograms accept: 2^32 − 1 samples, so that every
///        count, even all samples in one bin, fits in an `unsigned int`.
inline constexpr std::size_t max_samples = std::numeric_limits<std::uint32_t>::max();

/// @brief The most bins histogram_global_atomics accepts: any int (the
///        counters live in global memory only).
inline constexpr int global_atomics_max_bins = INT_MAX;

/// @brief The most bins histogram_shared_privatized accepts: 12,288 32-bit
///        counters, the 48 KiB of shared memory that every CUDA GPU gives a
///        block without an opt-in.
inline constexpr int shared_privatized_max_bins = 12288;

/// @brief The most bins histogram_packed_privatized accepts: 65,536 16-bit
///        counters in 128 KiB of shared memory per block (data-center GPUs
///        from sm_80 on: A100 offers 163 KiB, H100 227 KiB). On a GPU with
///        less opt-in shared memory per block (cudalab::device_limits(): 99 KiB
///        on the RTX 3090, 4090, 5090 and L4, 64 KiB on the T4) the reference
///        counts the bins in windows that fit, one pass over the samples each.
inline constexpr int packed_privatized_max_bins = 65536;

/// @brief The sample-to-bin mapping of `cub::DeviceHistogram::HistogramEven`
///        for int samples, computed exactly with one 32-bit multiply-high and
///        one correction (no division per sample).
///
/// For lower ≤ s < upper, let d = s − lower and R = upper − lower (both in
/// [0, 2^32), computed without overflow) and B = num_bins. Write
/// B = a·R + b with 0 ≤ b < R; then ⌊d·B / R⌋ = d·a + ⌊d·b / R⌋. With the
/// precomputed magic = ⌊2^32·b / R⌋, q = ⌊d·magic / 2^32⌋ is ⌊d·b / R⌋ or one
/// less (the error d·(2^32·b/R − magic)/2^32 is below d/2^32 < 1), and the
/// remainder r = d·b − q·R ≥ R says which (Granlund and Montgomery, "Division
/// by invariant integers using multiplication", PLDI 1994, in the
/// multiply-then-correct form). The result equals CUB's
/// `(uint64_t)(s - lower) * num_bins / (uint64_t)(upper - lower)` for every
/// range CUB accepts (upper − lower ≤ INT_MAX when num_bins ≥ 2), and that
/// formula in exact arithmetic for the wider ranges CUB rejects.
/// Cost: about ten integer instructions per sample.
/// Source: NVIDIA CCCL, `cub/device/dispatch/dispatch_histogram.cuh`,
/// `ScaleTransform::ComputeBin` for integral samples.
class EvenBins {
 public:
  /// @brief The mapping of `num_bins` equal bins over [lower, upper).
  /// @pre 1 ≤ num_bins and lower < upper (the launchers check this first).
  /// @param num_bins number of bins B
  /// @param lower    smallest sample counted
  /// @param upper    end of the counted range (exclusive)
  __host__ __device__ EvenBins(int num_bins, int lower, int upper)
      : lower_(static_cast<unsigned>(lower)),
        range_(static_cast<unsigned>(upper) - static_cast<unsigned>(lower)),
        whole_(static_cast<unsigned>(num_bins) / range_),
        frac_(static_cast<unsigned>(num_bins) % range_),
        magic_(static_cast<unsigned>((static_cast<unsigned long long>(frac_) << 32) / range_)),
        bins_(num_bins) {}

  /// @brief The bin of `sample`, in [0, bins()), or −1 when the sample lies
  ///        outside [lower, upper).
  __host__ __device__ __forceinline__ int operator()(int sample) const {
    const unsigned d = static_cast<unsigned>(sample) - lower_;  // s - lower, modulo 2^32
    if (d >= range_) return -1;                                 // also catches s < lower
    unsigned q = mulhi(d, magic_);                              // floor(d*b/R) or one less
    const unsigned long long r = static_cast<unsigned long long>(d) * frac_ -
                                 static_cast<unsigned long long>(q) * range_;
    q += r >= range_ ? 1u : 0u;
    return static_cast<int>(d * whole_ + q);
  }

  /// @return the number of bins.
  __host__ __device__ int bins() const { return bins_; }

 private:
  __host__ __device__ static unsigned mulhi(unsigned x, unsigned y) {
#ifdef __CUDA_ARCH__
    return __umulhi(x, y);
#else
    return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32);
#endif
  }

  unsigned lower_;  // lower, as its 32 bits
  unsigned range_;  // upper - lower, in [1, 2^32 - 1]
  unsigned whole_;  // a = B / R
  unsigned frac_;   // b = B % R
  unsigned magic_;  // floor(2^32 * b / R)
  int bins_;        // B
};

/// @brief Exercise 1.10: one thread per sample, each adding 1 to its bin with
///        one global `atomicAdd`.
///
/// Work O(n + num_bins). Steps: O(n / num_bins) on uniform samples, but O(n)
/// when all samples fall into one bin, because atomics on one address are
/// serialized by the L2 slice that owns it: the baseline that shows why
/// histograms need privatization.
/// See the common contract in the file description for parameters and errors.
/// Source: the CUDA C++ Programming Guide, "Atomic Functions"; J. Sanders and
/// E. Kandrot, *CUDA by Example*, Addison-Wesley 2010, ch. 9.
void histogram_global_atomics(const int* samples, std::size_t n, unsigned int* histogram,
                              int num_bins, int lower, int upper, cudaStream_t stream = nullptr);

/// @brief Exercise 1.11: each block counts into its own sub-histogram of
///        32-bit counters in shared memory (shared-memory atomics), then adds
///        each non-zero bin to the global histogram with one atomic.
///
/// At most shared_privatized_max_bins bins (48 KiB of shared memory per
/// block). A grid of one wave of blocks walks the samples with 16-byte loads.
/// Work O(n + blocks · num_bins); steps O(n / (threads in the grid)) on
/// uniform samples plus O(blocks) serialized merge atomics per bin. Contention
/// moves from the L2 (one queue per bin for the whole GPU) to each SM's
/// shared memory (one queue per bin per block).
/// See the common contract in the file description for parameters and errors.
/// Source: V. Podlozhnyuk, "Histogram calculation in CUDA", NVIDIA CUDA SDK
/// white paper, 2007; R. Shams and R. A. Kennedy, "Efficient histogram
/// algorithms for NVIDIA CUDA compatible devices", ICSPCS 2007.
void histogram_shared_privatized(const int* samples, std::size_t n, unsigned int* histogram,
                                 int num_bins, int lower, int upper, cudaStream_t stream = nullptr);

/// @brief Exercise 1.12: privatized like 1.11 up to 12,288 bins, and above
///        that with 16-bit counters packed two to a 32-bit word, so that
///        65,536 bins fit in 128 KiB of shared memory; runs of equal bins in
///        a thread are added with one atomic.
///
/// A 16-bit counter wraps after 65,535 increments; the thread whose atomic
/// wraps it sees so in the old value the atomic returns and adds the lost
/// 65,536 (and takes back the carry into the neighbouring counter) in the
/// global histogram, so every count is exact for any n ≤ max_samples.
/// At most packed_privatized_max_bins bins.
/// Work O(n + blocks · num_bins); steps O(n / (threads in the grid)) on
/// uniform and skewed samples alike (shared-memory atomics, and runs of equal
/// bins aggregated in registers before the atomic).
/// See the common contract in the file description for parameters and errors.
/// Source: J. Gómez-Luna, J. M. González-Linares, J. I. Benavides and
/// N. Guil, "An optimized approach to histogram computation on GPU", Machine
/// Vision and Applications 24 (2013) (privatization, replication and their
/// cost in shared memory); N. Wilt, *The CUDA Handbook*, Addison-Wesley 2013
/// (its histogram examples); CUB's `cub::DeviceHistogram::HistogramEven`
/// (NVIDIA CCCL) is the baseline it races.
void histogram_packed_privatized(const int* samples, std::size_t n, unsigned int* histogram,
                                 int num_bins, int lower, int upper, cudaStream_t stream = nullptr);

namespace detail {
/// @brief The argument checks every histogram performs before touching the GPU.
/// @throws std::invalid_argument as described in the file's common contract.
inline void check_histogram_arguments(const char* function, const void* samples, std::size_t n,
                                      const void* histogram, int num_bins, int lower, int upper,
                                      int max_bins) {
  if (num_bins < 1 || num_bins > max_bins) {
    throw std::invalid_argument(std::string(function) + ": num_bins = " + std::to_string(num_bins) +
                                " is outside the supported range [1, " + std::to_string(max_bins) +
                                "]");
  }
  if (lower >= upper) {
    throw std::invalid_argument(std::string(function) + ": lower = " + std::to_string(lower) +
                                " is not below upper = " + std::to_string(upper));
  }
  require_pointer(function, "histogram", histogram, static_cast<std::size_t>(num_bins));
  require_pointer(function, "samples", samples, n);
  require_count_at_most(function, n, max_samples);
}

/// @brief The start of every histogram launcher: checks the arguments
///        (check_histogram_arguments) and sets the `num_bins` counters of
///        `histogram` to 0 on `stream` (the call overwrites them, also for
///        n = 0).
/// @param function  the public function being called, for the messages
/// @param samples   device pointer to n samples
/// @param n         sample count
/// @param histogram device pointer to num_bins counters
/// @param num_bins  number of bins, 1 ≤ num_bins ≤ max_bins
/// @param lower     lower bound of the range, below upper
/// @param upper     upper bound of the range
/// @param max_bins  the most bins the function supports
/// @param stream    the stream to run on; asynchronous
/// @throws std::invalid_argument as in check_histogram_arguments (before any CUDA call).
/// @throws cudalab::CudaError when the memset fails.
inline void check_and_zero(const char* function, const int* samples, std::size_t n, unsigned int* histogram,
                           int num_bins, int lower, int upper, int max_bins, cudaStream_t stream) {
  check_histogram_arguments(function, samples, n, histogram, num_bins, lower, upper, max_bins);
  CUDALAB_CHECK(cudaMemsetAsync(histogram, 0, static_cast<std::size_t>(num_bins) * sizeof(unsigned), stream));
}

/// @brief The start of every histogram launcher (1.10 to 1.12):
///        check_and_zero, and whether there is a kernel to launch.
/// @param function  the public function being called, for the messages
/// @param samples   device pointer to n samples
/// @param n         sample count
/// @param histogram device pointer to num_bins counters, set to 0 here
/// @param num_bins  number of bins, 1 ≤ num_bins ≤ max_bins
/// @param lower     lower bound of the range, below upper
/// @param upper     upper bound of the range
/// @param max_bins  the most bins the function supports
/// @param stream    the stream to run on; asynchronous
/// @return false for n = 0, where the launcher is done (every counter is 0).
/// @throws std::invalid_argument as in check_histogram_arguments (before any CUDA call).
/// @throws cudalab::CudaError when the memset fails.
/// O(1) on the host; one memset of num_bins counters enqueued.
inline bool start_histogram(const char* function, const int* samples, std::size_t n, unsigned int* histogram,
                            int num_bins, int lower, int upper, int max_bins, cudaStream_t stream) {
  check_and_zero(function, samples, n, histogram, num_bins, lower, upper, max_bins, stream);
  return n != 0;
}

/// @brief The grid of the privatized histograms: one wave of as many blocks
///        of `threads` threads and `shared_bytes` of dynamic shared memory
///        as fit on the GPU at once (resident_blocks_per_sm × sm_count);
///        fewer for small n, so that each thread gets at least one 16-byte
///        vector (4 samples).
/// @tparam Args the kernel's parameter types
/// @param kernel       the kernel to be launched
/// @param threads      threads per block, > 0
/// @param shared_bytes dynamic shared memory per block, bytes
/// @param n            sample count, > 0
/// @return the number of blocks, ≥ 1 for n > 0.
/// @throws cudalab::CudaError when a CUDA call fails.
template <class... Args>
unsigned one_wave_blocks(void (*kernel)(Args...), int threads, std::size_t shared_bytes, std::size_t n) {
  const int per_sm = resident_blocks_per_sm(kernel, threads, shared_bytes);
  const std::size_t wave = static_cast<std::size_t>(sm_count()) * static_cast<std::size_t>(per_sm);
  const std::size_t needed = (n + 4 * threads - 1) / (4 * threads);
  return static_cast<unsigned>(std::min(wave, needed));
}

/// @brief Calls `f(sample)` for every sample this thread owns when the whole
///        grid walks samples[0, n) with a grid-stride loop of 16-byte loads
///        (two in flight per thread): the elements before the first 16-byte
///        boundary and after the last whole vector go one per thread.
///        Every sample is visited by exactly one thread of the grid.
template <class F>
__device__ __forceinline__ void for_each_sample(const int* __restrict__ samples, std::size_t n,
                                                F&& f) {
  const std::size_t tid = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const auto address = reinterpret_cast<std::uintptr_t>(samples);
  const std::size_t to_boundary = ((16 - address % 16) % 16) / sizeof(int);
  const std::size_t head = to_boundary < n ? to_boundary : n;
  const std::size_t vecs = (n - head) / 4;
  const std::size_t tail = head + 4 * vecs;
  if (tid < head) f(samples[tid]);
  if (tail + tid < n) f(samples[tail + tid]);
  const int4* body = reinterpret_cast<const int4*>(samples + head);
  std::size_t i = tid;
  for (; i + stride < vecs; i += 2 * stride) {
    const int4 a = __ldg(body + i);
    const int4 b = __ldg(body + i + stride);
    f(a.x), f(a.y), f(a.z), f(a.w);
    f(b.x), f(b.y), f(b.z), f(b.w);
  }
  if (i < vecs) {
    const int4 a = __ldg(body + i);
    f(a.x), f(a.y), f(a.z), f(a.w);
  }
}
}  // namespace detail

}  // namespace cudalab::histogram
