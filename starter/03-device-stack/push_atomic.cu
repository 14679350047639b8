// Exercise 3.1: a device-side stack push, one relaxed atomic per pushed item.
// Lesson: chapters/03-device-stack/README.md, "3.1".
// Grade:  tools/grade 3.1      Hints: tools/grade --hint 3.1
#include <cuda/atomic>

#include "cudalab/error.cuh"
#include "cudalab/stack.cuh"

namespace cudalab::stack {
namespace {

constexpr int kBlock = 256;

// Pushes `item`: reserve a slot by incrementing the counter; write the item
// when the slot lies in [0, capacity), else drop it and set kOverflow.
__device__ void push(DeviceStack<int> stack, int item) {
  // TODO(3.1): reserve a slot with a relaxed fetch_add of 1 on *stack.count
  // (cuda::atomic_ref<long long, cuda::thread_scope_device>); write
  // stack.data[slot] only when 0 <= slot < stack.capacity, else set the
  // kOverflow bit of *stack.errors (fetch_or) and write nothing.
}

// Thread i pushes items[i] when flags is null or flags[i] != 0.
__global__ void push_atomic_kernel(DeviceStack<int> stack, const int* __restrict__ items,
                                   const std::uint8_t* __restrict__ flags, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  if (flags != nullptr && flags[i] == 0) return;
  push(stack, items[i]);
}

}  // namespace

void push_atomic(DeviceStack<int> stack, const int* items, const std::uint8_t* push_flags, std::size_t n,
                 cudaStream_t stream) {
  if (!detail::start_batch("push_atomic", stack, "items", items, n)) return;
  push_atomic_kernel<<<blocks_for(n, kBlock), kBlock, 0, stream>>>(stack, items, push_flags, n);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::stack
