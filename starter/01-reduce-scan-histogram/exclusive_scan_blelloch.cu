// Exercise 1.6: Blelloch's work-efficient exclusive scan of each tile
// (up-sweep, down-sweep), two elements per thread, shared memory padded
// against bank conflicts.
// Lesson: chapters/01-reduce-scan-histogram/lesson/scan.md, "1.6".
// Grade:  tools/grade 1.6      Hints: tools/grade --hint 1.6
#include <algorithm>
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"

namespace cudalab::scan {
namespace {

constexpr unsigned kLogBanks = 5;  // 32 banks of 4 bytes

// GPU Gems 3, chapter 39: one padding word after every 32 words, so that
// shared index i lives at i + conflict_free_offset(i).
__device__ __forceinline__ unsigned conflict_free_offset(unsigned i) { return i >> kLogBanks; }

// Block b scans the tile that starts at element (first_tile + b) * tile, with
// blockDim.x == tile / 2 threads. temp holds tile + tile / 32 words of
// dynamic shared memory (the tile plus its padding).
__global__ void blelloch_kernel(const int* in, std::size_t n, int* out, std::size_t first_tile) {
  extern __shared__ unsigned temp[];
  const unsigned tile = 2 * blockDim.x;
  const unsigned t = threadIdx.x;
  const std::size_t base = (first_tile + blockIdx.x) * static_cast<std::size_t>(tile);
  // TODO(1.6): load elements t and t + tile / 2 of the tile (0 past the end)
  // into temp at index i + conflict_free_offset(i); up-sweep (offset 1, 2,
  // 4, ...: temp[bi] += temp[ai] for ai = offset * (2t + 1) - 1,
  // bi = offset * (2t + 2) - 1, both padded); clear the last element;
  // down-sweep (swap-and-add, offsets back down); __syncthreads() before
  // every level; write both elements back where < n. Add in unsigned.
}

}  // namespace

void exclusive_scan_blelloch(const int* in, std::size_t n, int* out, std::size_t tile,
                             cudaStream_t stream) {
  if (!detail::start_tiled_scan("exclusive_scan_blelloch", in, n, out, tile, 2, max_tile_blelloch)) return;
  const std::size_t shared_bytes = (tile + (tile >> kLogBanks)) * sizeof(unsigned);
  detail::for_each_grid((n + tile - 1) / tile, [&](std::size_t first, unsigned blocks) {
    blelloch_kernel<<<blocks, static_cast<unsigned>(tile / 2), shared_bytes, stream>>>(in, n, out, first);
    CUDALAB_CHECK_LAUNCH();
  });
}

}  // namespace cudalab::scan
