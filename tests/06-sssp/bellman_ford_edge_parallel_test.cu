// Tests of exercise 6.2, cudalab::sssp::bellman_ford_edge_parallel (suites
// SsspBellmanFordEdgeParallel*): the shared battery (sssp_test_battery.cuh)
// with negative weights and cycles, and a bound on the sweeps (a lost
// relaxation only costs sweeps, so only their count can show it).
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

// Many edges into one vertex relax it in the same sweep: a relaxation that
// stores its sum with a plain compare-and-store instead of atomicMin can be
// overwritten by a larger one that read the same old distance; the next
// sweep lowers it again, so only the number of sweeps shows it.
class SsspBellmanFordEdgeParallelSweeps : public GpuTest {};

TEST_F(SsspBellmanFordEdgeParallelSweeps, ConcurrentRelaxationsOfOneVertexCostNoExtraSweep) {
  check_rounds_bounded(spec(), 1 << 17, 64,
                       "Two threads lowering one hub in the same sweep both read its old distance, and the larger "
                       "sum was stored last: lower dist[head] with atomicMin, and raise the changed flag only when "
                       "the atomicMin lowered it (its return value is larger than the sum)");
}

}  // namespace
}  // namespace cudalab::test::sssp
