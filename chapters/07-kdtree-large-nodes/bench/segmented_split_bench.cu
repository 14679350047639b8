// Benchmark of cudalab::kdtree::segmented_split (7.4) on one level of
// 2,000,000 and 2^24 uniform points in 4096 nodes, beside the chapter's
// baselines (a CUB segmented scan of the same level) in the same run.
#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "segmented_split/uint32",
      [](DeviceLevel& L, cudaStream_t s) {
        cudalab::kdtree::segmented_split(L.idx.data(), L.flags.data(), L.n, L.nodes.data(), L.active.data(), L.m,
                                         L.idx_out.data(), s);
      },
      2 * sizeof(std::uint32_t) + sizeof(std::uint8_t),
      {cudalab::bench::kdtree::kPoints, cudalab::bench::kdtree::kLargePoints});
  return true;
}();
}  // namespace
