// Baselines of exercise 5.4, linked into its benchmark program so that each
// run measures them beside the exercise:
//   boost_dijkstra_one_core/int32/264346/1024   boost::dijkstra_shortest_paths once per source, one thread
//   boost_dijkstra_all_cores/int32/264346/1024  the same, the sources spread over every host core
//   boost_dijkstra_{one,all}_core[s]/luxembourg_osm_w1to100/114599/1024   the same on the road
//                                               network of Luxembourg, when luxembourg_osm.mtx is
//                                               in CUDALAB_DATA_DIR
// Keeping them affordable: 1024 Boost runs take about a minute on one core,
// so each iteration times only the first kTimedOneCore sources (one core) or
// kTimedPerCore sources per core (all cores) and reports that time scaled to
// 1024 sources (the label says so). Sources cost about the same (one full
// search of the graph each), so the scaling is fair to within the spread of
// the per-source times.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "paths_bench.hpp"
#ifdef CUDALAB_HAVE_BOOST_GRAPH
#include "cudalab/graph/boost_dijkstra.hpp"
#endif

namespace cudalab::bench::paths {
namespace {

constexpr std::size_t kTimedOneCore = 16;
constexpr std::size_t kTimedPerCore = 4;

#ifdef CUDALAB_HAVE_BOOST_GRAPH
const graph::BoostGraph& boost_graph(bool lux) {
  if (lux) {
    static const graph::BoostGraph g(luxembourg_graph());
    return g;
  }
  static const graph::BoostGraph g(road_graph());
  return g;
}
#endif

// Times `timed` sources on `threads` threads and reports the time scaled to
// kSources sources; on Luxembourg's roads when `lux`, else on road_graph().
void run_boost(benchmark::State& state, std::size_t threads, std::size_t timed, bool lux = false) {
#ifdef CUDALAB_HAVE_BOOST_GRAPH
  const graph::BoostGraph& g = boost_graph(lux);
  const auto& src = lux ? luxembourg_sources() : sources();
  timed = std::min<std::size_t>(timed, src.size());
  std::int64_t checksum = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    std::vector<std::int64_t> sums(threads, 0);
    for (std::size_t t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t i = t; i < timed; i += threads) sums[t] += g.distances(src[i])[0];
      });
    for (auto& th : pool) th.join();
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    for (auto s : sums) checksum += s;
    state.SetIterationTime(seconds.count() * static_cast<double>(src.size()) / static_cast<double>(timed));
  }
  benchmark::DoNotOptimize(checksum);
  const auto n = static_cast<std::int64_t>((lux ? luxembourg_graph() : road_graph()).num_vertices());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kSources * n);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * kSources * n * 8);
  state.counters["n"] = static_cast<double>(kSources * n);
  state.counters["threads"] = static_cast<double>(threads);
  state.SetLabel((lux ? luxembourg_label() : graph_label()) + ", " + std::to_string(timed) + " of " +
                 std::to_string(src.size()) +
                 " sources timed, scaled");
#else
  (void)threads;
  (void)timed;
  (void)lux;
  state.SkipWithError("Boost.Graph headers were not found at configure time (install libboost-dev)");
#endif
}

const bool registered = [] {
  benchmark::RegisterBenchmark("boost_dijkstra_one_core/int32",
                               [](benchmark::State& state) { run_boost(state, 1, kTimedOneCore); })
      ->Args({kVertices, kSources})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("boost_dijkstra_all_cores/int32",
                               [](benchmark::State& state) {
                                 const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
                                 run_boost(state, cores, kTimedPerCore * cores);
                               })
      ->Args({kVertices, kSources})
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  if (have_luxembourg()) {
    const auto lux_n = static_cast<std::int64_t>(graph::kLuxembourgVertices);
    benchmark::RegisterBenchmark((std::string("boost_dijkstra_one_core/") + graph::kLuxembourgName).c_str(),
                                 [](benchmark::State& state) { run_boost(state, 1, kTimedOneCore, true); })
        ->Args({lux_n, kSources})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("boost_dijkstra_all_cores/") + graph::kLuxembourgName).c_str(),
                                 [](benchmark::State& state) {
                                   const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
                                   run_boost(state, cores, kTimedPerCore * cores, true);
                                 })
        ->Args({lux_n, kSources})
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::paths
