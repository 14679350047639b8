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
  // BEGIN SOLUTION
  if (threadIdx.x == 0) {
    // Relaxed: no push runs in this launch, and the slots were written by an
    // earlier launch, which the kernel boundary orders before this one.
    cuda::atomic_ref<long long, cuda::thread_scope_device> counter(*stack.count);
    top = counter.fetch_sub(static_cast<long long>(k), cuda::memory_order_relaxed);
  }
  __syncthreads();  // publishes `top` to the block
  if (threadIdx.x < k) {
    const long long slot = top - 1 - static_cast<long long>(threadIdx.x);
    if (slot >= 0 && static_cast<unsigned long long>(slot) < stack.capacity) {
      out[first + threadIdx.x] = stack.data[slot];
    } else {
      out[first + threadIdx.x] = empty;
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> errors(*stack.errors);
      errors.fetch_or(kUnderflow, cuda::memory_order_relaxed);
    }
  }
  // STARTER:
  // // TODO(3.3): thread 0 reserves the block's k slots with one relaxed
  // // fetch_sub of k on *stack.count and stores the old value in `top`; after
  // // a barrier, thread t < k writes out[first + t] = the item of slot
  // // top - 1 - t, or `empty` (and kUnderflow in *stack.errors) when that
  // // slot lies outside [0, stack.capacity).
  // if (threadIdx.x < k) out[first + threadIdx.x] = empty;
  // END SOLUTION
}

}  // namespace

void pop_batch(DeviceStack<int> stack, std::size_t count, int* out, int empty, cudaStream_t stream) {
  if (!detail::start_batch("pop_batch", stack, "out", out, count)) return;
  pop_batch_kernel<<<blocks_for(count, kBlock), kBlock, 0, stream>>>(stack, count, out, empty);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::stack
