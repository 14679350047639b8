// Benchmark registration shared by exercises 1.5 to 1.9: each exercise's
// bench file registers its scan under "<function>/int32/<n>" (1.9:
// "segmented_scan/int32/<n>/<inclusive|exclusive>/<segments>"); the
// baselines (bench/scan_baselines_bench.cu) run in the same program.
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
#include "cudalab/scan.cuh"

namespace cudalab::bench::scan {

/// The chapter's standard sizes: 2^20, 2^24 and 2^28 int32 (1 GiB).
inline const std::initializer_list<std::int64_t> kSizes = {1 << 20, 1 << 24, 1 << 28};

/// The sizes of the segmented scans (exercise 1.9).
inline const std::initializer_list<std::int64_t> kSegmentedSizes = {1 << 24, 1 << 28};

/// The tiles of the batched block scans: 1.5 at 1024 (one element per thread
/// of a 1024-thread block), 1.6 at 2048 (two per thread).
inline constexpr std::size_t kHillisSteeleTile = 1024;
inline constexpr std::size_t kBlellochTile = 2048;

/// Input values: uniform in [-2^20, 2^20]; new ones, generated on the device,
/// before every timed call.
inline constexpr int kLow = -(1 << 20);
/// @copydoc kLow
inline constexpr int kHigh = 1 << 20;

/// One output buffer per size, shared by everything in the program.
inline DeviceBuffer<int>& output(std::size_t n) {
  static std::map<std::size_t, DeviceBuffer<int>> outputs;
  return outputs.try_emplace(n, n).first->second;
}

/// What a registered scan computes, for the check of its last output.
struct ScanKind {
  bool inclusive;    ///< inclusive (else exclusive, from 0)
  std::size_t tile;  ///< each tile of `tile` elements scanned on its own; 0: the whole array
};

/// @brief "" when `out` is the scan `kind` of `in` (n int32 each, device
///        memory; `segment_of`: the segment of each element, or null for
///        tiles), else where it first differs. Work O(n), on the device (Thrust
///        scans by key and a mismatch, on the default stream, waited for), in
///        a scratch buffer of n unsigned kept per n. Defined in
///        bench/scan_checks.cu, compiled once per group (its BASELINES).
std::string check_scan(const int* in, const int* out, std::size_t n, ScanKind kind,
                       const std::size_t* segment_of = nullptr);

/// A scan as the benchmarks call it.
using ScanFn = std::function<void(const int*, std::size_t, int*, cudaStream_t)>;

/// Registers "<name>/int32/<n>" for every standard size: n int32 read once
/// and n written once (8n bytes); new inputs before every call, the last
/// output checked as a scan of `kind`.
inline bool register_scan(const std::string& name, ScanFn fn, ScanKind kind) {
  auto* b = register_device_benchmark(name + "/int32", [fn, kind](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    DeviceBuffer<int>& in = fresh_buffer<int>(n);
    DeviceBuffer<int>& out = output(n);
    Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) { refill_uniform_ints(in, kLow, kHigh, s); };
    fresh.verify = [&] { return check_scan(in.data(), out.data(), n, kind); };
    time_runs(state, [&](cudaStream_t s) { fn(in.data(), n, out.data(), s); }, 2 * n * sizeof(int), n, fresh);
  });
  for (auto n : kSizes) b->Arg(n);
  return true;
}

/// A scan of tiles (1.5, 1.6) as its API declares it: fn(in, n, out, tile, stream).
using TiledScanFn = void (*)(const int*, std::size_t, int*, std::size_t, cudaStream_t);

/// Registers the tiled scan `fn` as register_scan does, every call with tiles
/// of `kind.tile` elements.
inline bool register_tiled_scan(const std::string& name, TiledScanFn fn, ScanKind kind) {
  const std::size_t tile = kind.tile;
  return register_scan(
      name, [fn, tile](const int* in, std::size_t n, int* out, cudaStream_t s) { fn(in, n, out, tile, s); },
      kind);
}

/// The segment patterns of 1.9: 2^10 and 2^20 equal segments, and random
/// lengths with a mean of n / 2^10 (a head wherever a hash of i is 0 mod
/// n / 2^10).
struct Segments {
  const char* name;   ///< the last part of the benchmark name
  std::size_t count;  ///< equal segments, or the expected count when random
  bool random;
};
inline const std::initializer_list<Segments> kSegmentPatterns = {
    {"equal1024", 1024, false}, {"equal1048576", 1048576, false}, {"random1024", 1024, true}};

namespace detail {
template <class Flag>
__global__ void fill_heads_kernel(Flag* flags, std::size_t n, std::size_t length, bool random) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t x = mix64(i * 0x9E3779B97F4A7C15ull + 12345);
    flags[i] = static_cast<Flag>(random ? (i == 0 || x % length == 0) : (i % length == 0));
  }
}
}  // namespace detail

/// Head flags of `pattern` for n elements, generated on the device once per (n, pattern).
inline const DeviceBuffer<std::uint8_t>& head_flags(std::size_t n, const Segments& pattern) {
  static std::map<std::pair<std::size_t, std::string>, DeviceBuffer<std::uint8_t>> cache;
  auto key = std::make_pair(n, std::string(pattern.name));
  auto it = cache.find(key);
  if (it == cache.end()) {
    DeviceBuffer<std::uint8_t> flags(n);
    detail::fill_heads_kernel<<<4 * sm_count(), 256>>>(flags.data(), n, n / pattern.count, pattern.random);
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaDeviceSynchronize());
    it = cache.emplace(key, std::move(flags)).first;
  }
  return it->second;
}

/// @brief The segment of every element for head flags of `pattern` (n
///        std::size_t, the inclusive scan of the flags), computed on the
///        device (thrust::inclusive_scan, on the default stream, waited for)
///        once per (n, pattern) and kept. Defined in bench/scan_checks.cu,
///        compiled once per group (its BASELINES).
const DeviceBuffer<std::size_t>& segment_ids(std::size_t n, const Segments& pattern);

/// Registers "<name>/int32/<n>[/<variant>]/<pattern>" for every segmented
/// size and pattern; `fn(in, flags, n, out, pattern, stream)`;
/// `bytes_per_element` is what one element costs in device memory traffic;
/// new values before every call, the last output checked as a segmented scan
/// (inclusive or not) with the pattern's segments.
template <class Fn>
bool register_segmented(const std::string& name, const std::string& variant, std::size_t bytes_per_element,
                        bool inclusive, Fn fn) {
  for (const auto n64 : kSegmentedSizes) {
    for (const Segments& pattern : kSegmentPatterns) {
      const auto n = static_cast<std::size_t>(n64);
      const std::string full = name + "/int32/" + std::to_string(n) + (variant.empty() ? "" : "/" + variant) +
                               "/" + pattern.name;
      auto* b = register_device_benchmark(full, [=](benchmark::State& state) {
        DeviceBuffer<int>& in = fresh_buffer<int>(n);
        const DeviceBuffer<std::uint8_t>& flags = head_flags(n, pattern);
        DeviceBuffer<int>& out = output(n);
        Fresh fresh;
        fresh.refresh = [&](cudaStream_t s) { refill_uniform_ints(in, kLow, kHigh, s); };
        fresh.verify = [&] {
          return check_scan(in.data(), out.data(), n, ScanKind{inclusive, 0}, segment_ids(n, pattern).data());
        };
        time_runs(state, [&](cudaStream_t s) { fn(in.data(), flags.data(), n, out.data(), pattern, s); },
                  bytes_per_element * n, n, fresh);
      });
    }
  }
  return true;
}

}  // namespace cudalab::bench::scan
