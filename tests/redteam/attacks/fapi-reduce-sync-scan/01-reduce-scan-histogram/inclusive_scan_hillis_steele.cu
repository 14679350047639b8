// RED TEAM: 1.5 forbids warp shuffles, which would replace the shared-memory steps: each warp's
// RED TEAM: scan is made with 32 warp-wide reductions instead (__reduce_add_sync with the masks of
// RED TEAM: lanes 0..k; REDUX in the SASS, no SHFL), then the warps' totals are added through
// RED TEAM: shared memory. A correct scan, not the double-buffered Hillis-Steele steps.
// Exercise 1.5: Hillis-Steele inclusive scan of each tile, one block per
// tile, one element per thread, double buffered in shared memory.
// Lesson: chapters/01-reduce-scan-histogram/lesson/scan.md, "1.5".
// Grade:  tools/grade 1.5      Hints: tools/grade --hint 1.5
#include <algorithm>
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"

namespace cudalab::scan {
namespace {

// Block b scans the tile that starts at element (first_tile + b) * tile, with
// blockDim.x == tile threads. buf holds 2 * tile words of dynamic shared memory:
// the two buffers that the steps alternate between.
__global__ void hillis_steele_kernel(const int* in, std::size_t n, int* out,
                                     std::size_t first_tile) {
  extern __shared__ unsigned buf[];
  const unsigned tile = blockDim.x;
  const unsigned t = threadIdx.x;
  const std::size_t i = (first_tile + blockIdx.x) * static_cast<std::size_t>(tile) + t;
  // RED TEAM: the scan of each warp without a shuffle: lane k takes the sum of lanes
  // 0..k, one warp-wide reduction (__reduce_add_sync, REDUX) per lane with the mask of
  // lanes 0..k; then each thread adds the totals of the warps before its own, which the
  // last lane of each warp left in buf. Sums in unsigned (they wrap modulo 2^32).
  const unsigned lane = t & 31u;
  const unsigned warp_base = t - lane;
  const unsigned width = tile - warp_base < 32u ? tile - warp_base : 32u;
  const unsigned v = i < n ? static_cast<unsigned>(in[i]) : 0u;
  unsigned mine = v;
  for (unsigned k = 0; k < width; ++k) {
    if (lane <= k) {
      const unsigned r = __reduce_add_sync(k == 31u ? 0xffffffffu : (2u << k) - 1u, v);
      if (lane == k) mine = r;
    }
  }
  buf[t] = mine;
  __syncthreads();
  unsigned before = 0;
  for (unsigned w = 0; w < warp_base; w += 32u) before += buf[w + 31u];
  if (i < n) out[i] = static_cast<int>(mine + before);
}

}  // namespace

void inclusive_scan_hillis_steele(const int* in, std::size_t n, int* out, std::size_t tile,
                                  cudaStream_t stream) {
  detail::check_scan_arguments("inclusive_scan_hillis_steele", in, n, out);
  detail::check_tile("inclusive_scan_hillis_steele", tile, 1, max_tile_hillis_steele);
  if (n == 0) return;
  // One block of `tile` threads per tile; a grid has at most 2^31 - 1 blocks,
  // so tiny tiles of a huge array take several launches.
  const std::size_t tiles = (n + tile - 1) / tile;
  constexpr std::size_t kMaxGrid = 0x7fffffff;
  const std::size_t shared_bytes = 2 * tile * sizeof(unsigned);
  for (std::size_t first = 0; first < tiles; first += kMaxGrid) {
    const auto blocks = static_cast<unsigned>(std::min(kMaxGrid, tiles - first));
    hillis_steele_kernel<<<blocks, static_cast<unsigned>(tile), shared_bytes, stream>>>(in, n, out,
                                                                                       first);
    CUDALAB_CHECK_LAUNCH();
  }
}

}  // namespace cudalab::scan
