// Shared by the benchmarks of chapter 7: the standard sizes, one level of
// the large-node stage on uniform points (its cells built once per program
// on the host), and the new inputs that every timed call gets (Fresh hooks,
// cudalab/bench.cuh): new uniform points, a new layout of the level's
// segments with new points in their cells, new flags, new cells.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/kdtree.cuh"
#include "kdtree_reference.hpp"

namespace cudalab::bench::kdtree {

using cudalab::kdtree::Box;
using cudalab::kdtree::Node;

/// The size of 7.6's speed goal (2,000,000 points, as in Zhou et al.'s largest scene) and 2^24.
inline constexpr std::int64_t kPoints = 2000000;
inline constexpr std::int64_t kLargePoints = std::int64_t{1} << 24;
/// Cells per side of the synthetic level: 16^3 = 4096 active nodes, the 13th
/// level (depth 12) of a spatial-median tree over uniform points.
inline constexpr int kGrid = 16;

/// n uniform points in [0, 1)^3; point i depends only on i.
inline std::vector<float3> uniform_points(std::size_t n) {
  const std::vector<float> u = gen::uniform_real<float>(3 * n, 2008, 0.0f, 1.0f);
  std::vector<float3> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = {u[3 * i], u[3 * i + 1], u[3 * i + 2]};
  return p;
}

/// `buf` with exactly n elements: reallocated (contents lost) when its size differs.
template <class T>
DeviceBuffer<T>& sized(DeviceBuffer<T>& buf, std::size_t n) {
  if (buf.size() != n) buf = DeviceBuffer<T>(n);
  return buf;
}

/// One level of the large-node stage over n uniform points: the 4096 grid
/// cells are its active nodes (active = 0 .. 4095, node k is cell k), each
/// with its reference split and its population. The timed calls read the
/// inputs of the last refresh (refill_uniform_points, refresh_level,
/// refresh_cells), allocated at the first one, and write the outputs.
struct DeviceLevel {
  std::size_t n = 0, m = 0;
  std::vector<Node> cells;          ///< the m nodes on the host, begin in cell order (the layout as built)
  DeviceBuffer<std::uint32_t> idx;  ///< points grouped by cell, in index order within a cell
  DeviceBuffer<int> active;         ///< 0 .. m − 1
  // Outputs of the timed calls.
  DeviceBuffer<std::uint8_t> flags_out;
  DeviceBuffer<std::uint32_t> counts_out;
  DeviceBuffer<std::uint32_t> idx_out;
  DeviceBuffer<std::uint32_t> scan_out;
  // Inputs of the last refresh.
  DeviceBuffer<float3> points;        ///< n points
  DeviceBuffer<Node> nodes;           ///< the m nodes
  std::vector<Node> host_nodes;       ///< the same m nodes on the host
  DeviceBuffer<std::uint32_t> work;   ///< the working array of the last layout
  DeviceBuffer<std::uint32_t> owner;  ///< k at every position of segment k (the key of the CUB baseline)
  DeviceBuffer<std::uint8_t> flags;   ///< random flags (input of 7.4)
  DeviceBuffer<std::uint32_t> flags32;  ///< random flags as 32-bit values (the CUB baseline's input)
  // Scratch of the checks.
  DeviceBuffer<std::uint8_t> expected_flags;
  DeviceBuffer<std::uint32_t> expected_counts;
  DeviceBuffer<std::uint32_t> expected_idx;
};

/// The level of n uniform points, built on the host at the first call for n
/// and kept for the life of the program.
inline DeviceLevel& level(std::size_t n) {
  static std::map<std::size_t, DeviceLevel> cache;
  auto it = cache.find(n);
  if (it != cache.end()) return it->second;
  const std::vector<float3> p = uniform_points(n);
  const int cells = kGrid * kGrid * kGrid;
  auto cell_of = [](const float3& q) {
    auto c = [](float v) { return std::min(kGrid - 1, static_cast<int>(v * kGrid)); };
    return (c(q.x) * kGrid + c(q.y)) * kGrid + c(q.z);
  };
  std::vector<unsigned> count(cells, 0), begin(cells, 0);
  for (const float3& q : p) ++count[static_cast<std::size_t>(cell_of(q))];
  for (int c = 1; c < cells; ++c) begin[c] = begin[c - 1] + count[c - 1];
  std::vector<unsigned> fill = begin;
  std::vector<std::uint32_t> idx(n);
  for (std::size_t i = 0; i < n; ++i)
    idx[fill[static_cast<std::size_t>(cell_of(p[i]))]++] = static_cast<std::uint32_t>(i);
  std::vector<Node> nodes(cells);
  std::vector<int> active(cells);
  const float w = 1.0f / kGrid;
  for (int c = 0; c < cells; ++c) {
    const int x = c / (kGrid * kGrid), y = (c / kGrid) % kGrid, z = c % kGrid;
    Node& v = nodes[static_cast<std::size_t>(c)];
    v.box = {{x * w, y * w, z * w}, {(x + 1) * w, (y + 1) * w, (z + 1) * w}};
    const auto [axis, split] = reference::select_split(v.box);
    v.axis = axis;
    v.split = split;
    v.left = v.right = -1;
    v.begin = begin[static_cast<std::size_t>(c)];
    v.count = count[static_cast<std::size_t>(c)];
    v.depth = 12;
    active[static_cast<std::size_t>(c)] = c;
  }
  DeviceLevel& L = cache[n];
  L.n = n;
  L.m = static_cast<std::size_t>(cells);
  L.cells = nodes;
  L.idx = DeviceBuffer<std::uint32_t>(idx);
  L.active = DeviceBuffer<int>(active);
  L.flags_out = DeviceBuffer<std::uint8_t>(n);
  L.counts_out = DeviceBuffer<std::uint32_t>(L.m);
  L.idx_out = DeviceBuffer<std::uint32_t>(n);
  L.scan_out = DeviceBuffer<std::uint32_t>(n);
  return L;
}

namespace detail {

/// Coordinate `axis` (0, 1, 2) of a point, on the host or the device.
__host__ __device__ inline float coord(const float3& p, int axis) { return axis == 0 ? p.x : (axis == 1 ? p.y : p.z); }

/// A float uniform in [0, 1) (24 random bits) from a hash of (seed, i).
__host__ __device__ inline float unit(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t x = mix64(seed ^ (i * 0x9E3779B97F4A7C15ull));
  return static_cast<float>(x >> 40) * 0x1p-24f;
}

/// True when the three coordinates are finite (false for NaN and ±inf).
__host__ __device__ inline bool finite(const float3& p) {
  return fabsf(p.x) <= FLT_MAX && fabsf(p.y) <= FLT_MAX && fabsf(p.z) <= FLT_MAX;
}

// Point i uniform in [0, 1)^3; the point at bad_index (none when ≥ n) gets bad_value on bad_axis.
__global__ inline void uniform_points_kernel(float3* points, std::size_t n, std::uint64_t seed, std::size_t bad_index,
                                             int bad_axis, float bad_value) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float3 p{unit(seed, 3 * i), unit(seed, 3 * i + 1), unit(seed, 3 * i + 2)};
    if (i == bad_index) (bad_axis == 0 ? p.x : (bad_axis == 1 ? p.y : p.z)) = bad_value;
    points[i] = p;
  }
}

// Block k writes k at every position of the segment of node active[k].
__global__ inline void owner_kernel(std::uint32_t* owner, const Node* nodes, const int* active) {
  const Node v = nodes[active[blockIdx.x]];
  for (unsigned j = threadIdx.x; j < v.count; j += blockDim.x) owner[v.begin + j] = blockIdx.x;
}

// work[i] = (idx[i] + shift) mod n (a permutation of [0, n) like idx); when
// points is not null, points[work[i]] = a point uniform in the cell of the
// node of position i.
__global__ inline void layout_kernel(std::uint32_t* work, float3* points, const std::uint32_t* idx,
                                     const std::uint32_t* owner, const Node* nodes, const int* active, std::size_t n,
                                     std::size_t shift, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t v = idx[i] + shift;
    const auto p = static_cast<std::uint32_t>(v >= n ? v - n : v);
    work[i] = p;
    if (points == nullptr) continue;
    const Box b = nodes[active[owner[i]]].box;
    points[p] = {b.lo.x + unit(seed, 3 * i) * (b.hi.x - b.lo.x), b.lo.y + unit(seed, 3 * i + 1) * (b.hi.y - b.lo.y),
                 b.lo.z + unit(seed, 3 * i + 2) * (b.hi.z - b.lo.z)};
  }
}
}  // namespace detail

/// The union of two boxes (componentwise min of lo, max of hi): exact, so any order of reduction gives the same box.
struct BoxUnion {
  __host__ __device__ Box operator()(const Box& a, const Box& b) const {
    return Box{{fminf(a.lo.x, b.lo.x), fminf(a.lo.y, b.lo.y), fminf(a.lo.z, b.lo.z)},
               {fmaxf(a.hi.x, b.hi.x), fmaxf(a.hi.y, b.hi.y), fmaxf(a.hi.z, b.hi.z)}};
  }
};

/// A box as text, every coordinate with 9 significant digits.
inline std::string show(const Box& b) {
  std::ostringstream s;
  s.precision(9);
  s << "[(" << b.lo.x << ", " << b.lo.y << ", " << b.lo.z << ") .. (" << b.hi.x << ", " << b.hi.y << ", " << b.hi.z
    << ")]";
  return s.str();
}

/// True when two boxes have the same bits.
inline bool same_box(const Box& a, const Box& b) { return std::memcmp(&a, &b, sizeof(Box)) == 0; }

/// @brief Enqueues n new points uniform in [0, 1)^3 (the distribution of
///        uniform_points) from a new seed into `points`; with `plant_bad`,
///        every other call on average gives one point, at a random index, a
///        NaN, +inf or −inf coordinate. Work O(n), on the device.
inline void refill_uniform_points(DeviceBuffer<float3>& points, cudaStream_t stream, bool plant_bad = false) {
  const std::size_t n = points.size();
  if (n == 0) return;
  const std::uint64_t r = next_seed();
  const bool bad = plant_bad && (r & 1) != 0;
  const float values[3] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity()};
  detail::uniform_points_kernel<<<4 * sm_count(), 256, 0, stream>>>(
      points.data(), n, next_seed(), bad ? static_cast<std::size_t>((r >> 8) % n) : n, static_cast<int>((r >> 1) % 3),
      values[(r >> 3) % 3]);
  CUDALAB_CHECK_LAUNCH();
}

/// @brief "" when `*box` is the bounding box of the finite points among
///        `points[0 .. n)` and (when first_bad is not null) `*first_bad` the
///        first index of a non-finite point (n when none), as 7.1 promises;
///        else what differs. All three in device memory. Work O(n), on the
///        device (two Thrust reductions, on the default stream, waited for).
///        Defined in bench/kdtree_checks.cu, compiled once per group (its
///        BASELINES).
std::string check_bounding_box(const float3* points, std::size_t n, const Box* box, const std::uint64_t* first_bad);

/// @brief The first i < n where a[i] ≠ b[i] (device memory), n when the two
///        arrays are equal: thrust::mismatch on the device, on the default
///        stream, waited for. Defined in bench/kdtree_checks.cu, compiled once
///        per group (its BASELINES).
std::size_t first_mismatch(const std::uint8_t* a, const std::uint8_t* b, std::size_t n);

/// @copydoc first_mismatch(const std::uint8_t*, const std::uint8_t*, std::size_t)
std::size_t first_mismatch(const std::uint32_t* a, const std::uint32_t* b, std::size_t n);

/// @brief Enqueues a new layout of the level: the cells, their splits and
///        populations stay; the segments are laid out in a new random order
///        (new `begin` in `nodes` and `host_nodes`), `owner` is the new
///        broadcast, `work` the working array idx with every point index
///        shifted by a random amount mod n (a permutation of [0, n) that
///        gathers like idx) and, with `new_points`, `points[work[i]]` is a
///        new point uniform in the cell of position i's node (points stay in
///        their cells, so about half of a segment is right of its split).
///        Work O(n) on the device, O(m) on the host.
inline void refresh_level(DeviceLevel& L, cudaStream_t stream, bool new_points) {
  std::mt19937_64 rng(next_seed());
  std::vector<std::size_t> order(L.m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  L.host_nodes = L.cells;
  unsigned at = 0;
  for (const std::size_t c : order) {
    L.host_nodes[c].begin = at;
    at += L.host_nodes[c].count;
  }
  Node* nodes = sized(L.nodes, L.m).data();
  CUDALAB_CHECK(cudaMemcpyAsync(nodes, L.host_nodes.data(), L.m * sizeof(Node), cudaMemcpyHostToDevice, stream));
  std::uint32_t* owner = sized(L.owner, L.n).data();
  if (L.m > 0) {
    detail::owner_kernel<<<static_cast<unsigned>(L.m), 256, 0, stream>>>(owner, nodes, L.active.data());
    CUDALAB_CHECK_LAUNCH();
  }
  if (L.n == 0) return;
  float3* points = new_points ? sized(L.points, L.n).data() : nullptr;
  detail::layout_kernel<<<4 * sm_count(), 256, 0, stream>>>(sized(L.work, L.n).data(), points, L.idx.data(), owner,
                                                             nodes, L.active.data(), L.n, rng() % L.n, rng());
  CUDALAB_CHECK_LAUNCH();
}

/// A random cell: on each axis two values uniform in [−10, 10) (lo the
/// smaller); one in four cells copies its x side to y or z, so that ties of
/// the longest side occur.
inline Box random_cell(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  float v[6];
  for (float& x : v) x = u(rng);
  Box b{{std::min(v[0], v[3]), std::min(v[1], v[4]), std::min(v[2], v[5])},
        {std::max(v[0], v[3]), std::max(v[1], v[4]), std::max(v[2], v[5])}};
  const auto tie = rng() % 8;
  if (tie == 0) {
    b.lo.y = b.lo.x;
    b.hi.y = b.hi.x;
  } else if (tie == 1) {
    b.lo.z = b.lo.x;
    b.hi.z = b.hi.x;
  }
  return b;
}

/// Makes a benchmark's Fresh hooks for the level of its size (at every run
/// of the benchmark); the hooks may keep references to the level.
using MakeFresh = std::function<Fresh(DeviceLevel&)>;

/// The timed work of one repetition of a level benchmark, in seconds (register_level).
inline constexpr double kLevelMinTimeS = 0.02;

/// Registers "<name>/<n>" for each size in `sizes`, timing `launch(level, stream)`
/// with the hooks `make_fresh(level)` (new inputs before every call, the last
/// call's output checked).
template <class Launch>
void register_level(const std::string& name, Launch launch, std::size_t bytes_per_point,
                    std::initializer_list<std::int64_t> sizes, MakeFresh make_fresh) {
  auto* b = register_device_benchmark(name, [launch, bytes_per_point, make_fresh](benchmark::State& state) {
    DeviceLevel& L = level(static_cast<std::size_t>(state.range(0)));
    time_runs(state, [&](cudaStream_t s) { launch(L, s); }, bytes_per_point * L.n, L.n, make_fresh(L));
  });
  for (auto n : sizes) b->Arg(n);
  // A level's call takes microseconds, and in a checker each call's round trip to the runner (new
  // inputs, L2 flush, null call) costs a millisecond or more of wall time: 0.02 s of timed work is
  // still thousands of calls a repetition, and keeps a graded benchmark under a minute. It
  // overrides --benchmark_min_time for these benchmarks only.
  b->MinTime(kLevelMinTimeS);
}

}  // namespace cudalab::bench::kdtree
