// The test battery shared by exercises 1.10 to 1.12: every histogram has the
// same contract (cudalab/histogram.cuh), so each exercise's test file
// instantiates this battery with its own suite name, exercise id, function
// and largest supported bin count.
#pragma once

#include <cub/device/device_histogram.cuh>
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/histogram.cuh"
#include "cudalab/test/device_memory.cuh"
#include "cudalab/test/harness.hpp"
#include "histogram_reference.hpp"

namespace cudalab::test::histogram {

using Histogram = void (*)(const int*, std::size_t, unsigned int*, int, int, int, cudaStream_t);

constexpr unsigned char kPoison = 0xA5;  // an unwritten counter reads 0xA5A5A5A5
constexpr unsigned kPoisonWord = 0xA5A5A5A5u;

/// The edge sizes of docs/guides/contributing.md ("Tests"), the tile boundaries of 1.11 and 1.12 (a
/// 16-byte vector is 4 samples, a thread takes 2 vectors per step, blocks are 512 and 1024 threads:
/// 2048 and 4096 samples per vector step of a block), a prime, 2^20 + 7 and one large size.
inline const std::vector<std::size_t> kSizes = {
    0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049,
    4095, 4096, 4097, 8191, 8192, 8193, 16385, 65537, 1000003, (1u << 20) + 7, (1u << 26) + 1};

inline std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

inline std::string bins_name(const ::testing::TestParamInfo<int>& info) {
  return "bins" + std::to_string(info.param);
}

/// Poisoned words after the counters: a write past histogram[num_bins - 1]
/// changes one (an allocation of exactly num_bins words would hide it in
/// cudaMalloc's rounding).
constexpr std::size_t kGuardWords = 64;

/// Runs `fn` on `host` copied to the device at `offset` elements past an
/// aligned allocation, with every counter and kGuardWords guard words after
/// them poisoned first; returns the counts, and fails the test (without
/// stopping it) when a guard word changed.
inline std::vector<unsigned> run_histogram(Histogram fn, const std::vector<int>& host, int num_bins,
                                           int lower, int upper, std::size_t offset = 0) {
  DeviceBuffer<int> in(host.size() + offset);
  if (!host.empty())
    CUDALAB_CHECK(cudaMemcpy(in.data() + offset, host.data(), host.size() * sizeof(int),
                             cudaMemcpyHostToDevice));
  const auto bins = static_cast<std::size_t>(num_bins);
  DeviceBuffer<unsigned> out(bins + kGuardWords);
  out.fill_bytes(kPoison);
  fn(host.empty() ? nullptr : in.data() + offset, host.size(), out.data(), num_bins, lower, upper,
     nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> counts = out.download();
  for (std::size_t i = bins; i < counts.size(); ++i) {
    if (counts[i] == kPoisonWord) continue;
    ADD_FAILURE() << num_bins << " bins over [" << lower << ", " << upper << "), n = " << host.size()
                  << ": the call wrote past the histogram: histogram[" << i << "], " << i - bins + 1
                  << " word(s) after the last bin, holds 0x" << std::hex << counts[i] << std::dec
                  << " instead of the poison 0xA5A5A5A5. Write only histogram[0 .. num_bins): a "
                     "carry into bin b + 1 (1.12's wrap of a low half) must check that bin b + 1 exists.";
    break;
  }
  counts.resize(bins);
  return counts;
}

/// The same histogram computed by `cub::DeviceHistogram::HistogramEven`: an
/// oracle of the bin mapping independent of EvenBins. Throws CudaError when
/// CUB rejects the range (wider than INT_MAX with two or more bins).
inline std::vector<unsigned> cub_histogram(const std::vector<int>& host, int num_bins, int lower,
                                           int upper) {
  DeviceBuffer<int> in(host);
  DeviceBuffer<unsigned> out(static_cast<std::size_t>(num_bins));
  const auto n = static_cast<std::int64_t>(host.size());
  std::size_t bytes = 0;
  CUDALAB_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, in.data(), out.data(),
                                                    num_bins + 1, lower, upper, n));
  DeviceBuffer<unsigned char> temp(bytes);
  CUDALAB_CHECK(cub::DeviceHistogram::HistogramEven(temp.data(), bytes, in.data(), out.data(),
                                                    num_bins + 1, lower, upper, n));
  CUDALAB_CHECK(cudaDeviceSynchronize());
  return out.download();
}

/// Empty when the histograms are equal; otherwise the first differing bin
/// with expected and actual counts, the sample values of that bin, the
/// totals, and what a student most likely got wrong.
inline std::string describe_difference(const std::vector<unsigned>& expected,
                                       const std::vector<unsigned>& actual, int lower, int upper) {
  if (expected == actual) return {};
  std::ostringstream out;
  if (expected.size() != actual.size()) {
    out << "expected " << expected.size() << " bins, got " << actual.size();
    return out.str();
  }
  std::size_t b = 0;
  while (expected[b] == actual[b]) ++b;
  long long first = 0, last = 0;
  const int num_bins = static_cast<int>(expected.size());
  reference::bin_value_range(static_cast<int>(b), num_bins, lower, upper, first, last);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) wrong += expected[i] != actual[i] ? 1 : 0;
  const auto total = [](const std::vector<unsigned>& v) {
    return std::accumulate(v.begin(), v.end(), 0ull);
  };
  out << num_bins << " bins over [" << lower << ", " << upper << "); first differing bin " << b
      << " (sample values " << first << " to " << last << "): expected " << expected[b]
      << ", actual " << actual[b] << "; " << wrong << " bin(s) differ; total count expected "
      << total(expected) << ", actual " << total(actual) << ".";
  if (actual[b] == kPoisonWord) {
    out << " The counter still holds the poison 0xA5A5A5A5: it was never written (the histogram "
           "must be zeroed and every bin written, even bins with no samples).";
  } else if (total(actual) < total(expected)) {
    out << " Counts were lost: an increment that is not atomic, a merge that misses bins or "
           "blocks, samples of the last partial tile or vector skipped, or a barrier missing "
           "between counting and merging.";
  } else if (total(actual) > total(expected)) {
    out << " Counts were added twice or samples outside [lower, upper) were counted: check "
           "the bounds of the walk and the -1 of bins(s).";
  } else {
    out << " The total is right but samples went to the wrong bins: use the EvenBins mapping "
           "given to the kernel, do not compute bins yourself.";
  }
  return out.str();
}

/// Asserts that fn's histogram of `samples` equals the CPU reference's.
inline void expect_reference(const char* exercise, Histogram fn, const std::vector<int>& samples,
                             int num_bins, int lower, int upper, std::uint64_t s,
                             const std::string& what, std::size_t offset = 0) {
  const auto expected = reference::histogram_even(samples, num_bins, lower, upper);
  const auto actual = run_histogram(fn, samples, num_bins, lower, upper, offset);
  const std::string diff = describe_difference(expected, actual, lower, upper);
  ASSERT_TRUE(diff.empty()) << context(exercise, samples.size(), s) << what << "\n" << diff;
}

/// Samples uniform over a range a little wider than [lower, upper), so some
/// fall below and above it; the range does not divide into num_bins evenly.
inline void uniform(const char* exercise, Histogram fn, std::size_t n, int num_bins) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const int lower = -1000, upper = 1000 + 37 * num_bins;
  const auto samples = gen::uniform_int<int>(n, s, lower - 50, upper + 50);
  expect_reference(exercise, fn, samples, num_bins, lower, upper, s,
                   "samples uniform over [lower - 50, upper + 50)");
}

/// Bin counts 1, 2, 255, 256, 257, 1000, 4096, and up to max_bins.
inline std::vector<int> bin_counts(int max_bins) {
  std::vector<int> out;
  for (const int b : {1, 2, 3, 255, 256, 257, 1000, 4095, 4096, 4097, 12288, 24577, 65535, 65536})
    if (b <= max_bins) out.push_back(b);
  return out;
}

/// n = 2^20 + 7 uniform samples for the given bin count, over a range that
/// num_bins does not divide (and a range narrower than num_bins: some bins
/// can never be hit).
inline void bins_uniform(const char* exercise, Histogram fn, int num_bins) {
  const std::size_t n = (1u << 20) + 7;
  const auto s = seed();
  {
    const int lower = -12345, upper = lower + 3 * num_bins + 1;
    const auto samples = gen::uniform_int<int>(n, s, lower - 10, upper + 10);
    expect_reference(exercise, fn, samples, num_bins, lower, upper, s,
                     "uniform samples; range 3 * num_bins + 1 values");
  }
  {
    const int lower = 7, upper = lower + num_bins / 2 + 1;  // fewer values than bins
    const auto samples = gen::uniform_int<int>(n, s + 1, lower - 1, upper);
    expect_reference(exercise, fn, samples, num_bins, lower, upper, s + 1,
                     "uniform samples; range num_bins / 2 + 1 values (some bins stay empty)");
  }
}

/// All samples in the first bin, then all in the last: every thread of the
/// GPU hits one counter.
inline void all_in_one_bin(const char* exercise, Histogram fn, int num_bins, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const int lower = -5000, upper = lower + 7 * num_bins + 3;
  for (const int value : {lower, upper - 1}) {
    const std::vector<int> samples(n, value);
    expect_reference(exercise, fn, samples, num_bins, lower, upper, 0,
                     "every sample is " + std::to_string(value) + " (all in one bin)");
  }
}

/// Every sample in one bin, at every size of the battery from 1 to 16385
/// (one around each vector, warp, block and tile boundary, so the tail loop
/// meets the same counter as the vector loop): the first bin of 256, the
/// last of max_bins, and bins at the type's limits over [INT_MIN, INT_MAX):
/// INT_MAX - 1 (the last bin), -1 (0xFFFFFFFF as unsigned), INT_MIN with one
/// bin. Under a sanitizer (CUDALAB_MAX_N set) three sizes.
inline void one_bin_every_size(const char* exercise, Histogram fn, int max_bins) {
  struct Case {
    int num_bins, lower, upper, value;
    const char* what;
  };
  const Case cases[] = {
      {256, -5000, -5000 + 7 * 256 + 3, -5000, "the first of 256 bins"},
      {max_bins, -5000, -5000 + 7 * max_bins + 3, -5000 + 7 * max_bins + 2, "the last of max bins"},
      {256, INT_MIN, INT_MAX, INT_MAX - 1, "INT_MAX - 1, the last of 256 bins over [INT_MIN, INT_MAX)"},
      {256, INT_MIN, INT_MAX, -1, "-1 (0xFFFFFFFF as unsigned), 256 bins over [INT_MIN, INT_MAX)"},
      {1, INT_MIN, INT_MAX, INT_MIN, "INT_MIN, one bin over [INT_MIN, INT_MAX)"}};
  const bool sanitizing = max_n() != std::numeric_limits<std::size_t>::max();
  for (const std::size_t n : kSizes) {
    if (n == 0 || n > 16385) continue;
    if (sanitizing && n != 5 && n != 33 && n != 4097) continue;
    for (const Case& c : cases) {
      expect_reference(exercise, fn, std::vector<int>(n, c.value), c.num_bins, c.lower, c.upper, 0,
                       "every sample is " + std::to_string(c.value) + ": " + c.what + " (num_bins = " +
                           std::to_string(c.num_bins) + ", [" + std::to_string(c.lower) + ", " +
                           std::to_string(c.upper) + "))");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Half the samples in one bin (chosen at random positions), the rest uniform.
inline void half_in_one_bin(const char* exercise, Histogram fn, int num_bins, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const int lower = 0, upper = 5 * num_bins;
  auto samples = gen::uniform_int<int>(n, s, lower, upper - 1);
  const auto coin = gen::uniform_int<int>(n, s + 1, 0, 1);
  for (std::size_t i = 0; i < n; ++i)
    if (coin[i] != 0) samples[i] = upper / 2;
  expect_reference(exercise, fn, samples, num_bins, lower, upper, s,
                   "half the samples are " + std::to_string(upper / 2) + ", the rest uniform");
}

/// Two adjacent bins (2k, 2k+1) get 3/8 of 2^25 samples each and the last bin
/// 1/8: with one sub-histogram per block (1.12 at 65,536 bins) the 16-bit
/// counters of these bins wrap in every block and carry into their
/// neighbours, for an even and an odd bin count.
inline void hot_adjacent_bins(const char* exercise, Histogram fn, int num_bins) {
  const std::size_t n = (1u << 25) + 3;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  for (const int bins : {num_bins, num_bins - 1}) {
    if (bins < 2) continue;
    const int lower = -100, upper = lower + bins;  // one value per bin
    const int hot = (bins / 2) & ~1;
    auto samples = gen::uniform_int<int>(n, s, lower, upper - 1);
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = gen::bits(s + 7, i) % 8;
      if (r < 3) samples[i] = lower + hot;
      else if (r < 6) samples[i] = lower + hot + 1;
      else if (r < 7) samples[i] = upper - 1;
    }
    expect_reference(exercise, fn, samples, bins, lower, upper, s,
                     "3/8 of the samples in bin " + std::to_string(hot) + ", 3/8 in bin " +
                         std::to_string(hot + 1) + ", 1/8 in the last bin");
  }
}

/// Samples exactly at lower, upper - 1, upper (excluded), lower - 1 (excluded),
/// INT_MIN and INT_MAX, over several ranges including the extremes.
inline void boundaries(const char* exercise, Histogram fn, int max_bins) {
  const auto s = seed();
  struct Range { int lower, upper; };
  const Range ranges[] = {{-7, 1000}, {INT_MIN, INT_MIN + 1000}, {INT_MAX - 1000, INT_MAX},
                          {INT_MIN, -1}, {0, INT_MAX}, {INT_MIN, INT_MAX}, {-1, 0}};
  for (const auto r : ranges) {
    for (const int bins : {1, 2, 3, 256, 257, 4096, 16385, 65536}) {
      if (bins > max_bins) continue;
      std::vector<int> samples = {r.lower, r.upper - 1, r.upper, INT_MIN, INT_MAX, 0, -1, 1};
      if (r.lower != INT_MIN) samples.push_back(r.lower - 1);
      if (r.upper != INT_MAX) samples.push_back(r.upper + 1);
      const auto bulk = gen::uniform_int<int>(3000, s, r.lower, r.upper - 1);
      samples.insert(samples.end(), bulk.begin(), bulk.end());
      for (const int v : {r.lower, r.upper - 1, r.upper}) samples.insert(samples.end(), 333, v);
      expect_reference(exercise, fn, samples, bins, r.lower, r.upper, s,
                       "samples at lower, upper - 1, upper, lower - 1, INT_MIN, INT_MAX and "
                       "uniform in the range");
    }
  }
}

/// Compares with CUB on the GPU, an oracle of the mapping independent of the
/// CPU reference, on every range CUB accepts (upper - lower <= INT_MAX), with
/// bin counts that do not divide the range.
inline void matches_cub(const char* exercise, Histogram fn, int max_bins) {
  const auto s = seed();
  const std::size_t n = 100003;
  struct Case { int lower, upper, bins; };
  const Case cases[] = {{0, 1000, 7},           {-1000, 1000, 256},        {-3, 4094, 4096},
                        {0, 255, 256},          {INT_MIN, -1, 256},        {0, INT_MAX, 4095},
                        {INT_MIN, INT_MIN + 99999, 4096}, {INT_MAX - 70000, INT_MAX, 65536},
                        {-1, 1 << 30, 12288},   {5, 6, 3},                 {INT_MIN, INT_MAX, 1}};
  for (const auto c : cases) {
    if (c.bins > max_bins) continue;
    const long long width = static_cast<long long>(c.upper) - c.lower;
    const int lo = width > 2000000 ? c.lower : static_cast<int>(std::max<long long>(INT_MIN, c.lower - 10LL));
    const int hi = width > 2000000 ? c.upper : static_cast<int>(std::min<long long>(INT_MAX, c.upper + 10LL));
    auto samples = gen::uniform_int<int>(n, s, lo, hi);
    samples.push_back(c.lower);
    samples.push_back(c.upper - 1);
    samples.push_back(c.upper);
    const auto expected = cub_histogram(samples, c.bins, c.lower, c.upper);
    const auto actual = run_histogram(fn, samples, c.bins, c.lower, c.upper);
    const std::string diff = describe_difference(expected, actual, c.lower, c.upper);
    ASSERT_TRUE(diff.empty()) << context(exercise, samples.size(), s)
                              << "compared with cub::DeviceHistogram::HistogramEven\n"
                              << diff;
  }
}

/// The input starts 1, 2 and 3 elements past a 16-byte boundary.
inline void misaligned(const char* exercise, Histogram fn) {
  const auto s = seed();
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{5}, std::size_t{1000},
                              std::size_t{(1u << 20) + 5}}) {
    const auto samples = gen::uniform_int<int>(n, s, -10, 300);
    for (const std::size_t offset : {1, 2, 3}) {
      expect_reference(exercise, fn, samples, 256, 0, 256, s,
                       "input pointer is " + std::to_string(offset) +
                           " element(s) past a 16-byte boundary",
                       offset);
    }
  }
}

/// n = 0 overwrites every counter with 0; a second call on the same
/// histogram overwrites (does not add to) the first call's counts.
inline void overwrites(const char* exercise, Histogram fn, int max_bins) {
  for (const int bins : {1, 256, 4096}) {
    if (bins > max_bins) continue;
    const auto zeros = run_histogram(fn, {}, bins, 0, bins);
    const std::string diff = describe_difference(std::vector<unsigned>(bins, 0u), zeros, 0, bins);
    ASSERT_TRUE(diff.empty()) << context(exercise, 0, 0) << "n = 0 must write all-zero counts\n"
                              << diff;
  }
  const auto s = seed();
  const auto samples = gen::uniform_int<int>(5000, s, 0, 99);
  DeviceBuffer<int> in(samples);
  DeviceBuffer<unsigned> out(100);
  out.fill_bytes(kPoison);
  fn(in.data(), samples.size(), out.data(), 100, 0, 100, nullptr);
  fn(in.data(), samples.size(), out.data(), 100, 0, 100, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::string diff =
      describe_difference(reference::histogram_even(samples, 100, 0, 100), out.download(), 0, 100);
  ASSERT_TRUE(diff.empty()) << context(exercise, samples.size(), s)
                            << "second call on the same histogram: counts must be overwritten, "
                               "not accumulated\n"
                            << diff;
}

/// Bad arguments throw std::invalid_argument before any CUDA call: no GPU needed.
inline void bad_input_throws(Histogram fn, int max_bins) {
  const int* some_in = reinterpret_cast<const int*>(std::uintptr_t{256});  // never dereferenced
  auto* some_out = reinterpret_cast<unsigned*>(std::uintptr_t{512});
  EXPECT_THROW(fn(some_in, 10, nullptr, 16, 0, 16, nullptr), std::invalid_argument) << "null histogram";
  EXPECT_THROW(fn(nullptr, 10, some_out, 16, 0, 16, nullptr), std::invalid_argument) << "null samples, n > 0";
  EXPECT_THROW(fn(some_in, 10, some_out, 0, 0, 16, nullptr), std::invalid_argument) << "num_bins = 0";
  EXPECT_THROW(fn(some_in, 10, some_out, -3, 0, 16, nullptr), std::invalid_argument) << "num_bins < 0";
  EXPECT_THROW(fn(some_in, 10, some_out, 16, 5, 5, nullptr), std::invalid_argument) << "lower == upper";
  EXPECT_THROW(fn(some_in, 10, some_out, 16, 6, 5, nullptr), std::invalid_argument) << "lower > upper";
  EXPECT_THROW(fn(some_in, cudalab::histogram::max_samples + 1, some_out, 16, 0, 16, nullptr),
               std::invalid_argument)
      << "n above max_samples";
  if (max_bins < INT_MAX) {
    EXPECT_THROW(fn(some_in, 10, some_out, max_bins + 1, 0, 1 << 30, nullptr), std::invalid_argument)
        << "num_bins above the exercise's maximum " << max_bins;
  }
}

/// On the GPU: a rejected call leaves the histogram as it was.
inline void bad_input_changes_nothing(const char* exercise, Histogram fn) {
  DeviceBuffer<int> in(4);
  DeviceBuffer<unsigned> out(16);
  out.fill_bytes(kPoison);
  EXPECT_THROW(fn(nullptr, 4, out.data(), 16, 0, 16, nullptr), std::invalid_argument);
  EXPECT_THROW(fn(in.data(), 4, out.data(), 16, 16, 0, nullptr), std::invalid_argument);
  EXPECT_THROW(fn(in.data(), 4, out.data(), 0, 0, 16, nullptr), std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  for (const unsigned v : out.download())
    ASSERT_EQ(kPoisonWord, v) << "[" << exercise << "] a call that threw wrote to the histogram";
}

/// Host only: EvenBins (the mapping every kernel uses) equals CUB's formula
/// written out in 64-bit arithmetic, at the edges of every bin and at random
/// samples, over ranges up to the full int range.
inline void even_bins_match_formula() {
  struct Range { int lower, upper; };
  const Range ranges[] = {{0, 1},       {0, 2},        {-5, 5},         {0, 256},     {-1000, 1000},
                          {0, 4097},    {3, 100003},   {INT_MIN, -1},   {0, INT_MAX}, {INT_MIN, 0},
                          {-1, INT_MAX}, {INT_MIN, INT_MAX}, {INT_MAX - 3, INT_MAX}, {INT_MIN, INT_MIN + 7}};
  std::uint64_t checked = 0;
  for (const auto r : ranges) {
    for (const int bins : {1, 2, 3, 7, 255, 256, 257, 4095, 4096, 65536, 1000003, INT_MAX}) {
      const cudalab::histogram::EvenBins map(bins, r.lower, r.upper);
      const auto check = [&](long long v) {
        if (v < INT_MIN || v > INT_MAX) return;
        const int s = static_cast<int>(v);
        const int expected = reference::even_bin_formula(s, bins, r.lower, r.upper);
        ASSERT_EQ(expected, map(s)) << "EvenBins(" << bins << ", " << r.lower << ", " << r.upper
                                    << ") at sample " << s;
        ++checked;
      };
      const long long width = static_cast<long long>(r.upper) - r.lower;
      // The first value of each of the first and last 300 bins, +-1.
      for (long long b = 0; b <= bins; ++b) {
        if (b == 300 && bins > 600) b = bins - 300;
        const long long first = r.lower + (b * width + bins - 1) / bins;  // ceil(b * width / bins)
        for (long long v = first - 1; v <= first + 1; ++v) check(v);
      }
      for (const int v : gen::uniform_int<int>(2000, checked, INT_MIN, INT_MAX)) check(v);
      for (const int v : gen::uniform_int<int>(2000, checked, r.lower, r.upper - 1)) check(v);
    }
  }
}

// ---------------------------------------------------------------------------
// LargeIndex: more than 2^31 samples, which the contract allows (n up to
// max_samples = 2^32 - 1). An index kept in int becomes negative past
// 2^31 - 1, and `i >= n` then drops every sample from there on. The samples
// below 2^31 go to bins 0..3999, those from 2^31 on to bins 4000..4095, so a
// lost high sample shows as a short count in the high bins.

constexpr std::size_t k2To31 = std::size_t{1} << 31;
/// 2^20 + 3 samples past 2^31: over 1000 blocks of every exercise, and a tail
/// after the last whole 16-byte vector.
constexpr std::size_t kAbove2To31 = k2To31 + (std::size_t{1} << 20) + 3;
constexpr int kLowBins = 4000, kHighBins = 96, kLargeIndexBins = kLowBins + kHighBins;

/// The LargeIndex sample at index i: i % 4000 below 2^31, 4000 + (i - 2^31) % 96 from there on.
__host__ __device__ constexpr int large_index_sample(std::size_t i) {
  return i < k2To31 ? static_cast<int>(i % kLowBins) : kLowBins + static_cast<int>((i - k2To31) % kHighBins);
}

/// How many of 0 .. m - 1 are r modulo `period`.
constexpr unsigned residue_count(std::size_t m, std::size_t period, std::size_t r) {
  return static_cast<unsigned>(m / period + (r < m % period ? 1 : 0));
}

static_assert(large_index_sample(0) == 0 && large_index_sample(4001) == 1 && large_index_sample(k2To31) == 4000);
static_assert(residue_count(10, 4, 1) == 3 && residue_count(10, 4, 2) == 2 && residue_count(3, 96, 5) == 0);

/// Writes the LargeIndex samples into s[0..n) (a grid-stride loop, 64-bit index).
__global__ void fill_large_index_samples(int* s, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    s[i] = large_index_sample(i);
}

/// Counts kAbove2To31 samples filled on the device into 4096 bins of width 1
/// over [0, 4096) and compares with the counts in closed form; skips where
/// the device (or its profile) lacks the 8 GiB, or under a sanitizer's cap.
inline void large_index(const char* exercise, Histogram fn) {
  const std::size_t n = kAbove2To31;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  std::optional<DeviceBuffer<int>> in;
  if (const std::string why =
          allocate_large(n * sizeof(int), "n = " + std::to_string(n) + " samples", [&] { in.emplace(n); });
      !why.empty())
    GTEST_SKIP() << why;
  fill_large_index_samples<<<1024, 256>>>(in->data(), n);
  CUDALAB_CHECK_LAUNCH();
  DeviceBuffer<unsigned> out(static_cast<std::size_t>(kLargeIndexBins) + kGuardWords);
  out.fill_bytes(kPoison);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::string what = "n = " + std::to_string(n) +
                           " samples (more than 2^31): sample i is i % 4000 below index 2^31 and "
                           "4000 + (i - 2^31) % 96 from there on, 4096 bins of width 1 over [0, 4096): ";
  try {
    fn(in->data(), n, out.data(), kLargeIndexBins, 0, kLargeIndexBins, nullptr);
    CUDALAB_CHECK(cudaDeviceSynchronize());
  } catch (const std::exception& e) {
    FAIL() << context(exercise, n, 0) << what << "the call failed: " << e.what()
           << "\nAn index computed in 32 bits wraps (int past 2^31 - 1) and reads outside the samples: "
              "use std::size_t for every index, as in the lesson.";
  }
  std::vector<unsigned> actual = out.download();
  for (std::size_t i = kLargeIndexBins; i < actual.size(); ++i)
    ASSERT_EQ(actual[i], kPoisonWord) << context(exercise, n, 0) << what << "the call wrote past the histogram: "
                                      << "histogram[" << i << "] changed";
  actual.resize(kLargeIndexBins);
  std::vector<unsigned> expected(kLargeIndexBins);
  for (int b = 0; b < kLowBins; ++b) expected[b] = residue_count(k2To31, kLowBins, b);
  for (int r = 0; r < kHighBins; ++r) expected[kLowBins + r] = residue_count(n - k2To31, kHighBins, r);
  const std::string diff = describe_difference(expected, actual, 0, kLargeIndexBins);
  unsigned long long high = 0;
  for (int r = 0; r < kHighBins; ++r) high += actual[kLowBins + r];
  ASSERT_TRUE(diff.empty()) << context(exercise, n, 0) << what << "\n" << diff
                            << (high == 0 ? " Bins 4000 to 4095 are empty: no sample from index 2^31 on was counted. "
                                            "An int index wraps past 2^31 - 1 to a negative number, and i < n is "
                                            "then false: compute i in std::size_t, as in the lesson: "
                                            "blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x."
                                          : "");
}

}  // namespace cudalab::test::histogram

/// Defines the suites Suite (uniform samples by size, 256 and 4096 bins),
/// Suite##Bins (by bin count), Suite##Cases (fixed cases on the GPU) and
/// Suite##BadInput (host only) for the histogram `function` of exercise
/// `exercise` (e.g. "1.10 histogram_global_atomics"), which supports up to
/// `max_bins` bins (tests use at most 65,536).
#define CUDALAB_HISTOGRAM_TEST_SUITES(Suite, exercise, function, max_bins)                        \
  namespace {                                                                                    \
  namespace hb = ::cudalab::test::histogram;                                                     \
  constexpr hb::Histogram Suite##Fn = &function;                                                 \
  constexpr int Suite##Max = (max_bins) < 65536 ? (max_bins) : 65536;                            \
  class Suite : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                        \
  TEST_P(Suite, Uniform256Bins) { hb::uniform(exercise, Suite##Fn, GetParam(), 256); }            \
  TEST_P(Suite, Uniform4096Bins) { hb::uniform(exercise, Suite##Fn, GetParam(), 4096); }          \
  INSTANTIATE_TEST_SUITE_P(Sizes, Suite, ::testing::ValuesIn(hb::kSizes), hb::size_name);         \
  class Suite##Bins : public ::cudalab::test::GpuTestWithParam<int> {};                          \
  TEST_P(Suite##Bins, Uniform) { hb::bins_uniform(exercise, Suite##Fn, GetParam()); }             \
  TEST_P(Suite##Bins, AllInOneBin) {                                                             \
    hb::all_in_one_bin(exercise, Suite##Fn, GetParam(), (1u << 20) + 7);                         \
  }                                                                                              \
  TEST_P(Suite##Bins, HalfInOneBin) {                                                            \
    hb::half_in_one_bin(exercise, Suite##Fn, GetParam(), (1u << 20) + 7);                        \
  }                                                                                              \
  INSTANTIATE_TEST_SUITE_P(Counts, Suite##Bins, ::testing::ValuesIn(hb::bin_counts(Suite##Max)),  \
                           hb::bins_name);                                                       \
  class Suite##Cases : public ::cudalab::test::GpuTest {};                                       \
  TEST_F(Suite##Cases, AllInOneBinLarge) {                                                       \
    hb::all_in_one_bin(exercise, Suite##Fn, 256, (1u << 26) + 1);                                \
  }                                                                                              \
  TEST_F(Suite##Cases, AllInOneBinLargeMaxBins) {                                                \
    hb::all_in_one_bin(exercise, Suite##Fn, Suite##Max, (1u << 26) + 1);                         \
  }                                                                                              \
  /* An odd bin count: the last bin is a low half of 1.12's packed words, its wraps carry into */ \
  /* a bin that does not exist (the guard after the histogram sees a write there). */          \
  TEST_F(Suite##Cases, AllInOneBinLargeOddBins) {                                                \
    hb::all_in_one_bin(exercise, Suite##Fn, Suite##Max - 1 + Suite##Max % 2, (1u << 26) + 1);     \
  }                                                                                              \
  TEST_F(Suite##Cases, OneBinEverySize) { hb::one_bin_every_size(exercise, Suite##Fn, Suite##Max); } \
  TEST_F(Suite##Cases, HalfInOneBinLarge) {                                                      \
    hb::half_in_one_bin(exercise, Suite##Fn, 4096, (1u << 26) + 1);                              \
  }                                                                                              \
  TEST_F(Suite##Cases, HotAdjacentBins) { hb::hot_adjacent_bins(exercise, Suite##Fn, Suite##Max); } \
  TEST_F(Suite##Cases, HotAdjacentBins256) { hb::hot_adjacent_bins(exercise, Suite##Fn, 256); }   \
  TEST_F(Suite##Cases, Boundaries) { hb::boundaries(exercise, Suite##Fn, Suite##Max); }          \
  TEST_F(Suite##Cases, MatchesCub) { hb::matches_cub(exercise, Suite##Fn, Suite##Max); }         \
  TEST_F(Suite##Cases, Misaligned) { hb::misaligned(exercise, Suite##Fn); }                      \
  TEST_F(Suite##Cases, LargeIndexAbove2To31) { hb::large_index(exercise, Suite##Fn); }           \
  TEST_F(Suite##Cases, Overwrites) { hb::overwrites(exercise, Suite##Fn, Suite##Max); }          \
  TEST_F(Suite##Cases, BadInputChangesNothing) {                                                 \
    hb::bad_input_changes_nothing(exercise, Suite##Fn);                                          \
  }                                                                                              \
  TEST(Suite##BadInput, Throws) { hb::bad_input_throws(Suite##Fn, max_bins); }                   \
  }  // namespace
