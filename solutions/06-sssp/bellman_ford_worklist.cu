// Exercise 6.3: worklist Bellman-Ford: only the vertices whose distance fell
// in the last round relax their out-edges; the frontier is a device queue
// holding each vertex at most once.
// Lesson: chapters/06-sssp/README.md, "6.3".
// Grade:  tools/grade 6.3      Hints: tools/grade --hint 6.3
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "cudalab/async_buffer.cuh"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/sssp.cuh"

namespace cudalab::sssp {
namespace {

constexpr int kBlock = 256;

// dist = kSignedInfinity but 0 at the source; the first frontier is {source}.
__global__ void init_kernel(signed_dist_t* dist, std::size_t n, vertex_t source, vertex_t* frontier,
                            unsigned* stamp) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    dist[v] = v == static_cast<std::size_t>(source) ? 0 : kSignedInfinity;
    stamp[v] = v == static_cast<std::size_t>(source) ? 1u : 0u;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) frontier[0] = source;
}

// One round: each frontier vertex u relaxes its out-edges; a head v whose
// distance fell is pushed to `next` unless stamp[v] already equals `tag`
// (the next frontier's number). flags[0]: a sum was clamped at kNegativeFloor.
__global__ void round_kernel(CsrView g, const vertex_t* __restrict__ frontier, unsigned count, signed_dist_t* dist,
                             vertex_t* next, unsigned* next_count, unsigned* stamp, unsigned tag, int* flags) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const vertex_t u = frontier[i];
    const signed_dist_t du = dist[u];
    // BEGIN SOLUTION
    for (graph::offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e) {
      const signed_dist_t nd = detail::clamped_sum(du, g.weights[e], flags);
      const vertex_t v = g.col_indices[e];
      if (nd < dist[v] && atomicMin(reinterpret_cast<long long*>(dist + v), static_cast<long long>(nd)) > nd) {
        // Whoever lowers v first in this round claims its place in `next`.
        if (atomicExch(stamp + v, tag) != tag) next[atomicAdd(next_count, 1u)] = v;
      }
    }
    // STARTER:
    // // TODO(6.3): for each out-edge u -> v: nd = detail::clamped_sum(du,
    // // w, flags) (the given sum, clamped at kNegativeFloor); when
    // // atomicMin lowers dist[v] to nd, push v to next (slot
    // // atomicAdd(next_count, 1u)) unless
    // // atomicExch(stamp + v, tag) shows it is already there.
    // END SOLUTION
  }
}

}  // namespace

Stats bellman_ford_worklist(CsrView g, vertex_t source, signed_dist_t* dist, cudaStream_t stream) {
  detail::check_sssp_arguments("bellman_ford_worklist", g, source, dist, false);
  const std::size_t n = g.num_vertices;
  auto blocks_for = [](std::size_t count) { return detail::grid_for(count, kBlock); };
  AsyncBuffer<vertex_t> queues(2 * n, stream);
  AsyncBuffer<unsigned> stamp(n, stream);
  AsyncBuffer<unsigned> counter(1, stream);
  AsyncBuffer<int> flags(1, stream);
  flags.fill_bytes(0);
  vertex_t* frontier = queues.data();
  vertex_t* next = queues.data() + n;
  init_kernel<<<blocks_for(n), kBlock, 0, stream>>>(dist, n, source, frontier, stamp.data());
  CUDALAB_CHECK_LAUNCH();
  Stats stats;
  unsigned count = 1;
  for (std::uint64_t round = 1; count > 0; ++round) {
    // BEGIN SOLUTION
    // Frontier `round` has stamp `round`; the next one is built with round + 1.
    counter.fill_bytes(0);
    round_kernel<<<blocks_for(count), kBlock, 0, stream>>>(g, frontier, count, dist, next, counter.data(),
                                                           stamp.data(), static_cast<unsigned>(round + 1),
                                                           flags.data());
    CUDALAB_CHECK_LAUNCH();
    stats.iterations = round;
    int clamped = 0;
    CUDALAB_CHECK(cudaMemcpyAsync(&count, counter.data(), sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
    CUDALAB_CHECK(cudaMemcpyAsync(&clamped, flags.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    std::swap(frontier, next);
    // After round k every distance is at most the shortest path of k edges:
    // without a negative cycle round n lowers nothing.
    if (clamped != 0 || (count > 0 && round >= n)) {
      stats.negative_cycle = true;
      break;
    }
    // STARTER:
    // // TODO(6.3): run round_kernel on the frontier (the next frontier's tag
    // // is round + 1), read the next frontier's length into count, swap the
    // // queues, and report a negative cycle (stats.negative_cycle) when a
    // // sum was clamped or round n still pushed vertices.
    // stats.iterations = round;
    // count = 0;
    // END SOLUTION
  }
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  return stats;
}

}  // namespace cudalab::sssp
