/// @file merge_tiles.cuh
/// @brief Where one block of a tiled merge of sorted runs works: the runs of
///        its pair and the slice of their merge's outputs it writes.
///
/// Given code of exercises 2.6 and 2.7, which merge each pair of adjacent
/// sorted runs of `run` keys with `tiles_per_pair` blocks of `kTile` outputs
/// each (the last of a pair may write fewer). The merge itself, and the
/// merge-path search that splits it between blocks, are the exercises'.
///
/// Source: Green, McColl and Bader, "GPU Merge Path", ICS 2012 (partitioning
/// the outputs into equal tiles); Baxter, moderngpu `merge_partition`.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace cudalab::sort::detail {

/// @brief The work of one merge block: pair `pair` = runs 2 pair and
///        2 pair + 1, the first run at `p0` with `a_count` keys, the second at
///        `p0 + a_count` with `b_count` keys, outputs [diag0, diag1) of the
///        pair's merge.
struct TileGeometry {
  std::size_t p0;
  unsigned a_count, b_count, diag0, diag1;
};

/// @brief The geometry of merge block `tile` (tiles numbered pair by pair).
/// @tparam kTile         outputs per block
/// @param tile           the block's tile, < pairs × tiles_per_pair
/// @param n              keys in all (the last run may be short or empty)
/// @param run            keys per sorted run, > 0
/// @param tiles_per_pair ⌈2 run / kTile⌉
/// @return the pair's two runs and the block's outputs; a run past n has
///         0 keys. Preconditions: 2 run ≤ 2^32 − 1 (counts fit unsigned).
/// Work O(1); no memory access.
template <unsigned kTile>
__device__ __forceinline__ TileGeometry tile_geometry(std::size_t tile, std::size_t n, std::size_t run,
                                                      std::size_t tiles_per_pair) {
  const std::size_t pair = tile / tiles_per_pair;
  TileGeometry g;
  g.p0 = 2 * run * pair;
  const std::size_t mid = g.p0 + run < n ? g.p0 + run : n;
  const std::size_t end = mid + run < n ? mid + run : n;
  g.a_count = static_cast<unsigned>(mid - g.p0);
  g.b_count = static_cast<unsigned>(end - mid);
  const unsigned total = g.a_count + g.b_count;
  g.diag0 = static_cast<unsigned>((tile - pair * tiles_per_pair) * kTile);
  g.diag1 = total - g.diag0 < kTile ? total : g.diag0 + kTile;
  return g;
}

}  // namespace cudalab::sort::detail
