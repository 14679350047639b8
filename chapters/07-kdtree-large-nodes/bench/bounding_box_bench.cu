// Benchmark of cudalab::kdtree::bounding_box (7.1) on 2,000,000 and 2^24
// uniform points, beside the chapter's baselines in the same run. Every
// call gets new uniform points (every other call on average with one
// non-finite coordinate at a random index); the last call's box and
// first_bad are checked against Thrust reductions of its points.
#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;

// The outputs, allocated at the first run, not at start-up.
cudalab::DeviceBuffer<cudalab::kdtree::Box>& box() {
  static cudalab::DeviceBuffer<cudalab::kdtree::Box> b(1);
  return b;
}
cudalab::DeviceBuffer<std::uint64_t>& bad() {
  static cudalab::DeviceBuffer<std::uint64_t> b(1);
  return b;
}

const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "bounding_box/float3",
      [](DeviceLevel& L, cudaStream_t s) {
        cudalab::kdtree::bounding_box(L.points.data(), L.n, box().data(), bad().data(), s);
      },
      sizeof(float3), {cudalab::bench::kdtree::kPoints, cudalab::bench::kdtree::kLargePoints},
      [](DeviceLevel& L) {
        cudalab::bench::Fresh fresh;
        fresh.refresh = [&L](cudaStream_t s) {
          cudalab::bench::kdtree::refill_uniform_points(cudalab::bench::kdtree::sized(L.points, L.n), s, true);
        };
        fresh.verify = [&L] {
          return cudalab::bench::kdtree::check_bounding_box(L.points.data(), L.n, box().data(), bad().data());
        };
        return fresh;
      });
  return true;
}();
}  // namespace
