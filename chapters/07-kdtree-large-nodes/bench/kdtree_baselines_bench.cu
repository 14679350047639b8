// Baselines of chapter 7, linked into every exercise's benchmark program so
// that each run measures them beside the exercise:
//   cub_reduce_box/float3/<n>    cub::DeviceReduce::Reduce of the points' boxes (the work of 7.1)
//   cub_scan_by_key/uint32/<n>   cub::DeviceScan::InclusiveSumByKey of a level's flags, keyed by
//                                node: one segmented scan (7.3 does two and 7.4 two, plus their kernels)
//   copy_bandwidth/uint32/<n>    device-to-device copy (the memory ceiling)
// 7.6's baseline, the CPU reference builder (cpu_reference_build/float3/<n>), is registered by 7.6's
// program alone (build_large_nodes_bench.cu): it takes about a second per run on one host core.
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
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::kdtree
