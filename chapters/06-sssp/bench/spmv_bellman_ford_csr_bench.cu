// Benchmark of exercise 6.5, cudalab::sssp::spmv_bellman_ford_csr, on the graphs of
// bellman_ford_graphs() (sssp_bench.cuh), beside the baselines (boost_dijkstra,
// copy_bandwidth) in the same run.
#include "sssp_bench.cuh"

namespace {
using namespace cudalab::bench::sssp;
const bool registered = [] {
  register_exercise("spmv_bellman_ford_csr", bellman_ford_graphs(),
                    [](const std::string& name, std::size_t n, const BenchGraph& g, cudaStream_t s) {
                      return cudalab::sssp::spmv_bellman_ford_csr(in_edges(name, n), g.source,
                                               output<cudalab::sssp::signed_dist_t>(g.csr.num_vertices()), s);
                    });
  return true;
}();
}  // namespace
