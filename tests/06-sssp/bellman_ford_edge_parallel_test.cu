// Tests of exercise 6.2, cudalab::sssp::bellman_ford_edge_parallel (suites
// SsspBellmanFordEdgeParallel*): the shared battery (sssp_test_battery.cuh)
// with negative weights and cycles.
// Run: tools/grade 6.2   or   build/default/bin/bellman_ford_edge_parallel_test_starter
#include "sssp_test_battery.cuh"

namespace cudalab::test::sssp {
namespace {

const Spec& spec() {
  static const Spec s{
      "6.2 bellman_ford_edge_parallel", true, false, std::numeric_limits<std::size_t>::max(),
      "relax every edge in every sweep (atomicMin on dist[head] from dist[tail] + w) and sweep again while a "
      "distance changed",
      [](const Csr& g, vertex_t source) {
        const graph::DeviceCsr d(g);
        return run_signed(g.num_vertices(), [&](cudalab::sssp::signed_dist_t* dist) {
          return cudalab::sssp::bellman_ford_edge_parallel(d.view(), source, dist, nullptr);
        });
      },
      [](const RawArgs& a) {
        cudalab::sssp::bellman_ford_edge_parallel(raw_view(a), a.source,
                                                  static_cast<cudalab::sssp::signed_dist_t*>(a.dist), nullptr);
      }};
  return s;
}

CUDALAB_SSSP_BATTERY(SsspBellmanFordEdgeParallel, spec)

}  // namespace
}  // namespace cudalab::test::sssp
