// Exercise 6.5: Bellman-Ford as repeated (min, +) sparse matrix-vector
// products over the in-edges in CSR, one thread per row (vertex).
// Lesson: chapters/06-sssp/README.md, "6.5".
// Grade:  tools/grade 6.5      Hints: tools/grade --hint 6.5
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/sssp.cuh"

namespace cudalab::sssp {
namespace {

constexpr int kBlock = 256;

// y = x ⊕ (A ⊗ x) over (min, +): y[v] = min(x[v], min over in-edges u -> v
// of x[u] + w). flags[0]: some y[v] differs from x[v]; flags[1]: a sum was
// clamped at kNegativeFloor.
__global__ void spmv_kernel(CsrView t, const signed_dist_t* __restrict__ x, signed_dist_t* __restrict__ y,
                            int* flags) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < t.num_vertices;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const signed_dist_t old = x[v];
    signed_dist_t best = old;
    // BEGIN SOLUTION
    for (graph::offset_t e = t.row_offsets[v]; e < t.row_offsets[v + 1]; ++e) {
      const signed_dist_t xu = x[t.col_indices[e]];
      if (xu == kSignedInfinity) continue;
      const signed_dist_t nd = detail::clamped_sum(xu, t.weights[e], flags + 1);
      best = nd < best ? nd : best;
    }
    // STARTER:
    // // TODO(6.5): best = min(best, x[u] + w) over the row's entries
    // // (u = t.col_indices[e], w = t.weights[e]), skipping x[u] ==
    // // kSignedInfinity; the sum is detail::clamped_sum(x[u], w, flags + 1).
    // END SOLUTION
    y[v] = best;
    if (best != old) flags[0] = 1;
  }
}

}  // namespace

Stats spmv_bellman_ford_csr(CsrView t, vertex_t source, signed_dist_t* dist, cudaStream_t stream) {
  detail::check_sssp_arguments("spmv_bellman_ford_csr", t, source, dist, false);
  // Products until nothing changes, on detail::grid_for(t.num_vertices, kBlock)
  // blocks: detail::iterate_min_plus_products (sssp.cuh), the same loop for
  // 6.5 and 6.6.
  const auto product = [&](unsigned blocks, const signed_dist_t* x, signed_dist_t* y, int* flags) {
    spmv_kernel<<<blocks, kBlock, 0, stream>>>(t, x, y, flags);
    CUDALAB_CHECK_LAUNCH();
  };
  return detail::iterate_min_plus_products(t.num_vertices, source, dist, stream, kBlock, product);
}

}  // namespace cudalab::sssp
