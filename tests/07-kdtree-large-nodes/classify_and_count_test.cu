// Tests of exercise 7.3, cudalab::kdtree::classify_and_count (suites KdtreeClassifyAndCount*).
// Run: tools/grade 7.3   or   build/default/bin/classify_and_count_test_starter
#include <stdexcept>
#include <tuple>

#include "kdtree_test_util.cuh"

namespace cudalab::test::kdtree {
namespace {

constexpr const char* kExercise = "7.3 classify_and_count";

// With want_owners, the optional owners output is asked for and checked too.
void expect_level(const Level& L, std::uint64_t seed, const std::string& what, bool want_owners) {
  const std::size_t n = L.idx.size(), m = L.active.size();
  DeviceBuffer<float3> d_points(L.points);
  DeviceBuffer<std::uint32_t> d_idx(L.idx);
  DeviceBuffer<Node> d_nodes(L.nodes);
  DeviceBuffer<int> d_active(L.active);
  Guarded<std::uint8_t> flags(n);
  Guarded<std::uint32_t> counts(m);
  Guarded<std::uint32_t> owners(n);
  cudalab::kdtree::classify_and_count(d_points.data(), d_idx.data(), n, d_nodes.data(), d_active.data(), m,
                                      flags.data(), counts.data(), nullptr, want_owners ? owners.data() : nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  if (want_owners) {
    const std::string ctx = context(kExercise, n, seed) + "\n" + what + ", owners asked for: ";
    ASSERT_EQ(owners.guard_damage(), "") << ctx << "owners";
    const std::vector<std::uint32_t> want = owners_of(L), got = owners.download();
    for (std::size_t i = 0; i < n; ++i)
      if (got[i] != want[i])
        FAIL() << ctx << "owners[" << i << "]: expected " << want[i] << ", got " << got[i]
               << " (the broadcast: k at every position of segment k)";
  }
  const auto [want_flags, want_counts] = reference::classify_and_count(L.points, L.idx, L.nodes, L.active);
  const std::vector<std::uint8_t> got_flags = flags.download();
  const std::vector<std::uint32_t> got_counts = counts.download();
  const std::string ctx = context(kExercise, n, seed) + "\n" + what + ": ";
  ASSERT_EQ(flags.guard_damage(), "") << ctx << "right_flags";
  ASSERT_EQ(counts.guard_damage(), "") << ctx << "right_counts";
  for (std::size_t i = 0; i < n; ++i)
    if (got_flags[i] != want_flags[i])
      FAIL() << ctx << "right_flags[" << i << "] (point " << L.idx[i] << " at " << show(L.points[L.idx[i]])
             << "): expected " << int(want_flags[i]) << ", got " << int(got_flags[i])
             << " (165 = never written; otherwise the position's node is wrong: the segmented scan must "
                "restart at every head and broadcast the head's k to the whole segment)";
  for (std::size_t k = 0; k < m; ++k)
    if (got_counts[k] != want_counts[k]) {
      const Node& node = L.nodes[static_cast<std::size_t>(L.active[k])];
      FAIL() << ctx << "right_counts[" << k << "] (node " << L.active[k] << ", segment [" << node.begin << ", "
             << node.begin + node.count << ")): expected " << want_counts[k] << ", got " << got_counts[k]
             << " (read the scanned flags at the segment's last position; a count that includes an earlier "
                "segment's rights means the scan did not restart at the head, one that is off across a "
                "multiple of 1024 positions points at the carry between tiles)";
    }
}

using Case = std::tuple<std::size_t, Segments>;

class KdtreeClassifyAndCount : public GpuTestWithParam<Case> {};

TEST_P(KdtreeClassifyAndCount, EveryCloud) {
  const auto [n, layout] = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  bool want_owners = false;  // every other cloud also asks for the owners
  for (const Cloud c : kClouds) {
    if (n > (std::size_t{1} << 21) && c != Cloud::kUniform && c != Cloud::kDuplicates) continue;  // time
    expect_level(make_level(c, layout, n, seed()), seed(), std::string(cloud_name(c)) + ", " + segments_name(layout),
                 want_owners);
    if (HasFailure()) return;
    want_owners = !want_owners;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const char* names[] = {"one", "small", "mixed", "tiles"};
  return "n" + std::to_string(std::get<0>(info.param)) + "_" + names[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(Sizes, KdtreeClassifyAndCount,
                         ::testing::Combine(::testing::ValuesIn(kSizes),
                                            ::testing::Values(Segments::kOne, Segments::kSmall, Segments::kMixed,
                                                              Segments::kTiles)),
                         case_name);

TEST(KdtreeClassifyAndCountArgs, BadArgumentsThrow) {
  const auto* pts = reinterpret_cast<const float3*>(16);
  const auto* idx = reinterpret_cast<const std::uint32_t*>(4);
  const auto* nodes = reinterpret_cast<const Node*>(4);
  const auto* active = reinterpret_cast<const int*>(4);
  auto* flags = reinterpret_cast<std::uint8_t*>(1);
  auto* counts = reinterpret_cast<std::uint32_t*>(4);
  using cudalab::kdtree::classify_and_count;
  EXPECT_THROW(classify_and_count(nullptr, idx, 9, nodes, active, 2, flags, counts), std::invalid_argument);
  EXPECT_THROW(classify_and_count(pts, nullptr, 9, nodes, active, 2, flags, counts), std::invalid_argument);
  EXPECT_THROW(classify_and_count(pts, idx, 9, nullptr, active, 2, flags, counts), std::invalid_argument);
  EXPECT_THROW(classify_and_count(pts, idx, 9, nodes, nullptr, 2, flags, counts), std::invalid_argument);
  EXPECT_THROW(classify_and_count(pts, idx, 9, nodes, active, 2, nullptr, counts), std::invalid_argument);
  EXPECT_THROW(classify_and_count(pts, idx, 9, nodes, active, 2, flags, nullptr), std::invalid_argument);
  EXPECT_THROW(classify_and_count(pts, idx, 9, nodes, active, 0, flags, counts), std::invalid_argument);   // m = 0
  EXPECT_THROW(classify_and_count(pts, idx, 9, nodes, active, 10, flags, counts), std::invalid_argument);  // m > n
  EXPECT_THROW(classify_and_count(pts, idx, cudalab::kdtree::max_points + 1, nodes, active, 2, flags, counts),
               std::invalid_argument);
  EXPECT_NO_THROW(classify_and_count(nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr));
}

}  // namespace
}  // namespace cudalab::test::kdtree
