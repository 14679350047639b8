/// @file heap_nodes.cuh
/// @brief The nodes of chapter 5's warp heap as device code: where one
///        heap's nodes and cached tops live (HeapNodes), and the two node
///        operations a heap is built from, exercise 5.1's replace_smallest
///        and exercise 5.2's min_child.
///
/// This is given code for the kernels that build a warp heap: exercise
/// 5.3's heap composes its push and pop from it, and so does the given heap
/// of cudalab/warp_heap.cuh (exercise 5.4's). replace_smallest and
/// min_child here are the course's reference solutions of 5.1 and 5.2, so
/// those two exercises may not include this header (their manifest's
/// forbid_include); in the student edition their bodies hold the TODOs of
/// 5.1 and 5.2 instead: write your own there, or copy your 5.1 and 5.2.
///
/// Everything here is device code that the including translation unit
/// inlines (no relocatable device code, no link step): a call costs what
/// the same code written in the kernel's own file would.
#pragma once

#include <climits>
#include <cstddef>

#include "cudalab/heap.cuh"
#include "cudalab/warp.cuh"

/// @brief The warp heap's device code (given; see the file description).
namespace cudalab::heap::device {

/// @brief Lane `src`'s entry `e`, to every lane of the warp: two
///        `__shfl_sync`, of the key and of the value.
/// @param e    this lane's entry
/// @param src  the lane to read, 0 ≤ src < 32, the same in every lane
/// @pre Called by all 32 lanes of a warp together (full mask).
__device__ __forceinline__ Entry shfl_entry(const Entry& e, int src) {
  return {__shfl_sync(kFullMask, e.key, src), __shfl_sync(kFullMask, e.value, src)};
}

/// @brief Exercise 5.1's operation: inserts x into the warp-sorted node whose
///        lane entries are `mine`, removes the smallest of the 33 entries and
///        returns it to every lane; the node stays sorted.
/// @param mine  this lane's entry of a node of 32 entries sorted ascending
///              across the lanes by entry_less() (sentinels last); updated
/// @param x     the entry to insert, the same in every lane
/// @return the smallest of the 33 entries by entry_less(): the node's old
///         top, or x itself when x orders before it (the node is then unchanged)
/// @pre Called by all 32 lanes of a warp together, with the same x.
/// O(1) warp steps: a ballot, a bfind and four shuffles.
/// Source: exercise 5.1 (cudalab::heap::replace_smallest); `Node::replaceSmallest`
/// of cupq (Crosetto, 2019).
__device__ __forceinline__ Entry replace_smallest(Entry& mine, Entry x) {
  const int lane = static_cast<int>(threadIdx.x & 31u);
  const Entry top = shfl_entry(mine, 0);
  // The lanes whose entry orders at or before x: a prefix 0 .. b of the
  // warp, since the node is sorted. Empty: x is the smallest, it goes back.
  const unsigned at_or_before = __ballot_sync(kFullMask, !(x < mine));
  if (at_or_before == 0u) return x;  // the ballot is the same in every lane: a uniform branch
  int b = 0;
  asm("bfind.u32 %0, %1;" : "=r"(b) : "r"(at_or_before));  // the most significant set bit
  // Lanes 0 .. b - 1 take their right neighbour's entry (lane 0's, the top,
  // leaves), lane b takes x. All lanes shuffle, so the full mask is right.
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
/// Source: exercise 5.2 (cudalab::heap::min_child); `Heap::minChild` of cupq
/// (Crosetto, 2019).
__device__ __forceinline__ int min_child(const float* top_keys, const int* top_values, int parent, int node_count) {
  const auto lane = static_cast<long long>(threadIdx.x & 31u);
  const long long child = static_cast<long long>(parent) * node_size + 1 + lane;  // 64 bits: no overflow
  // A missing child (past the last node, or of no parent) is a sentinel that
  // loses against every real top; a real top is never a sentinel.
  Entry best{kEmptyKey, kSentinelValue};
  int index = INT_MAX;
  if (parent >= 0 && child < node_count) {
    best = Entry{top_keys[child], top_values[child]};
    index = static_cast<int>(child);
  }
  // A butterfly: after 5 rounds every lane holds the minimum of all 32
  // (key, value, index) triples, a total order, so all lanes agree.
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

/// @brief One warp's heap without its operations: where its nodes and
///        cached tops are, its capacity and its size, and the node accesses
///        that push and pop are made of. A heap (exercise 5.3's WarpHeap,
///        cudalab/warp_heap.cuh's device::WarpHeap) derives from it and adds
///        push and pop.
///
/// The layout is that of the file description of heap.cuh: node i, lane l
/// lives at keys[32 i + l] (values alike), so lane l only ever touches
/// column l of the nodes and node memory needs no synchronization; the
/// lanes talk through shuffles and through the cached tops in shared
/// memory, which only lane 0 writes, between two __syncwarp() (cache_top).
/// Every lane holds the same copy of every member (the size is
/// warp-uniform), and every member function is called by all 32 lanes of
/// the warp together. Start a heap empty with size = 0: its memory needs no
/// initialization.
struct HeapNodes {
  float* keys;        ///< capacity · 32 keys (global memory)
  int* values;        ///< capacity · 32 values
  float* top_keys;    ///< capacity cached top keys (shared memory)
  int* top_values;    ///< capacity cached top values (shared memory)
  int capacity;       ///< in nodes, 0 ≤ capacity ≤ max_capacity_nodes
  int size;           ///< entries, 0 ≤ size ≤ 32 · capacity

  /// @brief Heap `heap` of `storage`, empty, for the calling warp of a block
  ///        of whole warps that keeps one heap per warp, its cached tops in
  ///        the warp's part of the block's dynamic shared memory.
  /// @param storage      the heaps' memory (kernel parameter)
  /// @param heap         the heap's index, < storage.heaps
  /// @param shared_tops  the block's dynamic shared memory, of the size
  ///                     detail::heap_launch gives: the keys of every warp's
  ///                     tops ([warps][capacity]), then their values
  /// O(1).
  static __device__ HeapNodes for_warp(const HeapStorageView& storage, std::size_t heap, float* shared_tops) {
    const unsigned warp = threadIdx.x / 32;
    const auto capacity = static_cast<int>(storage.capacity_nodes);
    const std::size_t slice = static_cast<std::size_t>(capacity) * node_size;
    return {storage.keys + heap * slice,
            storage.values + heap * slice,
            shared_tops + static_cast<std::size_t>(warp) * capacity,
            reinterpret_cast<int*>(shared_tops + static_cast<std::size_t>(blockDim.x / 32) * capacity) +
                static_cast<std::size_t>(warp) * capacity,
            capacity,
            0};
  }

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
  /// @brief The smallest entry (every lane), or (kEmptyKey, kEmptyValue) when
  ///        the heap is empty: the cached top of the root.
  __device__ Entry top() const {
    if (empty()) return {kEmptyKey, kEmptyValue};
    return {top_keys[0], top_values[0]};
  }
};

}  // namespace cudalab::heap::device
