// Exercise 6.6: Bellman-Ford as repeated (min, +) sparse matrix-vector
// products over the in-edges in ELL (padded, column-major), one thread per
// row: entry k of row v is at k * n + v, so a warp reads 32 consecutive words.
// Lesson: chapters/06-sssp/README.md, "6.6".
// Grade:  tools/grade 6.6      Hints: tools/grade --hint 6.6
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/sssp.cuh"

namespace cudalab::sssp {
namespace {

constexpr int kBlock = 256;

// y = x ⊕ (A ⊗ x) over (min, +), A in ELL: y[v] = min(x[v], min over the
// row's entries u (padding skipped) of x[u] + w). flags as in 6.5.
__global__ void spmv_kernel(EllView t, const signed_dist_t* __restrict__ x, signed_dist_t* __restrict__ y,
                            int* flags) {
  const std::size_t n = t.num_rows;
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const signed_dist_t old = x[v];
    signed_dist_t best = old;
    // BEGIN SOLUTION
    // Rows are filled from k = 0, so the first padding entry ends the row.
    for (std::size_t k = 0; k < t.width; ++k) {
      const vertex_t u = t.col_indices[k * n + v];
      if (u == graph::Ell::kPadding) break;
      const signed_dist_t xu = x[u];
      if (xu == kSignedInfinity) continue;
      const signed_dist_t nd = detail::clamped_sum(xu, t.weights[k * n + v], flags + 1);
      best = nd < best ? nd : best;
    }
    // STARTER:
    // // TODO(6.6): best = min(best, x[u] + w) over the row's entries k =
    // // 0 .. t.width - 1, at index k * n + v of t.col_indices and t.weights
    // // (stop at a graph::Ell::kPadding entry), skipping x[u] ==
    // // kSignedInfinity; the sum is detail::clamped_sum(x[u], w, flags + 1).
    // END SOLUTION
    y[v] = best;
    if (best != old) flags[0] = 1;
  }
}

}  // namespace

Stats spmv_bellman_ford_ell(EllView t, vertex_t source, signed_dist_t* dist, cudaStream_t stream) {
  detail::check_sssp_arguments("spmv_bellman_ford_ell", t, source, dist);
  // Products until nothing changes, on detail::grid_for(t.num_rows, kBlock)
  // blocks: detail::iterate_min_plus_products (sssp.cuh), the same loop for
  // 6.5 and 6.6.
  const auto product = [&](unsigned blocks, const signed_dist_t* x, signed_dist_t* y, int* flags) {
    spmv_kernel<<<blocks, kBlock, 0, stream>>>(t, x, y, flags);
    CUDALAB_CHECK_LAUNCH();
  };
  return detail::iterate_min_plus_products(t.num_rows, source, dist, stream, kBlock, product);
}

}  // namespace cudalab::sssp
