/// @file heap.cuh
/// @brief Chapter 5, exercises 5.1 to 5.4: a priority queue that one warp owns
///        and operates together, after the design of the cupq library
///        (P. G. Crosetto, "cupq: a CUDA priority queue for Dijkstra and A*",
///        https://github.com/crosetto/cupq, 2019), and many-to-many shortest
///        paths with one such heap per source.
///
/// **Entries and their order.** An entry is a (key, value) pair: a `float`
/// key and an `int` value. Entries are ordered by key, and entries of equal
/// key by value (lexicographic order, entry_less()); so the sequence a heap
/// pops is fully determined by what was pushed, duplicate keys included.
/// Keys must be below +infinity and not NaN: a warp heap refuses such pushes
/// (kInvalidKey). Internally, the unused lanes of a node hold the *sentinel*
/// (+infinity, INT_MAX), which orders after every valid entry.
///
/// **The node.** A node is 32 entries spread over the 32 lanes of a warp,
/// one per lane, sorted ascending across the lanes: lane 0 holds the node's
/// smallest entry, its *top*. In device memory a node is 32 consecutive keys
/// and 32 consecutive values, so one warp reads or writes it in one
/// coalesced access each.
///
/// **The heap.** A warp heap is a 32-ary heap of nodes: node i has the
/// children 32 i + 1 to 32 i + 32. The invariant is the heap property on the
/// tops, top(parent) ≤ top(child); since a node's top is its smallest entry,
/// the root's top is the smallest entry of the heap. All nodes but the last
/// are full; the last holds 1 to 32 entries (sentinels above them). The tops
/// are cached in shared memory (a key and a value per node), so that the
/// search for the smallest child reads 32 shared words, not 32 nodes.
///
/// **Errors.** Warp heaps report errors through flag bits, never by writing
/// out of bounds: kOverflow (a push found the heap full: the entry is
/// dropped), kUnderflow (a pop found it empty: it returns kEmptyKey and
/// kEmptyValue), kInvalidKey (a push of NaN or +infinity: dropped).
///
/// Common errors of every launcher:
/// @throws std::invalid_argument when a pointer is null although its count
///         is > 0, or a count exceeds its documented maximum; nothing is
///         launched then and nothing is written.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "cudalab/args.hpp"
#include "cudalab/device_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/graph/csr.cuh"
#include "cudalab/graph/dijkstra_reference.hpp"

/// @brief Warp-cooperative priority queues (chapter 5, exercises 5.1 to 5.4).
namespace cudalab::heap {

/// @brief Entries per node: one per lane of a warp.
inline constexpr int node_size = 32;

/// @brief The largest count (of nodes, queries or heaps) one launch accepts: 2^31 − 1.
inline constexpr std::size_t max_items = static_cast<std::size_t>(std::numeric_limits<int>::max());

/// @brief The largest heap capacity, in nodes (8192 nodes = 262,144 entries;
///        the cached tops of one heap then take 64 KiB of shared memory).
inline constexpr std::size_t max_capacity_nodes = 8192;

/// @brief Flag bit: a push found the heap full and dropped its entry.
inline constexpr unsigned kOverflow = 1u;
/// @brief Flag bit: a pop found the heap empty and returned kEmptyKey, kEmptyValue.
inline constexpr unsigned kUnderflow = 2u;
/// @brief Flag bit: a push of a NaN or +infinity key was refused (dropped).
inline constexpr unsigned kInvalidKey = 4u;
/// @brief Flag bit (5.4): a source or a target vertex id is outside [0, n).
inline constexpr unsigned kInvalidVertex = 8u;

/// @brief The key a pop of an empty heap returns, and the top key of an empty heap: +infinity.
inline constexpr float kEmptyKey = std::numeric_limits<float>::infinity();
/// @brief The value a pop of an empty heap returns, and the top value of an empty heap.
inline constexpr int kEmptyValue = -1;
/// @brief The value of the sentinel entry (+infinity, INT_MAX) that fills unused lanes.
inline constexpr int kSentinelValue = INT_MAX;

/// @brief The order of entries: by key, then by value. Keys are never NaN.
/// @return true when (ka, va) orders strictly before (kb, vb).
__host__ __device__ inline bool entry_less(float ka, int va, float kb, int vb) {
  return ka < kb || (ka == kb && va < vb);
}

/// @brief An entry of a warp heap: a key and the value it carries.
struct Entry {
  float key;  ///< the priority: smaller pops first
  int value;  ///< the payload (a vertex id in 5.4); breaks ties between equal keys
};

/// @brief entry_less() on two entries.
/// @return true when `a` orders strictly before `b`.
__host__ __device__ inline bool operator<(const Entry& a, const Entry& b) {
  return entry_less(a.key, a.value, b.key, b.value);
}

/// @brief One operation of a warp heap's script (exercise 5.3).
enum class OpKind : std::int32_t {
  push = 0,  ///< push (key, value)
  pop = 1,   ///< pop the smallest entry
};

/// @brief One step of a script: a push of (key, value) or a pop (key and
///        value ignored). Trivially copyable, 12 bytes.
struct HeapOp {
  OpKind kind;  ///< push or pop (any value other than push pops)
  float key;    ///< the key pushed (push only)
  int value;    ///< the value pushed (push only)
};

/// @brief What one step of a script did, as the warp heap reports it.
struct HeapStep {
  float key;        ///< pop: the key popped (kEmptyKey when empty); push: kEmptyKey
  int value;        ///< pop: the value popped (kEmptyValue when empty); push: kEmptyValue
  float top_key;    ///< the smallest key in the heap after the step (kEmptyKey when empty)
  int top_value;    ///< its value (kEmptyValue when empty)
  int size;         ///< the number of entries after the step
  unsigned flags;   ///< the flags this step raised (kOverflow, kUnderflow, kInvalidKey)
};

/// @brief A view of the device memory of `heaps` warp heaps of
///        `capacity_nodes` nodes each: heap h, node i, lane l lives at
///        keys[(h · capacity_nodes + i) · 32 + l] (values alike).
///
/// Trivially copyable; owns nothing (see HeapStorage). A launch starts every
/// heap empty, so the previous contents do not matter.
struct HeapStorageView {
  float* keys;                 ///< device pointer to heaps · capacity_nodes · 32 keys
  int* values;                 ///< device pointer to heaps · capacity_nodes · 32 values
  std::size_t heaps;           ///< number of heaps
  std::size_t capacity_nodes;  ///< nodes per heap (0 to max_capacity_nodes)

  /// @return the capacity of one heap in entries: 32 · capacity_nodes.
  std::size_t capacity_entries() const noexcept { return capacity_nodes * node_size; }
};

/// @brief The owner of the device memory of warp heaps (RAII, move only).
class HeapStorage {
 public:
  /// @brief Allocates (uninitialised) room for `heaps` heaps of
  ///        `capacity_nodes` nodes each. Synchronous.
  /// @throws std::invalid_argument when capacity_nodes > max_capacity_nodes.
  /// @throws cudalab::CudaError when the allocation fails.
  HeapStorage(std::size_t heaps, std::size_t capacity_nodes)
      : heaps_(heaps),
        capacity_nodes_(checked_capacity(capacity_nodes)),
        keys_(heaps * capacity_nodes * node_size),
        values_(heaps * capacity_nodes * node_size) {}
  /// @return the view launchers take.
  HeapStorageView view() noexcept { return {keys_.data(), values_.data(), heaps_, capacity_nodes_}; }

 private:
  static std::size_t checked_capacity(std::size_t capacity_nodes) {
    if (capacity_nodes > max_capacity_nodes)
      throw std::invalid_argument("HeapStorage: capacity_nodes = " + std::to_string(capacity_nodes) +
                                  " exceeds max_capacity_nodes = " + std::to_string(max_capacity_nodes));
    return capacity_nodes;
  }
  std::size_t heaps_;
  std::size_t capacity_nodes_;
  DeviceBuffer<float> keys_;
  DeviceBuffer<int> values_;
};

// ----------------------------------------------------------------------------- exercises

/// @brief Exercise 5.1: `replace_smallest` on `n_nodes` independent nodes,
///        one warp per node: insert the entry x[w] into node w and take out
///        the smallest entry of the 33.
///
/// Node w is `node_keys[32 w .. 32 w + 32)` with `node_values` alike, sorted
/// ascending by entry_less() (sentinels, if any, last). Afterwards node w
/// holds the 32 entries of node ∪ {x} but their smallest, still sorted, and
/// `evicted[w]` holds that smallest: the old top when it orders before x (or
/// equals it), else x itself (the node is then unchanged).
/// The device function that the kernel calls, one lane per entry, is the
/// exercise: one `__ballot_sync` finds the lanes whose entry is ≤ x (a
/// prefix of the warp), a find-most-significant-bit (`bfind`, or 31 − `__clz`)
/// gives the last of them, b, and one `__shfl_down_sync` moves lanes
/// 1 .. b down by one, so x lands in lane b.
/// @param node_keys      device pointer to 32 · n_nodes keys, updated in place
/// @param node_values    device pointer to 32 · n_nodes values, updated in place
/// @param n_nodes        number of nodes (warps), 0 ≤ n_nodes ≤ max_items
/// @param x_keys         device pointer to n_nodes keys to insert (not NaN)
/// @param x_values       device pointer to n_nodes values to insert
/// @param evicted_keys   device pointer to n_nodes outputs: the evicted keys
/// @param evicted_values device pointer to n_nodes outputs: the evicted values
/// @param stream         the stream to run on; asynchronous
/// @throws std::invalid_argument, cudalab::CudaError as in the file description.
/// Work O(32 n_nodes); steps O(1) per node (one ballot, one bfind, three shuffles).
/// Source: `Node::replaceSmallest` of cupq (Crosetto, 2019).
void replace_smallest(float* node_keys, int* node_values, std::size_t n_nodes, const float* x_keys,
                      const int* x_values, float* evicted_keys, int* evicted_values, cudaStream_t stream = nullptr);

/// @brief Exercise 5.2: `min_child` for `n_queries` parents, one warp per
///        query: the index of the child of `parents[q]` whose top is the
///        smallest, in a heap of `node_count` nodes whose tops are given.
///
/// The children of node p are the nodes 32 p + 1 to 32 p + 32 that exist
/// (index < node_count); the last parent may have fewer than 32 and a leaf
/// has none. `children[q]` receives the child c with the smallest top by
/// entry_less() (the smallest index among equal tops), or −1 when p has no
/// child (also when p < 0 or p ≥ node_count). Lane j loads the top of child
/// 32 p + 1 + j (a sentinel where it does not exist) and a shuffle reduction
/// of (key, value, index) finds the minimum.
/// @param top_keys    device pointer to node_count keys: the top key of each node
/// @param top_values  device pointer to node_count values: the top value of each node
/// @param node_count  number of nodes, 0 ≤ node_count ≤ max_items
/// @param parents     device pointer to n_queries node indices
/// @param n_queries   number of queries (warps), 0 ≤ n_queries ≤ max_items
/// @param children    device pointer to n_queries outputs
/// @param stream      the stream to run on; asynchronous
/// @throws std::invalid_argument, cudalab::CudaError as in the file description.
/// Work O(32 n_queries); steps O(log 32) = 5 shuffle rounds per query.
/// Source: `Heap::minChild` of cupq (Crosetto, 2019).
void min_child(const float* top_keys, const int* top_values, std::size_t node_count, const int* parents,
               std::size_t n_queries, int* children, cudaStream_t stream = nullptr);

/// @brief Exercise 5.3: runs `n_heaps` scripts, each on its own warp heap,
///        one warp per heap, and records what every step did.
///
/// Heap h starts empty in `storage` (heap h's slice; capacity
/// storage.capacity_nodes nodes = 32 · capacity_nodes entries) and executes
/// `ops[h · ops_per_heap + i]` for i = 0 .. ops_per_heap − 1 in order,
/// writing `steps[h · ops_per_heap + i]` (see HeapStep). A push inserts its
/// entry unless the heap is full (kOverflow) or the key is NaN or +infinity
/// (kInvalidKey); a pop removes the smallest entry by entry_less(), or
/// returns (kEmptyKey, kEmptyValue) and raises kUnderflow when the heap is
/// empty. No access ever leaves heap h's slice of `storage`.
///
/// The heap, in brief (the lesson has the drawings): a push puts the entry
/// into the last node by a sorted insertion (a new node when the last is
/// full); when it becomes that node's top, it climbs by swapping tops with
/// the parents whose top is larger. A pop takes the root's top, takes the
/// last entry of the last node out, puts it into the root with
/// replace_smallest, and sinks the root's new top: while the smallest child
/// (min_child) has a smaller top, replace_smallest puts the sinking entry
/// into that child and the child's old top comes up into the parent's lane 0.
/// Every node write updates the shared-memory cache of tops.
/// @param storage       the heaps' memory: storage.heaps ≥ n_heaps,
///                      storage.capacity_nodes ≤ max_capacity_nodes
/// @param ops           device pointer to n_heaps · ops_per_heap operations
/// @param ops_per_heap  script length, ≥ 0
/// @param n_heaps       number of scripts (warps), 0 ≤ n_heaps ≤ max_items
/// @param steps         device pointer to n_heaps · ops_per_heap outputs
/// @param stream        the stream to run on; asynchronous
/// @throws std::invalid_argument as in the file description, and when
///         storage.heaps < n_heaps, storage.capacity_nodes >
///         max_capacity_nodes, a storage pointer is null with capacity > 0,
///         or n_heaps · ops_per_heap overflows.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work per operation O(log_32 size) node operations, each O(32) lanes in
/// O(1) steps; shared memory 8 · capacity_nodes bytes per warp.
/// Source: the `Heap` of cupq (Crosetto, 2019); the node-top invariant is
/// that of heaps of sorted nodes (N. Deo and S. Prasad, "Parallel heap: an
/// optimal parallel priority queue", J. Supercomputing 6, 1992).
void warp_heap(HeapStorageView storage, const HeapOp* ops, std::size_t ops_per_heap, std::size_t n_heaps,
               HeapStep* steps, cudaStream_t stream = nullptr);

/// @brief Exercise 5.4: many-to-many shortest paths. Dijkstra's algorithm
///        from each of `n_sources` sources, one warp per source, each with its
///        own warp heap, over one shared CSR graph.
///
/// A warp settles its source's vertices in order of distance: it pops the
/// closest pending (distance, vertex) entry, skips it when it is stale (its
/// key is above the vertex's current distance: a shorter path was found
/// after it was pushed), else relaxes the vertex's out-edges with one lane
/// per edge and pushes every vertex whose distance improved (lazy deletion:
/// no decrease-key). Heap keys are `float(distance)`, the exact distance is
/// kept in a 64-bit row per source; since the check above compares with the
/// exact distance, the result is exact even where floats round (beyond
/// 2^24 the order of pops is merely approximate, which costs extra pops).
///
/// The launch runs W = min(storage.heaps, n_sources) warps; warp w handles
/// the sources w, w + W, w + 2W, ... with heap w of `storage`.
/// - **All distances** (targets null): `distances[s · n + v]` receives the
///   distance from `sources[s]` to v, kUnreachable where there is no path;
///   the row itself is the warp's working array.
/// - **A target list**: `distances[s · n_targets + t]` receives the distance
///   from `sources[s]` to `targets[t]`; the warp works in
///   `scratch[w · n .. (w + 1) · n)`.
///
/// `flags[s]` receives the flags of source s: kOverflow when its heap was
/// full once (a relaxation was lost: the row may be wrong; give the heap more
/// capacity), kInvalidVertex when `sources[s]` or a target is outside
/// [0, n) (its distances are kUnreachable).
/// @param graph      the graph (device view); weights must be ≥ 0
/// @param sources    device pointer to n_sources vertex ids
/// @param n_sources  number of sources, 0 ≤ n_sources ≤ max_items
/// @param targets    device pointer to n_targets vertex ids, or null for all vertices
/// @param n_targets  number of targets (ignored when targets is null)
/// @param distances  device pointer to n_sources · n (or n_sources · n_targets) outputs
/// @param flags      device pointer to n_sources outputs
/// @param storage    the warps' heaps: storage.heaps ≥ 1 when n_sources > 0
/// @param scratch    device pointer to min(storage.heaps, n_sources) · n distances;
///                   only read when targets is not null (may be null otherwise)
/// @param stream     the stream to run on; asynchronous
/// @throws std::invalid_argument when the graph has a negative weight, a
///         pointer is null although needed, storage.heaps is 0 with sources
///         to run, storage.capacity_nodes exceeds max_capacity_nodes, or a
///         count exceeds max_items; nothing is launched then.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work per source O((n + m) log_32(heap size)) node operations; the sources
/// run in parallel, one per warp. Shared memory 8 · capacity_nodes bytes
/// per warp. Source: E. W. Dijkstra, "A note on two problems in connexion
/// with graphs", Numerische Mathematik 1, 1959; the one-warp-per-source
/// scheme of cupq's Dijkstra solver (Crosetto, 2019).
void dijkstra_warp_heap(graph::CsrView graph, const graph::vertex_t* sources, std::size_t n_sources,
                        const graph::vertex_t* targets, std::size_t n_targets, graph::dist64_t* distances,
                        unsigned* flags, HeapStorageView storage, graph::dist64_t* scratch,
                        cudaStream_t stream = nullptr);

namespace detail {
/// @brief The checks of a storage view shared by the launchers of 5.3 and 5.4.
/// @throws std::invalid_argument as described for warp_heap.
inline void check_storage(const char* function, const HeapStorageView& s, std::size_t heaps_needed) {
  if (s.capacity_nodes > max_capacity_nodes)
    throw std::invalid_argument(std::string(function) + ": storage.capacity_nodes = " +
                                std::to_string(s.capacity_nodes) + " exceeds max_capacity_nodes = " +
                                std::to_string(max_capacity_nodes));
  if (s.heaps < heaps_needed)
    throw std::invalid_argument(std::string(function) + ": storage holds " + std::to_string(s.heaps) +
                                " heaps, " + std::to_string(heaps_needed) + " are needed");
  require_pointer(function, "storage.keys", s.keys, heaps_needed * s.capacity_nodes);
  require_pointer(function, "storage.values", s.values, heaps_needed * s.capacity_nodes);
}

/// @brief The block shape of a kernel that runs one warp heap per warp.
struct HeapLaunch {
  int warps;                 ///< warps (heaps) per block
  std::size_t shared_bytes;  ///< dynamic shared memory per block: the cached tops of its heaps
};

/// @brief Warps per block such that the blocks' cached tops (8 bytes per
///        node and heap) take at most 32 KiB, between 1 and `max_warps`; a
///        single heap of more than 4096 nodes takes more (up to 64 KiB, which
///        the launcher must allow with cudaFuncAttributeMaxDynamicSharedMemorySize).
inline HeapLaunch heap_launch(std::size_t capacity_nodes, int max_warps) {
  const std::size_t tops_bytes = capacity_nodes * (sizeof(float) + sizeof(int));
  const std::size_t fit = tops_bytes == 0 ? static_cast<std::size_t>(max_warps) : (32 * 1024) / tops_bytes;
  const int warps = static_cast<int>(std::clamp<std::size_t>(fit, 1, static_cast<std::size_t>(max_warps)));
  return {warps, static_cast<std::size_t>(warps) * tops_bytes};
}
}  // namespace detail

}  // namespace cudalab::heap
