// Exercise 6.2: Bellman-Ford, one thread per edge relaxing with atomicMin,
// sweep after sweep until no distance changes (or a negative cycle shows).
// Lesson: chapters/06-sssp/README.md, "6.2".
// Grade:  tools/grade 6.2      Hints: tools/grade --hint 6.2
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cudalab/async_buffer.cuh"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/sssp.cuh"

namespace cudalab::sssp {
namespace {

constexpr int kBlock = 256;

// tails[e] = the u with row_offsets[u] <= e < row_offsets[u + 1] (a binary
// search per edge: coalesced and balanced, unlike one thread per row).
__global__ void tails_kernel(const graph::offset_t* row_offsets, std::size_t n, std::size_t m, vertex_t* tails) {
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < m;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::size_t lo = 0, hi = n;  // invariant: row_offsets[lo] <= e < row_offsets[hi]
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (row_offsets[mid] <= e) lo = mid; else hi = mid;
    }
    tails[e] = static_cast<vertex_t>(lo);
  }
}

// One sweep: every edge u -> v lowers dist[v] to dist[u] + w. flags[0] is
// raised when some distance fell, flags[1] when a sum fell below
// kNegativeFloor (only a negative cycle gets there).
__global__ void relax_kernel(const vertex_t* __restrict__ tails, const vertex_t* __restrict__ heads,
                             const weight_t* __restrict__ weights, std::size_t m, signed_dist_t* dist, int* flags) {
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < m;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    // BEGIN SOLUTION
    // A stale (too high) dist[u] only delays convergence: the sweep that
    // lowered it raised the flag, so another sweep follows.
    const signed_dist_t du = dist[tails[e]];
    if (du == kSignedInfinity) continue;
    const signed_dist_t nd = detail::clamped_sum(du, weights[e], flags + 1);
    const vertex_t v = heads[e];
    // The plain read filters most edges without an atomic; atomicMin
    // returns the old value, so exactly the threads that lowered it know.
    if (nd < dist[v] && atomicMin(reinterpret_cast<long long*>(dist + v), static_cast<long long>(nd)) > nd)
      flags[0] = 1;
    // STARTER:
    // // TODO(6.2): relax edge e = tails[e] -> heads[e]: skip it when
    // // dist[tail] is kSignedInfinity; else nd = detail::clamped_sum(
    // // dist[tail], weights[e], flags + 1) (the given sum, clamped at
    // // kNegativeFloor), and lower
    // // dist[head] to nd with atomicMin, raising flags[0] when it fell.
    // END SOLUTION
  }
}

}  // namespace

Stats bellman_ford_edge_parallel(CsrView g, vertex_t source, signed_dist_t* dist, cudaStream_t stream) {
  detail::check_sssp_arguments("bellman_ford_edge_parallel", g, source, dist, false);
  const std::size_t n = g.num_vertices, m = g.num_edges;
  auto blocks_for = [](std::size_t count) { return detail::grid_for(count, kBlock); };
  detail::init_distances(dist, n, source, kSignedInfinity, stream);
  AsyncBuffer<vertex_t> tails(m, stream);
  AsyncBuffer<int> flags(2, stream);
  if (m > 0) {
    tails_kernel<<<blocks_for(m), kBlock, 0, stream>>>(g.row_offsets, n, m, tails.data());
    CUDALAB_CHECK_LAUNCH();
  }
  Stats stats;
  for (std::uint64_t sweep = 1;; ++sweep) {
    flags.fill_bytes(0);
    relax_kernel<<<blocks_for(m), kBlock, 0, stream>>>(tails.data(), g.col_indices, g.weights, m, dist, flags.data());
    CUDALAB_CHECK_LAUNCH();
    int host[2] = {0, 0};
    CUDALAB_CHECK(cudaMemcpyAsync(host, flags.data(), sizeof(host), cudaMemcpyDeviceToHost, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    stats.iterations = sweep;
    // BEGIN SOLUTION
    // Without a negative cycle, shortest paths have at most n - 1 edges, so
    // sweep n changes nothing; a change there (or a clamped sum) is a cycle.
    if (host[1] != 0 || (host[0] != 0 && sweep >= n)) {
      stats.negative_cycle = true;
      break;
    }
    if (host[0] == 0) break;
    // STARTER:
    // // TODO(6.2): stop when the sweep changed nothing (host[0] == 0); report
    // // a negative cycle (stats.negative_cycle) when a sum was clamped
    // // (host[1]) or sweep n still changed something.
    // break;
    // END SOLUTION
  }
  return stats;
}

}  // namespace cudalab::sssp
