// Exercise 3.5: a bounded ring-buffer queue with monotonic 64-bit head and tail.
// Lesson: chapters/03-device-stack/README.md, "3.5".
// Grade:  tools/grade 3.5      Hints: tools/grade --hint 3.5
#include <cuda/atomic>

#include "cudalab/error.cuh"
#include "cudalab/stack.cuh"

namespace cudalab::stack {
namespace {

constexpr int kBlock = 256;
using Counter = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

__device__ void set_flag(unsigned* errors, unsigned bit) {
  cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*errors).fetch_or(bit, cuda::memory_order_relaxed);
}

// Appends `item`; no dequeue runs in this launch, so *queue.head is constant.
__device__ void enqueue(DeviceQueue<int> queue, int item) {
  // TODO(3.5): read head (a relaxed load: it is constant in this launch),
  // reserve t with a relaxed fetch_add of 1 on *queue.tail; when
  // t - head < capacity write data[t % capacity], else take the
  // reservation back (fetch_sub 1) and set kOverflow.
}

// Removes the oldest item into *out, or writes `empty`; no enqueue runs in
// this launch, so *queue.tail is constant.
__device__ void dequeue(DeviceQueue<int> queue, int* out, int empty) {
  // TODO(3.5): read tail (a relaxed load: it is constant in this launch),
  // reserve h with a relaxed fetch_add of 1 on *queue.head; when h < tail
  // read data[h % capacity] into *out, else take the reservation back
  // (fetch_sub 1), write `empty` and set kUnderflow.
  *out = empty;
}

__global__ void enqueue_kernel(DeviceQueue<int> queue, const int* __restrict__ items,
                               const std::uint8_t* __restrict__ flags, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n || (flags != nullptr && flags[i] == 0)) return;
  enqueue(queue, items[i]);
}

__global__ void dequeue_kernel(DeviceQueue<int> queue, std::size_t count, int* __restrict__ out, int empty) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) dequeue(queue, out + i, empty);
}

}  // namespace

void ring_queue_enqueue(DeviceQueue<int> queue, const int* items, const std::uint8_t* push_flags, std::size_t n,
                        cudaStream_t stream) {
  if (!detail::start_batch("ring_queue_enqueue", queue, "items", items, n)) return;
  enqueue_kernel<<<blocks_for(n, kBlock), kBlock, 0, stream>>>(queue, items, push_flags, n);
  CUDALAB_CHECK_LAUNCH();
}

void ring_queue_dequeue(DeviceQueue<int> queue, std::size_t count, int* out, int empty, cudaStream_t stream) {
  if (!detail::start_batch("ring_queue_dequeue", queue, "out", out, count)) return;
  dequeue_kernel<<<blocks_for(count, kBlock), kBlock, 0, stream>>>(queue, count, out, empty);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::stack
