// Tests of exercise 7.1, cudalab::kdtree::bounding_box (suites KdtreeBoundingBox*).
// Run: tools/grade 7.1   or   build/default/bin/bounding_box_test_starter
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kdtree_test_util.cuh"

namespace cudalab::test::kdtree {
namespace {

constexpr const char* kExercise = "7.1 bounding_box";

// Runs bounding_box on `points` into poisoned outputs and compares with the
// reference bit for bit.
void expect_box(const std::vector<float3>& points, std::uint64_t seed, const std::string& what) {
  const std::size_t n = points.size();
  DeviceBuffer<float3> d_points(points);
  Guarded<Box> box(1);
  Guarded<std::uint64_t> bad(1);
  cudalab::kdtree::bounding_box(d_points.data(), n, box.data(), bad.data());
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const auto [want_box, want_bad] = reference::bounding_box(points);
  const Box got_box = box.download()[0];
  const std::uint64_t got_bad = bad.download()[0];
  const std::string ctx = context(kExercise, n, seed) + "\n" + what + ": ";
  ASSERT_EQ(box.guard_damage(), "") << ctx << "the box output";
  ASSERT_EQ(bad.guard_damage(), "") << ctx << "the first_bad output";
  EXPECT_EQ(got_bad, want_bad) << ctx << "first_bad: expected " << want_bad << " (n when every point is finite)"
                               << ", got " << got_bad
                               << " (0xA5A5... means never written; a non-finite point must be skipped, and the "
                                  "smallest such index kept: combine with min, start from n)";
  EXPECT_TRUE(same_bits(got_box.lo, want_box.lo) && same_bits(got_box.hi, want_box.hi))
      << ctx << "box: expected " << show(want_box) << ", got " << show(got_box)
      << " (min of lo and max of hi over every finite point: check the identity (+inf, -inf), the "
         "points past the last full block, and that warp 0 reduces every warp's total)";
}

class KdtreeBoundingBox : public GpuTestWithParam<std::size_t> {};

TEST_P(KdtreeBoundingBox, EveryCloud) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  for (const Cloud c : kClouds) {
    expect_box(make_cloud(c, n, seed()), seed(), cloud_name(c));
    if (HasFailure()) return;
  }
}

TEST_P(KdtreeBoundingBox, ExtremesAtEveryEnd) {
  // The extreme points at index 0, at n - 1 and in the middle: a reduction
  // that drops the first or last elements or a partial block misses them.
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  if (n == 0) return;
  for (const std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
    std::vector<float3> p = make_cloud(Cloud::kUniform, n, seed());
    p[at] = {-5.0f, 6.0f, -7.0f};
    expect_box(p, seed(), "extreme point at index " + std::to_string(at));
    if (HasFailure()) return;
  }
}

TEST_P(KdtreeBoundingBox, NonFinitePoints) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  if (n == 0) return;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float3> p = make_cloud(Cloud::kUniform, n, seed());
  p[n - 1] = {1.0f, inf, 0.0f};
  expect_box(p, seed(), "an infinite y at index n - 1");
  if (HasFailure() || n < 3) return;
  p[n / 2] = {0.0f, 0.0f, nan};
  p[n / 3] = {-inf, 0.0f, 0.0f};
  expect_box(p, seed(), "NaN at n/2, -inf at n/3 and +inf at n-1 (the first is reported)");
}

// Every point from index 7 on is non-finite, so every thread of the grid
// meets several bad points: first_bad must be 7, the smallest, not the last
// bad index a thread saw (keep the minimum: i < acc.bad).
TEST_P(KdtreeBoundingBox, NonFiniteFromIndex7) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  if (n <= 8) return;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float3> p = make_cloud(Cloud::kUniform, n, seed());
  for (std::size_t i = 7; i < n; ++i) {
    switch (i % 3) {
      case 0: p[i].x = nan; break;
      case 1: p[i].y = inf; break;
      default: p[i].z = -inf; break;
    }
  }
  expect_box(p, seed(), "every point from index 7 on has a NaN or infinite coordinate (first_bad is 7)");
}

INSTANTIATE_TEST_SUITE_P(Sizes, KdtreeBoundingBox, ::testing::ValuesIn(kSizes), size_name);

// Finite points as large as a float gets: the uniform cloud scaled by
// FLT_MAX, with (FLT_MAX, FLT_MAX, FLT_MAX) at index 0 and its negative in
// the middle. Every point is finite, so first_bad is n and the box is
// [-FLT_MAX, FLT_MAX] on every axis. The other clouds stay within a few
// hundred, where a shortcut such as isfinite(p.x + p.y + p.z) ("an infinity or
// a NaN makes the sum non-finite") agrees with testing each coordinate; here
// the sum of two finite coordinates overflows to infinity.
class KdtreeBoundingBoxCases : public GpuTest {};

TEST_F(KdtreeBoundingBoxCases, FiniteCoordinatesNearFltMax) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{257}, std::size_t{1025},
                              std::size_t{65537}, std::size_t{1000003}}) {
    if (n > max_n()) continue;
    std::vector<float3> p = make_cloud(Cloud::kUniform, n, seed());
    for (float3& q : p) q = {q.x * FLT_MAX, q.y * FLT_MAX, q.z * FLT_MAX};
    p[0] = {FLT_MAX, FLT_MAX, FLT_MAX};
    if (n > 1) p[n / 2] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    expect_box(p, seed(),
               "finite coordinates up to +-FLT_MAX, (FLT_MAX, FLT_MAX, FLT_MAX) at index 0 (every point is finite: "
               "test each coordinate with isfinite; a sum or product of coordinates overflows to infinity for "
               "finite points)");
    if (HasFailure()) return;
  }
}

TEST(KdtreeBoundingBoxArgs, NullPointersAndSizesThrow) {
  Box* box = reinterpret_cast<Box*>(alignof(Box));  // never dereferenced: the call must throw first
  auto* bad = reinterpret_cast<std::uint64_t*>(8);
  const auto* pts = reinterpret_cast<const float3*>(16);
  EXPECT_THROW(cudalab::kdtree::bounding_box(nullptr, 5, box, bad), std::invalid_argument);
  EXPECT_THROW(cudalab::kdtree::bounding_box(pts, 5, nullptr, bad), std::invalid_argument);
  EXPECT_THROW(cudalab::kdtree::bounding_box(pts, 5, box, nullptr), std::invalid_argument);
  EXPECT_THROW(cudalab::kdtree::bounding_box(pts, cudalab::kdtree::max_points + 1, box, bad), std::invalid_argument);
}

}  // namespace
}  // namespace cudalab::test::kdtree
