// Exercise 5.4: many-to-many shortest paths, one warp and one warp heap per source.
// Lesson: chapters/05-warp-heap/README.md, "5.4".
// Grade:  tools/grade 5.4      Hints: tools/grade --hint 5.4
#include <algorithm>
#include <climits>
#include <string>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/heap.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::heap {
namespace {

using graph::dist64_t;
using graph::kUnreachable;
using graph::offset_t;
using graph::vertex_t;

constexpr int kMaxWarpsPerBlock = 4;  // heaps per block, fewer for large capacities (detail::heap_launch)

// BEGIN SOLUTION
__device__ __forceinline__ Entry shfl_entry(const Entry& e, int src) {
  return {__shfl_sync(kFullMask, e.key, src), __shfl_sync(kFullMask, e.value, src)};
}

// Exercise 5.1: insert x into the warp-sorted node whose lane entries
// are `mine`, remove the smallest of the 33 and return it to every lane.
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

// Exercise 5.2: the child of `parent` with the smallest cached top,
// or -1 when it has none.
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

  // Inserts x; returns the flags raised (0, kOverflow or kInvalidKey).
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

  // Removes the smallest entry into *out; returns the flags raised (0 or
  // kUnderflow, when empty: *out = (kEmptyKey, kEmptyValue)).
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
// STARTER:
// // TODO(5.4): your warp heap of exercise 5.3: shfl_entry, replace_smallest,
// // min_child and the struct WarpHeap with push, pop, empty and size.
// END SOLUTION

// Warp w runs Dijkstra from the sources w, w + n_warps, ... with heap w.
__global__ void dijkstra_kernel(graph::CsrView g, const vertex_t* __restrict__ sources, std::size_t n_sources,
                                const vertex_t* __restrict__ targets, std::size_t n_targets,
                                dist64_t* __restrict__ distances, unsigned* __restrict__ flags,
                                HeapStorageView storage, dist64_t* __restrict__ scratch, std::size_t n_warps) {
  extern __shared__ float shared_tops[];  // [warps][capacity] keys, then [warps][capacity] values
  const unsigned warp = threadIdx.x / 32;
  const std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x / 32) + warp;
  if (w >= n_warps) return;  // whole warps leave; no block-wide barrier follows
  // BEGIN SOLUTION
  const auto lane = static_cast<int>(threadIdx.x & 31u);
  const std::size_t n = g.num_vertices;
  const auto capacity = static_cast<int>(storage.capacity_nodes);
  const std::size_t slice = static_cast<std::size_t>(capacity) * node_size;
  WarpHeap heap{storage.keys + w * slice,
                storage.values + w * slice,
                shared_tops + static_cast<std::size_t>(warp) * capacity,
                reinterpret_cast<int*>(shared_tops + static_cast<std::size_t>(blockDim.x / 32) * capacity) +
                    static_cast<std::size_t>(warp) * capacity,
                capacity,
                0};
  for (std::size_t s = w; s < n_sources; s += n_warps) {
    dist64_t* dist = targets != nullptr ? scratch + w * n : distances + s * n;
    for (std::size_t v = static_cast<std::size_t>(lane); v < n; v += 32) dist[v] = kUnreachable;
    __syncwarp();  // the fill before lane 0's writes and every lane's reads
    const vertex_t source = sources[s];
    unsigned f = 0;
    heap.size = 0;
    if (source >= 0 && static_cast<std::size_t>(source) < n) {
      if (lane == 0) dist[source] = 0;
      __syncwarp();
      f |= heap.push(Entry{0.0f, source});
      while (!heap.empty()) {
        Entry top{};
        heap.pop(&top);
        const vertex_t u = top.value;
        // Only lane 0 writes distances: its reading is the one all lanes use.
        const dist64_t d = __shfl_sync(kFullMask, lane == 0 ? dist[u] : dist64_t{0}, 0);
        if (top.key > static_cast<float>(d)) continue;  // stale: u was reached by a shorter path since
        const offset_t end = g.row_offsets[u + 1];
        for (offset_t base = g.row_offsets[u]; base < end; base += 32) {
          // One lane per out-edge proposes a shorter distance ...
          const offset_t e = base + static_cast<offset_t>(lane);
          vertex_t v = 0;
          dist64_t nd = 0;
          bool improves = false;
          if (e < end) {
            v = g.col_indices[e];
            nd = d + g.weights[e];
            improves = nd < dist[v];  // may read a stale (larger) distance: lane 0 checks again below
          }
          // ... and lane 0 applies the proposals one by one, in lane order
          // (two edges of one batch may lead to the same vertex).
          for (unsigned mask = __ballot_sync(kFullMask, improves); mask != 0u; mask &= mask - 1) {
            const int l = __ffs(static_cast<int>(mask)) - 1;
            const vertex_t vl = __shfl_sync(kFullMask, v, l);
            const dist64_t ndl = __shfl_sync(kFullMask, nd, l);
            int better = 0;
            if (lane == 0 && ndl < dist[vl]) {
              dist[vl] = ndl;
              better = 1;
            }
            if (__shfl_sync(kFullMask, better, 0) != 0) f |= heap.push(Entry{static_cast<float>(ndl), vl});
          }
        }
        __syncwarp();  // lane 0's distance writes before every lane's next reads
      }
    } else {
      f |= kInvalidVertex;  // the row stays kUnreachable
    }
    __syncwarp();
    if (targets != nullptr) {
      bool bad = false;
      for (std::size_t t = static_cast<std::size_t>(lane); t < n_targets; t += 32) {
        const vertex_t x = targets[t];
        const bool ok = x >= 0 && static_cast<std::size_t>(x) < n;
        bad = bad || !ok;
        distances[s * n_targets + t] = ok ? dist[x] : kUnreachable;
      }
      if (__any_sync(kFullMask, bad)) f |= kInvalidVertex;
      __syncwarp();  // the reads of this row before the next source's fill
    }
    if (lane == 0) flags[s] = f;
  }
  // STARTER:
  // // TODO(5.4): for the sources s = w, w + n_warps, ...: fill the distance
  // // row (distances + s * n, or scratch + w * n with targets) with
  // // kUnreachable, set the source's to 0, push (0, source) and run Dijkstra:
  // // pop, skip stale entries, relax the out-edges one lane per edge, push
  // // the improved vertices. Write the targets' distances and flags[s].
  // END SOLUTION
}

}  // namespace

void dijkstra_warp_heap(graph::CsrView graph, const vertex_t* sources, std::size_t n_sources,
                        const vertex_t* targets, std::size_t n_targets, dist64_t* distances, unsigned* flags,
                        HeapStorageView storage, dist64_t* scratch, cudaStream_t stream) {
  constexpr const char* f = "dijkstra_warp_heap";
  if (graph.has_negative_weights)
    throw std::invalid_argument("dijkstra_warp_heap: the graph has a negative edge weight; Dijkstra's algorithm "
                                "needs weights >= 0 (use Bellman-Ford, chapter 6)");
  require_count_at_most(f, n_sources, max_items);
  const std::size_t n = graph.num_vertices;
  const std::size_t row = targets != nullptr ? n_targets : n;
  if (targets != nullptr) require_count_at_most(f, n_targets, max_items);
  if (row != 0 && n_sources > std::numeric_limits<std::size_t>::max() / row)
    throw std::invalid_argument("dijkstra_warp_heap: n_sources * row length overflows");
  require_pointer(f, "graph.row_offsets", graph.row_offsets, n == 0 ? 0 : n + 1);
  require_pointer(f, "graph.col_indices", graph.col_indices, graph.num_edges);
  require_pointer(f, "graph.weights", graph.weights, graph.num_edges);
  require_pointer(f, "sources", sources, n_sources);
  require_pointer(f, "distances", distances, n_sources * row);
  require_pointer(f, "flags", flags, n_sources);
  if (n_sources == 0) return;
  if (storage.heaps == 0) throw std::invalid_argument("dijkstra_warp_heap: storage holds no heap");
  const std::size_t n_warps = std::min(storage.heaps, n_sources);
  detail::check_storage(f, storage, n_warps);
  if (targets != nullptr) require_pointer(f, "scratch", scratch, n_warps * n);
  const auto [warps, shared] = detail::heap_launch(storage.capacity_nodes, kMaxWarpsPerBlock);
  set_dynamic_shared(dijkstra_kernel, shared);  // above 48 KiB: opt in, within the device's limit
  const auto blocks = static_cast<unsigned>((n_warps + warps - 1) / warps);
  dijkstra_kernel<<<blocks, 32 * warps, shared, stream>>>(graph, sources, n_sources, targets, n_targets, distances,
                                                          flags, storage, scratch, n_warps);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::heap
