/// @file histogram_reference.hpp
/// @brief CPU reference histograms that the tests and benchmarks of exercises
///        1.10 to 1.12 compare against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cudalab/histogram.cuh"

/// @brief CPU reference implementations (the ground truth of the tests).
namespace cudalab::reference {

/// @brief CUB's bin formula for int samples written out literally, in 64-bit
///        arithmetic: ⌊(s − lower) · num_bins / (upper − lower)⌋ for
///        lower ≤ s < upper, −1 otherwise.
///
/// The differences are taken in 64 bits, so the formula is exact for every
/// range; CUB takes them in int and agrees wherever upper − lower ≤ INT_MAX.
/// The host tests check cudalab::histogram::EvenBins (the fast form every
/// kernel and histogram_even use) against this one. Work O(1), one 64-bit
/// division. Source: NVIDIA CCCL, `cub/device/dispatch/dispatch_histogram.cuh`,
/// `ScaleTransform::ComputeBin`.
inline int even_bin_formula(int sample, int num_bins, int lower, int upper) {
  if (sample < lower || sample >= upper) return -1;
  const auto d = static_cast<std::uint64_t>(static_cast<std::int64_t>(sample) - lower);
  const auto range = static_cast<std::uint64_t>(static_cast<std::int64_t>(upper) - lower);
  return static_cast<int>(d * static_cast<std::uint64_t>(num_bins) / range);
}

/// @brief The histogram of `samples` over `num_bins` equal bins of
///        [lower, upper), with the bins of cudalab::histogram::EvenBins;
///        samples outside the range are not counted.
/// @pre 1 ≤ num_bins, lower < upper.
/// Work O(n + num_bins), one pass.
inline std::vector<unsigned> histogram_even(const std::vector<int>& samples, int num_bins, int lower,
                                            int upper) {
  std::vector<unsigned> counts(static_cast<std::size_t>(num_bins), 0u);
  const histogram::EvenBins bins(num_bins, lower, upper);
  for (const int s : samples) {
    const int b = bins(s);
    if (b >= 0) ++counts[static_cast<std::size_t>(b)];
  }
  return counts;
}

/// @brief The sample values [first, last] that fall into bin `bin` (for
///        failure messages): first = the smallest s with bin(s) = bin.
/// Work O(log(upper − lower)).
inline void bin_value_range(int bin, int num_bins, int lower, int upper, long long& first,
                            long long& last) {
  const histogram::EvenBins bins(num_bins, lower, upper);
  const auto smallest_at_least = [&](int target) {  // smallest s in [lower, upper] with bin(s) >= target
    long long lo = lower, hi = upper;                 // bin(upper) counts as num_bins
    while (lo < hi) {
      const long long mid = lo + (hi - lo) / 2;
      const int b = mid >= upper ? num_bins : bins(static_cast<int>(mid));
      if (b >= target) hi = mid; else lo = mid + 1;
    }
    return lo;
  };
  first = smallest_at_least(bin);
  last = smallest_at_least(bin + 1) - 1;
}

}  // namespace cudalab::reference
