// Exercise 3.3: batched pop, one atomic per block, underflow detected.
// Lesson: chapters/03-device-stack/README.md, "3.3".
// Grade:  tools/grade 3.3      Hints: tools/grade --hint 3.3
#include <cuda/atomic>

#include "cudalab/error.cuh"
#include "cudalab/stack.cuh"

namespace cudalab::stack {
namespace {

constexpr unsigned kBlock = pop_batch_block;

// Block b pops k = min(kBlock, count - kBlock * b) items: one thread reserves
// the k topmost slots, and thread t < k writes the item of slot top - 1 - t
// (or `empty`) to out[kBlock * b + t].
__global__ void pop_batch_kernel(DeviceStack<int> stack, std::size_t count, int* __restrict__ out, int empty) {
  __shared__ long long top;  // the counter before this block's reservation
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(kBlock);
  const auto k = static_cast<unsigned>(count - first < kBlock ? count - first : kBlock);
  // TODO(3.3): thread 0 reserves the block's k slots with one relaxed
  // fetch_sub of k on *stack.count and stores the old value in `top`; after
  // a barrier, thread t < k writes out[first + t] = the item of slot
  // top - 1 - t, or `empty` (and kUnderflow in *stack.errors) when that
  // slot lies outside [0, stack.capacity).
  if (threadIdx.x < k) out[first + threadIdx.x] = empty;
}

}  // namespace

void pop_batch(DeviceStack<int> stack, std::size_t count, int* out, int empty, cudaStream_t stream) {
  if (!detail::start_batch("pop_batch", stack, "out", out, count)) return;
  pop_batch_kernel<<<blocks_for(count, kBlock), kBlock, 0, stream>>>(stack, count, out, empty);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::stack
