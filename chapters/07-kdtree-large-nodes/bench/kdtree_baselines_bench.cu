// Baselines of chapter 7, linked into every exercise's benchmark program
// so that each run measures them beside the exercise:
//   cub_reduce_box/float3/<n>    cub::DeviceReduce::Reduce of the points' boxes (the work of 7.1); new
//                                uniform points before every call, the last box checked (Thrust)
//   cub_scan_by_key/uint32/<n>   cub::DeviceScan::InclusiveSumByKey of a level's flags, keyed by
//                                node: one segmented scan (7.3 does two and 7.4 two, plus their kernels);
//                                a new layout of the level and new flags before every call, the last
//                                scan checked
//   copy_bandwidth/uint32/<n>    device-to-device copy (the memory ceiling)
// 7.6's baseline, the CPU reference builder (cpu_reference_build/float3/<n>), is registered by 7.6's
// program alone (build_large_nodes_bench.cu): it takes about a second per run on one host core.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <string>

#include "kdtree_bench.cuh"

namespace cudalab::bench::kdtree {
namespace {

struct PointToBox {
  __host__ __device__ Box operator()(const float3& p) const { return Box{p, p}; }
};

// True at i when out[i] is not the inclusive sum by key: flags[i] plus out[i − 1] inside a key's run.
struct WrongScanByKey {
  const std::uint32_t* keys;
  const std::uint32_t* flags;
  const std::uint32_t* out;
  __host__ __device__ bool operator()(std::size_t i) const {
    const std::uint32_t before = i > 0 && keys[i - 1] == keys[i] ? out[i - 1] : 0u;
    return out[i] != before + flags[i];
  }
};

DeviceBuffer<Box>& reduced_box() {
  static DeviceBuffer<Box> out(1);  // allocated at the first run, not at start-up
  return out;
}

const bool registered = [] {
  register_level(
      "cub_reduce_box/float3",
      [](DeviceLevel& L, cudaStream_t s) {
        Box* out = reduced_box().data();
        const auto in = thrust::make_transform_iterator(L.points.data(), PointToBox{});
        const Box init = reference::empty_box();
        std::size_t bytes = 0;
        CUDALAB_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, in, out, static_cast<int>(L.n), BoxUnion{}, init, s));
        CUDALAB_CHECK(cub::DeviceReduce::Reduce(temp_storage(bytes), bytes, in, out, static_cast<int>(L.n),
                                                BoxUnion{}, init, s));
      },
      sizeof(float3), {kPoints, kLargePoints},
      [](DeviceLevel& L) {
        Fresh fresh;
        fresh.refresh = [&L](cudaStream_t s) { refill_uniform_points(sized(L.points, L.n), s); };
        fresh.verify = [&L] { return check_bounding_box(L.points.data(), L.n, reduced_box().data(), nullptr); };
        return fresh;
      });
  register_level(
      "cub_scan_by_key/uint32",
      [](DeviceLevel& L, cudaStream_t s) {
        std::size_t bytes = 0;
        CUDALAB_CHECK(cub::DeviceScan::InclusiveSumByKey(nullptr, bytes, L.owner.data(), L.flags32.data(),
                                                         L.scan_out.data(), static_cast<int>(L.n),
                                                         ::cuda::std::equal_to<>{}, s));
        CUDALAB_CHECK(cub::DeviceScan::InclusiveSumByKey(temp_storage(bytes), bytes, L.owner.data(), L.flags32.data(),
                                                         L.scan_out.data(), static_cast<int>(L.n),
                                                         ::cuda::std::equal_to<>{}, s));
      },
      3 * sizeof(std::uint32_t), {kPoints, kLargePoints},
      [](DeviceLevel& L) {
        Fresh fresh;
        fresh.refresh = [&L](cudaStream_t s) {
          refresh_level(L, s, false);
          refill_uniform_ints(sized(L.flags32, L.n), std::uint32_t{0}, std::uint32_t{1}, s);
        };
        fresh.verify = [&L]() -> std::string {
          const thrust::counting_iterator<std::size_t> first(0);
          const auto wrong = thrust::count_if(thrust::device, first, first + L.n,
                                              WrongScanByKey{L.owner.data(), L.flags32.data(), L.scan_out.data()});
          return wrong == 0 ? "" : std::to_string(wrong) + " sums by key wrong";
        };
        return fresh;
      });
  register_copy_bandwidth<std::uint32_t>("uint32", {kPoints, kLargePoints});
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::kdtree
