// Benchmark inputs of exercise 5.4 (host only, shared by the GPU benchmark
// and the Boost.Graph baselines): the New York road graph of the 9th DIMACS
// challenge from CUDALAB_DATA_DIR, or a generated graph of the same vertex
// count, and the 1024 sources.
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

/// The sources: kSources vertex ids drawn uniformly (seed 77).
inline const std::vector<graph::vertex_t>& sources() {
  static const std::vector<graph::vertex_t> s = [] {
    std::vector<graph::vertex_t> out(static_cast<std::size_t>(kSources));
    const auto n = static_cast<std::uint64_t>(road_graph().num_vertices());
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<graph::vertex_t>(
          (static_cast<unsigned __int128>(gen::bits(77, i)) * n) >> 64);
    return out;
  }();
  return s;
}

}  // namespace cudalab::bench::paths
