// The CPU baseline of chapter 6: Boost.Graph's dijkstra_shortest_paths on
// one host core (boost_dijkstra/<graph>/<n>), timed with std::chrono, on the
// same graphs and sources as the exercises, with the graphs' own weights
// (the exercises get new weights of the same range and about the same mean
// before every call; a host baseline, run by the checker itself, needs no
// such hooks). Without the Boost headers at
// configure time it runs the CPU reference Dijkstra (binary heap) under the
// same name, and the label says so. Graphs of 2^22 or more vertices are
// searched once (one iteration, one repetition).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cudalab/graph/dijkstra_reference.hpp"
#include "sssp_bench.cuh"
#ifdef CUDALAB_HAVE_BOOST_GRAPH
#include "cudalab/graph/boost_dijkstra.hpp"
#endif

namespace cudalab::bench::sssp {

inline void register_boost_dijkstra(const std::vector<GraphSpec>& graphs) {
  for (const GraphSpec& spec : graphs) {
    const std::string full = "boost_dijkstra/" + spec.name + "/" + std::to_string(spec.n);
    auto* b = benchmark::RegisterBenchmark(full.c_str(), [spec](benchmark::State& state) {
      const BenchGraph& g = bench_graph(spec.name, spec.n);
#ifdef CUDALAB_HAVE_BOOST_GRAPH
      static std::map<std::string, std::unique_ptr<graph::BoostGraph>> cache;
      const std::string key = spec.name + "/" + std::to_string(spec.n);
      auto& bg = cache[key];
      if (!bg) bg = std::make_unique<graph::BoostGraph>(g.csr);
      auto search = [&] { return bg->distances(g.source); };
      state.SetLabel("Boost.Graph dijkstra_shortest_paths, 1 core; " + g.label);
#else
      auto search = [&] { return graph::dijkstra_reference(g.csr, g.source).dist; };
      state.SetLabel("Boost not found at configure time: cudalab CPU reference Dijkstra (binary heap), 1 core; " +
                     g.label);
#endif
      std::size_t reached = 0;
      for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        const std::vector<graph::dist64_t> dist = search();
        const auto stop = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
        reached = 0;
        for (graph::dist64_t d : dist) reached += d != graph::kUnreachable;
      }
      const auto m = static_cast<std::int64_t>(g.csr.num_edges());
      state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * m);
      state.counters["n"] = static_cast<double>(spec.n);
      state.counters["reached"] = static_cast<double>(reached);
      state.counters["vertices"] = static_cast<double>(g.csr.num_vertices());
      state.counters["edges"] = static_cast<double>(m);
    });
    b->UseManualTime()->Unit(benchmark::kMillisecond);
    // One search of a graph of 2^22 or more vertices takes seconds on one
    // core: measure it once (one iteration, one repetition, whatever
    // --benchmark_repetitions says), so a benchmark program stays well under
    // a minute; seconds-long runs of a deterministic search vary little.
    if (spec.n >= (std::size_t{1} << 22)) b->Iterations(1)->Repetitions(1);
  }
}

/// @brief Registers the baselines of one group of chapter 6's exercises:
///        boost_dijkstra on `graphs` (register_boost_dijkstra) and
///        copy_bandwidth/int32 at 2^24 and 2^26 elements.
/// @param graphs the graphs of the group's exercises
/// @return true, for a namespace-scope `const bool registered = ...`.
inline bool register_baselines(const std::vector<GraphSpec>& graphs) {
  register_boost_dijkstra(graphs);
  register_copy_bandwidth<int>("int32", {1 << 24, 1 << 26});
  return true;
}

}  // namespace cudalab::bench::sssp
