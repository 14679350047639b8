// Benchmark inputs of exercise 5.4 (host only, shared by the GPU benchmark
// and the Boost.Graph baselines): the New York road graph of the 9th DIMACS
// challenge from CUDALAB_DATA_DIR, or a generated graph of the same vertex
// count, and the 1024 sources; and the road network of Luxembourg
// (luxembourg_osm.mtx, lengths 1..100 hashed per road: cudalab/graph/
// road_data.hpp) with its 1024 sources, benchmarked only when the file is
// in CUDALAB_DATA_DIR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudalab/generators.hpp"
#include "cudalab/graph/csr.hpp"
#include "cudalab/graph/generators.hpp"
#include "cudalab/graph/io.hpp"
#include "cudalab/graph/road_data.hpp"

namespace cudalab::bench::paths {

/// Vertices of USA-road-d.NY (and of the generated stand-in).
inline constexpr std::int64_t kVertices = 264346;
/// Sources of every run.
inline constexpr std::int64_t kSources = 1024;

/// The graph, loaded or generated once: USA-road-d.NY.gr when it is in
/// CUDALAB_DATA_DIR, else a random geometric graph of 264,346 vertices and
/// expected degree 6 (weights grow with length, like road lengths; at the
/// 2.8 arcs per vertex of real roads a random geometric graph falls apart
/// into small pieces, so it needs more).
inline const graph::Csr& road_graph() {
  static const graph::Csr g = [] {
    if (const std::optional<std::string> path = graph::find_data_file("USA-road-d.NY.gr"))
      return graph::load_dimacs_gr(*path);
    return graph::random_geometric(static_cast<std::size_t>(kVertices), 6.0, 2026, 1, 1000);
  }();
  return g;
}

/// "NY" or "generated": the label of every 5.4 benchmark.
inline std::string graph_label() {
  return graph::find_data_file("USA-road-d.NY.gr") ? "USA-road-d.NY" : "generated (no NY file)";
}

/// kSources vertex ids of [0, n) drawn uniformly (seed 77).
inline std::vector<graph::vertex_t> draw_sources(std::size_t n) {
  std::vector<graph::vertex_t> out(static_cast<std::size_t>(kSources));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<graph::vertex_t>(
        (static_cast<unsigned __int128>(gen::bits(77, i)) * static_cast<std::uint64_t>(n)) >> 64);
  return out;
}

/// The sources of road_graph(): kSources vertex ids drawn uniformly (seed 77).
inline const std::vector<graph::vertex_t>& sources() {
  static const std::vector<graph::vertex_t> s = draw_sources(road_graph().num_vertices());
  return s;
}

/// Whether luxembourg_osm.mtx is in CUDALAB_DATA_DIR (its benchmarks are
/// registered only then).
inline bool have_luxembourg() { return graph::find_data_file(graph::kLuxembourgFile).has_value(); }

/// The Luxembourg road network with lengths 1..100 (road_data.hpp), loaded
/// once; an empty graph when the file is missing (never benchmarked then).
inline const graph::Csr& luxembourg_graph() {
  static const graph::Csr g = graph::load_luxembourg_osm().value_or(graph::Csr{});
  return g;
}

/// The sources on luxembourg_graph(): kSources vertex ids drawn uniformly (seed 77).
inline const std::vector<graph::vertex_t>& luxembourg_sources() {
  static const std::vector<graph::vertex_t> s = draw_sources(luxembourg_graph().num_vertices());
  return s;
}

/// The label of the Luxembourg benchmarks.
inline std::string luxembourg_label() {
  return std::string(graph::kLuxembourgFile) + ", lengths 1..100 hashed per road";
}

}  // namespace cudalab::bench::paths
