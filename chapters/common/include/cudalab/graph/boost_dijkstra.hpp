/// @file boost_dijkstra.hpp
/// @brief Boost.Graph's Dijkstra on a cudalab CSR graph: the independent
///        check of dijkstra_reference (host test) and the one-core CPU
///        baseline of chapter 6's benchmarks.
///
/// Needs the Boost headers (Debian: `libboost-dev`); CMake defines
/// `CUDALAB_HAVE_BOOST_GRAPH` for the targets that link Boost::headers, and
/// only those may include this file.
#pragma once

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/property_map.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/graph/csr.hpp"
#include "cudalab/graph/dijkstra_reference.hpp"

namespace cudalab::graph {

/// @brief A copy of a CSR graph as a `boost::compressed_sparse_row_graph`,
///        built once and searched many times.
///
/// Source: Siek, Lee and Lumsdaine, "The Boost Graph Library", Addison-Wesley
/// 2002; `boost::dijkstra_shortest_paths` (a 4-ary indirect heap in Boost 1.74).
class BoostGraph {
 public:
  /// @brief Bundled edge property: the weight.
  struct EdgeWeight {
    weight_t weight = 0;  ///< the edge's length
  };
  /// @brief The Boost graph type: directed CSR, 32-bit vertex and edge indices.
  using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, EdgeWeight,
                                                   boost::no_property, std::uint32_t, std::uint32_t>;

  /// @brief Copies `g` (edges already grouped by tail, so Boost's sorted
  ///        constructor applies).
  /// @throws std::invalid_argument when `g` is not valid.
  /// Work O(n + m), memory about 12 bytes per edge plus 4 per vertex.
  explicit BoostGraph(const Csr& g) {
    g.validate();
    std::vector<std::pair<std::uint32_t, std::uint32_t>> ends;
    std::vector<EdgeWeight> props;
    ends.reserve(g.num_edges());
    props.reserve(g.num_edges());
    for (std::size_t u = 0; u < g.num_vertices(); ++u)
      for (offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e) {
        ends.emplace_back(static_cast<std::uint32_t>(u), static_cast<std::uint32_t>(g.col_indices[e]));
        props.push_back(EdgeWeight{g.weights[e]});
      }
    graph_ = Graph(boost::edges_are_sorted, ends.begin(), ends.end(), props.begin(),
                   static_cast<std::uint32_t>(g.num_vertices()));
    n_ = g.num_vertices();
  }

  /// @brief Distances from `source` by `boost::dijkstra_shortest_paths`.
  /// @return n distances, kUnreachable where there is no path.
  /// @throws std::invalid_argument when the source is out of range;
  ///         `boost::negative_edge` when a weight is negative.
  /// Work O((n + m) log n).
  std::vector<dist64_t> distances(vertex_t source) const {
    return run(source, nullptr);
  }

  /// @brief Distances and predecessors from `source` (the predecessor of the
  ///        source and of unreachable vertices is kNoParent).
  /// @throws std::invalid_argument when the source is out of range;
  ///         `boost::negative_edge` when a weight is negative.
  ShortestPaths shortest_paths(vertex_t source) const {
    ShortestPaths out;
    std::vector<std::uint32_t> pred;
    out.dist = run(source, &pred);
    out.parent.assign(n_, kNoParent);
    for (std::size_t v = 0; v < n_; ++v)
      if (out.dist[v] != kUnreachable && pred[v] != v) out.parent[v] = static_cast<vertex_t>(pred[v]);
    return out;
  }

 private:
  std::vector<dist64_t> run(vertex_t source, std::vector<std::uint32_t>* pred) const {
    if (source < 0 || static_cast<std::size_t>(source) >= n_)
      throw std::invalid_argument("BoostGraph: source " + std::to_string(source) + " out of range");
    std::vector<dist64_t> dist(n_, kUnreachable);
    std::vector<std::uint32_t> local;
    std::vector<std::uint32_t>& p = pred ? *pred : local;
    p.resize(n_);
    const auto index = get(boost::vertex_index, graph_);
    boost::dijkstra_shortest_paths(
        graph_, static_cast<std::uint32_t>(source),
        boost::weight_map(get(&EdgeWeight::weight, graph_))
            .distance_map(boost::make_iterator_property_map(dist.begin(), index))
            .predecessor_map(boost::make_iterator_property_map(p.begin(), index))
            .distance_inf(kUnreachable)
            .distance_zero(dist64_t{0}));
    return dist;
  }

  Graph graph_;
  std::size_t n_ = 0;
};

}  // namespace cudalab::graph
