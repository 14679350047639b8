// Baselines of chapter 4's filters, linked into every filter exercise's
// benchmark program so that each run measures them beside the exercise:
//   cub_select_if/int32/<pct>/<n>        cub::DeviceSelect::If with the same predicate (the target)
//   copy_bandwidth/int32/<n>             device-to-device copy (the memory ceiling)
//   filter_unaggregated_atomic/int32/50/<n>
//                                        4.1 with an increment the compiler cannot see (read from
//                                        memory per thread, always 1): one hardware atomic per selected
//                                        element, what 4.1's source says; 2^20 and 2^24 only
//   cg_tile_aggregation/int32/50/tile<G>/<n>
//                                        the aggregation of 4.5 over cooperative_groups tiles of
//                                        G = 4, 8, 16, 32 threads (one atomic per tile per 8 G
//                                        elements): the lesson's comparison of tile sizes
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cub/device/device_select.cuh>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "filter_bench.cuh"

namespace cudalab::bench::filter {
namespace {

namespace cg = cooperative_groups;
using cudalab::filter::LessThan;

void cub_select_if(const int* in, std::size_t n, LessThan<int> pred, int* out, std::size_t,
                   unsigned long long* selected, cudaStream_t stream) {
  std::size_t bytes = 0;
  CUDALAB_CHECK(cub::DeviceSelect::If(nullptr, bytes, in, out, selected, static_cast<std::int64_t>(n), pred, stream));
  CUDALAB_CHECK(cub::DeviceSelect::If(temp_storage(bytes), bytes, in, out, selected, static_cast<std::int64_t>(n),
                                      pred, stream));
}

// 4.1 with an increment read from memory: nvcc cannot aggregate it.
__global__ void unaggregated_kernel(const int* __restrict__ in, std::size_t n, LessThan<int> pred,
                                    int* __restrict__ out, std::size_t capacity, unsigned long long* count,
                                    const unsigned long long* one) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int x = in[i];
  if (pred(x)) {
    // one[threadIdx.x] is 1 in every thread, but the compiler cannot prove the
    // increment warp-uniform, so it cannot aggregate the warp's atomics into one
    // (a single *one, uniform, was aggregated: it ran exactly as fast as 4.1).
    const unsigned long long slot = atomicAdd(count, one[threadIdx.x]);
    if (slot < capacity) out[slot] = x;
  }
}

void unaggregated(const int* in, std::size_t n, LessThan<int> pred, int* out, std::size_t capacity,
                  unsigned long long* selected, cudaStream_t stream) {
  static const DeviceBuffer<unsigned long long> one(std::vector<unsigned long long>(256, 1));
  CUDALAB_CHECK(cudaMemsetAsync(selected, 0, sizeof(unsigned long long), stream));
  unaggregated_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(in, n, pred, out, capacity,
                                                                                   selected, one.data());
  CUDALAB_CHECK_LAUNCH();
}

// The aggregation of 4.5 over tiles of G threads: each tile takes 8 G
// consecutive elements (8 rounds of G), scans and reduces its threads'
// counts over the tile, and its first thread does the one atomic.
template <unsigned G>
__global__ void __launch_bounds__(256)
    tile_kernel(const int* __restrict__ in, std::size_t n, LessThan<int> pred, int* __restrict__ out,
                std::size_t capacity, unsigned long long* count) {
  constexpr int kRounds = 8;
  const cg::thread_block_tile<G> tile = cg::tiled_partition<G>(cg::this_thread_block());
  const std::size_t chunk =
      (blockIdx.x * static_cast<std::size_t>(256 / G) + tile.meta_group_rank()) * (static_cast<std::size_t>(G) * kRounds);
  int x[kRounds];
  bool sel[kRounds];
  unsigned mine = 0;
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const std::size_t i = chunk + static_cast<std::size_t>(r) * G + tile.thread_rank();
    x[r] = i < n ? in[i] : 0;
    sel[r] = i < n && pred(x[r]);
    mine += sel[r] ? 1u : 0u;
  }
  const unsigned offset = cg::exclusive_scan(tile, mine);
  const unsigned total = cg::reduce(tile, mine, cg::plus<unsigned>());
  if (total == 0) return;
  unsigned long long base = 0;
  if (tile.thread_rank() == 0) base = atomicAdd(count, static_cast<unsigned long long>(total));
  unsigned long long slot = tile.shfl(base, 0) + offset;
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    if (!sel[r]) continue;
    if (slot < capacity) out[slot] = x[r];
    ++slot;
  }
}

template <unsigned G>
void tile_aggregation(const int* in, std::size_t n, LessThan<int> pred, int* out, std::size_t capacity,
                      unsigned long long* selected, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(selected, 0, sizeof(unsigned long long), stream));
  constexpr std::size_t kPerBlock = 256 * 8;
  tile_kernel<G><<<static_cast<unsigned>((n + kPerBlock - 1) / kPerBlock), 256, 0, stream>>>(in, n, pred, out,
                                                                                              capacity, selected);
  CUDALAB_CHECK_LAUNCH();
}

const bool registered = [] {
  register_filter("cub_select_if", cub_select_if);
  register_copy_bandwidth<int>("int32", kSizes);
  register_filter("filter_unaggregated_atomic", unaggregated, "", {50}, {1 << 20, 1 << 24});
  register_filter("cg_tile_aggregation", tile_aggregation<4>, "tile4", {50}, {1 << 24, 1 << 28});
  register_filter("cg_tile_aggregation", tile_aggregation<8>, "tile8", {50}, {1 << 24, 1 << 28});
  register_filter("cg_tile_aggregation", tile_aggregation<16>, "tile16", {50}, {1 << 24, 1 << 28});
  register_filter("cg_tile_aggregation", tile_aggregation<32>, "tile32", {50}, {1 << 24, 1 << 28});
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::filter
