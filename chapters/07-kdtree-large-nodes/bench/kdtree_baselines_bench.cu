// Baselines of chapter 7, linked into every exercise's benchmark program so
// that each run measures them beside the exercise:
//   cub_reduce_box/float3/<n>    cub::DeviceReduce::Reduce of the points' boxes (the work of 7.1)
//   cub_scan_by_key/uint32/<n>   cub::DeviceScan::InclusiveSumByKey of a level's flags, keyed by
//                                node: one segmented scan (7.3 does two and 7.4 two, plus their kernels)
//   copy_bandwidth/uint32/<n>    device-to-device copy (the memory ceiling)
//   cpu_reference_build/float3/<n> the serial reference builder (reference::build, T = 32) on one
//                                host core (manual time from std::chrono): the baseline of 7.6, a host
//                                baseline, so 7.6's target is a speed-up over it (the issue's: 100)
#include <chrono>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

#include "kdtree_bench.cuh"

namespace cudalab::bench::kdtree {
namespace {

using cudalab::kdtree::Box;

struct PointToBox {
  __host__ __device__ Box operator()(const float3& p) const { return Box{p, p}; }
};

struct BoxUnion {
  __host__ __device__ Box operator()(const Box& a, const Box& b) const {
    return Box{{fminf(a.lo.x, b.lo.x), fminf(a.lo.y, b.lo.y), fminf(a.lo.z, b.lo.z)},
               {fmaxf(a.hi.x, b.hi.x), fmaxf(a.hi.y, b.hi.y), fmaxf(a.hi.z, b.hi.z)}};
  }
};

const bool registered = [] {
  register_level(
      "cub_reduce_box/float3",
      [](DeviceLevel& L, cudaStream_t s) {
        static DeviceBuffer<Box> out(1);
        const auto in = thrust::make_transform_iterator(L.points.data(), PointToBox{});
        const Box init = reference::empty_box();
        std::size_t bytes = 0;
        CUDALAB_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, in, out.data(), static_cast<int>(L.n), BoxUnion{},
                                                init, s));
        CUDALAB_CHECK(cub::DeviceReduce::Reduce(temp_storage(bytes), bytes, in, out.data(), static_cast<int>(L.n),
                                                BoxUnion{}, init, s));
      },
      sizeof(float3), {kPoints, kLargePoints});
  register_level(
      "cub_scan_by_key/uint32",
      [](DeviceLevel& L, cudaStream_t s) {
        std::size_t bytes = 0;
        CUDALAB_CHECK(cub::DeviceScan::InclusiveSumByKey(nullptr, bytes, L.owner.data(), L.flags32.data(),
                                                         L.scan_out.data(), static_cast<int>(L.n), ::cuda::std::equal_to<>{}, s));
        CUDALAB_CHECK(cub::DeviceScan::InclusiveSumByKey(temp_storage(bytes), bytes, L.owner.data(), L.flags32.data(),
                                                         L.scan_out.data(), static_cast<int>(L.n), ::cuda::std::equal_to<>{}, s));
      },
      3 * sizeof(std::uint32_t), {kPoints, kLargePoints});
  register_copy_bandwidth<std::uint32_t>("uint32", {kPoints, kLargePoints});
  auto* cpu = benchmark::RegisterBenchmark("cpu_reference_build/float3", [](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    static const std::vector<float3> points = uniform_points(n);
    std::size_t nodes = 0;
    for (auto _ : state) {
      const auto t0 = std::chrono::steady_clock::now();
      nodes = reference::build(points, 32, 64).nodes.size();
      state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
    state.counters["n"] = static_cast<double>(n);
    state.counters["nodes"] = static_cast<double>(nodes);
  });
  cpu->Arg(kPoints)->UseManualTime()->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::kdtree
