// Tests of exercise 6.3, cudalab::sssp::bellman_ford_worklist (suites
// SsspBellmanFordWorklist*): the shared battery (sssp_test_battery.cuh)
// with negative weights and cycles, and its LargeIndex case: a frontier
// vertex whose edges are the last of 2^32 - 1 (a thread's loop over them
// must neither wrap nor stop short).
// Run: tools/grade 6.3   or   build/default/bin/bellman_ford_worklist_test_starter
#include "sssp_test_battery.cuh"

namespace cudalab::test::sssp {
namespace {

Outcome run_view(const graph::CsrView& g, vertex_t source) {
  return run_signed(g.num_vertices, [&](cudalab::sssp::signed_dist_t* dist) {
    return cudalab::sssp::bellman_ford_worklist(g, source, dist, nullptr);
  });
}

const Spec& spec() {
  static const Spec s{
      "6.3 bellman_ford_worklist", true, false, std::numeric_limits<std::size_t>::max(),
      "relax the out-edges of the frontier vertices with atomicMin and push each vertex whose distance fell to "
      "the next frontier exactly once (a stamp claimed with atomicExch), until the frontier is empty",
      [](const Csr& g, vertex_t source) {
        const graph::DeviceCsr d(g);
        return run_view(d.view(), source);
      },
      [](const RawArgs& a) {
        cudalab::sssp::bellman_ford_worklist(raw_view(a), a.source,
                                                  static_cast<cudalab::sssp::signed_dist_t*>(a.dist), nullptr);
      }};
  return s;
}

CUDALAB_SSSP_BATTERY(SsspBellmanFordWorklist, spec)
CUDALAB_SSSP_LARGE_INDEX(SsspBellmanFordWorklist, spec, run_view)

}  // namespace
}  // namespace cudalab::test::sssp
