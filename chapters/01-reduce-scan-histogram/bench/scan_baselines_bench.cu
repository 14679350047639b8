// Baselines of chapter 1's scans, linked into every scan exercise's benchmark
// program so that each run measures them beside the exercise:
//   cub_exclusive_sum/int32/<n>          cub::DeviceScan::ExclusiveSum (1.7, 1.8)
//   cub_inclusive_sum/int32/<n>          cub::DeviceScan::InclusiveSum
//   cub_block_scan_inclusive/int32/<n>   cub::BlockScan, one block per tile of 1024 (1.5)
//   cub_block_scan_exclusive/int32/<n>   cub::BlockScan, one block per tile of 2048 (1.6)
//   cub_inclusive_sum_by_key/int32/<n>/<pattern>, cub_exclusive_sum_by_key/...
//                                        cub::DeviceScan::{Inclusive,Exclusive}SumByKey with
//                                        int32 segment keys (1.9); the keys are built once,
//                                        outside the timed region
//   copy_bandwidth/int32/<n>             device-to-device copy (the memory ceiling)
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "scan_bench.cuh"

namespace cudalab::bench::scan {
namespace {

void cub_exclusive_sum(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  std::size_t bytes = 0;
  CUDALAB_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, static_cast<std::int64_t>(n), stream));
  CUDALAB_CHECK(cub::DeviceScan::ExclusiveSum(temp_storage(bytes), bytes, in, out,
                                              static_cast<std::int64_t>(n), stream));
}

void cub_inclusive_sum(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  std::size_t bytes = 0;
  CUDALAB_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, static_cast<std::int64_t>(n), stream));
  CUDALAB_CHECK(cub::DeviceScan::InclusiveSum(temp_storage(bytes), bytes, in, out,
                                              static_cast<std::int64_t>(n), stream));
}

// The library's block-wide scan over independent tiles: 256 threads, kItems
// per thread, warp-transposed (coalesced) loads and stores.
template <int kItems, bool kInclusive>
__global__ void __launch_bounds__(256) block_scan_kernel(const int* in, std::size_t n, int* out) {
  using Load = cub::BlockLoad<int, 256, kItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Store = cub::BlockStore<int, 256, kItems, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using Scan = cub::BlockScan<int, 256>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Scan::TempStorage scan;
  } temp;
  constexpr std::size_t kTile = 256 * kItems;
  const std::size_t base = blockIdx.x * kTile;
  const int valid = static_cast<int>(n - base < kTile ? n - base : kTile);
  int items[kItems];
  Load(temp.load).Load(in + base, items, valid, 0);
  __syncthreads();
  if constexpr (kInclusive) {
    Scan(temp.scan).InclusiveSum(items, items);
  } else {
    Scan(temp.scan).ExclusiveSum(items, items);
  }
  __syncthreads();
  Store(temp.store).Store(out + base, items, valid);
}

template <int kItems, bool kInclusive>
void cub_block_scan(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  const std::size_t tiles = (n + 256 * kItems - 1) / (256 * kItems);
  block_scan_kernel<kItems, kInclusive><<<static_cast<unsigned>(tiles), 256, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

// int32 segment keys for the by-key scans: key[i] = the number of heads in
// [0, i] (an inclusive scan of the flags), built once per (n, pattern).
template <class T>
__global__ void widen_kernel(const std::uint8_t* flags, std::size_t n, T* keys) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    keys[i] = static_cast<T>(flags[i] != 0);
}

const DeviceBuffer<int>& segment_keys(std::size_t n, const Segments& pattern) {
  static std::map<std::pair<std::size_t, std::string>, DeviceBuffer<int>> cache;
  const auto key = std::make_pair(n, std::string(pattern.name));
  auto it = cache.find(key);
  if (it == cache.end()) {
    DeviceBuffer<int> keys(n);
    widen_kernel<int><<<4 * sm_count(), 256>>>(head_flags(n, pattern).data(), n, keys.data());
    CUDALAB_CHECK_LAUNCH();
    std::size_t bytes = 0;
    CUDALAB_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, keys.data(), keys.data(),
                                                static_cast<std::int64_t>(n)));
    CUDALAB_CHECK(cub::DeviceScan::InclusiveSum(temp_storage(bytes), bytes, keys.data(), keys.data(),
                                                static_cast<std::int64_t>(n)));
    CUDALAB_CHECK(cudaDeviceSynchronize());
    it = cache.emplace(key, std::move(keys)).first;
  }
  return it->second;
}

template <bool kInclusive>
void cub_sum_by_key(const int* in, const std::uint8_t*, std::size_t n, int* out, const Segments& pattern,
                    cudaStream_t stream) {
  const int* keys = segment_keys(n, pattern).data();  // cached: built before the first timed run
  std::size_t bytes = 0;
  const auto count = static_cast<std::int64_t>(n);
  if constexpr (kInclusive) {
    CUDALAB_CHECK(cub::DeviceScan::InclusiveSumByKey(nullptr, bytes, keys, in, out, count,
                                                     cuda::std::equal_to<>{}, stream));
    CUDALAB_CHECK(cub::DeviceScan::InclusiveSumByKey(temp_storage(bytes), bytes, keys, in, out, count,
                                                     cuda::std::equal_to<>{}, stream));
  } else {
    CUDALAB_CHECK(cub::DeviceScan::ExclusiveSumByKey(nullptr, bytes, keys, in, out, count,
                                                     cuda::std::equal_to<>{}, stream));
    CUDALAB_CHECK(cub::DeviceScan::ExclusiveSumByKey(temp_storage(bytes), bytes, keys, in, out, count,
                                                     cuda::std::equal_to<>{}, stream));
  }
}

const bool registered = [] {
  register_scan("cub_exclusive_sum", cub_exclusive_sum, {false, 0});
  register_scan("cub_inclusive_sum", cub_inclusive_sum, {true, 0});
  register_scan("cub_block_scan_inclusive", cub_block_scan<kHillisSteeleTile / 256, true>, {true, kHillisSteeleTile});
  register_scan("cub_block_scan_exclusive", cub_block_scan<kBlellochTile / 256, false>, {false, kBlellochTile});
  // Keys (4 bytes), values (4 bytes) read, 4 bytes written per element.
  register_segmented("cub_inclusive_sum_by_key", "", 12, true, cub_sum_by_key<true>);
  register_segmented("cub_exclusive_sum_by_key", "", 12, false, cub_sum_by_key<false>);
  register_copy_bandwidth<int>("int32", kSizes);
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::scan
