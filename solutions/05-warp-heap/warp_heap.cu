// Exercise 5.3: a warp heap (push, pop, size, empty), driven by per-warp scripts.
// Lesson: chapters/05-warp-heap/README.md, "5.3".
// Grade:  tools/grade 5.3      Hints: tools/grade --hint 5.3
#include <algorithm>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/heap.cuh"
#include "cudalab/heap_nodes.cuh"
#include "cudalab/warp.cuh"

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
    // BEGIN SOLUTION
    if (size >= capacity * node_size) return kOverflow;  // full: nothing is written
    const int last = size / node_size;                  // the node that receives x
    const int fill = size % node_size;                  // entries already in it (0: a new node)
    Entry mine = fill == 0 ? Entry{kEmptyKey, kSentinelValue} : load(last);
    // Sorted insertion into a node with a free lane: x goes after the
    // entries that order at or before it (pos of them), the rest moves up
    // one lane, and the sentinel of lane `fill` falls off the end.
    const int pos = __popc(__ballot_sync(kFullMask, !(x < mine)));
    const Entry left{__shfl_up_sync(kFullMask, mine.key, 1), __shfl_up_sync(kFullMask, mine.value, 1)};
    if (lane() > pos) {
      mine = left;
    } else if (lane() == pos) {
      mine = x;
    }
    store(last, mine);
    ++size;
    if (pos == 0) {
      // x is the new top of `last`: it climbs while the parent's top is
      // larger. A swap of tops moves only lane 0's entries (the parent's
      // old top is at most every entry of the child, so both stay sorted),
      // hence lane 0 does the whole climb alone.
      __syncwarp();
      if (lane() == 0) {
        int node = last;
        while (node > 0) {
          const int parent = (node - 1) / node_size;
          const Entry p{top_keys[parent], top_values[parent]};
          if (!(x < p)) break;
          keys[static_cast<std::size_t>(node) * node_size] = p.key;
          values[static_cast<std::size_t>(node) * node_size] = p.value;
          top_keys[node] = p.key;
          top_values[node] = p.value;
          node = parent;
        }
        keys[static_cast<std::size_t>(node) * node_size] = x.key;
        values[static_cast<std::size_t>(node) * node_size] = x.value;
        top_keys[node] = x.key;
        top_values[node] = x.value;
      }
      __syncwarp();
    }
    return 0u;
    // STARTER:
    // // TODO(5.3): refuse a push into a full heap (kOverflow, write nothing).
    // // Insert x in sorted position into the last node (a new one when the
    // // last is full): ballot + __popc give its lane, __shfl_up_sync moves the
    // // larger entries up. If x became that node's top, let it climb: swap
    // // lane-0 entries with every parent whose top is larger. Keep the cached
    // // tops (top_keys, top_values) right, and size.
    // return 0u;
    // END SOLUTION
  }

  // Removes the smallest entry into *out; returns the flags raised (0 or
  // kUnderflow, when empty: *out = (kEmptyKey, kEmptyValue)).
  __device__ unsigned pop(Entry* out) {
    *out = Entry{kEmptyKey, kEmptyValue};
    if (size == 0) return kUnderflow;
    // BEGIN SOLUTION
    const int last = (size - 1) / node_size;  // node of the last entry
    const int fill = (size - 1) % node_size;  // its lane: the largest entry of that node
    --size;
    if (last == 0) {
      // Only the root: its top leaves, lanes 1 .. fill move down.
      Entry mine = load(0);
      *out = shfl_entry(mine, 0);
      const Entry right{__shfl_down_sync(kFullMask, mine.key, 1), __shfl_down_sync(kFullMask, mine.value, 1)};
      if (lane() < fill) {
        mine = right;
      } else if (lane() == fill) {
        mine = Entry{kEmptyKey, kSentinelValue};
      }
      store(0, mine);
      cache_top(0, mine);
      return 0u;
    }
    // Take the last entry y out of the last node (its top stays, or the
    // node leaves the heap when y was its only entry) ...
    const Entry y = shfl_entry(load(last), fill);
    if (lane() == fill) store(last, Entry{kEmptyKey, kSentinelValue});
    // ... put it into the root, which gives up its top: the smallest entry.
    Entry mine = load(0);
    *out = replace_smallest(mine, y);
    store(0, mine);
    cache_top(0, mine);
    // Sink the root's new top t: while the smallest child c has a smaller
    // top, t goes into c and c's top comes up into the parent's lane 0.
    Entry t = shfl_entry(mine, 0);
    const int count = nodes();
    int node = 0;
    for (;;) {
      const int c = min_child(top_keys, top_values, node, count);
      if (c < 0) break;
      const Entry child_top{top_keys[c], top_values[c]};
      if (!(child_top < t)) break;
      Entry child = load(c);
      const Entry up = replace_smallest(child, t);  // == child_top, since t orders after it
      store(c, child);
      __syncwarp();  // every lane has read the cache above
      if (lane() == 0) {
        keys[static_cast<std::size_t>(node) * node_size] = up.key;
        values[static_cast<std::size_t>(node) * node_size] = up.value;
        top_keys[node] = up.key;
        top_values[node] = up.value;
        top_keys[c] = child.key;  // lane 0's entry: c's new top
        top_values[c] = child.value;
      }
      __syncwarp();
      t = shfl_entry(child, 0);
      node = c;
    }
    return 0u;
    // STARTER:
    // // TODO(5.3): take the top of the root into *out and restore the heap:
    // // move the last entry of the last node into the root with
    // // replace_smallest, then sink the root's new top: while min_child has a
    // // smaller top, replace_smallest into that child and write the child's
    // // old top into the parent's lane 0. Keep the cached tops and size right.
    // --size;
    // return 0u;
    // END SOLUTION
  }
};

// Warp h runs script h on heap h and records every step.
__global__ void warp_heap_kernel(HeapStorageView storage, const HeapOp* __restrict__ ops, std::size_t ops_per_heap,
                                 std::size_t n_heaps, HeapStep* __restrict__ steps) {
  extern __shared__ float shared_tops[];  // [warps][capacity] keys, then [warps][capacity] values
  const unsigned warp = threadIdx.x / 32;
  const std::size_t h = blockIdx.x * static_cast<std::size_t>(blockDim.x / 32) + warp;
  if (h >= n_heaps) return;  // whole warps leave; no block-wide barrier follows
  WarpHeap heap{WarpHeap::for_warp(storage, h, shared_tops)};  // empty
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
