// Tests of exercise 1.9, cudalab::scan::segmented_inclusive_scan and
// segmented_exclusive_scan for Plus, Minimum and Maximum (suites
// ScanSegmentedScan*).
// Run: tools/grade 1.9   or   build/default/bin/segmented_scan_test_starter
#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <cstdint>
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

namespace {

namespace scan = ::cudalab::scan;
namespace ref = ::cudalab::reference;
using ::cudalab::DeviceBuffer;
using ::cudalab::test::context;
using ::cudalab::test::seed;

constexpr const char* kExercise = "1.9 segmented_scan";
constexpr unsigned char kPoison = 0xA5;
constexpr int kPoisonInt = static_cast<int>(0xA5A5A5A5u);
constexpr std::size_t kGuard = 64;
constexpr std::size_t kTile = 4096;  // the solution's tile, for the diagnosis

/// The edge sizes of docs/guides/contributing.md ("Tests"), the tile boundaries (4096), a prime,
/// 2^20 + 7, one large size.
const std::vector<std::size_t> kSizes = {0,    1,    2,    3,     31,    32,     33,      1023,
                                         1024, 1025, 4095, 4096,  4097,  8193,   65537,   1000003,
                                         (1u << 20) + 7,   (1u << 24) + 1};

/// Head-flag patterns.
enum class Heads { kRandom, kEvery, kNone, kNoneNotEvenFirst, kEvery4096, kEvery4095, kEvery1000, kOdd };

const char* heads_name(Heads h) {
  switch (h) {
    case Heads::kRandom: return "random heads (about one in 64, flag bytes 1 to 255)";
    case Heads::kEvery: return "every element a head";
    case Heads::kNone: return "only head_flags[0] set (one segment)";
    case Heads::kNoneNotEvenFirst: return "no flag set at all, not even head_flags[0] (one segment)";
    case Heads::kEvery4096: return "a head every 4096 elements (segments = tiles)";
    case Heads::kEvery4095: return "a head every 4095 elements (segments straddle tiles)";
    case Heads::kEvery1000: return "a head every 1000 elements";
    case Heads::kOdd: return "heads at odd positions only";
  }
  return "?";
}

std::vector<std::uint8_t> make_heads(Heads h, std::size_t n, std::uint64_t sd) {
  std::vector<std::uint8_t> f(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    switch (h) {
      case Heads::kRandom: {
        const std::uint64_t r = ::cudalab::gen::bits(sd ^ 0x5151, i);
        f[i] = (r & 63) == 0 ? static_cast<std::uint8_t>(1 + (r >> 8) % 255) : 0;
        break;
      }
      case Heads::kEvery: f[i] = 1; break;
      case Heads::kNone: f[i] = i == 0; break;
      case Heads::kNoneNotEvenFirst: break;
      case Heads::kEvery4096: f[i] = i % 4096 == 0; break;
      case Heads::kEvery4095: f[i] = i % 4095 == 0 ? 0xFF : 0; break;
      case Heads::kEvery1000: f[i] = i % 1000 == 0 ? 2 : 0; break;
      case Heads::kOdd: f[i] = i % 2 == 1; break;
    }
  }
  return f;
}

struct Layout {
  std::size_t in_offset = 0, flags_offset = 0, out_offset = 0;
  bool in_place = false;
};

/// Runs one (operator, inclusive/exclusive) combination with the output poisoned.
template <class Op>
std::pair<std::vector<int>, bool> run(const std::vector<int>& in, const std::vector<std::uint8_t>& flags,
                                      Op op, bool inclusive, Layout l = {}) {
  const std::size_t n = in.size();
  DeviceBuffer<int> d_in(l.in_offset + n + kGuard);
  DeviceBuffer<std::uint8_t> d_flags(l.flags_offset + n + 1);
  d_in.fill_bytes(kPoison);
  if (n > 0) {
    CUDALAB_CHECK(cudaMemcpy(d_in.data() + l.in_offset, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDALAB_CHECK(cudaMemcpy(d_flags.data() + l.flags_offset, flags.data(), n, cudaMemcpyHostToDevice));
  }
  DeviceBuffer<int> d_out(l.in_place ? 0 : l.out_offset + n + kGuard);
  d_out.fill_bytes(kPoison);
  int* out_base = l.in_place ? d_in.data() : d_out.data();
  const std::size_t out_offset = l.in_place ? l.in_offset : l.out_offset;
  const int* pin = n > 0 ? d_in.data() + l.in_offset : nullptr;
  const std::uint8_t* pf = n > 0 ? d_flags.data() + l.flags_offset : nullptr;
  int* pout = n > 0 ? out_base + out_offset : nullptr;
  if (inclusive)
    scan::segmented_inclusive_scan(pin, pf, n, pout, op, nullptr);
  else
    scan::segmented_exclusive_scan(pin, pf, n, pout, op, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  std::vector<int> all(out_offset + n + kGuard);
  CUDALAB_CHECK(cudaMemcpy(all.data(), out_base, all.size() * sizeof(int), cudaMemcpyDeviceToHost));
  bool guard = true;
  for (std::size_t g = out_offset + n; g < all.size(); ++g) guard &= all[g] == kPoisonInt;
  return {std::vector<int>(all.begin() + static_cast<std::ptrdiff_t>(out_offset),
                           all.begin() + static_cast<std::ptrdiff_t>(out_offset + n)),
          guard};
}

template <class Op>
std::string diagnose(const std::vector<int>& in, const std::vector<std::uint8_t>& flags,
                     const std::vector<int>& expected, const std::vector<int>& actual, std::size_t i,
                     bool inclusive) {
  const bool head = i == 0 || flags[i] != 0;
  std::ostringstream why;
  if (actual[i] == kPoisonInt) {
    why << "out[i] was never written (still the poison 0xA5A5A5A5).";
  } else if (i == 0 && flags[0] == 0) {
    why << "element 0 always starts a segment, even when head_flags[0] is 0.";
  } else if (head && !inclusive && actual[i] != Op::identity) {
    why << "i is a segment head: the exclusive output there is the identity (" << Op::identity << ").";
  } else if (head && inclusive && actual[i] != in[i]) {
    why << "i is a segment head: the inclusive output there is in[i] itself; the scan must "
           "restart, not carry the previous segment in (a flag byte other than 1 also counts).";
  } else if (actual[i] == in[i] && !head) {
    why << "out[i] equals in[i]: the scan was not applied (the starter's TODO?).";
  } else if (i % kTile == 0) {
    why << "first element of a tile: the tile's prefix pair (flag, value) from the look-back "
           "is wrong; combine older tiles on the left, and let a flag in a later tile stop "
           "what came before.";
  } else {
    why << "position " << i % kTile << " of tile " << i / kTile
        << ": check combine() (the right operand's flag wins) and the order of operands in "
           "the warp scan and the look-back (older on the left).";
  }
  (void)expected;
  return why.str();
}

template <class Op>
void expect_segmented(const char* op_name, Op op, bool inclusive, const std::vector<int>& in,
                      const std::vector<std::uint8_t>& flags, std::uint64_t sd, const std::string& what,
                      Layout l = {}) {
  const std::vector<int> expected = ref::segmented_scan(in, flags, op, inclusive);
  const auto [actual, guard] = run(in, flags, op, inclusive, l);
  const auto at = ::cudalab::first_mismatch(expected, actual);
  ASSERT_FALSE(at.has_value()) << context(kExercise, in.size(), sd)
                               << (inclusive ? "segmented_inclusive_scan" : "segmented_exclusive_scan")
                               << " with " << op_name << ", " << what << ": "
                               << ::cudalab::describe_first_mismatch(expected, actual)
                               << " (in[i] = " << in[*at] << ", head_flags[i] = " << +flags[*at]
                               << "). " << diagnose<Op>(in, flags, expected, actual, *at, inclusive);
  ASSERT_TRUE(guard) << context(kExercise, in.size(), sd) << what
                     << ": the call wrote past out[n - 1] (a store without the i < n guard).";
}

/// All six combinations (three operators, inclusive and exclusive).
void expect_all(const std::vector<int>& in, const std::vector<std::uint8_t>& flags, std::uint64_t sd,
                const std::string& what, Layout l = {}) {
  for (const bool inclusive : {true, false}) {
    expect_segmented("Plus", scan::Plus{}, inclusive, in, flags, sd, what, l);
    if (::testing::Test::HasFatalFailure()) return;
    expect_segmented("Minimum", scan::Minimum{}, inclusive, in, flags, sd, what, l);
    if (::testing::Test::HasFatalFailure()) return;
    expect_segmented("Maximum", scan::Maximum{}, inclusive, in, flags, sd, what, l);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

class ScanSegmentedScan : public ::cudalab::test::GpuTestWithParam<std::size_t> {};

TEST_P(ScanSegmentedScan, RandomHeads) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto sd = seed();
  expect_all(::cudalab::gen::uniform_int<int>(n, sd, INT_MIN, INT_MAX), make_heads(Heads::kRandom, n, sd),
             sd, std::string(heads_name(Heads::kRandom)) + ", values over the int32 range");
}

TEST_P(ScanSegmentedScan, HeadPatterns) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto sd = seed();
  const auto in = ::cudalab::gen::uniform_int<int>(n, sd, -1000, 1000);
  for (const Heads h : {Heads::kEvery, Heads::kNone, Heads::kNoneNotEvenFirst, Heads::kEvery4096,
                        Heads::kEvery4095, Heads::kOdd}) {
    expect_all(in, make_heads(h, n, sd), sd, std::string(heads_name(h)) + ", values in [-1000, 1000]");
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ScanSegmentedScan, ::testing::ValuesIn(kSizes), size_name);

class ScanSegmentedScanCases : public ::cudalab::test::GpuTest {};

TEST_F(ScanSegmentedScanCases, ExtremeValues) {
  const std::size_t n = 100003;
  for (const int value : {INT_MAX, INT_MIN}) {
    expect_all(std::vector<int>(n, value), make_heads(Heads::kEvery1000, n, 0), 0,
               "every element " + std::to_string(value) + ", " + heads_name(Heads::kEvery1000));
    if (HasFatalFailure()) return;
  }
}

// A head every 5 tiles + 1000 elements: most tiles hold no head, so a segment spans several
// tiles with heads in some windows of the look-back and not in others. The window must be
// combined oldest first (a segmented combine is not commutative: the prefix tile is always
// flagged, so newest first keeps only its value). Every pattern shows that order whenever a
// look-back meets aggregates, which depends on timing; this one adds long unflagged runs.
TEST_F(ScanSegmentedScanCases, SegmentsSpanSeveralTiles) {
  const auto sd = seed();
  constexpr std::size_t kEvery = 5 * kTile + 1000;
  for (const std::size_t n : {std::size_t{65537}, std::size_t{(1u << 22) + 3}, std::size_t{(1u << 24) + 1}}) {
    if (n > ::cudalab::test::max_n()) continue;  // under CUDALAB_MAX_N: the sizes up to it
    std::vector<std::uint8_t> flags(n, 0);
    for (std::size_t i = 0; i < n; i += kEvery) flags[i] = 3;
    expect_all(::cudalab::gen::uniform_int<int>(n, sd, INT_MIN, INT_MAX), flags, sd,
               "a head every " + std::to_string(kEvery) + " elements (5 tiles + 1000: most tiles "
               "without a head; a look-back combines several unflagged tiles before a flagged one, "
               "oldest first)");
    if (HasFatalFailure()) return;
  }
}

TEST_F(ScanSegmentedScanCases, InPlaceAndMisaligned) {
  const auto sd = seed();
  for (const std::size_t n : {std::size_t{5}, std::size_t{4097}, std::size_t{(1u << 20) + 7}}) {
    const auto in = ::cudalab::gen::uniform_int<int>(n, sd, INT_MIN, INT_MAX);
    const auto flags = make_heads(Heads::kRandom, n, sd);
    expect_all(in, flags, sd, "in place (out == in)", Layout{0, 0, 0, true});
    if (HasFatalFailure()) return;
    expect_all(in, flags, sd, "in place, 1 element past a 16-byte boundary", Layout{1, 0, 0, true});
    if (HasFatalFailure()) return;
    expect_all(in, flags, sd, "in, head_flags and out 1, 3 and 2 elements past an aligned address",
               Layout{1, 3, 2, false});
    if (HasFatalFailure()) return;
    expect_all(in, flags, sd, "head_flags 1 byte past an aligned address", Layout{0, 1, 0, false});
    if (HasFatalFailure()) return;
  }
}

TEST_F(ScanSegmentedScanCases, ZeroWritesNothing) {
  DeviceBuffer<int> in(4), out(4);
  DeviceBuffer<std::uint8_t> flags(4);
  out.fill_bytes(kPoison);
  scan::segmented_inclusive_scan(nullptr, nullptr, 0, nullptr, scan::Plus{}, nullptr);
  scan::segmented_exclusive_scan(in.data(), flags.data(), 0, out.data(), scan::Maximum{}, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  for (const int x : out.download()) ASSERT_EQ(kPoisonInt, x) << "[" << kExercise << "] n = 0 must write nothing";
}

TEST_F(ScanSegmentedScanCases, RepeatedRuns) {
  const auto sd = seed();
  const bool sanitizing = ::cudalab::test::max_n() != std::numeric_limits<std::size_t>::max();
  for (const auto& [n, repeats] : {std::pair<std::size_t, int>{(1u << 22) - 5, 10},
                                   std::pair<std::size_t, int>{(1u << 26) + 1, 5}}) {
    if (n > ::cudalab::test::max_n()) continue;
    const auto in = ::cudalab::gen::uniform_int<int>(n, sd, -1000000, 1000000);
    const auto flags = make_heads(Heads::kEvery4095, n, sd);
    const auto expected = ref::segmented_scan(in, flags, scan::Plus{}, true);
    DeviceBuffer<int> d_in(in), d_out(n);
    DeviceBuffer<std::uint8_t> d_flags(flags);
    for (int r = 0; r < (sanitizing ? 2 : repeats); ++r) {
      d_out.fill_bytes(kPoison);
      scan::segmented_inclusive_scan(d_in.data(), d_flags.data(), n, d_out.data(), scan::Plus{}, nullptr);
      CUDALAB_CHECK(cudaDeviceSynchronize());
      const auto actual = d_out.download();
      ASSERT_FALSE(::cudalab::first_mismatch(expected, actual).has_value())
          << context(kExercise, n, sd) << "run " << r + 1
                                  << " on the same input (Plus, inclusive, a head every 4095): "
                                  << ::cudalab::describe_first_mismatch(expected, actual)
                                  << (r > 0 ? ". Earlier runs were right: a race in the look-back." : "");
    }
  }
}

TEST_F(ScanSegmentedScanCases, BadInputChangesNothing) {
  DeviceBuffer<int> in(4), out(4);
  DeviceBuffer<std::uint8_t> flags(4);
  out.fill_bytes(kPoison);
  EXPECT_THROW(scan::segmented_inclusive_scan(in.data(), nullptr, 4, out.data(), scan::Plus{}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(scan::segmented_exclusive_scan(in.data(), flags.data(), scan::max_elements + 1, out.data(),
                                              scan::Minimum{}, nullptr),
               std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  for (const int x : out.download())
    EXPECT_EQ(kPoisonInt, x) << "[" << kExercise << "] a call that threw wrote to the output";
}

template <class Op>
void bad_input_throws(Op op) {
  const int* in = reinterpret_cast<const int*>(std::uintptr_t{256});  // never dereferenced
  const auto* flags = reinterpret_cast<const std::uint8_t*>(std::uintptr_t{1024});
  int* out = reinterpret_cast<int*>(std::uintptr_t{512});
  for (const bool inclusive : {true, false}) {
    auto call = [&](const int* i, const std::uint8_t* f, std::size_t n, int* o) {
      if (inclusive)
        scan::segmented_inclusive_scan(i, f, n, o, op, nullptr);
      else
        scan::segmented_exclusive_scan(i, f, n, o, op, nullptr);
    };
    EXPECT_THROW(call(nullptr, flags, 10, out), std::invalid_argument) << "null in";
    EXPECT_THROW(call(in, nullptr, 10, out), std::invalid_argument) << "null head_flags";
    EXPECT_THROW(call(in, flags, 10, nullptr), std::invalid_argument) << "null out";
    EXPECT_THROW(call(in, flags, scan::max_elements + 1, out), std::invalid_argument) << "n > max_elements";
  }
}

TEST(ScanSegmentedScanBadInput, Throws) {
  bad_input_throws(scan::Plus{});
  bad_input_throws(scan::Minimum{});
  bad_input_throws(scan::Maximum{});
}

TEST(ScanSegmentedScanBadInput, ReferenceTreatsElementZeroAsHead) {
  // The documented rule, on the CPU: a flags array without a head at 0 is one segment from 0.
  const std::vector<int> in = {3, 4, 5, 6};
  const std::vector<std::uint8_t> flags = {0, 0, 1, 0};
  EXPECT_EQ((std::vector<int>{3, 7, 5, 11}), ref::segmented_scan(in, flags, scan::Plus{}, true));
  EXPECT_EQ((std::vector<int>{0, 3, 0, 5}), ref::segmented_scan(in, flags, scan::Plus{}, false));
  EXPECT_EQ((std::vector<int>{INT_MIN, 3, INT_MIN, 5}), ref::segmented_scan(in, flags, scan::Maximum{}, false));
}

}  // namespace
