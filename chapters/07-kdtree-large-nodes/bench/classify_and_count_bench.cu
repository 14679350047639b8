// Benchmark of cudalab::kdtree::classify_and_count (7.3) on one level of
// 2,000,000 and 2^24 uniform points in 4096 nodes, beside the chapter's
// baselines (a CUB segmented scan of the same level) in the same run.
#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "classify_and_count/float3",
      [](DeviceLevel& L, cudaStream_t s) {
        cudalab::kdtree::classify_and_count(L.points.data(), L.idx.data(), L.n, L.nodes.data(), L.active.data(), L.m,
                                            L.flags_out.data(), L.counts_out.data(), s);
      },
      sizeof(std::uint32_t) + sizeof(float3) + sizeof(std::uint8_t),
      {cudalab::bench::kdtree::kPoints, cudalab::bench::kdtree::kLargePoints});
  return true;
}();
}  // namespace
