// Benchmark of cudalab::kdtree::select_splits (7.2) on the 4096 nodes of a
// level (a launch-latency-bound kernel: the figure to watch is its share of
// a level), beside the chapter's baselines in the same run. The size in the
// name, as in the other benchmarks of the chapter, is the level's point count
// (2,000,000 points in 4096 nodes); items/s counts points.
#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "select_splits/node",
      [](DeviceLevel& L, cudaStream_t s) { cudalab::kdtree::select_splits(L.nodes.data(), L.active.data(), L.m, s); },
      0, {cudalab::bench::kdtree::kPoints});
  return true;
}();
}  // namespace
