/// @file dijkstra_reference.hpp
/// @brief The CPU reference for shortest paths with non-negative weights:
///        Dijkstra's algorithm with a binary heap, and a checker of
///        shortest-path trees (parent arrays). Tests of chapters 5 and 6
///        compare the GPU against it; a host test compares it with
///        Boost.Graph's `dijkstra_shortest_paths`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/graph/csr.hpp"

namespace cudalab::graph {

/// @brief A path length on the host: 64-bit, so that no sum of 32-bit
///        weights along a simple path can overflow.
using dist64_t = std::int64_t;

/// @brief The distance of a vertex the source does not reach.
inline constexpr dist64_t kUnreachable = std::numeric_limits<dist64_t>::max();

/// @brief The parent of the source and of unreachable vertices in a parent array.
inline constexpr vertex_t kNoParent = -1;

/// @brief Distances and a shortest-path tree from one source.
struct ShortestPaths {
  std::vector<dist64_t> dist;    ///< n distances; kUnreachable where there is no path
  std::vector<vertex_t> parent;  ///< n parents: the tail of the last edge of a shortest path; kNoParent for the source and unreachable vertices
};

/// @brief Single-source shortest paths by Dijkstra's algorithm with a binary
///        heap (std::priority_queue, lazy deletion: a vertex is pushed again
///        when its distance improves and stale entries are skipped when popped).
///
/// Parent pointers are set on strict improvement from a settled vertex, so
/// they form a tree even with zero-weight edges.
/// Source: Dijkstra, "A note on two problems in connexion with graphs",
/// Numerische Mathematik 1, 1959; Cormen et al., "Introduction to
/// Algorithms", 3rd ed., section 24.3.
/// @param g      a valid graph with non-negative weights
/// @param source the start vertex, in [0, n)
/// @throws std::invalid_argument when the source is out of range, or some
///         weight is negative.
/// Work O((n + m) log m), memory O(n + m).
inline ShortestPaths dijkstra_reference(const Csr& g, vertex_t source) {
  const std::size_t n = g.num_vertices();
  if (source < 0 || static_cast<std::size_t>(source) >= n)
    throw std::invalid_argument("dijkstra_reference: source " + std::to_string(source) + " outside [0, " +
                                std::to_string(n) + ")");
  if (g.has_negative_weights()) throw std::invalid_argument("dijkstra_reference: a weight is negative");
  ShortestPaths out{std::vector<dist64_t>(n, kUnreachable), std::vector<vertex_t>(n, kNoParent)};
  using Item = std::pair<dist64_t, vertex_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  out.dist[static_cast<std::size_t>(source)] = 0;
  heap.emplace(0, source);
  while (!heap.empty()) {
    const auto [d, u] = heap.top();
    heap.pop();
    if (d != out.dist[static_cast<std::size_t>(u)]) continue;  // stale entry
    for (offset_t e = g.row_offsets[static_cast<std::size_t>(u)]; e < g.row_offsets[static_cast<std::size_t>(u) + 1]; ++e) {
      const vertex_t v = g.col_indices[e];
      const dist64_t nd = d + g.weights[e];
      if (nd < out.dist[static_cast<std::size_t>(v)]) {
        out.dist[static_cast<std::size_t>(v)] = nd;
        out.parent[static_cast<std::size_t>(v)] = u;
        heap.emplace(nd, v);
      }
    }
  }
  return out;
}

/// @brief Checks that `parent` is a shortest-path tree for `dist` from `source`.
///
/// Valid means: `parent[source]` is kNoParent (or `source` itself);
/// unreachable vertices (distance `infinity`) have parent kNoParent; every
/// other vertex v has a parent u in range with an edge `u -> v` of weight w
/// such that `dist[u] + w == dist[v]`; and following parents from any
/// reachable vertex ends at the source (no cycle, which zero-weight edges
/// could otherwise allow). It does not check the distances themselves:
/// compare them with dijkstra_reference first.
/// @tparam D     the distance type (an integer type)
/// @param g      the graph
/// @param source the source vertex
/// @param dist   n distances
/// @param parent n parents
/// @param infinity the distance of unreachable vertices
/// @return an empty string when valid, else a sentence naming the first bad vertex.
/// Work O(n + m).
template <class D>
std::string shortest_path_tree_error(const Csr& g, vertex_t source, const std::vector<D>& dist,
                                     const std::vector<vertex_t>& parent, D infinity) {
  const std::size_t n = g.num_vertices();
  if (dist.size() != n || parent.size() != n) return "dist or parent does not have n entries";
  const auto s = static_cast<std::size_t>(source);
  if (parent[s] != kNoParent && parent[s] != source)
    return "parent[source " + std::to_string(source) + "] = " + std::to_string(parent[s]) +
           ", expected -1 (or the source itself)";
  // One pass over the edges marks the vertices whose parent edge is tight.
  std::vector<unsigned char> tight(n, 0);
  for (std::size_t u = 0; u < n; ++u) {
    if (dist[u] == infinity) continue;
    for (offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e) {
      const auto v = static_cast<std::size_t>(g.col_indices[e]);
      if (parent[v] == static_cast<vertex_t>(u) && dist[v] != infinity &&
          static_cast<long double>(dist[u]) + g.weights[e] == static_cast<long double>(dist[v]))
        tight[v] = 1;
    }
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (v == s) continue;
    const vertex_t p = parent[v];
    if (dist[v] == infinity) {
      if (p != kNoParent)
        return "vertex " + std::to_string(v) + " is unreachable but has parent " + std::to_string(p) + " (expected -1)";
      continue;
    }
    if (p < 0 || static_cast<std::size_t>(p) >= n)
      return "reachable vertex " + std::to_string(v) + " has parent " + std::to_string(p) + ", not a vertex";
    if (dist[static_cast<std::size_t>(p)] == infinity)
      return "vertex " + std::to_string(v) + " has parent " + std::to_string(p) + ", which is unreachable";
    if (!tight[v])
      return "vertex " + std::to_string(v) + " (dist " + std::to_string(dist[v]) + ") has parent " +
             std::to_string(p) + " (dist " + std::to_string(dist[static_cast<std::size_t>(p)]) +
             ") but no edge parent -> vertex has weight dist[vertex] - dist[parent]";
  }
  // Every reachable vertex must reach the source by parents: mark from the
  // source down, walking each chain once (state 0 unknown, 1 on the current
  // walk, 2 reaches the source).
  std::vector<unsigned char> state(n, 0);
  state[s] = 2;
  std::vector<std::size_t> walk;
  for (std::size_t v = 0; v < n; ++v) {
    if (dist[v] == infinity || state[v] == 2) continue;
    walk.clear();
    std::size_t x = v;
    while (state[x] == 0) {
      state[x] = 1;
      walk.push_back(x);
      x = static_cast<std::size_t>(parent[x]);
    }
    if (state[x] == 1) return "the parents of vertex " + std::to_string(v) + " form a cycle through vertex " +
                              std::to_string(x) + " and never reach the source";
    for (std::size_t y : walk) state[y] = 2;
  }
  return {};
}

}  // namespace cudalab::graph
