/// @file warp_heap.cuh
/// @brief Chapter 5's warp heap as device code: the heap of exercise 5.3
///        (with 5.1's replace_smallest and 5.2's min_child), for the kernels
///        that use one, such as exercise 5.4's Dijkstra.
///
/// This is given code: the course's reference heap. A kernel includes this
/// header, gives each warp a cudalab::heap::device::WarpHeap over its slice
/// of a HeapStorageView and its tops in shared memory, and calls push and
/// pop with all 32 lanes. Exercise 5.3 asks for the same heap in its own
/// file; grading 5.4 never depends on it.
///
/// Everything here is device code that the including translation unit
/// inlines (no relocatable device code, no link step): a call costs what
/// the same code written in the kernel's own file would.
#pragma once

#include <climits>
#include <cstddef>

#include "cudalab/heap.cuh"
#include "cudalab/warp.cuh"

/// @brief The warp heap's device code (exercise 5.3's heap, given).
namespace cudalab::heap::device {

/// @brief Lane `src`'s entry `e`, to every lane of the warp.
/// @param e    this lane's entry
/// @param src  the lane to read, 0 ≤ src < 32, the same in every lane
/// @pre Called by all 32 lanes of a warp together (full mask).
/// Two shuffles. Source: the warp heap of exercise 5.3 (solutions/05-warp-heap/warp_heap.cu).
__device__ __forceinline__ Entry shfl_entry(const Entry& e, int src) {
  return {__shfl_sync(kFullMask, e.key, src), __shfl_sync(kFullMask, e.value, src)};
}

/// @brief Exercise 5.1's operation: inserts x into the warp-sorted node whose
///        lane entries are `mine`, removes the smallest of the 33 entries and
///        returns it to every lane; the node stays sorted.
/// @param mine  this lane's entry of a node of 32 entries sorted ascending
///              across the lanes by entry_less() (sentinels last); updated
/// @param x     the entry to insert, the same in every lane
/// @pre Called by all 32 lanes of a warp together, with the same x.
/// O(1) warp steps: a ballot, a bfind and four shuffles.
/// Source: exercise 5.1 (cudalab::heap::replace_smallest), as 5.3 uses it.
__device__ __forceinline__ Entry replace_smallest(Entry& mine, Entry x) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const Entry top = shfl_entry(mine, 0);
  const unsigned at_or_before = __ballot_sync(kFullMask, !(x < mine));
  if (at_or_before == 0u) return x;
  int b = 0;
  asm("bfind.u32 %0, %1;" : "=r"(b) : "r"(at_or_before));
  const Entry right{__shfl_down_sync(kFullMask, mine.key, 1), __shfl_down_sync(kFullMask, mine.value, 1)};
  if (lane < b) {
    mine = right;
  } else if (lane == b) {
    mine = x;
  }
  return top;
}

/// @brief Exercise 5.2's operation: the child of `parent` (nodes 32 parent + 1
///        to 32 parent + 32, those below node_count) whose cached top is the
///        smallest by entry_less() (the smallest index among equal tops), or
///        −1 when `parent` has no child.
/// @param top_keys    node_count cached top keys (shared or global memory)
/// @param top_values  node_count cached top values
/// @param parent      a node index, the same in every lane (−1: no child)
/// @param node_count  the number of nodes, the same in every lane
/// @pre Called by all 32 lanes of a warp together.
/// One read per lane and 5 shuffle rounds.
/// Source: exercise 5.2 (cudalab::heap::min_child), as 5.3 uses it.
__device__ __forceinline__ int min_child(const float* top_keys, const int* top_values, int parent, int node_count) {
  const auto lane = static_cast<long long>(threadIdx.x & 31u);
  const long long child = static_cast<long long>(parent) * node_size + 1 + lane;
  Entry best{kEmptyKey, kSentinelValue};
  int index = INT_MAX;
  if (parent >= 0 && child < node_count) {
    best = Entry{top_keys[child], top_values[child]};
    index = static_cast<int>(child);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    const Entry other{__shfl_xor_sync(kFullMask, best.key, offset), __shfl_xor_sync(kFullMask, best.value, offset)};
    const int other_index = __shfl_xor_sync(kFullMask, index, offset);
    if (other < best || (!(best < other) && other_index < index)) {
      best = other;
      index = other_index;
    }
  }
  return index == INT_MAX ? -1 : index;
}

/// @brief One warp's heap, exercise 5.3's: a 32-ary heap of warp-sorted
///        nodes with the nodes' tops cached (the file description of heap.cuh).
///
/// Every lane holds the same copy of every member (the size is
/// warp-uniform), and every member function is called by all 32 lanes of
/// the warp together. Node i, lane l lives at keys[32 i + l]: lane l only
/// ever touches column l of the nodes, so node memory needs no
/// synchronization; the lanes talk through shuffles and through the cached
/// tops in shared memory, which only lane 0 writes, between two
/// __syncwarp(). Start it empty with size = 0 (its memory needs no
/// initialization). push and pop take O(log_32 size) node steps of O(1)
/// warp instructions each; errors are flags (kOverflow, kUnderflow,
/// kInvalidKey), never an access outside the heap's memory.
/// Source: exercise 5.3 (solutions/05-warp-heap/warp_heap.cu), the heap of
/// cupq (P. G. Crosetto, 2019).
struct WarpHeap {
  float* keys;        ///< capacity · 32 keys (global memory)
  int* values;        ///< capacity · 32 values
  float* top_keys;    ///< capacity cached top keys (shared memory)
  int* top_values;    ///< capacity cached top values (shared memory)
  int capacity;       ///< in nodes, 0 ≤ capacity ≤ max_capacity_nodes
  int size;           ///< entries, 0 ≤ size ≤ 32 · capacity

  /// @brief This thread's lane, 0 to 31.
  __device__ int lane() const { return static_cast<int>(threadIdx.x & 31u); }
  /// @brief The number of nodes in use, ⌈size / 32⌉.
  __device__ int nodes() const { return (size + node_size - 1) / node_size; }
  /// @brief True when the heap holds no entry.
  __device__ bool empty() const { return size == 0; }

  /// @brief This lane's entry of node `node` (0 ≤ node < capacity).
  __device__ Entry load(int node) const {
    const std::size_t i = static_cast<std::size_t>(node) * node_size + lane();
    return {keys[i], values[i]};
  }
  /// @brief Writes this lane's entry e of node `node` (0 ≤ node < capacity).
  __device__ void store(int node, const Entry& e) const {
    const std::size_t i = static_cast<std::size_t>(node) * node_size + lane();
    keys[i] = e.key;
    values[i] = e.value;
  }
  /// @brief Lane 0 caches its entry `top` as the top of `node`. The first
  ///        __syncwarp orders every lane's earlier reads of the cache before
  ///        the write, the second the write before every lane's later reads.
  __device__ void cache_top(int node, const Entry& top) const {
    __syncwarp();
    if (lane() == 0) {
      top_keys[node] = top.key;
      top_values[node] = top.value;
    }
    __syncwarp();
  }

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
