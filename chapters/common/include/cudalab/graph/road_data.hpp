/// @file road_data.hpp
/// @brief The real road network of chapters 5 and 6: `luxembourg_osm.mtx`
///        (the road network of Luxembourg from OpenStreetMap, 10th DIMACS
///        Implementation Challenge, as distributed in the SuiteSparse Matrix
///        Collection, `DIMACS10/luxembourg_osm`), read from `CUDALAB_DATA_DIR`
///        and weighted by one documented rule, so that the tests, the
///        benchmarks and the Boost.Graph baselines search the same graph.
///
/// The file is a Matrix Market `coordinate pattern symmetric` matrix
/// (114,599 vertices, 119,666 undirected roads, the lower triangle, no self
/// loop or repeated entry): loaded by parse_matrix_market(), it becomes
/// 239,332 directed edges of weight 1. It has no lengths, so the roads get
/// integer lengths kRoadMinWeight..kRoadMaxWeight (1..100) by
/// pair_hash_weights() with seed kRoadWeightSeed: a hash of the pair
/// (min(u, v), max(u, v)), the same in both directions. The name of every
/// test and benchmark on it carries the rule: `luxembourg_osm_w1to100`
/// (benchmarks), `...LuxembourgOsmHashedWeights1To100` (tests).
///
/// Why it is there: a real road topology has degree 2 to 4 (at most 6
/// here), long chains of degree-2 vertices and a large diameter (about a
/// thousand edges between far vertices), the case that costs Bellman-Ford
/// many rounds and delta-stepping many buckets, unlike the grids and R-MAT
/// graphs of the generators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "cudalab/graph/csr.hpp"
#include "cudalab/graph/generators.hpp"
#include "cudalab/graph/io.hpp"

namespace cudalab::graph {

/// @brief The file name of the Luxembourg road network in `CUDALAB_DATA_DIR`.
inline constexpr const char* kLuxembourgFile = "luxembourg_osm.mtx";
/// @brief Its vertex count (the file's size line), for benchmark names.
inline constexpr std::size_t kLuxembourgVertices = 114599;
/// @brief The graph's name in benchmark names: the file and its weighting rule.
inline constexpr const char* kLuxembourgName = "luxembourg_osm_w1to100";
/// @brief The seed of the road lengths (pair_hash_weights); "LUX" in ASCII.
inline constexpr std::uint64_t kRoadWeightSeed = 0x4C5558;
/// @brief The smallest road length.
inline constexpr weight_t kRoadMinWeight = 1;
/// @brief The largest road length.
inline constexpr weight_t kRoadMaxWeight = 100;

/// @brief Weights a road graph loaded without lengths by the rule above.
/// Work O(n + m).
inline Csr weight_roads(Csr g) {
  return pair_hash_weights(std::move(g), kRoadWeightSeed, kRoadMinWeight, kRoadMaxWeight);
}

/// @brief The Luxembourg road network with lengths 1..100 by the rule above,
///        when `luxembourg_osm.mtx` is in `CUDALAB_DATA_DIR`.
/// @return the graph, or an empty optional when the file is not there
///         (tests then skip and name the file).
/// @throws cudalab::ParseError when the file is there but malformed.
/// Work O(file size + n + m): about 0.1 s.
inline std::optional<Csr> load_luxembourg_osm() {
  const std::optional<std::string> path = find_data_file(kLuxembourgFile);
  if (!path) return std::nullopt;
  return weight_roads(load_matrix_market(*path));
}

}  // namespace cudalab::graph
