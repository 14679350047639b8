// Benchmark of cudalab::heap::dijkstra_warp_heap (5.4): 1024 sources on the
// New York road graph (or a generated graph of its size), beside Boost.Graph's
// Dijkstra on one host core and on all of them
// (bench/paths_baselines_bench.cpp) in the same run.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "cudalab/bench.cuh"
#include "cudalab/heap.cuh"
#include "paths_bench.hpp"

namespace {

// "dijkstra_warp_heap/int32/264346/1024": all distances from 1024 sources,
// one warp and one heap of 1024 nodes (32,768 entries) per source. Items =
// sources x vertices (distances computed); bytes = the distance rows written
// once (each run reads the graph at least once per source, uncounted).
const bool registered = [] {
  auto* b = benchmark::RegisterBenchmark("dijkstra_warp_heap/int32", [](benchmark::State& state) {
    using namespace cudalab;
    namespace paths = cudalab::bench::paths;
    if (!bench::require_device(state)) return;
    const graph::Csr& g = paths::road_graph();
    const auto& src = paths::sources();
    const std::size_t n = g.num_vertices(), k = src.size();
    const graph::DeviceCsr dg(g);
    const DeviceBuffer<graph::vertex_t> d_sources(src);
    DeviceBuffer<graph::dist64_t> dist(k * n);
    DeviceBuffer<unsigned> flags(k);
    heap::HeapStorage storage(k, 1024);
    bench::time_runs(
        state,
        [&](cudaStream_t s) {
          heap::dijkstra_warp_heap(dg.view(), d_sources.data(), k, nullptr, 0, dist.data(), flags.data(),
                                   storage.view(), nullptr, s);
        },
        k * n * sizeof(graph::dist64_t), k * n);
    const auto f = flags.download();
    if (std::any_of(f.begin(), f.end(), [](unsigned x) { return x != 0; }))
      state.SkipWithError("a heap overflowed (flags != 0): the distances are not valid; raise the capacity");
    state.SetLabel(paths::graph_label());
  });
  b->Args({cudalab::bench::paths::kVertices, cudalab::bench::paths::kSources});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
