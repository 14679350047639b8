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
  // TODO(5.4): give the warp its heap,
  // WarpHeap heap{WarpHeap::for_warp(storage, w, shared_tops)}; for the
  // sources s = w, w + n_warps, ...: start it empty, fill the distance
  // row (distances + s * n, or scratch + w * n with targets) with
  // kUnreachable, set the source's to 0, push (0, source) and run Dijkstra:
  // pop, skip stale entries, relax the out-edges one lane per edge (index
  // them in 64 bits: an edge list may end at 2^32 - 1), push the improved
  // vertices. Write the targets' distances and flags[s].
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
