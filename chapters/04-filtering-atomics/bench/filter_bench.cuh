// Benchmark registration shared by exercises 4.1 to 4.6: each exercise's
// bench file registers its filter under "<function>/int32/<selectivity>/<n>"
// for the selectivities 0, 1, 50, 99 and 100 % and n = 2^20, 2^24, 2^28;
// the baselines (bench/filter_baselines_bench.cu) run in the same program.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>

#include "cudalab/bench.cuh"
#include "cudalab/filter.cuh"

namespace cudalab::bench::filter {

/// The chapter's standard sizes: 2^20, 2^24 and 2^28 int32 (1 GiB).
inline const std::initializer_list<std::int64_t> kSizes = {1 << 20, 1 << 24, 1 << 28};

/// The selectivities of the table, in percent of the elements selected.
inline const std::initializer_list<unsigned> kSelectivities = {0, 1, 50, 99, 100};

/// Input values: uniform in [0, 100000), so that LessThan{1000 p} selects
/// p % of them; new ones, generated on the device, before every timed call.
inline constexpr int kLow = 0;
/// @copydoc kLow
inline constexpr int kHigh = 99999;

/// The predicate that selects `percent` % of the inputs.
inline cudalab::filter::LessThan<int> select_percent(unsigned percent) {
  return {static_cast<int>(percent * 1000)};
}

/// One output buffer per size (capacity n), shared by everything in the program.
inline DeviceBuffer<int>& output(std::size_t n) {
  static std::map<std::size_t, DeviceBuffer<int>> outputs;
  return outputs.try_emplace(n, n).first->second;
}

/// The device count every filter writes.
inline unsigned long long* count() {
  static DeviceBuffer<unsigned long long> c(1);
  return c.data();
}

/// @brief "" when out[0, *count) holds exactly the elements of `in` that
///        `pred` selects (in any order), else what is wrong. `in`: n int32,
///        `out`: int32, `count`: one counter, all device memory; every filter
///        benchmark selects with a LessThan<int> (select_percent), the one
///        predicate this check is compiled for. Work O(n), on the device
///        (Thrust count_if and transform_reduce, on the default stream, waited
///        for). Defined in bench/filter_checks.cu, compiled once per group
///        (its BASELINES).
std::string check_filter(const int* in, std::size_t n, cudalab::filter::LessThan<int> pred, const int* out,
                         const unsigned long long* count);

/// A filter as the benchmarks call it.
using FilterFn = std::function<void(const int*, std::size_t, cudalab::filter::LessThan<int>, int*, std::size_t,
                                    unsigned long long*, cudaStream_t)>;

/// Registers "<name>/int32/<percent>[/<variant>]/<n>" for each selectivity
/// and size: n int32 read once, about n · percent / 100 written once; items
/// = n elements examined; new inputs before every call, the last output checked.
inline bool register_filter(const std::string& name, FilterFn fn, const std::string& variant = "",
                            std::initializer_list<unsigned> selectivities = kSelectivities,
                            std::initializer_list<std::int64_t> sizes = kSizes) {
  for (const unsigned pct : selectivities) {
    const std::string full =
        name + "/int32/" + std::to_string(pct) + (variant.empty() ? std::string() : "/" + variant);
    auto* b = register_device_benchmark(full, [fn, pct](benchmark::State& state) {
      const auto n = static_cast<std::size_t>(state.range(0));
      DeviceBuffer<int>& in = fresh_buffer<int>(n);
      DeviceBuffer<int>& out = output(n);
      const std::size_t selected = n / 100 * pct;
      Fresh fresh;
      fresh.refresh = [&](cudaStream_t s) { refill_uniform_ints(in, kLow, kHigh, s); };
      fresh.verify = [&] { return check_filter(in.data(), n, select_percent(pct), out.data(), count()); };
      time_runs(
          state, [&](cudaStream_t s) { fn(in.data(), n, select_percent(pct), out.data(), n, count(), s); },
          (n + selected) * sizeof(int), n, fresh);
    });
    for (auto n : sizes) b->Arg(n);
  }
  return true;
}

}  // namespace cudalab::bench::filter
