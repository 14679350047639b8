// Tests of exercise 7.4, cudalab::kdtree::segmented_split (suites KdtreeSegmentedSplit*).
// Run: tools/grade 7.4   or   build/default/bin/segmented_split_test_starter
#include <stdexcept>
#include <tuple>

#include "kdtree_test_util.cuh"

namespace cudalab::test::kdtree {
namespace {

constexpr const char* kExercise = "7.4 segmented_split";

// With give_owners, the optional owners (7.3's broadcast) are passed in.
void expect_split(const Level& L, const std::vector<std::uint8_t>& flags, std::uint64_t seed,
                  const std::string& what, bool give_owners) {
  const std::size_t n = L.idx.size(), m = L.active.size();
  DeviceBuffer<std::uint32_t> d_in(L.idx);
  DeviceBuffer<std::uint8_t> d_flags(flags);
  DeviceBuffer<Node> d_nodes(L.nodes);
  DeviceBuffer<int> d_active(L.active);
  DeviceBuffer<std::uint32_t> d_owners(give_owners ? owners_of(L) : std::vector<std::uint32_t>{});
  Guarded<std::uint32_t> out(n);
  cudalab::kdtree::segmented_split(d_in.data(), d_flags.data(), n, d_nodes.data(), d_active.data(), m, out.data(),
                                   nullptr, give_owners ? d_owners.data() : nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint32_t> want = reference::segmented_split(L.idx, flags, L.nodes, L.active);
  const std::vector<std::uint32_t> got = out.download();
  const std::string ctx =
      context(kExercise, n, seed) + "\n" + what + (give_owners ? ", owners given" : ", no owners given") + ": ";
  ASSERT_EQ(out.guard_damage(), "") << ctx << "out";
  ASSERT_EQ(d_in.download(), L.idx) << ctx << "the input was changed";
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      std::size_t b = 0, c = 0;
      for (const int a : L.active) {
        const Node& node = L.nodes[static_cast<std::size_t>(a)];
        if (node.begin <= i && i < node.begin + node.count) b = node.begin, c = node.count;
      }
      FAIL() << ctx << "out[" << i << "] in segment [" << b << ", " << b + c << "): expected " << want[i] << ", got "
             << got[i]
             << " (0xA5A5A5A5 = never written. Lefts first, in input order, then rights in input order: a "
                "left entry goes to b + (its rank among the segment's lefts), a right one to b + lefts + its "
                "rank among the rights; the rank is an exclusive count, the scan is inclusive)";
    }
}

enum class Flags { kRandom, kAllLeft, kAllRight, kClassified };

using Case = std::tuple<std::size_t, Segments>;

class KdtreeSegmentedSplit : public GpuTestWithParam<Case> {};

TEST_P(KdtreeSegmentedSplit, Flags) {
  const auto [n, layout] = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const Level L = make_level(Cloud::kUniform, layout, n, seed());
  const std::vector<int> coin = gen::uniform_int<int>(n, seed() ^ 0x1234u, 0, 1);
  for (const Flags f : {Flags::kRandom, Flags::kAllLeft, Flags::kAllRight, Flags::kClassified}) {
    std::vector<std::uint8_t> flags(n);
    const char* name = "random flags";
    if (f == Flags::kRandom)
      for (std::size_t i = 0; i < n; ++i) flags[i] = static_cast<std::uint8_t>(coin[i]);
    if (f == Flags::kAllLeft) name = "all flags 0";
    if (f == Flags::kAllRight) {
      std::fill(flags.begin(), flags.end(), std::uint8_t{1});
      name = "all flags 1";
    }
    if (f == Flags::kClassified) {
      flags = reference::classify_and_count(L.points, L.idx, L.nodes, L.active).first;
      name = "flags of the median splits";
    }
    // The owners are given with the all-0 flags and the median splits' flags (as 7.6 gives them).
    expect_split(L, flags, seed(), std::string(name) + ", " + segments_name(layout),
                 f == Flags::kAllLeft || f == Flags::kClassified);
    if (HasFailure()) return;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const char* names[] = {"one", "small", "mixed", "tiles"};
  return "n" + std::to_string(std::get<0>(info.param)) + "_" + names[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(Sizes, KdtreeSegmentedSplit,
                         ::testing::Combine(::testing::ValuesIn(kSizes),
                                            ::testing::Values(Segments::kOne, Segments::kSmall, Segments::kMixed,
                                                              Segments::kTiles)),
                         case_name);

TEST(KdtreeSegmentedSplitArgs, BadArgumentsThrow) {
  const auto* in = reinterpret_cast<const std::uint32_t*>(4);
  const auto* flags = reinterpret_cast<const std::uint8_t*>(1);
  const auto* nodes = reinterpret_cast<const Node*>(4);
  const auto* active = reinterpret_cast<const int*>(4);
  auto* out = reinterpret_cast<std::uint32_t*>(4);
  using cudalab::kdtree::segmented_split;
  EXPECT_THROW(segmented_split(nullptr, flags, 9, nodes, active, 2, out), std::invalid_argument);
  EXPECT_THROW(segmented_split(in, nullptr, 9, nodes, active, 2, out), std::invalid_argument);
  EXPECT_THROW(segmented_split(in, flags, 9, nullptr, active, 2, out), std::invalid_argument);
  EXPECT_THROW(segmented_split(in, flags, 9, nodes, nullptr, 2, out), std::invalid_argument);
  EXPECT_THROW(segmented_split(in, flags, 9, nodes, active, 2, nullptr), std::invalid_argument);
  EXPECT_THROW(segmented_split(in, flags, 9, nodes, active, 0, out), std::invalid_argument);   // m = 0
  EXPECT_THROW(segmented_split(in, flags, 9, nodes, active, 10, out), std::invalid_argument);  // m > n
  EXPECT_THROW(segmented_split(in, flags, cudalab::kdtree::max_points + 1, nodes, active, 2, out),
               std::invalid_argument);
  EXPECT_NO_THROW(segmented_split(nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr));
}

}  // namespace
}  // namespace cudalab::test::kdtree
