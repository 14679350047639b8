// Tests of exercise 3.4, cudalab::stack::expand_until_empty (suites
// StackExpandUntilEmpty*): each level against the CPU reference
// (cudalab::reference::expand_levels), as a multiset.
// Run: tools/grade 3.4   or   build/default/bin/expand_until_empty_test_starter
#include <gtest/gtest.h>

#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "stack_test_util.cuh"

namespace {

using namespace cudalab::test::stack;
using cudalab::stack::TreeRule;
constexpr const char* kExercise = "3.4 expand_until_empty";

std::string describe(const TreeRule& r) {
  return "TreeRule{seed " + std::to_string(r.seed) + ", max_depth " + std::to_string(r.max_depth) +
         ", keep_per_1024 " + std::to_string(r.keep_per_1024) + "}";
}

// Expands from `roots` with `rule` into a visited buffer of exactly the
// tree's size (plus `slack`) and compares every level with the reference.
void check_expand(const std::vector<int>& roots, const TreeRule& rule, std::size_t slack = 0) {
  const auto levels = cudalab::reference::expand_levels(roots, rule);
  std::size_t total = 0;
  for (const auto& l : levels) total += l.size();
  const std::string ctx = cudalab::test::context(kExercise, roots.size(), rule.seed) + describe(rule) + ", " +
                          std::to_string(roots.size()) + " roots, " + std::to_string(total) + " nodes in " +
                          std::to_string(levels.size()) + " levels: ";
  const auto d_roots = to_device(roots);
  GuardedArray visited(total + slack);
  const auto offsets = cudalab::stack::expand_until_empty(roots.empty() ? nullptr : d_roots.data(), roots.size(),
                                                          rule, visited.data(), total + slack, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  ASSERT_EQ(visited.guard_damage(), "") << ctx << "write outside visited[0 .. visited_capacity)";
  ASSERT_FALSE(offsets.empty()) << ctx << "offsets must start with 0";
  ASSERT_EQ(0u, offsets[0]) << ctx << "offsets must start with 0";
  const std::vector<int> got = visited.download();
  for (std::size_t l = 0; l < levels.size(); ++l) {
    ASSERT_LT(l + 1, offsets.size()) << ctx << "only " << offsets.size() - 1 << " levels returned; level " << l
                                     << " should hold " << levels[l].size()
                                     << " nodes. Does the host loop run until the next list is empty, and do "
                                        "the children get pushed?";
    ASSERT_EQ(offsets[l] + levels[l].size(), offsets[l + 1])
        << ctx << "level " << l << " should hold " << levels[l].size() << " nodes, offsets say "
        << offsets[l + 1] - offsets[l];
    const std::vector<int> level(got.begin() + static_cast<std::ptrdiff_t>(offsets[l]),
                                 got.begin() + static_cast<std::ptrdiff_t>(offsets[l + 1]));
    ASSERT_EQ(multiset_difference(levels[l], level), "")
        << ctx << "level " << l << " differs from the reference (as a multiset): every existing child 2v, 2v + 1 "
        << "of the level above, each exactly once";
  }
  ASSERT_EQ(levels.size() + 1, offsets.size()) << ctx << "more levels than the reference";
  for (std::size_t k = total; k < total + slack; ++k)
    ASSERT_EQ(kPoisonInt, got[k]) << ctx << "visited[" << k << "] beyond the last node was written";
}

struct Case {
  const char* name;
  std::vector<int> roots;
  TreeRule rule;
};

class StackExpandUntilEmpty : public cudalab::test::GpuTestWithParam<std::size_t> {};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"single_root_no_children", {1}, {1, 20, 0}},
      {"single_root_full_depth_10", {1}, {2, 10, 1024}},  // the complete tree: 2047 nodes
      {"full_depth_16", {1}, {3, 16, 1024}},              // 131071 nodes, widest level 65536
      {"random_depth_20", {1}, {1, 20, 920}},
      {"random_depth_24", {1}, {1, 24, 920}},             // 3.5 million nodes, 25 levels
      {"sparse_depth_30", {1}, {5, 30, 560}},
      {"many_roots", {}, {7, 22, 800}},                   // roots filled below
      {"odd_roots", {0, -5, 1, 1 << 29, 1 << 30, 2, 3, 1000}, {9, 30, 700}},
  };
  return all;
}

TEST_P(StackExpandUntilEmpty, MatchesReferenceLevels) {
  Case c = cases()[GetParam()];
  if (c.roots.empty()) {
    const auto r = cudalab::gen::uniform_int<int>(4099, cudalab::test::seed(), 1, 1 << 12);
    c.roots.assign(r.begin(), r.end());
  }
  c.rule.seed ^= cudalab::test::seed();
  check_expand(c.roots, c.rule, 64);
}

INSTANTIATE_TEST_SUITE_P(Trees, StackExpandUntilEmpty, ::testing::Range<std::size_t>(0, 8),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return std::string(cases()[info.param].name);
                         });

class StackExpandUntilEmptyCases : public cudalab::test::GpuTest {};

TEST_F(StackExpandUntilEmptyCases, NoRoots) { check_expand({}, {1, 20, 900}); }

TEST_F(StackExpandUntilEmptyCases, VisitedExactlyFull) { check_expand({1, 2, 3}, {11, 18, 900}, 0); }

TEST_F(StackExpandUntilEmptyCases, VisitedTooSmallThrowsLengthError) {
  const TreeRule rule{13, 18, 900};
  const auto levels = cudalab::reference::expand_levels({1}, rule);
  std::size_t total = 0;
  for (const auto& l : levels) total += l.size();
  const std::vector<int> roots{1};
  const auto d_roots = to_device(roots);
  GuardedArray visited(total - 1);
  EXPECT_THROW(cudalab::stack::expand_until_empty(d_roots.data(), 1, rule, visited.data(), total - 1, nullptr),
               std::length_error)
      << cudalab::test::context(kExercise, 1, rule.seed) << "the tree has " << total << " nodes, visited room for "
      << total - 1 << ": expected std::length_error";
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(visited.guard_damage(), "") << cudalab::test::context(kExercise, 1, rule.seed)
                                        << "write outside visited";
}

TEST_F(StackExpandUntilEmptyCases, NextLevelOverflowsTheList) {
  // 2048 roots at depth 11, every node with both children, room for 2148
  // nodes: level 0 fits, its 4096 children do not fit the next list (of
  // visited_capacity slots). The pushes past the list's capacity must write
  // nothing (the quick pass's memcheck sees a write past it), and the call
  // throws with visited holding the level that fit.
  const TreeRule rule{cudalab::test::seed(), 30, 1024};
  std::vector<int> roots(2048);
  std::iota(roots.begin(), roots.end(), 2048);
  const auto d_roots = to_device(roots);
  const std::size_t room = 2148;
  GuardedArray visited(room);
  const std::string ctx = cudalab::test::context(kExercise, roots.size(), rule.seed) +
                          "2048 roots, every node with two children, visited room for 2148: ";
  EXPECT_THROW(cudalab::stack::expand_until_empty(d_roots.data(), roots.size(), rule, visited.data(), room, nullptr),
               std::length_error)
      << ctx << "level 1 (4096 nodes) does not fit: expected std::length_error";
  CUDALAB_CHECK(cudaDeviceSynchronize());
  ASSERT_EQ(visited.guard_damage(), "") << ctx << "write outside visited";
  const std::vector<int> got = visited.download();
  EXPECT_EQ(multiset_difference(roots, std::vector<int>(got.begin(), got.begin() + 2048)), "")
      << ctx << "visited[0 .. 2048) must hold level 0, the roots";
}

TEST_F(StackExpandUntilEmptyCases, RepeatedLarge) {
  const TreeRule rule{cudalab::test::seed(), 23, 930};
  for (int rep = 0; rep < 3; ++rep) {
    check_expand({1, 2}, rule, 16);
    if (HasFatalFailure()) return;
  }
}

TEST(StackExpandUntilEmptyBadInput, Throws) {
  int* some = reinterpret_cast<int*>(std::uintptr_t{256});
  using cudalab::stack::expand_until_empty;
  EXPECT_THROW(expand_until_empty(nullptr, 1, {1, 10, 500}, some, 10, nullptr), std::invalid_argument)
      << "null roots";
  EXPECT_THROW(expand_until_empty(some, 1, {1, 10, 500}, nullptr, 10, nullptr), std::invalid_argument)
      << "null visited";
  EXPECT_THROW(expand_until_empty(some, 1, {1, 31, 500}, some, 10, nullptr), std::invalid_argument)
      << "max_depth 31";
  EXPECT_THROW(expand_until_empty(some, 1, {1, 10, 1025}, some, 10, nullptr), std::invalid_argument)
      << "keep_per_1024 1025";
  EXPECT_THROW(expand_until_empty(some, 11, {1, 10, 500}, some, 10, nullptr), std::length_error)
      << "more roots than visited_capacity";
}

}  // namespace
