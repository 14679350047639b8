// Host tests of the shared harness and chapter 1's CPU references: they need
// no GPU and run everywhere, CI included.
#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/args.hpp"
#include "cudalab/compare.hpp"
#include "cudalab/error.cuh"
#include "cudalab/generators.hpp"
#include "reduce_reference.hpp"
#include "scan_reference.hpp"

namespace {

using namespace cudalab;

TEST(HarnessGenerators, SameSeedSameData) {
  EXPECT_EQ(gen::uniform_int<int>(1000, 7, -5, 5), gen::uniform_int<int>(1000, 7, -5, 5));
  EXPECT_NE(gen::uniform_int<int>(1000, 7, -5, 5), gen::uniform_int<int>(1000, 8, -5, 5));
  // Element i depends on (seed, i) only: a prefix is a prefix.
  const auto longer = gen::uniform_int<int>(2000, 7, -5, 5);
  EXPECT_EQ(gen::uniform_int<int>(1000, 7, -5, 5),
            std::vector<int>(longer.begin(), longer.begin() + 1000));
}

TEST(HarnessGenerators, UniformIntStaysInRangeAndCoversIt) {
  const auto v = gen::uniform_int<int>(100000, 3, -3, 3);
  std::vector<int> counts(7, 0);
  for (int x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LE(x, 3);
    ++counts[x + 3];
  }
  for (int c : counts) EXPECT_GT(c, 100000 / 7 * 9 / 10) << "a value is under-represented";
  const auto full = gen::uniform_int<int>(100000, 3, INT_MIN, INT_MAX);
  bool negative = false, positive = false;
  for (int x : full) (x < 0 ? negative : positive) = true;
  EXPECT_TRUE(negative && positive);
}

TEST(HarnessGenerators, UniformRealIsHalfOpen) {
  for (float x : gen::uniform_real<float>(100000, 11, 0.0f, 1.0f)) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
  }
  EXPECT_THROW(gen::uniform_int<int>(1, 0, 5, 4), std::invalid_argument);
}

TEST(HarnessCompare, FirstMismatch) {
  EXPECT_FALSE(first_mismatch(std::vector<int>{1, 2, 3}, std::vector<int>{1, 2, 3}));
  EXPECT_EQ(1u, *first_mismatch(std::vector<int>{1, 2, 3}, std::vector<int>{1, 5, 3}));
  EXPECT_EQ(2u, *first_mismatch(std::vector<int>{1, 2, 3}, std::vector<int>{1, 2}));
  EXPECT_EQ("first mismatch at index 1: expected 2, actual 5",
            describe_first_mismatch(std::vector<int>{1, 2, 3}, std::vector<int>{1, 5, 3}));
  EXPECT_TRUE(same_multiset(std::vector<int>{3, 1, 2, 1}, std::vector<int>{1, 1, 2, 3}));
  EXPECT_FALSE(same_multiset(std::vector<int>{3, 1, 2, 2}, std::vector<int>{1, 1, 2, 3}));
}

TEST(HarnessErrors, CudaErrorNamesCallFileAndLine) {
  try {
    CUDALAB_CHECK(cudaErrorInvalidValue);
    FAIL() << "CUDALAB_CHECK did not throw";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("harness_test.cu:"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorInvalidValue"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorInvalidValue failed"), std::string::npos) << what;
    EXPECT_EQ(e.code(), cudaErrorInvalidValue);
    EXPECT_GT(e.line(), 0);
  }
  EXPECT_NO_THROW(CUDALAB_CHECK(cudaSuccess));
  const ParseError p("graph.gr", 12, "expected 'a u v w'");
  EXPECT_STREQ("graph.gr:12: expected 'a u v w'", p.what());
  EXPECT_EQ(12, p.line());
}

TEST(HarnessArgs, MessagesNameFunctionAndParameter) {
  try {
    require_pointer("sum_atomic", "in", nullptr, 5);
    FAIL() << "require_pointer did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ("sum_atomic: in is null but 5 element(s) are to be accessed", e.what());
  }
  EXPECT_NO_THROW(require_pointer("f", "in", nullptr, 0));
  EXPECT_THROW(require_count_at_most("f", 11, 10), std::invalid_argument);
  EXPECT_NO_THROW(require_count_at_most("f", 10, 10));
}

TEST(HarnessArgs, PowerOfTwoInRange) {
  // The messages of the tile checks (1.5, 1.6) and the segment checks (2.1, 2.2).
  try {
    require_power_of_two_in("exclusive_scan_blelloch", "tile", 1, 2, 2048);
    FAIL() << "require_power_of_two_in did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ("exclusive_scan_blelloch: tile = 1 is not a power of two in [2, 2048]", e.what());
  }
  try {
    require_power_of_two_in("bitonic_sort_shared", "segment", 0, 1, 2048);
    FAIL() << "require_power_of_two_in did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ("bitonic_sort_shared: segment = 0 is not a power of two in [1, 2048]", e.what());
  }
  EXPECT_THROW(require_power_of_two_in("f", "tile", 96, 1, 1024), std::invalid_argument);
  EXPECT_THROW(require_power_of_two_in("f", "tile", 2048, 1, 1024), std::invalid_argument);
  for (std::size_t v = 1; v <= 1024; v *= 2) EXPECT_NO_THROW(require_power_of_two_in("f", "tile", v, 1, 1024));
}

TEST(ReduceReference, IntSumIsExactIn64Bits) {
  EXPECT_EQ(0, reference::sum(std::vector<int>{}));
  EXPECT_EQ(2LL * INT_MAX, reference::sum(std::vector<int>{INT_MAX, INT_MAX}));
  EXPECT_EQ(3LL * INT_MIN, reference::sum(std::vector<int>{INT_MIN, INT_MIN, INT_MIN}));
}

TEST(ScanReference, TilesRestartAndSumsWrap) {
  const std::vector<int> in{1, 2, 3, 4, 5};
  EXPECT_EQ((std::vector<int>{1, 3, 3, 7, 5}), reference::scan_tiles(in, 2, true));
  EXPECT_EQ((std::vector<int>{0, 1, 0, 3, 0}), reference::scan_tiles(in, 2, false));
  EXPECT_EQ((std::vector<int>{0, 1, 3, 6, 10}), reference::exclusive_scan(in));
  EXPECT_EQ((std::vector<int>{1, 3, 6, 10, 15}), reference::inclusive_scan(in));
  EXPECT_EQ((std::vector<int>{INT_MAX, INT_MIN}), reference::inclusive_scan({INT_MAX, 1}));
  EXPECT_TRUE(reference::scan_tiles({}, 4, true).empty());
}

TEST(ReduceReference, FloatSumIsCompensated) {
  // 1 + 2^-30 added 2^20 times: naive float gives 1; the exact sum is 1 + 2^-10.
  std::vector<float> v(1u << 20, 0x1.0p-30f);
  v.insert(v.begin(), 1.0f);
  EXPECT_DOUBLE_EQ(1.0 + 0x1.0p-10, reference::sum_exact(v));
  EXPECT_DOUBLE_EQ(3.0, reference::sum_abs(std::vector<float>{-1.0f, 2.0f}));
}

}  // namespace
