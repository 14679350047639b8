/// @file decoupled_lookback.cuh
/// @brief Exercise 1.8's single-pass machinery as device code: the tile id
///        from an atomic counter and the warp-wide decoupled look-back over
///        tile status words (tile_status.cuh).
///
/// This is given code: the course's reference solution of exercise 1.8's
/// tile claim and look_back. Exercise 4.6, the stable filter, composes with
/// it, and 1.9 takes its tile claim from here. Exercise 1.8 asks for this code
/// in its own file, so the grader refuses its including this header. The warp
/// scan that goes with it is 1.7's, given in block_scan.cuh.
///
/// Everything here is device code that the including translation unit
/// inlines (no relocatable device code, no link step): a call costs what
/// the same code written in the kernel's own file would.
///
/// Source: Merrill and Garland, "Single-pass Parallel Prefix Scan with
/// Decoupled Look-back", Technical Report NVR-2016-002, NVIDIA, 2016; the
/// lesson of exercise 1.8 (chapters/01-reduce-scan-histogram/lesson/scan.md).
#pragma once

#include <cuda_runtime.h>

#include "cudalab/tile_status.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::lookback {

/// @brief The block's tile id, in the order blocks start: thread 0 takes a
///        ticket from `*tile_counter`, and a barrier hands it to the block.
///
/// Never blockIdx.x: blocks need not start in index order, and a tile that
/// waits for a lower tile whose block has not started could wait forever.
/// With ids handed out as blocks start, a block only ever waits for tiles
/// whose blocks are already running, so the look-back cannot deadlock.
///
/// @param tile_counter  a device counter, 0 before the grid's first block
///                      takes its ticket (one atomicAdd per block)
/// @param s_tile        a `__shared__ unsigned` of the block, written here
/// @return the tile id, the same in every thread of the block
/// @pre Called by every thread of the block (it holds a __syncthreads()).
__device__ __forceinline__ unsigned claim_tile(unsigned* tile_counter, unsigned& s_tile) {
  if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  return tile;
}

/// @brief The exclusive prefix of tile `tile`: the sum (modulo 2^32) of the
///        values of all tiles before it, in every lane.
///
/// Lane l examines tile (tile - 1 - l): the warp spins until no lane sees
/// kInvalid, adds the values of the lanes up to and including the nearest
/// one (the lowest lane) with kPrefix, and stops there; without one it adds
/// all 32 aggregates and moves the window 32 tiles back. Tiles before tile 0
/// count as an inclusive prefix of 0. The loads are relaxed: status and value
/// arrive together in one word, and no other memory is handed over through it.
///
/// @param status  the tiles' status words (tile_status.cuh); tile t's at status[t]
/// @param tile    the calling block's tile, ≥ 1 (tile 0 publishes kPrefix at
///                once and never looks back)
/// @return the sum of the values of tiles 0 to tile - 1
/// @pre Called by all 32 lanes of one warp of the block that owns `tile`,
///      after that block published tile's aggregate.
/// Steps: one round of 32 relaxed loads (all in L2) per window of 32 tiles,
/// usually one or two rounds, each a spin, a ballot and a 5-step warp sum.
__device__ __forceinline__ unsigned look_back(Word* status, unsigned tile) {
  unsigned prefix = 0;
  const unsigned lane = lane_id();
  long long pred = static_cast<long long>(tile) - 1 - lane;
  while (true) {
    Word w;
    do {
      w = pred >= 0 ? StatusRef(status[pred]).load(cuda::memory_order_relaxed)
                    : make_word(kPrefix, 0);
    } while (__any_sync(kFullMask, status_of(w) == kInvalid));
    const unsigned prefix_lanes = __ballot_sync(kFullMask, status_of(w) == kPrefix);
    const unsigned lowest = prefix_lanes & (0u - prefix_lanes);  // its lane, as a bit
    const unsigned upto = prefix_lanes != 0 ? lowest + (lowest - 1) : kFullMask;
    unsigned x = (upto >> lane) & 1u ? value_of(w) : 0u;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(kFullMask, x, offset);
    prefix += x;
    if (prefix_lanes != 0) break;
    pred -= 32;
  }
  return prefix;
}

}  // namespace cudalab::lookback
