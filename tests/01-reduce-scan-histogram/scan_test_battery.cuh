// The test battery shared by exercises 1.5 to 1.8: every scan has the same
// contract (cudalab/scan.cuh): int32 in and out, sums modulo 2^32, n = 0
// writes nothing, out == in allowed. 1.5 and 1.6 scan each tile on its own;
// 1.7 and 1.8 scan the whole array. Each exercise's test file instantiates
// the battery with its own suite name, exercise id and function.
#pragma once

#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/compare.hpp"
#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/scan.cuh"
#include "cudalab/test/harness.hpp"
#include "scan_reference.hpp"

namespace cudalab::test::scan {

constexpr unsigned char kPoison = 0xA5;  // unwritten output reads 0xA5A5A5A5
constexpr int kPoisonInt = static_cast<int>(0xA5A5A5A5u);
constexpr std::size_t kGuard = 64;       // poisoned elements after the output, must stay untouched
constexpr std::size_t kLookbackTile = 4096;  // the tile of 1.7 and 1.8

/// A scan under test: `fn(in, n, out, tile, stream)`; untiled scans ignore `tile`.
using ScanFn = std::function<void(const int*, std::size_t, int*, std::size_t, cudaStream_t)>;

/// What the battery needs to know about an exercise.
struct Spec {
  const char* exercise;  ///< e.g. "1.5 inclusive_scan_hillis_steele"
  ScanFn fn;
  bool inclusive;
  std::size_t tile;      ///< the tile of the size-by-size tests (0: the whole array is one scan)
  std::size_t min_tile;  ///< allowed tiles (0, 0 for untiled scans)
  std::size_t max_tile;
};

/// The edge sizes of docs/guides/contributing.md ("Tests"), the tile boundaries of every exercise
/// (1024, 2048, 4096 and 4096^2, where 1.7's sums need a second level), a prime, 2^20 + 7 and one
/// large size.
inline const std::vector<std::size_t> kSizes = {
    0, 1, 2, 3, 4, 5, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096,
    4097, 8191, 8192, 8193, 12289, 65537, 1000003, (1u << 20) + 7, 4096u * 4096u, 4096u * 4096u + 1,
    (1u << 26) + 1};

inline std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

/// Where the input and output live relative to a 16-byte aligned allocation.
struct Layout {
  std::size_t in_offset = 0;   ///< elements past the start of the input allocation
  std::size_t out_offset = 0;  ///< elements past the start of the output allocation
  bool in_place = false;       ///< out == in (the offsets are then in_offset for both)
};

/// The output of one call, and whether the guard after it stayed poisoned.
struct Outcome {
  std::vector<int> out;
  bool guard_intact = true;
};

/// Runs the scan on `host` (copied to the device) with the output poisoned.
inline Outcome run(const Spec& s, const std::vector<int>& host, std::size_t tile, Layout layout = {}) {
  const std::size_t n = host.size();
  const std::size_t in_total = layout.in_offset + n + kGuard;
  DeviceBuffer<int> in_buf(in_total);
  in_buf.fill_bytes(kPoison);
  if (n > 0)
    CUDALAB_CHECK(cudaMemcpy(in_buf.data() + layout.in_offset, host.data(), n * sizeof(int),
                             cudaMemcpyHostToDevice));
  DeviceBuffer<int> out_buf(layout.in_place ? 0 : layout.out_offset + n + kGuard);
  out_buf.fill_bytes(kPoison);
  int* out_base = layout.in_place ? in_buf.data() : out_buf.data();
  const std::size_t out_offset = layout.in_place ? layout.in_offset : layout.out_offset;
  s.fn(n > 0 ? in_buf.data() + layout.in_offset : nullptr, n, n > 0 ? out_base + out_offset : nullptr,
       tile, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  Outcome o;
  std::vector<int> all(out_offset + n + kGuard);
  CUDALAB_CHECK(cudaMemcpy(all.data(), out_base, all.size() * sizeof(int), cudaMemcpyDeviceToHost));
  o.out.assign(all.begin() + static_cast<std::ptrdiff_t>(out_offset),
               all.begin() + static_cast<std::ptrdiff_t>(out_offset + n));
  for (std::size_t g = out_offset + n; g < all.size(); ++g) o.guard_intact &= all[g] == kPoisonInt;
  return o;
}

/// A sentence on the most likely cause of a wrong out[i].
inline std::string diagnose(const Spec& s, const std::vector<int>& in, const std::vector<int>& expected,
                            const std::vector<int>& actual, std::size_t i, std::size_t tile) {
  std::ostringstream why;
  const int other = s.inclusive ? reference::add_wrap(expected[i], -in[i])   // the exclusive value
                                : reference::add_wrap(expected[i], in[i]);  // the inclusive value
  const std::size_t t = tile != 0 ? tile : kLookbackTile;
  if (actual[i] == kPoisonInt) {
    why << "out[" << i << "] was never written (it still holds the poison 0xA5A5A5A5): a thread "
           "past the end returned early, a tile was skipped, or the kernel never ran.";
  } else if (actual[i] == other && in[i] != 0) {
    why << (s.inclusive ? "this is the exclusive value: an inclusive scan includes in[i] itself."
                        : "this is the inclusive value: an exclusive scan stops before in[i] "
                          "(out[0] = 0).");
  } else if (actual[i] == in[i]) {
    why << "out[i] equals in[i]: the scan was not applied (the starter's TODO?).";
  } else if (i % t == 0 && i > 0) {
    why << "the first element of tile " << i / t << " (tile = " << t << ") is wrong: "
        << (tile != 0 ? "each tile starts from 0 here; does a tile read its neighbour's data?"
                      : "the tile's prefix (the sum of every earlier tile) is not carried in "
                        "correctly.");
  } else {
    why << "position " << i % t << " inside tile " << i / t << " (tile = " << t
        << "): check the barriers between steps, the step offsets, and the padding of the "
           "shared indices.";
  }
  return why.str();
}

/// Compares one run with the CPU reference; on failure names the first
/// mismatch, its likely cause and how to rerun.
inline void expect_scan(const Spec& s, const std::vector<int>& in, std::size_t tile, std::uint64_t seed,
                        const std::string& what, Layout layout = {}) {
  const std::vector<int> expected = reference::scan_tiles(in, tile, s.inclusive);
  const Outcome o = run(s, in, tile, layout);
  const auto at = first_mismatch(expected, o.out);
  ASSERT_FALSE(at.has_value()) << context(s.exercise, in.size(), seed) << what
                               << (tile != 0 ? ", tile = " + std::to_string(tile) : std::string())
                               << ": " << describe_first_mismatch(expected, o.out)
                               << (*at < in.size() ? " (in[i] = " + std::to_string(in[*at]) + ")"
                                                   : std::string())
                               << ". " << diagnose(s, in, expected, o.out, *at, tile);
  ASSERT_TRUE(o.guard_intact) << context(s.exercise, in.size(), seed) << what
                              << ": the call wrote past out[n - 1] (a store without the i < n guard).";
}

/// int32 values over the whole range: the sums wrap around modulo 2^32.
inline void int32_random(const Spec& s, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto sd = seed();
  expect_scan(s, gen::uniform_int<int>(n, sd, INT_MIN, INT_MAX), s.tile, sd,
              "values uniform over [INT_MIN, INT_MAX] (sums wrap modulo 2^32)");
}

/// All ones: out[i] is simply the position, which makes mistakes easy to read.
inline void all_ones(const Spec& s) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{1025}, std::size_t{4097},
                              std::size_t{(1u << 20) + 7}}) {
    expect_scan(s, gen::constant(n, 1), s.tile, 0, "every element is 1 (out[i] is the index)");
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// Small values that never wrap, and the extremes that always do.
inline void small_and_extreme_values(const Spec& s) {
  const auto sd = seed();
  const std::size_t n = (1u << 20) + 7;
  expect_scan(s, gen::uniform_int<int>(n, sd, -1000, 1000), s.tile, sd, "values in [-1000, 1000]");
  if (::testing::Test::HasFatalFailure()) return;
  for (const int value : {INT_MAX, INT_MIN, -1}) {
    expect_scan(s, gen::constant(100003, value), s.tile, 0,
                "every element is " + std::to_string(value) +
                    " (add in unsigned: signed overflow is undefined behaviour)");
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// out == in, and inputs and outputs 1 to 3 elements past a 16-byte boundary.
inline void in_place_and_misaligned(const Spec& s) {
  const auto sd = seed();
  for (const std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{100003},
                              std::size_t{(1u << 20) + 7}}) {
    const auto in = gen::uniform_int<int>(n, sd, INT_MIN, INT_MAX);
    expect_scan(s, in, s.tile, sd, "in place (out == in)", Layout{0, 0, true});
    if (::testing::Test::HasFatalFailure()) return;
    expect_scan(s, in, s.tile, sd, "in place, 3 elements past a 16-byte boundary", Layout{3, 0, true});
    if (::testing::Test::HasFatalFailure()) return;
    for (const auto& [a, b] : {std::pair{1, 0}, std::pair{0, 2}, std::pair{3, 1}}) {
      expect_scan(s, in, s.tile, sd,
                  "in starts " + std::to_string(a) + " and out " + std::to_string(b) +
                      " element(s) past a 16-byte boundary",
                  Layout{static_cast<std::size_t>(a), static_cast<std::size_t>(b), false});
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// n = 0 launches nothing and writes nothing, with null or valid pointers.
inline void zero_writes_nothing(const Spec& s) {
  DeviceBuffer<int> in(4), out(4);
  out.fill_bytes(kPoison);
  const std::size_t tile = s.tile != 0 ? s.tile : 0;
  s.fn(nullptr, 0, nullptr, tile, nullptr);
  s.fn(in.data(), 0, out.data(), tile, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  for (const int x : out.download())
    ASSERT_EQ(kPoisonInt, x) << "[" << s.exercise << "] n = 0 must write nothing";
}

/// Every allowed tile (a power of two), on sizes around it: the scan restarts at each tile.
inline void every_tile(const Spec& s) {
  const auto sd = seed();
  for (std::size_t tile = s.min_tile; tile <= s.max_tile; tile *= 2) {
    for (const std::size_t n : {std::size_t{1}, tile - 1, tile, tile + 1, 3 * tile + 5, std::size_t{100003}}) {
      if (n == 0) continue;
      expect_scan(s, gen::uniform_int<int>(n, sd + tile, INT_MIN, INT_MAX), tile, sd + tile,
                  "values uniform over the int32 range");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// The same large input many times: a race between tiles shows as a rare wrong answer.
inline void repeated_runs(const Spec& s) {
  const auto sd = seed();
  const bool sanitizing = max_n() != std::numeric_limits<std::size_t>::max();
  for (const auto& [n, repeats] : {std::pair<std::size_t, int>{(1u << 22) - 5, 20},
                                   std::pair<std::size_t, int>{(1u << 26) + 1, 10}}) {
    if (n > max_n()) continue;
    const auto in = gen::uniform_int<int>(n, sd, -1000000, 1000000);
    const std::vector<int> expected = reference::scan_tiles(in, s.tile, s.inclusive);
    DeviceBuffer<int> d_in(in), d_out(n);
    for (int r = 0; r < (sanitizing ? 2 : repeats); ++r) {
      d_out.fill_bytes(kPoison);
      s.fn(d_in.data(), n, d_out.data(), s.tile, nullptr);
      CUDALAB_CHECK(cudaDeviceSynchronize());
      const std::vector<int> actual = d_out.download();
      const auto at = first_mismatch(expected, actual);
      ASSERT_FALSE(at.has_value())
          << context(s.exercise, n, sd) << "run " << r + 1 << " of " << repeats
          << " on the same input: " << describe_first_mismatch(expected, actual) << ". "
          << (r > 0 ? "Earlier runs were right, so this is a race: a tile used a predecessor's "
                      "status before its value was there (pack flag and value in one word, read "
                      "it atomically), or the tile id / status words were not reset per call."
                    : diagnose(s, in, expected, actual, *at, s.tile));
    }
  }
}

/// Bad arguments throw std::invalid_argument before any CUDA call: no GPU needed.
inline void bad_input_throws(const Spec& s) {
  const int* some_in = reinterpret_cast<const int*>(std::uintptr_t{256});  // never dereferenced
  int* some_out = reinterpret_cast<int*>(std::uintptr_t{512});
  const std::size_t tile = s.tile;
  EXPECT_THROW(s.fn(nullptr, 10, some_out, tile, nullptr), std::invalid_argument) << "null in, n > 0";
  EXPECT_THROW(s.fn(some_in, 10, nullptr, tile, nullptr), std::invalid_argument) << "null out, n > 0";
  EXPECT_THROW(s.fn(some_in, cudalab::scan::max_elements + 1, some_out, tile, nullptr),
               std::invalid_argument)
      << "n above max_elements";
  if (s.max_tile != 0) {
    for (const std::size_t bad : {std::size_t{0}, s.min_tile - 1, std::size_t{3}, std::size_t{100},
                                  s.max_tile + 1, 2 * s.max_tile}) {
      if (bad >= s.min_tile && bad <= s.max_tile && (bad & (bad - 1)) == 0) continue;  // a valid tile
      EXPECT_THROW(s.fn(some_in, 10, some_out, bad, nullptr), std::invalid_argument) << "tile = " << bad;
      EXPECT_THROW(s.fn(some_in, 0, some_out, bad, nullptr), std::invalid_argument)
          << "tile = " << bad << " with n = 0 (check the arguments before the n = 0 shortcut)";
    }
  }
}

/// On the GPU: a rejected call leaves the output as it was.
inline void bad_input_changes_nothing(const Spec& s) {
  DeviceBuffer<int> in(4), out(4);
  out.fill_bytes(kPoison);
  EXPECT_THROW(s.fn(nullptr, 4, out.data(), s.tile, nullptr), std::invalid_argument);
  EXPECT_THROW(s.fn(in.data(), cudalab::scan::max_elements + 1, out.data(), s.tile, nullptr),
               std::invalid_argument);
  if (s.max_tile != 0)
    EXPECT_THROW(s.fn(in.data(), 4, out.data(), s.max_tile * 2, nullptr), std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  for (const int x : out.download())
    EXPECT_EQ(kPoisonInt, x) << "[" << s.exercise << "] a call that threw wrote to the output";
}

/// The Spec of an untiled scan (1.7, 1.8).
inline Spec whole_array(const char* exercise, void (*fn)(const int*, std::size_t, int*, cudaStream_t),
                        bool inclusive) {
  return Spec{exercise,
              [fn](const int* in, std::size_t n, int* out, std::size_t, cudaStream_t st) { fn(in, n, out, st); },
              inclusive, 0, 0, 0};
}

/// The Spec of a tiled scan (1.5, 1.6), tested by size at `tile`.
inline Spec tiled(const char* exercise,
                  void (*fn)(const int*, std::size_t, int*, std::size_t, cudaStream_t), bool inclusive,
                  std::size_t tile, std::size_t min_tile, std::size_t max_tile) {
  return Spec{exercise, fn, inclusive, tile, min_tile, max_tile};
}

}  // namespace cudalab::test::scan

/// Defines the suites Suite (by size), Suite##Cases (fixed cases on the GPU)
/// and Suite##BadInput (host only) for the scan described by `spec_expr`
/// (a cudalab::test::scan::Spec).
#define CUDALAB_SCAN_TEST_SUITES(Suite, spec_expr)                                                 \
  namespace {                                                                                      \
  const ::cudalab::test::scan::Spec& Suite##Spec() {                                               \
    static const ::cudalab::test::scan::Spec spec = spec_expr;                                     \
    return spec;                                                                                   \
  }                                                                                                \
  class Suite : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                          \
  TEST_P(Suite, Int32Random) { ::cudalab::test::scan::int32_random(Suite##Spec(), GetParam()); }   \
  INSTANTIATE_TEST_SUITE_P(Sizes, Suite, ::testing::ValuesIn(::cudalab::test::scan::kSizes),       \
                           ::cudalab::test::scan::size_name);                                      \
  class Suite##Cases : public ::cudalab::test::GpuTest {};                                         \
  TEST_F(Suite##Cases, AllOnes) { ::cudalab::test::scan::all_ones(Suite##Spec()); }                 \
  TEST_F(Suite##Cases, SmallAndExtremeValues) {                                                    \
    ::cudalab::test::scan::small_and_extreme_values(Suite##Spec());                                \
  }                                                                                                \
  TEST_F(Suite##Cases, InPlaceAndMisaligned) {                                                     \
    ::cudalab::test::scan::in_place_and_misaligned(Suite##Spec());                                 \
  }                                                                                                \
  TEST_F(Suite##Cases, ZeroWritesNothing) { ::cudalab::test::scan::zero_writes_nothing(Suite##Spec()); } \
  TEST_F(Suite##Cases, BadInputChangesNothing) {                                                   \
    ::cudalab::test::scan::bad_input_changes_nothing(Suite##Spec());                               \
  }                                                                                                \
  TEST(Suite##BadInput, Throws) { ::cudalab::test::scan::bad_input_throws(Suite##Spec()); }         \
  }  // namespace

/// Adds Suite##Tiles.EveryTile: every allowed tile size (1.5, 1.6).
#define CUDALAB_SCAN_TILE_TESTS(Suite)                                                               \
  namespace {                                                                                      \
  class Suite##Tiles : public ::cudalab::test::GpuTest {};                                         \
  TEST_F(Suite##Tiles, EveryTile) { ::cudalab::test::scan::every_tile(Suite##Spec()); }             \
  }  // namespace

/// Adds Suite##Cases.RepeatedRuns: the same large input many times (1.7, 1.8).
#define CUDALAB_SCAN_REPEATED_TESTS(Suite)                                                           \
  namespace {                                                                                      \
  TEST_F(Suite##Cases, RepeatedRuns) { ::cudalab::test::scan::repeated_runs(Suite##Spec()); }       \
  }  // namespace
