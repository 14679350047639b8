// Tests of exercise 5.2, cudalab::heap::min_child (suites HeapMinChild*):
// the child with the smallest top among up to 32, for every parent of
// heaps whose last parent has 1 to 32 children; ties broken by value, then
// by the smallest index. Run: tools/grade 5.2
#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "heap_test_util.cuh"

namespace {

using namespace cudalab::test::heap;
constexpr const char* kExercise = "5.2 min_child";

/// Tops of `count` nodes; `span` > 0 draws keys from that many values (ties).
std::vector<Entry> random_tops(const Random& r, std::size_t count, std::uint64_t span) {
  std::vector<Entry> tops(count);
  for (std::size_t i = 0; i < count; ++i) {
    const float key = span > 0 ? static_cast<float>(r.below(2 * i, span))
                               : static_cast<float>(static_cast<double>(r(2 * i) >> 11) * 0x1.0p-53 * 1e6);
    tops[i] = Entry{key, static_cast<int>(r.below(2 * i + 1, span > 0 ? 3 : 1000))};
  }
  return tops;
}

/// min_child's answer (into a poisoned output) for every parent in `parents` of the heap `tops`.
std::vector<int> run_min_child(const std::vector<Entry>& tops, const std::vector<int>& parents) {
  std::vector<float> keys(tops.size());
  std::vector<int> values(tops.size());
  for (std::size_t i = 0; i < tops.size(); ++i) {
    keys[i] = tops[i].key;
    values[i] = tops[i].value;
  }
  const auto d_keys = to_device(keys);
  const auto d_values = to_device(values);
  const auto d_parents = to_device(parents);
  auto d_out = poisoned<int>(parents.size());
  cudalab::heap::min_child(d_keys.data(), d_values.data(), tops.size(), d_parents.data(), parents.size(),
                           d_out.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  return d_out.download();
}

/// Runs min_child for every parent in `parents` and compares with the reference.
void check(const std::vector<Entry>& tops, const std::vector<int>& parents, const std::string& ctx) {
  const auto got = run_min_child(tops, parents);
  for (std::size_t q = 0; q < parents.size(); ++q) {
    const int want = cudalab::reference::min_child_one(tops, parents[q]);
    const long long first = 32LL * parents[q] + 1;
    const long long kids = want < 0 ? 0 : std::min<long long>(32, static_cast<long long>(tops.size()) - first);
    ASSERT_EQ(want, got[q]) << ctx << "query " << q << ", parent " << parents[q] << " of " << tops.size()
                            << " nodes (" << kids << " children): expected child " << want << ", got " << got[q]
                            << ". Children are 32 p + 1 .. 32 p + 32 below node_count; a missing child must lose "
                               "(a sentinel), equal tops are ordered by value and then by the smaller index, and "
                               "-1 means no child.";
  }
}

class HeapMinChild : public cudalab::test::GpuTestWithParam<std::size_t> {};

// Every parent of a heap of n nodes (so the last parent has (n - 1) % 32
// children, or 32), plus parents with no children and out of range.
TEST_P(HeapMinChild, EveryParent) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const Random r{cudalab::test::seed()};
  for (const std::uint64_t span : {0ull, 2ull}) {
    const auto tops = random_tops(r, n, span);
    std::vector<int> parents;
    for (std::size_t p = 0; p < n && p < (1u << 20); ++p) parents.push_back(static_cast<int>(p));
    parents.push_back(-1);
    parents.push_back(static_cast<int>(n));
    check(tops, parents,
          cudalab::test::context(kExercise, n, r.seed) + (span ? "keys with ties: " : "distinct keys: "));
  }
}

const std::vector<std::size_t> kNodeCounts = {0, 1, 2, 31, 32, 33, 34, 63, 64, 65, 1023, 1024, 1025, 1057, 4099,
                                              (1u << 20) + 7};

INSTANTIATE_TEST_SUITE_P(Nodes, HeapMinChild, ::testing::ValuesIn(kNodeCounts),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return "nodes" + std::to_string(info.param);
                         });

class HeapMinChildCases : public cudalab::test::GpuTest {};

// The last parent with 1 .. 32 children, each position the minimum once.
TEST_F(HeapMinChildCases, LastParentEveryChildCountAndPosition) {
  for (int kids = 1; kids <= 32; ++kids) {
    for (int best = 0; best < kids; ++best) {
      std::vector<Entry> tops(static_cast<std::size_t>(1 + 32 + kids), Entry{5.0f, 1});
      tops[0] = Entry{0.0f, 0};
      // parent 1's children: 33 .. 32 + kids; the minimum at 33 + best
      tops[static_cast<std::size_t>(33 + best)] = Entry{4.0f, 7};
      check(tops, {1}, cudalab::test::context(kExercise, tops.size(), 0) + "children " + std::to_string(kids) +
                           ", minimum at " + std::to_string(best) + ": ");
    }
  }
}

// Equal keys: the value decides; equal entries: the smaller index.
TEST_F(HeapMinChildCases, TieBreaks) {
  std::vector<Entry> tops(33, Entry{1.0f, 9});
  tops[20] = Entry{1.0f, 3};
  tops[7] = Entry{1.0f, 3};
  check(tops, {0}, cudalab::test::context(kExercise, 33, 0) + "ties: ");
  // Keys that are large (near the float maximum) and negative
  std::vector<Entry> big(33, Entry{3.0e38f, 0});
  big[31] = Entry{-3.0e38f, 5};
  check(big, {0}, cudalab::test::context(kExercise, 33, 0) + "extreme keys: ");
}

// Parents far past the last node, up to INT_MAX: none has a child. Their
// first child 32 p + 1 does not fit in an int: computed in 32 bits, 32 p
// wraps around 2^32, and for p = k * 2^27 + j it lands on 32 j, so the
// "children" 32 j + 1 .. 32 j + 32 are real nodes of this heap. (EveryParent
// asks only parents below 2^20 + 8, where 32 p + 32 still fits.)
TEST_F(HeapMinChildCases, ParentsWhoseChildIndexPasses2To31) {
  const Random r{cudalab::test::seed()};
  const auto tops = random_tops(r, 100, 0);
  // 32 p mod 2^32 is 32 j for p = k * 2^27 + j: in int, children 32 j + 1 ..
  // 32 j + 32, all or some below 100; INT_MAX wraps to -32 (child 0 in lane 31).
  const std::vector<int> parents = {1 << 27, (1 << 27) + 1, (1 << 27) + 2, (1 << 27) + 3, 3 << 27,
                                    (5 << 27) + 1, (15 << 27) + 2, 1 << 30, INT_MAX};
  const auto got = run_min_child(tops, parents);
  for (std::size_t q = 0; q < parents.size(); ++q)
    EXPECT_EQ(-1, got[q]) << cudalab::test::context(kExercise, tops.size(), r.seed) << "parent " << parents[q]
                          << " of a heap of " << tops.size() << " nodes: expected -1 (its first child would be "
                          << 32LL * parents[q] + 1 << ", far past the last node), got " << got[q]
                          << ". Compute 32 * parent + 1 + lane in 64 bits (static_cast<long long>(parent) * 32): "
                             "in int it wraps past 2^31 and lands on real nodes.";
}

TEST(HeapMinChildArgs, NullPointersThrow) {
  int p = 0;
  float k = 0;
  EXPECT_THROW(cudalab::heap::min_child(nullptr, &p, 3, &p, 1, &p), std::invalid_argument);
  EXPECT_THROW(cudalab::heap::min_child(&k, &p, 3, &p, 1, nullptr), std::invalid_argument);
  EXPECT_NO_THROW(cudalab::heap::min_child(nullptr, nullptr, 0, nullptr, 0, nullptr));
}

}  // namespace
