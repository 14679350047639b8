// Benchmark of exercise 6.2, cudalab::sssp::bellman_ford_edge_parallel, on the graphs of
// bellman_ford_graphs() (sssp_bench.cuh), beside the baselines (boost_dijkstra,
// copy_bandwidth) in the same run. New edge weights before every call, the last
// distances checked (register_exercise in sssp_bench.cuh).
#include "sssp_bench.cuh"

namespace {
using namespace cudalab::bench::sssp;
const bool registered = [] {
  using cudalab::sssp::signed_dist_t;
  register_exercise<signed_dist_t>(
      "bellman_ford_edge_parallel", bellman_ford_graphs(), Layout::out_csr,
      [](const BenchGraph& g, const DeviceLayout& edges, signed_dist_t* dist, cudalab::graph::vertex_t*,
         cudaStream_t s) {
        return cudalab::sssp::bellman_ford_edge_parallel(edges.csr(), g.source, dist, s);
      });
  return true;
}();
}  // namespace
