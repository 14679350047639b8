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
  // BEGIN SOLUTION
  // Each thread loads elements t and t + tile / 2: coalesced, and 0 (the
  // identity) past the end of the array.
  const unsigned a = t;
  const unsigned b = t + tile / 2;
  temp[a + conflict_free_offset(a)] = base + a < n ? static_cast<unsigned>(in[base + a]) : 0u;
  temp[b + conflict_free_offset(b)] = base + b < n ? static_cast<unsigned>(in[base + b]) : 0u;

  // Up-sweep (reduce): after the level with d active threads, the node at
  // index offset * (2k + 2) - 1 holds the sum of its 2 * offset leaves.
  unsigned offset = 1;
  for (unsigned d = tile / 2; d > 0; d /= 2) {
    __syncthreads();
    if (t < d) {
      unsigned ai = offset * (2 * t + 1) - 1;
      unsigned bi = offset * (2 * t + 2) - 1;
      ai += conflict_free_offset(ai);
      bi += conflict_free_offset(bi);
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }

  // Clear the root: the exclusive prefix of the whole tile is 0.
  if (t == 0) temp[tile - 1 + conflict_free_offset(tile - 1)] = 0;

  // Down-sweep: each node passes its prefix to its left child and
  // prefix + left child's sum to its right child.
  for (unsigned d = 1; d < tile; d *= 2) {
    offset /= 2;
    __syncthreads();
    if (t < d) {
      unsigned ai = offset * (2 * t + 1) - 1;
      unsigned bi = offset * (2 * t + 2) - 1;
      ai += conflict_free_offset(ai);
      bi += conflict_free_offset(bi);
      const unsigned left = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += left;
    }
  }
  __syncthreads();
  if (base + a < n) out[base + a] = static_cast<int>(temp[a + conflict_free_offset(a)]);
  if (base + b < n) out[base + b] = static_cast<int>(temp[b + conflict_free_offset(b)]);
  // STARTER:
  // // TODO(1.6): load elements t and t + tile / 2 of the tile (0 past the end)
  // // into temp at index i + conflict_free_offset(i); up-sweep (offset 1, 2,
  // // 4, ...: temp[bi] += temp[ai] for ai = offset * (2t + 1) - 1,
  // // bi = offset * (2t + 2) - 1, both padded); clear the last element;
  // // down-sweep (swap-and-add, offsets back down); __syncthreads() before
  // // every level; write both elements back where < n. Add in unsigned.
  // END SOLUTION
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
