// Benchmark registration shared by exercises 1.10 to 1.12: each exercise's
// bench file registers its histogram under
// "<function>/<distribution>/<bins>/<n>"; the baselines (cub_histogram_even,
// copy_bandwidth) run in the same program.
#pragma once

#include <benchmark/benchmark.h>
#include <cub/device/device_histogram.cuh>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/histogram.cuh"

namespace cudalab::bench::histogram {

/// The chapter's sizes for histograms: 2^24 and 2^28 int32 samples (64 MiB, 1 GiB).
inline const std::initializer_list<std::int64_t> kSizes = {1 << 24, 1 << 28};

/// Samples are counted over [kLower, kUpper): 2^20 values, which 256, 4096
/// and 65,536 bins divide evenly.
constexpr int kLower = 0;
/// @copydoc kLower
constexpr int kUpper = 1 << 20;

/// How the samples are spread over the bins.
enum class Distribution {
  uniform,       ///< uniform over [kLower, kUpper): every bin equally likely
  half_one_bin,  ///< half the samples (at random positions) in one bin, the rest uniform
  all_one_bin,   ///< every sample in one bin: the worst case for contention
};

/// @return the distribution's name as it appears in benchmark names.
inline const char* name(Distribution d) {
  switch (d) {
    case Distribution::uniform: return "uniform";
    case Distribution::half_one_bin: return "half_one_bin";
    default: return "all_one_bin";
  }
}

/// The value every skewed sample takes (in the middle of the range).
constexpr int kHotValue = kUpper / 2 + 3;

namespace detail {
/// out[i] = kHotValue for every i (all) or for the i whose hash bit is set
/// (about half), else uniform[i]; element i depends only on (seed, i)
/// (the SplitMix64 finalizer, as in cudalab/generators.hpp).
__global__ inline void skew_kernel(const int* uniform, int* out, std::size_t n, std::uint64_t seed,
                                   bool all, int hot_value = kHotValue) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const bool hot = all || (mix64(seed ^ (i * 0x9E3779B97F4A7C15ull)) >> 63) != 0;
    out[i] = hot ? hot_value : uniform[i];
  }
}
}  // namespace detail

/// @brief n samples of distribution `d`, generated on the device once and
///        cached for the life of the program (1 GiB per distribution at 2^28).
inline const DeviceBuffer<int>& samples(Distribution d, std::size_t n) {
  const DeviceBuffer<int>& uniform = cached_uniform_ints<int>(n, 2026, kLower, kUpper - 1);
  if (d == Distribution::uniform) return uniform;
  static std::map<std::pair<int, std::size_t>, DeviceBuffer<int>> cache;
  const auto key = std::make_pair(static_cast<int>(d), n);
  auto it = cache.find(key);
  if (it == cache.end()) {
    DeviceBuffer<int> buf(n);
    if (n > 0) {
      detail::skew_kernel<<<4 * sm_count(), 256>>>(uniform.data(), buf.data(), n, 2027,
                                                    d == Distribution::all_one_bin);
      CUDALAB_CHECK_LAUNCH();
      CUDALAB_CHECK(cudaDeviceSynchronize());
    }
    it = cache.emplace(key, std::move(buf)).first;
  }
  return it->second;
}

/// @brief New samples of distribution `d` in `buf` (uniform ones in `uniform`,
///        a scratch of the same size), from new seeds; the hot value of the
///        skewed distributions is new too, so every answer changes.
inline void refill_samples(Distribution d, DeviceBuffer<int>& buf, DeviceBuffer<int>& uniform, cudaStream_t s) {
  if (buf.size() == 0) return;
  if (d == Distribution::uniform) {
    refill_uniform_ints(buf, kLower, kUpper - 1, s);
    return;
  }
  refill_uniform_ints(uniform, kLower, kUpper - 1, s);
  const int hot = kLower + static_cast<int>(next_seed() % static_cast<std::uint64_t>(kUpper - kLower));
  detail::skew_kernel<<<4 * sm_count(), 256, 0, s>>>(uniform.data(), buf.data(), buf.size(), next_seed(),
                                                       d == Distribution::all_one_bin, hot);
  CUDALAB_CHECK_LAUNCH();
}

/// @brief "" when `got` holds the counts of `in` in num_bins even bins of
///        [kLower, kUpper), else the first wrong bin. The reference is
///        cub::DeviceHistogram::HistogramEven, in this program.
inline std::string check_histogram(const int* in, std::size_t n, const unsigned* got, int num_bins) {
  static DeviceBuffer<unsigned> want;
  if (want.size() < static_cast<std::size_t>(num_bins)) want = DeviceBuffer<unsigned>(static_cast<std::size_t>(num_bins));
  std::size_t bytes = 0;
  const auto count = static_cast<std::int64_t>(n);
  CUDALAB_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, bytes, in, want.data(), num_bins + 1, kLower, kUpper,
                                                    count));
  CUDALAB_CHECK(cub::DeviceHistogram::HistogramEven(temp_storage(bytes), bytes, in, want.data(), num_bins + 1,
                                                    kLower, kUpper, count));
  std::vector<unsigned> w(static_cast<std::size_t>(num_bins)), g(w.size());
  CUDALAB_CHECK(cudaMemcpy(w.data(), want.data(), w.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CUDALAB_CHECK(cudaMemcpy(g.data(), got, g.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (std::size_t b = 0; b < w.size(); ++b) {
    if (w[b] != g[b]) {
      return "bin " + std::to_string(b) + " holds " + std::to_string(g[b]) + ", expected " + std::to_string(w[b]);
    }
  }
  return "";
}

/// The signature every histogram of the chapter shares (cudalab/histogram.cuh).
using Histogram = void (*)(const int*, std::size_t, unsigned int*, int, int, int, cudaStream_t);

/// @brief Registers "<name>/<distribution>/<bins>/<n>" for each distribution,
///        each bin count in `bins` and each n in `sizes` (uniform) or
///        `skewed_sizes` (half_one_bin, all_one_bin): n int32 read once, bins
///        counters written; new samples (and hot bin) before every call, the
///        last counts checked.
inline bool register_histogram(const std::string& name, Histogram fn, std::vector<int> bins,
                               std::vector<std::int64_t> sizes,
                               std::vector<std::int64_t> skewed_sizes) {
  for (const Distribution d :
       {Distribution::uniform, Distribution::half_one_bin, Distribution::all_one_bin}) {
    auto* b = register_device_benchmark(
        name + "/" + histogram::name(d), [fn, d](benchmark::State& state) {
          const int num_bins = static_cast<int>(state.range(0));
          const auto n = static_cast<std::size_t>(state.range(1));
          DeviceBuffer<int>& in = fresh_buffer<int>(n);
          static std::map<int, DeviceBuffer<unsigned>> outputs;
          DeviceBuffer<unsigned>& out =
              outputs.try_emplace(num_bins, static_cast<std::size_t>(num_bins)).first->second;
          Fresh fresh;
          fresh.refresh = [&](cudaStream_t s) {
            refill_samples(d, in, d == Distribution::uniform ? in : fresh_buffer<int>(n, 1), s);
          };
          fresh.verify = [&] { return check_histogram(in.data(), n, out.data(), num_bins); };
          time_runs(
              state,
              [&](cudaStream_t s) { fn(in.data(), n, out.data(), num_bins, kLower, kUpper, s); },
              n * sizeof(int) + static_cast<std::size_t>(num_bins) * sizeof(unsigned), n, fresh);
        });
    for (const int nb : bins)
      for (const auto n : d == Distribution::uniform ? sizes : skewed_sizes) b->Args({nb, n});
  }
  return true;
}

}  // namespace cudalab::bench::histogram
