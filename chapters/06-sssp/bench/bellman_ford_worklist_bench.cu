// Benchmark of exercise 6.3, cudalab::sssp::bellman_ford_worklist, on the graphs of
// bellman_ford_graphs() (sssp_bench.cuh), beside the baselines (boost_dijkstra,
// copy_bandwidth) in the same run. New edge weights before every call, the last
// distances checked (register_exercise in sssp_bench.cuh).
#include "sssp_bench.cuh"

namespace {
using namespace cudalab::bench::sssp;
const bool registered = register_distances("bellman_ford_worklist", bellman_ford_graphs(), Layout::out_csr,
                                           &cudalab::sssp::bellman_ford_worklist);
}  // namespace
