// Tests of exercise 5.1, cudalab::heap::replace_smallest (suites
// HeapReplaceSmallest*): one warp-sorted node per warp receives an entry and
// gives up the smallest of the 33; compared with a sort on the CPU.
// Run: tools/grade 5.1   or   build/default/bin/replace_smallest_test_starter
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "heap_test_util.cuh"

namespace {

using namespace cudalab::test::heap;
constexpr const char* kExercise = "5.1 replace_smallest";
constexpr int kW = cudalab::heap::node_size;

/// Node w and the entry x it receives; the case (w % 8) picks the adversary.
struct Case {
  std::vector<Entry> node;
  Entry x;
};

Case make_case(const Random& r, std::size_t w) {
  const std::uint64_t base = 100 * static_cast<std::uint64_t>(w);
  const int kind = static_cast<int>(w % 8);
  const int fill = kind == 6 ? 1 + static_cast<int>(r.below(base + 90, kW - 1)) : kW;
  const std::uint64_t span = kind == 3 ? 4 : kind == 7 ? 1 : 0;
  Case c{random_node(r, base, fill, span), Entry{0.0f, 0}};
  const auto k = static_cast<std::size_t>(r.below(base + 91, static_cast<std::uint64_t>(fill)));
  const int v = static_cast<int>(r.below(base + 92, 1000));
  switch (kind) {
    case 1: c.x = Entry{c.node[0].key - 1.0f, v}; break;                  // before every entry
    case 2: c.x = Entry{c.node[kW - 1].key + 1.0f, v}; break;             // after every entry
    case 3: c.x = Entry{static_cast<float>(r.below(base + 93, 4)), v}; break;  // among duplicates
    case 4: c.x = c.node[k]; break;                                       // an exact copy
    case 5: c.x = Entry{c.node[k].key, c.node[k].value + (v % 2 == 0 ? 1 : -1)}; break;  // same key
    case 7: c.x = Entry{0.0f, v}; break;                                  // all keys equal
    default: c.x = Entry{static_cast<float>(static_cast<double>(r(base + 94) >> 11) * 0x1.0p-53 * 2e6 - 1e6), v};
  }
  return c;
}

class HeapReplaceSmallest : public cudalab::test::GpuTestWithParam<std::size_t> {};

TEST_P(HeapReplaceSmallest, MatchesSortedReference) {
  const std::size_t n = GetParam();  // nodes (warps)
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n * kW);
  const Random r{cudalab::test::seed()};
  const std::string ctx = cudalab::test::context(kExercise, n, r.seed) + "(n = nodes): ";
  std::vector<float> keys(n * kW), xk(n);
  std::vector<int> values(n * kW), xv(n);
  std::vector<Case> cases;
  cases.reserve(n);
  for (std::size_t w = 0; w < n; ++w) {
    cases.push_back(make_case(r, w));
    for (int l = 0; l < kW; ++l) {
      keys[w * kW + l] = cases[w].node[l].key;
      values[w * kW + l] = cases[w].node[l].value;
    }
    xk[w] = cases[w].x.key;
    xv[w] = cases[w].x.value;
  }
  auto d_keys = to_device(keys);
  auto d_values = to_device(values);
  const auto d_xk = to_device(xk);
  const auto d_xv = to_device(xv);
  auto d_ek = poisoned<float>(n);
  auto d_ev = poisoned<int>(n);
  cudalab::heap::replace_smallest(d_keys.data(), d_values.data(), n, d_xk.data(), d_xv.data(), d_ek.data(),
                                  d_ev.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const auto got_keys = d_keys.download();
  const auto got_values = d_values.download();
  const auto got_ek = d_ek.download();
  const auto got_ev = d_ev.download();
  for (std::size_t w = 0; w < n; ++w) {
    std::vector<Entry> want = cases[w].node;
    const Entry evicted = cudalab::reference::replace_smallest_one(want, cases[w].x);
    const Entry got_evicted{got_ek[w], got_ev[w]};
    ASSERT_TRUE(same(evicted, got_evicted))
        << ctx << "node " << w << " (case " << w % 8 << "), x = " << show(cases[w].x) << ": evicted "
        << show(got_evicted) << ", expected " << show(evicted)
        << ". The evicted entry is the smallest of the 33: the old top (lane 0) unless x orders before it; "
           "every lane must return it (broadcast lane 0's entry with __shfl_sync).";
    for (int l = 0; l < kW; ++l) {
      const Entry got{got_keys[w * kW + l], got_values[w * kW + l]};
      ASSERT_TRUE(same(want[l], got))
          << ctx << "node " << w << " (case " << w % 8 << "), x = " << show(cases[w].x) << ", lane " << l
          << ": expected " << show(want[l]) << ", got " << show(got)
          << ". Lanes 0 .. b - 1 take their right neighbour (__shfl_down_sync by 1) and lane b takes x, where b "
             "is the highest lane whose entry is not after x (bfind of the ballot); ties are by value.";
    }
  }
}

const std::vector<std::size_t> kNodeCounts = {0, 1, 31, 32, 33, 1023, 1024, 1025, 4099, (1u << 20) + 7};

INSTANTIATE_TEST_SUITE_P(Nodes, HeapReplaceSmallest, ::testing::ValuesIn(kNodeCounts),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return "nodes" + std::to_string(info.param);
                         });

// Bad input: thrown before any CUDA call, so these run without a GPU.
TEST(HeapReplaceSmallestArgs, NullPointersThrow) {
  float k = 0;
  int v = 0;
  EXPECT_THROW(cudalab::heap::replace_smallest(nullptr, &v, 1, &k, &v, &k, &v), std::invalid_argument);
  EXPECT_THROW(cudalab::heap::replace_smallest(&k, &v, 1, &k, &v, nullptr, &v), std::invalid_argument);
  EXPECT_NO_THROW(cudalab::heap::replace_smallest(nullptr, nullptr, 0, nullptr, nullptr, nullptr, nullptr));
}

TEST(HeapReplaceSmallestArgs, TooManyNodesThrows) {
  float k = 0;
  int v = 0;
  EXPECT_THROW(cudalab::heap::replace_smallest(&k, &v, cudalab::heap::max_items + 1, &k, &v, &k, &v),
               std::invalid_argument);
}

}  // namespace
