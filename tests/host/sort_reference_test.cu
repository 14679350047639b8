// Host tests of chapter 2's CPU references and argument checks
// (chapters/02-sorting/reference/sort_reference.hpp, cudalab/sort.cuh): they
// need no GPU and run everywhere, CI included.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "cudalab/generators.hpp"
#include "cudalab/sort.cuh"
#include "sort_reference.hpp"

namespace {

using cudalab::reference::Pairs;

TEST(SortReference, SortSegmentsSortsEachSegmentOnly) {
  const std::vector<int> in = {5, 4, 3, 2, 1, 0, -1};
  EXPECT_EQ((std::vector<int>{4, 5, 2, 3, 0, 1, -1}), cudalab::reference::sort_segments(in, 2));
  EXPECT_EQ((std::vector<int>{2, 3, 4, 5, -1, 0, 1}), cudalab::reference::sort_segments(in, 4));
  EXPECT_EQ((std::vector<int>{-1, 0, 1, 2, 3, 4, 5}), cudalab::reference::sort_segments(in, 0));
  EXPECT_EQ((std::vector<int>{-1, 0, 1, 2, 3, 4, 5}), cudalab::reference::sort_segments(in, 100));
  EXPECT_TRUE(cudalab::reference::sort_segments({}, 4).empty());
}

TEST(SortReference, StableSortPairsKeepsTheOrderOfEqualKeys) {
  const Pairs in{{3, 1, 3, 1, INT_MIN, INT_MAX, 3}, {0, 1, 2, 3, 4, 5, 6}};
  const Pairs out = cudalab::reference::stable_sort_pairs(in);
  EXPECT_EQ((std::vector<int>{INT_MIN, 1, 1, 3, 3, 3, INT_MAX}), out.keys);
  EXPECT_EQ((std::vector<int>{4, 1, 3, 0, 2, 6, 5}), out.values);
}

TEST(SortReference, MergeRunsMergesPairsOfRunsStably) {
  // runs of 3: [1 2 2] [2 3 4] | [0 5 9] [1] (the last pair is short)
  const Pairs in{{1, 2, 2, 2, 3, 4, 0, 5, 9, 1}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const Pairs out = cudalab::reference::merge_runs(in, 3);
  EXPECT_EQ((std::vector<int>{1, 2, 2, 2, 3, 4, 0, 1, 5, 9}), out.keys);
  EXPECT_EQ((std::vector<int>{0, 1, 2, 3, 4, 5, 6, 9, 7, 8}), out.values);  // first run's 2s first
  // run >= n: one run, nothing to merge.
  EXPECT_EQ(in.keys, cudalab::reference::merge_runs(in.keys, 10));
  EXPECT_EQ(in.keys, cudalab::reference::merge_runs(in.keys, 1000));
}

TEST(SortReference, MergeRunsEqualsSortForRunsOfOneRepeated) {
  auto keys = cudalab::gen::uniform_int<int>(1000, 42, -50, 50);
  auto sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t run = 1; run < keys.size(); run *= 2) keys = cudalab::reference::merge_runs(keys, run);
  EXPECT_EQ(sorted, keys);
}

// The merge-path split agrees with the stable merge: the first diag outputs
// hold exactly split keys of a, and every split is monotone in diag.
TEST(SortReference, MergePathMatchesTheStableMerge) {
  for (const auto seed : {1u, 2u, 3u}) {
    auto a = cudalab::gen::uniform_int<int>(37 * seed, seed, 0, 9);
    auto b = cudalab::gen::uniform_int<int>(23 * seed + 1, seed + 100, 0, 9);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    // Merge with a's keys tagged 0 and b's tagged 1: the tags of the first diag outputs count a's.
    std::vector<std::pair<int, int>> ta, tb, merged;
    for (int x : a) ta.push_back({x, 0});
    for (int x : b) tb.push_back({x, 1});
    std::merge(ta.begin(), ta.end(), tb.begin(), tb.end(), std::back_inserter(merged),
               [](const auto& x, const auto& y) { return x.first < y.first; });
    std::size_t from_a = 0, previous = 0;
    for (std::size_t diag = 0; diag <= merged.size(); ++diag) {
      const std::size_t split = cudalab::reference::merge_path(a, b, diag);
      EXPECT_EQ(from_a, split) << "seed " << seed << ", diag " << diag;
      EXPECT_LE(previous, split);
      EXPECT_LE(split, diag);
      EXPECT_LE(split, a.size());
      EXPECT_LE(diag - split, b.size());
      previous = split;
      if (diag < merged.size() && merged[diag].second == 0) ++from_a;
    }
  }
}

TEST(SortReference, MergePathEdgeCases) {
  const std::vector<int> empty, some = {1, 2, 3};
  EXPECT_EQ(0u, cudalab::reference::merge_path(empty, some, 2));
  EXPECT_EQ(2u, cudalab::reference::merge_path(some, empty, 2));
  EXPECT_EQ(2u, cudalab::reference::merge_path(some, some, 3));  // a1 b1 a2: ties go to a first
  const std::vector<int> big = {INT_MAX, INT_MAX}, small = {INT_MIN};
  EXPECT_EQ(0u, cudalab::reference::merge_path(big, small, 1));
  EXPECT_EQ(1u, cudalab::reference::merge_path(small, big, 1));
}

TEST(SortReference, FirstUnsortedRespectsSegments) {
  const std::vector<int> keys = {1, 2, 0, 5};
  EXPECT_EQ(1u, cudalab::reference::first_unsorted(keys));
  EXPECT_EQ(4u, cudalab::reference::first_unsorted(keys, 2));  // 2 > 0 crosses segments
  EXPECT_EQ(0u, cudalab::reference::first_unsorted({}));  // empty: size() = 0
}

TEST(SortArguments, ChecksThrowWithTheLimitInTheMessage) {
  using namespace cudalab::sort::detail;
  EXPECT_NO_THROW(check_segment("f", 1, 1024));
  EXPECT_NO_THROW(check_segment("f", 1024, 1024));
  for (const std::size_t bad : {std::size_t{0}, std::size_t{3}, std::size_t{2048}, std::size_t{1000}})
    EXPECT_THROW(check_segment("f", bad, 1024), std::invalid_argument) << bad;
  EXPECT_THROW(check_run("f", 0), std::invalid_argument);
  EXPECT_NO_THROW(check_run("f", 1));
  int x = 0;
  EXPECT_THROW(check_not_in_place("f", "the", &x, &x, 1), std::invalid_argument);
  EXPECT_NO_THROW(check_not_in_place("f", "the", &x, &x, 0));
  try {
    check_sort_arguments("bitonic_sort_global", &x, cudalab::sort::max_elements_bitonic + 1, &x,
                         cudalab::sort::max_elements_bitonic);
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1073741824"), std::string::npos) << e.what();
  }
  EXPECT_EQ(2048u, pad_to_power_of_two(1, 2048));
  EXPECT_EQ(2048u, pad_to_power_of_two(2048, 2048));
  EXPECT_EQ(4096u, pad_to_power_of_two(2049, 2048));
  EXPECT_EQ(std::size_t{1} << 30, pad_to_power_of_two((std::size_t{1} << 29) + 1, 2048));
}

}  // namespace
