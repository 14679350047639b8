// Tests of exercise 6.2, cudalab::sssp::bellman_ford_edge_parallel (suites
// SsspBellmanFordEdgeParallel*): the shared battery (sssp_test_battery.cuh)
// with negative weights and cycles, and a bound on the sweeps (a lost
// relaxation only costs sweeps, so only their count can show it).
// Run: tools/grade 6.2   or   build/default/bin/bellman_ford_edge_parallel_test_starter
#include <random>

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

// Hubs: the source reaches k middle vertices by one edge each, and every
// middle vertex has one edge into one of `hubs` hubs, so each hub has k / hubs
// in-edges that all relax it in the same sweep. Every shortest path has at
// most 2 edges: sweep 1 settles the middle vertices, sweep 2 the hubs, and a
// third changes nothing. A relaxation that stores its sum with a plain
// compare-and-store instead of atomicMin can be overwritten by a larger one
// that read the same old distance; the next sweep lowers it again, so the
// distances come out right and only the number of sweeps grows.
class SsspBellmanFordEdgeParallelSweeps : public GpuTest {};

TEST_F(SsspBellmanFordEdgeParallelSweeps, ConcurrentRelaxationsOfOneVertexCostNoExtraSweep) {
  constexpr vertex_t k = 1 << 17, hubs = 64;
  const auto s = seed();
  std::mt19937_64 rng(s);
  std::uniform_int_distribution<weight_t> w(1, 1000000);
  std::vector<Edge> edges;
  edges.reserve(2 * static_cast<std::size_t>(k));
  for (vertex_t i = 1; i <= k; ++i) edges.push_back(Edge{0, i, w(rng)});
  for (vertex_t i = 1; i <= k; ++i) edges.push_back(Edge{i, k + 1 + i % hubs, w(rng)});
  const Csr g = graph::csr_from_edges(static_cast<std::size_t>(k) + 1 + hubs, edges);
  check_graph(spec(), g, 0, s, "hubs: 2^17 middle vertices, 64 hubs of 2048 in-edges each");
  const std::uint64_t bound = max_shortest_path_edges(g, 0) + 1;
  const Outcome got = spec().run(g, 0);
  EXPECT_LE(got.stats.iterations, bound)
      << context(spec().exercise, g.num_vertices(), s) << "hubs: every shortest path has at most " << bound - 1
      << " edges, so Bellman-Ford's sweeps settle every vertex by sweep " << bound - 1 << " and sweep " << bound
      << " changes nothing; Stats::iterations reported " << got.stats.iterations
      << " sweeps. The distances are right, but some relaxations were lost: two threads lowering one hub in the "
         "same sweep both read its old distance, and the larger sum was stored last. Lower dist[head] with "
         "atomicMin, and raise the changed flag only when the atomicMin lowered it (its return value is larger "
         "than the sum)";
}

}  // namespace
}  // namespace cudalab::test::sssp
