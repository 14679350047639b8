// Baselines of chapter 2, linked into every sort exercise's benchmark program
// so that each run measures them beside the exercise (the host's std::sort,
// seconds per run, is registered by 2.7's program only):
//   cub_merge_sort_keys/int32/<n>                 cub::DeviceMergeSort::SortKeys (2.3, 2.7)
//   cub_merge_sort_pairs/int32_int32/<n>          cub::DeviceMergeSort::SortPairs (2.7, pairs)
//   cub_radix_sort_keys/int32/<n>                 cub::DeviceRadixSort::SortKeys (for the lesson)
//   cub_segmented_sort/int32/<2^24>/<segment>     cub::DeviceSegmentedSort::SortKeys over equal
//                                                 segments (2.1, 2.2); offsets built once, untimed
//   copy_bandwidth/int32/<n>                      device-to-device copy (the memory ceiling; the
//                                                 baseline of the merge passes 2.4 to 2.6)
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sort_bench.cuh"

namespace cudalab::bench::sort {
namespace {

struct Less {
  __host__ __device__ bool operator()(int a, int b) const { return a < b; }
};

// DeviceMergeSort sorts in place: copy the input to the output first (part
// of the timed run, as our sorts read `in` and write `out`).
void cub_merge_sort_keys(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemcpyAsync(out, in, n * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  std::size_t bytes = 0;
  const auto count = static_cast<std::int64_t>(n);
  CUDALAB_CHECK(cub::DeviceMergeSort::SortKeys(nullptr, bytes, out, count, Less{}, stream));
  CUDALAB_CHECK(cub::DeviceMergeSort::SortKeys(temp_storage(bytes), bytes, out, count, Less{}, stream));
}

void cub_merge_sort_pairs(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                          int* values_out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemcpyAsync(keys_out, keys_in, n * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  CUDALAB_CHECK(cudaMemcpyAsync(values_out, values_in, n * sizeof(int), cudaMemcpyDeviceToDevice, stream));
  std::size_t bytes = 0;
  const auto count = static_cast<std::int64_t>(n);
  CUDALAB_CHECK(cub::DeviceMergeSort::SortPairs(nullptr, bytes, keys_out, values_out, count, Less{}, stream));
  CUDALAB_CHECK(cub::DeviceMergeSort::SortPairs(temp_storage(bytes), bytes, keys_out, values_out, count, Less{},
                                                stream));
}

void cub_radix_sort_keys(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  std::size_t bytes = 0;
  const auto count = static_cast<std::int64_t>(n);
  CUDALAB_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, in, out, count, 0, 32, stream));
  CUDALAB_CHECK(cub::DeviceRadixSort::SortKeys(temp_storage(bytes), bytes, in, out, count, 0, 32, stream));
}

__global__ void segment_offsets_kernel(int* offsets, std::size_t count, std::size_t n, std::size_t segment) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i <= count) offsets[i] = static_cast<int>(i * segment < n ? i * segment : n);
}

// Offsets of the equal segments of `segment` keys over n keys, built once per (n, segment).
const DeviceBuffer<int>& segment_offsets(std::size_t n, std::size_t segment) {
  static std::map<std::pair<std::size_t, std::size_t>, DeviceBuffer<int>> cache;
  auto it = cache.find({n, segment});
  if (it == cache.end()) {
    const std::size_t count = (n + segment - 1) / segment;
    DeviceBuffer<int> offsets(count + 1);
    segment_offsets_kernel<<<static_cast<unsigned>((count + 256) / 256), 256>>>(offsets.data(), count, n, segment);
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaDeviceSynchronize());
    it = cache.emplace(std::make_pair(n, segment), std::move(offsets)).first;
  }
  return it->second;
}

void cub_segmented_sort(const int* in, std::size_t n, int* out, std::size_t segment, cudaStream_t stream) {
  const int* offsets = segment_offsets(n, segment).data();  // cached: built before the first timed run
  const auto segments = static_cast<std::int64_t>((n + segment - 1) / segment);
  const auto count = static_cast<std::int64_t>(n);
  std::size_t bytes = 0;
  CUDALAB_CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, bytes, in, out, count, segments, offsets,
                                                   offsets + 1, stream));
  CUDALAB_CHECK(cub::DeviceSegmentedSort::SortKeys(temp_storage(bytes), bytes, in, out, count, segments, offsets,
                                                   offsets + 1, stream));
}

const bool registered = [] {
  register_sort("cub_merge_sort_keys", cub_merge_sort_keys);
  register_pairs("cub_merge_sort_pairs", cub_merge_sort_pairs);
  register_sort("cub_radix_sort_keys", cub_radix_sort_keys);
  register_segments("cub_segmented_sort", cub_segmented_sort, ::cudalab::sort::max_segment_bitonic);
  register_copy_bandwidth<int>("int32", kSizes);
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::sort
