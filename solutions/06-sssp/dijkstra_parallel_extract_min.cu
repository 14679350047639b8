// Exercise 6.1: Dijkstra's algorithm with ExtractMin as a parallel
// reduction over the unsettled vertices: O(n) steps of O(n) work each.
// Lesson: chapters/06-sssp/README.md, "6.1".
// Grade:  tools/grade 6.1      Hints: tools/grade --hint 6.1
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cudalab/async_buffer.cuh"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/sssp.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::sssp {
namespace {

constexpr int kBlock = 256;
constexpr unsigned long long kNone = ~0ull;  // "no unsettled reachable vertex"
constexpr std::uint64_t kCheckEvery = 64;    // steps between two looks at the done flag

// The control block: best[2] alternate between steps (one is reduced into
// while the other is reset), done is raised when no vertex is left, settled
// counts the settled vertices.
struct Control {
  unsigned long long best[2];
  unsigned done;
  unsigned settled;
};

__global__ void init_kernel(unsigned char* settled, std::size_t n, Control* c) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    settled[v] = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) *c = Control{{kNone, kNone}, 0u, 0u};
}

// ExtractMin: c->best[slot] = min over unsettled v with finite dist[v] of
// (dist[v] << 32 | v): the closest unsettled vertex, ties to the lower id.
__global__ void extract_min_kernel(const dist_t* __restrict__ dist, const unsigned char* __restrict__ settled,
                                   std::size_t n, Control* c, int slot) {
  if (c->done) return;
  unsigned long long mine = kNone;
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    if (!settled[v] && dist[v] != kInfinity)
      mine = min(mine, (static_cast<unsigned long long>(dist[v]) << 32) | static_cast<unsigned>(v));
  // BEGIN SOLUTION
  // Warp minimum by shuffles, then the warps' minima through shared memory,
  // then one atomicMin per block.
  for (int offset = 16; offset > 0; offset /= 2) mine = min(mine, __shfl_xor_sync(kFullMask, mine, offset));
  __shared__ unsigned long long warp_min[kBlock / 32];
  const int lane = lane_id(), warp = warp_id();
  if (lane == 0) warp_min[warp] = mine;
  __syncthreads();
  if (warp == 0) {
    mine = lane < kBlock / 32 ? warp_min[lane] : kNone;
    for (int offset = 16; offset > 0; offset /= 2) mine = min(mine, __shfl_xor_sync(kFullMask, mine, offset));
    if (lane == 0 && mine != kNone) atomicMin(&c->best[slot], mine);
  }
  // STARTER:
  // // TODO(6.1): reduce `mine` to the block's minimum (warp shuffles, then
  // // shared memory) and fold it into c->best[slot] with one atomicMin per
  // // block.
  // END SOLUTION
}

// Settle and relax: one block takes u = the vertex in c->best[slot], settles
// it and relaxes its out-edges; it also resets the other slot for the next
// step, or raises done when no vertex was found.
__global__ void settle_relax_kernel(CsrView g, dist_t* dist, unsigned char* settled, Control* c, int slot) {
  if (c->done) return;
  const unsigned long long best = c->best[slot];
  if (threadIdx.x == 0) c->best[1 - slot] = kNone;
  if (best == kNone) {
    if (threadIdx.x == 0) c->done = 1;
    return;
  }
  const auto u = static_cast<vertex_t>(best & 0xffffffffu);
  const auto du = static_cast<unsigned long long>(best >> 32);
  if (threadIdx.x == 0) {
    settled[u] = 1;
    ++c->settled;
  }
  // BEGIN SOLUTION
  // 64-bit edge indices: u's edges may end at 2^32 - 1, where a 32-bit e wraps around.
  for (std::size_t e = g.row_offsets[u] + static_cast<std::size_t>(threadIdx.x); e < g.row_offsets[u + 1];
       e += blockDim.x) {
    const unsigned long long nd = du + static_cast<unsigned long long>(g.weights[e]);
    const vertex_t v = g.col_indices[e];
    if (nd < dist[v]) atomicMin(dist + v, static_cast<dist_t>(nd));  // nd < dist[v] <= kInfinity: fits
  }
  // STARTER:
  // // TODO(6.1): the block's threads share u's out-edges (stride blockDim.x,
  // // a 64-bit edge index: an edge list may end at 2^32 - 1); lower dist[v]
  // // to du + w with atomicMin (parallel edges may race).
  // END SOLUTION
}

}  // namespace

Stats dijkstra_parallel_extract_min(CsrView g, vertex_t source, dist_t* dist, cudaStream_t stream) {
  detail::check_sssp_arguments("dijkstra_parallel_extract_min", g, source, dist, true);
  const std::size_t n = g.num_vertices;
  const unsigned blocks = detail::grid_for(n, kBlock);
  AsyncBuffer<unsigned char> settled(n, stream);
  AsyncBuffer<Control> control(1, stream);
  detail::init_distances(dist, n, source, kInfinity, stream);
  init_kernel<<<blocks, kBlock, 0, stream>>>(settled.data(), n, control.data());
  CUDALAB_CHECK_LAUNCH();
  // At most n steps; every kCheckEvery steps the host looks at `done`, so
  // at most kCheckEvery - 1 empty steps follow the last vertex.
  for (std::size_t step = 0; step < n; ++step) {
    const int slot = static_cast<int>(step % 2);
    extract_min_kernel<<<blocks, kBlock, 0, stream>>>(dist, settled.data(), n, control.data(), slot);
    CUDALAB_CHECK_LAUNCH();
    settle_relax_kernel<<<1, kBlock, 0, stream>>>(g, dist, settled.data(), control.data(), slot);
    CUDALAB_CHECK_LAUNCH();
    if ((step + 1) % kCheckEvery == 0) {
      unsigned done = 0;
      CUDALAB_CHECK(cudaMemcpyAsync(&done, &control.data()->done, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
      CUDALAB_CHECK(cudaStreamSynchronize(stream));
      if (done) break;
    }
  }
  Stats stats;
  unsigned count = 0;
  CUDALAB_CHECK(cudaMemcpyAsync(&count, &control.data()->settled, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  stats.iterations = count;
  return stats;
}

}  // namespace cudalab::sssp
