// Tests of exercise 6.6, cudalab::sssp::spmv_bellman_ford_ell (suites
// SsspSpmvBellmanFordEll*): the shared battery (sssp_test_battery.cuh)
// with negative weights and cycles, and a bound on the products (a row
// that keeps a sum other than its smallest only costs products).
// Run: tools/grade 6.6   or   build/default/bin/spmv_bellman_ford_ell_test_starter
#include "sssp_test_battery.cuh"

namespace cudalab::test::sssp {
namespace {

const Spec& spec() {
  static const Spec s{
      "6.6 spmv_bellman_ford_ell", true, false, std::numeric_limits<std::size_t>::max(),
      "entry k of row v is at k * n + v (column-major) and padding (kPadding) ends a row: y[v] = min(x[v], "
      "x[u] + w over the row); iterate while y differs from x",
      [](const Csr& g, vertex_t source) {
        const graph::DeviceEll d(graph::to_ell(graph::transpose(g)));
        return run_signed(g.num_vertices(), [&](cudalab::sssp::signed_dist_t* dist) {
          return cudalab::sssp::spmv_bellman_ford_ell(d.view(), source, dist, nullptr);
        });
      },
      [](const RawArgs& a) {
        cudalab::sssp::spmv_bellman_ford_ell(raw_ell_view(a), a.source,
                                                  static_cast<cudalab::sssp::signed_dist_t*>(a.dist), nullptr);
      }};
  return s;
}

CUDALAB_SSSP_BATTERY(SsspSpmvBellmanFordEll, spec)

// A hub's row holds many in-edges: a product that keeps, say, the last sum
// that beats x[v] rather than the smallest still converges, a product later.
class SsspSpmvBellmanFordEllProducts : public GpuTest {};

TEST_F(SsspSpmvBellmanFordEllProducts, EveryProductTakesTheRowsMinimum) {
  check_rounds_bounded(spec(), 1 << 12, 64,
                       kRowMinimumFix);
}

}  // namespace
}  // namespace cudalab::test::sssp
