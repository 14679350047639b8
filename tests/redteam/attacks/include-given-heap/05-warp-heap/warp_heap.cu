// RED TEAM: 5.3 without the heap: the kernel runs the given heap's device::WarpHeap
// RED TEAM: (cudalab/warp_heap.cuh, the course's reference solution of 5.1 to 5.3, given
// RED TEAM: to 5.4) instead of the file's own, whose TODOs stay as the starter has them.
// Exercise 5.3: a warp heap (push, pop, size, empty), driven by per-warp scripts.
// Lesson: chapters/05-warp-heap/README.md, "5.3".
// Grade:  tools/grade 5.3      Hints: tools/grade --hint 5.3
#include <algorithm>
#include <climits>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/heap.cuh"
#include "cudalab/warp.cuh"
#include "cudalab/warp_heap.cuh"
// @REDTEAM_LIB@

namespace cudalab::heap {
namespace {

constexpr int kMaxWarpsPerBlock = 8;  // heaps per block, fewer for large capacities (detail::heap_launch)

__device__ __forceinline__ Entry shfl_entry(const Entry& e, int src) {
  return {__shfl_sync(kFullMask, e.key, src), __shfl_sync(kFullMask, e.value, src)};
}

// Exercise 5.1, again: insert x into the warp-sorted node whose lane entries
// are `mine`, remove the smallest of the 33 and return it to every lane.
__device__ __forceinline__ Entry replace_smallest(Entry& mine, Entry x) {
  // TODO(5.3): your replace_smallest of exercise 5.1.
  return x;
}

// Exercise 5.2, again: the child of `parent` with the smallest cached top,
// or -1 when it has none.
__device__ __forceinline__ int min_child(const float* top_keys, const int* top_values, int parent, int node_count) {
  // TODO(5.3): your min_child of exercise 5.2.
  return -1;
}

// One warp's heap. Every lane holds the same copy of every member (the size
// is warp-uniform). Node i, lane l lives at keys[32 i + l]: lane l only ever
// touches column l of the nodes, so node memory needs no synchronization;
// the lanes talk through shuffles and through the cached tops in shared
// memory, which only lane 0 writes, between two __syncwarp().
struct WarpHeap {
  float* keys;        // capacity · 32 keys (global memory)
  int* values;        // capacity · 32 values
  float* top_keys;    // capacity cached top keys (shared memory)
  int* top_values;    // capacity cached top values (shared memory)
  int capacity;       // in nodes
  int size;           // entries

  __device__ int lane() const { return static_cast<int>(threadIdx.x & 31u); }
  __device__ int nodes() const { return (size + node_size - 1) / node_size; }
  __device__ bool empty() const { return size == 0; }

  __device__ Entry load(int node) const {
    const std::size_t i = static_cast<std::size_t>(node) * node_size + lane();
    return {keys[i], values[i]};
  }
  __device__ void store(int node, const Entry& e) const {
    const std::size_t i = static_cast<std::size_t>(node) * node_size + lane();
    keys[i] = e.key;
    values[i] = e.value;
  }
  // Lane 0 caches its entry `top` as the top of `node`. The first
  // __syncwarp orders every lane's earlier reads of the cache before the
  // write, the second the write before every lane's later reads.
  __device__ void cache_top(int node, const Entry& top) const {
    __syncwarp();
    if (lane() == 0) {
      top_keys[node] = top.key;
      top_values[node] = top.value;
    }
    __syncwarp();
  }
  // The smallest entry (every lane), or (kEmptyKey, kEmptyValue).
  __device__ Entry top() const {
    if (empty()) return {kEmptyKey, kEmptyValue};
    return {top_keys[0], top_values[0]};
  }

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
  const auto capacity = static_cast<int>(storage.capacity_nodes);
  const std::size_t slice = static_cast<std::size_t>(capacity) * node_size;
  device::WarpHeap heap{storage.keys + h * slice,
                storage.values + h * slice,
                shared_tops + static_cast<std::size_t>(warp) * capacity,
                reinterpret_cast<int*>(shared_tops + static_cast<std::size_t>(blockDim.x / 32) * capacity) +
                    static_cast<std::size_t>(warp) * capacity,
                capacity,
                0};
  const HeapOp* script = ops + h * ops_per_heap;
  HeapStep* out = steps + h * ops_per_heap;
  for (std::size_t i = 0; i < ops_per_heap; ++i) {
    const HeapOp op = script[i];
    Entry popped{kEmptyKey, kEmptyValue};
    const unsigned flags = op.kind == OpKind::push ? heap.push(Entry{op.key, op.value}) : heap.pop(&popped);
    const Entry top = heap.empty() ? Entry{kEmptyKey, kEmptyValue} : Entry{heap.top_keys[0], heap.top_values[0]};
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
