// Benchmark registration shared by exercises 1.1 to 1.4: each exercise's
// bench file registers its sum under "<function>/int32/<n>"; the baselines
// (cub_reduce_sum, copy_bandwidth) run in the same program.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "cudalab/bench.cuh"
#include "cudalab/reduce.cuh"

namespace cudalab::bench::sum {

/// The chapter's standard sizes: 2^20 (4 MiB of int32, fits in L2 but is
/// flushed before every run), 2^24 and 2^28 (1 GiB).
inline const std::initializer_list<std::int64_t> kSizes = {1 << 20, 1 << 24, 1 << 28};

/// Input values: uniform in [-2^20, 2^20]; new ones, generated on the
/// device, before every timed call.
inline constexpr int kLow = -(1 << 20);
/// @copydoc kLow
inline constexpr int kHigh = 1 << 20;

using IntSum = void (*)(const int*, std::size_t, long long*, cudaStream_t);

/// @brief The sum of the n int32 of `in` (device memory) as a long long:
///        thrust::reduce from 0LL on the device (0 when n = 0), on the
///        default stream, waited for. Defined in bench/reduce_checks.cu,
///        compiled once per group (its BASELINES).
long long device_sum(const int* in, std::size_t n);

/// Registers "<name>/int32/<n>" for every standard size: n int32 read once,
/// one long long written; new inputs before every call, the last sum checked
/// against device_sum (thrust::reduce).
inline bool register_int_sum(const std::string& name, IntSum fn) {
  auto* b = register_device_benchmark(name + "/int32", [fn](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    DeviceBuffer<int>& in = fresh_buffer<int>(n);
    static DeviceBuffer<long long> out(1);
    Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) { refill_uniform_ints(in, kLow, kHigh, s); };
    fresh.verify = [&]() -> std::string {
      const long long want = device_sum(in.data(), n);
      const long long got = out.download()[0];
      return got == want ? "" : "sum " + std::to_string(got) + ", expected " + std::to_string(want);
    };
    time_runs(state, [&](cudaStream_t s) { fn(in.data(), n, out.data(), s); },
              n * sizeof(int) + sizeof(long long), n, fresh);
  });
  for (auto n : kSizes) b->Arg(n);
  return true;
}

}  // namespace cudalab::bench::sum
