// Helpers shared by the tests of chapter 7: point clouds (uniform,
// clustered and degenerate), synthetic levels of the large-node stage
// (segments in shuffled order, active lists through an indirection), device
// arrays with poisoned guards, and bit-exact comparisons.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/kdtree.cuh"
#include "cudalab/test/harness.hpp"
#include "kdtree_reference.hpp"

namespace cudalab::test::kdtree {

using cudalab::kdtree::Box;
using cudalab::kdtree::Node;

constexpr unsigned char kPoison = 0xA5;
constexpr std::size_t kGuard = 256;  // poisoned elements before and after every output

/// The edge sizes of docs/guides/contributing.md ("Tests") and the tile boundaries of the chapter's
/// kernels: 256 (blocks), 1024 (the scan's tiles and the reduction's 4 points per thread of a
/// block), 2^20 + 7 (1025 tiles: a second chunk in the scan of the tile totals), a prime and one
/// large size.
inline const std::vector<std::size_t> kSizes = {0,    1,    31,   32,    33,     255,     256,            257,
                                               1023, 1024, 1025, 2047,  2048,   2049,    4097,           65537,
                                               1000003, (1u << 20) + 7, (1u << 21) + 1, (1u << 24) + 3};

inline std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

/// The point clouds of the tests.
enum class Cloud { kUniform, kClustered, kAllEqual, kPlane, kDuplicates };

inline const char* cloud_name(Cloud c) {
  switch (c) {
    case Cloud::kUniform: return "uniform";
    case Cloud::kClustered: return "clustered";
    case Cloud::kAllEqual: return "all-equal";
    case Cloud::kPlane: return "plane";
    case Cloud::kDuplicates: return "duplicates";
  }
  return "?";
}

inline const std::vector<Cloud> kClouds = {Cloud::kUniform, Cloud::kClustered, Cloud::kAllEqual, Cloud::kPlane,
                                           Cloud::kDuplicates};

/// n points of the given kind; point i depends only on (seed, i).
inline std::vector<float3> make_cloud(Cloud kind, std::size_t n, std::uint64_t seed) {
  const std::vector<float> u = gen::uniform_real<float>(3 * n, seed, -1.0f, 1.0f);
  const std::vector<int> pick = gen::uniform_int<int>(n, seed ^ 0x5bd1e995u, 0, 15);
  std::vector<float3> p(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = u[3 * i], y = u[3 * i + 1], z = u[3 * i + 2];
    const int c = pick[i];
    switch (kind) {
      case Cloud::kUniform: p[i] = {x, y, z}; break;
      case Cloud::kClustered:  // 16 tight clusters of very different spreads
        p[i] = {0.3f * static_cast<float>(c % 4) + x * 1e-3f * static_cast<float>(c + 1),
                0.5f * static_cast<float>(c / 4) + y * 1e-3f, 100.0f + z * 1e-2f};
        break;
      case Cloud::kAllEqual: p[i] = {0.25f, -3.5f, 7.0f}; break;
      case Cloud::kPlane: p[i] = {x * 10.0f, y * 10.0f, 0.5f}; break;
      case Cloud::kDuplicates:  // 16 distinct points, each many times
        p[i] = {static_cast<float>(c % 3), static_cast<float>(c % 5) * 0.5f, static_cast<float>(c) * 0.25f};
        break;
    }
  }
  return p;
}

/// How a synthetic level cuts [0, n) into segments.
enum class Segments { kOne, kSmall, kMixed, kTiles };

inline const char* segments_name(Segments s) {
  switch (s) {
    case Segments::kOne: return "one segment";
    case Segments::kSmall: return "segments of 1 to 40";
    case Segments::kMixed: return "segments of 1 to 3000";
    case Segments::kTiles: return "segments of 1023, 1024, 1025";
  }
  return "?";
}

/// One level of the large-node stage: the points, the working array, the
/// node array and the active list (see kdtree.cuh). Node active[k]'s segment
/// is idx[begin, begin + count); the segments are laid out in a shuffled
/// order; the node array holds a few inactive nodes too; each active node's
/// cell is the bounding box of its points and its split is the reference's.
struct Level {
  std::vector<float3> points;
  std::vector<std::uint32_t> idx;
  std::vector<Node> nodes;
  std::vector<int> active;
};

inline Level make_level(Cloud cloud, Segments layout, std::size_t n, std::uint64_t seed) {
  Level L;
  L.points = make_cloud(cloud, n, seed);
  L.idx.resize(n);
  std::iota(L.idx.begin(), L.idx.end(), 0u);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::shuffle(L.idx.begin(), L.idx.end(), rng);
  // Segment sizes, in layout order.
  std::vector<std::size_t> sizes;
  for (std::size_t left = n, j = 0; left > 0; ++j) {
    std::size_t s = left;
    if (layout == Segments::kSmall) s = 1 + rng() % 40;
    if (layout == Segments::kMixed) s = 1 + rng() % 3000;
    if (layout == Segments::kTiles) s = 1023 + j % 3;
    s = std::min(s, left);
    sizes.push_back(s);
    left -= s;
  }
  const std::size_t m = sizes.size();
  // Node ids: m active ones among m + 3, in shuffled order.
  std::vector<int> ids(m + 3);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  L.active.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(m));
  L.nodes.assign(m + 3, Node{{{9.0f, 9.0f, 9.0f}, {-9.0f, -9.0f, -9.0f}}, 7, 1.5f, -7, -7, 0u, 0u, -7});
  // Segment k of the layout belongs to active[perm[k]]: the active list's order differs from the layout's.
  std::vector<std::size_t> perm(m);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  std::size_t begin = 0;
  for (std::size_t s = 0; s < m; ++s) {
    Node& node = L.nodes[static_cast<std::size_t>(L.active[perm[s]])];
    node.begin = static_cast<unsigned>(begin);
    node.count = static_cast<unsigned>(sizes[s]);
    node.depth = 3;
    node.left = node.right = -1;
    std::vector<float3> mine;
    for (std::size_t i = begin; i < begin + sizes[s]; ++i) mine.push_back(L.points[L.idx[i]]);
    node.box = reference::bounding_box(mine).first;
    const auto [axis, split] = reference::select_split(node.box);
    node.axis = axis;
    node.split = split;
    begin += sizes[s];
  }
  return L;
}

/// The broadcast of a level: owners[i] = k for every position i of active
/// node k's segment (what 7.3 writes when asked and 7.4 may be given).
inline std::vector<std::uint32_t> owners_of(const Level& L) {
  std::vector<std::uint32_t> owners(L.idx.size());
  for (std::size_t k = 0; k < L.active.size(); ++k) {
    const Node& node = L.nodes[static_cast<std::size_t>(L.active[k])];
    std::fill(owners.begin() + node.begin, owners.begin() + node.begin + node.count, static_cast<std::uint32_t>(k));
  }
  return owners;
}

/// A device array of `size` elements of T between two poisoned guards of
/// kGuard elements, everything poisoned at construction.
template <class T>
class Guarded {
 public:
  explicit Guarded(std::size_t size) : size_(size), buf_(size + 2 * kGuard) { buf_.fill_bytes(kPoison); }
  T* data() { return buf_.data() + kGuard; }
  std::vector<T> download() const {
    const std::vector<T> all = buf_.download();
    return {all.begin() + static_cast<std::ptrdiff_t>(kGuard),
            all.begin() + static_cast<std::ptrdiff_t>(kGuard + size_)};
  }
  void upload(const std::vector<T>& host) {
    if (!host.empty()) CUDALAB_CHECK(cudaMemcpy(data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  /// Empty when both guards are intact, else which one was overwritten.
  std::string guard_damage() const {
    const std::vector<T> all = buf_.download();
    std::vector<unsigned char> bytes(all.size() * sizeof(T));
    std::memcpy(bytes.data(), all.data(), bytes.size());
    for (std::size_t b = 0; b < kGuard * sizeof(T); ++b)
      if (bytes[b] != kPoison) return "an element before index 0 was overwritten";
    for (std::size_t b = (kGuard + size_) * sizeof(T); b < bytes.size(); ++b)
      if (bytes[b] != kPoison)
        return "element " + std::to_string(b / sizeof(T) - kGuard) + ", past the end (size " +
               std::to_string(size_) + "), was overwritten";
    return {};
  }

 private:
  std::size_t size_;
  DeviceBuffer<T> buf_;
};

/// True when a and b have the same bits (so NaN = NaN, and −0 ≠ +0).
template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

inline std::string show(const float3& p) {
  std::ostringstream s;
  s.precision(9);
  s << "(" << p.x << ", " << p.y << ", " << p.z << ")";
  return s.str();
}

/// The Stanford bunny's path in CUDALAB_DATA_DIR, or "" when it is not there.
inline std::string bunny_path() {
  const char* dir = std::getenv("CUDALAB_DATA_DIR");
  const std::string path = std::string(dir ? dir : "") + "/bun_zipper.ply";
  return dir != nullptr && std::ifstream(path) ? path : std::string();
}

/// Why a bunny test skips: which file to fetch, and where.
inline std::string bunny_missing() {
  const char* dir = std::getenv("CUDALAB_DATA_DIR");
  return std::string("bun_zipper.ply (Stanford bunny, bunny/reconstruction/bun_zipper.ply) is not in "
                     "CUDALAB_DATA_DIR (") + (dir ? dir : "unset") +
         "): fetch it with tools/fetch-data bunny (from bunny.tar.gz of the Stanford 3D Scanning Repository, "
         "http://graphics.stanford.edu/data/3Dscanrep/)";
}

inline std::string show(const Box& b) { return "[" + show(b.lo) + " .. " + show(b.hi) + "]"; }

}  // namespace cudalab::test::kdtree
