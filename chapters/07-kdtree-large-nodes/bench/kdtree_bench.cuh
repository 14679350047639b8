// Shared by the benchmarks of chapter 7: the standard sizes and one level of
// the large-node stage on uniform points, built once per program on the host
// and kept on the device.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/kdtree.cuh"
#include "kdtree_reference.hpp"

namespace cudalab::bench::kdtree {

using cudalab::kdtree::Node;

/// The issue's size (2,000,000 points, as in Zhou et al.'s largest scene) and 2^24.
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

/// One level on the device: points, working array (points grouped by grid
/// cell, in index order within a cell, as stable splits leave them), the
/// 4096 cell nodes with their reference splits, active = 0 .. 4095.
struct DeviceLevel {
  std::size_t n = 0, m = 0;
  DeviceBuffer<float3> points;
  DeviceBuffer<std::uint32_t> idx;
  DeviceBuffer<Node> nodes;
  DeviceBuffer<int> active;
  DeviceBuffer<std::uint8_t> flags;    ///< the level's classification (input of 7.4)
  DeviceBuffer<std::uint8_t> flags_out;
  DeviceBuffer<std::uint32_t> counts_out;
  DeviceBuffer<std::uint32_t> idx_out;
  DeviceBuffer<std::uint32_t> owner;    ///< active position of every position (the keys of the CUB baseline)
  DeviceBuffer<std::uint32_t> flags32;  ///< the flags as 32-bit values (the CUB baseline's input)
  DeviceBuffer<std::uint32_t> scan_out;
};

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
  for (std::size_t i = 0; i < n; ++i) idx[fill[static_cast<std::size_t>(cell_of(p[i]))]++] = static_cast<std::uint32_t>(i);
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
  const std::vector<std::uint8_t> flags = reference::classify_and_count(p, idx, nodes, active).first;
  std::vector<std::uint32_t> owner(n), flags32(flags.begin(), flags.end());
  for (int c = 0; c < cells; ++c)
    std::fill(owner.begin() + begin[static_cast<std::size_t>(c)],
              owner.begin() + begin[static_cast<std::size_t>(c)] + count[static_cast<std::size_t>(c)],
              static_cast<std::uint32_t>(c));
  DeviceLevel& L = cache[n];
  L.owner = DeviceBuffer<std::uint32_t>(owner);
  L.flags32 = DeviceBuffer<std::uint32_t>(flags32);
  L.scan_out = DeviceBuffer<std::uint32_t>(n);
  L.n = n;
  L.m = static_cast<std::size_t>(cells);
  L.points = DeviceBuffer<float3>(p);
  L.idx = DeviceBuffer<std::uint32_t>(idx);
  L.nodes = DeviceBuffer<Node>(nodes);
  L.active = DeviceBuffer<int>(active);
  L.flags = DeviceBuffer<std::uint8_t>(flags);
  L.flags_out = DeviceBuffer<std::uint8_t>(n);
  L.counts_out = DeviceBuffer<std::uint32_t>(L.m);
  L.idx_out = DeviceBuffer<std::uint32_t>(n);
  return L;
}

/// Registers "<name>/<n>" for each size in `sizes`, timing `launch(level, stream)`.
template <class Launch>
void register_level(const std::string& name, Launch launch, std::size_t bytes_per_point,
                    std::initializer_list<std::int64_t> sizes) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [launch, bytes_per_point](benchmark::State& state) {
    if (!require_device(state)) return;
    DeviceLevel& L = level(static_cast<std::size_t>(state.range(0)));
    time_runs(state, [&](cudaStream_t s) { launch(L, s); }, bytes_per_point * L.n, L.n);
  });
  for (auto n : sizes) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace cudalab::bench::kdtree
