// Benchmark of exercise 6.1, cudalab::sssp::dijkstra_parallel_extract_min, on the graphs of
// dijkstra_graphs() (sssp_bench.cuh), beside the baselines (boost_dijkstra,
// copy_bandwidth) in the same run. New edge weights before every call, the last
// distances checked (register_exercise in sssp_bench.cuh).
#include "sssp_bench.cuh"

namespace {
using namespace cudalab::bench::sssp;
const bool registered = register_distances("dijkstra_parallel_extract_min", dijkstra_graphs(), Layout::out_csr,
                                           &cudalab::sssp::dijkstra_parallel_extract_min);
}  // namespace
