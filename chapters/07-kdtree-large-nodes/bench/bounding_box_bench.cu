// Benchmark of cudalab::kdtree::bounding_box (7.1) on 2,000,000 and 2^24
// uniform points, beside the chapter's baselines in the same run.
#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "bounding_box/float3",
      [](DeviceLevel& L, cudaStream_t s) {
        static cudalab::DeviceBuffer<cudalab::kdtree::Box> box(1);  // allocated at the first run, not at start-up
        static cudalab::DeviceBuffer<std::uint64_t> bad(1);
        cudalab::kdtree::bounding_box(L.points.data(), L.n, box.data(), bad.data(), s);
      },
      sizeof(float3), {cudalab::bench::kdtree::kPoints, cudalab::bench::kdtree::kLargePoints});
  return true;
}();
}  // namespace
