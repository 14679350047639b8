// Tests of exercise 7.2, cudalab::kdtree::select_splits (suites KdtreeSelectSplits*).
// Run: tools/grade 7.2   or   build/default/bin/select_splits_test_starter
#include <cfloat>
#include <stdexcept>

#include "kdtree_test_util.cuh"

namespace cudalab::test::kdtree {
namespace {

constexpr const char* kExercise = "7.2 select_splits";

// m active nodes (shuffled ids among m + 5) with random cells: flat, cubic
// (ties), huge (near FLT_MAX: 0.5 lo + 0.5 hi must not overflow; on one side of 0,
// where lo + hi overflows to infinity), tiny.
std::vector<Node> make_nodes(std::size_t total, std::uint64_t seed) {
  const std::vector<float> u = gen::uniform_real<float>(6 * total, seed, -1.0f, 1.0f);
  const std::vector<int> kind = gen::uniform_int<int>(total, seed ^ 77u, 0, 6);
  std::vector<Node> nodes(total);
  for (std::size_t i = 0; i < total; ++i) {
    float3 a{u[6 * i], u[6 * i + 1], u[6 * i + 2]}, b{u[6 * i + 3], u[6 * i + 4], u[6 * i + 5]};
    switch (kind[i]) {
      case 0: b = {a.x + 1.0f, a.y + 1.0f, a.z + 1.0f}; break;  // a cube: ties go to x
      case 1: b = {a.x, a.y + 2.0f, a.z + 2.0f}; break;         // tie of y and z: y
      case 2: a = {-FLT_MAX, -1.0f, 0.0f}; b = {FLT_MAX, 1.0f, 0.0f}; break;  // huge: no overflow
      case 3: b = a; break;                                     // a point: axis x, split = lo
      case 4: b = {a.x + 1e-30f, a.y, a.z + 3e-30f}; break;     // tiny
      case 5:  // huge on one side of 0: (lo + hi) / 2 overflows to infinity, the split is 0.75 FLT_MAX
        a = {0.5f * FLT_MAX, -1.0f, 0.0f};
        b = {FLT_MAX, 1.0f, 0.0f};
        break;
      default: break;                                           // random corners, sorted below
    }
    nodes[i].box.lo = {std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)};
    nodes[i].box.hi = {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)};
    nodes[i].axis = 7;
    nodes[i].split = -123.0f;
    nodes[i].left = nodes[i].right = -1;
    nodes[i].begin = static_cast<unsigned>(i);
    nodes[i].count = 99;
    nodes[i].depth = 4;
  }
  return nodes;
}

class KdtreeSelectSplits : public GpuTestWithParam<std::size_t> {};

TEST_P(KdtreeSelectSplits, MatchesReference) {
  const std::size_t m = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(m);
  const std::uint64_t s = seed();
  const std::size_t total = m + 5;
  std::vector<Node> nodes = make_nodes(total, s);
  std::vector<int> ids(total);
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937_64 rng(s);
  std::shuffle(ids.begin(), ids.end(), rng);
  const std::vector<int> active(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(m));
  DeviceBuffer<Node> d_nodes(nodes);
  DeviceBuffer<int> d_active(active);
  cudalab::kdtree::select_splits(d_nodes.data(), d_active.data(), m);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::vector<Node> got = d_nodes.download();
  std::vector<Node> want = nodes;
  for (const int a : active) {
    const auto [axis, split] = reference::select_split(want[static_cast<std::size_t>(a)].box);
    want[static_cast<std::size_t>(a)].axis = axis;
    want[static_cast<std::size_t>(a)].split = split;
  }
  std::vector<char> active_flag(total, 0);
  for (const int a : active) active_flag[static_cast<std::size_t>(a)] = 1;
  for (std::size_t i = 0; i < total; ++i) {
    const bool is_active = active_flag[i] != 0;
    if (!same_bits(got[i], want[i])) {
      FAIL() << context(kExercise, m, s) << "\nnode " << i << (is_active ? " (active)" : " (not active)")
             << " with cell " << show(want[i].box) << ": expected axis " << want[i].axis << ", split "
             << want[i].split << "; got axis " << got[i].axis << ", split " << got[i].split
             << (is_active ? " (longest side, ties to the lower axis; split = __fmul_rn(0.5f, lo) + "
                             "__fmul_rn(0.5f, hi), which neither overflows nor fuses)"
                           : " (only the active nodes may change, and only their axis and split)");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, KdtreeSelectSplits, ::testing::ValuesIn(kSizes), size_name);

TEST(KdtreeSelectSplitsArgs, NullPointersAndSizesThrow) {
  auto* nodes = reinterpret_cast<Node*>(alignof(Node));
  const auto* active = reinterpret_cast<const int*>(4);
  EXPECT_THROW(cudalab::kdtree::select_splits(nullptr, active, 3), std::invalid_argument);
  EXPECT_THROW(cudalab::kdtree::select_splits(nodes, nullptr, 3), std::invalid_argument);
  EXPECT_THROW(cudalab::kdtree::select_splits(nodes, active, cudalab::kdtree::max_points + 1), std::invalid_argument);
  EXPECT_NO_THROW(cudalab::kdtree::select_splits(nullptr, nullptr, 0));  // m = 0: a no-op, no CUDA call
}

}  // namespace
}  // namespace cudalab::test::kdtree
