/// @file warp_heap.cuh
/// @brief Chapter 5's warp heap as device code: the heap of exercise 5.3,
///        for the kernels that use one, such as exercise 5.4's Dijkstra.
///
/// This is given code: the course's reference heap, built from the given
/// nodes of cudalab/heap_nodes.cuh (HeapNodes, and 5.1's replace_smallest
/// and 5.2's min_child). A kernel includes this header, gives each warp a
/// cudalab::heap::device::WarpHeap over its slice of a HeapStorageView and
/// its tops in shared memory (HeapNodes::for_warp), and calls push and pop
/// with all 32 lanes. Exercise 5.3 asks for the same heap in its own file;
/// grading 5.4 never depends on it.
///
/// Everything here is device code that the including translation unit
/// inlines (no relocatable device code, no link step): a call costs what
/// the same code written in the kernel's own file would.
#pragma once

#include <cstddef>

#include "cudalab/heap.cuh"
#include "cudalab/heap_nodes.cuh"
#include "cudalab/warp.cuh"

/// @brief The warp heap's device code (given).
namespace cudalab::heap::device {

/// @brief One warp's heap, exercise 5.3's: a 32-ary heap of warp-sorted
///        nodes with the nodes' tops cached (the file description of heap.cuh),
///        its push and pop on the nodes and node accesses of HeapNodes.
///
/// Every member function is called by all 32 lanes of the warp together.
/// Start it empty: `WarpHeap heap{WarpHeap::for_warp(storage, h, shared_tops)}`
/// (HeapNodes::for_warp), or with size = 0 (its memory needs no
/// initialization). push and pop take O(log_32 size) node steps of O(1)
/// warp instructions each; errors are flags (kOverflow, kUnderflow,
/// kInvalidKey), never an access outside the heap's memory.
/// Source: exercise 5.3 (solutions/05-warp-heap/warp_heap.cu), the heap of
/// cupq (P. G. Crosetto, 2019).
struct WarpHeap : HeapNodes {
  /// @brief Inserts x, the same in every lane; returns the flags raised: 0,
  ///        kOverflow (the heap is full: nothing is written) or kInvalidKey
  ///        (x.key is NaN or +infinity: nothing is written).
  __device__ unsigned push(Entry x) {
    if (!(x.key < kEmptyKey)) return kInvalidKey;  // NaN or +infinity
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
  }

  /// @brief Removes the smallest entry by entry_less() into *out (every
  ///        lane); returns the flags raised: 0, or kUnderflow when the heap
  ///        is empty (then *out = (kEmptyKey, kEmptyValue)).
  __device__ unsigned pop(Entry* out) {
    *out = Entry{kEmptyKey, kEmptyValue};
    if (size == 0) return kUnderflow;
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
  }
};

}  // namespace cudalab::heap::device
