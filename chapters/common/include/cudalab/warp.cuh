/// @file warp.cuh
/// @brief The warp's full mask and a thread's lane and warp within its block.
///
/// A block is cut into warps of 32 threads of consecutive thread ids, the
/// first warp holding thread 0 (CUDA C++ Programming Guide, "SIMT
/// Architecture"), so in a one-dimensional block thread `threadIdx.x` is lane
/// `threadIdx.x % 32` of warp `threadIdx.x / 32`. Every kernel of the course
/// launches one-dimensional blocks.
///
/// What this header does not hold: the warp sum and the warp scan. They are
/// exercises (1.3, 1.4, 1.7), which the student writes with the
/// `__shfl_*_sync` intrinsics; later exercises are given 1.7's warp scan in
/// block_scan.cuh.
#pragma once

#include <cuda_runtime.h>

namespace cudalab {

/// @brief The mask of all 32 lanes, for a warp primitive (`__shfl_*_sync`,
///        `__ballot_sync`, `__any_sync`, ...) that every lane of the warp
///        executes.
///
/// Precondition of its use: every lane of the warp reaches the primitive with
/// this mask (none has returned or branched away), else the result is
/// undefined (CUDA C++ Programming Guide, "Warp Shuffle Functions").
inline constexpr unsigned kFullMask = 0xffffffffu;

/// @brief The calling thread's lane, 0 to 31: `threadIdx.x % 32`.
///
/// Precondition: a one-dimensional block (`blockDim.y == blockDim.z == 1`),
/// where it equals the hardware lane id. O(1): one integer operation.
__device__ __forceinline__ unsigned lane_id() { return threadIdx.x % 32u; }

/// @brief The calling thread's warp within its block, 0 to
///        `blockDim.x / 32 - 1` for a block of whole warps:
///        `threadIdx.x / 32`.
///
/// The warp's rank in the block, as CUB's block primitives compute it
/// (`linear_tid / WARP_THREADS`), not the hardware's `%warpid`, which names
/// a warp slot of the SM and may change while the warp runs. Precondition: a
/// one-dimensional block. O(1): one integer operation.
__device__ __forceinline__ unsigned warp_id() { return threadIdx.x / 32u; }

}  // namespace cudalab
