// Exercise 5.4: many-to-many shortest paths, one warp and one warp heap per source.
// Lesson: chapters/05-warp-heap/README.md, "5.4".
// Grade:  tools/grade 5.4      Hints: tools/grade --hint 5.4
#include <algorithm>
#include <string>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/heap.cuh"
#include "cudalab/warp.cuh"
#include "cudalab/warp_heap.cuh"

namespace cudalab::heap {
namespace {

using graph::dist64_t;
using graph::kUnreachable;
using graph::offset_t;
using graph::vertex_t;

constexpr int kMaxWarpsPerBlock = 4;  // heaps per block, fewer for large capacities (detail::heap_launch)

// The warp heap of exercise 5.3, given by cudalab/warp_heap.cuh: WarpHeap
// with push, pop, empty and size, and WarpHeap::for_warp, a warp's heap over
// its slice of the storage and its tops in shared memory.
using device::WarpHeap;

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
  WarpHeap heap{WarpHeap::for_warp(storage, w, shared_tops)};  // heap w, its tops in this warp's part
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
        // 64-bit edge indices: u's edges may end at 2^32 - 1, where a 32-bit base + lane wraps around.
        for (std::size_t base = g.row_offsets[u]; base < end; base += 32) {
          // One lane per out-edge proposes a shorter distance ...
          const std::size_t e = base + static_cast<std::size_t>(lane);
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
  // // TODO(5.4): give the warp its heap,
  // // WarpHeap heap{WarpHeap::for_warp(storage, w, shared_tops)}; for the
  // // sources s = w, w + n_warps, ...: start it empty, fill the distance
  // // row (distances + s * n, or scratch + w * n with targets) with
  // // kUnreachable, set the source's to 0, push (0, source) and run Dijkstra:
  // // pop, skip stale entries, relax the out-edges one lane per edge (index
  // // them in 64 bits: an edge list may end at 2^32 - 1), push the improved
  // // vertices. Write the targets' distances and flags[s].
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
