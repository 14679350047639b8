// Shared pieces of chapter 6's benchmarks: the benchmark graphs (built once
// per program on the host and cached, with their device copies), and the
// registration of an exercise or baseline on a list of graphs.
//
// Graphs (benchmark names "<slug>/<graph>/<n>[/<delta>]"):
//   road_ny/264346    USA-road-d.NY.gr from CUDALAB_DATA_DIR; when absent, a
//                     generated road-like graph of the same size (a 514 x 514
//                     grid with 69 % of its edges kept, weights 1..2000), and
//                     the label says so
//   road_bay, road_col, road_fla, road_usa   registered only when their file
//                     is in CUDALAB_DATA_DIR (6.4 and its baseline)
//   grid/<n>          a sqrt(n) x sqrt(n) grid, weights uniform in 1..1000
//   rmat22/4194304    R-MAT scale 22, 16 edges per vertex (67,108,864 edges),
//                     weights 1..1000
// Every benchmark reports items/s = graph edges per second of the whole
// search (m / time), and the counters iterations (and buckets for 6.4).
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/device_buffer.cuh"
#include "cudalab/graph/csr.cuh"
#include "cudalab/graph/csr.hpp"
#include "cudalab/graph/generators.hpp"
#include "cudalab/graph/io.hpp"
#include "cudalab/sssp.cuh"

namespace cudalab::bench::sssp {

/// A benchmark graph on the host, with its source vertex and a label.
struct BenchGraph {
  graph::Csr csr;
  graph::vertex_t source = 0;
  std::string label;        // where it came from
  double mean_weight = 1.0;
};

/// The real road graphs this chapter knows, by benchmark graph name.
struct RoadFile {
  const char* name;
  const char* file;
  std::size_t vertices;
};
inline const std::vector<RoadFile>& road_files() {
  static const std::vector<RoadFile> files = {
      {"road_ny", "USA-road-d.NY.gr", 264346},    {"road_bay", "USA-road-d.BAY.gr", 321270},
      {"road_col", "USA-road-d.COL.gr", 435666},  {"road_fla", "USA-road-d.FLA.gr", 1070376},
      {"road_usa", "USA-road-d.USA.gr", 23947347},
  };
  return files;
}

inline double mean_weight(const graph::Csr& g) {
  double sum = 0;
  for (graph::weight_t w : g.weights) sum += static_cast<double>(w);
  return g.num_edges() ? sum / static_cast<double>(g.num_edges()) : 1.0;
}

/// Builds the graph `name` of `n` vertices (see the file comment).
inline BenchGraph make_graph(const std::string& name, std::size_t n) {
  BenchGraph out;
  for (const RoadFile& f : road_files()) {
    if (name != f.name) continue;
    if (const auto path = graph::find_data_file(f.file)) {
      out.csr = graph::load_dimacs_gr(*path);
      out.label = std::string("DIMACS ") + f.file;
    } else {
      const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(f.vertices))));
      out.csr = graph::grid_2d(side, side, 0x726F6164ull, 1, 2000, 0.69);
      out.label = std::string("generated road-like grid ") + std::to_string(side) + "x" + std::to_string(side) +
                  " (69% of edges kept): " + f.file + " not in CUDALAB_DATA_DIR (tools/fetch-data)";
    }
    out.source = 0;
    out.mean_weight = mean_weight(out.csr);
    return out;
  }
  if (name == "grid") {
    const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(n))));
    out.csr = graph::grid_2d(side, side, 0x67726964ull, 1, 1000);
    out.source = static_cast<graph::vertex_t>((side / 2) * side + side / 2);  // the centre
    out.label = "grid " + std::to_string(side) + "x" + std::to_string(side) + ", weights 1..1000";
  } else if (name == "rmat22") {
    out.csr = graph::rmat(22, 16, 0x726D6174ull, 1, 1000);
    out.source = 0;  // the largest hub
    out.label = "R-MAT scale 22, 16 edges per vertex, weights 1..1000";
  } else {
    throw std::invalid_argument("sssp bench: unknown graph " + name);
  }
  out.mean_weight = mean_weight(out.csr);
  return out;
}

/// The graph `name`/`n`, built on first use and kept for the program's life.
inline const BenchGraph& bench_graph(const std::string& name, std::size_t n) {
  static std::map<std::string, std::unique_ptr<BenchGraph>> cache;
  const std::string key = name + "/" + std::to_string(n);  // a named key: no temporary bound (GCC 13)
  auto& slot = cache[key];
  if (!slot) slot = std::make_unique<BenchGraph>(make_graph(name, n));
  return *slot;
}

/// Device copies of a benchmark graph: out-edges, in-edges (the transpose),
/// in-edges in ELL; each made on first use.
struct DeviceGraphs {
  std::unique_ptr<graph::DeviceCsr> out, in;
  std::unique_ptr<graph::DeviceEll> ell_in;
};
inline DeviceGraphs& device_graphs(const std::string& name, std::size_t n) {
  static std::map<std::string, DeviceGraphs> cache;
  return cache[name + "/" + std::to_string(n)];
}
inline graph::CsrView out_edges(const std::string& name, std::size_t n) {
  DeviceGraphs& d = device_graphs(name, n);
  if (!d.out) d.out = std::make_unique<graph::DeviceCsr>(bench_graph(name, n).csr);
  return d.out->view();
}
inline graph::CsrView in_edges(const std::string& name, std::size_t n) {
  DeviceGraphs& d = device_graphs(name, n);
  if (!d.in) d.in = std::make_unique<graph::DeviceCsr>(graph::transpose(bench_graph(name, n).csr));
  return d.in->view();
}
/// @throws std::invalid_argument when the padding would exceed 2^28 entries
///         (remembered: later calls throw at once).
inline graph::EllView ell_in_edges(const std::string& name, std::size_t n) {
  static std::map<std::string, std::string> refused;
  const std::string key = name + "/" + std::to_string(n);
  if (const auto it = refused.find(key); it != refused.end()) throw std::invalid_argument(it->second);
  DeviceGraphs& d = device_graphs(name, n);
  if (!d.ell_in) {
    try {
      d.ell_in = std::make_unique<graph::DeviceEll>(graph::to_ell(graph::transpose(bench_graph(name, n).csr)));
    } catch (const std::invalid_argument& e) {
      refused[key] = std::string("no ELL for this graph: ") + e.what();
      throw std::invalid_argument(refused[key]);
    }
  }
  return d.ell_in->view();
}

/// A device array of n elements of T for outputs, kept per (type, n).
template <class T>
T* output(std::size_t n) {
  static std::map<std::size_t, DeviceBuffer<T>> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, DeviceBuffer<T>(n)).first;
  return it->second.data();
}

/// A graph to benchmark on: its name and vertex count in the benchmark name.
struct GraphSpec {
  std::string name;
  std::size_t n;
};

/// What an exercise runs: given the graph's name, size, host graph and the
/// stream, one full search; returns its Stats.
using Run = std::function<cudalab::sssp::Stats(const std::string&, std::size_t, const BenchGraph&, cudaStream_t)>;

/// Registers "<slug>/<graph>/<n><suffix>" for each graph: device-timed
/// (time_runs: CUDA events, L2 flushed), items = edges, bytes = one read of
/// the CSR plus one write of the distances, counters iterations and buckets.
inline void register_exercise(const std::string& slug, const std::vector<GraphSpec>& graphs, Run run,
                              const std::string& suffix = "") {
  for (const GraphSpec& spec : graphs) {
    const std::string full = slug + "/" + spec.name + "/" + std::to_string(spec.n) + suffix;
    benchmark::RegisterBenchmark(full.c_str(), [spec, run](benchmark::State& state) {
      if (!require_device(state)) return;
      const BenchGraph& g = bench_graph(spec.name, spec.n);
      state.SetLabel(g.label);
      cudalab::sssp::Stats last;
      try {
        // time_runs' untimed warm-up run also makes the device copies.
        const std::size_t m = g.csr.num_edges(), n = g.csr.num_vertices();
        time_runs(
            state, [&](cudaStream_t s) { last = run(spec.name, spec.n, g, s); }, 8 * m + 4 * (n + 1) + 8 * n, m);
      } catch (const std::invalid_argument& e) {
        state.SkipWithError(e.what());
        return;
      }
      state.counters["n"] = static_cast<double>(spec.n);  // the name's size (time_runs set it to m)
      state.counters["iterations"] = static_cast<double>(last.iterations);
      state.counters["buckets"] = static_cast<double>(last.buckets);
      state.counters["vertices"] = static_cast<double>(g.csr.num_vertices());
      state.counters["edges"] = static_cast<double>(g.csr.num_edges());
    })->UseManualTime()->Unit(benchmark::kMillisecond);
  }
}

/// The graphs of 6.1 (quadratic work: small ones only).
inline std::vector<GraphSpec> dijkstra_graphs() { return {{"road_ny", 264346}, {"grid", 65536}}; }
/// The graphs of the Bellman-Ford exercises 6.2, 6.3, 6.5 and 6.6 (their
/// rounds grow with the hop diameter: the 2^24 grid would take minutes).
/// road_ny and grid/65536 are common to every exercise, grid/1048576 and
/// rmat22 to all but 6.1.
inline std::vector<GraphSpec> bellman_ford_graphs() {
  return {{"road_ny", 264346}, {"grid", 65536}, {"grid", 1048576}, {"rmat22", 4194304}};
}
/// The graphs of 6.4 (the issue's targets, and the smaller graphs of the
/// other exercises, so that one table compares them all), plus the real road
/// graphs present.
inline std::vector<GraphSpec> present_large_roads();
inline std::vector<GraphSpec> delta_graphs() {
  std::vector<GraphSpec> out = {
      {"road_ny", 264346}, {"grid", 65536}, {"grid", 1048576}, {"grid", 16777216}, {"rmat22", 4194304}};
  for (const GraphSpec& g : present_large_roads()) out.push_back(g);
  return out;
}

/// The real road graphs (other than NY) present in CUDALAB_DATA_DIR.
inline std::vector<GraphSpec> present_large_roads() {
  std::vector<GraphSpec> out;
  for (const RoadFile& f : road_files())
    if (std::string(f.name) != "road_ny" && graph::find_data_file(f.file)) out.push_back({f.name, f.vertices});
  return out;
}

}  // namespace cudalab::bench::sssp
