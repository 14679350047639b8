// Benchmark of exercise 6.4, cudalab::sssp::delta_stepping, on the graphs of
// delta_graphs() (sssp_bench.cuh), with four bucket widths: delta = the
// graph's mean edge weight times 1/4, 1, 4 and 16 (names .../dmean_div4,
// .../dmean, .../dmean_x4, .../dmean_x16; the label and the counter "delta"
// give the value), beside the baselines (boost_dijkstra, copy_bandwidth) in
// the same run. New edge weights before every call (their mean stays about
// the same, so delta keeps its meaning); the last distances and parents are
// checked (register_exercise in sssp_bench.cuh).
#include <algorithm>
#include <cmath>

#include "sssp_bench.cuh"

namespace {
using namespace cudalab::bench::sssp;
const bool registered = [] {
  const struct {
    const char* suffix;
    double factor;
  } widths[] = {{"/dmean_div4", 0.25}, {"/dmean", 1.0}, {"/dmean_x4", 4.0}, {"/dmean_x16", 16.0}};
  for (const auto& w : widths) {
    const double factor = w.factor;
    register_exercise<cudalab::sssp::dist_t>(
        "delta_stepping", delta_graphs(), Layout::out_csr,
        [factor](const BenchGraph& g, const DeviceLayout& edges, cudalab::sssp::dist_t* dist,
                 cudalab::sssp::vertex_t* parent, cudaStream_t s) {
          const auto delta = static_cast<cudalab::sssp::dist_t>(std::max(1.0, std::round(g.mean_weight * factor)));
          return cudalab::sssp::delta_stepping(edges.csr(), g.source, delta, dist, parent, s);
        },
        w.suffix, true);
  }
  return true;
}();
}  // namespace
