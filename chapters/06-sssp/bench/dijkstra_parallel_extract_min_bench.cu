// Benchmark of exercise 6.1, cudalab::sssp::dijkstra_parallel_extract_min, on the graphs of
// dijkstra_graphs() (sssp_bench.cuh), beside the baselines (boost_dijkstra,
// copy_bandwidth) in the same run.
#include "sssp_bench.cuh"

namespace {
using namespace cudalab::bench::sssp;
const bool registered = [] {
  register_exercise("dijkstra_parallel_extract_min", dijkstra_graphs(),
                    [](const std::string& name, std::size_t n, const BenchGraph& g, cudaStream_t s) {
                      return cudalab::sssp::dijkstra_parallel_extract_min(out_edges(name, n), g.source,
                                               output<cudalab::sssp::dist_t>(g.csr.num_vertices()), s);
                    });
  return true;
}();
}  // namespace
