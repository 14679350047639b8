// Tests of exercise 6.1, cudalab::sssp::dijkstra_parallel_extract_min
// (suites SsspDijkstraParallelExtractMin*): the shared battery
// (sssp_test_battery.cuh) on graphs of at most 2^15 vertices, since every
// step of this Dijkstra scans all vertices (O(n^2) work), and its LargeIndex
// case: the block's threads share the source's edges, the last of 2^32 - 1
// (row_offsets[u] + threadIdx.x, and e += blockDim.x, wrap in 32 bits).
// Run: tools/grade 6.1   or   build/default/bin/dijkstra_parallel_extract_min_test_starter
#include "sssp_test_battery.cuh"

namespace cudalab::test::sssp {
namespace {

Outcome run_view(const graph::CsrView& g, vertex_t source) {
  const std::size_t n = g.num_vertices;
  DeviceBuffer<cudalab::sssp::dist_t> dist = guarded_output<cudalab::sssp::dist_t>(n);
  Outcome o;
  o.stats = cudalab::sssp::dijkstra_parallel_extract_min(g, source, dist.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  o.dist = widen(download_guarded(dist, n, o.guard_damage));
  return o;
}

const Spec& spec() {
  static const Spec s{
      "6.1 dijkstra_parallel_extract_min", false, false, std::size_t{1} << 15,
      "each step must find the unsettled vertex of smallest distance (ties: any), settle it, and relax all its "
      "out-edges with atomicMin",
      [](const Csr& g, vertex_t source) {
        const graph::DeviceCsr d(g);
        return run_view(d.view(), source);
      },
      [](const RawArgs& a) {
        cudalab::sssp::dijkstra_parallel_extract_min(raw_view(a), a.source,
                                                     static_cast<cudalab::sssp::dist_t*>(a.dist), nullptr);
      }};
  return s;
}

CUDALAB_SSSP_BATTERY(SsspDijkstraParallelExtractMin, spec)
CUDALAB_SSSP_LARGE_INDEX(SsspDijkstraParallelExtractMin, spec, run_view)

}  // namespace
}  // namespace cudalab::test::sssp
