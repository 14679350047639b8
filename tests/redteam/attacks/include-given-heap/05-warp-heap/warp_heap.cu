// RED TEAM: 5.3 without the heap: the kernel runs the given heap's device::WarpHeap
// RED TEAM: (cudalab/warp_heap.cuh, the course's reference solution of 5.1 to 5.3, given
// RED TEAM: to 5.4) instead of the file's own, whose TODOs stay as the starter has them.
// Exercise 5.3: a warp heap (push, pop, size, empty), driven by per-warp scripts.
// Lesson: chapters/05-warp-heap/README.md, "5.3".
// Grade:  tools/grade 5.3      Hints: tools/grade --hint 5.3
#include <algorithm>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/heap.cuh"
#include "cudalab/heap_nodes.cuh"
#include "cudalab/warp.cuh"
#include "cudalab/warp_heap.cuh"
// @REDTEAM_LIB@

namespace cudalab::heap {
namespace {

constexpr int kMaxWarpsPerBlock = 8;  // heaps per block, fewer for large capacities (detail::heap_launch)

// The nodes of the heap and the node operations are given by
// cudalab/heap_nodes.cuh: HeapNodes (the memory of one heap, load, store,
// cache_top, top), shfl_entry, and exercise 5.1's replace_smallest and
// exercise 5.2's min_child.
using device::HeapNodes;
using device::min_child;
using device::replace_smallest;
using device::shfl_entry;

// One warp's heap: its nodes, and push and pop on them. Every member
// function is called by all 32 lanes of the warp together.
struct WarpHeap : HeapNodes {
  // Inserts x; returns the flags raised (0, kOverflow or kInvalidKey).
  __device__ unsigned push(Entry x) {
    if (!(x.key < kEmptyKey)) return kInvalidKey;  // NaN or +infinity
    // TODO(5.3): refuse a push into a full heap (kOverflow, write nothing).
    // Insert x in sorted position into the last node (a new one when the
    // last is full): ballot + __popc give its lane, __shfl_up_sync moves the
    // larger entries up. If x became that node's top, let it climb: swap
    // lane-0 entries with every parent whose top is larger. Keep the cached
    // tops (top_keys, top_values) right, and size.
    return 0u;
  }

  // Removes the smallest entry into *out; returns the flags raised (0 or
  // kUnderflow, when empty: *out = (kEmptyKey, kEmptyValue)).
  __device__ unsigned pop(Entry* out) {
    *out = Entry{kEmptyKey, kEmptyValue};
    if (size == 0) return kUnderflow;
    // TODO(5.3): take the top of the root into *out and restore the heap:
    // move the last entry of the last node into the root with
    // replace_smallest, then sink the root's new top: while min_child has a
    // smaller top, replace_smallest into that child and write the child's
    // old top into the parent's lane 0. Keep the cached tops and size right.
    --size;
    return 0u;
  }
};

// Warp h runs script h on heap h and records every step.
__global__ void warp_heap_kernel(HeapStorageView storage, const HeapOp* __restrict__ ops, std::size_t ops_per_heap,
                                 std::size_t n_heaps, HeapStep* __restrict__ steps) {
  extern __shared__ float shared_tops[];  // [warps][capacity] keys, then [warps][capacity] values
  const unsigned warp = threadIdx.x / 32;
  const std::size_t h = blockIdx.x * static_cast<std::size_t>(blockDim.x / 32) + warp;
  if (h >= n_heaps) return;  // whole warps leave; no block-wide barrier follows
  device::WarpHeap heap{device::WarpHeap::for_warp(storage, h, shared_tops)};  // empty
  const HeapOp* script = ops + h * ops_per_heap;
  HeapStep* out = steps + h * ops_per_heap;
  for (std::size_t i = 0; i < ops_per_heap; ++i) {
    const HeapOp op = script[i];
    Entry popped{kEmptyKey, kEmptyValue};
    const unsigned flags = op.kind == OpKind::push ? heap.push(Entry{op.key, op.value}) : heap.pop(&popped);
    const Entry top = heap.top();
    if ((threadIdx.x & 31u) == 0) out[i] = HeapStep{popped.key, popped.value, top.key, top.value, heap.size, flags};
  }
}

}  // namespace

void warp_heap(HeapStorageView storage, const HeapOp* ops, std::size_t ops_per_heap, std::size_t n_heaps,
               HeapStep* steps, cudaStream_t stream) {
  constexpr const char* f = "warp_heap";
  require_count_at_most(f, n_heaps, max_items);
  if (ops_per_heap != 0 && n_heaps > std::numeric_limits<std::size_t>::max() / ops_per_heap)
    throw std::invalid_argument("warp_heap: n_heaps * ops_per_heap overflows");
  const std::size_t total = n_heaps * ops_per_heap;
  require_pointer(f, "ops", ops, total);
  require_pointer(f, "steps", steps, total);
  detail::check_storage(f, storage, n_heaps);
  if (total == 0) return;
  const auto [warps, shared] = detail::heap_launch(storage.capacity_nodes, kMaxWarpsPerBlock);
  set_dynamic_shared(warp_heap_kernel, shared);  // above 48 KiB: opt in, within the device's limit
  const auto blocks = static_cast<unsigned>((n_heaps + warps - 1) / warps);
  warp_heap_kernel<<<blocks, 32 * warps, shared, stream>>>(storage, ops, ops_per_heap, n_heaps, steps);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::heap
