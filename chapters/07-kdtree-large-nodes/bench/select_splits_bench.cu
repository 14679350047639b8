// Benchmark of cudalab::kdtree::select_splits (7.2) on the 4096 nodes of a
// level (a launch-latency-bound kernel: the figure to watch is its share of
// a level), beside the chapter's baselines in the same run. The size in the
// name, as in the other benchmarks of the chapter, is the level's point count
// (2,000,000 points in 4096 nodes); items/s counts points. Every call gets
// 4096 new random cells (axis and split poisoned); the last call's nodes are
// checked against the reference rule (reference::select_split), and nothing
// but axis and split may change.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
using cudalab::kdtree::Node;

// New cells for every node of the level: counts and begins of the level, depth 12, axis 7 and split NaN.
void refresh_cells(DeviceLevel& L, cudaStream_t s) {
  std::mt19937_64 rng(cudalab::bench::next_seed());
  L.host_nodes = L.cells;
  for (Node& v : L.host_nodes) {
    v.box = cudalab::bench::kdtree::random_cell(rng);
    v.axis = 7;
    v.split = NAN;
  }
  Node* nodes = cudalab::bench::kdtree::sized(L.nodes, L.m).data();
  CUDALAB_CHECK(cudaMemcpyAsync(nodes, L.host_nodes.data(), L.m * sizeof(Node), cudaMemcpyHostToDevice, s));
}

// "" when every active node of the last call has the reference's axis and split and is otherwise unchanged.
std::string check_splits(const DeviceLevel& L) {
  const std::vector<Node> got = L.nodes.download();
  for (std::size_t k = 0; k < L.m; ++k) {
    Node want = L.host_nodes[k];
    const auto [axis, split] = cudalab::reference::select_split(want.box);
    want.axis = axis;
    want.split = split;
    if (std::memcmp(&got[k], &want, sizeof(Node)) != 0)
      return "node " + std::to_string(k) + " of cell " + cudalab::bench::kdtree::show(want.box) + ": axis " +
             std::to_string(got[k].axis) + ", split " + std::to_string(got[k].split) + "; expected axis " +
             std::to_string(axis) + ", split " + std::to_string(split) + " and no other field changed";
  }
  return "";
}

const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "select_splits/node",
      [](DeviceLevel& L, cudaStream_t s) { cudalab::kdtree::select_splits(L.nodes.data(), L.active.data(), L.m, s); },
      0, {cudalab::bench::kdtree::kPoints},
      [](DeviceLevel& L) {
        cudalab::bench::Fresh fresh;
        fresh.refresh = [&L](cudaStream_t s) { refresh_cells(L, s); };
        fresh.verify = [&L] { return check_splits(L); };
        return fresh;
      });
  return true;
}();
}  // namespace
