// Exercise 6.5: Bellman-Ford as repeated (min, +) sparse matrix-vector
// products over the in-edges in CSR, one thread per row (vertex).
// Lesson: chapters/06-sssp/README.md, "6.5".
// Grade:  tools/grade 6.5      Hints: tools/grade --hint 6.5
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

__global__ void init_kernel(signed_dist_t* dist, std::size_t n, vertex_t source) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dist[v] = v == static_cast<std::size_t>(source) ? 0 : kSignedInfinity;
}

// y = x ⊕ (A ⊗ x) over (min, +): y[v] = min(x[v], min over in-edges u -> v
// of x[u] + w). flags[0]: some y[v] differs from x[v]; flags[1]: a sum was
// clamped at kNegativeFloor.
__global__ void spmv_kernel(CsrView t, const signed_dist_t* __restrict__ x, signed_dist_t* __restrict__ y,
                            int* flags) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < t.num_vertices;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const signed_dist_t old = x[v];
    signed_dist_t best = old;
    // TODO(6.5): best = min(best, x[u] + w) over the row's entries
    // (u = t.col_indices[e], w = t.weights[e]), skipping x[u] ==
    // kSignedInfinity and clamping sums below kNegativeFloor (flags[1] = 1).
    y[v] = best;
    if (best != old) flags[0] = 1;
  }
}

}  // namespace

Stats spmv_bellman_ford_csr(CsrView t, vertex_t source, signed_dist_t* dist, cudaStream_t stream) {
  detail::check_sssp_arguments("spmv_bellman_ford_csr", t, source, dist, false);
  const std::size_t n = t.num_vertices;
  const std::size_t wave = static_cast<std::size_t>(sm_count()) * (2048 / kBlock);
  const auto blocks = static_cast<unsigned>(std::max<std::size_t>(1, std::min(wave, (n + kBlock - 1) / kBlock)));
  AsyncBuffer<signed_dist_t> other(n, stream);
  AsyncBuffer<int> flags(2, stream);
  init_kernel<<<blocks, kBlock, 0, stream>>>(dist, n, source);
  CUDALAB_CHECK_LAUNCH();
  signed_dist_t* x = dist;
  signed_dist_t* y = other.data();
  Stats stats;
  for (std::uint64_t iteration = 1;; ++iteration) {
    flags.fill_bytes(0);
    spmv_kernel<<<blocks, kBlock, 0, stream>>>(t, x, y, flags.data());
    CUDALAB_CHECK_LAUNCH();
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

}  // namespace cudalab::sssp
