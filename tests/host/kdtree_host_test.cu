// Host tests of chapter 7 (no GPU): the ASCII PLY reader (cudalab/ply.hpp),
// the CPU references of 7.1 to 7.4 and the serial large-node builder with its
// invariant checker (kdtree_reference.hpp), on the clouds of the GPU tests
// and, when CUDALAB_DATA_DIR holds it, the Stanford bunny.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cudalab/ply.hpp"
#include "kdtree_reference.hpp"
#include "kdtree_test_util.cuh"

namespace {

using cudalab::ParseError;
using cudalab::kdtree::Box;
using cudalab::kdtree::Node;
namespace ref = cudalab::reference;
namespace kt = cudalab::test::kdtree;

std::vector<float3> parse(const std::string& text) {
  std::istringstream in(text);
  return cudalab::parse_ply_points(in, "test.ply");
}

// The line a ParseError names, or -1 when the text parses.
long error_line(const std::string& text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e.line();
  }
  return -1;
}

const char* kBunnyLike =
    "ply\n"
    "format ascii 1.0\n"
    "comment zipper output\n"
    "element vertex 3\n"
    "property float x\n"
    "property float y\n"
    "property float z\n"
    "property float confidence\n"
    "property float intensity\n"
    "element face 1\n"
    "property list uchar int vertex_indices\n"
    "end_header\n"
    "-0.0378297 0.12794 0.00447467 0.850855 0.5 \n"
    "-0.0447794 0.128887 0.00190497 0.900159 0.5\n"
    "1e-3 -2 3.5 1 1\n"
    "3 0 1 2\n";

TEST(KdtreePly, ReadsVerticesAndSkipsOtherProperties) {
  const std::vector<float3> p = parse(kBunnyLike);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].x, -0.0378297f);
  EXPECT_EQ(p[0].y, 0.12794f);
  EXPECT_EQ(p[0].z, 0.00447467f);
  EXPECT_EQ(p[2].x, 1e-3f);
  EXPECT_EQ(p[2].y, -2.0f);
  EXPECT_EQ(p[2].z, 3.5f);
}

TEST(KdtreePly, PropertyOrderCrlfAndElementsBeforeVertices) {
  const std::vector<float3> p = parse(
      "ply\r\nformat ascii 1.0\r\nelement camera 2\r\nproperty float f\r\nelement vertex 2\r\n"
      "property double z\r\nproperty double nx\r\nproperty double y\r\nproperty double x\r\nend_header\r\n"
      "7\r\n8\r\n3 0 2 1\r\n6 0 5 4\r\n");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].x, 1.0f);
  EXPECT_EQ(p[0].y, 2.0f);
  EXPECT_EQ(p[0].z, 3.0f);
  EXPECT_EQ(p[1].x, 4.0f);
  EXPECT_EQ(p[1].z, 6.0f);
}

TEST(KdtreePly, NoVertices) {
  EXPECT_TRUE(parse("ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\n"
                    "property float z\nend_header\n")
                  .empty());
}

TEST(KdtreePly, MalformedInputNamesTheLine) {
  const std::string head = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\n"
                           "property float z\nend_header\n";
  EXPECT_EQ(error_line("plx\n"), 1);
  EXPECT_EQ(error_line(""), 0);
  EXPECT_EQ(error_line("ply\nformat binary_little_endian 1.0\n"), 2);
  EXPECT_EQ(error_line("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nend_header\n1 2\n"), 6);
  EXPECT_EQ(error_line("ply\nformat ascii 1.0\nelement vertex -1\n"), 3);
  EXPECT_EQ(error_line("ply\nformat ascii 1.0\nproperty float x\n"), 3);
  EXPECT_EQ(error_line("ply\nformat ascii 1.0\nbogus\n"), 3);
  EXPECT_EQ(error_line("ply\nformat ascii 1.0\nelement face 0\nend_header\n"), 4);  // no vertex element
  EXPECT_EQ(error_line("ply\nelement vertex 0\nend_header\n"), 3);                   // no format line
  EXPECT_EQ(error_line(head + "1 2 3\n1 2\n"), 9);                                   // too few numbers
  EXPECT_EQ(error_line(head + "1 2 3\n1 2 x\n"), 9);                                 // not a number
  EXPECT_EQ(error_line(head + "1 2 3\n1 2 3 4\n"), 9);                               // text after the numbers
  EXPECT_EQ(error_line(head + "1 2 3\n"), 8);                                        // file ends early
  EXPECT_EQ(error_line("ply\nformat ascii 1.0\nelement vertex 1\n"), 3);             // no end_header
  EXPECT_THROW(cudalab::read_ply_points("/nonexistent/cudalab/bunny.ply"), ParseError);
}

TEST(KdtreeReference, BoundingBoxAndFirstBad) {
  const float inf = std::numeric_limits<float>::infinity();
  const auto [b, bad] = ref::bounding_box({{1, 5, -2}, {-3, 2, 4}, {0, inf, 0}, {2, 0, 1}});
  EXPECT_EQ(bad, 2u);
  EXPECT_EQ(b.lo.x, -3.0f);
  EXPECT_EQ(b.lo.y, 0.0f);
  EXPECT_EQ(b.lo.z, -2.0f);
  EXPECT_EQ(b.hi.x, 2.0f);
  EXPECT_EQ(b.hi.y, 5.0f);
  EXPECT_EQ(b.hi.z, 4.0f);
  const auto [e, none] = ref::bounding_box({});
  EXPECT_EQ(none, 0u);
  EXPECT_EQ(e.lo.x, inf);
  EXPECT_EQ(e.hi.z, -inf);
}

TEST(KdtreeReference, SplitTiesOverflowAndDegenerate) {
  EXPECT_EQ(ref::select_split({{0, 0, 0}, {1, 1, 1}}), (std::pair<int, float>{0, 0.5f}));  // tie: x
  EXPECT_EQ(ref::select_split({{0, 0, 0}, {1, 2, 2}}), (std::pair<int, float>{1, 1.0f}));  // tie y, z: y
  EXPECT_EQ(ref::select_split({{0, 0, -4}, {1, 2, 4}}), (std::pair<int, float>{2, 0.0f}));
  EXPECT_EQ(ref::select_split({{-FLT_MAX, 0, 0}, {FLT_MAX, 1, 1}}), (std::pair<int, float>{0, 0.0f}));  // no overflow
  EXPECT_EQ(ref::select_split({{3, 3, 3}, {3, 3, 3}}), (std::pair<int, float>{0, 3.0f}));  // a point: all go right
}

TEST(KdtreeReference, ClassifyAndSplitOneLevel) {
  const std::vector<float3> pts = {{0.1f, 0, 0}, {0.9f, 0, 0}, {0.5f, 0, 0}, {0.2f, 0, 0}, {0, 0.7f, 0}, {0, 0.1f, 0}};
  std::vector<Node> nodes(3);
  nodes[2] = {{{0, 0, 0}, {1, 0, 0}}, 0, 0.5f, -1, -1, 2u, 4u, 1};  // positions 2..5
  nodes[0] = {{{0, 0, 0}, {0, 1, 0}}, 1, 0.5f, -1, -1, 0u, 2u, 1};  // positions 0..1
  const std::vector<std::uint32_t> idx = {4, 5, 0, 1, 2, 3};
  const std::vector<int> active = {2, 0};
  const auto [flags, counts] = ref::classify_and_count(pts, idx, nodes, active);
  EXPECT_EQ(flags, (std::vector<std::uint8_t>{1, 0, 0, 1, 1, 0}));  // 0.5 >= 0.5 goes right
  EXPECT_EQ(counts, (std::vector<std::uint32_t>{2, 1}));
  EXPECT_EQ(ref::segmented_split(idx, flags, nodes, active), (std::vector<std::uint32_t>{5, 4, 0, 3, 1, 2}));
}

TEST(KdtreeReference, BuildSatisfiesTheInvariantsOnEveryCloud) {
  for (const kt::Cloud c : kt::kClouds)
    for (const std::size_t n : {std::size_t{1}, std::size_t{32}, std::size_t{33}, std::size_t{1000}, std::size_t{65537}})
      for (const std::size_t t : {std::size_t{1}, std::size_t{32}}) {
        const std::vector<float3> p = kt::make_cloud(c, n, 7);
        const ref::Tree tree = ref::build(p, t, 40);
        EXPECT_EQ(ref::check_tree(p, tree.nodes, tree.small, tree.leaf_points, t, 40), "")
            << kt::cloud_name(c) << ", n = " << n << ", T = " << t;
        if (n <= t) EXPECT_EQ(tree.nodes.size(), 1u) << "a root with at most T points is small";
        if (c == kt::Cloud::kAllEqual && n > t) {
          EXPECT_EQ(tree.depth, 40) << "all points equal: one large node per level down to max_depth";
          EXPECT_EQ(tree.nodes.size(), 81u);
        }
      }
}

TEST(KdtreeReference, BuildIsDeterministicAndMatchesTheKnownTree) {
  const std::vector<float3> p = kt::make_cloud(kt::Cloud::kUniform, 100000, 2008);
  const ref::Tree a = ref::build(p, 32, 64), b = ref::build(p, 32, 64);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  EXPECT_EQ(0, std::memcmp(a.nodes.data(), b.nodes.data(), a.nodes.size() * sizeof(Node)));
  EXPECT_EQ(a.leaf_points, b.leaf_points);
  EXPECT_EQ(a.levels.size(), static_cast<std::size_t>(a.depth));  // every level splits; the last children are small
  std::size_t sum = 0;
  for (const int s : a.small) sum += a.nodes[static_cast<std::size_t>(s)].count;
  EXPECT_EQ(sum, p.size());
  EXPECT_EQ(a.nodes.size(), 2 * a.small.size() - 1);  // a full binary tree
}

TEST(KdtreeReference, CheckerFindsBrokenTrees) {
  const std::vector<float3> p = kt::make_cloud(kt::Cloud::kClustered, 5000, 3);
  const ref::Tree t = ref::build(p, 8, 64);
  auto broken = t;
  std::swap(broken.leaf_points.front(), broken.leaf_points.back());
  EXPECT_NE(ref::check_tree(p, broken.nodes, broken.small, broken.leaf_points, 8, 64), "");
  broken = t;
  broken.nodes[0].split = std::nextafter(broken.nodes[0].split, 1e30f);
  EXPECT_NE(ref::check_tree(p, broken.nodes, broken.small, broken.leaf_points, 8, 64), "");
  broken = t;
  broken.small.pop_back();
  EXPECT_NE(ref::check_tree(p, broken.nodes, broken.small, broken.leaf_points, 8, 64), "");
  EXPECT_NE(ref::check_tree(p, t.nodes, t.small, t.leaf_points, 4, 64), "");  // small nodes hold more than 4
}

TEST(KdtreeReference, BadInputThrows) {
  EXPECT_THROW(ref::build({}, 32, 64), std::invalid_argument);
  EXPECT_THROW(ref::build({{0, 0, 0}}, 0, 64), std::invalid_argument);
  std::vector<float3> p = kt::make_cloud(kt::Cloud::kUniform, 100, 1);
  p[57].y = std::numeric_limits<float>::quiet_NaN();
  p[80].x = std::numeric_limits<float>::infinity();
  try {
    ref::build(p, 32, 64);
    ADD_FAILURE() << "a NaN coordinate must be rejected";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("point 57"), std::string::npos) << e.what();
  }
}

TEST(KdtreeReference, StanfordBunny) {
  const std::string path = kt::bunny_path();
  if (path.empty()) GTEST_SKIP() << kt::bunny_missing();
  const std::vector<float3> p = cudalab::read_ply_points(path);
  EXPECT_EQ(p.size(), 35947u);
  const ref::Tree t = ref::build(p, 32, 64);
  EXPECT_EQ(ref::check_tree(p, t.nodes, t.small, t.leaf_points, 32, 64), "");
}

}  // namespace
