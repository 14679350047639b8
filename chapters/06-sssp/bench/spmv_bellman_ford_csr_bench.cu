// Benchmark of exercise 6.5, cudalab::sssp::spmv_bellman_ford_csr, on the graphs of
// bellman_ford_graphs() (sssp_bench.cuh), beside the baselines (boost_dijkstra,
// copy_bandwidth) in the same run. New edge weights before every call, the last
// distances checked (register_exercise in sssp_bench.cuh).
#include "sssp_bench.cuh"

namespace {
using namespace cudalab::bench::sssp;
const bool registered = register_distances("spmv_bellman_ford_csr", bellman_ford_graphs(), Layout::in_csr,
                                           &cudalab::sssp::spmv_bellman_ford_csr);
}  // namespace
