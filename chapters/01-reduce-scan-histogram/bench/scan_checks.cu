// The Thrust checks of the scan benchmarks (scan_bench.cuh): check_scan and
// the segments it compares by, compiled once per program with the group's
// baselines instead of in every exercise's benchmark object.
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/mismatch.h>
#include <thrust/scan.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "scan_bench.cuh"

namespace cudalab::bench::scan {
namespace {
// The tile (or segment) of element i.
struct TileOf {
  std::size_t tile;
  __host__ __device__ std::size_t operator()(std::size_t i) const { return i / tile; }
};
// int sums wrap as unsigned ones do: the reference computes in unsigned.
struct AsUnsigned {
  __host__ __device__ unsigned operator()(int x) const { return static_cast<unsigned>(x); }
};
}  // namespace

std::string check_scan(const int* in, const int* out, std::size_t n, ScanKind kind, const std::size_t* segment_of) {
  if (n == 0) return "";
  static std::map<std::size_t, DeviceBuffer<unsigned>> scratch;
  DeviceBuffer<unsigned>& want = scratch.try_emplace(n, n).first->second;
  const auto values = thrust::make_transform_iterator(in, AsUnsigned{});
  const auto tiles =
      thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0), TileOf{kind.tile == 0 ? n : kind.tile});
  if (segment_of != nullptr) {
    if (kind.inclusive) thrust::inclusive_scan_by_key(thrust::device, segment_of, segment_of + n, values, want.data());
    else thrust::exclusive_scan_by_key(thrust::device, segment_of, segment_of + n, values, want.data(), 0u);
  } else if (kind.inclusive) {
    thrust::inclusive_scan_by_key(thrust::device, tiles, tiles + n, values, want.data());
  } else {
    thrust::exclusive_scan_by_key(thrust::device, tiles, tiles + n, values, want.data(), 0u);
  }
  const auto got = thrust::make_transform_iterator(out, AsUnsigned{});
  const auto diff = thrust::mismatch(thrust::device, got, got + n, want.data());
  if (diff.second == want.data() + n) return "";
  const auto at = static_cast<std::size_t>(diff.second - want.data());
  return "element " + std::to_string(at) + " is not the scan of the input";
}

const DeviceBuffer<std::size_t>& segment_ids(std::size_t n, const Segments& pattern) {
  static std::map<std::pair<std::size_t, std::string>, DeviceBuffer<std::size_t>> cache;
  auto key = std::make_pair(n, std::string(pattern.name));
  auto it = cache.find(key);
  if (it == cache.end()) {
    DeviceBuffer<std::size_t> ids(n);
    const std::uint8_t* flags = head_flags(n, pattern).data();
    thrust::inclusive_scan(thrust::device, flags, flags + n, ids.data(), thrust::plus<std::size_t>());
    it = cache.emplace(key, std::move(ids)).first;
  }
  return it->second;
}

}  // namespace cudalab::bench::scan
