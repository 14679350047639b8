// Benchmark of cudalab::kdtree::build_large_nodes (7.6): the whole
// large-node stage on 2,000,000 uniform points with T = 32 (the case of
// the speed goal), beside the chapter's baselines in the same run. Every call gets new
// uniform points; the last call's tree is checked on the host: the chapter's
// invariants (reference::check_tree: every point in exactly one small node,
// inside its cell and on its side of every ancestor's split; children's
// cells and counts; the T and depth rules), the root's cell (the points'
// bounding box) and every split (reference::select_split), which make the
// tree the reference's, and the returned counts, depth and per-level figures
// against the node array. The counters level_<l>_ms give the GPU time of
// every level of one extra, timed build (the per-level breakdown of the
// lesson). The stage synchronizes after every level, so the time includes
// those round trips.
//   cpu_reference_build/float3/<n>  7.6's baseline: the serial reference builder (reference::build,
//                                   T = 32) on one host core, wall-clock time. A host baseline, so
//                                   7.6's target is a speed-up over it (the goal: 100). Only this
//                                   program registers it: it takes about a second per run.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kdtree_bench.cuh"

namespace {

using cudalab::kdtree::LargeNodeStage;
using cudalab::kdtree::Node;

constexpr std::size_t kThreshold = 32;
constexpr int kMaxDepth = 64;

// The CPU reference builder on the benchmark's points, timed with the wall clock.
void cpu_reference_build(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  static const std::vector<float3> points = cudalab::bench::kdtree::uniform_points(n);
  std::size_t nodes = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    nodes = cudalab::reference::build(points, kThreshold, kMaxDepth).nodes.size();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
  state.counters["n"] = static_cast<double>(n);
  state.counters["nodes"] = static_cast<double>(nodes);
}

// "" when the stage `got` (nodes, small, leaf on the device) is the large-node stage of the points, else the
// first problem found. Work O(n · depth) on the host.
std::string check_stage(const cudalab::DeviceBuffer<float3>& d_points, const cudalab::DeviceBuffer<Node>& d_nodes,
                        const cudalab::DeviceBuffer<int>& d_small, const cudalab::DeviceBuffer<std::uint32_t>& d_leaf,
                        const LargeNodeStage& got) {
  if (got.nodes == 0 || got.nodes > d_nodes.size() || got.small > d_small.size())
    return "the stage reports " + std::to_string(got.nodes) + " nodes and " + std::to_string(got.small) +
           " small nodes for a capacity of " + std::to_string(d_nodes.size());
  const std::vector<float3> points = d_points.download();
  std::vector<Node> nodes = d_nodes.download();
  nodes.resize(got.nodes);
  std::vector<int> small = d_small.download();
  small.resize(got.small);
  const std::vector<std::uint32_t> leaf = d_leaf.download();
  std::string wrong = cudalab::reference::check_tree(points, nodes, small, leaf, kThreshold, kMaxDepth);
  if (!wrong.empty()) return wrong;
  const Node& root = nodes[0];
  const cudalab::kdtree::Box box = cudalab::reference::bounding_box(points).first;
  if (!cudalab::bench::kdtree::same_box(root.box, box) || root.count != points.size() || root.depth != 0)
    return "the root (node 0) has cell " + cudalab::bench::kdtree::show(root.box) + ", " +
           std::to_string(root.count) + " points, depth " + std::to_string(root.depth) +
           "; expected the bounding box " + cudalab::bench::kdtree::show(box) + ", " + std::to_string(points.size()) +
           " points, depth 0";
  int depth = 0;
  std::vector<cudalab::kdtree::LevelInfo> levels;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& v = nodes[i];
    depth = std::max(depth, v.depth);
    if (v.axis < 0) continue;
    const auto [axis, split] = cudalab::reference::select_split(v.box);
    if (v.axis != axis || std::memcmp(&v.split, &split, sizeof split) != 0)
      return "node " + std::to_string(i) + " of cell " + cudalab::bench::kdtree::show(v.box) + " is split on axis " +
             std::to_string(v.axis) + " at " + std::to_string(v.split) + "; expected axis " + std::to_string(axis) +
             " at " + std::to_string(split) + " (the middle of the longest side)";
    const auto d = static_cast<std::size_t>(v.depth);
    if (levels.size() <= d) levels.resize(d + 1, {0, 0, 0.0f});
    ++levels[d].active;
    levels[d].points += v.count;
  }
  if (got.depth != depth) return "depth " + std::to_string(got.depth) + ", the nodes' largest " + std::to_string(depth);
  if (got.levels.size() != levels.size())
    return std::to_string(got.levels.size()) + " levels reported, the nodes have " + std::to_string(levels.size());
  for (std::size_t l = 0; l < levels.size(); ++l)
    if (got.levels[l].active != levels[l].active || got.levels[l].points != levels[l].points)
      return "level " + std::to_string(l) + " reported with " + std::to_string(got.levels[l].active) + " nodes and " +
             std::to_string(got.levels[l].points) + " points, the nodes say " + std::to_string(levels[l].active) +
             " and " + std::to_string(levels[l].points);
  return "";
}

const bool registered = [] {
  benchmark::RegisterBenchmark("cpu_reference_build/float3", cpu_reference_build)
      ->Arg(cudalab::bench::kdtree::kPoints)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  auto* b = cudalab::bench::register_device_benchmark("build_large_nodes/float3", [](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    static cudalab::DeviceBuffer<float3> points(n);
    // Well above the about 176,800 nodes of uniform points (176,773 for those of cpu_reference_build).
    const std::size_t capacity = 2 * n / 16 + 1024;
    static cudalab::DeviceBuffer<Node> nodes(capacity);
    static cudalab::DeviceBuffer<int> small(capacity);
    static cudalab::DeviceBuffer<std::uint32_t> leaf(n);
    LargeNodeStage last;
    auto build = [&](cudaStream_t s, bool timed) {
      return cudalab::kdtree::build_large_nodes(points.data(), n, kThreshold, kMaxDepth, nodes.data(), capacity,
                                                small.data(), leaf.data(), s, timed);
    };
    cudalab::bench::Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) { cudalab::bench::kdtree::refill_uniform_points(points, s); };
    fresh.verify = [&] { return check_stage(points, nodes, small, leaf, last); };
    cudalab::bench::time_runs(state, [&](cudaStream_t s) { last = build(s, false); }, n * sizeof(float3), n, fresh);
    if (state.error_occurred()) return;
    const LargeNodeStage stage = build(nullptr, true);
    state.counters["nodes"] = static_cast<double>(stage.nodes);
    state.counters["levels"] = static_cast<double>(stage.levels.size());
    for (std::size_t l = 0; l < stage.levels.size(); ++l)
      state.counters["level_" + std::string(l < 10 ? "0" : "") + std::to_string(l) + "_ms"] = stage.levels[l].ms;
  });
  b->Arg(cudalab::bench::kdtree::kPoints)->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
