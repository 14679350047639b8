// Benchmark registration shared by chapter 2: each exercise's bench file
// registers its function under "<function>/int32/<n>" (segment sorts:
// ".../<n>/<segment>", merges: ".../<n>/<run>", pairs: "<function>/int32_int32/<n>");
// the baselines (bench/sort_baselines_bench.cu) run in the same program.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include "cudalab/bench.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::bench::sort {

/// The chapter's standard sizes for whole-array sorts: 2^20, 2^24 and 2^28 int32.
inline const std::initializer_list<std::int64_t> kSizes = {1 << 20, 1 << 24, 1 << 28};

/// The size of the batched segment sorts (2.1, 2.2) and of the merges (2.4 to 2.6).
inline constexpr std::size_t kBatchN = std::size_t{1} << 24;

/// The segments of 2.1 and 2.2 (each benchmarked up to its maximum).
inline const std::initializer_list<std::size_t> kSegments = {256, 1024, 2048};

/// Keys uniform over the whole int32 range, generated on the device once.
inline const DeviceBuffer<int>& input(std::size_t n) {
  return cached_uniform_ints<int>(n, 2025, INT32_MIN, INT32_MAX);
}

/// One output buffer per (n, slot), shared by everything in the program.
inline DeviceBuffer<int>& output(std::size_t n, int slot = 0) {
  static std::map<std::pair<std::size_t, int>, DeviceBuffer<int>> outputs;
  return outputs.try_emplace({n, slot}, n).first->second;
}

namespace detail {
// key[i] = 16 * (i mod run) + (hash(i) mod 16): strictly increasing inside
// every run, and runs interleave at random.
template <class Key>
__global__ void fill_sorted_runs_kernel(Key* keys, std::size_t n, std::size_t run, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t x = mix64(i * 0x9E3779B97F4A7C15ull + seed);
    keys[i] = static_cast<Key>(static_cast<Key>(16 * (i % run) + (x & 15)) + INT32_MIN);
  }
}
}  // namespace detail

/// @brief "" when `out` holds each `segment`-long part of `in` sorted (the last
///        part may be shorter; n int32 each, device memory), else what is
///        wrong. Work O(n), on the device (Thrust count_if and
///        transform_reduce, on the default stream, waited for). Defined in
///        bench/sort_checks.cu, compiled once per group (its BASELINES).
std::string check_sorted_segments(const int* in, const int* out, std::size_t n, std::size_t segment);

/// @brief True when a[0, n) and b[0, n) (int32, device memory) are equal:
///        thrust::equal on the device, on the default stream, waited for.
///        Defined in bench/sort_checks.cu, compiled once per group (its
///        BASELINES).
bool device_equal(const int* a, const int* b, std::size_t n);

/// @brief New keys before every call, uniform over the whole int32 range, and
///        the check that the last output is `in` sorted within each segment.
inline Fresh fresh_sort(DeviceBuffer<int>& in, const DeviceBuffer<int>& out, std::size_t segment) {
  Fresh f;
  f.refresh = [&in](cudaStream_t s) { refill_uniform_ints(in, INT32_MIN, INT32_MAX, s); };
  f.verify = [&in, &out, segment] { return check_sorted_segments(in.data(), out.data(), in.size(), segment); };
  return f;
}

/// n keys sorted within each run of `run` (run ≤ 2^27), generated on the device once per (n, run).
inline const DeviceBuffer<int>& sorted_runs(std::size_t n, std::size_t run) {
  static std::map<std::pair<std::size_t, std::size_t>, DeviceBuffer<int>> cache;
  auto it = cache.find({n, run});
  if (it == cache.end()) {
    DeviceBuffer<int> keys(n);
    detail::fill_sorted_runs_kernel<int><<<4 * sm_count(), 256>>>(keys.data(), n, run, 77);
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaDeviceSynchronize());
    it = cache.emplace(std::make_pair(n, run), std::move(keys)).first;
  }
  return it->second;
}

/// A whole-array sort of keys.
using SortFn = std::function<void(const int*, std::size_t, int*, cudaStream_t)>;
/// A whole-array sort of key-value pairs.
using PairsFn = std::function<void(const int*, const int*, std::size_t, int*, int*, cudaStream_t)>;
/// A segment sort or a merge of runs: fn(in, n, out, segment or run, stream).
using ParamFn = std::function<void(const int*, std::size_t, int*, std::size_t, cudaStream_t)>;

/// Registers "<name>/int32/<n>" for `sizes`: n keys read and written once (8n
/// bytes); new keys before every call, the last output checked.
inline bool register_sort(const std::string& name, SortFn fn,
                          std::initializer_list<std::int64_t> sizes = kSizes) {
  auto* b = register_device_benchmark(name + "/int32", [fn](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    DeviceBuffer<int>& in = fresh_buffer<int>(n);
    DeviceBuffer<int>& out = output(n);
    time_runs(state, [&](cudaStream_t s) { fn(in.data(), n, out.data(), s); }, 2 * n * sizeof(int), n,
              fresh_sort(in, out, n));
  });
  for (auto n : sizes) b->Arg(n);
  return true;
}

/// Registers "<name>/int32_int32/<n>" for key-value pairs (values: the keys again):
/// 16n bytes (keys and values read and written once); new keys before every
/// call, the last output checked.
inline bool register_pairs(const std::string& name, PairsFn fn,
                           std::initializer_list<std::int64_t> sizes = kSizes) {
  auto* b = register_device_benchmark(name + "/int32_int32", [fn](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    DeviceBuffer<int>& in = fresh_buffer<int>(n);
    DeviceBuffer<int>& keys = output(n, 0);
    DeviceBuffer<int>& values = output(n, 1);
    Fresh fresh = fresh_sort(in, keys, n);
    fresh.verify = [&in, &keys, &values, n]() -> std::string {
      std::string wrong = check_sorted_segments(in.data(), keys.data(), n, n);
      if (wrong.empty() && !device_equal(keys.data(), values.data(), n)) {
        wrong = "a value does not follow its key";
      }
      return wrong;
    };
    time_runs(state, [&](cudaStream_t s) { fn(in.data(), in.data(), n, keys.data(), values.data(), s); },
              4 * n * sizeof(int), n, fresh);
  });
  for (auto n : sizes) b->Arg(n);
  return true;
}

/// Registers "<name>/int32/<kBatchN>/<segment>" for every segment ≤ max_segment
/// of kSegments: a batch of independent segment sorts, 8n bytes; new keys
/// before every call, the last output checked.
inline bool register_segments(const std::string& name, ParamFn fn, std::size_t max_segment) {
  for (const std::size_t segment : kSegments) {
    if (segment > max_segment) continue;
    const std::string full = name + "/int32/" + std::to_string(kBatchN) + "/" + std::to_string(segment);
    auto* b = register_device_benchmark(full, [fn, segment](benchmark::State& state) {
      DeviceBuffer<int>& in = fresh_buffer<int>(kBatchN);
      DeviceBuffer<int>& out = output(kBatchN);
      time_runs(state, [&](cudaStream_t s) { fn(in.data(), kBatchN, out.data(), segment, s); },
                2 * kBatchN * sizeof(int), kBatchN, fresh_sort(in, out, segment));
    });
  }
  return true;
}

/// Registers "<name>/int32/<kBatchN>/<run>" for every run of `runs`: one merge
/// pass over kBatchN keys in sorted runs, 8n bytes (compare with copy_bandwidth);
/// new runs before every call, the last output checked (sorted in runs of 2 · run).
inline bool register_merge(const std::string& name, ParamFn fn, std::initializer_list<std::size_t> runs) {
  for (const std::size_t run : runs) {
    const std::string full = name + "/int32/" + std::to_string(kBatchN) + "/" + std::to_string(run);
    auto* b = register_device_benchmark(full, [fn, run](benchmark::State& state) {
      DeviceBuffer<int>& in = fresh_buffer<int>(kBatchN, 1);
      DeviceBuffer<int>& out = output(kBatchN);
      Fresh fresh;
      fresh.refresh = [&in, run](cudaStream_t s) {
        detail::fill_sorted_runs_kernel<int><<<4 * sm_count(), 256, 0, s>>>(in.data(), kBatchN, run, next_seed());
        CUDALAB_CHECK_LAUNCH();
      };
      fresh.verify = [&in, &out, run] { return check_sorted_segments(in.data(), out.data(), kBatchN, 2 * run); };
      time_runs(state, [&](cudaStream_t s) { fn(in.data(), kBatchN, out.data(), run, s); },
                2 * kBatchN * sizeof(int), kBatchN, fresh);
    });
  }
  return true;
}

}  // namespace cudalab::bench::sort
