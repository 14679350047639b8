// Exercise 3.2: warp-aggregated push, one atomic per warp for all its pushing lanes.
// Lesson: chapters/03-device-stack/README.md, "3.2".
// Grade:  tools/grade 3.2      Hints: tools/grade --hint 3.2
#include <cuda/atomic>

#include "cudalab/error.cuh"
#include "cudalab/stack.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::stack {
namespace {

constexpr int kBlock = 256;  // a multiple of 32: every warp is whole

// Called by all 32 lanes of a warp (none has returned); the lanes with
// `pushes` true push `item`. They receive consecutive slots in lane order,
// reserved by one atomic.
__device__ void push_warp(DeviceStack<int> stack, int item, bool pushes) {
  // TODO(3.2): ballot the lanes that push; the lowest of them reserves
  // popc(mask) slots with one relaxed fetch_add on *stack.count and
  // broadcasts the old value with __shfl_sync(mask, ...); lane l's slot is
  // base + popc(mask & lanes below l). Write only slots in [0, capacity);
  // for the others set kOverflow in *stack.errors.
}

// Thread i pushes items[i] when flags is null or flags[i] != 0. No thread
// returns early: every lane must reach the ballot in push_warp.
__global__ void push_warp_aggregated_kernel(DeviceStack<int> stack, const int* __restrict__ items,
                                            const std::uint8_t* __restrict__ flags, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const bool pushes = i < n && (flags == nullptr || flags[i] != 0);
  push_warp(stack, pushes ? items[i] : 0, pushes);
}

}  // namespace

void push_warp_aggregated(DeviceStack<int> stack, const int* items, const std::uint8_t* push_flags, std::size_t n,
                          cudaStream_t stream) {
  if (!detail::start_batch("push_warp_aggregated", stack, "items", items, n)) return;
  push_warp_aggregated_kernel<<<blocks_for(n, kBlock), kBlock, 0, stream>>>(stack, items, push_flags, n);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::stack
