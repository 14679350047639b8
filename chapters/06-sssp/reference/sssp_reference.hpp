/// @file sssp_reference.hpp
/// @brief CPU references of chapter 6 beyond Dijkstra
///        (cudalab/graph/dijkstra_reference.hpp): Bellman-Ford for negative
///        weights with negative-cycle detection, and a uniform random
///        multigraph for the tests' edge sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/generators.hpp"
#include "cudalab/graph/csr.hpp"
#include "cudalab/graph/dijkstra_reference.hpp"

namespace cudalab::reference {

/// @brief The result of bellman_ford_reference.
struct BellmanFordResult {
  std::vector<graph::dist64_t> dist;  ///< n distances, graph::kUnreachable where there is no path; unspecified when negative_cycle
  bool negative_cycle = false;        ///< the source reaches a cycle of negative total weight
};

/// @brief Single-source shortest paths with any integer weights, by rounds
///        of relaxation over every edge (Bellman 1958, Ford 1956), stopping
///        at the first round without change; a change in round n means a
///        negative cycle reachable from the source.
/// @param g      a valid graph
/// @param source in [0, n)
/// @throws std::invalid_argument when the source is out of range.
/// Work O(n m) at worst, O(m × rounds) in practice; exact in 64 bits.
inline BellmanFordResult bellman_ford_reference(const graph::Csr& g, graph::vertex_t source) {
  const std::size_t n = g.num_vertices();
  if (source < 0 || static_cast<std::size_t>(source) >= n)
    throw std::invalid_argument("bellman_ford_reference: source " + std::to_string(source) + " out of range");
  BellmanFordResult out{std::vector<graph::dist64_t>(n, graph::kUnreachable), false};
  out.dist[static_cast<std::size_t>(source)] = 0;
  for (std::size_t round = 1;; ++round) {
    bool changed = false;
    for (std::size_t u = 0; u < n; ++u) {
      const graph::dist64_t du = out.dist[u];
      if (du == graph::kUnreachable) continue;
      for (graph::offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e) {
        const auto v = static_cast<std::size_t>(g.col_indices[e]);
        if (du + g.weights[e] < out.dist[v]) {
          out.dist[v] = du + g.weights[e];
          changed = true;
        }
      }
    }
    if (!changed) return out;
    if (round >= n) {
      out.negative_cycle = true;
      return out;
    }
  }
}

/// @brief A uniform random multigraph: n vertices, m edges whose ends are
///        uniform in [0, n) (self loops and parallel edges happen) and whose
///        weights are uniform in [min_weight, max_weight]; edge i depends
///        only on (seed, i).
/// @throws std::invalid_argument when n = 0 and m > 0, or on an empty weight range.
/// Work O(n + m).
inline graph::Csr random_multigraph(std::size_t n, std::size_t m, std::uint64_t seed, graph::weight_t min_weight,
                                    graph::weight_t max_weight) {
  if (n == 0 && m > 0) throw std::invalid_argument("random_multigraph: edges without vertices");
  std::vector<graph::Edge> edges(m);
  if (m > 0) {
    const auto hi = static_cast<graph::vertex_t>(n - 1);
    const auto tails = gen::uniform_int<graph::vertex_t>(m, seed, 0, hi);
    const auto heads = gen::uniform_int<graph::vertex_t>(m, seed ^ 0x68656164ull, 0, hi);
    const auto weights = gen::uniform_int<graph::weight_t>(m, seed ^ 0x77656967ull, min_weight, max_weight);
    for (std::size_t i = 0; i < m; ++i) edges[i] = graph::Edge{tails[i], heads[i], weights[i]};
  }
  return graph::csr_from_edges(n, edges);
}

}  // namespace cudalab::reference
