/// @file sssp.cuh
/// @brief Chapter 6, exercises 6.1 to 6.6: single-source shortest paths on
///        the GPU, the same problem solved five ways: Dijkstra with a
///        parallel ExtractMin, edge-parallel and worklist Bellman-Ford,
///        delta-stepping, and Bellman-Ford as a (min, +) SpMV over CSR and ELL.
///
/// **Common contract.**
/// - **Graph.** A directed graph in device memory, given as a
///   cudalab::graph::CsrView (see cudalab/graph/csr.cuh): n vertices, m
///   edges, int32 vertex ids and weights, uint32 row offsets; self loops and
///   parallel edges allowed. 6.1 to 6.4 take the out-edges (row u lists the
///   edges `u -> v`); the SpMV exercises 6.5 and 6.6 take the **in-edges**
///   (the transpose: row v lists the edges `u -> v` by their tail u), since
///   each thread there computes one vertex's new distance from its
///   predecessors, as a row of a matrix-vector product does.
/// - **Distances.** Exact integers. 6.1 and 6.4 need non-negative weights and
///   write `dist_t` (uint32) distances, kInfinity for unreachable vertices;
///   every finite shortest distance must be below kInfinity (the solutions
///   never relax an edge whose sum reaches it). The Bellman-Ford exercises
///   6.2, 6.3, 6.5 and 6.6 accept negative weights and write
///   `signed_dist_t` (int64) distances, kSignedInfinity for unreachable
///   vertices.
/// - **Negative cycles.** A Bellman-Ford exercise whose source reaches a
///   cycle of negative total weight stops after at most n rounds (or as soon
///   as a distance falls to kNegativeFloor) and reports it in
///   Stats::negative_cycle; the distances are then unspecified (finite or
///   infinite, never below kNegativeFloor). It never loops forever.
/// - **Synchronous.** Unlike the launchers of chapters 1 to 4 these
///   functions wait for the GPU: each round ends with a small device-to-host
///   copy (a changed flag, a queue length) that decides whether another
///   round is needed, as every practical GPU SSSP does. They enqueue
///   everything on `stream` and return after it has drained, with the
///   Stats of the run; scratch memory comes from the stream-ordered pool
///   (cudalab::AsyncBuffer).
///
/// Common errors (checked before any CUDA call; nothing is launched and
/// nothing written then):
/// @throws std::invalid_argument when the graph has no vertices, the source
///         is outside [0, n), an output pointer is null, a graph array is
///         null while its length is positive, or (6.1, 6.4) the graph has a
///         negative weight (CsrView::has_negative_weights), or (6.4) delta
///         is 0, or the graph is too large (over kMaxVertices vertices, over
///         kMaxEdges edges, or (6.6) an ELL width over kMaxEllWidth).
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
///
/// Sources: Dijkstra 1959; Bellman 1958 and Ford 1956; Meyer and Sanders,
/// "Delta-stepping: a parallelizable shortest path algorithm", J.
/// Algorithms 49(1), 2003; Davidson, Baxter, Garland and Owens, "Work-efficient
/// parallel GPU methods for single-source shortest paths", IPDPS 2014; Bell
/// and Garland, "Implementing sparse matrix-vector multiplication on
/// throughput-oriented processors", SC 2009.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "cudalab/args.hpp"
#include "cudalab/async_buffer.cuh"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/graph/csr.cuh"

namespace cudalab::sssp {

using graph::CsrView;
using graph::EllView;
using graph::vertex_t;
using graph::weight_t;

/// @brief A distance of 6.1 and 6.4 (non-negative weights): unsigned 32-bit.
using dist_t = std::uint32_t;
/// @brief The distance of an unreachable vertex in 6.1 and 6.4.
inline constexpr dist_t kInfinity = std::numeric_limits<dist_t>::max();

/// @brief A distance of the Bellman-Ford exercises (6.2, 6.3, 6.5, 6.6): signed 64-bit.
using signed_dist_t = std::int64_t;
/// @brief The distance of an unreachable vertex in the Bellman-Ford exercises.
inline constexpr signed_dist_t kSignedInfinity = std::numeric_limits<signed_dist_t>::max();
/// @brief The lowest distance a Bellman-Ford exercise ever writes: a
///        relaxation that would go below it is clamped to it and reported
///        as a negative cycle (no simple path of fewer than \f$2^{31}\f$
///        edges of 32-bit weights comes near it), so sums never overflow.
inline constexpr signed_dist_t kNegativeFloor = std::numeric_limits<signed_dist_t>::min() / 2;

/// @brief The parent of the source and of unreachable vertices (6.4).
inline constexpr vertex_t kNoParent = -1;

/// @brief What a run did, for the benchmarks' counters and the lesson.
struct Stats {
  std::uint64_t iterations = 0;  ///< rounds: settled vertices (6.1), relaxation sweeps (6.2, 6.5, 6.6), frontiers (6.3), light and heavy phases (6.4)
  std::uint64_t buckets = 0;     ///< buckets processed (6.4; 0 elsewhere)
  bool negative_cycle = false;   ///< the source reaches a negative cycle (Bellman-Ford exercises; false elsewhere)
};

/// @brief Exercise 6.1: Dijkstra's algorithm with ExtractMin done as a
///        parallel reduction over the unsettled vertices.
///
/// Each of at most n steps reduces (distance, vertex) over all unsettled
/// vertices to find the closest one, settles it, and relaxes its out-edges
/// in parallel; it stops when the closest unsettled vertex is unreachable.
/// Work O(n² + m), step O(n log n): every step touches every vertex, which
/// is why it loses on sparse graphs to the work-efficient methods below.
/// @param graph  out-edges, non-negative weights
/// @param source in [0, n)
/// @param dist   device array of n; receives the distances (kInfinity: unreachable)
/// @param stream the stream to run on
/// @return Stats::iterations = the number of settled vertices.
/// @throws std::invalid_argument, cudalab::CudaError (see the file comment).
/// Source: Dijkstra 1959; the parallel ExtractMin as in Crauser, Mehlhorn,
/// Meyer and Sanders, "A parallelization of Dijkstra's shortest path
/// algorithm", MFCS 1998 (their simplest variant).
Stats dijkstra_parallel_extract_min(CsrView graph, vertex_t source, dist_t* dist, cudaStream_t stream);

/// @brief Exercise 6.2: Bellman-Ford with one thread per edge relaxing with
///        `atomicMin`, sweep after sweep until no distance changes.
///
/// Sweep: every edge `u -> v` with a finite `dist[u]` lowers `dist[v]` to
/// `dist[u] + w` by atomicMin and raises a changed flag when it succeeds.
/// Without a negative cycle at most n - 1 sweeps change something; a change
/// in sweep n means a negative cycle.
/// Work O(m) per sweep, O(n m) in all; step O(1) per sweep.
/// @param graph  out-edges; negative weights allowed
/// @param source in [0, n)
/// @param dist   device array of n; receives the distances (kSignedInfinity: unreachable)
/// @param stream the stream to run on
/// @return Stats::iterations = sweeps, Stats::negative_cycle.
/// @throws std::invalid_argument, cudalab::CudaError (see the file comment).
/// Source: Bellman, "On a routing problem", Quart. Appl. Math. 16, 1958;
/// Harish and Narayanan, "Accelerating large graph algorithms on the GPU
/// using CUDA", HiPC 2007.
Stats bellman_ford_edge_parallel(CsrView graph, vertex_t source, signed_dist_t* dist, cudaStream_t stream);

/// @brief Exercise 6.3: worklist Bellman-Ford: only the vertices whose
///        distance changed in the last round relax their out-edges.
///
/// The frontier is a device queue; a vertex whose distance a round lowers
/// is pushed to the next round's queue at most once (a per-vertex stamp
/// claimed with an atomic), so a queue never holds more than n vertices. A
/// frontier still non-empty after n rounds means a negative cycle.
/// Work O(edges of the frontier vertices) per round; no more than 6.2's
/// sweep and usually far less.
/// @param graph  out-edges; negative weights allowed
/// @param source in [0, n)
/// @param dist   device array of n; receives the distances (kSignedInfinity: unreachable)
/// @param stream the stream to run on
/// @return Stats::iterations = rounds (frontiers processed), Stats::negative_cycle.
/// @throws std::invalid_argument, cudalab::CudaError (see the file comment).
/// Source: the queue-based Bellman-Ford of Moore, "The shortest path through
/// a maze", 1959; on GPUs: Davidson et al., IPDPS 2014 ("workfront sweep").
Stats bellman_ford_worklist(CsrView graph, vertex_t source, signed_dist_t* dist, cudaStream_t stream);

/// @brief Exercise 6.4: delta-stepping with buckets of width delta, light
///        edges (weight ≤ delta) relaxed phase after phase inside a bucket,
///        heavy edges once per bucket, and a parent array.
///
/// Bucket i holds the vertices with distance in [i·delta, (i+1)·delta). The
/// smallest non-empty bucket is emptied by light phases (which may refill
/// it) until it stays empty; then the heavy edges of every vertex it held
/// are relaxed once. Pending vertices of later buckets wait in a "far"
/// list, split when the next bucket is chosen. Distance and parent are
/// packed in one 64-bit word updated by compare-and-swap on strict
/// improvement only, so the parents always form a shortest-path tree, even
/// with zero-weight edges.
/// Work O(n + m + relaxations repeated inside buckets); steps about
/// (number of buckets) × (light phases per bucket). delta = 1 behaves like
/// Dijkstra with ties, delta ≥ the largest weight like worklist Bellman-Ford.
/// @param graph  out-edges, non-negative weights
/// @param source in [0, n)
/// @param delta  the bucket width, ≥ 1 (in weight units)
/// @param dist   device array of n; receives the distances (kInfinity: unreachable)
/// @param parent device array of n; receives the shortest-path tree: the
///               tail of the last edge of a shortest path, kNoParent for the
///               source and unreachable vertices
/// @param stream the stream to run on
/// @return Stats::iterations = light and heavy phases, Stats::buckets.
/// @throws std::invalid_argument, cudalab::CudaError (see the file comment).
/// Source: Meyer and Sanders, J. Algorithms 49(1), 2003; the far list as in
/// Davidson et al., IPDPS 2014 ("near-far").
Stats delta_stepping(CsrView graph, vertex_t source, dist_t delta, dist_t* dist, vertex_t* parent,
                     cudaStream_t stream);

/// @brief Exercise 6.5: Bellman-Ford as repeated (min, +) sparse
///        matrix-vector products over the in-edges in CSR, one thread per row.
///
/// Iteration: \f$x'_v = \min(x_v, \min_{(u,v)} x_u + w_{uv})\f$ for every
/// v (Jacobi: read x, write x'), until x' = x; a change in iteration n
/// means a negative cycle.
/// Work O(n + m) per iteration; at most n iterations (the number of edges
/// on the longest shortest path, plus one).
/// @param in_edges the transpose of the graph (cudalab::graph::transpose):
///                 row v lists the edges `u -> v`, column index u
/// @param source   in [0, n)
/// @param dist     device array of n; receives the distances (kSignedInfinity: unreachable)
/// @param stream   the stream to run on
/// @return Stats::iterations = products computed, Stats::negative_cycle.
/// @throws std::invalid_argument, cudalab::CudaError (see the file comment).
/// Source: the (min, +) semiring formulation, e.g. Kepner and Gilbert,
/// "Graph Algorithms in the Language of Linear Algebra", SIAM 2011, ch. 3;
/// the CSR "scalar" kernel of Bell and Garland, SC 2009.
Stats spmv_bellman_ford_csr(CsrView in_edges, vertex_t source, signed_dist_t* dist, cudaStream_t stream);

/// @brief Exercise 6.6: the same iteration as 6.5 over the in-edges in ELL
///        (padded, column-major), one thread per row: consecutive threads
///        read consecutive words.
///
/// @param in_edges the transpose of the graph in ELL (cudalab::graph::to_ell
///                 of cudalab::graph::transpose), width at most
///                 cudalab::graph::kMaxEllWidth; padding entries
///                 (cudalab::graph::Ell::kPadding) are skipped
/// @param source   in [0, n)
/// @param dist     device array of n; receives the distances (kSignedInfinity: unreachable)
/// @param stream   the stream to run on
/// @return Stats::iterations = products computed, Stats::negative_cycle.
/// @throws std::invalid_argument, cudalab::CudaError (see the file comment).
/// Work O(n · width) per iteration: the padding is read too, which is why
/// ELL wins on road graphs (width 4 or so) and cannot even be built for
/// power-law graphs.
/// Source: Bell and Garland, SC 2009 (ELL kernel).
Stats spmv_bellman_ford_ell(EllView in_edges, vertex_t source, signed_dist_t* dist, cudaStream_t stream);

namespace detail {

/// Argument checks shared by every exercise (see the file comment).
inline void check_sssp_arguments(const char* fn, const CsrView& g, vertex_t source, const void* dist,
                                 bool needs_non_negative) {
  if (g.num_vertices == 0) throw std::invalid_argument(std::string(fn) + ": the graph has no vertices");
  if (g.num_vertices > graph::kMaxVertices || g.num_edges > graph::kMaxEdges)
    throw std::invalid_argument(std::string(fn) + ": the graph is too large");
  if (source < 0 || static_cast<std::size_t>(source) >= g.num_vertices)
    throw std::invalid_argument(std::string(fn) + ": source " + std::to_string(source) + " is outside [0, " +
                                std::to_string(g.num_vertices) + ")");
  require_pointer(fn, "graph.row_offsets", g.row_offsets, g.num_vertices + 1);
  require_pointer(fn, "graph.col_indices", g.col_indices, g.num_edges);
  require_pointer(fn, "graph.weights", g.weights, g.num_edges);
  require_pointer(fn, "dist", dist, g.num_vertices);
  if (needs_non_negative && g.has_negative_weights)
    throw std::invalid_argument(std::string(fn) +
                                ": the graph has a negative weight (use a Bellman-Ford exercise for those)");
}

/// The same checks for an ELL view.
inline void check_sssp_arguments(const char* fn, const EllView& g, vertex_t source, const void* dist) {
  if (g.num_rows == 0) throw std::invalid_argument(std::string(fn) + ": the graph has no vertices");
  if (g.num_rows > graph::kMaxVertices || g.width > graph::kMaxEllWidth ||
      (g.width != 0 && g.num_rows * g.width / g.width != g.num_rows))
    throw std::invalid_argument(std::string(fn) + ": the graph is too large");
  if (source < 0 || static_cast<std::size_t>(source) >= g.num_rows)
    throw std::invalid_argument(std::string(fn) + ": source " + std::to_string(source) + " is outside [0, " +
                                std::to_string(g.num_rows) + ")");
  require_pointer(fn, "graph.col_indices", g.col_indices, g.num_rows * g.width);
  require_pointer(fn, "graph.weights", g.weights, g.num_rows * g.width);
  require_pointer(fn, "dist", dist, g.num_rows);
}

/// The argument checks of delta_stepping(): check_sssp_arguments (weights
/// ≥ 0), a parent array of n, and delta ≥ 1; throws std::invalid_argument
/// as described there, before anything is launched.
inline void check_delta_stepping_arguments(const char* fn, const CsrView& g, vertex_t source, dist_t delta,
                                           const dist_t* dist, const vertex_t* parent) {
  check_sssp_arguments(fn, g, source, dist, true);
  require_pointer(fn, "parent", parent, g.num_vertices);
  if (delta == 0) throw std::invalid_argument(std::string(fn) + ": delta must be at least 1");
}

/// Blocks of `block` threads for a grid-stride loop over `count` items: at
/// most enough to fill the GPU once, at least one.
inline unsigned grid_for(std::size_t count, int block) {
  const std::size_t wave = full_wave_blocks(block);
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(wave, (count + block - 1) / block)));
}

/// @brief The sum of a relaxation of the Bellman-Ford exercises (6.2, 6.3,
///        6.5, 6.6), clamped at kNegativeFloor: given code, called where an
///        edge u -> v of weight w is relaxed.
/// @param du       dist[u], finite (not kSignedInfinity) and at least kNegativeFloor
/// @param w        the edge's weight, any 32-bit value
/// @param clamped  device pointer to a flag: set to 1 when the sum was clamped
/// @return du + w, or kNegativeFloor where du + w is below it.
///
/// With |w| < 2^31 and du >= kNegativeFloor = -2^62 the sum cannot overflow,
/// and a clamped sum proves a negative cycle: only a walk of more than
/// 2^31 edges (n rounds of relaxations chained within rounds) gets below
/// the floor, since a simple path has fewer than 2^31 edges. The clamp is
/// given rather than written by the student because no test of a size a
/// GPU can hold reaches the floor, so no test could grade it. Work O(1).
__device__ __forceinline__ signed_dist_t clamped_sum(signed_dist_t du, weight_t w, int* clamped) {
  const signed_dist_t sum = du + w;
  if (sum >= kNegativeFloor) return sum;
  *clamped = 1;
  return kNegativeFloor;
}

/// dist[v] = `zero` at the source, `infinity` elsewhere.
template <class D>
__global__ void init_distances_kernel(D* dist, std::size_t n, vertex_t source, D zero, D infinity) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dist[v] = v == static_cast<std::size_t>(source) ? zero : infinity;
}

/// Fills `dist` (n entries) as init_distances_kernel does, on `stream`.
template <class D>
void init_distances(D* dist, std::size_t n, vertex_t source, D infinity, cudaStream_t stream) {
  constexpr int kBlock = 256;
  init_distances_kernel<D><<<grid_for(n, kBlock), kBlock, 0, stream>>>(dist, n, source, D{0}, infinity);
  CUDALAB_CHECK_LAUNCH();
}

/// The Jacobi iteration of 6.5 and 6.6: x = the initial distances (in
/// `dist`), then `product(x, y, flags)` enqueues y = x ⊕ (A ⊗ x) (flags[0]:
/// y differs from x; flags[1]: a sum was clamped) until nothing changes, or
/// a negative cycle shows (a change in product n, or a clamp). The last
/// vector ends in `dist`. Waits for the stream.
template <class Product>
Stats iterate_min_plus_products(std::size_t n, vertex_t source, signed_dist_t* dist, cudaStream_t stream,
                                Product&& product) {
  AsyncBuffer<signed_dist_t> other(n, stream);
  AsyncBuffer<int> flags(2, stream);
  init_distances(dist, n, source, kSignedInfinity, stream);
  signed_dist_t* x = dist;
  signed_dist_t* y = other.data();
  Stats stats;
  for (std::uint64_t iteration = 1;; ++iteration) {
    flags.fill_bytes(0);
    product(static_cast<const signed_dist_t*>(x), y, flags.data());
    int host[2] = {0, 0};
    CUDALAB_CHECK(cudaMemcpyAsync(host, flags.data(), sizeof(host), cudaMemcpyDeviceToHost, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    stats.iterations = iteration;
    std::swap(x, y);  // x: the newest vector
    // Product k gives the shortest paths of at most k edges: without a
    // negative cycle product n changes nothing.
    if (host[1] != 0 || (host[0] != 0 && iteration >= n)) {
      stats.negative_cycle = true;
      break;
    }
    if (host[0] == 0) break;
  }
  if (x != dist)
    CUDALAB_CHECK(cudaMemcpyAsync(dist, x, n * sizeof(signed_dist_t), cudaMemcpyDeviceToDevice, stream));
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  return stats;
}

/// iterate_min_plus_products with the products' grid worked out here once:
/// grid_for(n, block) blocks of `block` threads, passed to every call as
/// `product(blocks, x, y, flags)` (6.5 and 6.6 launch one thread per row
/// in a grid-stride loop). Same iteration, result and errors; the grid is
/// computed before anything is allocated or launched.
template <class Product>
Stats iterate_min_plus_products(std::size_t n, vertex_t source, signed_dist_t* dist, cudaStream_t stream,
                                int block, Product&& product) {
  const unsigned blocks = grid_for(n, block);
  return iterate_min_plus_products(n, source, dist, stream,
                                   [&](const signed_dist_t* x, signed_dist_t* y, int* flags) {
                                     product(blocks, x, y, flags);
                                   });
}

}  // namespace detail

}  // namespace cudalab::sssp
