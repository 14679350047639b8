// Tests of exercise 6.5, cudalab::sssp::spmv_bellman_ford_csr (suites
// SsspSpmvBellmanFordCsr*): the shared battery (sssp_test_battery.cuh)
// with negative weights and cycles, and a bound on the products (a row
// that keeps a sum other than its smallest only costs products).
// Run: tools/grade 6.5   or   build/default/bin/spmv_bellman_ford_csr_test_starter
#include "sssp_test_battery.cuh"

namespace cudalab::test::sssp {
namespace {

const Spec& spec() {
  static const Spec s{
      "6.5 spmv_bellman_ford_csr", true, false, std::numeric_limits<std::size_t>::max(),
      "row v of the transpose lists the in-edges u -> v: y[v] = min(x[v], x[u] + w over the row), "
      "skipping infinite x[u]; iterate while y differs from x",
      [](const Csr& g, vertex_t source) {
        const graph::DeviceCsr d(graph::transpose(g));
        return run_signed(g.num_vertices(), [&](cudalab::sssp::signed_dist_t* dist) {
          return cudalab::sssp::spmv_bellman_ford_csr(d.view(), source, dist, nullptr);
        });
      },
      [](const RawArgs& a) {
        cudalab::sssp::spmv_bellman_ford_csr(raw_view(a), a.source,
                                                  static_cast<cudalab::sssp::signed_dist_t*>(a.dist), nullptr);
      }};
  return s;
}

CUDALAB_SSSP_BATTERY(SsspSpmvBellmanFordCsr, spec)

// A hub's row holds many in-edges: a product that keeps, say, the last sum
// that beats x[v] rather than the smallest still converges, a product later.
class SsspSpmvBellmanFordCsrProducts : public GpuTest {};

TEST_F(SsspSpmvBellmanFordCsrProducts, EveryProductTakesTheRowsMinimum) {
  check_rounds_bounded(spec(), 1 << 17, 64,
                       kRowMinimumFix);
}

}  // namespace
}  // namespace cudalab::test::sssp
